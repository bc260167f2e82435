"""Chapter 10: the rule fitted on the floor's cells and scored out of sample, the coincidence and drift readings, the
preregistered predictions, the reader's task, the exercise."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from covlib.chapters.ch10_how_much_data_will_my_task_need import charts, reader, readings, rule, views
from covlib.coverage.rule import Rule


def fake_cells() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Measured cells of three tasks (two plain, one CoT) and one architecture series, and crossings at every
    candidate: n_req = 1.4 x the crossing at (90%, m = 2 at 90%), and 2.5 x elsewhere."""
    cells, crossings = [], []
    for series, (task, cot, model) in {"two-hop": ("twohop", False, "L4-d128"),
                                       "three-hop": ("threehop", False, "L4-d128"),
                                       "two-hop, CoT": ("twohop", True, "L4-d128"),
                                       "three-hop, CoT": ("threehop", True, "L4-d128"),
                                       "two-hop, Mamba": ("twohop", False, "mamba-L4-d128")}.items():
        for N in (10, 20, 30):
            for seed in (0, 1):
                n_req = 50.0 * N**2 * (1.1 if "Mamba" in series else 1.0) * (1 + 0.05 * seed)
                cells.append({"series": series, "task": task, "cot": cot, "model": model, "N": N, "seed": seed,
                              "n_req": n_req, "n_req_logistic": n_req, "low": n_req / 1.05, "high": n_req * 1.05,
                              "pool_share": 0.2, "pool_limited": False})
    for task, cot in (("twohop", False), ("threehop", False), ("twohop", True), ("threehop", True)):
        levels = range(1, 5) if cot else range(2, 6)
        for N in (10, 20, 30):
            for seed in (0, 1):
                for level in levels:
                    for target in (0.9, 0.95, 0.99):
                        right = (target == 0.9) and (level == (2 if cot else rule.plain_k(task)))
                        n_req = 50.0 * N**2 * (1 + 0.05 * seed)
                        crossings.append({"task": task, "cot": cot, "N": N, "seed": seed, "level": level,
                                          "target": target, "crossing": n_req / (1.4 if right else 2.5 * N / 10)})
    return pd.DataFrame(cells), pd.DataFrame(crossings)


def test_the_rule_is_scored_out_of_sample_and_in_sample_apart():
    cells, crossings = fake_cells()
    result = rule.evaluate(cells, crossings)
    fitted, oos, ins = result["rule"], result["oos"], result["in_sample"]
    assert (fitted.plain_share, fitted.cot_level, fitted.cot_share) == (0.9, 2, 0.9)
    assert fitted.factor == pytest.approx(1.4) and fitted.cells == 24
    assert len(oos) == len(ins) == 24 and set(oos["series"]) == {"two-hop", "three-hop", "two-hop, CoT",
                                                                 "three-hop, CoT"}
    assert np.allclose(oos["ratio"], 1.0) and np.allclose(ins["ratio"], 1.0)
    arch = result["architecture"]  # the Mamba: by the rule fitted without two-hop, labelled apart
    assert set(arch["series"]) == {"two-hop, Mamba"} and np.allclose(arch["ratio"], 1.1)
    assert result["waiting"].empty
    summary = rule.series_summary(oos).set_index("series")
    assert summary.loc["two-hop", "within_115"] == 6 and summary.loc["two-hop", "rule"] == "k = 3, 90%, x1.40"
    assert summary.loc["two-hop, CoT", "rule"] == "m = 2, 90%, x1.40"
    assert "Every task's median lies within 1.25x" in rule.where_it_misses(summary.reset_index())
    assert "100% of 24 cells lie within 1.25x" in rule.oos_sentence(oos, ins, fitted) and "met." in \
        rule.oos_sentence(oos, ins, fitted)
    lines = readings.findings(fitted, summary.reset_index(), oos, ins, arch, "Preregistered.",
                              "Amended.").split("\n")
    assert lines[1].endswith("every task's median within 1.25x: met.") and lines[-2:] == ["Preregistered.", "Amended."]
    missed = oos.assign(ratio=np.where(oos["series"] == "two-hop", 1.5, 1.0))  # one task's median outside
    assert rule.goal_text(missed).endswith("not met; the medians outside are two-hop (1.50).")
    assert "Amended." not in readings.findings(fitted, summary.reset_index(), oos, ins, arch, "Preregistered.")


def test_a_cell_without_crossings_waits_and_a_missing_prediction_counts_as_a_miss():
    cells, crossings = fake_cells()
    late = crossings[~((crossings["task"] == "threehop") & (crossings["N"] == 30))]  # plain and CoT
    result = rule.evaluate(cells, late)
    assert sorted(result["waiting"]["N"].tolist()) == [30, 30, 30, 30] and len(result["oos"]) == 20
    unreachable = crossings.assign(crossing=crossings["crossing"].where(~((crossings["task"] == "threehop")
                                                                         & ~crossings["cot"] & (crossings["N"] == 30)
                                                                         & (crossings["target"] == 0.9))))
    scored = rule.evaluate(cells, unreachable)
    three = scored["oos"][scored["oos"]["series"] == "three-hop"]
    assert three["ratio"].isna().sum() == 2 and len(three) == 6 and rule.accuracy(scored["oos"])["within_125"] < 1


def test_misses_and_drifts_are_named_with_their_direction():
    summary = pd.DataFrame([{"series": "parallel two-hop", "cells": 6, "N": "10-30", "median": 0.7, "drift": -0.3,
                             "unpredicted": 0}, {"series": "five-hop, CoT", "cells": 4, "N": "6-9", "median": 1.6,
                                                 "drift": 0.05, "unpredicted": 1}])
    text = rule.where_it_misses(summary)
    assert "parallel two-hop (6 cells, N = 10-30): it needs 0.70x the prediction (median): less data" in text
    assert "drifts as N^-0.30: the measured data grows slower" in text
    assert "five-hop, CoT" in text and "more data than its evidence says" in text and "1 cell(s) without" in text


def test_the_drift_table_sets_each_explanation_beside_the_measurement():
    cells = pd.DataFrame({"series": "parallel two-hop", "N": [10, 10, 20, 20, 30, 30], "seed": [0, 1] * 3,
                          "n_req": [1000.0, 1000, 3000, 3000, 6000, 6000], "pool_share": [0.5, 0.5, 0.2, 0.2, 0.1, 0.1]})
    table = pd.DataFrame({"series": "parallel two-hop", "N": [10, 20, 30], "seed": 0, "level": 3, "target": 0.99,
                          "crossing": [500.0, 500 * 2**2.8, 500 * 3**2.8]})
    drift = rule.drift_explained(cells, table, Rule(plain_share=0.99, cot_level=2, cot_share=0.9, factor=1.0))
    exp = drift.set_index("quantity")["exponent"]
    assert exp["measured n_req (the floor)"] == pytest.approx(np.polyfit(np.log([10, 20, 30]), np.log([1000, 3000, 6000]), 1)[0])
    assert exp.filter(like="crossing the rule reads").iloc[0] == pytest.approx(2.8)
    assert "grows as N^1.63, the crossing the rule reads as N^2.80" in rule.drift_sentence(drift)
    assert "Leaving out" not in rule.drift_sentence(drift)  # two N under a quarter of the pool: no exponent


def test_the_preregistered_predictions_are_read_with_their_measurements_or_said_to_wait():
    predictions = pd.DataFrame({"task": ["b=f(x1,x2); t=f(b,x3)"] * 2, "N": [25, 30], "n_pred": [5000.0, 6500.0],
                                "n_low": [4900.0, 6400.0], "n_high": [5100.0, 6600.0], "seed_0": [4950.0, 6450.0],
                                "seed_1": [5050.0, 6550.0], "eligible": [7756, 13325]})
    empty = readings.measured_preregistered(predictions, table="data/predict/none_such.csv")
    assert empty.empty
    text = readings.preregistered_sentence(predictions, empty)
    assert "2 predictions for 1 tasks" in text and "None is measured yet" in text
    shown = readings.preregistered_table(predictions, empty)
    assert shown["measured"].isna().all() and views.preregistered_view(shown).text.iloc[0, 6] == ""
    measured = pd.DataFrame({"task": ["b=f(x1,x2); t=f(b,x3)"] * 2, "N": [25, 25], "seed": [0, 1],
                             "predicted": [4950.0, 5050.0], "n_req": [5445.0, 5050.0], "ratio": [1.1, 1.0]})
    both = readings.preregistered_table(predictions, measured)
    assert both.loc[0, "measured"] == pytest.approx(5247.5) and np.isnan(both.loc[1, "measured"])
    said = readings.preregistered_sentence(predictions, measured)
    assert "measured / predicted 1.00-1.10, 100% within 1.25x" in said
    assert "By task: one primitive in both hops (2 cells at N = 25): 1.00-1.10, 100% of its cells within 1.25x." in said
    above = readings.preregistered_sentence(predictions, measured.assign(ratio=[1.72, 2.32]))
    assert "1.72-2.32, more than predicted in every cell" in above and "0% within 1.25x" in above
    below = readings.preregistered_sentence(predictions, measured.assign(ratio=[0.5, 0.7]))
    assert "less than predicted in every cell" in below and "with N" not in below  # one N: no trend to read
    chain = pd.DataFrame({"N": [8, 8, 9, 9, 10, 10], "ratio": [0.89, 1.10, 1.18, 1.42, 1.4, 1.6]})
    assert readings.ratio_trend(chain) == (", rising with N (median 1.00 at N = 8, 1.50 at N = 10): the data it "
                                           "needs grows faster with N than the coverage that predicts it")
    assert readings.ratio_trend(chain.assign(ratio=chain["ratio"][::-1].to_numpy())).startswith(", falling with N")
    assert readings.ratio_trend(chain.assign(ratio=[1.0, 1.0, 1.1, 1.1, 1.2, 1.2])) == ""  # within the band
    assert readings.ratio_trend(chain.assign(ratio=[1.0, 1.0, 1.6, 1.6, 1.5, 1.5])) == ""  # not one way
    metrics = readings.chapter_metrics(None, pd.DataFrame({"series": [], "ratio": []}), pd.DataFrame({"ratio": []}),
                                       pd.DataFrame(), pd.DataFrame(), predictions, measured)
    assert metrics["predict_preregistered_tasks"] == 1 and metrics["predict_preregistered_ratio_max"] == 1.1
    assert metrics["predict_preregistered_within_125_share"] == 1.0
    none = readings.chapter_metrics(None, pd.DataFrame({"series": [], "ratio": []}), pd.DataFrame({"ratio": []}),
                                    pd.DataFrame(), pd.DataFrame(), predictions, empty)
    assert np.isnan(none["predict_preregistered_ratio_min"]) and none["predict_rule_floor"] == 1


def test_the_metrics_hold_every_task_and_the_exercise_check_fails_on_a_wrong_answer():
    cells, crossings = fake_cells()
    result = rule.evaluate(cells, crossings)
    m = readings.chapter_metrics(result["rule"], result["oos"], result["in_sample"], result["architecture"],
                                 pd.DataFrame(), readings.read_preregistered().iloc[:0], pd.DataFrame())
    assert m["predict_oos_cells"] == 24 and m["predict_oos_within_115_share"] == 1.0
    assert m["predict_oos_median_ratio_twohop"] == 1.0 and np.isnan(m["predict_oos_median_ratio_fivehop"])
    assert m["predict_cot_rule"].startswith("every hop fact used by at least 2 training examples")
    assert m["predict_ratio_twohop_mamba_max"] == 1.1
    oos = result["oos"]
    truth = readings.raw_within_share(oos)
    assert truth == 0.0  # the raw ratio is 1.4 everywhere
    assert readings.check_raw_within(truth, truth).startswith("right")
    assert readings.check_raw_within(1.0, truth).startswith("wrong") and f"{truth:.3f}" not in \
        readings.check_raw_within(1.0, truth)
    assert readings.check_raw_within(None, truth).startswith("no answer")


def test_the_shipped_cells_and_crossings_meet():
    cells = rule.label_cells(rule.book_cells()["floor"], {**rule.SERIES, **rule.ARCHITECTURES})
    assert set(cells["series"]) >= {"two-hop", "three-hop", "two-hop, CoT", "two-hop, Mamba"}
    table, waiting = rule.fit_table(cells[cells["series"].isin(list(rule.SERIES))], rule.read_crossings())
    assert len(table) and (table["crossing"].dropna() > 0).all()
    assert set(table["series"]) >= {"two-hop", "three-hop", "parallel two-hop", "two-hop, CoT", "three-hop, CoT"}


def test_a_readers_coverage_grows_with_the_data():
    growth = reader.coverage_growth("b=f1(x2,x3); t=f2(x1,b)", 8, points=4, max_k=3, test_size_per_type=100)
    wide = growth.pivot(index="n_train", columns="k", values="covered")
    assert (wide[1] >= wide[3]).all()  # deeper coverage is harder
    assert wide[3].iloc[-1] > wide[3].iloc[0]


def test_the_check_probe_goes_to_the_nearest_predicted_N_or_nowhere():
    table = pd.DataFrame({"N": [8, 10, 12], "n_pred": [np.nan, 700.0, np.nan]})
    assert reader.probe_size(table, 12) == (10, 700.0) and reader.probe_size(table, 10) == (10, 700.0)
    none = table.assign(n_pred=np.nan)
    assert reader.probe_size(none, 12) is None and "N = 8, 10, 12" in reader.no_probe_sentence(none)


def test_the_chapters_tables_read_as_a_reader_expects():
    prediction = pd.DataFrame({"N": [8, 12], "n_pred": [np.nan, 1086.4], "n_low": [np.nan, 1059.8],
                               "n_high": [np.nan, 1114.1], "eligible": [254, 850], "probes": [9, 9],
                               "seconds": [0.12, 0.31], "cpu_seconds": [0.1, 0.3]})
    table = views.prediction_view(prediction, cpu=False)
    assert list(table.text.columns) == ["N (tokens)", "predicted n_req (examples)", "lowest seed", "highest seed",
                                        "ID pool (inputs)", "datasets generated", "wall seconds"]
    assert table.text.iloc[1, 1:4].tolist() == ["1,086", "1,060", "1,114"] and table.text.iloc[0, 1] == ""
    assert views.findings_markdown("Rule: 2 x.\ntwo-hop: 10 cells.\n") == "* Rule: 2 x.\n* two-hop: 10 cells."


def test_a_sweep_over_the_readers_task_records_it():
    prediction = pd.DataFrame({"N": [8, 10], "n_pred": [np.nan, 700.4]})
    growth = pd.DataFrame({"n_train": [100, 100, 400, 400], "k": [2, 3, 2, 3], "covered": [0.5, 0.2, 0.99, 0.9]})
    row = {"n_train": 700, "eligible": 2000, "success": False, "best_type0": 0.6}
    m = reader.reader_metrics("b=f1(x2,x3); t=f2(x1,b)", False, prediction, growth, 3, (10, 700.4), row)
    assert m["reader_task"] == "b = f1(x2,x3); t = f2(x1,b)" and m["reader_predicted_n_req"] == 700
    assert m["reader_predictions"] == "N = 8: none; N = 10: 700"
    assert m["reader_covered_share"] == 0.9 and m["reader_covered_at_n_train"] == 400
    assert m["reader_probe_position"] == "at" and m["reader_probe_success"] is False
    assert "reader_probe_N" not in reader.reader_metrics({"b": "f1(x1,x2)", "t": "f2(b,x3)"}, True, prediction, growth,
                                                         2, None, None)


@pytest.mark.parametrize("success", [True, False])
@pytest.mark.parametrize("n_train,predicted,eligible,where", [
    (400, 500.4, 5000, "below"), (500, 500.4, 5000, "at"), (501, 500.6, 5000, "at"), (600, 500.0, 5000, "above"),
    (3151, 3400.0, 4151, "capped"),  # the largest probe the pool allows: 4,151 less 1,000 kept to test
])
def test_the_probe_is_read_against_the_whole_size_it_was_trained_at(success, n_train, predicted, eligible, where):
    row = {"n_train": n_train, "eligible": eligible, "success": success, "steps": 900 if success else 3000,
           "stopped": "early_stop" if success else "gave_up", "best_type0": 0.995 if success else 0.42,
           "give_up_floor": 2000}
    assert reader.probe_position(n_train, predicted, eligible) == where
    text = reader.probe_sentence(row, predicted)
    expected = {(True, "at"): "the prediction is enough here", (True, "below"): "the rule overestimates",
                (True, "capped"): "the rule overestimates", (True, "above"): "neither confirms nor refutes",
                (False, "at"): "The task needs more than the rule predicts.",
                (False, "below"): "as the rule expects of a training set below its prediction",
                (False, "capped"): "as the rule expects of a training set below its prediction",
                (False, "above"): "the rule underestimates it"}[success, where]
    assert expected in text
    assert ("the most the ID pool allows" in text) == (where == "capped")
    assert f"{n_train:,} training examples" in text


def test_a_failure_at_the_predicted_size_is_not_read_as_expected():
    """A failure at exactly the predicted size (the pool holds more) says the task needs more, not that the size was
    below the prediction."""
    row = {"n_train": 3151, "eligible": 4885, "success": False, "steps": 2400, "stopped": "gave_up",
           "best_type0": 0.6, "give_up_floor": 2000}
    text = reader.probe_sentence(row, 3151.4)
    assert "needs more than the rule predicts" in text and "pool" not in text and "as the rule expects" not in text


def test_the_drift_sentence_reads_a_measurement_between_the_two_counts():
    drift = pd.DataFrame({"quantity": ["measured n_req (the floor)", "crossing the rule reads (true equivalences)",
                                       "crossing, contexts pooled by their own true class"],
                          "exponent": [2.4, 2.7, 1.9], "N": "10-30", "cells": 14})
    text = rule.drift_sentence(drift)
    assert "grows as N^2.40, the crossing the rule reads as N^2.70" in text
    assert "between the two counts, 38% of the way from the literal one" in text
    outside = rule.drift_sentence(drift.assign(exponent=[3.0, 2.7, 1.9]))
    assert "outside the two counts" in outside


def test_the_chain_of_thought_misses_are_read_by_depth():
    summary = pd.DataFrame({"series": ["two-hop, CoT", "five-hop, CoT", "three-hop, CoT", "two-hop"],
                            "median": [0.67, 1.44, 0.89, 1.0]})
    text = rule.cot_depth_sentence(summary)
    assert "rise with depth: two-hop, CoT (depth 2) 0.67, three-hop, CoT (depth 3) 0.89, five-hop, CoT (depth 5) 1.44" \
        in text and "0.99^(1/d)" in text
    assert "do not rise" in rule.cot_depth_sentence(summary.assign(median=[0.9, 0.8, 1.0, 1.0]))
    assert rule.cot_depth_sentence(summary.iloc[:1]) == ""


def test_a_probe_of_another_model_says_so_with_that_models_architecture_test():
    arch = pd.DataFrame({"series": ["two-hop, 2 layers width 64"] * 2, "ratio": [1.32, 1.52]})
    note = reader.model_note("L2-d64", arch)
    assert "`L2-d64`" in note and "1.32-1.52x" in note
    assert reader.model_note("L4-d128", arch) == "" and "1.32" not in reader.model_note("L6-d128", arch)


def test_a_search_of_a_preregistered_task_is_read_by_its_formula_and_own_seed(tmp_path):
    """Two-hop's N = 25 rows (and their curves) relabelled as the shared-operator task stand in for its search."""
    from covlib.base.paths import repository_path
    from covlib.search.probes import curves_path

    table = tmp_path / "probes.csv"
    for source, target in ((repository_path("data/scaling/probes.csv"), table),
                           (repository_path("data/scaling/probes_curves.csv"), curves_path(table))):
        rows = pd.read_csv(source)
        rows = rows[(rows["task"] == "twohop") & (rows["N"] == 25) & (rows["model"] == "L4-d128") & ~rows["cot"]]
        rows.assign(task="b=f1(x1,x2);t=f1(b,x3)").to_csv(target, index=False)
    predictions = pd.DataFrame({"task": ["b=f(x1,x2); t=f(b,x3)"], "N": [25], "n_pred": [5000.0], "n_low": [4800.0],
                                "n_high": [5200.0], "seed_0": [4800.0], "seed_1": [5200.0], "eligible": [7756]})
    measured = readings.measured_preregistered(predictions, table=str(table)).sort_values("seed")
    assert measured["seed"].tolist() == [0, 1] and measured["predicted"].tolist() == [4800.0, 5200.0]
    assert np.allclose(measured["ratio"], measured["n_req"] / measured["predicted"])
    assert "Measured so far: 2 cells at 1 of the 1 (task, N) pairs" in readings.preregistered_sentence(predictions,
                                                                                                   measured)


def test_the_amended_rule_takes_the_larger_evidence_per_seed_and_flags_its_in_sample_pairs():
    from covlib.coverage.predict import predict_with_rule

    shipped = Rule(plain_share=0.99, cot_level=1, cot_share=0.95, factor=1.44)
    formula = "b=f1(x1,x2); t=f2(b,x3,x4)"
    both = rule.preregister_both(shipped, {formula: [8, 10]}, seeds=(0,)).set_index("N")
    plain = predict_with_rule(formula, [8, 10], shipped, False, (0,)).set_index("N")
    hops = predict_with_rule(formula, [8, 10], shipped, True, (0,)).set_index("N")
    for N in (8, 10):
        assert both.loc[N, "seed_0"] == max(plain.loc[N, "seed_0"], hops.loc[N, "seed_0"])
        assert both.loc[N, "larger"] == ("hop facts" if hops.loc[N, "seed_0"] > plain.loc[N, "seed_0"] else "k-coverage")
    assert both.loc[10, "in_sample"] and not both.loc[8, "in_sample"]  # N = 10 was measured before it was written
    assert both.loc[10, "larger"] == "hop facts"  # the miss it was written for: the hop of three arguments


def test_the_amended_rule_is_scored_only_on_the_cells_it_was_written_before():
    amended = pd.DataFrame({"task": ["t"] * 3, "N": [10, 12, 14], "n_pred": [3000.0, 5000.0, 8000.0],
                            "larger": ["hop facts"] * 3, "in_sample": [True, True, False]})
    measured = pd.DataFrame({"task": ["t"] * 4, "N": [10, 10, 14, 14], "seed": [0, 1, 0, 1],
                             "predicted": [3000.0] * 2 + [8000.0] * 2, "n_req": [2900.0, 3600.0, 8800.0, 12000.0],
                             "ratio": [0.97, 1.2, 1.1, 1.5], "in_sample": [True, True, False, False]})
    text = readings.both_sentence(amended, measured)
    assert "changes the prediction of 1 of the 1 (task, N) pairs it was written before" in text
    assert "In sample for it (measured, or searched, when it was written): 2 cells, measured / amended prediction " \
           "0.97-1.20." in text
    assert "Out of sample: 2 cells, 1.10-1.50, 50% within 1.25x." in text
    waiting = readings.both_sentence(amended, measured[measured["in_sample"]])
    assert waiting.endswith("No cell it was written before has been measured yet.")
    metrics = readings.chapter_metrics(None, pd.DataFrame({"series": [], "ratio": []}), pd.DataFrame({"ratio": []}),
                                       pd.DataFrame(), pd.DataFrame(), amended, measured, measured)
    assert metrics["predict_preregistered_both_oos_cells"] == 2
    assert (metrics["predict_preregistered_both_ratio_min"], metrics["predict_preregistered_both_ratio_max"]) == (1.1, 1.5)
    shown = views.amended_view(readings.preregistered_table(amended, measured))
    assert list(shown.text.iloc[:, 4]) == ["yes", "yes", "no"]
    assert list(shown.text.iloc[:, 3]) == ["hop facts, every seed"] * 3
    mixed = views.amended_view(readings.preregistered_table(amended.assign(larger="hop facts k-coverage hop facts"),
                                                            measured))
    assert mixed.text.iloc[0, 3] == "hop facts in 2 seeds, k-coverage in 1 seed"


def test_the_ratio_chart_labels_every_measured_N_and_names_its_tasks():
    cells = pd.DataFrame({"series": ["two-hop", "two-hop", "four-hop chain"], "kind": ["task, out of sample"] * 2
                          + ["preregistered"], "N": [24, 70, 9], "seed": 0, "n_req": [5e3, 4.6e4, 6e3],
                          "predicted": [5e3, 4e4, 5e3], "ratio": [1.0, 1.15, 1.2]})
    spec = charts.ratio_chart(cells, rule.BANDS).to_dict()
    points = spec["layer"][-1]
    assert points["encoding"]["x"]["axis"]["values"] == [9, 24, 70]  # not only the log axis's own 10, 20, 30, ...
    assert points["encoding"]["color"]["legend"]["title"].startswith("task")
