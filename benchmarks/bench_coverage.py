"""Time the full k-sweep of the exact coverage computation (the paper's k-coverage) at the paper's scales.

Prints, per case, the seconds for generation (not part of the sweep), the sweep over all N^m
inputs (every input gets its k-cutoff), the sweep for the test items only, and peak memory.
Run: .venv/bin/python benchmarks/bench_coverage.py [--quick]
"""
from __future__ import annotations

import argparse
import resource
import time
import tracemalloc

from covlib.coverage.exact import coverage_sweep
from covlib.tasks.datasets import DatasetConfig, generate

CASES = [("twohop", 30, 4_000), ("twohop", 50, 10_000), ("twohop", 100, 80_000), ("threehop", 20, 20_000)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="only the two small twohop cases")
    args = parser.parse_args()
    cases = CASES[:2] if args.quick else CASES
    print(f"{'case':<24} {'gen s':>7} {'all inputs s':>13} {'test only s':>12} {'top k':>6} {'peak MB':>8}")
    for task, n_tok, n_train in cases:
        start = time.perf_counter()
        ds = generate(DatasetConfig(task, n_tok, n_train, seed=0))
        gen = time.perf_counter() - start
        answers = ds.evaluate(ds.train_inputs)["t"]
        tracemalloc.start()
        start = time.perf_counter()
        full = coverage_sweep(ds.train_inputs, answers, n_tok)
        sweep_all = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        start = time.perf_counter()
        coverage_sweep(ds.train_inputs, answers, n_tok, ds.test_inputs)
        sweep_test = time.perf_counter() - start
        name = f"{task} N={n_tok} n={n_train}"
        print(f"{name:<24} {gen:7.2f} {sweep_all:13.2f} {sweep_test:12.2f} {full.ceiling - 1:6d} {peak / 2**20:8.0f}")
    print(f"process max RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
