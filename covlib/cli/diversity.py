"""`covlib diversity`: the diversity audit's runs."""
from __future__ import annotations

import argparse
import dataclasses

from covlib.base.errors import CovlibError
from covlib.chapters.ch09_diversity_exposure_coverage.audit import (
    BOOK_PLAN,
    K3_CONTRASTS,
    SMOKE_PLAN,
    ensure_candidates,
    pending,
    read_runs,
    run_audit,
)

PLANS = {"book": BOOK_PLAN, "smoke": SMOKE_PLAN} | {name: plan for name, (plan, _) in K3_CONTRASTS.items()}


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    for name, help_text in (("run", "train every run of the chosen experiments not yet in the table (resumes)"),
                            ("status", "how many runs of each experiment the table holds (no training)")):
        s = sub.add_parser(name, help=help_text, description=help_text)
        s.add_argument("--plan", choices=list(PLANS), default="book",
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


def plan_named(name: str, per_arm: int | None = None):
    """The named plan, with ``per_arm`` training sets per contrast arm when given (the arms of a smaller plan
    are the most extreme of a larger one: its runs are kept)."""
    plan = PLANS[name]
    if per_arm is not None and per_arm < 2:
        raise CovlibError(f"--per-arm {per_arm}: a contrast needs at least 2 training sets per arm")
    return dataclasses.replace(plan, per_arm=per_arm) if per_arm else plan


def run(args: argparse.Namespace) -> int:
    plan = plan_named(args.plan, args.per_arm)
    if args.action == "run":
        for exp in args.experiments:  # one experiment at a time: a finished one is usable before the next starts
            run_audit(plan, [exp], args.table, args.work, jobs=args.jobs)
    table = read_runs(args.table)
    for exp in args.experiments:
        cands = ensure_candidates(plan, args.table) if exp in ("coverage", "surface") else None
        wanted = plan.runs(exp, args.table, "", cands)
        missing = pending(wanted, args.table)
        print(f"{exp}: {len(wanted) - len(missing)} of {len(wanted)} runs done"
              f" ({table.loc[table['experiment'] == exp, 'minutes'].sum():.0f} CPU-minutes)")
    return 0
