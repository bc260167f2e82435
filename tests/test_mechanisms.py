"""Mechanistic analyses (covlib.analyses): residual streams, IICG, causal tracing, logit lens, shipped weights."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from covlib.analyses.iicg import by_construction, fixed_positions, iicg_bruteforce, iicg_map, iicg_table, item_groups
from covlib.analyses.lens import logit_lens
from covlib.analyses.residuals import hook_names, open_run, residual_streams, split_items
from covlib.analyses.tracing import (
    CHANGED_POSITION,
    _patched_last_logits,
    corrupted_pairs,
    trace_by_construction,
    trace_map,
    trace_table,
)
from covlib.base.errors import CovlibError
from covlib.cli.main import main as cli_main
from covlib.coverage.annotate import annotate_dataset
from covlib.tasks.datasets import DatasetConfig, ensure_dataset
from covlib.training.loop import train
from covlib.training.runs import load_weights, save_weights


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A tiny model trained for a few hundred steps on twohop N=10 (seconds), with checkpoints kept."""
    root = tmp_path_factory.mktemp("mech")
    ds_dir = ensure_dataset(DatasetConfig("twohop", 10, 450, seed=0, test_size_per_type=150), root / "datasets")
    annotate_dataset(ds_dir, max_k=6)
    run_dir = root / "run"
    train(ds_dir, run_dir, preset="smoke", overrides={"steps": 400, "checkpoint_every": 200, "keep_checkpoints": True},
          progress=False)
    return run_dir, ds_dir


def test_residual_streams_are_the_hooked_activations_in_layer_order(run):
    model, ds, _ = open_run(*run)
    prompts = ds.test.inputs[:37]
    resid = residual_streams(model, prompts, batch_size=16)  # three batches
    assert resid.shape == (37, model.cfg.n_layers + 1, 3, model.cfg.d_model) and resid.dtype == np.float32
    _, cache = model.run_with_cache(torch.as_tensor(prompts, dtype=torch.long))
    last = cache[f"blocks.{model.cfg.n_layers - 1}.hook_resid_post"].numpy()
    np.testing.assert_allclose(resid[:, -1], last, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(resid[:, 0], cache["blocks.0.hook_resid_pre"].numpy(), rtol=1e-5, atol=1e-6)


def test_iicg_equals_brute_force_on_random_data():
    rng = np.random.default_rng(0)
    resid = rng.normal(size=(40, 3, 2, 8)) + rng.normal(size=(5, 1, 1, 8))[rng.integers(0, 5, 40)]
    labels = rng.integers(0, 5, 40)
    fast = iicg_map(resid, labels)
    np.testing.assert_allclose(fast["iicg"], iicg_bruteforce(resid, labels), atol=1e-10)
    assert fast["items"] == 40 and fast["groups"] == len(set(labels.tolist()))


def test_iicg_equals_brute_force_on_a_real_models_residuals(run):
    model, ds, tables = open_run(*run)
    inputs = ds.test.inputs[split_items(ds, "type_0")][:120]
    resid = residual_streams(model, inputs)
    for key in ("b", "t", "x2", "b,x2"):
        kept, labels = item_groups(tables, inputs, key)
        np.testing.assert_allclose(iicg_map(resid[kept], labels)["iicg"], iicg_bruteforce(resid[kept], labels),
                                   atol=1e-9)


def test_groups_keep_one_item_per_determining_fragment_and_use_the_true_bridge(run):
    _, ds, tables = open_run(*run)
    inputs = np.array([[1, 2, 3], [1, 2, 4], [2, 1, 3], [1, 2, 5]])
    kept, labels = item_groups(tables, inputs, "b")
    assert kept.tolist() == [0, 2]  # (1,2) kept once: its first item
    b = tables.tables["f1"]
    assert (labels[0] == labels[1]) == (b[1, 2] == b[2, 1])
    kept_t, _ = item_groups(tables, inputs, "t")
    assert kept_t.tolist() == [0, 1, 2, 3]


def test_iicg_refuses_degenerate_groupings():
    with pytest.raises(CovlibError, match="at least two groups"):
        iicg_map(np.ones((4, 1, 1, 3)), np.zeros(4, dtype=int))
    with pytest.raises(CovlibError, match="every group here holds one item"):
        iicg_map(np.random.default_rng(0).normal(size=(3, 1, 1, 3)), np.arange(3))


def test_corrupted_pairs_change_the_bridge_and_answer_with_seen_facts(run):
    _, ds, tables = open_run(*run)
    inputs = ds.test.inputs[split_items(ds, "train_inferred")]
    clean, corrupted = corrupted_pairs(tables, inputs, "x2", seed=0)
    assert len(clean) > 10
    assert (clean[:, [0, 2]] == corrupted[:, [0, 2]]).all() and (clean[:, 1] != corrupted[:, 1]).all()
    vc, vr = tables.values(clean), tables.values(corrupted)
    assert (vc["b1"] != vr["b1"]).all() and (vc["t"] != vr["t"]).all()
    assert tables.all_facts_seen(corrupted).all() and tables.all_facts_seen(clean).all()
    with pytest.raises(CovlibError, match="unknown variant"):
        corrupted_pairs(tables, inputs, "x9")


def test_patching_the_last_position_after_the_last_block_gives_the_corrupted_logits(run):
    model, ds, tables = open_run(*run)
    clean, corrupted = corrupted_pairs(tables, ds.test.inputs[split_items(ds, "train_inferred")], "x2")
    c, r = torch.as_tensor(clean, dtype=torch.long), torch.as_tensor(corrupted, dtype=torch.long)
    last_hook = hook_names(model.cfg.n_layers)[-1]
    _, cache = model.run_with_cache(r, names_filter=lambda n: n == last_hook)
    patched = _patched_last_logits(model, c, last_hook, 2, cache[last_hook][:, 2])
    torch.testing.assert_close(patched, model(r)[:, -1].float(), rtol=0, atol=1e-5)
    _, clean_cache = model.run_with_cache(c, names_filter=lambda n: n == "blocks.0.hook_resid_post")
    same = _patched_last_logits(model, c, "blocks.0.hook_resid_post", 1, clean_cache["blocks.0.hook_resid_post"][:, 1])
    torch.testing.assert_close(same, model(c)[:, -1].float(), rtol=0, atol=1e-5)
    res = trace_map(model, clean, corrupted)
    assert res["rank"][-1, -1] == pytest.approx(1.0) and res["prob"][-1, -1] == pytest.approx(1.0, abs=1e-4)
    assert res["rank"][0, 1] == pytest.approx(1.0)  # the x2 embedding is the whole difference between the inputs
    assert res["rank"][-1, 0] == 0.0  # after the last block, position x1 no longer reaches the prediction


def test_logit_lens_of_the_last_layer_at_the_last_position_is_the_models_prediction(run):
    model, ds, tables = open_run(*run)
    inputs = ds.test.inputs[:50]
    resid = residual_streams(model, inputs)
    pred = model(torch.as_tensor(inputs, dtype=torch.long))[:, -1].argmax(-1).numpy()
    lens = logit_lens(model, resid, {"pred": pred, "b1": tables.values(inputs)["b1"]})
    top = lens[(lens["target"] == "pred") & (lens["layer"] == model.cfg.n_layers) & (lens["position"] == "x3")]
    assert top["top1"].iloc[0] == 1.0 and top["rank"].iloc[0] == 0.0
    assert set(lens["target"]) == {"pred", "b1"} and len(lens) == 2 * (model.cfg.n_layers + 1) * 3


def test_shipped_weights_round_trip_in_fp16_and_refuse_another_vocabulary(run, tmp_path: Path):
    run_dir, ds_dir = run
    save_weights(run_dir, run_dir / "weights" / "final.pt")
    save_weights(run_dir, run_dir / "weights" / "step_000200.pt", "checkpoints/step_000200.pt")
    model, ds, _ = open_run(run_dir, ds_dir)
    shipped = load_weights(run_dir, "weights/final.pt", ds)
    x = torch.as_tensor(ds.test.inputs[:64], dtype=torch.long)
    # fp16 weights: logits move by a small share of their scale (an absolute bound broke on one-thread
    # numerics, where one logit of 64 x 33 moved by 0.021)
    full, half = model(x), shipped(x)
    assert (half - full).abs().max() <= 1e-2 * full.abs().max()
    assert (shipped(x)[:, -1].argmax(-1) == model(x)[:, -1].argmax(-1)).float().mean() > 0.95
    early = load_weights(run_dir, "weights/step_000200.pt", ds)
    assert not torch.allclose(early(x), shipped(x))
    other = ensure_dataset(DatasetConfig("twohop", 12, 500, seed=0, test_size_per_type=50), tmp_path)
    from covlib.tasks.folders import load_dataset

    with pytest.raises(CovlibError, match="vocabulary"):
        load_weights(run_dir, "weights/final.pt", load_dataset(other))
    with pytest.raises(CovlibError, match="does not exist"):
        load_weights(run_dir, "weights/nope.pt")


def test_iicg_and_trace_tables_and_split_errors(run):
    model, ds, tables = open_run(*run)
    iicg = iicg_table(model, ds, tables, ["b", "t"], ["id_train", "type_0"], k_groups=[None])
    assert set(iicg["split"]) == {"train_inferred", "type_0"} and set(iicg["group_by"]) == {"b", "t"}
    assert len(iicg) == 2 * 2 * (model.cfg.n_layers + 1) * 3
    with pytest.raises(CovlibError, match="unknown split"):
        split_items(ds, "type_9")
    with pytest.raises(CovlibError, match="unknown group key"):
        item_groups(tables, ds.test.inputs[:5], "b2")
    trace = trace_table(model, tables, ds.test.inputs[split_items(ds, "train_inferred")], ["x2"], max_pairs=50)
    assert set(trace["metric"]) == {"rank", "prob"} and trace["pairs"].iloc[0] <= 50


def test_cli_writes_long_tables_and_refuses_bad_input(run, tmp_path: Path, capsys):
    run_dir, ds_dir = run
    out = tmp_path / "iicg.csv"
    base = [sys.executable, "-m", "covlib.cli", "analyze"]
    done = subprocess.run(base + ["iicg", str(run_dir), "--dataset", str(ds_dir), "--group", "b", "--split", "type_0",
                                  "--out", str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    table = pd.read_csv(out)
    assert list(table.columns[:5]) == ["split", "group_by", "layer", "position", "iicg"]
    trace = tmp_path / "trace.csv"
    done = subprocess.run(base + ["trace", str(run_dir), "--dataset", str(ds_dir), "--metric", "rank", "--max-pairs", "40",
                                  "--out", str(trace)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert list(pd.read_csv(trace).columns[:5]) == ["variant", "metric", "layer", "position", "value"]
    for bad, words in (([str(tmp_path), "--group", "b"], "not a run folder"),
                       ([str(run_dir), "--dataset", str(ds_dir), "--group", "zz"], "unknown group key"),
                       ([str(run_dir), "--dataset", str(ds_dir), "--group", "b", "--split", "type_9"], "unknown split")):
        target = tmp_path / "bad.csv"  # in this process: the two runs above already start the command as a reader does
        assert cli_main(["analyze", "iicg", *bad, "--out", str(target)]) == 2
        err = capsys.readouterr().err
        assert words in err and err.count("\n") == 1, err
        assert not target.exists()


def test_cells_flagged_by_construction_are_the_ones_a_real_model_cannot_move(run):
    """Every IICG cell flagged by_construction has within-group cosine 1 (identical vectors), whatever the
    weights; the unflagged cells of the same keys do not."""
    model, ds, tables = open_run(*run)
    table = iicg_table(model, ds, tables, ["b", "x2", "b,x2"], ["type_0"], max_items=150)
    flagged = table[table["by_construction"]]
    assert set(zip(flagged["group_by"], flagged["layer"], flagged["position"])) == {("x2", 0, "x2"), ("b,x2", 0, "x2")}
    np.testing.assert_allclose(flagged["within"], 1.0, atol=1e-5)
    assert (table.loc[~table["by_construction"], "within"] < 0.9999).all()


def test_fixed_positions_reads_inputs_and_written_bridges():
    assert fixed_positions(("b1", "x2"), ["x1", "x2", "x3"]) == {1}
    assert fixed_positions(("b1", "x1"), ["x1", "x2", "x3"]) == {0}
    assert fixed_positions(("b",), ["x1", "x2", "x3", "b1"]) == {3}  # a CoT bridge written at its own position
    assert by_construction(2, 0, {0}) and not by_construction(2, 1, {1}) and by_construction(0, 1, {1})


def test_trace_cells_flagged_by_construction_are_exactly_zero_or_one(run):
    """Before the changed token a patch is an identity (0); the changed token's embedding and the last position
    after the last block are the corrupted input and the output (1). The flags mark these cells and no other."""
    model, ds, tables = open_run(*run)
    clean, corrupted = corrupted_pairs(tables, ds.test.inputs[:300], "x2")
    res = trace_map(model, clean[:100], corrupted[:100])  # t' = the model's own prediction: pairs exist untrained
    n_layers, last = res["prob"].shape[0] - 1, res["prob"].shape[1] - 1
    for layer in range(n_layers + 1):
        for p in range(last + 1):
            trivial = trace_by_construction(layer, p, CHANGED_POSITION["x2"], n_layers, last)
            value = res["prob"][layer, p]
            if p < 1:
                assert trivial and value == pytest.approx(0.0, abs=1e-6)
            elif (layer == n_layers and p == last) or (layer == 0 and p == 1):  # the output; the changed token
                assert trivial and value == pytest.approx(1.0, abs=1e-4) and res["rank"][layer, p] == 1.0
            else:
                assert not trivial


def test_tracing_with_true_answers_traces_the_pairs_the_model_gets_right_on_both(run):
    """trace_table passes the true answers: only pairs the model answers right on both inputs are traced, and
    t' is the corrupted input's true answer. The same maps come from tracing those pairs alone, by hand."""
    model, ds, tables = open_run(*run)
    inputs = ds.test.inputs[split_items(ds, "train_inferred")][:200]
    clean, corrupted = corrupted_pairs(tables, inputs, "x2")  # the pairs trace_table draws from these inputs
    t_clean, t_corr = tables.values(clean)["t"], tables.values(corrupted)["t"]
    with_answers = trace_map(model, clean, corrupted, answers=(t_clean, t_corr))
    with torch.no_grad():
        pred_c = model(torch.as_tensor(clean))[:, -1].argmax(-1).numpy()
        pred_r = model(torch.as_tensor(corrupted))[:, -1].argmax(-1).numpy()
    right = (pred_c == t_clean) & (pred_r == t_corr) & (t_clean != t_corr)
    assert with_answers["pairs"] == int(right.sum()) > 0
    by_hand = trace_map(model, clean[right], corrupted[right])  # t' = the model's own (right) prediction
    np.testing.assert_allclose(with_answers["rank"], by_hand["rank"], atol=1e-9)
    np.testing.assert_allclose(with_answers["prob"], by_hand["prob"], atol=1e-6)
    table = trace_table(model, tables, inputs, ["x2"], max_pairs=len(clean))
    rank = table[table["metric"] == "rank"].pivot(index="layer", columns="position", values="value").to_numpy()
    assert table["pairs"].iloc[0] == with_answers["pairs"]
    np.testing.assert_allclose(rank, with_answers["rank"], atol=1e-9)
