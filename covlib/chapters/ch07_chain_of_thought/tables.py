"""Chapter 7's tables as a reader reads them: titled columns, formats, and the column lists of its search tables."""
from __future__ import annotations

import pandas as pd

from covlib.chapters.ch07_chain_of_thought.greedy import split_label
from covlib.chapters.ch07_chain_of_thought.shipped import model_names
from covlib.figures.required_data import COUNT
from covlib.figures.tables import ReaderTable, reader_table

NONTREE_SEARCH_COLUMNS = ["task", "cot", "N", "seed", "status", "low", "high", "n_req", "eligible", "probes"]
PLACEHOLDER_SEARCH_COLUMNS = ["N", "seed", "status", "low", "high", "n_req", "probes"]


def exponent_reader_table(exponents: pd.DataFrame) -> ReaderTable:
    """``exponent_table``: each fitted exponent with its interval (empty below 4 values of N) and what it rests on."""
    return reader_table(exponents, {"task": "task", "target": "target", "c": "exponent c", "c_low": "c, 95% low",
                                    "c_high": "c, 95% high", "interval": "interval from", "N range": "N range",
                                    "N values": "values of N", "seeds": "seeds", "paper": "paper's c"},
                        dict.fromkeys(["c", "c_low", "c_high", "paper"], ".2f"),
                        caption="n_req grows as N^c, with a 95% interval where there are 4 values of N or more")


def ratio_reader_table(ratios: pd.DataFrame) -> ReaderTable:
    """``ratio_tables``' ratios: each (N, seed) with both estimates and their ratio (and the give-up rule, for
    ``ratio_tables_by_rule``' rows)."""
    rule = {"rule": "give-up rule"} if "rule" in ratios else {}
    return reader_table(ratios, {"task": "task", **rule, "N": "N (tokens)", "seed": "seed",
                                 "n_req_plain": "n_req without CoT (examples)", "n_req_cot": "n_req with CoT (examples)",
                                 "ratio": "without / with CoT"},
                        {"seed": "{}", "n_req_plain": COUNT, "n_req_cot": COUNT, "ratio": "{:.1f}x"})


def bounds_reader_table(bounds: pd.DataFrame) -> ReaderTable:
    """``ratio_tables``' lower bounds: cells where the search without CoT never succeeds."""
    return reader_table(bounds, {"task": "task", "N": "N (tokens)", "seed": "seed",
                                 "plain_fails_at": "no success without CoT even at (examples)",
                                 "n_req_cot": "n_req with CoT (examples)", "ratio_at_least": "ratio at least"},
                        {"seed": "{}", "plain_fails_at": COUNT, "n_req_cot": COUNT, "ratio_at_least": "{:.1f}x"})


def decoding_reader_table(decoding: pd.DataFrame) -> ReaderTable:
    """``decoding_table``: per model and kind of test item, teacher-forced answer accuracy beside what greedy
    decoding gets right (the split into four outcomes is in the chart and in the frame's outcome columns)."""
    shown = decoding.assign(model=model_names(decoding["model"]),
                            split=decoding["split"].map(split_label))
    rates = ["tf_answer", "greedy_bridges", "greedy_answer", "greedy_exact"]
    return reader_table(shown, {"model": "model", "split": "test items", "n": "items",
                                "tf_answer": "answer right, teacher-forced", "greedy_bridges": "bridge right, greedy",
                                "greedy_answer": "answer right, greedy", "greedy_exact": "exact match, greedy"},
                        dict.fromkeys(rates, ".1%"))


def control_reader_table(control: pd.DataFrame) -> ReaderTable:
    """``control_table``: the four models side by side."""
    shown = control.assign(model=model_names(control["model"]))
    accuracies = ["ID answer accuracy (teacher-forced)", "ID exact match"]
    return reader_table(shown, {"model": "model", "target": "target tokens",
                                "ID answer accuracy (teacher-forced)": "ID answer accuracy (teacher-forced)",
                                "ID exact match": "ID exact match", "steps to 99%": "reaches 99% ID exact match at"},
                        dict.fromkeys(accuracies, ".1%"))


def peaks_reader_table(peaks: pd.DataFrame, caption: str) -> ReaderTable:
    """An ``iicg_peak_table`` (indexed by model and grouping key): where each model's items group most."""
    shown = peaks.reset_index()
    shown = shown.assign(model=model_names(shown["model"]))
    return reader_table(shown, {"model": "model", "group_by": "grouped by", "iicg": "largest IICG", "layer": "layer",
                                "position": "position"}, {"iicg": ".3f", "layer": "{}"}, caption=caption)
