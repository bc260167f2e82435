"""Is a give-up rule patient enough? How long its probes take, past the fit, to reach the threshold.

A floor of F steps still censors: a probe that would have generalised at F + 500 steps past its fit counts as
a failure. A life table of the probes under one rule shows how fast that risk is falling when the floor ends:
per window of steps past the fit, the probes still training and short of the threshold (at risk) and the share
of them that reach it within the window (the hazard). Failures leave the risk set when they give up, so a probe
given up early (the authors' rule) is not counted as a failure of the later windows. The learning curves kept
beside the probe table tell the failures apart: one still climbing when it gave up was stopped by patience, a
flat one by its data."""
from __future__ import annotations

import numpy as np
import pandas as pd

from covlib.search.probes import PROBE_KEY, cell_rows
from covlib.search.recheck import row_cells


def steps_past_fit(probes: pd.DataFrame, give_up_floor: int) -> pd.DataFrame:
    """The probes run under ``give_up_floor`` (0: the authors' rule) that fitted their training set, with
    ``past``: steps from the fit to the probe's end (its success, or its give-up)."""
    rule = probes[probes["give_up_floor"].astype(int) == int(give_up_floor)]
    if not len(rule):
        raise ValueError(f"no probe in the table ran under give_up_floor={give_up_floor}: pass a floor the table "
                         f"holds ({', '.join(str(f) for f in sorted(probes['give_up_floor'].astype(int).unique()))})")
    fitted = rule.dropna(subset=["first_fit_step"])
    return fitted.assign(past=(fitted["steps"] - fitted["first_fit_step"]).clip(lower=0),
                         success=fitted["success"].astype(bool))


def success_life_table(probes: pd.DataFrame, give_up_floor: int, window: int = 250) -> pd.DataFrame:
    """Per window of ``window`` steps past the fit, up to the floor (or to the last probe's end under the
    authors' rule): ``at_risk`` (probes that had neither succeeded nor given up when it began), ``successes``
    within it and ``hazard`` = successes / at_risk."""
    if window <= 0:
        raise ValueError(f"window must be a positive number of steps, got {window}")
    runs = steps_past_fit(probes, give_up_floor)
    end = give_up_floor if give_up_floor > 0 else int(runs["past"].max())
    starts = np.arange(0, max(end, window), window)
    past, won = runs["past"].to_numpy(), runs["success"].to_numpy()
    # a probe ending exactly at a window's start belongs to the window before it (steps are counted in blocks)
    at_risk = (past[None, :] > starts[:, None]).sum(axis=1)
    inside = (past[None, :] > starts[:, None]) & (past[None, :] <= starts[:, None] + window)
    successes = (inside & won[None, :]).sum(axis=1)
    hazard = np.divide(successes, at_risk, out=np.full(len(starts), np.nan), where=at_risk > 0)
    return pd.DataFrame({"start": starts, "end": starts + window, "at_risk": at_risk, "successes": successes,
                         "hazard": hazard})


def trained_past(probes: pd.DataFrame, steps: int, give_up_floor: int = 0) -> pd.DataFrame:
    """The probes under ``give_up_floor`` (0: the authors' rule, whose 100 epochs run past a floor where the
    training set is large) that trained more than ``steps`` past their fit: what happened after that many steps."""
    runs = steps_past_fit(probes, give_up_floor)
    return runs[runs["past"] > steps]


def near_threshold(rows: pd.DataFrame, margin: float = 0.01) -> pd.Series:
    """Which probe rows' best ID accuracy came within ``margin`` of their threshold (float rounding aside)."""
    return rows["best_type0"] >= rows["threshold"] - margin - 1e-12


def near_misses(probes: pd.DataFrame, give_up_floor: int, margin: float = 0.01) -> pd.DataFrame:
    """The failures under ``give_up_floor`` whose best ID accuracy came within ``margin`` of their threshold."""
    runs = steps_past_fit(probes, give_up_floor)
    failed = runs[~runs["success"]]
    return failed[near_threshold(failed, margin)]


def lower_end_accuracy(summary: pd.DataFrame, probes: pd.DataFrame, curves: pd.DataFrame, give_up_floor: int,
                       window: int = 500) -> pd.DataFrame:
    """The bracketed cells of a search summary (under the rule with ``give_up_floor``) with what their failing
    lower end reached: its best ID accuracy (``low_best``), its threshold, and how much that best rose in its
    last ``window`` steps (``low_gain``, from climb; NaN where the table kept no curve): how close each bracket
    came to being lower, and whether patience stopped it."""
    done = summary[summary["status"] == "bracketed"] if len(summary) else summary
    lows = [_failures_at(cell_rows(probes, cell, give_up_floor), low).assign(cell_index=index)
            for index, cell, low in zip(done.index, row_cells(done), done["low"] if len(done) else [])]
    if not lows:
        return done.assign(low_best=pd.Series(dtype=float), threshold=pd.Series(dtype=float),
                           low_gain=pd.Series(dtype=float))
    rows = pd.concat(lows)  # cell_rows keeps the floor's own rows and the authors' that count under it
    reached = rows.groupby("cell_index").agg(low_best=("best_type0", "max"), threshold=("threshold", "max"))
    gain = climb(rows, curves, window).groupby("cell_index")["gain"].max().rename("low_gain")
    return done.join(reached.astype(float)).join(gain.astype(float))


def _failures_at(rows: pd.DataFrame, n_train: float) -> pd.DataFrame:
    return rows[(rows["n_train"].astype(int) == int(n_train)) & ~rows["success"].astype(bool)]


def still_climbing(probes: pd.DataFrame, curves: pd.DataFrame, give_up_floor: int, window: int = 500) -> pd.DataFrame:
    """The failures run under ``give_up_floor`` that kept a learning curve, with ``gain``: how much their best ID
    accuracy rose in their last ``window`` steps (climb)."""
    failed = steps_past_fit(probes, give_up_floor)
    return climb(failed[~failed["success"]], curves, window)


def climb(rows: pd.DataFrame, curves: pd.DataFrame, window: int = 500) -> pd.DataFrame:
    """``rows`` (probe rows of any rule) that kept a learning curve, with ``gain``: their best ID accuracy within
    their last ``window`` steps minus their best before them. A failure still rising when it gave up was stopped
    by patience; a flat one had learnt what its data allowed."""
    key = [k for k in PROBE_KEY if k in rows and k in curves]
    points = curves.merge(rows[key], on=key)
    if not len(points):
        return rows.iloc[:0].assign(gain=pd.Series(dtype=float))
    end = points.groupby(key)["step"].transform("max")
    late = points["step"] > end - window

    def best(part: pd.DataFrame) -> pd.Series:
        return part.groupby(key)["acc/type_0"].max()
    gain = (best(points[late]) - best(points[~late])).rename("gain").reset_index()
    return rows.merge(gain.dropna(subset=["gain"]), on=key)
