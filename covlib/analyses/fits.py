"""Power-law fits of required data against N, with intervals valid for the design."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from covlib.base.errors import CovlibError


def fit_exponent(summary: pd.DataFrame, reps: int = 2000, min_n_values: int = 3) -> dict | None:
    """The exponent c of n_req ~ N^c over a search summary's finished cells, with covlib.search's bootstrap
    interval; None below two N values. Below ``min_n_values`` the bootstrap has nothing to resample (every
    resample of two N values is the fit itself or degenerate), so the interval is left NaN rather than
    reported with zero width. Adds ``n_values``."""

    est = summary.dropna(subset=["n_req"])[["N", "n_req"]].astype(float) if len(summary) else pd.DataFrame()
    n_values = int(est["N"].nunique()) if len(est) else 0
    if n_values < 2:
        return None
    fit = bootstrap_exponent(est, reps=reps) | {"n_values": n_values}
    if n_values < min_n_values:
        fit |= {"c_low": float("nan"), "c_high": float("nan")}
    return fit




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


def bootstrap_exponent(estimates: pd.DataFrame, reps: int = 2000, seed: int = 0, level: float = 0.95) -> dict:
    """The fitted exponent with a bootstrap interval: resample the N values, and the seeds within each
    N, with replacement (``estimates`` has columns N and n_req, one row per seed)."""
    est = estimates.dropna(subset=["n_req"])
    fit = power_fit(est["N"], est["n_req"])
    groups = [g["n_req"].to_numpy(float) for _, g in est.groupby("N")]
    Ns = np.array(sorted(est["N"].unique()), float)
    rng = np.random.default_rng(seed)
    cs = []
    for _ in range(reps):
        pick = rng.integers(0, len(Ns), len(Ns))
        if len(np.unique(Ns[pick])) < 2:
            continue
        xs, ys = [], []
        for i in pick:
            vals = groups[i][rng.integers(0, len(groups[i]), len(groups[i]))]
            xs += [np.log(Ns[i])] * len(vals)
            ys += list(np.log(vals))
        cs.append(np.polyfit(xs, ys, 1)[0])
    lo, hi = np.quantile(cs, [(1 - level) / 2, (1 + level) / 2]) if cs else (np.nan, np.nan)
    return fit | {"c_low": float(lo), "c_high": float(hi), "reps": len(cs)}
