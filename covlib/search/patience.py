"""Is a give-up rule patient enough? How long its probes take, past the fit, to reach the threshold.

A floor of F steps still censors: a probe that would have generalised at F + 500 steps past its fit counts as
a failure. A life table of the probes under one rule shows how fast that risk is falling when the floor ends:
per window of steps past the fit, the probes still training and short of the threshold (at risk) and the share
of them that reach it within the window (the hazard). Failures leave the risk set when they give up, so a probe
given up early (the authors' rule) is not counted as a failure of the later windows."""
from __future__ import annotations

import numpy as np
import pandas as pd


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


def near_misses(probes: pd.DataFrame, give_up_floor: int, margin: float = 0.01) -> pd.DataFrame:
    """The failures under ``give_up_floor`` whose best ID accuracy came within ``margin`` of their threshold."""
    runs = steps_past_fit(probes, give_up_floor)
    failed = runs[~runs["success"]]
    return failed[failed["best_type0"] >= failed["threshold"] - margin - 1e-12]
