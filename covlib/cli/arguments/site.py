"""The options of `covlib site` (its work: covlib.cli.site)."""
from __future__ import annotations

import argparse

from covlib.base.presets import PRESETS
from covlib.book.editions import EDITIONS


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--preset", default="default", help=f"which executed book to publish: {', '.join(PRESETS)}")
    p.add_argument("--build-dir", default=None, help="folder holding <preset>/NN_*.ipynb (default: build/)")
    p.add_argument("--edition", choices=EDITIONS, default="full",
                   help="full (default), or student: the book `covlib book --edition student` executed without the "
                        "exercises' solutions, into BUILD_DIR/student/site/PRESET/")
