"""The options of `covlib diversity` (its work: covlib.cli.diversity)."""
from __future__ import annotations

import argparse


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    for name, help_text in (("run", "train every run of the chosen experiments not yet in the table (resumes)"),
                            ("status", "how many runs of each experiment the table holds (no training)")):
        s = sub.add_parser(name, help=help_text, description=help_text)
        s.add_argument("--plan", default="book",
                       help="book: chapter 9's grids; smoke: tiny ones; k3: the contrast of exact 3-coverage at N = 20 "
                            "(run its coverage experiment only); k3_long: that contrast's first pair (seed 0), 8,000 "
                            "steps; k3_wide: the k3 contrast chosen among 10,000 sets instead of 1,000")
        s.add_argument("--experiments", nargs="+", default=["dose", "factorial", "coverage", "surface"],
                       help="any of: dose factorial coverage surface (default: all, in that order)")
        s.add_argument("--table", required=True, help="the run table (CSV) to read and append to")
        s.add_argument("--per-arm", type=int, default=None,
                       help="training sets per arm of the coverage and surface contrasts (default: the plan's)")
        if name == "run":
            s.add_argument("--work", default="build/diversity", help="datasets/ and runs/ of the audit")
            s.add_argument("--jobs", type=int, default=2, help="one-thread worker processes (default 2)")
