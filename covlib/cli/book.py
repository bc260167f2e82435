"""`covlib book`: execute the chapters."""
from __future__ import annotations

import argparse
import logging

from covlib.base.errors import CovlibError
from covlib.base.paths import REPO
from covlib.book.editions import edition_root
from covlib.book.readme import refresh_readme
from covlib.book.runner import run_book
from covlib.book.snapshot import compare, read_metrics, read_snapshot, write_snapshot
from covlib.figures.text import count_of


def run_book_showing_cell_output(args: argparse.Namespace):
    """Run the book while papermill's INFO log (what cells print, training progress included) goes to stderr,
    prefixed. The handler leaves with the run: one left on the shared logger would keep writing to a stream that
    a later caller (a test's captured stderr) has closed."""
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("    | %(message)s"))
    log = logging.getLogger("papermill")
    level, propagate = log.level, log.propagate
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
    try:
        return run_book(args.preset, args.only, args.out, args.figures_dir, kernel_name=args.kernel,
                        timeout=args.timeout, jobs=args.jobs, edition=args.edition)
    finally:
        log.removeHandler(handler)
        log.setLevel(level)
        log.propagate = propagate


def run(args: argparse.Namespace) -> int:
    if args.snapshot and not args.reason.strip():
        raise CovlibError("--snapshot needs --reason: one line saying what changed the results, and why")
    if args.snapshot and args.edition != "full":
        raise CovlibError("--snapshot records the full book's metrics: run it without --edition student")
    results = run_book_showing_cell_output(args)
    failed = [r for r in results if r.status != "done"]
    if failed:
        print(f"book: {count_of(len(failed), 'chapter')} failed: {', '.join(r.name for r in failed)}")
        return 1
    if not (args.snapshot or args.check):
        return 0
    ran = {r.name for r in results}  # this run's chapters: an earlier run's metrics in the folder do not count
    folder = edition_root(args.out, args.edition) / args.preset / "metrics"
    metrics = {name: values for name, values in read_metrics(folder).items() if name in ran}
    if args.snapshot:
        written = write_snapshot(metrics, args.snapshot, args.reason, args.preset)
        refreshed = refresh_readme(REPO / "README.md", read_snapshot(written)["chapters"])
        print(f"book: snapshot of {count_of(len(metrics), 'chapter')} written to {written}"
              + ("; README findings rewritten" if refreshed else "; README findings unchanged"))
    if args.check:
        snapshot = read_snapshot(args.check)
        snapshot["chapters"] = {k: v for k, v in snapshot["chapters"].items() if k in ran}
        problems = compare(metrics, snapshot)
        print("\n".join(["book: the recorded metrics differ from the snapshot:", *problems]) if problems
              else f"book: the recorded metrics match {args.check}")
        return 1 if problems else 0
    return 0
