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
        f"{tmp_path.name}: twohop.30.4000, 300 steps, weight decay 1.0"  # no machine path for readers
    shipped = repository_path(EDGE_RUN["archive"])
    assert generalization.describe_run(shipped, metrics_frame(), config).startswith(f"{EDGE_RUN['archive']}: ")
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


def seed_runs() -> dict[int, pd.DataFrame]:
    """Two seeds' curves: seed 1 learns in the order of evidence, seed 2 has k=3 and k<3 swapped at the end and
    never brings k<3 to 50%."""
    one = pd.DataFrame({"step": [0, 100, 200], "acc/k<3": [0.0, 0.3, 0.6], "acc/k=3": [0.0, 0.5, 0.8],
                        "acc/k>3": [0.0, 0.7, 0.9], "acc/type_1": [0.03, 0.03, 0.04]})
    two = pd.DataFrame({"step": [0, 100, 200], "acc/k<3": [0.0, 0.2, 0.4], "acc/k=3": [0.0, 0.1, 0.3],
                        "acc/k>3": [0.0, 0.6, 1.0], "acc/type_1": [0.03, 0.02, 0.03]})
    return {1: one, 2: two}


def test_seed_table_order_and_metrics_read_every_seed():
    table = generalization.seed_group_table(seed_runs())
    first = table.set_index(["seed", "group"])["first_step"]
    assert first[(1, "k<3")] == 200 and first[(1, "k=3")] == 100 and first[(1, "k>3")] == 100
    assert pd.isna(first[(2, "k<3")]) and pd.isna(first[(2, "k=3")]) and first[(2, "k>3")] == 100
    order = generalization.ordering_by_seed(table).set_index("seed")
    # seed 1: finals 0.6 < 0.8 < 0.9, steps 200 >= 100 >= 100; seed 2: finals 0.4 > 0.3 (order broken),
    # steps never, never, 100 (inf >= inf >= 100 holds)
    assert order.loc[1].tolist() == [True, True] and order.loc[2].tolist() == [False, True]
    metrics = generalization.seed_metrics(table, generalization.ordering_by_seed(table))
    assert metrics["edge_seeds"] == 2
    assert metrics["edge_acc_k_lt3_mean"] == pytest.approx(0.5)
    assert metrics["edge_acc_k_lt3_sd"] == pytest.approx(((0.1 ** 2 + 0.1 ** 2) / 1) ** 0.5)  # n-1 in the sd
    assert metrics["edge_acc_k_gt3_mean"] == pytest.approx(0.95)
    assert metrics["edge_order_final_all_seeds"] == 0 and metrics["edge_order_learned_all_seeds"] == 1
    text = generalization.seeds_text(table, generalization.ordering_by_seed(table))
    assert "k<3 50.0% ± 14.1% (40.0%-60.0%)" in text and "in 1 of 2 seeds" in text


def test_seed_curves_keep_each_seed_and_their_mean_with_its_range():
    curves = generalization.seed_curves(seed_runs(), every=100)
    assert set(curves["step"]) == {0, 100, 200}
    mean = curves[(curves["seed"] == generalization.SEED_LABEL) & (curves["group"] == "k>3")].set_index("step")
    assert mean.loc[100, ["accuracy", "low", "high"]].tolist() == pytest.approx([0.65, 0.6, 0.7])
    one = curves[(curves["seed"] == "1") & (curves["group"] == "type_1 (OOD)")]
    assert one["accuracy"].tolist() == pytest.approx([0.03, 0.03, 0.04])


def test_the_live_run_is_read_from_its_archive_only_when_its_config_matches(tmp_path, monkeypatch):
    from covlib.training.config import make_config
    config = make_config("default", {"steps": 2000, "eval_every": 50, "seed": 42})
    archive = tmp_path / "archive"
    archive.mkdir()
    (archive / "config.json").write_text(json.dumps(config.to_dict() | {"dataset": {"name": "twohop.30.10000"}}))
    (archive / "metrics.jsonl").write_text("\n".join(json.dumps(r) for r in [
        {"step": 0, "acc/type_0": 0.0}, {"step": 50, "acc/type_0": 0.995}]) + "\n")
    (archive / "result.json").write_text(json.dumps({"stopped": "steps", "final": {"acc/type_0": 0.995}}))
    read = generalization.shipped_result(archive, config, "twohop.30.10000")
    assert read is not None and read.final == {"acc/type_0": 0.995} and read.first_step_type0_above == 50
    assert generalization.shipped_result(archive, config, "twohop.30.6000") is None
    other = make_config("default", {"steps": 4000, "eval_every": 50, "seed": 42})
    assert generalization.shipped_result(archive, other, "twohop.30.10000") is None
    assert generalization.shipped_result(tmp_path / "missing", config, "twohop.30.10000") is None


# ---- the exercises ----

def test_exercise_1_the_first_group_to_half_accuracy_and_its_check():
    metrics = pd.DataFrame({"step": [0, 100, 200, 300], "acc/k<3": [0, 0.1, 0.2, 0.3],
                            "acc/k=3": [0, 0.2, 0.6, 0.9], "acc/k>3": [0, 0.6, 0.9, 1.0]})
    assert generalization.first_groups(metrics) == ["k>3"]
    assert generalization.first_groups(metrics.assign(**{"acc/k=3": metrics["acc/k>3"]})) == ["k=3", "k>3"]
    check = generalization.check_first_group
    assert check("k>3", metrics).startswith("right")
    assert check("k=3", metrics) == ("wrong: k=3 reaches 50%, but another group gets there earlier. Hint: which items "
                                     "does the coverage principle say are learned first?")
    assert check("k<3", metrics) == "wrong: k<3 never reaches 50% accuracy in this run."
    assert check("k>4", metrics).startswith("wrong") and check(None, metrics).startswith("no answer yet")
    assert check("k>3", metrics.assign(**{"acc/k>3": 0.1, "acc/k=3": 0.1})).startswith("cannot check")
