"""`covlib book`: execute the chapters."""
from __future__ import annotations

import argparse

from covlib.book.runner import PRESETS, run_book


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--preset", choices=PRESETS, default="default", help="cost of every chapter (default: default)")
    p.add_argument("--only", nargs="+", metavar="NN", help="run only these chapters (01, 2, 03_training, ...)")
    p.add_argument("--out", default="build", help="executed notebooks go to OUT/PRESET/ (default: build)")
    p.add_argument("--figures-dir", default=None,
                   help="where chapters save figures (default: papers_figures/ for the default preset, "
                        "else OUT/PRESET/papers_figures)")
    p.add_argument("--timeout", type=float, default=None, help="seconds allowed per cell")
    p.add_argument("--kernel", default="python3", help="Jupyter kernel name")


def run(args: argparse.Namespace) -> int:
    import logging

    # papermill logs what cells print (training progress included) at INFO: show it, prefixed
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("    | %(message)s"))
    log = logging.getLogger("papermill")
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
    results = run_book(args.preset, args.only, args.out, args.figures_dir, kernel_name=args.kernel,
                       timeout=args.timeout)
    failed = [r for r in results if r.status != "done"]
    if failed:
        print(f"book: {len(failed)} chapter(s) failed: {', '.join(r.name for r in failed)}")
        return 1
    return 0
