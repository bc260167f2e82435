"""The options of `covlib book` (its work: covlib.cli.book)."""
from __future__ import annotations

import argparse

from covlib.base.presets import PRESETS
from covlib.book.editions import EDITIONS


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--preset", choices=PRESETS, default="default", help="cost of every chapter (default: default)")
    p.add_argument("--only", nargs="+", metavar="NN", help="run only these chapters (01, 2, 03_training, ...)")
    p.add_argument("--out", default="build", help="executed notebooks go to OUT/PRESET/ (default: build)")
    p.add_argument("--edition", choices=EDITIONS, default="full",
                   help="full: the book with the exercises' solutions (default); student: without them, for a "
                        "teacher to hand out (the checks stay), into OUT/student/PRESET/, its figures beside it")
    p.add_argument("--figures-dir", default=None,
                   help="where chapters save figures (default: papers_figures/ for the default preset, "
                        "else OUT/PRESET/papers_figures)")
    p.add_argument("--timeout", type=float, default=None, help="seconds allowed per cell")
    p.add_argument("--kernel", default="python3", help="Jupyter kernel name")
    p.add_argument("--jobs", type=int, default=1,
                   help="chapters run side by side, each in a one-thread process (default 1; 2 on two cores "
                        "halves the time, without the cells' printed output)")
    p.add_argument("--check", metavar="SNAPSHOT", default=None,
                   help="compare the metrics the chapters recorded with this snapshot (e.g. tests/snapshots/"
                        "metrics_default.json); exit 1 on a difference")
    p.add_argument("--snapshot", metavar="SNAPSHOT", default=None,
                   help="write the metrics the chapters recorded as the new snapshot (needs --reason)")
    p.add_argument("--reason", default="", help="with --snapshot: one line saying what changed the results")
