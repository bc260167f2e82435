"""The Mamba model family: it learns through the transformers' loop, resumes exactly, is named by the search's
shapes, counts its parameters, refuses bad settings, and is refused by the TransformerLens analyses."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from test_train import kill_and_resume

from covlib.analyses.lens import logit_lens
from covlib.analyses.residuals import open_run, residual_streams
from covlib.analyses.tracing import trace_map
from covlib.base.errors import CovlibError
from covlib.cli.main import main
from covlib.search.cells import Cell, ProbeRules
from covlib.search.required_data import search
from covlib.tasks.datasets import DatasetConfig, ensure_dataset
from covlib.tasks.folders import load_dataset
from covlib.training.config import make_config, model_params, run_name
from covlib.training.evaluation import eval_set, evaluate
from covlib.training.loop import make_optimizer, train
from covlib.training.mamba import (
    SEQUENTIAL_UP_TO,
    MambaLM,
    MambaModelConfig,
    _CompiledScan,
    causal_depthwise_conv,
    sequential_scan,
)
from covlib.training.model import build_model, model_config_from_dict
from covlib.training.runs import load_metrics, load_model, run_family
from covlib.training.shapes import model_overrides

CPU = torch.device("cpu")
TINY_MAMBA = {"family": "mamba", "n_layers": 1, "d_model": 32, "d_state": 8}
FAST = {"steps": 60, "batch_size": 64, "eval_every": 20, "checkpoint_every": 40, "warmup_steps": 10}


def count(model: torch.nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


@pytest.fixture(scope="module")
def tiny_run(ds10, tmp_path_factory):
    """A short Mamba run (its folder), for the tests that only need one to exist."""
    run = tmp_path_factory.mktemp("runs") / "tiny"
    train(ds10, run, preset="smoke", overrides=TINY_MAMBA | FAST | {"steps": 20}, progress=False)
    return run


# ----------------------------------------------------------------------------- configs, shapes, parameters


def test_family_picks_a_mamba_model_at_the_presets_depth_and_width():
    cfg = make_config("default", {"family": "mamba"})
    assert cfg.model == MambaModelConfig(n_layers=4, d_model=128)
    assert cfg.to_dict()["model"]["family"] == "mamba"
    cfg = make_config("smoke", {"model.family": "mamba", "d_state": "8", "model.expand": 3})
    assert (cfg.model.n_layers, cfg.model.d_model, cfg.model.d_state, cfg.model.expand) == (2, 64, 8, 3)
    # a transformer's config.json carries no family: existing run folders resume unchanged
    assert "family" not in make_config("default").to_dict()["model"]
    assert run_name("twohop.25", make_config("default", {"family": "mamba", "seed": 1})) == (
        "twohop.25_wd-0.1_mamba_layer-4_d-128_seed-1")
    raw = json.loads(json.dumps(cfg.to_dict()["model"]))
    assert model_config_from_dict(raw) == cfg.model


def test_bad_mamba_settings_are_refused_with_a_clear_error():
    with pytest.raises(CovlibError, match="d_state=0 must be a positive integer"):
        make_config("default", {"family": "mamba", "d_state": 0})
    with pytest.raises(CovlibError, match="d_state=-4 must be a positive integer"):
        MambaModelConfig(d_state=-4)
    with pytest.raises(CovlibError, match="'n_heads' is not a setting of a mamba model"):
        make_config("default", {"family": "mamba", "n_heads": 8})
    with pytest.raises(CovlibError, match="'d_state' is not a setting of a transformer model.*family="):
        make_config("default", {"d_state": 8})
    with pytest.raises(CovlibError, match="unknown model family 'rnn'; choose one of: transformer, mamba"):
        make_config("default", {"family": "rnn"})
    with pytest.raises(CovlibError, match="set twice"):
        make_config("default", {"family": "mamba", "model.family": "transformer"})
    with pytest.raises(CovlibError, match="unknown model shape 'mamba-L0-d128'; choose one of: .*mamba-L4-d128"):
        model_overrides("mamba-L0-d128")
    with pytest.raises(CovlibError, match="unknown mamba model config keys"):
        model_config_from_dict({"family": "mamba", "n_layers": 2, "n_heads": 4})


@pytest.mark.parametrize("shape", [MambaModelConfig(), MambaModelConfig(n_layers=3, d_model=40, d_state=5, expand=3,
                                                                        d_conv=2)])
def test_parameter_count_matches_the_built_model(shape):
    assert shape.n_params(13, 4) == count(build_model(shape, 13, 4, seed=0, device=CPU))


def test_named_shapes_of_both_families_record_the_parameters_of_the_model_they_build():
    for shape in ("mamba-L2-d64", "mamba-L4-d128", "L2-d64", "L4-d128"):
        cfg = make_config("default", model_overrides(shape)).model
        assert model_params(shape, 25, 4) == count(build_model(cfg, 26, 4, seed=0, device=CPU)), shape
    assert isinstance(make_config("default", model_overrides("mamba-L4-d128")).model, MambaModelConfig)
    # at the same depth and width the Mamba model is the smaller one (no position embedding, no MLP)
    assert model_params("mamba-L4-d128", 25, 4) < model_params("L4-d128", 25, 4)


def test_init_is_seeded_and_the_forward_is_causal():
    cfg = MambaModelConfig(n_layers=2, d_model=32, d_state=4)
    a, b, c = (build_model(cfg, 11, 4, seed=s, device=CPU) for s in (3, 3, 4))
    assert isinstance(a, MambaLM)
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))
    assert not torch.equal(a.embedding.weight, c.embedding.weight)
    tokens = torch.randint(0, 11, (5, 4))
    changed = tokens.clone()
    changed[:, 2] = (changed[:, 2] + 1) % 11
    out, out_changed = a(tokens), a(changed)
    assert out.shape == (5, 4, 11)
    torch.testing.assert_close(out[:, :2], out_changed[:, :2])  # positions before the change do not see it
    assert not torch.allclose(out[:, 2:], out_changed[:, 2:])


def test_the_scan_matrix_is_exempt_from_weight_decay_like_biases():
    model = build_model(MambaModelConfig(n_layers=1, d_model=32), 11, 4, seed=0, device=CPU)
    decay, no_decay = (set(map(id, g["params"])) for g in make_optimizer(model, make_config("default").train).param_groups)
    params = dict(model.named_parameters())
    assert id(params["mamba.layers.0.mixer.A_log"]) in no_decay and params["mamba.layers.0.mixer.A_log"].dim() == 2
    assert id(params["mamba.layers.0.mixer.in_proj.weight"]) in decay and id(params["embedding.weight"]) in decay
    assert id(params["norm_f.weight"]) in no_decay


# ----------------------------------------------------------------------------- training


def test_mamba_learns_twohop_through_the_training_loop(data_root, tmp_path):
    folder = ensure_dataset(DatasetConfig("twohop", 10, 400, test_size_per_type=100), data_root)
    result = train(folder, tmp_path / "run", preset="smoke", progress=False,
                   overrides={"family": "mamba", "steps": 200, "batch_size": 128, "eval_every": 50})
    final, chance = result.final, 1 / 10
    assert final["step"] == 200 and result.stopped == "steps"
    assert final["acc/train_inferred"] >= 0.9 > 5 * chance  # measured 1.00 from step 100
    assert final["train_loss"] < 0.1
    assert final["acc/type_1"] < 0.3  # neither fact seen: no better than a guess from the answer distribution
    assert list(load_metrics(tmp_path / "run")["step"]) == [0, 50, 100, 150, 200]
    assert run_family(tmp_path / "run") == "mamba"
    model = load_model(tmp_path / "run", dataset_dir=folder, device=CPU)
    assert isinstance(model, MambaLM)
    assert evaluate(model, eval_set(load_dataset(folder), CPU))["acc/type_0"] == final["acc/type_0"]


def test_a_killed_mamba_run_resumes_to_identical_weights_and_metrics(ds10, tmp_path):
    overrides = TINY_MAMBA | FAST
    _, _, wa = kill_and_resume(ds10, tmp_path, overrides)
    assert any(not torch.equal(wa[k], v) for k, v in build_model(  # training moved the weights
        make_config("smoke", overrides).model, len(load_dataset(ds10).vocab), 4, seed=42, device=CPU).state_dict().items())
    with pytest.raises(CovlibError, match="cannot resume .*model.family"):
        train(ds10, tmp_path / "resumed", preset="smoke", overrides=FAST, progress=False, resume=True)


def test_a_search_probes_a_mamba_shape_and_records_its_parameters(tmp_path):
    cell = Cell("twohop", 8, "mamba-L2-d64", 0, start=150)
    rules = ProbeRules(step_cap=25, give_up_epochs=1000, eval_every=25, batch_size=64, test_size_per_type=100)
    table = search([cell], tmp_path / "p.csv", tmp_path / "w", rules, max_probes=1, log=None).table
    row = table.iloc[0]
    assert (row["model"], int(row["n_train"]), int(row["steps"])) == ("mamba-L2-d64", 150, 25)
    run_dir = tmp_path / "w" / "runs" / "twohop.8.150.seed-0_mamba-L2-d64"
    assert run_family(run_dir) == "mamba"
    assert int(row["params"]) == count(load_model(run_dir, device=CPU))


def test_cli_trains_a_named_mamba_shape_and_refuses_bad_ones(ds10, tmp_path, capsys):
    out = tmp_path / "cli"
    args = ["train", str(ds10), "--out", str(out), "--preset", "smoke", "--shape", "mamba-L2-d64", "--steps", "10",
            "--eval-every", "10", "--set", "d_state=4", "--no-progress"]
    assert main(args) == 0
    model = json.loads((out / "config.json").read_text())["model"]
    assert (model["family"], model["n_layers"], model["d_model"], model["d_state"]) == ("mamba", 2, 64, 4)
    capsys.readouterr()
    assert main(["train", str(ds10), "--out", str(tmp_path / "x"), "--shape", "mamba-L0-d128"]) == 2
    assert "unknown model shape 'mamba-L0-d128'" in capsys.readouterr().err
    assert main(["train", str(ds10), "--out", str(tmp_path / "x"), "--set", "family=mamba", "--n-heads", "2"]) == 2
    assert "'n_heads' is not a setting of a mamba model" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


# ----------------------------------------------------------------------------- analyses


def test_transformerlens_analyses_refuse_a_mamba_run(tiny_run, tmp_path, capsys):
    with pytest.raises(CovlibError, match=r"is a mamba model: the TransformerLens analyses .* do not apply.*load_metrics"):
        open_run(tiny_run)
    model = load_model(tiny_run, device=CPU)
    prompts = np.zeros((4, 3), dtype=np.int64)
    with pytest.raises(CovlibError, match="mamba model"):
        residual_streams(model, prompts)
    with pytest.raises(CovlibError, match="mamba model"):
        trace_map(model, prompts, prompts + 1)
    with pytest.raises(CovlibError, match="mamba model"):
        logit_lens(model, np.zeros((4, 2, 3, 32), dtype=np.float32), {"t": np.zeros(4, dtype=np.int64)})
    assert main(["analyze", "lens", str(tiny_run), "--out", str(tmp_path / "lens.csv")]) == 2
    assert "TransformerLens analyses" in capsys.readouterr().err and not (tmp_path / "lens.csv").exists()


@pytest.mark.parametrize("length", [1, 3, 12, SEQUENTIAL_UP_TO, SEQUENTIAL_UP_TO + 1])
def test_the_scan_gives_mambapys_parallel_scan_outputs_and_gradients(length):
    """MambaLM scans short sequences with the compiled sequential_scan, longer ones with mambapy's parallel scan,
    and convolves by shifted products: at every length its logits and gradients are mambapy's own (to float
    rounding)."""
    torch.manual_seed(0)
    model = build_model(MambaModelConfig(n_layers=2, d_model=32), 11, 16, seed=3, device="cpu")
    tokens = torch.randint(0, 11, (6, length))
    params = list(model.parameters())
    ours = model(tokens)
    # one token: A never meets a hidden state, so its gradient is zero (mambapy multiplies it by h_0 = 0)
    g_ours = [torch.zeros_like(p) if g is None else g
              for p, g in zip(params, torch.autograd.grad(ours.square().sum(), params, allow_unused=True))]
    for layer in model.mamba.layers:  # back to mambapy's own parallel scan and Conv1d at every length
        del layer.mixer.selective_scan, layer.mixer.conv1d.forward
    theirs = model(tokens)
    g_theirs = torch.autograd.grad(theirs.square().sum(), params)
    torch.testing.assert_close(ours, theirs, atol=1e-5, rtol=1e-5)
    for a, b in zip(g_ours, g_theirs):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("length", [1, 2, 3, 4, 7])
def test_the_causal_convolution_is_mambapys_conv1d(length):
    conv = torch.nn.Conv1d(8, 8, kernel_size=4, groups=8, padding=3)
    x = torch.randn(5, 8, length, requires_grad=True)
    ours, theirs = causal_depthwise_conv(conv, x), conv(x)[:, :, :length]
    torch.testing.assert_close(ours, theirs)
    for a, b in zip(torch.autograd.grad(ours.square().sum(), [x, conv.weight, conv.bias]),
                    torch.autograd.grad(theirs.square().sum(), [x, conv.weight, conv.bias])):
        torch.testing.assert_close(a, b)


def test_the_scan_runs_uncompiled_with_a_warning_where_compiling_fails():
    scan = _CompiledScan()

    def broken(*args):
        raise RuntimeError("no C++ compiler\nmore detail")

    scan.compiled = broken
    args = (torch.randn(2, 3, 4), torch.rand(2, 3, 4), -torch.rand(4, 5), torch.randn(2, 3, 5),
            torch.randn(2, 3, 5), torch.randn(4))
    with pytest.warns(RuntimeWarning, match="no C\\+\\+ compiler"):
        out = scan(*args)
    torch.testing.assert_close(out, sequential_scan(*args))
    assert scan.compiled is None  # and it does not try again
