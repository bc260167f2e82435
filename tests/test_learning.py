"""Reading a run against coverage: first steps per group, accuracy per k-cutoff, reuse of finished runs."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from covlib.analyses.curves import cutoff_shares, cutoff_table, first_steps
from covlib.base.paths import repository_path
from covlib.tasks.datasets import DatasetConfig, generate, save_dataset
from covlib.training import shipped
from covlib.training.shipped import ShippedRun, ensure_shipped


def test_first_steps_finds_threshold_crossings():
    metrics = pd.DataFrame({"step": [0, 50, 100, 150], "acc/a": [0.0, 0.4, 0.95, 0.99], "acc/b": [0.1, 0.1, 0.2, 0.6]})
    table = first_steps(metrics, {"A": "acc/a", "B": "acc/b", "missing": "acc/zzz"}).set_index("group")
    assert table.loc["A", "first step >= 0.5"] == 100 and table.loc["A", "first step >= 0.9"] == 100
    assert table.loc["B", "first step >= 0.5"] == 150 and pd.isna(table.loc["B", "first step >= 0.9"])
    assert table.loc["B", "final accuracy"] == pytest.approx(0.6)
    assert "missing" not in table.index


def test_cutoff_table_counts_type0_items_per_cutoff(tmp_path):
    from covlib.coverage.annotate import annotate_dataset

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


def test_archive_run_copies_small_files_with_commands(tmp_path):
    from covlib.base.paths import repository_path
    from covlib.training.shipped import archive_run

    run = tmp_path / "run"
    run.mkdir()
    for name, text in {"config.json": "{}", "metrics.jsonl": '{"step": 0}\n', "result.json": "{}",
                       "model.pt": "weights"}.items():
        (run / name).write_text(text)
    dest = archive_run(run, tmp_path / "shipped", ["covlib train x --out run"])
    assert sorted(p.name for p in dest.iterdir()) == ["COMMANDS.txt", "config.json", "metrics.jsonl", "result.json"]
    assert (dest / "COMMANDS.txt").read_text() == "covlib train x --out run\n"
    assert repository_path("covlib/training/shipped.py").is_file()


def test_the_shipped_edge_run_matches_its_recorded_commands():
    from covlib.base.paths import repository_path
    from covlib.training.runs import load_metrics, load_run_config
    from covlib.training.shipped import EDGE_RUN

    folder = repository_path(EDGE_RUN["archive"])
    config = load_run_config(folder)
    assert config["dataset"]["name"] == DatasetConfig(**EDGE_RUN["dataset"]).folder_name
    assert config["train"]["steps"] == EDGE_RUN["overrides"]["steps"]
    assert config["train"]["weight_decay"] == EDGE_RUN["overrides"]["weight_decay"]
    assert load_metrics(folder)["step"].iloc[-1] == EDGE_RUN["overrides"]["steps"]
    assert (folder / "COMMANDS.txt").read_text().splitlines() == EDGE_RUN["commands"]


def test_a_finished_run_is_reused_and_a_changed_annotation_is_refused(tmp_path):
    from covlib.base.errors import CovlibError
    from covlib.coverage.annotate import annotate_dataset
    from covlib.training.shipped import train_or_load

    folder = save_dataset(generate(DatasetConfig("twohop", 8, 250, test_size_per_type=20)), tmp_path)
    annotate_dataset(folder, max_k=4)
    overrides = {"steps": 20, "eval_every": 10, "checkpoint_every": 0}
    first = train_or_load(folder, tmp_path / "run", preset="smoke", overrides=overrides, progress=False)
    again = train_or_load(folder, tmp_path / "run", preset="smoke", overrides=overrides, progress=False)
    pd.testing.assert_frame_equal(first.metrics, again.metrics)
    annotate_dataset(folder, max_k=6)  # other k-cutoffs: the stored k-group metrics are stale
    with pytest.raises(CovlibError, match="retrain = True"):
        train_or_load(folder, tmp_path / "run", preset="smoke", overrides=overrides, progress=False)
    fresh = train_or_load(folder, tmp_path / "run", preset="smoke", overrides=overrides, retrain=True, progress=False)
    assert fresh.metrics["step"].iloc[-1] == 20


def test_ensure_shipped_trains_only_what_it_is_asked_to(tmp_path, monkeypatch):
    runs = {"a": ShippedRun("a", {"task": "twohop", "num_tokens": 6, "n_train": 50}),
            "b": ShippedRun("b", {"task": "nontree", "num_tokens": 6, "n_train": 50})}
    trained = []

    def fake_ship(run, dest, work, progress=True):  # archives what ship_run would, without training
        trained.append((run.name, Path(dest), Path(work)))
        (Path(dest) / run.folder / "weights").mkdir(parents=True)
        (Path(dest) / run.folder / "weights" / "final.pt").write_bytes(b"")
        (Path(dest) / run.folder / "metrics.jsonl").write_text("")

    monkeypatch.setattr(shipped, "ship_run", fake_ship)
    dest, work, ready = ensure_shipped(runs, True, "data/nowhere", tmp_path, "smoke-set")
    assert dest == tmp_path / "smoke-set" / "shipped" and work == tmp_path / "smoke-set"
    assert ready == {"a": True, "b": True} and [t[0] for t in trained] == ["a", "b"]
    ensure_shipped(runs, True, "data/nowhere", tmp_path, "smoke-set")  # already there: nothing trained
    assert len(trained) == 2
    dest, work, ready = ensure_shipped(runs, False, "data/nowhere", tmp_path, "smoke-set")
    assert dest == repository_path("data/nowhere") and work == tmp_path / "ship"
    assert ready == {"a": False, "b": False} and len(trained) == 2  # default reads the archive as it is


def test_cutoff_shares_split_type0_items_at_k(tmp_path):
    from covlib.coverage.annotate import annotate_dataset
    from covlib.tasks.datasets import ensure_dataset
    from covlib.tasks.folders import load_dataset
    from covlib.training.evaluation import annotated_cutoffs

    folder = ensure_dataset(DatasetConfig("twohop", 10, 300, seed=0, test_size_per_type=100), tmp_path)
    annotate_dataset(folder, max_k=6)
    shares = cutoff_shares(folder, k=3)
    assert set(shares) == {"k<3", "k=3", "k>3"} and abs(sum(shares.values()) - 1) < 1e-9
    loaded = load_dataset(folder)
    cutoffs = annotated_cutoffs(loaded)[loaded.test.types == "type_0"]
    assert shares["k=3"] == pytest.approx((cutoffs == 3).mean())
    assert 0 < shares["k>3"] < 1  # a small training set leaves some items weakly covered
