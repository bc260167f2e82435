"""Two search policies run live on the same cells: each policy's probes in a table of its own (never one bracket for
both), every cell estimated by the same estimator (the logistic model under the slope the replicates measure,
covlib.search.estimates.cell_table), beside what each policy spent on it."""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from covlib.analyses.success_curve import SlopeFit
from covlib.base.errors import CovlibError
from covlib.search.cells import SearchRules
from covlib.search.estimates import cell_table
from covlib.search.psi import psi_stopped
from covlib.search.same_runs import CELL_COLUMNS

LIVE_COLUMNS = ["n_req", "low_90", "high_90", "probes", "steps", "minutes", "finished"]


def policy_cells(table: pd.DataFrame, slope: SlopeFit, give_up_floor: int, psi_slope: float) -> pd.DataFrame:
    """One policy's cells under one give-up rule: the logistic n_req with its 90% interval, the probes it ran, their
    training steps and their recorded minutes (wall time of each run: they count whatever else loaded the machine
    then, where steps do not), and whether its search has stopped (``finished``, by its own policy's rule, psi's under
    ``psi_slope``); replicates are not the policy's, and are left out."""
    ruled = table[(table["give_up_floor"] == give_up_floor) & (table["replicate"] == "search")]
    if ruled.empty:
        return pd.DataFrame(columns=[*CELL_COLUMNS, *LIVE_COLUMNS])
    cells = cell_table(ruled, slope).rename(columns={"n_req_logistic": "n_req"})
    spent = ruled.groupby(CELL_COLUMNS, as_index=False).agg(probes=("n_train", "size"), steps=("steps", "sum"),
                                                          minutes=("minutes", "sum"))
    ratio = SearchRules().bracket_ratio
    psi = [dict(zip(CELL_COLUMNS, key)) | {"psi_stopped": psi_stopped(rows, psi_slope, ratio)}
           for key, rows in ruled.groupby(CELL_COLUMNS)]
    out = cells.merge(spent.merge(pd.DataFrame(psi), on=CELL_COLUMNS), on=CELL_COLUMNS)
    out["finished"] = (out["high"] / out["low"] <= ratio).fillna(False) | out["psi_stopped"]
    return out[[*CELL_COLUMNS, *LIVE_COLUMNS]]


def live_comparison(tables: Mapping[str, pd.DataFrame], slope: SlopeFit, give_up_floor: int,
                    psi_slope: float) -> pd.DataFrame:
    """The cells both policies have placed (each holds a success and a failure): per policy its n_req, 90% interval,
    probes, steps, minutes and whether it has finished (columns suffixed by the policy's name; ``psi_slope``: the slope
    the psi policy assumed, which decides when it stops), then ``overlap`` (the two intervals share a
    size), ``estimate_ratio`` (second policy's n_req over the first's), and ``steps_ratio`` and ``minutes_ratio``
    (first's over the second's: above 1 where the second spent less)."""
    if len(tables) != 2:
        raise CovlibError(f"a live comparison reads two policies' tables, got {len(tables)}: {', '.join(tables)}")
    if not slope.bounded:
        raise CovlibError("the slope has no finite lower bound yet (no replicate has changed its outcome): the "
                          "logistic estimate has no interval to compare; run replicates first")
    (first, a), (second, b) = tables.items()
    merged = policy_cells(a, slope, give_up_floor, psi_slope).merge(
        policy_cells(b, slope, give_up_floor, psi_slope), on=CELL_COLUMNS, suffixes=(f"_{first}", f"_{second}"))
    merged = merged.dropna(subset=[f"n_req_{first}", f"n_req_{second}"]).reset_index(drop=True)
    merged["overlap"] = np.maximum(merged[f"low_90_{first}"], merged[f"low_90_{second}"]) <= np.minimum(
        merged[f"high_90_{first}"], merged[f"high_90_{second}"])
    merged["estimate_ratio"] = merged[f"n_req_{second}"] / merged[f"n_req_{first}"]
    merged["steps_ratio"] = merged[f"steps_{first}"] / merged[f"steps_{second}"]
    merged["minutes_ratio"] = merged[f"minutes_{first}"] / merged[f"minutes_{second}"]
    return merged


def live_sentence(comparison: pd.DataFrame, first: str, second: str) -> str:
    """What the live comparison shows over the cells both policies have finished, in one sentence (or that none
    is finished yet), and how many are still running."""
    done = comparison[comparison[f"finished_{first}"] & comparison[f"finished_{second}"]] if len(comparison) else \
        comparison
    running = len(comparison) - len(done)
    still = f" ({running} more placed by both, still running)" if running else ""
    if done.empty:
        return f"No cell has been finished by both {first} and {second} yet{still}."
    comparison = done
    total = {name: {kind: comparison[f"{kind}_{name}"].sum() for kind in ("probes", "steps", "minutes")}
             for name in (first, second)}
    cells = f"{len(comparison)} cell{'s' if len(comparison) != 1 else ''}"
    return (f"{cells} finished by both: the 90% intervals overlap in {int(comparison['overlap'].sum())}; "
            f"{second}'s n_req is {comparison['estimate_ratio'].min():.2f}-{comparison['estimate_ratio'].max():.2f}x "
            f"{first}'s. {first} ran {total[first]['probes']} probes, {total[first]['steps']:,} training steps and "
            f"{total[first]['minutes']:.0f} recorded minutes; {second} {total[second]['probes']}, "
            f"{total[second]['steps']:,} and {total[second]['minutes']:.0f} ({first} over {second}: "
            f"{total[first]['steps'] / total[second]['steps']:.2f}x the steps, "
            f"{total[first]['minutes'] / total[second]['minutes']:.2f}x the minutes){still}")
