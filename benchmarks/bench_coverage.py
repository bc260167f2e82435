"""Time the full k-sweep of the exact coverage computation (the paper's k-coverage) at the paper's scales, and the
whole `covlib coverage` command as a reader runs it.

First, on two-hop N = 30 with 4,000 training examples: the whole process (a subprocess running `covlib coverage`
on the dataset folder, so Python's start, the imports, reading, the sweep and writing), a process that only imports
what the command imports, and, inside this process, the command's work alone (``annotate_folder``) and the sweep
alone; and the floor beside them, a process that only imports numpy. Medians of several runs, wall and CPU seconds
(the machine is shared: wall time counts the others too).
Then, per case, the seconds for generation (not part of the sweep), the sweep over all N^m inputs (every input gets
its k-cutoff), the sweep for the test items only, and peak memory.
Run: .venv/bin/python benchmarks/bench_coverage.py [--quick] [--repeats R]
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from machine import describe, load  # benchmarks/machine.py

from covlib.coverage.exact import coverage_sweep
from covlib.coverage.folder_coverage import annotate_folder, coverage_inputs
from covlib.tasks.datasets import DatasetConfig, ensure_dataset, generate

CASES = [("twohop", 30, 4_000), ("twohop", 50, 10_000), ("twohop", 100, 80_000), ("threehop", 20, 20_000)]


COMMAND_CASE = DatasetConfig("twohop", 30, 4_000)  # what `covlib generate twohop -N 30 --n-train 4000` writes


def covlib_command() -> list[str]:
    """The `covlib` console script beside this Python (the venv's), else ``python -m covlib.cli``."""
    script = Path(sys.executable).with_name("covlib")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "covlib.cli"]


def child_run(argv: list[str], env: dict | None = None) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one subprocess; its output is discarded, a failure raises."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def in_process(work, repeats: int) -> tuple[float, float]:
    """Median wall and CPU seconds of ``work()`` run ``repeats`` times in this process."""
    walls, cpus = [], []
    for _ in range(repeats):
        start, cpu = time.perf_counter(), time.process_time()
        work()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def whole_command(repeats: int) -> None:
    """Print the whole `covlib coverage` process beside its imports and its work alone, on COMMAND_CASE."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = ensure_dataset(COMMAND_CASE, tmp)
        command = covlib_command() + ["coverage", str(folder)]
        imports = [sys.executable, "-c", "import covlib.cli.main, covlib.cli.coverage"]
        floor = [sys.executable, "-c", "import numpy"]
        # as a reader runs it: Python caches compiled modules (PYTHONDONTWRITEBYTECODE, set in some shells and CI,
        # would compile every changed module at every start, 10-20 ms that a reader never pays)
        cached = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        one_thread = {**cached, "OPENBLAS_NUM_THREADS": "1"}
        child_run(command, cached)  # the first run compiles and caches; not counted
        # before the command pinned BLAS to one thread, numpy started a thread per core as it loaded: the runs
        # alternate, so that all see the same load
        every_core = {**cached, "OPENBLAS_NUM_THREADS": str(os.cpu_count())}
        runs = {"whole process": [], f"the same, BLAS on {os.cpu_count()} threads": [],
                "imports only (process)": [], "Python and numpy alone": []}
        for _ in range(repeats):
            runs["whole process"].append(child_run(command, cached))
            runs[f"the same, BLAS on {os.cpu_count()} threads"].append(child_run(command, every_core))
            runs["imports only (process)"].append(child_run(imports, one_thread))
            runs["Python and numpy alone"].append(child_run(floor, one_thread))
        data = coverage_inputs(folder)
        alone = {"command's work (in process)": in_process(lambda: annotate_folder(folder), repeats),
                 "sweep of test items alone": in_process(
                     lambda: coverage_sweep(data.train_inputs, data.train_answers, data.num_tokens,
                                            data.test_inputs), repeats)}
    print(f"`{' '.join(['covlib', 'coverage', folder.name])}`, median of {repeats}; {load()}")
    print(f"{'':<30} {'wall s':>7} {'CPU s':>7}")
    for name, pairs in runs.items():
        print(f"{name:<30} {statistics.median(w for w, _ in pairs):7.3f} {statistics.median(c for _, c in pairs):7.3f}")
    for name, (wall, cpu) in alone.items():
        print(f"{name:<30} {wall:7.3f} {cpu:7.3f}")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="only the two small twohop cases")
    parser.add_argument("--repeats", type=int, default=9, help="runs per timing of the whole command (median)")
    args = parser.parse_args()
    print(describe())
    whole_command(args.repeats)
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
