"""Path ambiguity (covlib.chapters.ch06_path_ambiguity): coverage of nontree against twohop, class contents, coverage need, summaries."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from covlib.analyses.iicg import iicg_at, iicg_peaks
from covlib.base.errors import CovlibError
from covlib.chapters.ch06_path_ambiguity import (
    POPULATIONS,
    TASKS,
    describe_cells,
    id_pool_mask,
    merged_pairs,
    paired_datasets,
    population_coverage,
    search_summary,
    write_coverage_need,
)
from covlib.coverage.requirement import first_crossing
from covlib.search.cells import Cell
from covlib.search.probes import PROBE_COLUMNS


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


def test_search_summary_reads_the_table_alone():
    cells = [Cell("nontree", 12, "L4-d128", 0), Cell("nontree", 14, "L4-d128", 0)]
    rows = []
    for n, ok, best in ((500, False, 0.4), (750, False, 0.6)):
        rows.append({"task": "nontree", "N": 12, "model": "L4-d128", "params": 0, "seed": 0, "n_train": n,
                     "eligible": 1000, "success": ok, "stopped": "gave_up", "steps": 100, "best_type0": best,
                     "final_type0": best, "final_train": 1.0, "first_fit_step": 50, "minutes": 1.0, "threshold": 0.99,
                     "give_up_epochs": 100, "step_cap": 6000, "cot": False, "weight_decay": 0.1})
    probes = pd.DataFrame(rows, columns=PROBE_COLUMNS)
    summary = search_summary(cells, probes)
    assert summary["status"].tolist() == ["unreachable", "not started"]  # 750 is the pool less a quarter
    assert summary["largest_n"].iloc[0] == 750 and summary["best_type0_at_largest"].iloc[0] == pytest.approx(0.6)
    text = describe_cells(summary, "non-tree")
    assert "no success even at 750 examples" in text and "not searched yet" in text
    assert "step cap" not in text and not summary["low_capped"].iloc[0]
    capped = probes.assign(stopped=["gave_up", "steps"])  # the largest probe ran out of steps before the rule
    text = describe_cells(search_summary(cells, capped), "non-tree")
    assert "stopped at the step cap" in text


def test_iicg_peaks_skip_the_embeddings_and_refuse_empty_tables():
    table = pd.DataFrame({"task": "nontree", "split": "type_0", "group_by": "x2", "layer": [0, 1, 2],
                          "position": "x2", "iicg": [0.9, 0.3, 0.5]})
    peak = iicg_peaks(table)
    assert peak["layer"].tolist() == [2] and iicg_at(table, 0, "x2", "x2") == pytest.approx(0.9)
    with pytest.raises(CovlibError, match="no IICG rows"):
        iicg_peaks(table.iloc[:0])
    with pytest.raises(CovlibError, match="no IICG for b"):
        iicg_at(table, 1, "x2", "b")
