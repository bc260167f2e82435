"""Chapter 3's helpers: training speed, the edge run's folder and description, the recorded metrics."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from covlib.base.paths import repository_path
from covlib.chapters import ch03_coverage_predicts_generalization as generalization
from covlib.training.loop import TrainResult
from covlib.training.shipped import EDGE_RUN


def metrics_frame() -> pd.DataFrame:
    return pd.DataFrame({"step": [100, 200, 300], "elapsed": [30.0, 60.0, 120.0],
                         "acc/type_0": [0.1, 0.95, 0.97], "acc/type_1": [0.05, 0.04, 0.03],
                         "acc/k<3": [0.0, 0.2, 0.4], "acc/k>3": [0.3, 0.9, 1.0]})


def test_presets_cover_every_preset_with_the_same_knobs():
    assert set(generalization.PRESETS) == {"smoke", "default", "paper"}
    assert generalization.PRESETS["default"]["steps"] == 2000
    assert len({frozenset(values) for values in generalization.PRESETS.values()}) == 1


def test_training_speed():
    assert generalization.training_speed(metrics_frame()) == \
        "trained 300 steps in 2.0 min (2.5 steps/s including evaluation)"


def test_edge_shares_text():
    text = generalization.edge_shares_text({"k<3": 0.104, "k=3": 0.3, "k>3": 0.596})
    assert text == "ID test items of the edge dataset by k-cutoff: 10% below 3, 30% exactly 3, 60% above."


def test_edge_run_folder_without_recomputing(tmp_path):
    assert generalization.edge_run_folder("unused", tmp_path, False, "", False) == repository_path(EDGE_RUN["archive"])
    assert generalization.edge_run_folder("unused", tmp_path, False, str(tmp_path / "mine"), False) == tmp_path / "mine"


def test_describe_run_and_commands(tmp_path):
    config = {"dataset": {"name": "twohop.30.4000"}, "train": {"weight_decay": 1.0}}
    assert generalization.describe_run(tmp_path, metrics_frame(), config) == \
        f"{tmp_path}: twohop.30.4000, 300 steps, weight decay 1.0"
    assert generalization.run_commands(tmp_path) == ""
    (tmp_path / "COMMANDS.txt").write_text("covlib train x\n")
    assert generalization.run_commands(tmp_path) == "covlib train x\n"


def test_central_metrics(tmp_path):
    metrics = metrics_frame()
    result = TrainResult(tmp_path, None, metrics, {"acc/type_0": 0.97, "acc/type_1": 0.03}, None, "steps")
    edge = metrics_frame()
    central = generalization.central_metrics(
        30, 10_000, result, edge, {"k<3": 0.1, "k=3": 0.3, "k>3": 0.6},
        {t: f"acc/{t}" for t in ["train_inferred", "type_0", "type_1"]}, {g: f"acc/{g}" for g in ["k>3", "k=3", "k<3"]})
    assert central == pytest.approx({
        "N": 30, "n_train": 10_000, "steps": 300, "minutes": 2.0, "first_step_type0_0.9": 200,
        "final_type_0": 0.97, "final_type_1": 0.03, "edge_final_k>3": 1.0, "edge_final_k<3": 0.4,
        "edge_share_k<3": 0.1, "edge_share_k=3": 0.3, "edge_share_k>3": 0.6})
    json.dumps(central)  # record_metrics writes it as JSON
