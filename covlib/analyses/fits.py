"""Power-law fits of required data against N, with intervals valid for the design."""
from __future__ import annotations

from collections.abc import Sequence

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
    cells = [(np.log(float(N)), np.log(g["n_req"].to_numpy(float))) for N, g in est.groupby("N")]
    rng = np.random.default_rng(seed)
    slopes = []
    for _ in range(reps):
        pick = rng.integers(0, len(cells), len(cells))
        x = np.concatenate([np.full(len(cells[i][1]), cells[i][0]) for i in pick])
        if len(np.unique(x)) < 2:
            continue
        y = np.concatenate([cells[i][1][rng.integers(0, len(cells[i][1]), len(cells[i][1]))] for i in pick])
        slopes.append(np.polyfit(x, y, 1)[0])
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
