"""Every cell's n_req under one give-up rule, by two estimators read off the same runs: the bracket's geometric
mean (the search's own) and the logistic model of success against log n_train (covlib.analyses.success_curve),
which reads every probe, replicates included, and carries an interval."""
from __future__ import annotations

import numpy as np
import pandas as pd

from covlib.analyses.success_curve import SlopeFit, cell_estimates, fit_slope
from covlib.search.cells import SearchRules
from covlib.search.same_runs import CELL_COLUMNS, cell_brackets

# a cell whose n_req lies above this share of the largest training set the search may try (the ID pool less the
# test items kept out) is bounded by the pool, not by the model: flagged, and every fit is also shown without it
POOL_LIMIT_SHARE = 0.9


def _labelled(table: pd.DataFrame) -> pd.DataFrame:
    """The rule table's rows with one ``cell`` label per (task, N, model, seed, cot) and log n_train."""
    cell = table[CELL_COLUMNS].astype(str).agg("|".join, axis=1)
    return table.assign(cell=cell, log_n=np.log(table["n_train"].astype(float)))


def shared_slope(table: pd.DataFrame) -> SlopeFit:
    """The slope of success against log n_train shared by every cell of a rule table (replicates included)."""
    return fit_slope(_labelled(table)[["cell", "log_n", "success"]])


def cell_table(table: pd.DataFrame, slope: SlopeFit, rules: SearchRules = SearchRules()) -> pd.DataFrame:
    """Per cell of a rule table: its bracket (search probes only), the logistic estimate with 90% and 95%
    intervals and log_sd (every probe; where no cell's outcomes overlap the slope is unbounded, and the estimate
    is its limit: anywhere in the bracket, which is then its interval; ``slope_identified`` says which), the share of the pool its n_req
    reaches (``pool_share``, of SearchRules.largest_n) and ``pool_limited``, and ``apart``: the two estimates
    differ by more than the bracket's own ratio (say why, where it happens)."""
    brackets = cell_brackets(table)
    labelled = _labelled(table)
    out = brackets.assign(cell=brackets[CELL_COLUMNS].astype(str).agg("|".join, axis=1))
    if slope.identified:
        logistic = cell_estimates(labelled[["cell", "log_n", "success"]], slope.slope)
        logistic = logistic.rename(columns={"n_req": "n_req_logistic", "probes": "probes_read"})
        out = out.merge(logistic, on="cell", how="left")
    else:  # no noise measured yet: the model's limit as s grows, n_req anywhere in the bracket, the bracket its interval
        out["n_req_logistic"] = out["n_req_bracket"]
        for level in ("90", "95"):
            out[f"low_{level}"], out[f"high_{level}"] = out["low"], out["high"]
        out["log_sd"] = np.log(out["high"] / out["low"]) / 2 / 1.96
        out["probes_read"] = np.nan
    out["slope_identified"] = slope.identified
    largest = out["eligible"].map(rules.largest_n).astype(float)
    estimate = out["n_req_logistic"].fillna(out["n_req_bracket"])
    out["pool_share"] = estimate / largest
    out["pool_limited"] = out["pool_share"] > POOL_LIMIT_SHARE
    ratio = out["high"] / out["low"]
    gap = np.exp(np.abs(np.log(out["n_req_logistic"] / out["n_req_bracket"])))
    out["apart"] = gap > ratio
    return out.drop(columns="cell")


def fit_input(cells: pd.DataFrame, estimator: str, drop_pool_limited: bool = False) -> pd.DataFrame:
    """The (N, seed, n_req[, log_sd]) rows an exponent fit reads from a cell table: ``estimator`` "bracket" or
    "logistic" (which carries each cell's log_sd), without the pool-limited cells if asked."""
    use = cells[~cells["pool_limited"]] if drop_pool_limited else cells
    if estimator == "bracket":
        return use[["N", "seed"]].assign(n_req=use["n_req_bracket"]).dropna(subset=["n_req"])
    if estimator == "logistic":
        return use[["N", "seed"]].assign(n_req=use["n_req_logistic"], log_sd=use["log_sd"]).dropna(subset=["n_req"])
    raise ValueError(f"unknown estimator {estimator!r}: bracket or logistic")
