"""The coverage helpers chapter 2 uses: class purity, coverage against data, bisection, power-law fit."""
from __future__ import annotations

import numpy as np
import pytest

from covlib.analyses.fits import power_fit
from covlib.chapters.ch02_coverage import coverage_modes_chart, coverage_vs_data, purity_chart
from covlib.coverage.annotate import coverage_by_k
from covlib.coverage.exact import class_purity, fragment_classes
from covlib.coverage.requirement import data_for_coverage
from covlib.figures.charts import coverage_by_k_chart
from covlib.tasks.datasets import DatasetConfig, generate


def test_class_purity_counts_pairs_by_hand():
    labels = np.array([0, 0, 0, 3, 3, 5])  # classes {0,1,2}, {3,4}, {5}
    hidden = np.array([7, 7, 8, 1, 1, 2])
    present = np.ones(6, dtype=bool)
    merged, purity = class_purity(labels, hidden, present)
    assert merged == 3 + 1  # C(3,2) + C(2,2)
    assert purity == pytest.approx((1 + 1) / 4)  # (0,1) and (3,4) agree
    merged, purity = class_purity(labels, hidden, np.array([True, True, False, False, False, True]))
    assert (merged, purity) == (1, 1.0)


def test_classes_at_k3_recover_bridges_on_twohop():
    ds = generate(DatasetConfig("twohop", 20, 2500, seed=1, test_size_per_type=10))
    answers = ds.evaluate(ds.train_inputs)["t"]
    present = np.zeros(400, dtype=bool)
    present[ds.train_inputs[:, 0] * 20 + ds.train_inputs[:, 1]] = True
    low = class_purity(fragment_classes(ds.train_inputs, answers, 20, 1)[(0, 1)], ds.tables["f1"].ravel(), present)
    high = class_purity(fragment_classes(ds.train_inputs, answers, 20, 4)[(0, 1)], ds.tables["f1"].ravel(), present)
    assert high[1] > 0.95 > 0.5 > low[1]  # chance agreements dominate at k=1, not at k=4
    assert low[0] > high[0]


def test_coverage_grows_with_data_and_bisection_brackets_the_target():
    frame = coverage_vs_data("twohop", [12], {12: [150, 400, 800]}, ks=(2, 3), test_size_per_type=200)
    at3 = frame[frame["k"] == 3].sort_values("n_train")["type0_covered"].to_numpy()
    assert np.all(np.diff(at3) >= 0) and at3[-1] > at3[0]
    found = data_for_coverage("twohop", 12, k=3, target=0.8, test_size_per_type=200, rel_tol=0.05)
    assert found["below"] < found["n_train"] <= found["below"] * 1.05 + 1
    def covered(n):
        t = coverage_by_k(generate(DatasetConfig("twohop", 12, n, test_size_per_type=200, seed=0)), 3)
        return t[(t["type"] == "type_0") & (t["k"] == 3)]["covered"].iloc[0]
    assert covered(found["n_train"]) >= 0.8 > covered(found["below"])


def test_power_fit_recovers_exponent_and_coefficient():
    x = np.array([10, 20, 40, 80])
    fit = power_fit(x, 3 * x**2.5)
    assert fit["c"] == pytest.approx(2.5) and fit["a"] == pytest.approx(3) and fit["r2"] == pytest.approx(1)


def test_chapter2_charts_carry_their_data():
    ds = generate(DatasetConfig("twohop", 10, 300, test_size_per_type=30))
    table = coverage_by_k(ds, 4)
    chart = coverage_by_k_chart(table, reference={1: 100, 2: 90})
    assert chart.to_dict()["layer"][0]["mark"]["type"] == "line"
    modes = coverage_modes_chart({"a": table, "b": table})
    assert len(modes.data) == 2 * len(table)
    purity = purity_chart(__import__("pandas").DataFrame({"k": [1, 2], "merged_pairs": [10, 2],
                                                                  "purity": [0.1, 1.0]}))
    assert purity.to_dict()["layer"][1]["encoding"]["y"]["field"] == "purity"
