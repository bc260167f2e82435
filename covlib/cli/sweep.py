"""`covlib sweep`: run a chapter over a grid of parameters."""
from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from covlib.base.errors import CovlibError
from covlib.book.sweep import parse_value, run_sweep
from covlib.training.pool import SlurmOptions


def parse_grid(pairs: list[list[str]]) -> dict[str, list[Any]]:
    """``[["N", "20", "30"], ["seed", "1"]]`` -> ``{"N": [20, 30], "seed": [1]}``."""
    grid: dict[str, list[Any]] = {}
    for pair in pairs:
        if len(pair) < 2:
            raise CovlibError(f"-p {pair[0]} needs at least one value: -p NAME VALUE [VALUE ...]")
        name, *values = pair
        if name in grid:
            raise CovlibError(f"parameter {name!r} is given twice; list all its values after one -p {name}")
        grid[name] = [parse_value(v) for v in values]
    return grid


def run(args: argparse.Namespace) -> int:
    grid = parse_grid(args.param)
    start = time.perf_counter()

    slurm = SlurmOptions(partition=args.partition, time_min=args.time_min, cpus=args.cpus)
    results = run_sweep(args.notebook, grid, args.out, jobs=args.jobs, kernel_name=args.kernel, timeout=args.timeout,
                        executor=args.executor, slurm=slurm)
    counts = {s: sum(r.status == s for r in results) for s in ("done", "skipped", "failed", "cancelled", "timed_out")}
    print(f"sweep: {counts['done']} done, {counts['skipped']} skipped (already done), {counts['failed']} failed, "
          f"{counts['cancelled']} cancelled, {counts['timed_out']} timed out in {time.perf_counter() - start:.1f} s; "
          f"results in {args.out}")
    for r in results:
        if r.status in ("failed", "cancelled", "timed_out"):
            print(f"  {r.status} {r.slug}: {r.error}  (see {Path(args.out) / r.slug})")
    return 1 if counts["failed"] or counts["cancelled"] or counts["timed_out"] else 0
