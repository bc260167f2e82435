"""Both give-up rules read off the same training runs.

The authors' rule and the step floor differ only in when a run gives up: a run trained under the floor is the
same run as under the authors' rule up to the authors' give-up point, so its kept learning curve decides both
outcomes. Comparing the rules on their own runs instead mixes the rule with run-to-run noise (a rerun under the
floor fits its training set at another step, its gradients equal to the first run's only to float rounding). Here
every size of a cell is decided by one run: its floor run where it has one (the curve gives the authors' outcome),
else its authors'-rule run where the floor could not have changed that outcome (a success, a run the step cap
ended, a give-up already past the floor)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from covlib.search.cells import ProbeRules
from covlib.search.probes import PROBE_KEY

CELL_COLUMNS = ["task", "N", "model", "seed", "cot"]
RUN_KEY = [*CELL_COLUMNS, "n_train", "replicate", "replicate_seed"]


def authors_outcome(curve: pd.DataFrame, n_train: int, threshold: float = 0.99, fit_threshold: float = 0.99,
                    give_up_epochs: float = 100.0, batch_size: int = ProbeRules.batch_size) -> bool | None:
    """What the authors' rule would have decided on this learning curve (step, acc/train_inferred, acc/type_0):
    True at the first evaluation reaching ``threshold`` before it gives up, False once it has given up (fitted
    ``give_up_epochs`` epochs ago without success), None if the curve ends before either (the run stopped first:
    the caller decides, as the step cap did)."""
    curve = curve.sort_values("step")
    fitted_at = None
    for step, train, type0 in curve[["step", "acc/train_inferred", "acc/type_0"]].itertuples(index=False):
        if type0 >= threshold:
            return True
        if fitted_at is None and train >= fit_threshold:
            fitted_at = step
        if fitted_at is not None and (step - fitted_at) * batch_size >= give_up_epochs * n_train:
            return False
    return None


def same_run_outcomes(probes: pd.DataFrame, curves: pd.DataFrame, give_up_floor: int) -> pd.DataFrame:
    """One row per run that decides a size of a cell under both rules (RUN_KEY; replicates included): its
    outcome under the authors' rule (``success_authors``) and under the floor (``success_floor``), and where
    they came from (``source``: "floor run" or "authors' run"). A size whose floor outcome no run settles (an
    authors' give-up short of the floor, never rerun) keeps its authors' outcome and an empty floor outcome."""
    probes = probes.copy()
    for column, default in (("replicate", "search"), ("replicate_seed", 0)):
        if column not in probes:
            probes[column] = default
    curve_of = {key: g for key, g in curves.groupby(PROBE_KEY)} if len(curves) else {}
    rows = []
    for key, runs in probes.groupby(RUN_KEY, sort=False):
        floor_runs = runs[runs["give_up_floor"] == give_up_floor]
        authors_runs = runs[runs["give_up_floor"] == 0]
        base = dict(zip(RUN_KEY, key)) | {"eligible": int(runs["eligible"].iloc[0])}
        if len(floor_runs):
            run = floor_runs.iloc[0]
            curve = curve_of.get(tuple(run[k] for k in PROBE_KEY))
            if curve is None:
                continue  # no curve kept: the authors' outcome of this run cannot be read
            said = authors_outcome(curve, int(run["n_train"]), float(run["threshold"]), 0.99,
                                   float(run["give_up_epochs"]))
            # the curve ended first: the run succeeded at its last evaluation (read above) or the cap stopped it,
            # and the cap ends the authors' run where it ends the floor's
            authors = bool(run["success"]) if said is None else said
            rows.append(base | {"success_authors": authors, "success_floor": bool(run["success"]),
                                "source": "floor run", "minutes": float(run["minutes"])})
        elif len(authors_runs):
            run = authors_runs.iloc[0]
            past_fit = float(run["steps"]) - float(run["first_fit_step"]) if pd.notna(run["first_fit_step"]) else 0.0
            settled = bool(run["success"]) or run["stopped"] != "gave_up" or past_fit >= give_up_floor
            rows.append(base | {"success_authors": bool(run["success"]),
                                "success_floor": bool(run["success"]) if settled else np.nan,
                                "source": "authors' run", "minutes": float(run["minutes"])})
    return pd.DataFrame(rows, columns=[*RUN_KEY, "eligible", "success_authors", "success_floor", "source", "minutes"])


def rule_table(outcomes: pd.DataFrame, rule: str) -> pd.DataFrame:
    """The same-run outcomes as a probe table of one rule (``rule``: "authors" or "floor"), whose every row counts
    under the authors' rule's bookkeeping (give_up_floor 0): a bracket search reads it unchanged."""
    column = f"success_{rule}"
    table = outcomes.dropna(subset=[column]).copy()
    table["success"] = table[column].astype(bool)
    table["give_up_floor"] = 0
    table["stopped"] = np.where(table["success"], "early_stop", "gave_up")
    return table


def cell_brackets(table: pd.DataFrame, replicates: bool = False) -> pd.DataFrame:
    """Per cell of a rule table (rule_table): its bracket from the search's own probes (replicates left out unless
    asked): ``high`` the smallest success, ``low`` the largest failure below it, ``n_req_bracket`` their geometric
    mean; a cell with no success, or none failing below its smallest success, has no bracket (NaN)."""
    rows = []
    use = table if replicates else table[table["replicate"] == "search"]
    for key, g in use.groupby(CELL_COLUMNS, sort=True):
        ok = g["success"].to_numpy(bool)
        n = g["n_train"].to_numpy(float)
        high = n[ok].min() if ok.any() else np.nan
        below = n[~ok & (n < high)] if ok.any() else np.array([])
        low = below.max() if len(below) else np.nan
        rows.append(dict(zip(CELL_COLUMNS, key)) | {"eligible": int(g["eligible"].iloc[0]), "low": low, "high": high,
                                                    "n_req_bracket": float(np.sqrt(low * high))})
    return pd.DataFrame(rows, columns=[*CELL_COLUMNS, "eligible", "low", "high", "n_req_bracket"])
