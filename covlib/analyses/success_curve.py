"""n_req as the size at which a probe succeeds half the time: a logistic model of success against log n_train.

A bracket's two end probes sit right at the boundary, where the outcome is noisiest, and the bracket's geometric
mean uses only those two. The model reads every probe of a cell: P(success at n) = logistic(s * (log n - log
n_req)), with one slope s shared by the cells it is fitted on (a single cell's probes are almost always separated,
failures below and successes above, which leaves its own slope unbounded; replicates at the same size are what
pin s down). Given s, each cell's log n_req has a profile-likelihood interval. The fits are statsmodels' GLM (the
shared slope) and scipy's minimiser and root finder (each cell); nothing here is a hand-written optimiser."""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
import statsmodels.api as sm
from scipy import optimize, stats
from statsmodels.tools.sm_exceptions import PerfectSeparationError, PerfectSeparationWarning


@dataclass(frozen=True)
class SlopeFit:
    """The shared slope of success against log n_train (per unit of log n), its standard error, how many cells
    and probes it rests on, and how many of those cells hold both outcomes at overlapping sizes."""

    slope: float
    se: float
    cells: int
    probes: int
    overlapping_cells: int

    @property
    def identified(self) -> bool:
        return bool(np.isfinite(self.slope) and self.slope > 0 and self.overlapping_cells > 0)


def overlaps(x: np.ndarray, y: np.ndarray) -> bool:
    """Whether a cell's outcomes overlap in size (some failure at or above some success): only then does it
    bound the slope."""
    x, y = np.asarray(x, float), np.asarray(y, bool)
    return bool(y.any() and (~y).any() and x[~y].max() >= x[y].min())


def fit_slope(probes: pd.DataFrame) -> SlopeFit:
    """The maximum-likelihood slope shared by every cell of ``probes`` (columns cell, log_n, success), each cell
    with an intercept of its own (a GLM with the binomial family). Cells with a single outcome carry no
    information about a shared slope and are left out. Unidentified (slope inf) when no cell's outcomes overlap:
    then every cell is perfectly separated and the likelihood grows without bound in s."""
    both = probes.groupby("cell")["success"].transform(lambda s: s.any() and not s.all())
    data = probes[both.astype(bool)]
    cells = data["cell"].nunique()
    overlapping = sum(overlaps(g["log_n"], g["success"]) for _, g in data.groupby("cell"))
    if not overlapping:
        return SlopeFit(np.inf, np.nan, cells, len(data), 0)
    design = pd.get_dummies(data["cell"], dtype=float)
    design["log_n"] = data["log_n"].to_numpy(float)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PerfectSeparationWarning)
        try:
            fit = sm.GLM(data["success"].astype(float).to_numpy(), design, family=sm.families.Binomial()).fit()
        except (PerfectSeparationError, PerfectSeparationWarning):
            return SlopeFit(np.inf, np.nan, cells, len(data), overlapping)
    return SlopeFit(float(fit.params["log_n"]), float(fit.bse["log_n"]), cells, len(data), overlapping)


def _log_likelihood(theta: float, x: np.ndarray, y: np.ndarray, slope: float) -> float:
    z = slope * (x - theta)
    return float(np.sum(np.where(y, -np.logaddexp(0, -z), -np.logaddexp(0, z))))


def cell_estimate(x: np.ndarray, y: np.ndarray, slope: float, levels: tuple[float, ...] = (0.90, 0.95)) -> dict:
    """A cell's log n_req under a known slope: the maximum-likelihood estimate (scipy's bounded scalar minimiser on
    the concave negative log-likelihood) and, per level, the profile-likelihood interval {theta: 2 (l(hat) - l(theta)) <= chi2(1, level)}. Needs both
    outcomes; returns theta (log n_req) and low_<level>, high_<level> (e.g. low_95)."""
    x, y = np.asarray(x, float), np.asarray(y, bool)
    if not (y.any() and (~y).any()):
        raise ValueError("a cell needs both a success and a failure to place its n_req")
    span = max(x.max() - x.min(), 1.0) + 50 / slope  # far enough out that the likelihood has fallen past any bound
    # the log-likelihood is concave in theta, so a bounded scalar search finds its maximum (a GLM with the slope as an
    # offset diverged on separated cells with a large offset, landing far outside them)
    best = optimize.minimize_scalar(lambda t: -_log_likelihood(t, x, y, slope), bounds=(x.min() - span, x.max() + span),
                                    method="bounded", options={"xatol": 1e-9})
    theta = float(best.x)
    top = _log_likelihood(theta, x, y, slope)
    out = {"theta": theta}
    for level in levels:
        drop = stats.chi2.ppf(level, 1) / 2

        def gap(t: float, drop: float = drop) -> float:  # zero at the interval's ends
            return top - _log_likelihood(t, x, y, slope) - drop

        tag = f"{round(level * 100):d}"
        out[f"low_{tag}"] = float(optimize.brentq(gap, theta - span, theta))
        out[f"high_{tag}"] = float(optimize.brentq(gap, theta, theta + span))
    return out


def cell_estimates(probes: pd.DataFrame, slope: float) -> pd.DataFrame:
    """cell_estimate for every cell of ``probes`` (columns cell, log_n, success) that holds both outcomes, as
    n_req with its 90% and 95% intervals and log_sd, the standard deviation of log n_req that the 95%
    interval implies (its wider half over 1.96), which the exponent's bootstrap draws from."""
    rows = []
    for cell, g in probes.groupby("cell", sort=False):
        y = g["success"].to_numpy(bool)
        if not (y.any() and (~y).any()):
            continue
        est = cell_estimate(g["log_n"].to_numpy(float), y, slope)
        half = max(est["theta"] - est["low_95"], est["high_95"] - est["theta"])
        rows.append({"cell": cell, "n_req": np.exp(est["theta"]), "low_90": np.exp(est["low_90"]),
                     "high_90": np.exp(est["high_90"]), "low_95": np.exp(est["low_95"]),
                     "high_95": np.exp(est["high_95"]), "log_sd": half / stats.norm.ppf(0.975),
                     "probes": len(g)})
    return pd.DataFrame(rows, columns=["cell", "n_req", "low_90", "high_90", "low_95", "high_95", "log_sd", "probes"])
