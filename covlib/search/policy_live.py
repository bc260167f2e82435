"""Two search policies run live on the same cells: each policy's probes in a table of its own (never one bracket for
both), every cell estimated by the same estimator (the logistic model under the slope the replicates measure,
covlib.search.estimates.cell_table), beside what each policy spent on it."""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from covlib.analyses.success_curve import SlopeFit
from covlib.base.errors import CovlibError
from covlib.search.estimates import cell_table
from covlib.search.same_runs import CELL_COLUMNS

LIVE_COLUMNS = ["n_req", "low_90", "high_90", "probes", "minutes"]


def policy_cells(table: pd.DataFrame, slope: SlopeFit, give_up_floor: int) -> pd.DataFrame:
    """One policy's cells under one give-up rule: the logistic n_req with its 90% interval, the probes it ran and
    their recorded CPU-minutes (replicates are not the policy's, and are left out)."""
    ruled = table[(table["give_up_floor"] == give_up_floor) & (table["replicate"] == "search")]
    if ruled.empty:
        return pd.DataFrame(columns=[*CELL_COLUMNS, *LIVE_COLUMNS])
    cells = cell_table(ruled, slope).rename(columns={"n_req_logistic": "n_req"})
    spent = ruled.groupby(CELL_COLUMNS, as_index=False).agg(probes=("n_train", "size"), minutes=("minutes", "sum"))
    return cells.merge(spent, on=CELL_COLUMNS)[[*CELL_COLUMNS, *LIVE_COLUMNS]]


def live_comparison(tables: Mapping[str, pd.DataFrame], slope: SlopeFit, give_up_floor: int) -> pd.DataFrame:
    """The cells both policies have placed (each holds a success and a failure): per policy its n_req, 90% interval,
    probes and minutes (columns suffixed by the policy's name), then ``overlap`` (the two intervals share a size),
    ``estimate_ratio`` (second policy's n_req over the first's) and ``minutes_ratio`` (first's minutes over the
    second's: above 1 where the second spent less)."""
    if len(tables) != 2:
        raise CovlibError(f"a live comparison reads two policies' tables, got {len(tables)}: {', '.join(tables)}")
    if not slope.bounded:
        raise CovlibError("the slope has no finite lower bound yet (no replicate has changed its outcome): the "
                          "logistic estimate has no interval to compare; run replicates first")
    (first, a), (second, b) = tables.items()
    merged = policy_cells(a, slope, give_up_floor).merge(policy_cells(b, slope, give_up_floor), on=CELL_COLUMNS,
                                                         suffixes=(f"_{first}", f"_{second}"))
    merged = merged.dropna(subset=[f"n_req_{first}", f"n_req_{second}"]).reset_index(drop=True)
    merged["overlap"] = np.maximum(merged[f"low_90_{first}"], merged[f"low_90_{second}"]) <= np.minimum(
        merged[f"high_90_{first}"], merged[f"high_90_{second}"])
    merged["estimate_ratio"] = merged[f"n_req_{second}"] / merged[f"n_req_{first}"]
    merged["minutes_ratio"] = merged[f"minutes_{first}"] / merged[f"minutes_{second}"]
    return merged


def live_sentence(comparison: pd.DataFrame, first: str, second: str) -> str:
    """What the live comparison shows, in one sentence (or that it has no cell yet)."""
    if comparison.empty:
        return f"No cell has been placed by both {first} and {second} yet."
    spent = comparison[f"minutes_{first}"].sum() / comparison[f"minutes_{second}"].sum()
    return (f"{len(comparison)} cells run by both: the 90% intervals overlap in {int(comparison['overlap'].sum())}; "
            f"{second}'s n_req is {comparison['estimate_ratio'].min():.2f}-{comparison['estimate_ratio'].max():.2f}x "
            f"{first}'s; {first} spent {comparison[f'minutes_{first}'].sum():.0f} recorded CPU-minutes and "
            f"{comparison[f'probes_{first}'].sum()} probes, {second} {comparison[f'minutes_{second}'].sum():.0f} "
            f"and {comparison[f'probes_{second}'].sum()} ({spent:.2f}x)")
