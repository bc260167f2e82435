"""Power-law fits of required data against N, with intervals valid for the design."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from covlib.base.errors import CovlibError


def power_fit(N: Sequence[float], n: Sequence[float]) -> dict:
    """Least squares of log n = log a + c log N: returns a, c and R^2."""
    x, y = np.log(np.asarray(N, float)), np.log(np.asarray(n, float))
    if len(np.unique(x)) < 2:
        raise CovlibError("a power-law fit needs estimates at two values of N or more")
    c, log_a = np.polyfit(x, y, 1)
    resid = y - (log_a + c * x)
    ss_tot = float(((y - y.mean()) ** 2).sum())
    r2 = 1.0 - float((resid**2).sum()) / ss_tot if ss_tot > 0 else float("nan")
    return {"a": float(np.exp(log_a)), "c": float(c), "r2": r2, "points": int(len(x))}


MIN_N_FOR_INTERVAL = 4  # below this many distinct N, a slope interval is not worth printing (a line through 2-3 points)


def exponent_fit(estimates: pd.DataFrame, level: float = 0.95, reps: int = 4000, seed: int = 0) -> dict | None:
    """The exponent c of n_req ~ a N^c with an interval valid for the design, or None below two N values.

    ``estimates`` has one row per finished search (columns N, n_req, and seed when there are several).
    The interval depends on how the estimates were made:

    * fewer than 4 distinct N: none (``interval`` says so): a slope through 2-3 points has no useful interval;
    * 2 or more seeds at most N (at least half of them; a cell whose second seed is still searching keeps its
      one): resample whole N-cells with replacement and the seeds within each drawn cell (so that both the
      spread between N and between seeds count), percentile interval; c is the least-squares slope over every
      estimate;
    * otherwise (one seed, or one seed at most N): fit the geometric mean of each N-cell and give the slope's
      t-interval with (number of N) - 2 degrees of freedom (resampling cells that hold one seed each would
      ignore the seed-to-seed spread).

    With a ``log_sd`` column (the uncertainty of each cell's log n_req, e.g. from the logistic estimator), each
    resample also draws every chosen cell's log n_req from a normal of that spread, so the interval carries each
    cell's uncertainty as well as the spread over N and seeds (the t-interval of one-seed fits does not).

    Returns c, a, r2, c_low, c_high, interval (the method, or why there is none), n_values, seeds (the most
    seeds at any N), N_min, N_max, points."""
    est = estimates.dropna(subset=["n_req"]) if len(estimates) else estimates
    if len(est) == 0 or est["N"].nunique() < 2:
        return None
    seeds = est.groupby("N").size() if "seed" not in est else est.groupby("N")["seed"].nunique()
    described = {"n_values": int(est["N"].nunique()), "seeds": int(seeds.max()), "N_min": float(est["N"].min()),
                 "N_max": float(est["N"].max()), "points": int(len(est))}
    if (seeds >= 2).mean() >= 0.5:
        fit = power_fit(est["N"], est["n_req"])
        low, high = _cell_bootstrap(est, level, reps, seed)
        method = "resampling N-cells and the seeds within them"
    else:
        cells = est.assign(log_n=np.log(est["n_req"].astype(float))).groupby("N")["log_n"].mean()
        fit = power_fit(cells.index.to_numpy(float), np.exp(cells.to_numpy()))
        low, high = _slope_t_interval(cells.index.to_numpy(float), cells.to_numpy(), level)
        method = "slope t-interval" if seeds.max() == 1 else "slope t-interval over N-cell means"
    if described["n_values"] < MIN_N_FOR_INTERVAL:
        low, high, method = float("nan"), float("nan"), f"none: fewer than {MIN_N_FOR_INTERVAL} values of N"
    return {"c": fit["c"], "a": fit["a"], "r2": fit["r2"], "c_low": low, "c_high": high, "interval": method,
            **described}


def _slope_t_interval(N: np.ndarray, log_n: np.ndarray, level: float) -> tuple[float, float]:
    """The least-squares slope of log_n on log N, +- t(level, n-2) standard errors."""
    if len(N) < 3:
        return float("nan"), float("nan")
    line = stats.linregress(np.log(N), log_n)
    half = stats.t.ppf((1 + level) / 2, len(N) - 2) * line.stderr
    return float(line.slope - half), float(line.slope + half)


def _cell_bootstrap(est: pd.DataFrame, level: float, reps: int, seed: int) -> tuple[float, float]:
    """Percentile interval of the slope over two-level resamples: whole N-cells with replacement, then the seeds
    within each drawn cell. Resampling cells alone ignores the seed-to-seed spread measured inside them: with a
    handful of cells whose means happen to lie near a line (two-hop's five here) it gave 2.10-2.11, an interval
    far narrower than the 1.15x gap between two seeds of one cell allows."""
    spread = "log_sd" in est
    cells = [(np.log(float(N)), np.log(g["n_req"].to_numpy(float)),
              g["log_sd"].fillna(0).to_numpy(float) if spread else np.zeros(len(g))) for N, g in est.groupby("N")]
    rng = np.random.default_rng(seed)
    slopes = []
    for _ in range(reps):
        pick = rng.integers(0, len(cells), len(cells))
        x = np.concatenate([np.full(len(cells[i][1]), cells[i][0]) for i in pick])
        if x.min() == x.max():  # one value of N drawn: no slope
            continue
        seeds = [rng.integers(0, len(cells[i][1]), len(cells[i][1])) for i in pick]
        y = np.concatenate([cells[i][1][j] for i, j in zip(pick, seeds)])
        if spread:  # each drawn cell's own uncertainty
            y = y + rng.normal(0.0, np.concatenate([cells[i][2][j] for i, j in zip(pick, seeds)]))
        dx = x - x.mean()  # the least-squares slope in closed form (np.polyfit's, without its solver's overhead)
        slopes.append(float(dx @ (y - y.mean()) / (dx @ dx)))
    low, high = np.quantile(slopes, [(1 - level) / 2, (1 + level) / 2])
    return float(low), float(high)


def summary_exponent(summary: pd.DataFrame, reps: int = 4000) -> dict | None:
    """exponent_fit over a search summary's finished cells (columns N, seed, n_req); None below two N."""
    finished = summary.dropna(subset=["n_req"]) if len(summary) else summary
    return exponent_fit(finished[["N", "seed", "n_req"]], reps=reps) if len(finished) else None


def has_interval(fit: dict | None) -> bool:
    """Whether a fit exists and carries a 95% interval (4 or more values of N)."""
    return fit is not None and not np.isnan(fit["c_low"])


def describe_exponent(fit: dict | None) -> str:
    """A fit in one phrase: the exponent, its interval or why there is none, the N range, values and seeds."""
    if fit is None:
        return "not enough finished cells to fit"
    seeds = f"{fit['seeds']} seed{'s' if fit['seeds'] > 1 else ''}"
    where = f"N = {fit['N_min']:.0f}-{fit['N_max']:.0f}, {fit['n_values']} values of N, {seeds}"
    if np.isnan(fit["c_low"]):
        return f"c = {fit['c']:.2f} (no interval: {fit['n_values']} values of N are too few; {where})"
    return (f"c = {fit['c']:.2f} (95% interval {fit['c_low']:.2f} to {fit['c_high']:.2f} by {fit['interval']}; "
            f"{where}; R² = {fit['r2']:.3f})")


def exponent_metrics(name: str, fit: dict | None) -> dict[str, float]:
    """A fit as recorded metrics: exponent_<name>, its n_values and seeds, and ci_low / ci_high only where
    the design gives an interval (4 or more values of N)."""
    if fit is None:
        return {f"exponent_{name}": float("nan"), f"exponent_{name}_n_values": 0, f"exponent_{name}_seeds": 0}
    out = {f"exponent_{name}": fit["c"], f"exponent_{name}_n_values": fit["n_values"],
           f"exponent_{name}_seeds": fit["seeds"]}
    if not np.isnan(fit["c_low"]):
        out |= {f"exponent_{name}_ci_low": fit["c_low"], f"exponent_{name}_ci_high": fit["c_high"]}
    return out


def exponent_difference(first: pd.DataFrame, second: pd.DataFrame, reps: int = 4000, seed: int = 0,
                        paired: bool = True, named_levels: Mapping[str, float] | None = None) -> dict:
    """The difference of two exponents, c(first) - c(second), with 90% and 95% percentile intervals (and one per
    entry of ``named_levels``, from the same resamples: name_low/high, e.g. for a family's levels).

    Paired (the default): both series are cut to the (N, seed) cells they share, and each resample draws the same
    N values and seeds for both, so a difference is read on the same cells; unpaired: each series is resampled on
    its own (for series that share too few N). Each drawn cell's log n_req is also drawn from its own ``log_sd``
    where the estimates carry one. Returns difference, ci90_low/high, ci95_low/high, n_values (N values read),
    cells, paired; intervals are NaN below MIN_N_FOR_INTERVAL values of N in either series."""
    if paired:
        keys = ["N", "seed"]
        common = first[keys].merge(second[keys], on=keys)
        first, second = (s.merge(common, on=keys).sort_values(keys) for s in (first, second))
    c = power_fit(first["N"], first["n_req"])["c"] - power_fit(second["N"], second["n_req"])["c"]
    n_values = min(first["N"].nunique(), second["N"].nunique())
    out = {"difference": float(c), "paired": paired, "cells": int(len(first) + (0 if paired else len(second))),
           "n_values": int(n_values)}
    named = {"ci90": 0.90, "ci95": 0.95} | dict(named_levels or {})
    if n_values < MIN_N_FOR_INTERVAL:
        return out | {f"{e}_{side}": np.nan for e in named for side in ("low", "high")}
    rng = np.random.default_rng(seed)
    xa, ya, sda, ma = _series_arrays(first)
    xb, yb, sdb, mb = _series_arrays(second)
    cells_a, seeds_a = _draw_indices(ma, reps, rng)
    # paired: the same N values and seeds for both series (sorted alike, so index k is the same cell in both)
    cells_b, seeds_b = (cells_a, seeds_a) if paired else _draw_indices(mb, reps, rng)
    draws = _slopes(xa, ya, sda, ma, cells_a, seeds_a, rng) - _slopes(xb, yb, sdb, mb, cells_b, seeds_b, rng)
    draws = np.asarray(draws)
    draws = draws[np.isfinite(draws)]
    return out | _named_quantiles(draws, named)


def _named_quantiles(draws: np.ndarray, named_levels: Mapping[str, float]) -> dict[str, float]:
    """The percentile interval of ``draws`` at each named level: {name_low, name_high}."""
    out = {}
    for name, level in named_levels.items():
        low, high = np.quantile(draws, [(1 - level) / 2, (1 + level) / 2])
        out |= {f"{name}_low": float(low), f"{name}_high": float(high)}
    return out


def _series_arrays(est: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A series as arrays over its N-cells: log N (K,), and per cell up to M seeds: log n_req, log_sd (K, M) and a
    mask of the seeds that exist (K, M)."""
    groups = [g for _, g in est.groupby("N")]
    K, M = len(groups), max(len(g) for g in groups)
    x = np.log(np.array([float(g["N"].iloc[0]) for g in groups]))
    y, sd, mask = np.zeros((K, M)), np.zeros((K, M)), np.zeros((K, M), dtype=bool)
    for i, g in enumerate(groups):
        m = len(g)
        y[i, :m] = np.log(g["n_req"].to_numpy(float))
        sd[i, :m] = g["log_sd"].fillna(0).to_numpy(float) if "log_sd" in g else 0.0
        mask[i, :m] = True
    return x, y, sd, mask


def _draw_indices(mask: np.ndarray, reps: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A two-level resample, vectorised over ``reps``: N-cells with replacement (reps, K), then within each drawn
    cell its seeds with replacement (reps, K, M; entries past a cell's seed count are masked out later)."""
    K, M = mask.shape
    cells = rng.integers(0, K, (reps, K))
    counts = mask.sum(axis=1)[cells]  # seeds of each drawn cell
    seeds = np.floor(rng.random((reps, K, M)) * counts[..., None]).astype(int)
    return cells, seeds


def _slopes(x, y, sd, mask, cells, seeds, rng) -> np.ndarray:
    """The least-squares slope of every resample (NaN where it drew a single N), each drawn value moved by a
    normal of its cell's log_sd."""
    keep = np.arange(mask.shape[1])[None, None, :] < mask.sum(axis=1)[cells][..., None]  # a drawn cell's own seeds
    xs = np.broadcast_to(x[cells][..., None], seeds.shape)
    ys = y[cells[..., None], seeds] + rng.standard_normal(seeds.shape) * sd[cells[..., None], seeds]
    w = keep.astype(float)
    n = w.sum(axis=(1, 2))
    mx, my = (w * xs).sum(axis=(1, 2)) / n, (w * ys).sum(axis=(1, 2)) / n
    sxx = (w * (xs - mx[:, None, None]) ** 2).sum(axis=(1, 2))
    sxy = (w * (xs - mx[:, None, None]) * (ys - my[:, None, None])).sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(sxx > 1e-12, sxy / sxx, np.nan)


def exponent_intervals(estimates: pd.DataFrame, levels: Sequence[float] = (0.90, 0.95), reps: int = 4000,
                       seed: int = 0, named_levels: Mapping[str, float] | None = None) -> dict:
    """exponent_fit's design, for several levels from one set of resamples and vectorised: the least-squares c
    and, with 2+ seeds at half the N or more, the two-level bootstrap that also draws each cell's log n_req from
    its ``log_sd``; otherwise the slope t-interval over N-cell means; none below MIN_N_FOR_INTERVAL values of N.
    Returns c, r2, n_values, seeds, N_min, N_max, points and ci<level>_low/high (e.g. ci90_low), and name_low/high
    for each entry of ``named_levels`` (levels whose percentages do not round to a name of their own)."""
    est = estimates.dropna(subset=["n_req"]) if len(estimates) else estimates
    named = {f"ci{round(lv * 100)}": lv for lv in levels} | dict(named_levels or {})
    nan = {f"{name}_{end}": np.nan for name in named for end in ("low", "high")}
    if len(est) == 0 or est["N"].nunique() < 2:
        return {"c": np.nan, "r2": np.nan, "n_values": int(est["N"].nunique()) if len(est) else 0, "seeds": 0,
                "N_min": np.nan, "N_max": np.nan, "points": len(est)} | nan
    seeds = est.groupby("N")["seed"].nunique() if "seed" in est else est.groupby("N").size()
    fit = power_fit(est["N"], est["n_req"])
    out = {"c": fit["c"], "r2": fit["r2"], "n_values": int(est["N"].nunique()), "seeds": int(seeds.max()),
           "N_min": float(est["N"].min()), "N_max": float(est["N"].max()), "points": int(len(est))}
    if out["n_values"] < MIN_N_FOR_INTERVAL:
        return out | nan
    if (seeds >= 2).mean() >= 0.5:
        x, y, sd, mask = _series_arrays(est)
        rng = np.random.default_rng(seed)
        draws = _slopes(x, y, sd, mask, *_draw_indices(mask, reps, rng), rng)
        draws = draws[np.isfinite(draws)]
        return out | _named_quantiles(draws, named)
    cells = est.assign(log_n=np.log(est["n_req"].astype(float))).groupby("N")["log_n"].mean()
    out["c"] = power_fit(cells.index.to_numpy(float), np.exp(cells.to_numpy()))["c"]
    for name, lv in named.items():
        low, high = _slope_t_interval(cells.index.to_numpy(float), cells.to_numpy(), lv)
        out |= {f"{name}_low": low, f"{name}_high": high}
    return out
