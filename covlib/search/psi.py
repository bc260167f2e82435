"""The "psi" policy: each next probe where it most narrows what is known of n_req, per expected CPU-minute.

Psychophysics measures a threshold with yes/no trials that cost time, and its adaptive designs (the psi method of
Kontsevich and Tyler, QUEST+ of Watson) place each trial where the expected posterior entropy of the threshold is
lowest. Here a trial is a probe, the threshold is log n_req, and the model is the book's own
(covlib.analyses.success_curve): P(success at n) = logistic(s (log n - log n_req)) with one slope s.

- The posterior of theta = log n_req lives on a grid: a prior times the likelihood of every probe of the cell,
  whatever policy placed it (a probe's outcome does not depend on why it was run).
- The prior is centred on the search's first guess (covlib.search.required_data.first_guess_source): another
  model's or seed's estimate of the same cell, else the power law through the neighbouring N, else coverage's
  guess, each with the width its source has shown (PRIOR_SD), plus a small flat share so that a wrong guess
  cannot trap the search.
- The two workers run two probes of a cell at once, so the policy proposes a pair: the two sizes whose joint
  outcome lowers the expected entropy of theta most per expected CPU-minute of the two. A worker that asks while
  one probe of the cell is running gets the best partner of that running probe (the second of the same pair).
- A probe's expected cost comes from fit_probe_costs: per series, log minutes against the outcome and against how
  far the size lies from the cell's n_req (a success well above n_req stops early and is cheap; a failure or a
  success near it trains long), averaged over the posterior.
- It stops when the book's estimator (the logistic fit of success_curve.cell_estimate on every probe of the cell,
  no prior; logistic_estimate) gives a 90% interval of n_req at most SearchRules.bracket_ratio wide, or after
  SearchRules.max_probes probes.

The design math is scipy's (scipy.special.log_expit and xlogy for the likelihoods and entropies, on numpy grids).
The PyPI package questplus (QUEST+) was weighed and not used: its psychometric functions have no logistic in log
size, it has no cost per stimulus, and it proposes one stimulus at a time, so the criterion here (entropy per
expected CPU-minute, over pairs) would have been written beside it anyway."""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.special import expit, log_expit, xlogy

from covlib.analyses.success_curve import cell_estimate
from covlib.search.cells import CELL_KEY, Cell, CellState, SearchRules

# the width (sd of log n_req) of the prior around each kind of first guess, from the leave-one-out error of each
# source on the finished cells (benchmarks/bench_search_replay.py prints it): another model or seed of the same
# cell lands close, the power law through other N less so, coverage's guess can miss by a factor of several
PRIOR_SD = {"model": 0.25, "seed": 0.2, "law": 0.35, "cot": 1.0, "coverage": 1.0, "start": 1.0}
FLAT_SHARE = 0.05  # the prior's flat part over the whole grid
GRID_POINTS = 600  # theta grid over [log min_n - 1, log largest_n + 1]
CANDIDATES = 36  # sizes considered for the next probes, spread over where the posterior lies
SAME_SIZE = 0.01  # a size within this log distance of one already probed is the same probe again (same outcome)


@dataclass(frozen=True)
class PsiPrior:
    """Where the policy expects n_req before its own probes: a centre (n_train), a width (sd of log n) and the
    source of the centre."""

    centre: float
    sd: float
    source: str = "start"


@dataclass(frozen=True)
class ProbeCosts:
    """CPU-minutes of a probe against its outcome and x = log(n_train / n_req): log minutes = level
    + success * (success_shift + success_slope * x) + (1 - success) * failure_slope * x, with x held inside the
    range the fit saw for that outcome (no extrapolated power law). ``levels`` are the fitted cells' own levels."""

    level: float = 0.0
    success_shift: float = 0.0
    success_slope: float = 0.0
    failure_slope: float = 0.0
    success_x: tuple[float, float] = (0.0, 1.0)
    failure_x: tuple[float, float] = (-1.0, 0.0)
    levels: dict = field(default_factory=dict, compare=False)

    def minutes(self, log_n, theta, success, level: float | None = None) -> np.ndarray:
        """Minutes of a probe at log n_train ``log_n`` with outcome ``success`` when log n_req is ``theta``
        (numpy broadcasting); ``level`` replaces the series' level (a cell's own)."""
        x = np.asarray(log_n, float) - np.asarray(theta, float)
        ok = (self.success_shift + self.success_slope * np.clip(x, *self.success_x))
        bad = self.failure_slope * np.clip(x, *self.failure_x)
        return np.exp((self.level if level is None else level) + np.where(success, ok, bad))


def _brackets(rows: pd.DataFrame) -> pd.Series:
    """Each cell's bracket estimate (geometric mean of its smallest success and the largest failure below it)."""
    def one(g: pd.DataFrame) -> float:
        ok = g.loc[g["success"], "n_train"]
        if not len(ok):
            return np.nan
        below = g.loc[~g["success"] & (g["n_train"] < ok.min()), "n_train"]
        return float(np.sqrt(ok.min() * below.max())) if len(below) else np.nan
    return rows.groupby(CELL_KEY, sort=False)[["n_train", "success"]].apply(one)


SERIES_KEY = ["task", "cot", "model"]
MIN_CELLS, MIN_ROWS = 3, 20  # a series with fewer bracketed cells or probes uses the fit pooled over every series


def fit_probe_costs(rows: pd.DataFrame) -> dict:
    """ProbeCosts per series (task, cot, model) from search probes of one give-up rule (columns of the probe
    table): least squares of log minutes on a level per cell, the outcome, and x = log(n_train / the cell's bracket
    estimate) per outcome; only bracketed cells. A series with under MIN_CELLS cells or MIN_ROWS probes gets the
    fit pooled over every series (with its own cells' levels); key None is the pooled fit."""
    if not len(rows):
        return {None: ProbeCosts()}
    rows = rows.assign(success=rows["success"].astype(bool), cot=rows["cot"].astype(bool))
    est = _brackets(rows).rename("est").reset_index()
    data = rows.merge(est, on=CELL_KEY).dropna(subset=["est"])
    if not len(data):
        return {None: ProbeCosts()}
    data = data.assign(x=np.log(data["n_train"].astype(float) / data["est"]),
                       y=np.log(data["minutes"].astype(float).clip(lower=0.05)))
    out = {None: _fit_costs(data)}
    for key, g in data.groupby(SERIES_KEY):
        own = g.groupby(CELL_KEY).ngroups >= MIN_CELLS and len(g) >= MIN_ROWS
        out[tuple(key)] = _fit_costs(g) if own else _levels(out[None], g)
    return out


def _fit_costs(data: pd.DataFrame) -> ProbeCosts:
    cells = data[CELL_KEY].astype(str).agg("|".join, axis=1)
    dummies = pd.get_dummies(cells, dtype=float)
    s = data["success"].to_numpy(float)
    x = data["x"].to_numpy(float)
    design = np.column_stack([dummies.to_numpy(), s, s * x, (1 - s) * x])
    coef, *_ = np.linalg.lstsq(design, data["y"].to_numpy(float), rcond=None)
    k = dummies.shape[1]
    levels = dict(zip(dummies.columns, coef[:k]))
    ok, bad = x[s == 1], x[s == 0]
    return ProbeCosts(float(np.mean(coef[:k])), float(coef[k]), float(coef[k + 1]), float(coef[k + 2]),
                      (max(0.0, float(ok.min())), float(ok.max())) if len(ok) else (0.0, 1.0),
                      (float(bad.min()), min(0.0, float(bad.max()))) if len(bad) else (-1.0, 0.0), levels)


def _levels(pooled: ProbeCosts, data: pd.DataFrame) -> ProbeCosts:
    """The pooled fit with a series' own cells' levels (their mean residual under the pooled slopes)."""
    resid = data["y"] - np.log(pooled.minutes(np.log(data["n_train"].astype(float)), np.log(data["est"]),
                                              data["success"].to_numpy(bool), level=0.0))
    cells = data[CELL_KEY].astype(str).agg("|".join, axis=1)
    levels = resid.groupby(cells).mean().to_dict()
    return ProbeCosts(float(np.mean(list(levels.values()))), pooled.success_shift, pooled.success_slope,
                      pooled.failure_slope, pooled.success_x, pooled.failure_x, levels)


def costs_for(costs: dict, cell: Cell) -> ProbeCosts:
    """The cost model of a cell's series (the pooled one when its series has none)."""
    return costs.get((cell.task, bool(cell.cot), cell.model), costs.get(None, ProbeCosts()))


def theta_grid(rules: SearchRules, eligible: int) -> np.ndarray:
    """The grid of log n_req the posterior lives on."""
    return np.linspace(np.log(rules.min_n) - 1, np.log(rules.largest_n(eligible)) + 1, GRID_POINTS)


def log_prior(grid: np.ndarray, prior: PsiPrior) -> np.ndarray:
    """A normal in log n around the guess, mixed with FLAT_SHARE of a flat prior over the grid."""
    normal = np.exp(-0.5 * ((grid - np.log(prior.centre)) / prior.sd) ** 2)
    normal /= normal.sum()
    return np.log((1 - FLAT_SHARE) * normal + FLAT_SHARE / len(grid))


def log_posterior(grid: np.ndarray, prior: PsiPrior, log_n: np.ndarray, success: np.ndarray, slope: float
                  ) -> np.ndarray:
    """The normalised log posterior of theta on ``grid`` given probes at ``log_n`` with outcomes ``success``."""
    z = slope * (np.asarray(log_n, float)[:, None] - grid[None, :])
    ll = np.where(np.asarray(success, bool)[:, None], log_expit(z), log_expit(-z)).sum(axis=0)
    lp = log_prior(grid, prior) + ll
    return lp - np.logaddexp.reduce(lp)


def logistic_estimate(log_n: np.ndarray, success: np.ndarray, slope: float, level: float = 0.90
                      ) -> tuple[float, float, float]:
    """(log n_req, low, high) at ``level``: the book's estimator, success_curve.cell_estimate (maximum likelihood of
    theta under a known slope, with its profile-likelihood interval). Needs both outcomes."""
    tag = f"{round(level * 100):d}"
    est = cell_estimate(np.asarray(log_n, float), np.asarray(success, bool), slope, levels=(level,))
    return est["theta"], est[f"low_{tag}"], est[f"high_{tag}"]


def interval_ratio(log_n: np.ndarray, success: np.ndarray, slope: float, level: float = 0.90) -> float:
    """The width (high / low) of the book's interval of n_req at ``level`` from these probes alone
    (logistic_estimate); inf until both outcomes are seen."""
    y = np.asarray(success, bool)
    if not (y.any() and (~y).any()):
        return math.inf
    _, low, high = logistic_estimate(log_n, y, slope, level)
    return float(np.exp(high - low))


def psi_stopped(rows: pd.DataFrame, slope: float, ratio: float) -> bool:
    """Whether a cell's probes ``rows`` have met the psi policy's own stopping rule: psi placed some of them, and
    their interval of n_req (interval_ratio, under the ``slope`` psi assumed) is at most ``ratio`` wide."""
    return ("policy" in rows and bool((rows["policy"] == "psi").any())
            and interval_ratio(np.log(rows["n_train"].to_numpy(float)), rows["success"].to_numpy(bool), slope) <= ratio)


def _entropy(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(probability, entropy of the normalised distribution) of unnormalised ``q`` along its last axis."""
    z = q.sum(axis=-1)
    safe = np.where(z > 0, z, 1.0)
    h = np.log(safe) - xlogy(q, q).sum(axis=-1) / safe
    return z, np.where(z > 0, h, 0.0)


def candidate_sizes(grid: np.ndarray, log_post: np.ndarray, slope: float, low: int, high: int,
                    taken: Sequence[int]) -> np.ndarray:
    """Up to CANDIDATES integer sizes in [low, high] spread (in log) over the posterior's 0.5-99.5% range widened by
    3 / slope, none within SAME_SIZE of a size in ``taken``."""
    cdf = np.cumsum(np.exp(log_post))
    lo = grid[np.searchsorted(cdf, 0.005)] - 3 / slope
    hi = grid[min(np.searchsorted(cdf, 0.995), len(grid) - 1)] + 3 / slope
    lo, hi = max(lo, np.log(low)), min(hi, np.log(high))
    if hi < lo:  # the posterior lies beyond the pool's sizes: its nearer end
        lo = hi = np.log(high) if grid[np.argmax(log_post)] > np.log(high) else np.log(low)
    sizes = np.unique(np.clip(np.round(np.exp(np.linspace(lo, hi, CANDIDATES))), low, high).astype(int))
    if len(taken):
        near = np.abs(np.log(sizes)[:, None] - np.log(np.asarray(taken, float))[None, :]).min(axis=1)
        sizes = sizes[near >= SAME_SIZE]
    return sizes


CRITERIA = ("information", "entropy")
WIDE = 0.25  # "information" designs by entropy while the posterior's sd exceeds 1 / (WIDE slope): far from
# where it ends, a wide posterior is best halved (the information alone would creep along a tail)


def _sd(grid: np.ndarray, post: np.ndarray) -> float:
    """The posterior's spread as a normal's sd, from its interquartile range (the flat share does not inflate it)."""
    cdf = np.cumsum(post)
    return float((grid[np.searchsorted(cdf, 0.75)] - grid[np.searchsorted(cdf, 0.25)]) / 1.349)


def design(grid: np.ndarray, log_post: np.ndarray, slope: float, costs: ProbeCosts, sizes: np.ndarray,
           pending: Sequence[int] = (), pair: bool = True, criterion: str = "information") -> tuple[int, ...]:
    """The probes to run next among ``sizes``: the most expected knowledge of theta per expected CPU-minute.

    ``criterion`` "information": a probe's Fisher information about theta, s^2 p (1 - p), averaged over the
    posterior (Bayesian D-optimal design; at a single point it is QUEST's rule, probe at the posterior's mode), which
    adds over probes, as the likelihood interval that ends the search does. "entropy": the psi method's expected
    drop in the posterior entropy of theta over the outcomes (of both probes, for a pair).
    With ``pair`` and nothing pending: the two sizes with the most of it per expected minute of the two, the better
    one alone first; with sizes ``pending`` (running), the best partner for them by the same measure; else the best
    single probe. () when no size is left."""
    if criterion not in CRITERIA:
        raise ValueError(f"unknown design criterion {criterion!r}: {', '.join(CRITERIA)}")
    if not len(sizes):
        return ()
    post = np.exp(log_post)
    u = np.log(sizes.astype(float))
    p = expit(slope * (u[:, None] - grid[None, :]))  # (C, G)

    def expected_minutes(prob: np.ndarray, log_n: np.ndarray) -> np.ndarray:
        return (post * (prob * costs.minutes(log_n[:, None], grid, True)
                        + (1 - prob) * costs.minutes(log_n[:, None], grid, False))).sum(axis=1)

    cost = expected_minutes(p, u)
    held = np.log(np.asarray(pending, float))
    q = expit(slope * (held[:, None] - grid[None, :]))  # the running probes'
    sunk = float(expected_minutes(q, held).sum()) if len(held) else 0.0
    if criterion == "information" and WIDE * _sd(grid, post) > 1 / slope:
        criterion = "entropy"
    if criterion == "information":
        value = slope**2 * (post * p * (1 - p)).sum(axis=1)
        single = value / cost
        if len(held):
            return (int(sizes[int(np.argmax((slope**2 * (post * q * (1 - q)).sum() + value) / (sunk + cost)))]),)
        if not pair or len(sizes) < 2:
            return (int(sizes[int(np.argmax(single))]),)
        joint = (value[:, None] + value[None, :]) / (cost[:, None] + cost[None, :])
    else:
        h_now = _entropy(post)[1]

        def gain_of(weights: list[np.ndarray]) -> np.ndarray:
            """Expected entropy drop over outcome combinations, each weight (..., G) an outcome's likelihood."""
            expected = 0.0
            for w in weights:
                z, h = _entropy(post * w)
                expected = expected + z * h
            return h_now - expected

        def outcomes(*likelihoods: np.ndarray) -> list[np.ndarray]:
            out = [np.ones_like(likelihoods[0])]
            for lik in likelihoods:
                out = [o * lik for o in out] + [o * (1 - lik) for o in out]
            return out

        single = gain_of(outcomes(p)) / cost
        if len(held):
            joint = gain_of([f[None, :] * w for f in outcomes(*q) for w in outcomes(p)]) / (sunk + cost)
            return (int(sizes[int(np.argmax(joint))]),)
        if not pair or len(sizes) < 2:
            return (int(sizes[int(np.argmax(single))]),)
        a, b = p[:, None, :], p[None, :, :]  # (C, C, G)
        joint = gain_of([a * b, a * (1 - b), (1 - a) * b, (1 - a) * (1 - b)]) / (cost[:, None] + cost[None, :])
    joint[np.diag_indices(len(sizes))] = -np.inf
    i, j = np.unravel_index(int(np.argmax(joint)), joint.shape)
    first, second = (i, j) if single[i] >= single[j] else (j, i)
    return int(sizes[first]), int(sizes[second])


def psi_state(cell: Cell, rows: pd.DataFrame, eligible: int, rules: SearchRules, prior: PsiPrior,
              costs: ProbeCosts = ProbeCosts(), pending: Sequence[int] = (), undecided: Sequence[int] = ()
              ) -> CellState:
    """Where a cell's search stands under the psi policy, and its next probe (``pair``: the probes it proposes to
    run together). ``rows`` are the cell's probes that count (any policy's); ``pending`` the sizes now running;
    ``undecided`` failures a lower step cap stopped, probed again first (as every policy does)."""
    most = rules.largest_n(eligible)
    ok = sorted(rows.loc[rows["success"], "n_train"].astype(int)) if len(rows) else []
    bad = sorted(rows.loc[~rows["success"], "n_train"].astype(int)) if len(rows) else []
    state = CellState(cell, rows, eligible, None, "searching")
    if ok:
        state.high = ok[0]
        below = [n for n in bad if n < ok[0]]
        state.low = max(below) if below else None
        state.inversions = sum(n > ok[0] for n in bad)
    if not ok and bad and max(bad) >= most and max(bad) not in undecided:
        state.status, state.low = "unreachable", max(bad)
        return state
    if ok and state.low is None and ok[0] <= rules.min_n:
        state.status = "below_min"
        return state
    if state.low is not None and state.low in undecided:
        state.next_n = state.low
        state.pair = (state.low,)
        return state
    log_n = np.log(rows["n_train"].astype(float).to_numpy()) if len(rows) else np.zeros(0)
    success = rows["success"].to_numpy(bool) if len(rows) else np.zeros(0, bool)
    if state.low is not None and (state.high - state.low <= 1
                                  or interval_ratio(log_n, success, rules.psi_slope) <= rules.bracket_ratio
                                  or len(rows) >= rules.max_probes):
        state.status = "bracketed"
        return state
    grid = theta_grid(rules, eligible)
    log_post = log_posterior(grid, prior, log_n, success, rules.psi_slope)
    taken = [*rows["n_train"].astype(int)] if len(rows) else []
    sizes = candidate_sizes(grid, log_post, rules.psi_slope, rules.min_n, most, [*taken, *pending])
    chosen = design(grid, log_post, rules.psi_slope, costs, sizes, pending, rules.pairs, rules.psi_criterion)
    if chosen:
        state.next_n, state.pair = chosen[0], chosen
    return state
