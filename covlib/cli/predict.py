"""`covlib predict`: coverage's predicted required data per N, before any training."""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd

from covlib.base.errors import CovlibError
from covlib.base.files import write_text_atomic
from covlib.cli.task_option import add_task_options, task_of
from covlib.coverage.predict import predict_requirement


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_task_options(p)
    p.add_argument("--N", type=int, nargs="+", required=True, help="token-set sizes")
    p.add_argument("--k", type=int, default=3, help="evidence threshold of coverage (default 3)")
    p.add_argument("--share", type=float, default=0.99, help="share of ID test items to cover (default 0.99)")
    p.add_argument("--seeds", type=int, default=3, help="dataset seeds 0..S-1: median and range (default 3)")
    p.add_argument("--factor", type=float, default=1.0,
                   help="calibration: multiply the crossing by this (chapter 10 fits it on two-hop; default 1)")
    p.add_argument("--rel-tol", type=float, default=0.03, help="bisection stops once the bracket is this tight")
    p.add_argument("--out", default=None, help="also write the table to this CSV (rows of other N and rules are kept)")
    p.add_argument("--test-size", type=int, default=1000, help="ID test items per dataset whose coverage is read")
    p.add_argument("--jobs", type=int, default=2,
                   help="one-thread worker processes (default 2: the first seed's bracket narrows two probes a "
                        "round and the other seeds run side by side; 1 runs everything here, one probe at a time)")


def run(args: argparse.Namespace) -> int:
    task = task_of(args)
    if args.seeds < 1 or args.k < 1 or not 0 < args.share <= 1 or args.factor <= 0 or args.test_size < 1 or args.jobs < 1:
        raise CovlibError("--seeds, --k, --test-size and --jobs must be at least 1, --share in (0, 1], --factor positive")
    start = time.perf_counter()
    table = predict_requirement(task, args.N, args.k, args.share, list(range(args.seeds)), args.factor, args.rel_tol,
                                args.test_size, jobs=args.jobs)
    print(f"{task}: training examples at which {args.share:.0%} of the ID test items are {args.k}-covered"
          + (f", times {args.factor:g}" if args.factor != 1 else "") + f" (median and range over {args.seeds} seeds)")
    print(f"{'N':>6}{'predicted':>12}{'range':>22}{'ID pool':>12}{'seconds':>10}")
    for _, r in table.iterrows():
        if r["n_pred"] != r["n_pred"]:
            print(f"{r['N']:>6}{'not reached below the ID pool in every seed':>44}{r['eligible']:>12,}{r['seconds']:>10.1f}")
            continue
        print(f"{r['N']:>6}{r['n_pred']:>12,.0f}{f'{r.n_low:,.0f}-{r.n_high:,.0f}':>22}{r['eligible']:>12,}"
              f"{r['seconds']:>10.1f}")
    print(f"total {time.perf_counter() - start:.1f} s")
    if args.out:
        keep = ["task", "N", "k", "share", "seeds"]
        old = pd.read_csv(args.out) if Path(args.out).is_file() else table.iloc[:0]
        old = old.merge(table[keep], on=keep, how="left", indicator=True)
        old = old[old["_merge"] == "left_only"].drop(columns="_merge")
        both = pd.concat([old, table], ignore_index=True).sort_values(["task", "k", "share", "N"])
        write_text_atomic(args.out, both.to_csv(index=False, float_format="%.6g"))
    return 0
