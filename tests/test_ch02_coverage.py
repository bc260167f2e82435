"""Chapter 2's helpers: fragment pairs and their evidence, class purity per k, neighbourhoods, survey, metrics."""
from __future__ import annotations

import itertools
import json

import networkx as nx
import numpy as np
import pandas as pd
import pytest
import vl_convert as vlc
from figure_checks import missing_tooltips, unexplained_layers

from covlib.base.errors import CovlibError
from covlib.chapters import ch02_coverage as coverage_chapter
from covlib.coverage.exact import PairEvidence, all_pair_evidence, fragment_classes
from covlib.tasks.datasets import DatasetConfig, generate


@pytest.fixture(scope="module")
def small():
    ds = generate(DatasetConfig("twohop", 8, n_train=150, seed=0, test_size_per_type=20))
    answers = ds.evaluate(ds.train_inputs)["t"]
    return ds, answers, all_pair_evidence(ds.train_inputs, answers, 8)


def test_presets_cover_every_preset_with_the_same_knobs():
    assert set(coverage_chapter.PRESETS) == {"smoke", "default", "paper"}
    assert coverage_chapter.PRESETS["default"]["scaling_N"] == [20, 30, 50, 70]
    assert len({frozenset(values) for values in coverage_chapter.PRESETS.values()}) == 1


def test_fragment_label_and_pairs_by_hand():
    assert coverage_chapter.fragment_label(23, 10) == "(2, 3)"
    evidence = PairEvidence((0, 1), left=np.array([1, 2, 0]), right=np.array([3, 3, 2]), count=np.array([1, 4, 2]))
    bridges = np.array([5, 7, 9, 7])
    pairs = coverage_chapter.fragment_pairs(evidence, bridges, 2)
    assert pairs["fragment a"].tolist() == ["(1, 0)", "(0, 0)", "(0, 1)"]  # most shared contexts first
    assert pairs["fragment a'"].tolist() == ["(1, 1)", "(1, 0)", "(1, 1)"]
    assert pairs["same bridge? (hidden)"].tolist() == [False, False, True]
    assert pairs.index.tolist() == [1, 2, 0]  # the notebook reads the top pair's evidence by index


def test_shared_context_answers_keeps_contexts_both_fragments_share():
    inputs = np.array([[0, 1, 0], [1, 1, 0], [0, 1, 2], [1, 1, 2], [0, 1, 3], [2, 2, 3]])
    answers = np.array([5, 5, 6, 6, 7, 8])
    side = coverage_chapter.shared_context_answers(inputs, answers, 4, a=1, a2=5)  # (0, 1) and (1, 1)
    assert side.index.tolist() == [0, 2]  # x3 = 3 holds only (0, 1)
    assert side.columns.tolist() == ["t for (0, 1)", "t for (1, 1)"]
    assert side.to_numpy().tolist() == [[5, 5], [6, 6]]


def test_purity_by_k_counts_pairs_by_brute_force(small):
    ds, answers, evidence = small
    bridges = ds.tables["f1"].reshape(-1)
    purity = coverage_chapter.purity_by_k(ds.train_inputs, answers, 8, bridges, 3, evidence)
    assert purity["k"].tolist() == [1, 2, 3]
    present = sorted({a * 8 + b for a, b, _ in ds.train_inputs.tolist()})
    for k in (1, 3):
        labels = fragment_classes(ds.train_inputs, answers, 8, k, evidence)[(0, 1)]
        merged = [(f, g) for f, g in itertools.combinations(present, 2) if labels[f] == labels[g]]
        row = purity[purity["k"] == k].iloc[0]
        assert row["merged_pairs"] == len(merged)
        if merged:
            assert row["purity"] == pytest.approx(np.mean([bridges[f] == bridges[g] for f, g in merged]))
    assert purity["merged_pairs"].is_monotonic_decreasing  # more evidence required, fewer merges


def test_neighbourhood_examples_pick_the_busiest_centre(small):
    ds, answers, evidence = small
    pool = ds.test_inputs[:5]
    graphs = coverage_chapter.neighbourhood_examples(ds.train_inputs, answers, 8, [pool, pool[:0]], evidence,
                                                     seed=1, k=2, candidates=10)
    assert len(graphs) == 1  # the empty pool is skipped
    totals = [sum(coverage_chapter.substitution_neighbourhood(ds.train_inputs, answers, 8, c, k=2,
                                                              evidence=evidence).graph["neighbours"].values())
              for c in pool]
    assert sum(graphs[0].graph["neighbours"].values()) == max(totals)
    center = coverage_chapter.graph_center(graphs[0])
    assert graphs[0].nodes[center]["center"] and center.startswith("(")


def test_graph_center_and_neighbour_counts():
    graph = nx.Graph(neighbours={("(1,2,3)", "{x1}"): 2, ("(1,2,3)", "{x2}"): 0, ("(1,2,3)", "{x3}"): 1})
    graph.add_node("(0,2,3)", center=False)
    graph.add_node("(1,2,3)", center=True)
    assert coverage_chapter.graph_center(graph) == "(1,2,3)"
    assert coverage_chapter.neighbour_counts(graph) == {"{x1}": 2, "{x3}": 1}


def test_survey_sizes_and_table():
    survey = pd.DataFrame({"N": [20, 30], "n_train": [1000, 3000], "eligible": [4000, 13000],
                           "paper: data for 0.99 accuracy": [None, None],
                           "paper's early draft (superseded)": [None, 4000], "probes": [7, 8]})
    assert coverage_chapter.survey_sizes(survey) == {20: [500, 750, 1000, 1500, 2500],
                                                     30: [1500, 2250, 3000, 4500, 7500]}
    view = coverage_chapter.survey_view(survey)
    assert view.frame.columns.tolist() == ["N (tokens)", "data to 3-cover 90% of type_0", "ID-eligible inputs",
                                           "paper: data for 99% accuracy", "paper's early draft (superseded)"]
    assert view.text.iloc[1].tolist() == ["30", "3,000", "13,000", "", "4,000"]  # missing: an empty cell


def test_coverage_metrics_reads_type0_and_purity():
    table = pd.DataFrame({"type": ["type_0"] * 3 + ["type_1"] * 3, "k": [1, 2, 3] * 2,
                          "covered": [1.0, 0.8, 0.5, 1.0, 0.1, 0.0]})
    purity = pd.DataFrame({"k": [1, 2, 3], "merged_pairs": [90, 20, 10], "purity": [0.2, 0.7, 0.95]})
    metrics = coverage_chapter.coverage_metrics(30, 4000, table, purity, 3, 2.4)
    assert metrics == {"N": 30, "n_train": 4000, "type0_covered_k1": 1.0, "type0_covered_k2": 0.8,
                       "type0_covered_k3": 0.5, "purity_k1": 0.2, "purity_k3": 0.95, "coverage_exponent": 2.4}
    assert list(metrics) == ["N", "n_train", "type0_covered_k1", "type0_covered_k2", "type0_covered_k3",
                             "purity_k1", "purity_k3", "coverage_exponent"]


def test_coverage_percent_view_has_a_row_per_algorithm_and_type():
    table = pd.DataFrame({"type": ["type_0"] * 2 + ["type_1"] * 2, "k": [1, 2] * 2, "covered": [1.0, 0.555, 0.5, 0.0],
                          "n": 10})
    one = coverage_chapter.coverage_percent_view({"definition": table}, "covered (%)")
    assert one.frame.columns.tolist() == ["test type", "k=1", "k=2"]
    assert one.text.to_numpy().tolist() == [["type_0", "100.0", "55.5"], ["type_1", "50.0", "0.0"]]
    both = coverage_chapter.coverage_percent_view({"definition": table, "authors": table}, "covered (%)")
    assert both.frame["algorithm"].tolist() == ["definition", "definition", "authors", "authors"]


def test_chapter_two_tables_name_their_columns():
    purity = pd.DataFrame({"k": [1, 2], "merged_pairs": [1200, 30], "purity": [0.2, 0.987]})
    assert coverage_chapter.purity_view(purity).text.iloc[0].tolist() == ["1", "1,200", "20.0%"]
    side = pd.DataFrame({"t for (0, 1)": [5, 6]}, index=pd.Index([0, 2], name="x3"))
    assert coverage_chapter.shared_context_view(side).text.to_numpy().tolist() == [["0", "5"], ["2", "6"]]


def coverage_curve():
    return pd.DataFrame({"N": [12] * 4 + [16] * 4, "n_train": [200, 200, 400, 400, 300, 300, 600, 600],
                         "k": [2, 3] * 4, "type0_covered": [0.5, 0.2, 1.0, 0.9, 0.4, 0.1, 1.0, 0.8],
                         "share_of_eligible": 0.3})


def test_coverage_vs_data_chart_draws_the_chosen_k_and_offers_the_others():
    spec = coverage_chapter.coverage_vs_data_chart(coverage_curve(), k=3).to_dict()
    (slider,) = [p for p in spec["params"] if p["name"] == "coverage_k"]
    assert slider["value"] == 3 and (slider["bind"]["min"], slider["bind"]["max"]) == (2, 3)
    assert spec["transform"] == [{"filter": "(datum.k === coverage_k)"}]
    assert missing_tooltips(spec) == [] and unexplained_layers(spec) == []
    single = coverage_chapter.coverage_vs_data_chart(coverage_curve().query("k == 3"), k=3).to_dict()
    assert "coverage_k" not in json.dumps(single) and single["transform"] == [{"filter": "(datum.k === 3)"}]
    with pytest.raises(CovlibError, match="k=4 is not in the table"):
        coverage_chapter.coverage_vs_data_chart(coverage_curve(), k=4)


def test_chapter_two_charts_have_tooltips_and_compile_for_jupyterlab(small):
    ds, answers, evidence = small
    graph = coverage_chapter.substitution_neighbourhood(ds.train_inputs, answers, 8, ds.test_inputs[0], k=2,
                                                        evidence=evidence)
    table = pd.DataFrame({"type": ["type_0"] * 2 + ["type_1"] * 2, "k": [1, 2] * 2, "covered": [1, 0.5, 0.5, 0],
                          "n": 10})
    purity = coverage_chapter.purity_by_k(ds.train_inputs, answers, 8, ds.tables["f1"].reshape(-1), 3, evidence)
    for chart in (coverage_chapter.neighbourhood_chart(graph, title="g"),
                  coverage_chapter.coverage_modes_chart({"a": table, "b": table}),
                  coverage_chapter.purity_chart(purity), coverage_chapter.coverage_vs_data_chart(coverage_curve(), 3)):
        spec = chart.to_dict()
        assert missing_tooltips(spec) == [] and unexplained_layers(spec) == []
        vlc.vegalite_to_vega(json.dumps(spec), vl_version="5.8")


# ---- the exercises ----

def test_exercise_1_the_half_covered_k_and_a_check_that_points_without_telling():
    table = pd.DataFrame({"type": ["type_0"] * 5 + ["type_2"] * 5, "k": [1, 2, 3, 4, 5] * 2,
                          "covered": [0.95, 0.8, 0.55, 0.45, 0.2, 0, 0, 0, 0, 0]})
    assert coverage_chapter.half_covered_k(table) == 4
    check = coverage_chapter.check_half_k
    assert check(4, table).startswith("right") and check("4", table).startswith("right")
    low, high = check(3, table), check(5, table)
    assert low.startswith("wrong: k = 3 is too low") and "(55%)" in low and "k = 4" not in low
    assert high.startswith("wrong: k = 5 is too high") and "4" not in high
    assert check(3.5, table).startswith("wrong") and check(None, table).startswith("no answer yet")
    assert check(2, table.assign(covered=0.9)).startswith("cannot check")  # never below one half up to max_k


def test_exercise_2_fits_the_pool_at_every_preset_and_names_its_own_parameter():
    smoke = coverage_chapter.PRESETS["smoke"]
    N, n_train = smoke["N"], smoke["n_train"]
    pool = generate(DatasetConfig("twohop", N, 1, seed=0, test_size_per_type=0)).eligible_count
    assert 2 * n_train >= pool  # twice the chapter's training set does not fit at the smoke preset
    n_try = coverage_chapter.exercise_train_size(N, n_train, 0)
    assert n_train < n_try < pool
    table = coverage_chapter.coverage_by_k(generate(DatasetConfig("twohop", N, n_train, seed=0,
                                                                  test_size_per_type=500)), 3)
    text = coverage_chapter.more_data_text(N, n_train, None, 0, table)
    assert text.startswith(f"with {n_try:,} examples,") and "3-covered" in text
    too_many = coverage_chapter.more_data_text(N, n_train, 2 * pool, 0, table)
    assert too_many.startswith(f"exercise_n_train={2 * pool} is not below the {pool}") and "--" not in too_many
    default = coverage_chapter.PRESETS["default"]
    assert coverage_chapter.exercise_train_size(default["N"], default["n_train"], 0) == 2 * default["n_train"]


def test_the_coincidence_example_separates_real_equivalences_from_shared_coincidences():
    from covlib.chapters import ch02_coverage as ch02

    pairs = ch02.coincidence_pairs(ch02.COINCIDENCE_TASK, 9, 1500, 0).set_index("P")
    bridge = pairs.loc["{x1,x2,x3}"]
    assert bridge["truly equivalent"] >= 0.95 * bridge["pairs"] and bridge["contexts not independent"] == 0
    others = pairs.drop(index="{x1,x2,x3}")
    assert others["truly equivalent"].sum() == 0 and others["contexts not independent"].sum() > 0
    table = ch02.coincidence_coverage(ch02.COINCIDENCE_TASK, 9, 1500, 0).set_index("items")
    assert table.loc["OOD (a fact unseen)", "true equivalences only"] == 0
    assert table.loc["OOD (a fact unseen)", "definition"] > 0.2
    assert table.loc["ID (type_0)", "definition"] >= table.loc["ID (type_0)", "true equivalences only"]
