"""Path ambiguity (covlib.chapters.ch06_path_ambiguity): coverage of nontree against twohop, class contents, coverage
need, summaries, and the chapter's readings of its tables."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import vl_convert as vlc
from figure_checks import svg_with_params

from covlib.analyses.iicg import iicg_at, iicg_peaks
from covlib.base.errors import CovlibError
from covlib.book.setup import setup_chapter
from covlib.chapters.ch06_path_ambiguity import charts, coverage, data_need, inside, searches, tables
from covlib.chapters.ch06_path_ambiguity.coverage import (
    POPULATIONS,
    id_pool_mask,
    merged_pairs,
    paired_datasets,
    population_coverage,
)
from covlib.chapters.ch06_path_ambiguity.data_need import write_coverage_need
from covlib.chapters.ch06_path_ambiguity.searches import PRESETS
from covlib.chapters.ch06_path_ambiguity.shipped import TASKS
from covlib.coverage.requirement import first_crossing
from covlib.figures.required_data import search_reader_table
from covlib.figures.tables import metrics_table
from covlib.search.cells import Cell
from covlib.search.probes import PROBE_COLUMNS
from covlib.search.status import describe_cells, search_summary


@pytest.fixture(scope="module")
def pair():
    return paired_datasets(12, 700, seed=0, test_size_per_type=100)


def test_nontree_is_covered_less_than_twohop_by_the_same_data(pair):
    table = pd.concat([population_coverage(ds, max_k=4).assign(task=t) for t, ds in pair.items()])
    pool = table[(table["population"] == "id_pool")].set_index(["task", "k"])["covered"]
    for k in (2, 3, 4):
        assert pool[("nontree", k)] < pool[("twohop", k)]
    # coverage only falls as k rises
    for task in TASKS:
        shares = table[(table["task"] == task) & (table["population"] == "type_0")]["covered"].to_numpy()
        assert (np.diff(shares) <= 1e-12).all()
    # the ID pool excludes training inputs and holds only ID-eligible ones
    mask = id_pool_mask(pair["twohop"])
    assert mask.sum() == pair["twohop"].eligible_count - 700


def test_nontree_classes_join_only_fragments_with_the_same_bridge_and_x2(pair):
    two = merged_pairs(pair["twohop"], k=3).set_index("shared")
    non = merged_pairs(pair["nontree"], k=3).set_index("shared")
    assert two.loc["b", "share"] == pytest.approx(1.0)  # k >= 3: classes are bridges
    assert two.loc["x2", "share"] < 0.5
    # non-tree classes follow (b, x2): far more of their merged pairs share x2 than two-hop's (a few
    # spurious merges remain at this small data size)
    assert non.loc["b and x2", "merged_pairs"] > 0
    assert non.loc["b and x2", "share"] > 0.9 > two.loc["b and x2", "share"]
    assert non.loc["b", "largest_class"] < two.loc["b", "largest_class"]


def test_first_crossing_interpolates_in_log_n_and_ignores_dips():
    n = np.array([100, 200, 400])
    assert first_crossing(n, np.array([0.5, 0.7, 0.9]), 0.8) == pytest.approx(np.exp((np.log(200) + np.log(400)) / 2))
    assert first_crossing(n, np.array([0.95, 0.5, 0.99]), 0.9) == 100  # made non-decreasing first
    assert np.isnan(first_crossing(n, np.array([0.1, 0.2, 0.3]), 0.9))


def test_coverage_need_resumes_per_task_and_N(tmp_path, capsys):
    out = tmp_path / "need.csv"
    first = write_coverage_need(out, [8], tasks=("twohop",), points=4, test_size_per_type=50)
    assert set(first["N"]) == {8} and set(first["population"]) == set(POPULATIONS)
    assert "twohop N=8 done" in capsys.readouterr().out
    again = write_coverage_need(out, [8], tasks=("twohop",), points=4, test_size_per_type=50)
    assert capsys.readouterr().out == ""  # nothing recomputed
    pd.testing.assert_frame_equal(again.reset_index(drop=True), pd.read_csv(out))


def _probes(rows: list[tuple[int, bool, float]]) -> pd.DataFrame:
    table = []
    for n, ok, best in rows:
        table.append({"task": "nontree", "N": 12, "model": "L4-d128", "params": 0, "seed": 0, "n_train": n,
                      "eligible": 1000, "success": ok, "stopped": "gave_up", "steps": 100, "best_type0": best,
                      "final_type0": best, "final_train": 1.0, "first_fit_step": 50, "minutes": 1.0, "threshold": 0.99,
                      "give_up_epochs": 100, "step_cap": 6000, "cot": False, "weight_decay": 0.1})
    return pd.DataFrame(table, columns=PROBE_COLUMNS)


CELLS = [Cell("nontree", 12, "L4-d128", 0), Cell("nontree", 14, "L4-d128", 0)]


def test_search_summary_reads_the_table_alone():
    probes = _probes([(500, False, 0.4), (750, False, 0.6)])
    summary = search_summary(CELLS, probes)
    assert summary["status"].tolist() == ["unreachable", "not started"]  # 750 is the pool less a quarter
    assert summary["largest_n"].iloc[0] == 750 and summary["best_type0_at_largest"].iloc[0] == pytest.approx(0.6)
    text = describe_cells(summary, "non-tree")
    assert "no success even at 750 examples" in text and "not searched yet" in text
    assert "step cap" not in text and not summary["low_capped"].iloc[0]
    capped = probes.assign(stopped=["gave_up", "steps"])  # the largest probe ran out of steps before the rule
    text = describe_cells(search_summary(CELLS, capped), "non-tree")
    assert "stopped at the step cap" in text


def test_the_verdict_and_the_chart_frames_name_the_unreachable_cell():
    summary = search_summary(CELLS, _probes([(500, False, 0.4), (750, False, 0.6)]))
    finished = searches.finished_cells(summary)
    assert finished["N"].tolist() == [12]  # the cell not started is not finished
    assert searches.search_verdict(finished) == "N = 12: never, up to 750 of 1,000"
    assert searches.search_verdict(finished.iloc[:0]) == "no finished search yet"
    points, lines, reference = searches.required_data_frames(summary.iloc[:0], summary, pd.DataFrame(), 3)
    assert points.empty and lines.empty  # nothing bracketed, no coverage need
    assert reference[["N", "n"]].values.tolist() == [[12, 750]]


def test_iicg_peaks_skip_cells_high_by_construction_and_refuse_empty_tables():
    table = pd.DataFrame({"task": "nontree", "split": "type_0", "group_by": "x2", "layer": [0, 1, 2],
                          "position": "x2", "iicg": [0.9, 0.3, 0.5], "by_construction": [True, False, False]})
    peak = iicg_peaks(table)
    assert peak["layer"].tolist() == [2] and iicg_at(table, 0, "x2", "x2") == pytest.approx(0.9)
    assert iicg_peaks(table.drop(columns="by_construction"))["layer"].tolist() == [0]  # nothing flagged: any layer
    with pytest.raises(CovlibError, match="no IICG rows"):
        iicg_peaks(table.iloc[:0])
    with pytest.raises(CovlibError, match="no IICG for b"):
        iicg_at(table, 1, "x2", "b")


def test_the_bridge_peak_is_read_against_x2_at_the_same_cell():
    rows = []
    for key, values in {"b,x2": [0.9, 0.2, 0.6, 0.4], "x2": [0.95, 0.1, 0.35, 0.5], "b": [0.1, 0.05, 0.02, 0.03]}.items():
        for layer, value in enumerate(values):
            rows.append({"task": "nontree", "split": "type_0", "group_by": key, "layer": layer, "position": "x2",
                         "iicg": value, "by_construction": layer == 0 and "x2" in key})  # x2's own embedding
    iicg = pd.DataFrame(rows)
    peaks = iicg_peaks(iicg)
    assert inside.peak_value(peaks, "nontree", "b,x2") == pytest.approx(0.6)  # the flagged layer 0 left out
    assert inside.x2_at_bridge_peak(iicg, peaks) == pytest.approx(0.35)  # x2 at layer 2, not its own peak
    assert inside.peak_of(peaks, "twohop", "b") is None
    maxima = inside.iicg_maxima(peaks)
    assert maxima[("nontree", "b")] == pytest.approx(0.1) and np.isnan(maxima[("twohop", "b")])  # b fixes no token
    assert inside.x2_at_bridge_peak(iicg, peaks[peaks["group_by"] != "b,x2"]) is None


def test_trace_cell_reads_the_upper_layers_only():
    rank = pd.DataFrame({"task": "nontree", "variant": "x2_keep_b", "position": "x2", "layer": [0, 1, 2, 3, 4],
                         "value": [1.0, 0.9, 0.8, 0.3, 0.2], "pairs": 50})
    # L = 4: the upper layers start at max(2, L - 1) = 3
    assert inside.trace_cell(rank, "nontree", "x2_keep_b", "x2") == pytest.approx(0.3)
    assert inside.trace_cell(rank, "nontree", "x2_keep_b", "x2", layers="all") == pytest.approx(0.9)
    assert np.isnan(inside.trace_cell(rank, "twohop", "x2", "x2"))


def test_the_tracing_text_says_no_prediction_flips_instead_of_listing_zeros():
    def cells(task, variant, upper):
        return pd.DataFrame({"task": task, "variant": variant, "position": "x2", "layer": [0, 1, 2, 3, 4],
                             "value": [1.0, 0.9, 0.5, upper, upper], "pairs": 275})
    zeros = pd.concat([cells("nontree", v, 0.0) for v in ("x2_keep_b", "x2_change_b", "x1")] + [cells("twohop", "x2", 0.0)])
    text = inside.tracing_text(zeros, 4)
    assert "flips no prediction, nor when $b$ changes too or $x_1$ changes" in text and "0%" not in text
    assert "two-hop's $x_2$ position does not matter there either" in text
    some = pd.concat([cells("nontree", "x2_keep_b", 0.62), cells("nontree", "x2_change_b", 0.0),
                      cells("nontree", "x1", 0.0), cells("twohop", "x2", 0.04)])
    text = inside.tracing_text(some, 4)
    assert "still flips up to 62% of predictions, against 0% when $b$ changes too" in text
    assert "for at most 4% of its pairs" in text and "route of its own" in text


def test_coverage_lookups_and_the_type0_share():
    cov = pd.DataFrame({"task": ["twohop", "twohop", "nontree", "nontree"], "population": ["type_0", "id_pool"] * 2,
                        "k": 3, "covered": [0.9, 0.8, 0.5, 0.1], "n": [100, 400, 30, 600],
                        "type0_population": [300, 300, 150, 150]})
    assert coverage.cov_at(cov, "nontree", "id_pool", 3) == pytest.approx(0.1)
    assert coverage.pool_count(cov, "twohop", "id_pool") == 400
    assert coverage.type0_shares(cov) == pytest.approx({"twohop": 0.75, "nontree": 0.25})
    assert "**90.0%** of two-hop's ID test items" in coverage.coverage_text(cov, 3)


def test_need_summary_divides_nontree_by_twohop():
    rows = []
    for task, population, n, most in (("twohop", "type_0", 100.0, 1.0), ("nontree", "type_0", 350.0, 1.0),
                                      ("nontree", "id_pool", np.nan, 0.6), ("twohop", "id_pool", 200.0, 1.0)):
        rows.append({"task": task, "N": 10, "population": population, "k": 3, "target": 0.99, "eligible": 900,
                     "n_train": n, "max_covered": most, "largest_n": 800})
    table = data_need.need_summary(pd.DataFrame(rows), 3)
    assert table.loc[10, "nontree / twohop (type_0)"] == pytest.approx(3.5)
    assert table.loc[10, "nontree: most of the ID pool covered"] == pytest.approx(0.6)
    assert "out of reach at 1 of 1 values of N" in data_need.need_text(table, 3)
    assert data_need.need_summary(pd.DataFrame(columns=data_need.NEED_COLUMNS), 3).empty


def test_merged_value_picks_one_row(pair):
    merged = pd.concat([merged_pairs(ds, 3) for ds in pair.values()], ignore_index=True)
    assert coverage.merged_value(merged, "twohop", "b") == pytest.approx(1.0)
    n_frag = len({tuple(x) for x in pair["nontree"].train_inputs[:, :2].tolist()})
    assert coverage.merged_value(merged, "nontree", "x2", "fragments") == n_frag


def test_presets_name_every_book_preset_and_refuse_others():
    assert set(PRESETS) == {"smoke", "default", "paper"}
    assert PRESETS["paper"]["need_N"] is None and PRESETS["smoke"]["train_here"]
    assert setup_chapter("06", "paper", PRESETS)["note"]
    with pytest.raises(CovlibError, match="smoke, default, paper"):
        setup_chapter("06", "big", PRESETS)


# ---- the exercises ----

def test_exercise_1_share_of_merged_pairs_sharing_x2_and_its_check(pair):
    truth = coverage.merged_share(pair["nontree"], 2)
    rows = merged_pairs(pair["nontree"], k=2).set_index("shared")
    assert truth == pytest.approx(rows.loc["x2", "share"]) and 0 <= truth <= 1
    check = coverage.check_share_x2
    assert check(truth, truth).startswith("right") and check(round(truth, 3), truth).startswith("right")
    assert check(truth - 0.05, truth).startswith("wrong") and check(truth + 0.02, truth).startswith("wrong")
    assert f"{truth:.3f}" not in check(truth - 0.05, truth) and "too low" in check(truth - 0.05, truth)  # no give-away
    assert "not a percentage" in check(truth * 100, truth)
    assert check("most", truth).startswith("wrong")
    unanswered = check(None, truth)
    assert unanswered.startswith("no answer yet") and "merged_pairs" in unanswered
    assert check(0.5, float("nan")).startswith("cannot check")


def test_exercise_2_pool_coverage_at_a_size_the_pools_allow_and_its_check():
    # the default preset's pair: twice its 10,000 examples would not fit in non-tree's pool of 13,255 inputs
    default = paired_datasets(30, 10_000, seed=0, test_size_per_type=1000)
    assert default["nontree"].eligible_count == 13_255
    assert coverage.largest_train_size(default) == 13_255 - 1000 < 2 * 10_000
    # at the smoke preset's size (seconds): the truth is what the reader's route through coverage_comparison reads
    small = paired_datasets(8, 200, seed=0, test_size_per_type=100)
    n_big = coverage.largest_train_size(small)
    assert n_big < min(ds.eligible_count for ds in small.values())
    truth = coverage.pool_coverage(8, n_big, 3, test_size_per_type=100)
    cov = coverage.coverage_comparison(8, n_big, test_size_per_type=100)
    assert truth == pytest.approx(coverage.cov_at(cov, "nontree", "id_pool", 3)) and 0 <= truth < 1
    assert coverage.pool_coverage(8, n_big, 3, test_size_per_type=100, task="twohop") == pytest.approx(
        coverage.cov_at(cov, "twohop", "id_pool", 3))
    check = coverage.check_pool_coverage
    assert check(truth, truth).startswith("right") and check(truth + 0.005, truth, k=3).startswith("right")
    assert check(truth + 0.1, truth).startswith("wrong") and check(1.0, truth).startswith("wrong")
    unanswered = check(None, truth, k=3)
    assert unanswered.startswith("no answer yet") and "coverage_comparison" in unanswered and "k = 3" in unanswered


# ---- the chapter's live figures and reader tables ----


def _iicg_maps() -> pd.DataFrame:
    rows = []
    for task, keys in inside.IICG_KEYS.items():
        for key in keys:
            for layer in range(2):
                for position in ("x1", "x2", "x3"):
                    rows.append({"task": task, "split": "type_0", "group_by": key, "layer": layer, "position": position,
                                 "iicg": 0.1 * layer, "by_construction": False, "items": 40, "groups": 8})
    return pd.DataFrame(rows)


def test_the_grouping_key_dropdown_keeps_one_keys_panels_of_both_tasks():
    chart = charts.iicg_by_key_chart(_iicg_maps(), "IICG")
    spec = chart.to_dict()
    (key,) = spec["params"]
    assert key["value"] == charts.ALL_KEYS and key["bind"]["input"] == "select"
    assert key["bind"]["options"] == [charts.ALL_KEYS, "b", "x2", "b,x2", "b,x1"]
    every = svg_with_params(chart)
    assert all(f"{task}: by {k}" in every for task, keys in inside.IICG_KEYS.items() for k in keys)
    only_b = svg_with_params(chart, grouping_key="b")
    assert "twohop: by b<" in only_b and "nontree: by b<" in only_b
    assert "by x2" not in only_b and "by b,x1" not in only_b
    # JupyterLab draws the live chart with Vega-Lite 5: the control must compile there
    vega = vlc.vegalite_to_vega(json.dumps(spec), vl_version="5.8")
    assert any(s["name"] == "grouping_key" and "bind" in s for s in vega["signals"])


def test_the_chapters_charts_name_what_their_marks_show(pair):
    merged = pd.concat([merged_pairs(ds, 3) for ds in pair.values()], ignore_index=True)
    tips = charts.merged_pairs_chart(merged, "t").to_dict()["encoding"]["tooltip"]
    assert [t["title"] for t in tips][:3] == ["task", "the two fragments share", "share of merged pairs"]
    assert {t["title"]: t.get("format") for t in tips}["classes (k = 3)"] == ",d"
    cov = coverage.coverage_comparison(8, 200, test_size_per_type=100, max_k=4)
    spec = charts.coverage_compare_chart(cov, "t").to_dict()
    assert spec["params"][0]["bind"] == "legend" and spec["params"][0]["select"]["fields"] == ["task"]
    assert {t["title"]: t.get("format") for t in spec["encoding"]["tooltip"]}["k-covered (%)"] == ".1f"
    flat = pd.DataFrame({"task": ["twohop"] * 6 + ["nontree"] * 6, "population": (["type_0"] * 3 + ["id_pool"] * 3) * 2,
                         "k": [1, 2, 3] * 4, "covered": [1, 1, 1, 1, 1, 1, 1, 1, 0.9, 0.9, 0.5, 0.4], "n": 10})
    notes = charts.coverage_compare_chart(flat, "t").to_dict()["title"]["subtitle"]
    assert notes[0] == "twohop ID test and twohop whole ID pool lie within 1 point of each other at every k: one " \
        "line hides the other"
    # one pair: two-hop's pool line lies under its ID line everywhere, so it is not named again
    assert notes[1] == ("twohop ID test and nontree ID test up to k = 2 lie within 1 point of each other: one line "
                        "hides the other there")
    peaks = iicg_peaks(_iicg_maps())
    bars = charts.iicg_keys_chart(peaks, "t").to_dict()["encoding"]["tooltip"]
    assert [t["title"] for t in bars][-2:] == ["items (one per fragment)", "groups"]
    note = charts.iicg_keys_chart(peaks, "t").to_dict()["title"]["subtitle"]  # two-hop is not grouped by (b, x1)
    assert note == "no bar where a task was not grouped by that key (b,x1: nontree only)"
    twohop = peaks[peaks["task"] == "twohop"]
    assert "subtitle" not in charts.iicg_keys_chart(twohop, "t").to_dict()["title"]  # every key for every task


def test_reader_tables_show_shares_as_percent_and_leave_unknown_sizes_empty():
    cov = pd.DataFrame({"task": ["twohop"] * 4 + ["nontree"] * 4, "population": ["type_0", "type_0", "id_pool",
                        "id_pool"] * 2, "k": [1, 2] * 4, "covered": [1.0, 0.875, 1.0, 0.5, 1.0, 0.25, 0.9, 0.125],
                        "n": 10, "type0_population": 10})
    wide = tables.coverage_reader_table(cov)
    assert wide.frame.columns.tolist() == ["task", "items", "k = 1", "k = 2"]
    assert wide.text["k = 2"].tolist() == ["87.5%", "50.0%", "25.0%", "12.5%"]  # rows in the table's own order
    assert wide.text["items"].tolist()[:2] == ["ID test (type_0)", "whole ID pool (not in training)"]
    summary = search_summary(CELLS, _probes([(500, False, 0.4), (750, False, 0.6)]))
    table = search_reader_table(summary, searches.SUMMARY_COLUMNS)
    assert table.text["n_req (geometric mean, examples)"].tolist() == ["", ""]  # never bracketed, not started
    assert table.text["largest size probed (examples)"].tolist() == ["750", ""]
    assert table.text["best ID accuracy there"].tolist() == ["60.0%", ""]
    rank = pd.DataFrame({"task": "nontree", "variant": "x2_keep_b", "layer": [0, 0, 1, 1],
                         "position": ["x1", "x2"] * 2, "value": [0.0, 1.0, 0.25, 0.5]})
    traced = tables.tracing_reader_table(rank)
    assert traced.text.values.tolist() == [["nontree", "x2 changed, b kept", "0", "0%", "100%"],
                                           ["nontree", "x2 changed, b kept", "1", "25%", "50%"]]
    recorded = metrics_table({"share": 0.123456, "cells": 3, "missing": float("nan")})
    assert recorded.text["value"].tolist() == ["0.1235", "3", ""]


def test_the_raised_cap_rerun_is_pending_then_decided_by_the_rule_or_the_cap():
    capped = _probes([(500, False, 0.4), (750, False, 0.6)]).assign(stopped=["gave_up", "steps"])
    first = searches.raised_cap_result(CELLS, capped, N=12, step_cap=12000)
    assert first["nontree_12_cap"] == 6000 and first["nontree_12_reachable"] == 0.0
    assert np.isnan(first["nontree_12_rule_decided"])  # read under the raised cap, the capped probe is reopened
    note = searches.raised_cap_note(first, N=12, step_cap=12000)
    assert "the 6,000-step cap, not the authors' give-up rule" in note and "--N 12 --seeds 0 --model L4-d128 --step-cap 12000" in note
    rerun = capped.iloc[[1]].assign(step_cap=12000, stopped="gave_up", steps=9000)
    decided = searches.raised_cap_result(CELLS, pd.concat([capped, rerun]), N=12, step_cap=12000)
    assert decided == {"nontree_12_cap": 12000, "nontree_12_rule_decided": 1.0, "nontree_12_reachable": 0.0,
                       "nontree_12_largest_n": 750, "nontree_12_largest_final_train": 1.0,
                       "nontree_12_largest_fitted": 1.0, "nontree_12_largest_best_type0": 0.6}
    assert "no probe reaches 99%, and the authors' give-up rule decided" in (
        searches.raised_cap_note(decided, N=12, step_cap=12000))
    capped_again = searches.raised_cap_result(CELLS, pd.concat([capped, rerun.assign(stopped="steps")]), N=12,
                                                    step_cap=12000)
    assert capped_again["nontree_12_rule_decided"] == 0.0
    again = searches.raised_cap_note(capped_again, N=12, step_cap=12000)
    assert "the 12,000-step cap again" in again and "the rule's epochs had not run out" in again
    unfitted = rerun.assign(stopped="steps", final_train=0.982, first_fit_step=None, best_type0=0.157)
    never_fitted = searches.raised_cap_result(CELLS, pd.concat([capped, unfitted]), N=12, step_cap=12000)
    assert never_fitted["nontree_12_largest_n"] == 750 and never_fitted["nontree_12_largest_fitted"] == 0.0
    note = searches.raised_cap_note(never_fitted, N=12, step_cap=12000)
    assert "750 examples) ended at 98.2% training accuracy and at best 15.7% ID accuracy" in note
    assert "never fitted its training set" in note and "--step-cap 24000" in note and "--step-cap 12000" not in note
    rescued = pd.concat([capped, rerun.assign(success=True, stopped="early_stop", best_type0=0.99)])
    assert searches.raised_cap_result(CELLS, rescued, N=12, step_cap=12000)["nontree_12_reachable"] == 1.0
    none = searches.raised_cap_result(CELLS, capped.iloc[:0], N=12)
    assert all(np.isnan(v) for v in none.values()) and searches.raised_cap_note(none, N=12) == ""


def test_the_lens_text_names_the_tasks_as_the_book_does():
    assert inside.lens_text({"twohop": 0.05, "nontree": 0.03}, 30) == (
        "The bridge as the top token, best cell at layers 1 and up: two-hop 5%, non-tree 3% of ID items (chance 3%).")
