"""The options of `covlib generate` (its work: covlib.cli.generate)."""
from __future__ import annotations

import argparse

from covlib.cli.task_option import add_task_options


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_task_options(p, positional=True)
    p.add_argument("--num-tokens", "-N", type=int, required=True, help="size N of the token set")
    p.add_argument("--n-train", type=int, required=True, help="number of training examples")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--seen-ratio", type=float, default=0.7, help="share of each primitive's domain that may be seen")
    p.add_argument("--test-size-per-type", type=int, default=2000)
    p.add_argument("--cot", action="store_true", help="targets spell out the bridge tokens first")
    p.add_argument("--fake-bridge", action="store_true", help="targets hold a </b> placeholder per bridge")
    p.add_argument("--same-functions", action="store_true", help="every hop uses one primitive table")
    p.add_argument("--include-atomic", action="store_true", help="add every f1 fact as a 2-token training item")
    p.add_argument("--first-role-items", type=int, default=0, metavar="K",
                   help="add K composed training items whose first fact is held out and later facts seen: held-out "
                        "facts taught only in the first hop's role")
    p.add_argument("--commutative", nargs="+", default=[], metavar="F",
                   help="draw these binary primitives symmetric, f(a,b) = f(b,a) (e.g. f1); the seen split stays per fact")
    p.add_argument("--out", required=True, help="parent folder; the dataset folder is named in the authors' style")
