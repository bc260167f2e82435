"""How far selection can move exact coverage of the ID test at a fixed number of distinct examples: random
training sets (the study's selection: extremes among random draws of typical make-up) and a directed selector
that draws examples by how many test fragments they share, across sizes and N. Coverage only, no training."""
from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from covlib.base.errors import CovlibError
from covlib.chapters.ch09_diversity_exposure_coverage.audit import (
    AuditSetup,
    Pool,
    coverage_profile,
    draw_subset,
    entropy,
    pool_of,
)
from covlib.coverage.exact import proper_subsets


def fragment_overlap(pool: Pool) -> np.ndarray:
    """Per pool input: how many ID test items share a fragment with it (summed over every proper set of input
    positions P: test items with the same tokens at P). Inputs that share many fragments with the test items
    are what substitutions need to reach them."""
    n_tok, m = pool.setup.N, pool.pool.shape[1]
    score = np.zeros(pool.size, dtype=np.int64)
    for positions in proper_subsets(m):
        weights = n_tok ** np.arange(len(positions), dtype=np.int64)
        test_codes = pool.test[:, positions].astype(np.int64) @ weights
        pool_codes = pool.pool[:, positions].astype(np.int64) @ weights
        score += np.bincount(test_codes, minlength=n_tok ** len(positions))[pool_codes]
    return score


def directed_subset(pool: Pool, n_unique: int, strength: float, draw: int, overlap: np.ndarray | None = None
                    ) -> np.ndarray:
    """Indices of ``n_unique`` pool inputs drawn without replacement with weights exp(strength * z), z the
    standardised fragment_overlap: strength > 0 favours inputs near the test items (more coverage), < 0 avoids
    them, 0 is a uniform draw. Gumbel top-k sampling, deterministic given ``draw``."""
    if not 1 <= n_unique <= pool.size:
        raise CovlibError(f"n_unique={n_unique} must lie in 1..{pool.size} (the pool at N={pool.setup.N})")
    score = fragment_overlap(pool) if overlap is None else overlap
    z = (score - score.mean()) / (score.std() or 1.0)
    rng = np.random.default_rng([pool.setup.data_seed, n_unique, draw, 7919])
    keys = strength * z + rng.gumbel(size=pool.size)
    return np.sort(np.argpartition(-keys, n_unique - 1)[:n_unique])


RANGE_COLUMNS = ["N", "n_unique", "pool_share", "candidates", "mean", "sd", "q01", "q99", "min", "max",
                 "typical_low", "typical_high", "directed_low", "directed_high", "directed_entropy_shift"]


def describe_set(pool: Pool, train: np.ndarray, k: int) -> tuple[float, float, float]:
    """Exact k-coverage of the ID test by ``train`` and the entropies of its answers and first bridges."""
    values = pool.base.evaluate(train)
    return (coverage_profile(pool, train, [k])[k], entropy(values["t"]),
            entropy(values[pool.base.task.hops[0].output]))


def range_cell(pool: Pool, n_unique: int, candidates: int, per_arm: int, strength: float, k: int = 3) -> dict:
    """One (N, n_unique) cell: the spread of k-coverage over ``candidates`` random sets, the arms the study's
    selection would take (the ``per_arm`` lowest and highest among sets of typical make-up: both entropies in
    their central half), and ``per_arm`` directed sets each way."""
    if candidates < 4 * per_arm:
        raise CovlibError(f"candidates={candidates} must be at least 4 * per_arm = {4 * per_arm}")
    rand = np.array([describe_set(pool, pool.pool[draw_subset(pool, n_unique, d)], k) for d in range(candidates)])
    cov, ent_t, ent_b = rand.T
    typical = np.ones(candidates, dtype=bool)
    for e in (ent_t, ent_b):
        lo, hi = np.quantile(e, [0.25, 0.75])
        typical &= (e >= lo) & (e <= hi)
    ranked = np.sort(cov[typical])
    overlap = fragment_overlap(pool)
    directed = {sign: np.array([describe_set(pool, pool.pool[directed_subset(pool, n_unique, sign * strength, d,
                                                                               overlap)], k) for d in range(per_arm)])
                for sign in (-1, 1)}
    # how far the directed sets' make-up lies from random sets': the larger shift of the two entropies, in sd
    shift = max(abs(directed[s][:, j].mean() - rand[:, j].mean()) / (rand[:, j].std() or 1.0)
                for s in (-1, 1) for j in (1, 2))
    return {"N": pool.setup.N, "n_unique": n_unique, "pool_share": n_unique / pool.size, "candidates": candidates,
            "mean": cov.mean(), "sd": cov.std(ddof=1), "q01": np.quantile(cov, 0.01), "q99": np.quantile(cov, 0.99),
            "min": cov.min(), "max": cov.max(),
            "typical_low": ranked[:per_arm].mean() if len(ranked) >= 2 * per_arm else float("nan"),
            "typical_high": ranked[-per_arm:].mean() if len(ranked) >= 2 * per_arm else float("nan"),
            "directed_low": directed[-1][:, 0].mean(), "directed_high": directed[1][:, 0].mean(),
            "directed_entropy_shift": shift}


def coverage_range(Ns: Sequence[int], shares: Sequence[float], candidates: int = 60, per_arm: int = 6,
                   strength: float = 1.0, test_size: int = 1000, progress: bool = False) -> pd.DataFrame:
    """range_cell for every N and every training-set size given as a share of that N's pool."""
    from tqdm.auto import tqdm

    rows = []
    cells = [(N, s) for N in Ns for s in shares]
    for N, share in tqdm(cells, desc="coverage range", disable=not progress):
        pool = pool_of(AuditSetup(N=N, test_size=test_size))
        rows.append(range_cell(pool, max(1, int(round(share * pool.size))), candidates, per_arm, strength))
    return pd.DataFrame(rows, columns=RANGE_COLUMNS)


def write_range(table: pd.DataFrame, path: str | os.PathLike) -> Path:
    """Write the range table atomically (CSV)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    table.to_csv(tmp, index=False, float_format="%.6g")
    os.replace(tmp, path)
    return path


def gaps(table: pd.DataFrame) -> pd.DataFrame:
    """Per cell, in points of coverage: the gap the study's selection reaches (typical arms), the random q01-q99
    range, and the directed selector's gap."""
    return table.assign(typical_gap=100 * (table.typical_high - table.typical_low),
                        quantile_gap=100 * (table.q99 - table.q01),
                        directed_gap=100 * (table.directed_high - table.directed_low))


def contrast_cells(table: pd.DataFrame, min_gap: float = 15.0, saturated: float = 0.95) -> pd.DataFrame:
    """The cells where a selector moves coverage by ``min_gap`` points or more while random sets of that size
    are below saturation (mean coverage under ``saturated``), largest gap first; which selector in ``selector``."""
    g = gaps(table)
    below = g["mean"] < saturated
    rows = []
    for selector, col in (("typical", "typical_gap"), ("directed", "directed_gap")):
        hit = g[below & (g[col] >= min_gap)]
        rows += [r | {"selector": selector, "gap": r[col]} for r in hit.to_dict("records")]
    out = pd.DataFrame(rows)
    return out.sort_values("gap", ascending=False) if len(out) else out


# the book's grid (data/diversity/coverage_range.csv): three N, sizes from near-zero to saturated coverage
RANGE_PLAN = {"Ns": (20, 25, 30), "shares": (0.2, 0.3, 0.4, 0.5, 0.7), "candidates": 32, "per_arm": 4,
              "strength": 2.0}


MIN_CONTRAST_GAP = 15.0  # points of 3-coverage between arms a contrast must move to test coverage
SATURATED = 0.95  # mean 3-coverage of random sets at or above which a size is saturated
MAX_MAKEUP_SHIFT = 1.0  # sd of the entropies a selector may shift the sets' make-up by and still be "at fixed make-up"


def range_summary(table: pd.DataFrame) -> dict[str, float]:
    """The largest gaps in 3-coverage (points) below saturation: between the typical arms the study's selection
    takes, and between the directed selector's arms, with the cells where they occur and the directed sets'
    shift in make-up; ``qualifying`` counts the cells where a selector at fixed make-up moves MIN_CONTRAST_GAP."""
    g = gaps(table)
    below = g[g["mean"] < SATURATED]
    nan = float("nan")
    out = {"cells": len(g), "cells_below_saturation": len(below), "max_typical_gap": nan, "typical_N": nan,
           "typical_n": nan, "max_directed_gap": nan, "directed_N": nan, "directed_n": nan, "directed_shift": nan,
           "qualifying": 0}
    if below["typical_gap"].notna().any():
        best = below.loc[below["typical_gap"].idxmax()]
        out |= {"max_typical_gap": best.typical_gap, "typical_N": best.N, "typical_n": best.n_unique}
    if len(below):
        best = below.loc[below["directed_gap"].idxmax()]
        out |= {"max_directed_gap": best.directed_gap, "directed_N": best.N, "directed_n": best.n_unique,
                "directed_shift": best.directed_entropy_shift}
    fixed = (below["typical_gap"] >= MIN_CONTRAST_GAP) | ((below["directed_gap"] >= MIN_CONTRAST_GAP)
                                                         & (below["directed_entropy_shift"] <= MAX_MAKEUP_SHIFT))
    out["qualifying"] = int(fixed.sum())
    return out


def range_finding(summary: dict[str, float], Ns: Sequence[int]) -> str:
    """What the range table says about a coverage contrast at fixed diversity (the conclusion follows it)."""
    s = summary
    if not s["cells_below_saturation"]:
        return "Every size measured here is saturated: no contrast of 3-coverage is possible at these sizes."
    head = (f"Below saturation (mean 3-coverage under {SATURATED:.0%}), the study's selection, the {MIN_CONTRAST_GAP:.0f}"
            f"-point test's natural candidate, moves exact 3-coverage of the ID test by at most "
            f"{s['max_typical_gap']:.1f} points between its arms (N = {s['typical_N']:.0f}, {s['typical_n']:,.0f} "
            f"examples); a selector that draws examples by how many test fragments they share reaches "
            f"{s['max_directed_gap']:.1f} points (N = {s['directed_N']:.0f}, {s['directed_n']:,.0f} examples), by "
            f"shifting the sets' make-up {s['directed_shift']:.1f} sd away from random sets'. ")
    if s["qualifying"]:
        return head + (f"{s['qualifying']} size(s) allow a contrast of {MIN_CONTRAST_GAP:.0f} points or more at fixed "
                       "make-up: that contrast is what tests coverage at fixed diversity.")
    return head + (f"No size at N = {', '.join(map(str, Ns))} lets selection at fixed diversity and make-up move "
                   f"3-coverage by {MIN_CONTRAST_GAP:.0f} points: exact coverage follows diversity, and a contrast "
                   "at fixed diversity cannot test it on this task.")


RANGE_PRESETS = {
    # smoke: one small N computed live in seconds; default and paper read the book's grid
    "smoke": ({"Ns": (10,), "shares": (0.5, 0.8), "candidates": 16, "per_arm": 2, "strength": 2.0, "test_size": 100},
              ""),
    "default": (RANGE_PLAN, "data/diversity/coverage_range.csv"),
    "paper": (RANGE_PLAN, "data/diversity/coverage_range.csv"),
}


RANGE_COMMAND = ("python -c \"from covlib.chapters.ch09_diversity_exposure_coverage.coverage_range import "
                 "coverage_range, write_range, RANGE_PLAN; write_range(coverage_range(**RANGE_PLAN), "
                 "'data/diversity/coverage_range.csv')\"")


def range_for(preset: str, cache_root: Path, recompute: bool = False) -> tuple[pd.DataFrame, dict]:
    """The preset's range table (read from its cache under ``cache_root``, or computed here) and its plan."""
    if preset not in RANGE_PRESETS:
        raise CovlibError(f"unknown preset {preset!r}; choose one of: {', '.join(RANGE_PRESETS)}")
    plan, cache = RANGE_PRESETS[preset]
    path = cache_root / cache if cache else None
    if path is not None and path.is_file() and not recompute:
        return pd.read_csv(path), plan
    if path is not None and not recompute:
        raise CovlibError(f"{path} is missing; make it with {RANGE_COMMAND} (about 4 CPU-minutes)")
    table = coverage_range(**plan)
    if path is not None:
        write_range(table, path)
    return table, plan
