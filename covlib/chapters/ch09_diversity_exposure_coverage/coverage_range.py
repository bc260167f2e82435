"""How far selection can move exact coverage of the ID test at a fixed number of distinct examples: random
training sets (the study's selection: extremes among random draws of typical make-up) and a directed selector
that draws examples by how many test fragments they share, across sizes and N. Coverage only, no training."""
from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

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
from covlib.figures.text import count_of

MIN_CONTRAST_GAP = 15.0  # points of 3-coverage between arms a contrast must move to test coverage
SATURATED = 0.95  # mean 3-coverage of random sets at or above which a size is saturated
MAX_MAKEUP_SHIFT = 1.0  # sd of the entropies a selector may shift the sets' make-up by and still be "at fixed make-up"


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
                   strength: float = 1.0, test_size: int = 1000, refine: int = 0, progress: bool = False
                   ) -> pd.DataFrame:
    """range_cell for every N and every training-set size given as a share of that N's pool; with ``refine``,
    the cell of each N where coverage varies most below saturation is scored again on ``refine`` random sets
    (its spread, and so its reachable gap, is then known more precisely)."""
    from tqdm.auto import tqdm

    rows = []
    cells = [(N, s) for N in Ns for s in shares]
    for N, share in tqdm(cells, desc="coverage range", disable=not progress):
        pool = pool_of(AuditSetup(N=N, test_size=test_size))
        rows.append(range_cell(pool, max(1, int(round(share * pool.size))), candidates, per_arm, strength))
    table = pd.DataFrame(rows, columns=RANGE_COLUMNS)
    return refine_cells(table, refine, per_arm, strength, test_size) if refine else table


def refine_cells(table: pd.DataFrame, candidates: int, per_arm: int, strength: float, test_size: int = 1000
                 ) -> pd.DataFrame:
    """The range table with the cell of each N where coverage varies most below saturation scored again on
    ``candidates`` random sets (skipped where it already has that many)."""
    table = table.copy()
    for N in table.N.unique():
        below = table[(table.N == N) & (table["mean"] < SATURATED)]
        if len(below) and below.loc[below["sd"].idxmax(), "candidates"] < candidates:
            i = below["sd"].idxmax()
            pool = pool_of(AuditSetup(N=int(N), test_size=test_size))
            table.loc[i, RANGE_COLUMNS] = pd.Series(range_cell(pool, int(table.loc[i, "n_unique"]), candidates,
                                                               per_arm, strength))[RANGE_COLUMNS]
    return table


def write_range(table: pd.DataFrame, path: str | os.PathLike) -> Path:
    """Write the range table atomically (CSV)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    table.to_csv(tmp, index=False, float_format="%.6g")
    os.replace(tmp, path)
    return path


Q_SPAN = float(stats.norm.ppf(0.99) - stats.norm.ppf(0.01))  # the 1st to 99th percentile of a normal, in sd


def gaps(table: pd.DataFrame) -> pd.DataFrame:
    """Per cell, in points of coverage: the gap between the typical arms the study's selection takes, the random
    sets' 1st-to-99th percentile range (the study's q1 against q99) as observed and as Q_SPAN sd with the upper
    end of the sd's 95% interval (chi-square, from the number of sets), and the directed selector's gap."""
    n = table["candidates"].to_numpy(float)
    upper = np.sqrt((n - 1) / stats.chi2.ppf(0.025, n - 1))
    return table.assign(typical_gap=100 * (table.typical_high - table.typical_low),
                        quantile_gap=100 * (table.q99 - table.q01),
                        quantile_gap_upper=100 * Q_SPAN * table["sd"] * upper,
                        directed_gap=100 * (table.directed_high - table.directed_low))


RANGE_PLAN = {"Ns": (20, 25, 30), "shares": (0.2, 0.3, 0.4, 0.5, 0.7), "candidates": 32, "per_arm": 4,
              "strength": 2.0, "refine": 240}




def range_summary(table: pd.DataFrame) -> dict[str, float]:
    """Below saturation, the largest gaps in 3-coverage (points) selection reaches at a fixed size: the random
    sets' q1-q99 range (observed, and its upper end from the sd's interval), the typical arms', and the directed
    selector's with its shift in make-up; ``qualifying`` counts the cells where a selector at fixed make-up
    moves (or, within the sd's interval, might move) MIN_CONTRAST_GAP points."""
    g = gaps(table)
    below = g[g["mean"] < SATURATED]
    nan = float("nan")
    out = {"cells": len(g), "cells_below_saturation": len(below), "max_quantile_gap": nan,
           "max_quantile_gap_upper": nan, "quantile_N": nan, "quantile_n": nan, "quantile_sets": nan,
           "max_typical_gap": nan, "max_directed_gap": nan, "directed_N": nan, "directed_n": nan,
           "directed_shift": nan, "qualifying": 0}
    if not len(below):
        return out
    best = below.loc[below["quantile_gap_upper"].idxmax()]
    out |= {"max_quantile_gap": below["quantile_gap"].max(), "max_quantile_gap_upper": best.quantile_gap_upper,
            "quantile_N": best.N, "quantile_n": best.n_unique, "quantile_sets": best.candidates,
            "max_typical_gap": below["typical_gap"].max()}
    best = below.loc[below["directed_gap"].idxmax()]
    out |= {"max_directed_gap": best.directed_gap, "directed_N": best.N, "directed_n": best.n_unique,
            "directed_shift": best.directed_entropy_shift}
    fixed = ((below["quantile_gap_upper"] >= MIN_CONTRAST_GAP) | (below["typical_gap"] >= MIN_CONTRAST_GAP)
             | ((below["directed_gap"] >= MIN_CONTRAST_GAP) & (below["directed_entropy_shift"] <= MAX_MAKEUP_SHIFT)))
    out["qualifying"] = int(fixed.sum())
    return out


def range_finding(summary: dict[str, float], Ns: Sequence[int]) -> str:
    """What the range table says about a coverage contrast at fixed diversity (the conclusion follows it)."""
    s = summary
    if not s["cells_below_saturation"]:
        return "Every size measured here is saturated: no contrast of 3-coverage is possible at these sizes."
    head = (f"Below saturation (mean 3-coverage under {SATURATED:.0%}), random training sets of one size differ in "
            f"exact 3-coverage of the ID test by at most {s['max_quantile_gap']:.1f} points from their 1st to their "
            f"99th percentile (the study's q1 against q99), and by at most {s['max_quantile_gap_upper']:.1f} points "
            f"within the 95% interval of their sd (N = {s['quantile_N']:.0f}, {s['quantile_n']:,.0f} examples, "
            f"{s['quantile_sets']:.0f} sets). A selector that draws examples by how many test fragments "
            f"they share reaches {s['max_directed_gap']:.1f} points (N = {s['directed_N']:.0f}, "
            f"{s['directed_n']:,.0f} examples), but only by shifting the sets' make-up {s['directed_shift']:.1f} sd "
            "away from random sets': a contrast of coverage and make-up together. ")
    if s["qualifying"]:
        return head + (f"{count_of(int(s['qualifying']), 'size')} may allow a contrast of {MIN_CONTRAST_GAP:.0f} points at fixed "
                       "make-up: a contrast there is what would test coverage at fixed diversity.")
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
REFINE_COMMAND = ("python -c \"import pandas as pd; from covlib.chapters.ch09_diversity_exposure_coverage.coverage_range "
                  "import refine_cells, write_range, RANGE_PLAN as P; p = 'data/diversity/coverage_range.csv'; "
                  "write_range(refine_cells(pd.read_csv(p), P['refine'], P['per_arm'], P['strength']), p)\"")


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
