"""Chapter 4's exercises: the quantities they ask for, and their checks (the solution cells show how to compute
them; a check says whether an answer is right, never what the right answer is)."""
from __future__ import annotations

import math
from typing import Any

import pandas as pd

from covlib.analyses.fits import summary_exponent
from covlib.chapters.ch04_how_much_data.searches import experiment_summaries
from covlib.figures.exercises import check_number
from covlib.search.experiments import BOOK_EXPERIMENTS, authors_rule_cells, probe_table
from covlib.search.probes import read_probes

RATIO_TOLERANCE = 0.05  # an answer within 5% of the ratio is right: the table shows its numbers rounded


def finished_N(summary: pd.DataFrame) -> int:
    """How many values of N a search summary has finished (a cell with an estimate of n_req)."""
    return int(summary.dropna(subset=["n_req"])["N"].nunique()) if len(summary) and "n_req" in summary else 0


def law_cells(twohop: pd.DataFrame, fit: dict | None, reps: int) -> tuple[pd.DataFrame, dict | None, str]:
    """Exercise 1's material: the two-hop search summary and its fit, and whose they are. The chapter's own when
    its search finished two values of N or more; else (a miniature search, at the smoke preset) the book's search
    in the shipped probe table (data/scaling/probes.csv, the default preset's cells), so that the exercise has a
    law to read at every preset."""
    if finished_N(twohop) >= 2 and fit:
        return twohop, fit, "this chapter's search"
    shipped = experiment_summaries({"twohop": authors_rule_cells(BOOK_EXPERIMENTS["twohop"])},
                                   read_probes(probe_table("")))["twohop"]
    return shipped, summary_exponent(shipped, reps), "the book's shipped search (this chapter's finished fewer than two N)"


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
