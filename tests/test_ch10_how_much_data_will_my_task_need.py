"""Chapter 10: the rule fitted on two-hop's cells, its test on other tasks, the reader's task, the exercise."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from covlib.chapters.ch10_how_much_data_will_my_task_need import reader, readings, rule


def fake_ratios() -> pd.DataFrame:
    """Two sets of cells and two candidates: on two-hop, candidate (3, 0.9) gives ratios 1.8-2.2 (spread 1.22)
    and (4, 0.99) gives 0.9-1.5 (spread 1.67); three-hop sits 1.5x higher at every candidate."""
    rows = []
    for label, scale in (("two-hop", 1.0), ("three-hop", 1.5)):
        for i, (N, n_req) in enumerate(((20, 1000.0), (30, 3000.0), (40, 6000.0))):
            for k, target, ratio in ((3, 0.9, (1.8, 2.0, 2.2)[i]), (4, 0.99, (0.9, 1.2, 1.5)[i])):
                rows.append({"set": label, "task": "x", "N": N, "seed": 0, "n_req": n_req, "k": k, "target": target,
                             "crossing": n_req / (ratio * scale), "rule": rule.rule_name(0)})
    frame = pd.DataFrame(rows)
    return frame.assign(ratio=frame["n_req"] / frame["crossing"])


def test_the_rule_is_fitted_on_two_hop_alone_and_centres_its_spread():
    ratios = fake_ratios()
    fitted = rule.fit_rule(ratios)
    assert (fitted["k"], fitted["target"]) == (3, 0.9)
    assert fitted["factor"] == pytest.approx(np.sqrt(1.8 * 2.2)) and fitted["spread"] == pytest.approx(2.2 / 1.8)
    # three-hop's numbers do not move the rule
    moved = ratios.copy()
    moved.loc[moved["set"] == "three-hop", "crossing"] /= 10
    assert rule.fit_rule(moved)["factor"] == fitted["factor"]
    tested = rule.apply_rule(ratios, fitted)
    two = tested[tested["set"] == "two-hop"]["ratio"]
    assert two.min() * two.max() == pytest.approx(1.0)  # centred on 1
    ranges = rule.ratio_ranges(tested, 1.15).set_index("set")
    assert ranges.loc["two-hop", "within"] == 3 and ranges.loc["three-hop", "within"] == 0
    assert ranges.loc["three-hop", "ratio_min"] == pytest.approx(1.5 * 1.8 / fitted["factor"])
    text = rule.where_it_misses(ranges.reset_index(), 1.15)
    assert "two-hop: every one of its 3 cells" in text and "three-hop (3 cells, N = 20-40): 0 within" in text
    assert "more data than the rule says" in text
    assert ranges.loc["two-hop", "drift"] == pytest.approx(np.polyfit(np.log([20, 30, 40]),
                                                                      np.log([1.8, 2.0, 2.2]), 1)[0])
    assert "drifts as N^+0.29: the measured data grows faster" in text


def test_no_two_hop_cell_gives_no_rule_and_says_so():
    assert rule.fit_rule(fake_ratios().query("set == 'three-hop'")) == {}
    assert rule.describe_rule({}).startswith("no rule")
    assert rule.authors_ratios({}).empty


def test_probes_are_read_under_one_give_up_rule():
    probes = pd.DataFrame({"n_train": [1, 2, 3], "give_up_floor": [0, 2000, np.nan]})
    assert rule.probes_under_rule(probes, 0)["n_train"].tolist() == [1, 3]
    assert rule.probes_under_rule(probes, 2000)["n_train"].tolist() == [2]
    old = probes.drop(columns="give_up_floor")
    assert len(rule.probes_under_rule(old, 0)) == 3 and rule.probes_under_rule(old, 2000).empty
    assert rule.rule_name(0) != rule.rule_name(2000)


def test_the_shipped_cells_and_crossings_meet():
    cells = rule.measured_cells()
    assert set(cells["set"]) >= {"two-hop", "three-hop", "two-hop, CoT"}
    ratios = rule.cell_ratios(cells, rule.read_crossings())
    assert (ratios["ratio"] > 0).all() and len(ratios[ratios["set"] == "two-hop"])
    # two-hop's N = 50 is read at the cap its experiment raised there, as chapter 4 reads it
    from covlib.search.experiments import experiment_cells
    assert {c.N: c.step_cap for c in experiment_cells(rule.TEST_SETS["two-hop"])}[50] == 12000


def test_the_exercise_check_fails_on_a_wrong_answer():
    ratios = fake_ratios()
    fitted = rule.fit_rule(ratios)
    truth = readings.raw_within_share(ratios, fitted, 1.15)
    assert truth == 0.0  # raw ratios 1.8-2.2 are all outside 1.15x
    assert readings.check_raw_within(truth, truth, 1.15).startswith("right")
    assert readings.check_raw_within(1.0, truth, 1.15).startswith("wrong")
    assert f"{truth:.3f}" not in readings.check_raw_within(1.0, truth, 1.15)
    assert readings.check_raw_within(None, truth, 1.15).startswith("no answer")


def test_metrics_and_findings_name_every_set():
    ratios = fake_ratios()
    fitted = rule.fit_rule(ratios)
    tested = rule.apply_rule(ratios, fitted)
    ranges = rule.ratio_ranges(tested, 1.15)
    authors = pd.DataFrame({"N": [50, 200], "ratio": [0.9, 1.3], "seconds": [3.0, 90.0], "cpu_seconds": [2.0, 40.0],
                            "seeds": [3, 1]})
    m = readings.chapter_metrics(fitted, ranges, tested, authors, 1.15, 40.0, rule.describe_rule(fitted))
    assert m["predict_rule_fitted_on"] == "twohop" and m["predict_within_115_share"] == pytest.approx(0.5)
    assert m["predict_ratio_twohop_min"] < 1 < m["predict_ratio_twohop_max"] and m["predict_ratio_authors_max"] == 1.3
    assert m["predict_seconds_twohop_N200"] == 40.0 and "threehop" in " ".join(m)
    text = readings.findings(m["predict_rule"], ranges, tested, authors, 1.15)
    assert "within 1.15x: 50% of 6" in text and "N = 50, 200" in text
    with_authors = pd.concat([ranges, ranges.iloc[:1].assign(set="authors' two-hop (GPT-2)")], ignore_index=True)
    assert readings.findings(m["predict_rule"], with_authors, tested, authors, 1.15).count("authors' two-hop") == 1
    note = rule.authors_note(authors, fitted)
    assert "40 CPU seconds" in note and "3 dataset seeds at N = 50; 1 dataset seed at N = 200" in note
    assert "not predicted yet" in rule.authors_note(authors.iloc[:0], fitted) and "--k 3 --share 0.9" in \
        rule.authors_note(authors.iloc[:0], fitted)


def test_the_probe_sentence_covers_success_failure_and_a_prediction_beyond_the_pool():
    ok = {"n_train": 500, "success": True, "steps": 900, "stopped": "early_stop", "best_type0": 0.995}
    assert "enough here" in reader.probe_sentence(ok, 480.0)
    assert "overestimates" in reader.probe_sentence(ok, 900.0)
    bad = {"n_train": 500, "success": False, "steps": 3000, "stopped": "steps", "best_type0": 0.42}
    text = reader.probe_sentence(bad, 500.0)
    assert "42.0%" in text and "step cap" in text and "longer training" in text
    assert "as the rule expects" in reader.probe_sentence(bad, 900.0)
    early = {**bad, "stopped": "gave_up", "steps": 250, "give_up_floor": 0}
    assert "the authors' give-up rule ended it (chapter 4 finds" in reader.probe_sentence(early, 900.0)
    floored = reader.probe_sentence({**early, "steps": 2400, "give_up_floor": 2000}, 900.0)
    assert "the give-up rule with its 2,000-step floor ended it after 2,400 steps" in floored and "chapter 4" not in floored


def test_a_readers_coverage_grows_with_the_data():
    growth = reader.coverage_growth("b=f1(x2,x3); t=f2(x1,b)", 8, points=4, max_k=3, test_size_per_type=100)
    wide = growth.pivot(index="n_train", columns="k", values="covered")
    assert (wide[1] >= wide[3]).all()  # deeper coverage is harder
    assert wide[3].iloc[-1] > wide[3].iloc[0]


def test_the_depth_reading_names_deeper_and_shallower_tasks():
    ratios = fake_ratios()
    fitted = rule.fit_rule(ratios)  # k = 3 at 90%; the fake table has only that k at 90%
    extra = ratios[ratios["k"] == 3].assign(k=5)
    extra = extra.assign(crossing=extra["crossing"] * np.where(extra["set"] == "three-hop", 1.5, 3.0))
    both = pd.concat([ratios, extra], ignore_index=True)
    both = both.assign(ratio=both["n_req"] / both["crossing"])
    depth = rule.depth_each_set_needs(both, fitted).set_index("set")
    assert depth.loc["two-hop", "k"] == 3 and depth.loc["three-hop", "k"] == 5
    assert depth.loc["three-hop", "factor at the rule's k"] == pytest.approx(1.5 * (1.8 * 2.0 * 2.2) ** (1 / 3))
    text = rule.depth_sentence(depth.reset_index(), fitted)
    assert "two-hop at the rule's own k = 3" in text and "deeper coverage for three-hop (k = 5" in text
    assert "shallower" not in text


def test_the_check_probe_goes_to_the_nearest_predicted_N_or_nowhere():
    table = pd.DataFrame({"N": [8, 10, 12], "n_pred": [np.nan, 700.0, np.nan]})
    assert reader.probe_size(table, 12) == (10, 700.0) and reader.probe_size(table, 10) == (10, 700.0)
    none = table.assign(n_pred=np.nan)
    assert reader.probe_size(none, 12) is None and "N = 8, 10, 12" in reader.no_probe_sentence(none)


def test_the_chapters_tables_read_as_a_reader_expects():
    from covlib.chapters.ch10_how_much_data_will_my_task_need import views

    prediction = pd.DataFrame({"N": [8, 12], "n_pred": [np.nan, 1086.4], "n_low": [np.nan, 1059.8],
                               "n_high": [np.nan, 1114.1], "eligible": [254, 850], "probes": [9, 9],
                               "seconds": [0.12, 0.31], "cpu_seconds": [0.1, 0.3]})
    table = views.prediction_view(prediction, cpu=False)
    assert list(table.text.columns) == ["N (tokens)", "predicted n_req (examples)", "lowest seed", "highest seed",
                                        "ID pool (inputs)", "datasets generated", "wall seconds"]
    assert table.text.iloc[1, 1:4].tolist() == ["1,086", "1,060", "1,114"] and table.text.iloc[0, 1] == ""
    depth = pd.DataFrame({"set": ["two-hop"], "k": [3], "typical ratio": [0.98], "range": ["0.90-1.11"],
                          "factor at the rule's k": [1.97], "at the edge": [False], "cells": [10]})
    assert views.depth_view(depth).text.iloc[0, 5] == "no"  # a word, never False
    assert views.findings_markdown("Rule: 2 x.\ntwo-hop: 10 cells.\n") == "* Rule: 2 x.\n* two-hop: 10 cells."
