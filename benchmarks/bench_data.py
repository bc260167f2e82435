"""Time dataset generation, writing and loading at the paper's scales (prints figures only), and first the
decoding of input codes that generation spends most of its time in: covlib's decode against the broadcast form it
replaced (every code divided by a row of place values), side by side on the same codes, and the count of a five-hop
CoT cell's ID pool (chapter 7's evidence cells) that rests on it.

    .venv/bin/python benchmarks/bench_data.py [--decode-only]
"""
from __future__ import annotations

import argparse
import resource
import statistics
import tempfile
import time

import numpy as np
from machine import describe, load  # benchmarks/machine.py

from covlib.tasks.codes import decode, digit_weights
from covlib.tasks.datasets import DatasetConfig, eligible_count, generate, save_dataset
from covlib.tasks.folders import load_dataset

CASES = [
    DatasetConfig("twohop", 100, 80_000),
    DatasetConfig("twohop", 200, 500_000),
    DatasetConfig("threehop", 50, 200_000),
]


def broadcast_decode(codes: np.ndarray, num_tokens: int, n_inputs: int) -> np.ndarray:
    """The form decode had until 2026-11-28: every code divided by a broadcast row of place values."""
    codes = np.asarray(codes, dtype=np.int64)
    return ((codes[:, None] // digit_weights(num_tokens, n_inputs)[None, :]) % num_tokens).astype(np.int32)


def median_ms(work, *args, repeats: int = 7) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work(*args)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def decode_figures() -> None:
    for num_tokens, n_inputs, label in [(16, 6, "five-hop, N = 16"), (50, 4, "three-hop, N = 50"), (100, 6, "N = 100, 6 inputs (64-bit)")]:
        codes = np.arange(1 << 20, dtype=np.int64) * (num_tokens**n_inputs // (1 << 20))
        assert np.array_equal(decode(codes, num_tokens, n_inputs), broadcast_decode(codes, num_tokens, n_inputs))
        old = median_ms(broadcast_decode, codes, num_tokens, n_inputs)
        new = median_ms(decode, codes, num_tokens, n_inputs)
        print(f"decode 2^20 codes, {label:27}: broadcast {old:6.1f} ms, covlib {new:6.1f} ms, {old / new:.2f}x")
    start = time.perf_counter()
    count = eligible_count("fivehop", 16, 0, cot=True)
    print(f"ID pool of five-hop CoT N = 16, seed 0 (eligible_count): {count:,} inputs in {time.perf_counter() - start:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decode-only", action="store_true", help="only the decoding figures")
    args = parser.parse_args()
    print(describe(), "|", load())
    decode_figures()
    if args.decode_only:
        return
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
