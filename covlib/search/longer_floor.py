"""A longer floor's control: the cells one step floor finished, rechecked under a floor twice as long.

Chapter 4 reads from the kept learning curves that most lower ends were still climbing when the 2,000-step floor
gave up, spread over small and large N alike, and infers that more patience would lower n_req across the range
more than tilt the fit. Rerunning those lower ends under a longer floor tests that on one series: per cell, the
ratio of the two n_req, and the slope of log(ratio) on log N, which is the change in the exponent, with the
interval covlib.analyses.fits gives any exponent (the cells are paired, so it is the sharper comparison than two
separate fits' intervals)."""
from __future__ import annotations

import pandas as pd

from covlib.analyses.fits import exponent_fit
from covlib.search.cells import FINISHED
from covlib.search.recheck import BOOK_FLOOR, floor_recheck
from covlib.search.summary import geometric_mean

# the longer floor of the control: twice the book's, so that every lower end gets twice the patience past its fit
LONGER_FLOOR = 2 * BOOK_FLOOR


def longer_floor_cells(probes: pd.DataFrame, task: str = "twohop", model: str = "L4-d128", cot: bool = False,
                       base_floor: int = BOOK_FLOOR, longer_floor: int = LONGER_FLOOR) -> pd.DataFrame:
    """One row per cell of the series that ``base_floor`` finished: where it stands under both floors (floor_recheck
    from ``base_floor``: n_req and status under the base floor, floor_n_req and floor_status under the longer
    one), whether the longer floor reopens its lower end, has rerun it and flipped it, and ``ratio`` (n_req under
    the longer floor over n_req under the base one) where both bracketed it."""
    recheck = floor_recheck(probes, longer_floor, from_floor=base_floor)  # its columns even for an empty table
    series = recheck[(recheck["task"] == task) & (recheck["model"] == model) & (recheck["cot"] == cot)]
    series = series.sort_values(["N", "seed"], ignore_index=True)
    both = series["n_req"].notna() & series["floor_n_req"].notna()
    return series.assign(ratio=(series["floor_n_req"] / series["n_req"]).where(both))


def longer_floor_test(cells: pd.DataFrame, reps: int = 2000) -> dict:
    """What the longer floor did to a series (rows of longer_floor_cells): lower ends reopened, rerun and flipped;
    cells still searching under it (``pending``); and, once none is, the exponent under each floor, the typical
    n_req ratio (geometric mean, with its range and the number of paired cells) and the tilt: the exponent of the
    ratio itself, with its interval (None below two values of N)."""
    pending = int((~cells["floor_status"].isin(FINISHED)).sum())
    counts = {"cells": len(cells), "reopened": int(cells["reopened"].sum()), "reruns": int(cells["rerun"].sum()),
              "flips": int(cells["flipped"].sum()), "pending": pending}
    paired = cells.dropna(subset=["ratio"])
    if pending or not len(paired):
        return counts | {"base_fit": None, "longer_fit": None, "tilt": None, "ratio": float("nan"), "pairs": 0,
                         "ratio_min": float("nan"), "ratio_max": float("nan")}

    def fit(column: str) -> dict | None:
        return exponent_fit(paired[["N", "seed"]].assign(n_req=paired[column].astype(float)), reps=reps)

    return counts | {"base_fit": fit("n_req"), "longer_fit": fit("floor_n_req"), "tilt": fit("ratio"),
                     "ratio": geometric_mean(paired["ratio"]), "pairs": int(len(paired)),
                     "ratio_min": float(paired["ratio"].min()), "ratio_max": float(paired["ratio"].max())}
