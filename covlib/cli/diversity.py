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


def plan_named(name: str, per_arm: int | None = None):
    """The named plan, with ``per_arm`` training sets per contrast arm when given (the arms of a smaller plan
    are the most extreme of a larger one: its runs are kept)."""
    if name not in PLANS:  # checked here, not by argparse: the plans live with the audit, which loads torch
        raise CovlibError(f"--plan {name}: unknown plan; choose one of: {', '.join(PLANS)}")
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
