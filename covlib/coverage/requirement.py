"""How much training data coverage needs: shares covered as n_train grows, and the crossing points."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from covlib.base.errors import CovlibError
from covlib.coverage.annotate import coverage_by_k
from covlib.tasks.datasets import DatasetConfig, eligible_count, generate


def first_crossing(n: np.ndarray, share: np.ndarray, target: float) -> float:
    """The n (interpolated in log n) where a share, made non-decreasing, first reaches ``target``; NaN if never."""
    share = np.maximum.accumulate(np.asarray(share, float))
    hit = np.flatnonzero(share >= target)
    if not len(hit):
        return float("nan")
    i = int(hit[0])
    if i == 0:
        return float(n[0])
    x0, x1 = np.log(n[i - 1]), np.log(n[i])
    return float(np.exp(x0 + (target - share[i - 1]) * (x1 - x0) / (share[i] - share[i - 1])))


def data_for_coverage(task: str, num_tokens: int, k: int = 3, target: float = 0.9, seed: int = 0,
                      test_size_per_type: int = 1000, rel_tol: float = 0.03) -> dict:
    """Smallest n_train (to ``rel_tol``) whose type_0 test items are at least ``target`` k-covered.

    Bisection on log(n_train) between 1 and the eligible count; each probe generates a dataset
    and sweeps coverage. Returns N, the bracketing sizes and the number of probes.
    """

    def covered(n: int) -> float:
        ds = generate(DatasetConfig(task, num_tokens, n, seed=seed, test_size_per_type=test_size_per_type))
        table = coverage_by_k(ds, k)
        row = table[(table["type"] == "type_0") & (table["k"] == k)]["covered"]
        return float(row.iloc[0]) if len(row) else 0.0  # no type_0 item at all (non-tree, small n): nothing covered

    eligible = generate(DatasetConfig(task, num_tokens, 1, seed=seed, test_size_per_type=0)).eligible_count
    lo, hi, probes = 1, eligible - 1, 0
    if covered(hi) < target:
        raise CovlibError(f"even {hi} training examples cover less than {target:.0%} of type_0 at k={k}, N={num_tokens}")
    while hi / lo > 1 + rel_tol:
        mid = int(round(np.sqrt(lo * hi)))
        probes += 1
        if covered(mid) >= target:
            hi = mid
        else:
            lo = mid
    return {"N": num_tokens, "k": k, "target": target, "n_train": hi, "below": lo, "eligible": eligible,
            "probes": probes}


def coverage_requirement(task: str, Ns: Sequence[int], ks: Sequence[int] = (1, 2, 3, 4),
                         targets: Sequence[float] = (0.9, 0.99), seed: int = 0, test_size_per_type: int = 1000,
                         points: int = 14) -> pd.DataFrame:
    """The coverage-predicted requirement: the smallest n_train whose ID test items are ``target``
    k-covered, for every k and target at once, per N. One coverage sweep gives every k, so instead of
    a bisection per (k, target) we sweep a log grid of n_train and interpolate each crossing in log n
    (coverage rises with n)."""

    rows = []
    for N in Ns:
        eligible = eligible_count(task, N, seed)
        grid = np.unique(np.geomspace(max(N, 16), eligible - 1, points).round().astype(int))
        cov = []
        for n in grid:
            ds = generate(DatasetConfig(task, N, int(n), seed=seed, test_size_per_type=test_size_per_type))
            t = coverage_by_k(ds, max(ks))
            t0 = t[t["type"] == "type_0"].set_index("k")["covered"]
            cov.append([float(t0[k]) for k in ks])
        cov = np.array(cov)  # (grid, k)
        for j, k in enumerate(ks):
            for target in targets:
                rows.append({"task": task, "N": N, "k": k, "target": target, "eligible": eligible,
                             "n_train": first_crossing(grid, cov[:, j], target)})
    return pd.DataFrame(rows)


def probe_coverage_by_k(task: str, N: int, n_train: int, seed: int, max_k: int = 6, test_size_per_type: int = 1000
                ) -> pd.DataFrame:
    """Coverage by k (k = 1..max_k) of the ID test items of a probe's dataset (regenerated: it is deterministic)."""

    table = coverage_by_k(generate(DatasetConfig(task, N, n_train, seed=seed, test_size_per_type=test_size_per_type)),
                          max_k)
    return table[table["type"] == "type_0"].reset_index(drop=True)
