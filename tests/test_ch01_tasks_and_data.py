"""Chapter 1's helpers: task table, eligibility survey, fact use, the type bit rule, summary and metrics."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from covlib.chapters import ch01_tasks_and_data as tasks_and_data
from covlib.tasks.datasets import DatasetConfig, ensure_dataset, generate
from covlib.tasks.folders import load_dataset
from covlib.tasks.graphs import TASKS


@pytest.fixture(scope="module")
def dataset():
    return generate(DatasetConfig("twohop", 10, n_train=200, seed=3, test_size_per_type=30))


def test_presets_cover_every_preset_with_the_same_knobs():
    assert set(tasks_and_data.PRESETS) == {"smoke", "default", "paper"}
    assert tasks_and_data.PRESETS["default"]["N"] == 30 and tasks_and_data.PRESETS["default"]["n_train"] == 4000
    assert len({frozenset(values) for values in tasks_and_data.PRESETS.values()}) == 1


def test_task_table_lists_arities_and_bridges():
    table = tasks_and_data.task_table([TASKS["twohop"]]).iloc[0]
    assert table["inputs"] == 3 and table["bridges"] == "b1"
    assert table["primitives"] == "f1: X^2->X, f2: X^2->X"


def test_table_corner_and_shapes():
    table = np.arange(64).reshape(8, 8)
    corner = tasks_and_data.table_corner(table, 3)
    assert corner.columns.tolist() == ["x1", "x2=0", "x2=1", "x2=2"] and corner.shape == (3, 4)
    assert corner.loc[corner["x1"] == 2, "x2=1"].item() == 17  # row x1 = 2, column x2 = 1 of an 8 x 8 table
    view = tasks_and_data.table_corner_view(table, 3)
    assert view.frame.columns.tolist() == ["x1 \\ x2", "0", "1", "2"] and view.text.iloc[2].tolist() == ["2", "16", "17", "18"]
    assert tasks_and_data.table_shapes({"f1": table, "f2": table[:2]}) == "f1 (8, 8), f2 (2, 8)"


def test_preimage_summary_reports_spread():
    frame = pd.DataFrame({"preimage_size": [3, 1, 0]})
    text = tasks_and_data.preimage_summary(frame, 3)
    assert "min 0, max 3, mean 1.3" in text and "values never produced: 1" in text
    assert f"standard deviation {np.std([3, 1, 0]):.1f}" in text


def test_eligible_survey_counts_by_brute_force():
    survey = tasks_and_data.eligible_survey([TASKS["twohop"], TASKS["threehop"]], [6, 8], max_inputs=300, seed=5)
    assert list(zip(survey["task"], survey["N"])) == [("twohop", 6)]  # 8^3 and 6^4 exceed the cap
    probe = generate(DatasetConfig("twohop", 6, n_train=1, seed=5, test_size_per_type=0))
    split, f1 = probe.seen_split, probe.tables["f1"]
    eligible = sum(bool(split["f1"][a, b] and split["f2"][f1[a, b], c])
                   for a in range(6) for b in range(6) for c in range(6))
    row = survey.iloc[0]
    assert row["ID-eligible"] == eligible and row["inputs N^m"] == 216
    assert row["eligible share"] == round(eligible / 216, 4) and row["0.7^hops"] == 0.49


def test_fact_usage_by_hand():
    split = {"f1": np.array([[True, True], [False, True]])}
    used = {"f1": np.array([[True, False], [False, False]])}
    row = tasks_and_data.fact_usage(split, used).iloc[0]
    assert (row["facts"], row["seen split"], row["used by training"], row["seen but unused"]) == (4, 3, 1, 2)


def test_usage_by_training_size_counts_facts_of_the_training_inputs():
    assert tasks_and_data.training_sizes(100) == [12, 25, 50, 100]
    assert tasks_and_data.training_sizes(3) == [1, 3]
    usage = tasks_and_data.usage_by_training_size(8, 80, seed=2)
    assert usage["n_train"].tolist() == [10, 20, 40, 80]
    d = generate(DatasetConfig("twohop", 8, n_train=40, seed=2, test_size_per_type=0))
    f1_used = len({(a, b) for a, b, _ in d.train_inputs.tolist()})  # distinct (x1, x2) pairs in training
    assert usage.loc[2, "f1 used / seen split"] == f"{f1_used} / {int(d.seen_split['f1'].sum())}"


def test_types_from_bits():
    flags = pd.DataFrame({"f1 fact used (s1)": [1, 0, 0, 1], "f2 fact used (s2)": [1, 0, 1, 0]})
    assert tasks_and_data.types_from_bits(flags).tolist() == ["type_0", "type_1", "type_2", "type_3"]


def test_fact_flags_follow_the_test_types(dataset):
    flags = tasks_and_data.fact_flags(dataset)
    assert len(flags) == len(dataset.test_inputs)
    type0 = flags[flags["type"] == "type_0"]
    assert len(type0) and (type0["f1 fact used (s1)"] == 1).all() and (type0["f2 fact used (s2)"] == 1).all()
    x1, x2, _ = dataset.test_inputs[0]
    assert flags.iloc[0]["f1 fact used (s1)"] == int(dataset.seen_used["f1"][x1, x2])


def test_folder_round_trip(dataset, tmp_path):
    folder = ensure_dataset(dataset.config, tmp_path)
    files = tasks_and_data.files_table(folder)
    assert {"train.json", "test.json"} <= set(files["file"]) and (files["bytes"] > 0).all()
    assert all(tasks_and_data.matches_generated(load_dataset(folder), dataset).values())
    other = generate(DatasetConfig("twohop", 10, n_train=200, seed=4, test_size_per_type=30))
    assert not tasks_and_data.matches_generated(load_dataset(folder), other)["train inputs equal"]


def test_summary_and_metrics(dataset):
    summary = tasks_and_data.dataset_summary(dataset)
    assert summary["inputs N^3"] == 1000 and summary["n_train"] == 200
    assert sum(v for k, v in summary.items() if k.startswith("test items ")) == len(dataset.test_types)
    assert summary["f1 facts used / seen split"].endswith(f" / {int(dataset.seen_split['f1'].sum())}")
    metrics = tasks_and_data.dataset_metrics(dataset)
    assert metrics["eligible_share"] == pytest.approx(dataset.eligible_count / 1000)
    used = len({(a, b) for a, b, _ in dataset.train_inputs.tolist()})
    assert metrics["f1_used_share"] == pytest.approx(used / dataset.seen_split["f1"].sum())


def test_type_bits_table_counts_each_type_under_its_flags():
    flags = pd.DataFrame({"type": ["type_0", "type_0", "type_1", "type_3", "train_inferred"],
                          "f1 fact used (s1)": [1, 1, 0, 1, 1], "f2 fact used (s2)": [1, 1, 0, 0, 1]})
    table = tasks_and_data.type_bits_table(flags).set_index("type")
    assert table.loc["type_0"].tolist() == [0, 0, 0, 2] and table.loc["type_1"].tolist() == [1, 0, 0, 0]
    assert table.loc["type_3", "s1=1, s2=0 (only f1 used)"] == 1 and table.to_numpy().sum() == 5


def test_the_chapters_tables_read_well(dataset, tmp_path):
    """What the reader sees: headers that say what a column is, numbers with separators and percentages."""
    survey = tasks_and_data.eligible_survey([TASKS["twohop"]], [10, 20], max_inputs=10**4, seed=1)
    view = tasks_and_data.eligible_survey_view(survey)
    assert view.frame.columns[1] == "N (tokens)" and view.text["inputs (N^m)"].tolist() == ["1,000", "8,000"]
    assert all(cell.endswith("%") for cell in view.text["eligible share"])
    summary = tasks_and_data.summary_view(tasks_and_data.dataset_summary(dataset)).text.set_index("quantity")["value"]
    assert summary["inputs N^3"] == "1,000" and summary["task"] == "twohop"
    items = [{"input_text": "a", "target_text": "b", "type": t} for t in ("type_1", "type_0", "type_1")]
    assert [i["type"] for i in tasks_and_data.first_of_each_type(items)] == ["type_0", "type_1"]
    assert tasks_and_data.items_view(items).frame.columns[0] == "type"
    shares = tasks_and_data.type_share_frame(dataset.population, len(dataset.train_inputs), dataset.test_types)
    counts = tasks_and_data.type_counts_view(shares).frame
    assert counts["type"].iloc[0] == tasks_and_data.TRAIN_LABEL and counts["all inputs"].sum() == 1000
    folder = ensure_dataset(dataset.config, tmp_path)
    assert "size (bytes)" in tasks_and_data.files_view(folder).frame


# ---- the exercises ----

def test_the_eligible_share_exercises_count_a_fresh_dataset_and_check_without_telling():
    for task, hops in (("twohop", 2), ("threehop", 3)):
        share = tasks_and_data.eligible_share(task, 42)
        dataset = generate(DatasetConfig(task, 20, 50, seed=42, test_size_per_type=0))  # any training-set size
        assert share == dataset.eligible_count / 20 ** dataset.task.n_inputs
        assert abs(share - 0.7 ** hops) < 0.02  # one factor 0.7 per hop, as 1.3 says
    check = tasks_and_data.check_eligible_share
    assert check(0.49, "twohop", 42, "my_eligible_share").startswith("right")
    assert check(0.343, "threehop", 42, "my_threehop_share").startswith("right")
    wrong = check(0.7, "twohop", 42, "my_eligible_share")
    assert wrong.startswith("wrong: 0.700 is too high") and "0.490" not in wrong and "how many facts" in wrong
    assert "my_threehop_share" in check(None, "threehop", 42, "my_threehop_share")
