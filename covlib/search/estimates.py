"""Every cell's n_req under one give-up rule, by two estimators read off the same runs: the bracket's geometric
mean (the search's own) and the logistic model of success against log n_train (covlib.analyses.success_curve),
which reads every probe, replicates included, and carries an interval."""
from __future__ import annotations

import numpy as np
import pandas as pd

from covlib.analyses.success_curve import SlopeByGroup, SlopeFit, cell_estimates, replicate_slope, slope_by_group
from covlib.search.cells import SearchRules
from covlib.search.same_runs import CELL_COLUMNS, cell_brackets

# a cell whose n_req lies above this share of the largest training set the search may try (the ID pool less the
# test items kept out) is bounded by the pool, not by the model: flagged, and every fit is also shown without it
POOL_LIMIT_SHARE = 0.9


def _labelled(table: pd.DataFrame) -> pd.DataFrame:
    """The rule table's rows with one ``cell`` label per (task, N, model, seed, cot) and log n_train."""
    cell = table[CELL_COLUMNS].astype(str).agg("|".join, axis=1)
    return table.assign(cell=cell, log_n=np.log(table["n_train"].astype(float)))


def replicate_ends(table: pd.DataFrame) -> pd.DataFrame:
    """The replicates of bracket ends in a rule table: each one's series (task, ``_cot`` with chain of thought),
    cell, bracket width ``gap`` (log high / low) and whether its outcome differs from the search's at that size
    (``changed``). Replicates at a size that is not an end of its cell's bracket are not read."""
    brackets = cell_brackets(table).dropna(subset=["n_req_bracket"]).set_index(CELL_COLUMNS)
    reps = table[table["replicate"] != "search"]
    search = table[table["replicate"] == "search"].drop_duplicates([*CELL_COLUMNS, "n_train"])
    said = search.set_index([*CELL_COLUMNS, "n_train"])["success"]
    rows = []
    for r in reps.itertuples(index=False):
        cell = tuple(getattr(r, c) for c in CELL_COLUMNS)
        if cell not in brackets.index or r.n_train not in (brackets.loc[cell, "low"], brackets.loc[cell, "high"]):
            continue
        rows.append({"series": f"{r.task}_cot" if r.cot else r.task, "cell": cell,
                     "gap": float(np.log(brackets.loc[cell, "high"] / brackets.loc[cell, "low"])),
                     "changed": bool(r.success) != bool(said.loc[(*cell, r.n_train)])})
    return pd.DataFrame(rows, columns=["series", "cell", "gap", "changed"])


def shared_slope(table: pd.DataFrame) -> SlopeFit:
    """The slope of success against log n_train shared by every cell of a rule table, measured by its replicates
    of bracket ends (success_curve.replicate_slope)."""
    ends = replicate_ends(table)
    return replicate_slope(ends["gap"].to_numpy(float), ends["changed"].to_numpy(bool), ends["cell"].nunique())


def slope_by_series(table: pd.DataFrame, sims: int = 1000) -> SlopeByGroup:
    """Whether the replicates of bracket ends in a rule table support one slope for every series
    (success_curve.slope_by_group)."""
    ends = replicate_ends(table)
    return slope_by_group(ends["gap"].to_numpy(float), ends["changed"].to_numpy(bool), ends["series"].to_numpy(),
                          sims=sims)


def cell_table(table: pd.DataFrame, slope: SlopeFit, rules: SearchRules = SearchRules()) -> pd.DataFrame:
    """Per cell of a rule table: its bracket (search probes only), the logistic estimate with 90% and 95%
    intervals and log_sd (every probe, under the slope the replicates measure; before any replicate the estimate
    is the limit of exact outcomes: anywhere in the bracket, which is then its interval; ``slope_identified``
    says whether the slope has a finite estimate), the share of the pool its n_req
    reaches (``pool_share``, of SearchRules.largest_n) and ``pool_limited``, and ``apart``: the two estimates
    differ by more than the bracket's own ratio (say why, where it happens)."""
    brackets = cell_brackets(table)
    labelled = _labelled(table)
    out = brackets.assign(cell=brackets[CELL_COLUMNS].astype(str).agg("|".join, axis=1))
    if slope.bounded:  # the point under the slope's estimate, the intervals under the shallow end of its interval
        logistic = cell_estimates(labelled[["cell", "log_n", "success"]], slope.slope, slope.low)
        logistic = logistic.rename(columns={"n_req": "n_req_logistic", "probes": "probes_read"})
        out = out.merge(logistic, on="cell", how="left")
    else:  # no replicate yet: the model's limit as s grows, n_req anywhere in the bracket, the bracket its interval
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
