"""Training layer: configs, batches, evaluation metrics, learning, exact resume, bad input, the CLI."""
from __future__ import annotations

import json
import os
import time

import numpy as np
import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from covlib.base.device import cpu_threads
from covlib.base.errors import CovlibError
from covlib.cli.main import main
from covlib.search.cells import PROBE_EVAL_TYPES
from covlib.tasks.datasets import DatasetConfig, ensure_dataset
from covlib.tasks.folders import load_dataset
from covlib.training.batches import IGNORE, training_batches
from covlib.training.config import make_config, run_name
from covlib.training.evaluation import eval_set, evaluate
from covlib.training.loop import train
from covlib.training.model import MODEL_PRESETS, FastForward, ModelConfig, build_model
from covlib.training.runs import load_metrics, load_model

CPU = torch.device("cpu")
FAST = {"steps": 60, "batch_size": 64, "eval_every": 20, "checkpoint_every": 40, "warmup_steps": 10}


@pytest.fixture(scope="module")
def ds8(data_root):
    return ensure_dataset(DatasetConfig("twohop", 8, 200, test_size_per_type=30), data_root)


# ----------------------------------------------------------------------------- configs and models


def test_presets_and_overrides():
    cfg = make_config("default")
    assert (cfg.model.n_layers, cfg.model.d_model, cfg.model.n_heads) == (4, 128, 4)
    assert (cfg.train.lr, cfg.train.betas, cfg.train.batch_size, cfg.train.warmup_steps) == (1e-3, (0.9, 0.98), 512, 100)
    assert make_config("paper").model == ModelConfig(n_layers=8, d_model=768, n_heads=12)
    cfg = make_config("smoke", {"lr": "3e-4", "model.n_layers": 3, "betas": "[0.9, 0.999]", "early_stop": True})
    assert (cfg.train.lr, cfg.model.n_layers, cfg.train.betas, cfg.train.early_stop) == (3e-4, 3, (0.9, 0.999), True)
    with pytest.raises(CovlibError, match="unknown preset 'huge'"):
        make_config("huge")
    with pytest.raises(CovlibError, match="unknown setting 'n_layer'"):
        make_config("smoke", {"n_layer": 2})
    with pytest.raises(CovlibError, match="steps"):
        make_config("smoke", {"steps": "many"})
    assert run_name("twohop.30.10000.diff-f12.inf", make_config("default")) == (
        "twohop.30.10000.diff-f12.inf_wd-0.1_layer-4_head-4_seed-42")


def test_default_model_size_and_seeded_init():
    n = MODEL_PRESETS["default"].n_params(31, 4)
    assert 0.75e6 < n < 0.85e6
    a = build_model(MODEL_PRESETS["smoke"], 11, 4, seed=3, device=CPU)
    b = build_model(MODEL_PRESETS["smoke"], 11, 4, seed=3, device=CPU)
    assert sum(p.numel() for p in a.parameters()) == MODEL_PRESETS["smoke"].n_params(11, 4)
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))


def test_fast_forward_is_the_bridge_function():
    model = build_model(MODEL_PRESETS["smoke"], 11, 5, seed=1, device=CPU)
    assert FastForward.supports(model)
    tokens = torch.randint(0, 11, (16, 4))
    fast, slow = FastForward(model)(tokens), model(tokens)
    torch.testing.assert_close(fast, slow, atol=1e-5, rtol=1e-5)
    g_fast = torch.autograd.grad(fast.square().sum(), list(model.parameters()))
    g_slow = torch.autograd.grad(model(tokens).square().sum(), list(model.parameters()))
    for a, b in zip(g_fast, g_slow):
        torch.testing.assert_close(a, b, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("preset", ["smoke", "default"])
def test_logits_at_labelled_positions_are_bit_identical_to_the_full_forward(preset):
    """Training runs the last block's output projection, MLP, final norm and head at the labelled positions only
    (FastForward.at): the logits there are the same floats as the full forward's, and so are their gradients."""
    model = build_model(MODEL_PRESETS[preset], 31, 6, seed=2, device=CPU)
    fast = FastForward(model)
    tokens = torch.randint(0, 31, (96, 5), generator=torch.Generator().manual_seed(0))
    labelled = torch.zeros(96, 5, dtype=torch.bool)
    labelled[:, 2] = True
    labelled[::3, 3:] = True  # CoT-like items: several labelled positions, not the same in every row
    rows, cols = torch.nonzero(labelled, as_tuple=True)
    full, pruned = fast(tokens)[rows, cols], fast.at(tokens, rows, cols)
    assert pruned.shape == (len(rows), 31) and torch.equal(pruned, full)
    assert torch.equal(fast.tail(tokens, 3), fast(tokens)[:, 3:])
    params = list(model.parameters())
    g_full = torch.autograd.grad(fast(tokens)[rows, cols].square().sum(), params)
    g_pruned = torch.autograd.grad(fast.at(tokens, rows, cols).square().sum(), params)
    for a, b in zip(g_pruned, g_full):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-4)  # the same sums, added in another order


@pytest.mark.parametrize("cot", [False, True])
def test_evaluation_through_the_fast_forward_gives_the_bridge_metrics(data_root, cot):
    folder = ensure_dataset(DatasetConfig("twohop", 6, 60, test_size_per_type=40, cot=cot, seed=3), data_root)
    ds = load_dataset(folder)
    model = build_model(MODEL_PRESETS["smoke"], len(ds.vocab), 6, seed=4, device=CPU)
    es = eval_set(ds, CPU)
    slow, fast = evaluate(model, es), evaluate(model, es, forward=FastForward(model))
    assert slow.keys() == fast.keys() and any(k.startswith("greedy/") for k in fast) == cot
    for key in slow:
        if key.startswith("loss/"):
            assert fast[key] == pytest.approx(slow[key], rel=1e-5)
        else:
            assert fast[key] == slow[key], key


# ----------------------------------------------------------------------------- batches


def test_batches_are_epochwise_shuffles_and_pure_in_step(ds10):
    ds = load_dataset(ds10)
    batches = training_batches(ds, seed=5, device=CPU)
    n = len(batches)
    stream = np.concatenate([batches.indices(s, 64) for s in range(-(-2 * n // 64))])
    assert sorted(stream[:n]) == list(range(n)) and sorted(stream[n : 2 * n]) == list(range(n))
    assert not np.array_equal(stream[:n], stream[n : 2 * n])
    fresh = training_batches(ds, seed=5, device=CPU)
    assert np.array_equal(fresh.indices(7, 64), batches.indices(7, 64))
    # tokens are prompt + target[:-1]; the label is the target at the position that predicts it
    m = ds.train.inputs.shape[1]
    assert torch.equal(batches.tokens[:, :m], torch.from_numpy(ds.train.inputs.astype(np.int64)))
    assert torch.equal(batches.labels[:, m - 1], torch.from_numpy(ds.train.answers.astype(np.int64)))
    assert (batches.labels[:, : m - 1] == IGNORE).all()


def test_items_with_other_prompt_lengths_are_padded_and_masked(data_root):
    folder = ensure_dataset(DatasetConfig("parallel_twohop", 5, 150, test_size_per_type=5, include_atomic=True), data_root)
    ds = load_dataset(folder)
    assert ds.train_extra, "include_atomic should add 2-token training items"
    b = training_batches(ds, 0, CPU)
    extra = ds.train_extra[0]
    rows = slice(len(ds.train), len(ds.train) + len(extra))
    assert torch.equal(b.tokens[rows, :2], torch.from_numpy(extra.inputs.astype(np.int64)))
    assert torch.equal(b.labels[rows, 1], torch.from_numpy(extra.answers.astype(np.int64)))
    assert (b.labels[rows, 2:] == IGNORE).all() and (b.labels[rows, :1] == IGNORE).all()
    assert ((b.labels != IGNORE).sum(1) == 1).all()


# ----------------------------------------------------------------------------- evaluation


class LookupModel(torch.nn.Module):
    """Predicts the true next token of every test sequence, except the answer of chosen items."""

    def __init__(self, ds, wrong_answer: set[int], d_vocab: int):
        super().__init__()
        self.next_token: dict[tuple, int] = {}
        for i, (p, t) in enumerate(zip(ds.test.inputs.tolist(), ds.test.targets.tolist())):
            seq = p + t
            for j in range(len(p), len(seq)):
                tok = seq[j]
                if j == len(seq) - 1 and i in wrong_answer:
                    tok = (tok + 1) % ds.num_tokens
                self.next_token[tuple(seq[:j])] = tok
        self.d_vocab = d_vocab

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        logits = torch.zeros(*tokens.shape, self.d_vocab)
        for r, row in enumerate(tokens.tolist()):
            for j in range(len(row)):
                logits[r, j, self.next_token.get(tuple(row[: j + 1]), 0)] = 5.0
        return logits


@pytest.mark.parametrize("cot", [False, True])
def test_metrics_per_type_and_k_group_match_a_manual_count(data_root, cot):
    folder = ensure_dataset(DatasetConfig("twohop", 6, 60, test_size_per_type=12, cot=cot, seed=1), data_root)
    ds = load_dataset(folder)
    rng = np.random.default_rng(0)
    wrong = set(rng.choice(len(ds.test), size=len(ds.test) // 3, replace=False).tolist())
    # an annotation as `covlib coverage` writes it: k_cutoff per item, plus covered_{k} duplicates
    ks = rng.integers(0, 6, size=len(ds.test))
    table = np.array(ds.vocab, dtype=object)
    items = [{"input_text": "".join(table[p]), "target_text": "", "type": t,
              "k_cutoff": None if t == "train_inferred" else int(k)}  # training inputs: null (always covered)
             for p, t, k in zip(ds.test.inputs, ds.test.types, ks)]
    items += [dict(it, type=f"covered_{it['k_cutoff']}", k_cutoff=99) for it in items if it["type"] == "type_0"]
    (folder / "test_annotated.json").write_text(json.dumps(items))
    try:
        metrics = evaluate(LookupModel(ds, wrong, len(ds.vocab)), eval_set(ds, CPU), batch_size=7)
    finally:
        (folder / "test_annotated.json").unlink()
    ok = np.array([i not in wrong for i in range(len(ds.test))])
    for t in ds.test_types:
        sel = ds.test.types == t
        assert metrics[f"acc/{t}"] == pytest.approx(ok[sel].mean())
        assert metrics[f"answer_acc/{t}"] == pytest.approx(ok[sel].mean())
        assert metrics[f"loss/{t}"] > 0
        assert (f"greedy/{t}" in metrics) == cot
        if cot:
            assert metrics[f"greedy/{t}"] == pytest.approx(ok[sel].mean())
    id_items = ds.test.types == "type_0"
    assert {"acc/k<3", "acc/k=3", "acc/k>3"} <= metrics.keys()
    for name, mask in (("k<3", ks < 3), ("k=3", ks == 3), ("k>3", ks > 3), ("k=5", ks == 5)):
        if (id_items & mask).any():
            assert metrics[f"acc/{name}"] == pytest.approx(ok[id_items & mask].mean()), name
    # loss of a perfect prediction with logit margin 5 over d_vocab-1 zeros, for correct items
    perfect = -np.log(np.exp(5) / (np.exp(5) + len(ds.vocab) - 1))
    all_right = LookupModel(ds, set(), len(ds.vocab))
    m2 = evaluate(all_right, eval_set(ds, CPU))
    assert m2["loss/type_0"] == pytest.approx(perfect, rel=1e-5) and m2["acc/type_1"] == 1.0


def test_stale_annotation_is_a_clear_error(ds8, tmp_path):
    ds = load_dataset(ds8)
    (ds8 / "test_annotated.json").write_text(json.dumps([{"input_text": "<t_0>", "type": "type_0", "k_cutoff": 1}]))
    try:
        with pytest.raises(CovlibError, match="rerun `covlib coverage`"):
            eval_set(ds, CPU)
        with pytest.raises(CovlibError, match="rerun `covlib coverage`"):
            train(ds8, tmp_path / "run", preset="smoke", progress=False)
        assert not (tmp_path / "run").exists()
    finally:
        (ds8 / "test_annotated.json").unlink()


# ----------------------------------------------------------------------------- training


def test_smoke_training_learns_well_above_chance(data_root, tmp_path):
    folder = ensure_dataset(DatasetConfig("twohop", 15, 1500, test_size_per_type=100), data_root)
    # weight decay 1.0 speeds the jump from memorising to generalising at small N
    result = train(folder, tmp_path / "run", preset="smoke", overrides={"steps": 400, "batch_size": 256,
                   "weight_decay": 1.0}, progress=False)
    final, chance = result.final, 1 / 15
    assert final["step"] == 400 and result.stopped == "steps"
    assert final["acc/train_inferred"] >= 0.95
    assert final["acc/type_0"] >= 3 * chance  # measured 0.36; ID generalisation has started
    assert final["acc/type_1"] < final["acc/type_0"] / 2  # OOD (neither fact seen) stays near chance
    assert final["train_loss"] < 0.1
    table = load_metrics(tmp_path / "run")
    assert list(table["step"]) == list(range(0, 401, 50))
    assert table.equals(result.metrics)
    long = load_metrics(tmp_path / "run", long=True)
    assert set(long.columns) == {"step", "metric", "value"} and "acc/type_0" in set(long["metric"])
    # the saved model is the trained one
    model = load_model(tmp_path / "run", dataset_dir=folder, device=CPU)
    again = evaluate(model, eval_set(load_dataset(folder), CPU))
    assert again["acc/type_0"] == final["acc/type_0"]
    cfg = json.loads((tmp_path / "run" / "config.json").read_text())
    assert cfg["preset"] == "smoke" and cfg["model"]["n_layers"] == 2 and cfg["dataset"]["n_ctx"] == 4


def test_early_stop_records_the_crossing(ds10, tmp_path):
    res = train(ds10, tmp_path / "run", preset="smoke", progress=False,
                overrides=FAST | {"early_stop": True, "threshold": 0.0})
    assert res.stopped == "early_stop" and res.first_step_type0_above == 0 and res.final["step"] == 0


def test_a_pause_inside_a_step_is_not_counted_as_training(ds10, tmp_path, monkeypatch):
    import covlib.training.loop as loop

    plain = loop.train_step

    def paused_once(model, opt, batches, step, *args):
        if step == 3:
            time.sleep(1.5)  # as a stopped queue: wall time passes, the process uses no CPU
        return plain(model, opt, batches, step, *args)

    monkeypatch.setattr(loop, "train_step", paused_once)
    res = train(ds10, tmp_path / "run", preset="smoke", progress=False, overrides=FAST | {"steps": 10})
    assert res.final["elapsed"] < 1.0, res.final["elapsed"]
    clock = loop.WorkClock("cuda") if torch.cuda.is_available() else None
    if clock is not None:  # on a GPU the process waits on the device: wall time alone
        time.sleep(0.2)
        assert clock.seconds() >= 0.2


def _weights(run_dir):
    return torch.load(run_dir / "model.pt", weights_only=False)["model"]


def kill_and_resume(ds, tmp_path, overrides: dict):
    """Train ``overrides`` straight, and again killed at step 50 (after the checkpoint and the evaluation at 40,
    which the resume must undo) then resumed; assert both give identical metrics and weights. Returns
    (straight result, resumed result, resumed weights)."""
    straight = train(ds, tmp_path / "straight", preset="smoke", overrides=overrides, progress=False)

    class Killed(Exception):
        pass

    def kill_at_50(step, row):
        if step == 50:
            raise Killed

    with pytest.raises(Killed):
        train(ds, tmp_path / "resumed", preset="smoke", overrides=overrides, progress=False, callback=kill_at_50)
    assert not (tmp_path / "resumed" / "model.pt").exists()
    resumed = train(ds, tmp_path / "resumed", preset="smoke", overrides=overrides, progress=False, resume=True)
    assert straight.metrics.drop(columns="elapsed").equals(resumed.metrics.drop(columns="elapsed"))
    wa, wb = _weights(tmp_path / "straight"), _weights(tmp_path / "resumed")
    assert wa.keys() == wb.keys() and all(torch.equal(wa[k], wb[k]) for k in wa)
    return straight, resumed, wb


def test_killed_run_resumes_to_identical_weights_and_metrics(ds10, tmp_path):
    _, resumed, _ = kill_and_resume(ds10, tmp_path, FAST)
    # resuming a finished run changes nothing; a larger budget continues it
    again = train(ds10, tmp_path / "resumed", preset="smoke", overrides=FAST, progress=False, resume=True)
    assert again.final == resumed.final
    longer = train(ds10, tmp_path / "resumed", preset="smoke", overrides=FAST | {"steps": 80}, progress=False, resume=True)
    assert longer.final["step"] == 80 and list(longer.metrics["step"]) == [0, 20, 40, 60, 80]


# ----------------------------------------------------------------------------- bad input


def test_bad_input_is_refused_without_overwriting(ds10, ds8, tmp_path):
    run = tmp_path / "run"
    train(ds10, run, preset="smoke", overrides=FAST | {"steps": 20}, progress=False)
    before = {f.name: f.read_bytes() for f in run.iterdir()}
    with pytest.raises(CovlibError, match="vocabulary"):
        train(ds8, run, preset="smoke", overrides=FAST | {"steps": 20}, progress=False, resume=True)
    with pytest.raises(CovlibError, match="vocabulary"):
        load_model(run, dataset_dir=ds8)
    with pytest.raises(CovlibError, match=r"different config \(train.lr"):
        train(ds10, run, preset="smoke", overrides=FAST | {"steps": 20, "lr": 0.1}, progress=False)
    with pytest.raises(CovlibError, match="cannot resume .*train.lr"):
        train(ds10, run, preset="smoke", overrides=FAST | {"steps": 20, "lr": 0.1}, progress=False, resume=True)
    with pytest.raises(CovlibError, match="already holds a run with this config"):
        train(ds10, run, preset="smoke", overrides=FAST | {"steps": 20}, progress=False)
    with pytest.raises(CovlibError, match="unknown preset"):
        train(ds10, run, preset="nope", progress=False)
    assert {f.name: f.read_bytes() for f in run.iterdir()} == before
    with pytest.raises(CovlibError, match="not a run folder"):
        load_model(tmp_path / "empty")


# ----------------------------------------------------------------------------- command line


def test_cli_end_to_end(ds8, tmp_path, capsys):
    out = tmp_path / "cli_run"
    args = ["train", str(ds8), "--out", str(out), "--preset", "smoke", "--steps", "30", "--eval-every", "10",
            "--set", "batch_size=32", "--no-progress"]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "type_0" in printed and "train_inferred" in printed and "step 30" in printed
    assert len(load_metrics(out)) == 4
    assert main(args) == 2
    assert "--resume" in capsys.readouterr().err
    assert main(args + ["--resume", "--steps", "40"]) == 0
    assert len(load_metrics(out)) == 5
    assert main(["train", str(ds8), "--out", str(tmp_path / "x"), "--preset", "big"]) == 2
    assert "unknown preset 'big'" in capsys.readouterr().err
    assert main(["train", str(ds8), "--out", str(tmp_path / "x"), "--set", "nokey"]) == 2


def test_early_stop_inside_the_loop_stops_at_the_first_evaluation_that_reaches_the_threshold(ds10, tmp_path):
    straight = train(ds10, tmp_path / "straight", preset="smoke", overrides=FAST, progress=False)
    curve = straight.metrics.set_index("step")["acc/type_0"]
    assert curve.loc[40] > curve.loc[0]  # the smoke model learns something by step 40
    threshold = float(curve.loc[20:40].max())
    first = int(curve[curve >= threshold].index[0])
    assert first > 0
    stopped = train(ds10, tmp_path / "stopped", preset="smoke", progress=False,
                    overrides=FAST | {"early_stop": True, "threshold": threshold})
    assert stopped.stopped == "early_stop" and stopped.final["step"] == first == stopped.first_step_type0_above
    prefix = straight.metrics[straight.metrics["step"] <= first].drop(columns="elapsed").reset_index(drop=True)
    assert stopped.metrics.drop(columns="elapsed").reset_index(drop=True).equals(prefix)


def test_a_run_killed_after_an_evaluation_that_follows_its_checkpoint_resumes_exactly(ds10, tmp_path):
    """Checkpoint at 40, evaluations at 40 and 50, killed at 55: the row of step 50 is dropped on resume and
    recomputed, and the resumed run equals one trained in one go."""
    cadence = FAST | {"eval_every": 10, "checkpoint_every": 40}
    straight = train(ds10, tmp_path / "straight", preset="smoke", overrides=cadence, progress=False)

    class Killed(Exception):
        pass

    def kill_at_55(step, row):
        if step == 55:
            raise Killed

    with pytest.raises(Killed):
        train(ds10, tmp_path / "resumed", preset="smoke", overrides=cadence, progress=False, callback=kill_at_55)
    assert 50 in set(load_metrics(tmp_path / "resumed")["step"])  # the evaluation after the checkpoint was written
    resumed = train(ds10, tmp_path / "resumed", preset="smoke", overrides=cadence, progress=False, resume=True)
    assert list(resumed.metrics["step"]) == list(range(0, 61, 10))
    assert straight.metrics.drop(columns="elapsed").equals(resumed.metrics.drop(columns="elapsed"))
    wa, wb = _weights(tmp_path / "straight"), _weights(tmp_path / "resumed")
    assert all(torch.equal(wa[k], wb[k]) for k in wa)


def test_cpu_threads_are_one_unless_the_environment_says_otherwise(monkeypatch):
    monkeypatch.delenv("COVLIB_THREADS", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert cpu_threads() == 1
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    assert cpu_threads() == 2
    monkeypatch.setenv("COVLIB_THREADS", "3")  # covlib's own setting wins
    assert cpu_threads() == 3
    monkeypatch.setenv("COVLIB_THREADS", "many")
    with pytest.raises(CovlibError, match="COVLIB_THREADS='many' is not a number of threads"):
        cpu_threads()


@pytest.mark.parametrize("cot", [False, True])
def test_lean_evaluation_trains_and_decides_exactly_as_scoring_every_type(data_root, tmp_path, cot):
    # three-hop has eight test types: a lean evaluation scores four of them (and no greedy decoding of CoT)
    folder = ensure_dataset(DatasetConfig("threehop", 6, 150, test_size_per_type=30, cot=cot), data_root)
    rules = FAST | {"steps": 400, "batch_size": 32, "lr": 3e-3, "early_stop": True, "give_up_epochs": 10.0}
    full = train(folder, tmp_path / "full", preset="smoke", overrides=rules, progress=False)
    lean = train(folder, tmp_path / "lean", preset="smoke", overrides=rules | {"eval_types": PROBE_EVAL_TYPES},
                 progress=False)
    assert full.stopped == "gave_up" and lean.stopped == full.stopped  # the give-up decision was taken
    kept = ["step", "train_loss", *(f"acc/{t}" for t in PROBE_EVAL_TYPES)]
    assert lean.metrics[kept].equals(full.metrics[kept])
    between = lean.metrics.iloc[:-1]
    assert between["acc/type_7"].isna().all() and between.filter(like="greedy/").isna().all().all()
    assert {k: v for k, v in lean.final.items() if k != "elapsed"} == {k: v for k, v in full.final.items() if k != "elapsed"}
    wa, wb = _weights(tmp_path / "full"), _weights(tmp_path / "lean")
    assert all(torch.equal(wa[k], wb[k]) for k in wa)
    # resuming the finished lean run leaves its last, whole evaluation as it was
    again = train(folder, tmp_path / "lean", preset="smoke", overrides=rules | {"eval_types": PROBE_EVAL_TYPES},
                  progress=False, resume=True)
    assert again.final == lean.final


def test_lean_evaluation_must_keep_the_types_the_decisions_read():
    with pytest.raises(CovlibError, match="train_inferred"):
        make_config("smoke", {"eval_types": ["type_0", "type_1"]})
