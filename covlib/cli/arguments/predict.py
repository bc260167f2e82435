"""The options of `covlib predict` (its work: covlib.cli.predict)."""
from __future__ import annotations

import argparse

from covlib.base.paths import RULE_FILE
from covlib.cli.task_option import add_task_options
from covlib.coverage.evidence import EVIDENCE_KINDS


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_task_options(p)
    p.add_argument("--N", type=int, nargs="+", required=True, help="token-set sizes")
    p.add_argument("--cot", action="store_true",
                   help="chain of thought: the bridges are written out, so the rule reads each hop's fact count")
    p.add_argument("--rule", default=None, metavar="FILE",
                   help=f"the fitted rule to apply (default: the book's, {RULE_FILE}, fitted in chapter 10)")
    p.add_argument("--raw", action="store_true",
                   help="no rule: the bare crossing, the data at which --share of the ID test items have evidence "
                        "--k (with --factor, default 1)")
    p.add_argument("--k", type=int, default=None, help="with --raw: evidence threshold (default 3)")
    p.add_argument("--share", type=float, default=None, help="with --raw: share of ID test items (default 0.99)")
    p.add_argument("--factor", type=float, default=None, help="with --raw: multiply the crossing by this (default 1)")
    p.add_argument("--evidence", default=None, choices=EVIDENCE_KINDS,
                   help="with --raw: what counts as evidence (default contexts, the paper's k-coverage; sound, "
                        "through true equivalences only; hop facts, every hop fact in k training examples)")
    p.add_argument("--seeds", type=int, default=3, help="dataset seeds 0..S-1: median and range (default 3)")
    p.add_argument("--rel-tol", type=float, default=0.03, help="bisection stops once the bracket is this tight")
    p.add_argument("--out", default=None, help="also write the table to this CSV (rows of other N and rules are kept)")
    p.add_argument("--test-size", type=int, default=1000, help="ID test items per dataset whose coverage is read")
    p.add_argument("--jobs", type=int, default=2,
                   help="one-thread worker processes (default 2: the first seed's bracket narrows two probes a "
                        "round and the other seeds run side by side; 1 runs everything here, one probe at a time)")
