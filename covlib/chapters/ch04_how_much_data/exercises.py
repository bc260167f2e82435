"""Chapter 4's exercises: the quantities they ask for, and their checks (the solution cells show how to compute
them; a check says whether an answer is right, never what the right answer is)."""
from __future__ import annotations

import math
from typing import Any

import pandas as pd

from covlib.figures.exercises import check_number

RATIO_TOLERANCE = 0.05  # an answer within 5% of the ratio is right: the table shows its numbers rounded


def twohop_ratios(twohop: pd.DataFrame, fit: dict | None) -> tuple[float, float]:
    """Exercise 1's two numbers: the mean n_req (over seeds) at the largest N of the finished two-hop cells over
    that at the smallest, and the ratio the fitted exponent predicts, (largest N / smallest N) ** c. NaN for both
    with fewer than two finished values of N or no fit."""
    finished = twohop.dropna(subset=["n_req"]) if len(twohop) else twohop
    if not fit or not len(finished) or finished["N"].nunique() < 2:
        return math.nan, math.nan
    by_N = finished.groupby("N")["n_req"].mean().sort_index()
    return float(by_N.iloc[-1] / by_N.iloc[0]), float((by_N.index[-1] / by_N.index[0]) ** fit["c"])


MISSING = "the cache holds fewer than two finished values of N for two-hop, or no fitted exponent"


def check_measured_ratio(answer: Any, twohop: pd.DataFrame, fit: dict | None,
                         name: str = "my_ratio_measured") -> str:
    """Exercise 1, first number: n_req at the largest N over n_req at the smallest (means over seeds)."""
    return check_number(answer, twohop_ratios(twohop, fit)[0], "the measured ratio",
                        "divide the mean n_req at the largest N of the finished two-hop cells by that at the smallest",
                        name, rel_tol=RATIO_TOLERANCE, fmt=".2f", missing=MISSING,
                        hint="average n_req over the seeds of each N first, then divide the largest N's by the "
                             "smallest N's.")


def check_predicted_ratio(answer: Any, twohop: pd.DataFrame, fit: dict | None,
                          name: str = "my_ratio_predicted") -> str:
    """Exercise 1, second number: the ratio the fitted exponent c predicts, (largest N / smallest N) ** c."""
    return check_number(answer, twohop_ratios(twohop, fit)[1], "the ratio the fitted exponent predicts",
                        "raise the ratio of the largest to the smallest N of those cells to the fitted exponent c",
                        name, rel_tol=RATIO_TOLERANCE, fmt=".2f", missing=MISSING,
                        hint="use the N values of the finished cells, not the N values the search plans, and the "
                             "exponent c of the fit printed in 4.2.")
