"""`covlib site`: build the static site."""
from __future__ import annotations

import argparse
import time

from covlib.book.editions import EDITIONS
from covlib.book.runner import PRESETS
from covlib.book.site import build_site


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--preset", default="default", help=f"which executed book to publish: {', '.join(PRESETS)}")
    p.add_argument("--build-dir", default=None, help="folder holding <preset>/NN_*.ipynb (default: build/)")
    p.add_argument("--edition", choices=EDITIONS, default="full",
                   help="full (default), or student: the book `covlib book --edition student` executed without the "
                        "exercises' solutions, into BUILD_DIR/student/site/PRESET/")


def run(args: argparse.Namespace) -> int:
    t0 = time.perf_counter()
    site = build_site(args.preset, args.build_dir, edition=args.edition)
    pages = sorted(p.name for p in site.glob("*.html"))
    megabytes = sum(f.stat().st_size for f in site.rglob("*") if f.is_file()) / 1e6
    print(f"site: {site / 'index.html'} ({len(pages)} pages, {megabytes:.0f} MB with downloads/, "
          f"{time.perf_counter() - t0:.1f} s); serve it with `python -m http.server -d {site}`")
    return 0
