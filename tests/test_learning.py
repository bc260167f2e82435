"""Reading a run against coverage: first steps per group, accuracy per k-cutoff, reuse of finished runs."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from covlib.data import DatasetConfig, generate, save_dataset
from covlib.learning import cutoff_table, first_steps


def test_first_steps_finds_threshold_crossings():
    metrics = pd.DataFrame({"step": [0, 50, 100, 150], "acc/a": [0.0, 0.4, 0.95, 0.99], "acc/b": [0.1, 0.1, 0.2, 0.6]})
    table = first_steps(metrics, {"A": "acc/a", "B": "acc/b", "missing": "acc/zzz"}).set_index("group")
    assert table.loc["A", "first step >= 0.5"] == 100 and table.loc["A", "first step >= 0.9"] == 100
    assert table.loc["B", "first step >= 0.5"] == 150 and pd.isna(table.loc["B", "first step >= 0.9"])
    assert table.loc["B", "final accuracy"] == pytest.approx(0.6)
    assert "missing" not in table.index


def test_cutoff_table_counts_type0_items_per_cutoff(tmp_path):
    from covlib.coverage import annotate_dataset

    folder = save_dataset(generate(DatasetConfig("twohop", 10, 300, test_size_per_type=30)), tmp_path)
    annotate_dataset(folder, max_k=6)
    annotated = json.loads((folder / "test_annotated.json").read_text())
    n_test = len(json.loads((folder / "test.json").read_text()))
    cutoffs = [it["k_cutoff"] for it in annotated[:n_test] if it["type"] == "type_0"]
    metrics = pd.DataFrame({"step": [0, 10], **{f"acc/k={k}": [0.0, k / 10] for k in set(cutoffs)}})
    table = cutoff_table(metrics, folder, threshold=0.5)
    assert table["n"].sum() == len(cutoffs)
    for row in table.to_dict("records"):
        assert row["n"] == cutoffs.count(row["k_cutoff"])
        assert row["accuracy"] == pytest.approx(row["k_cutoff"] / 10)
        if row["k_cutoff"] >= 5:
            assert row["first_step_50"] == 10
        else:
            assert pd.isna(row["first_step_50"])
