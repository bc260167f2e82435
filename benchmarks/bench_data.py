"""Time dataset generation, writing and loading at the paper's scales (prints figures only).

    .venv/bin/python benchmarks/bench_data.py
"""
from __future__ import annotations

import resource
import tempfile
import time

from covlib.tasks.datasets import DatasetConfig, generate, save_dataset
from covlib.tasks.folders import load_dataset

CASES = [
    DatasetConfig("twohop", 100, 80_000),
    DatasetConfig("twohop", 200, 500_000),
    DatasetConfig("threehop", 50, 200_000),
]


def main() -> None:
    print(f"{'dataset':32} {'generate s':>10} {'write s':>8} {'load s':>7} {'MB on disk':>10}")
    for cfg in CASES:
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            ds = generate(cfg)
            t1 = time.perf_counter()
            folder = save_dataset(ds, tmp)
            t2 = time.perf_counter()
            load_dataset(folder)
            t3 = time.perf_counter()
            size = sum(p.stat().st_size for p in folder.iterdir()) / 1e6
        print(f"{cfg.folder_name:32} {t1 - t0:10.2f} {t2 - t1:8.2f} {t3 - t2:7.2f} {size:10.1f}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak resident memory: {peak:.0f} MB")


if __name__ == "__main__":
    main()
