"""n_req as the size at which a probe succeeds half the time: a logistic model of success against log n_train.

A bracket's two end probes sit right at the boundary, where the outcome is noisiest, and the bracket's geometric
mean uses only those two. The model reads every probe of a cell: P(success at n) = logistic(s * (log n - log
n_req)), with one slope s shared by every cell.

What measures s. A bisection never probes a size twice and never outside its bracket, so its outcomes always come
out ordered, failures below successes, whatever the noise: they say almost nothing about s, and maximising over
every cell's n_req drives s to infinity (a replicate that flips at the very size it repeats is fitted exactly by
putting that cell's n_req on the tie). The replicates measure it. A replicate reruns one end of a finished
bracket; given the bracket, the cell's log n_req lies in it (uniformly, as far as the search can tell), and a
replicate at an end at distance d from it comes out the other way with probability logistic(-s d). Averaged over
the bracket's width g, that is (log 2 - log(1 + exp(-s g))) / (s g): flip_probability. The replicates' flips are
Bernoulli draws of it; replicate_slope maximises their likelihood (scipy's bounded minimiser) and gives a 90%
profile-likelihood interval (scipy's root finder). Each cell's n_req is then the maximum-likelihood size under that
slope, with profile-likelihood intervals (cell_estimate): nothing here is a hand-written optimiser."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import optimize, stats

SLOPE_BOUNDS = (0.25, 20_000.0)  # the slope's search range per unit of log n (20,000: a 99.99% rise within 0.1%)


@dataclass(frozen=True)
class SlopeFit:
    """The slope of success against log n_train shared by every cell, measured by the replicates: its maximum-
    likelihood value and 90% profile-likelihood interval (``high`` inf, and ``slope`` inf, when no replicate has
    flipped: only a lower bound is known), with the cells, replicates and flips it rests on."""

    slope: float
    low: float
    high: float
    cells: int
    replicates: int
    flips: int

    @property
    def identified(self) -> bool:
        """The slope has a finite estimate: some replicate disagreed with the search at its size."""
        return bool(np.isfinite(self.slope))

    @property
    def bounded(self) -> bool:
        """The replicates bound the slope from below (its interval's shallow end is finite)."""
        return bool(np.isfinite(self.low))


def flip_probability(slope: float, gaps: np.ndarray) -> np.ndarray:
    """The chance that a replicate at one end of a bracket of width ``gaps`` (in log n) comes out the other way,
    the cell's log n_req uniform in the bracket: the mean of logistic(-s d) for d from 0 to the width."""
    sg = slope * np.asarray(gaps, float)
    return (np.log(2.0) - np.log1p(np.exp(-sg))) / sg


def _flips_nll(log_s: float, gaps: np.ndarray, changed: np.ndarray) -> float:
    """The negative log-likelihood of the replicates' flips at slope exp(log_s)."""
    p = flip_probability(float(np.exp(log_s)), gaps)
    return -float(np.sum(np.where(changed, np.log(p), np.log1p(-p))))


def _flips_max_log_likelihood(gaps: np.ndarray, changed: np.ndarray) -> float:
    """The flips' log-likelihood at their maximum-likelihood slope (at the range's steep end when none flipped)."""
    lo, hi = np.log(SLOPE_BOUNDS)
    if not changed.any():
        return -_flips_nll(hi, gaps, changed)
    best = optimize.minimize_scalar(_flips_nll, bounds=(lo, hi), args=(gaps, changed), method="bounded",
                                    options={"xatol": 1e-6})
    return -float(best.fun)


def replicate_slope(gaps: np.ndarray, changed: np.ndarray, cells: int = 0) -> SlopeFit:
    """The shared slope from replicates of bracket ends: each one's bracket width ``gaps`` (log high / low) and
    whether it came out other than the probe it repeats (``changed``); ``cells``: how many cells they rerun."""
    gaps, changed = np.asarray(gaps, float), np.asarray(changed, bool)
    if not len(gaps):
        return SlopeFit(np.inf, np.nan, np.nan, 0, 0, 0)
    lo, hi = np.log(SLOPE_BOUNDS)

    def nll(log_s: float) -> float:
        return _flips_nll(log_s, gaps, changed)

    drop = stats.chi2.ppf(0.90, 1) / 2
    flips = int(changed.sum())
    if flips == 0:  # the likelihood rises all the way up: only the shallow end is bounded
        top = -nll(hi)
        low = optimize.brentq(lambda t: top + nll(t) - drop, lo, hi) if top + nll(lo) > drop else lo
        return SlopeFit(np.inf, float(np.exp(low)), np.inf, cells, len(gaps), 0)
    best = optimize.minimize_scalar(nll, bounds=(lo, hi), method="bounded", options={"xatol": 1e-6})
    t, top = float(best.x), -float(best.fun)

    def gap(u: float) -> float:
        return top + nll(u) - drop

    low = optimize.brentq(gap, lo, t) if gap(lo) > 0 else lo
    high = optimize.brentq(gap, t, hi) if gap(hi) > 0 else np.inf
    return SlopeFit(float(np.exp(t)), float(np.exp(low)), float(np.exp(high)), cells, len(gaps), flips)


@dataclass(frozen=True)
class SlopeByGroup:
    """Does one slope fit every group of replicates (a task, with or without chain of thought)? Each group's own
    slope fit, and the likelihood-ratio test of one slope for all against one per group: its statistic, degrees
    of freedom and p-value, by a parametric bootstrap under the shared slope (the chi-squared limit is poor for a
    few flips per group); p is NaN where no flip measures the shared slope."""

    groups: dict[str, SlopeFit]
    statistic: float
    df: int
    p: float


def slope_by_group(gaps: np.ndarray, changed: np.ndarray, groups: np.ndarray, sims: int = 1000,
                   seed: int = 0) -> SlopeByGroup:
    """The likelihood-ratio test of one slope for every group against one slope per group (SlopeByGroup)."""
    gaps, changed, groups = np.asarray(gaps, float), np.asarray(changed, bool), np.asarray(groups)
    names = list(dict.fromkeys(groups))
    members = [groups == g for g in names]

    def statistic(flips: np.ndarray) -> float:
        apart = sum(_flips_max_log_likelihood(gaps[m], flips[m]) for m in members)
        return max(2 * (apart - _flips_max_log_likelihood(gaps, flips)), 0.0)

    fits = {g: replicate_slope(gaps[m], changed[m]) for g, m in zip(names, members)}
    observed = statistic(changed)
    shared = replicate_slope(gaps, changed)
    if not shared.identified or len(names) < 2:
        return SlopeByGroup(fits, observed, len(names) - 1, float("nan"))
    rng = np.random.default_rng(seed)
    chance = flip_probability(shared.slope, gaps)
    simulated = [statistic(rng.random(len(gaps)) < chance) for _ in range(sims)]
    p = (1 + sum(s >= observed - 1e-9 for s in simulated)) / (1 + sims)
    return SlopeByGroup(fits, observed, len(names) - 1, float(p))


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


def cell_estimates(probes: pd.DataFrame, slope: float, interval_slope: float | None = None) -> pd.DataFrame:
    """Every cell of ``probes`` (columns cell, log_n, success) that holds both outcomes: n_req, its maximum-
    likelihood size under ``slope`` (inf: the limit of exact outcomes, the middle of the cell's bracket), with 90%
    and 95% profile-likelihood intervals under ``interval_slope`` (default ``slope``; the shallow end of the
    slope's own interval makes them carry its uncertainty too), and log_sd, the standard deviation of log n_req
    that the 95% interval implies (its wider half over 1.96), which the exponent's bootstrap draws from."""
    interval_slope = slope if interval_slope is None else interval_slope
    rows = []
    for cell, g in probes.groupby("cell", sort=False):
        x, y = g["log_n"].to_numpy(float), g["success"].to_numpy(bool)
        if not (y.any() and (~y).any()):
            continue
        band = cell_estimate(x, y, interval_slope)
        if np.isfinite(slope):
            theta = cell_estimate(x, y, slope, levels=())["theta"]
        else:  # exact outcomes: anywhere between the largest failure and the smallest success above it
            high = x[y].min()
            theta = (x[~y & (x < high)].max() + high) / 2 if (~y & (x < high)).any() else band["theta"]
        theta = float(np.clip(theta, band["low_95"], band["high_95"]))
        half = max(theta - band["low_95"], band["high_95"] - theta)
        rows.append({"cell": cell, "n_req": np.exp(theta), "low_90": np.exp(band["low_90"]),
                     "high_90": np.exp(band["high_90"]), "low_95": np.exp(band["low_95"]),
                     "high_95": np.exp(band["high_95"]), "log_sd": half / stats.norm.ppf(0.975), "probes": len(g)})
    return pd.DataFrame(rows, columns=["cell", "n_req", "low_90", "high_90", "low_95", "high_95", "log_sd", "probes"])
