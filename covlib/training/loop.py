"""The training loop: AdamW, warm-up, early stop, the authors' give-up rule, exact resume."""
from __future__ import annotations

import dataclasses
import functools
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import torch
import torch.nn.functional as F

from covlib.base.device import get_device, seed_everything
from covlib.base.errors import CovlibError
from covlib.base.files import folder_lock, write_text_atomic
from covlib.tasks.folders import DatasetFolder, load_dataset
from covlib.training.batches import IGNORE, Batches, sequence_length, training_batches
from covlib.training.config import RESUME_MAY_CHANGE, RunConfig, TrainConfig, make_config
from covlib.training.evaluation import EvalSet, annotation_fingerprint, dataset_fingerprint, eval_set, evaluate
from covlib.training.model import FastForward, build_model
from covlib.training.runs import (
    CHECKPOINT,
    CONFIG,
    METRICS,
    MODEL,
    RESULT,
    _append_row,
    _check_vocab,
    _read_rows,
    _save_torch_atomic,
    _write_rows,
    first_step_above,
)


def make_optimizer(model: torch.nn.Module, cfg: TrainConfig) -> torch.optim.AdamW:
    """AdamW with weight decay on matrices and embeddings, none on biases and LayerNorm weights
    (the authors' Hugging Face Trainer rule: 1-D parameters are exempt), nor on parameters their model
    marks ``_no_weight_decay`` (Mamba's A_log, a 2-D matrix of decay rates, as in the reference Mamba)."""
    decay, no_decay = [], []
    for _, p in model.named_parameters():
        if p.requires_grad:
            exempt = p.dim() < 2 or getattr(p, "_no_weight_decay", False)
            (no_decay if exempt else decay).append(p)
    groups = [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    # the fused kernel (CPU and CUDA) is deterministic and spares ~1 ms of Python per step per tensor group
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=cfg.betas, fused=True)


def lr_at(step: int, cfg: TrainConfig) -> float:
    """Linear warm-up over ``warmup_steps`` (step is 0-based), then constant."""
    if cfg.warmup_steps and step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    return cfg.lr


def logits_at(forward: Callable, tokens: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor) -> torch.Tensor:
    """Logits [n, vocab] of ``forward`` at positions (rows[i], cols[i]): a FastForward computes only those
    (its ``at``), any other forward computes every position and the labelled ones are picked."""
    if isinstance(forward, FastForward):
        return forward.at(tokens, rows, cols)
    return forward(tokens)[rows, cols]


def train_step(model, opt, batches: Batches, step: int, cfg: TrainConfig, forward: Callable | None = None) -> float:
    """One optimiser step on the step's batch; returns the mean loss per target token.

    ``forward`` (default: the model itself) maps tokens to logits, e.g. a model.FastForward."""
    forward = forward or model
    idx = torch.from_numpy(batches.indices(step, cfg.batch_size)).to(batches.tokens.device)
    tokens, labels = batches.tokens[idx], batches.labels[idx]
    n_targets = (labels != IGNORE).sum().clamp_min(1)
    # positions that carry a label, found once per batch: logits are computed only there
    rows, cols = torch.nonzero(labels != IGNORE, as_tuple=True)
    for g in opt.param_groups:
        g["lr"] = lr_at(step, cfg)
    opt.zero_grad(set_to_none=True)
    total = 0.0
    micro = cfg.batch_size // cfg.grad_accum
    for start in range(0, cfg.batch_size, micro):
        sel = (rows >= start) & (rows < start + micro)
        picked = logits_at(forward, tokens[start : start + micro], rows[sel] - start, cols[sel]).float()
        loss = F.cross_entropy(picked, labels[rows[sel], cols[sel]], reduction="sum") / n_targets
        loss.backward()
        total += float(loss.detach())
    torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
    opt.step()
    return total


@dataclass
class TrainResult:
    """What ``train`` returns: the metrics table, the final metrics, and the threshold crossing."""

    run_dir: Path
    config: RunConfig
    metrics: pd.DataFrame  # wide: one row per evaluation (load_metrics)
    final: dict[str, float]
    first_step_type0_above: int | None  # first evaluated step with acc/type_0 >= config.train.threshold
    stopped: str  # "steps" (budget used), "early_stop" (threshold reached) or "gave_up" (fitted, no success)

    def first_step_above(self, metric: str = "acc/type_0", value: float = 0.9) -> int | None:
        """First evaluated step at which ``metric`` reached ``value`` (None if never)."""
        return first_step_above(self.metrics, metric, value)


def _config_diff(old: dict, new: dict, allowed: tuple[str, ...] = ()) -> list[str]:
    diffs = []
    for section in ("model", "train", "dataset"):
        a, b = old.get(section, {}), new.get(section, {})
        for key in sorted(set(a) | set(b)):
            if section == "train" and key in allowed or section == "dataset" and key == "path":
                continue
            if a.get(key) != b.get(key):
                diffs.append(f"{section}.{key}: {a.get(key)!r} in the folder, {b.get(key)!r} now")
    return diffs


class RunConfigMismatch(CovlibError):
    """A run folder cannot be resumed because it was made with another config (or annotation)."""


def _prepare_run_dir(run_dir: Path, config_doc: dict, resume: bool) -> bool:
    """Write config.json for a new run, or check it for --resume; True when resuming from a checkpoint."""
    cfg_file = run_dir / CONFIG
    if cfg_file.is_file():
        old = json.loads(cfg_file.read_text(encoding="utf-8"))
        old_vocab, new_vocab = old.get("dataset", {}).get("vocab"), config_doc["dataset"]["vocab"]
        if resume and old_vocab is not None and old_vocab != new_vocab:
            raise CovlibError(
                f"cannot resume {run_dir}: it was trained on a vocabulary of {len(old_vocab)} tokens, but "
                f"{config_doc['dataset']['path']} has {len(new_vocab)} (or other tokens); pass the dataset folder "
                f"the run was trained on ({old['dataset'].get('path')})"
            )
        if not resume:
            diffs = _config_diff(old, config_doc)
            what = "a different config (" + "; ".join(diffs[:4]) + ")" if diffs else "a run with this config"
            raise CovlibError(f"{run_dir} already holds {what}; pass --resume (resume=True) to continue it, "
                              "or choose another --out")
        diffs = _config_diff(old, config_doc, RESUME_MAY_CHANGE)
        if diffs:
            raise RunConfigMismatch(f"cannot resume {run_dir}: its config differs: " + "; ".join(diffs)
                              + f". Only {', '.join(RESUME_MAY_CHANGE)} may change on resume; choose another --out")
        write_text_atomic(cfg_file, json.dumps(config_doc, indent=2))
        return (run_dir / CHECKPOINT).is_file()
    run_dir.mkdir(parents=True, exist_ok=True)
    write_text_atomic(cfg_file, json.dumps(config_doc, indent=2))
    return False


def _one_process_per_run_dir(train_fn: Callable[..., TrainResult]) -> Callable[..., TrainResult]:
    """``train_fn(dataset_dir, run_dir, ...)`` run under ``run_dir``'s lock: one process trains a run folder at a time
    (chapters run side by side)."""

    @functools.wraps(train_fn)
    def locked(dataset_dir: str | os.PathLike, run_dir: str | os.PathLike, *args, **kwargs) -> TrainResult:
        with folder_lock(run_dir):
            return train_fn(dataset_dir, run_dir, *args, **kwargs)

    return locked


class WorkClock:
    """Seconds of work: wall time, but on a CPU never more than the CPU time the process used, so that a pause (a
    stopped queue, a suspended laptop) does not count as training; with several threads the wall time is the
    smaller. On a GPU the process waits on the device without using CPU time: wall time alone."""

    def __init__(self, device: str | torch.device) -> None:
        self.on_cpu = torch.device(device).type == "cpu"
        self.start()

    def start(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def seconds(self) -> float:
        wall = time.perf_counter() - self.wall
        return min(wall, time.process_time() - self.cpu) if self.on_cpu else wall


@_one_process_per_run_dir
def train(
    dataset_dir: str | os.PathLike,
    run_dir: str | os.PathLike,
    preset: str = "default",
    overrides: dict | None = None,
    resume: bool = False,
    progress: bool = True,
    callback: Callable[[int, dict | None], None] | None = None,
    device: torch.device | str | None = None,
) -> TrainResult:
    """Train a model on a dataset folder into ``run_dir`` and return its TrainResult.

    ``preset`` is "smoke", "default" or "paper"; ``overrides`` sets any ModelConfig/TrainConfig
    field by name (``{"steps": 4000, "weight_decay": 1.0, "n_layers": 2}``), and ``family`` the model
    family (``{"family": "mamba", "d_state": 16}``: covlib.training.mamba). With ``resume``, a
    run folder holding a checkpoint continues from it (a finished run is returned as it is,
    unless ``steps`` grew); without it, a folder that already holds a run is an error.
    ``callback(step, metrics_or_None)`` runs after every step (metrics at evaluation steps);
    raising from it aborts the run like a kill (tests use this). One process trains a run folder at a time."""
    cfg = make_config(preset, overrides)
    tc = cfg.train
    device = torch.device(device) if device is not None else get_device()
    ds = load_dataset(dataset_dir)
    if ds.test.types is None or not len(ds.test):
        raise CovlibError(f"{ds.path / 'test.json'} holds no test items; regenerate the dataset with a test set")
    n_ctx = sequence_length(ds)
    run_dir = Path(run_dir)
    doc = cfg.to_dict() | {"dataset": {"path": str(Path(ds.path).resolve()), "name": ds.name,
                                       "fingerprint": dataset_fingerprint(ds), "annotation": annotation_fingerprint(ds),
                                       "n_ctx": n_ctx, "vocab": ds.vocab}}
    doc = json.loads(json.dumps(doc))  # tuples become lists, as in the config.json it is compared with
    es = eval_set(ds, device)  # reads test_annotated.json: fail before touching the run folder
    lean = es.restricted_to(tc.eval_types) if tc.eval_types else None  # what evaluations before the last score
    resuming = _prepare_run_dir(run_dir, doc, resume)

    seed_everything(tc.seed)  # init and batch order use their own seeded generators; this covers the rest
    model = build_model(cfg.model, len(ds.vocab), n_ctx, seed=tc.seed, device=device)
    model.train()
    opt = make_optimizer(model, tc)
    forward = FastForward(model) if tc.fast_forward and FastForward.supports(model) else model
    batches = training_batches(ds, tc.seed, device)
    step, elapsed, loss_sum, loss_n = 0, 0.0, 0.0, 0
    rows: list[dict] = []
    if resuming:
        state = torch.load(run_dir / CHECKPOINT, map_location=device, weights_only=False)
        _check_vocab(ds, state["vocab"], run_dir / CHECKPOINT)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        torch.set_rng_state(state["rng"]["torch"])
        step, elapsed, loss_sum, loss_n = state["step"], state["elapsed"], state["loss_sum"], state["loss_n"]
        rows = [r for r in _read_rows(run_dir) if r["step"] <= step]  # drop evaluations after the checkpoint
    else:
        for stale in (METRICS, CHECKPOINT, MODEL, RESULT):
            (run_dir / stale).unlink(missing_ok=True)
    _write_rows(run_dir, rows)

    def checkpoint(stopped: str | None = None) -> None:
        state = {"model": model.state_dict(), "optimizer": opt.state_dict(), "step": step, "elapsed": elapsed,
                 "loss_sum": loss_sum, "loss_n": loss_n, "rng": {"torch": torch.get_rng_state()},
                 "vocab": ds.vocab, "n_ctx": n_ctx, "stopped": stopped}
        _save_torch_atomic(state, run_dir / CHECKPOINT)
        if tc.keep_checkpoints:
            (run_dir / "checkpoints").mkdir(exist_ok=True)
            _save_torch_atomic(state, run_dir / "checkpoints" / f"step_{step:06d}.pt")

    if step == 0 and not rows:  # the untrained model: step 0 of every curve
        rows.append(_eval_row(model, lean or es, tc, 0, 0.0, None, forward))
        _append_row(run_dir, rows[-1])
    stopped = "steps"
    if tc.early_stop and rows and rows[-1].get("acc/type_0", 0.0) >= tc.threshold:
        stopped = "early_stop"
    elif gave_up(rows, tc, len(batches)):
        stopped = "gave_up"
    bar = _progress(progress, step, tc.steps, run_dir.name)
    clock = WorkClock(device)
    try:
        while step < tc.steps and stopped == "steps":
            clock.start()
            loss = train_step(model, opt, batches, step, tc, forward)
            step += 1
            loss_sum, loss_n = loss_sum + loss, loss_n + 1
            row = None
            if step % tc.eval_every == 0 or step == tc.steps:
                row = _eval_row(model, lean or es, tc, step, elapsed + clock.seconds(), loss_sum / max(loss_n, 1),
                                forward)
                loss_sum, loss_n = 0.0, 0
                rows.append(row)
                _append_row(run_dir, row)
                if tc.early_stop and row.get("acc/type_0", 0.0) >= tc.threshold:
                    stopped = "early_stop"
                elif gave_up(rows, tc, len(batches)):
                    stopped = "gave_up"
                if bar is not None:
                    bar.set_postfix({k.split("/")[-1]: round(v, 3) for k, v in row.items() if k.startswith("acc/type_")
                                     or k == "acc/train_inferred"} | {"loss": round(row["train_loss"], 4)}, refresh=False)
            elapsed += clock.seconds()  # training and evaluation
            if bar is not None:
                bar.update(1)
            if stopped == "steps" and step < tc.steps and tc.checkpoint_every and step % tc.checkpoint_every == 0:
                checkpoint()
            if callback is not None:
                callback(step, row)
    finally:
        if bar is not None:
            bar.close()
    if lean is not None and rows and rows[-1]["step"] == step and not _scores_everything(rows[-1], es):
        # the last evaluation scores every type (a finished run resumed from its checkpoint is already whole)
        clock.start()
        rows[-1] = _eval_row(model, es, tc, step, 0.0, rows[-1]["train_loss"], forward)
        elapsed += clock.seconds()
        rows[-1]["elapsed"] = round(elapsed, 3)
        _write_rows(run_dir, rows)
    checkpoint(stopped)
    return _finish(run_dir, cfg, model, ds, n_ctx, rows, stopped)


def gave_up(rows: list[dict], tc: TrainConfig, n_train: int) -> bool:
    """The authors' give-up rule: the training set has been fitted (acc/train_inferred >= fit_threshold)
    since an evaluation at least ``give_up_epochs`` epochs ago, and type_0 never reached the threshold.
    With ``give_up_floor``, that evaluation must also lie at least that many steps back."""
    if not tc.give_up_epochs or not rows:
        return False
    fitted = [r["step"] for r in rows if r.get("acc/train_inferred", 0.0) >= tc.fit_threshold]
    if not fitted or any(r.get("acc/type_0", 0.0) >= tc.threshold for r in rows):
        return False
    past_fit = rows[-1]["step"] - fitted[0]
    return past_fit * tc.batch_size >= tc.give_up_epochs * n_train and past_fit >= tc.give_up_floor


def _scores_everything(row: dict, es: EvalSet) -> bool:
    """Whether an evaluation row holds every metric of ``es``: each type's accuracy and, for CoT, greedy decoding
    (a lean row holds a few types, teacher-forced)."""
    return (all(f"acc/{name}" in row for name, idx in es.groups.items() if len(idx))
            and (not es.cot or "greedy/type_0" in row))


def _eval_row(model, es: EvalSet, tc: TrainConfig, step: int, elapsed: float, train_loss: float | None,
              forward: Callable | None = None) -> dict:
    """One row of metrics.jsonl; the logits come through ``forward`` (the training's FastForward, whose tail
    computes only the positions evaluation reads) when it is one."""
    lr = lr_at(max(step - 1, 0), tc) if step else 0.0
    return {"step": step, "elapsed": round(elapsed, 3), "train_loss": train_loss, "lr": lr} | evaluate(
        model, es, tc.eval_batch_size, forward if isinstance(forward, FastForward) else None)


def _progress(enabled: bool, start: int, total: int, name: str):
    """A progress bar: a widget in JupyterLab; plain text lines every 15 s under `covlib book`
    (COVLIB_PROGRESS=text), whose log shows them, so a long training cell does not look frozen."""
    if not enabled:
        return None
    if os.environ.get("COVLIB_PROGRESS") == "text":
        import sys

        from tqdm import tqdm as text_tqdm

        return text_tqdm(total=total, initial=start, desc=name[-40:], unit="step", file=sys.stdout, mininterval=15,
                         ascii=True, ncols=100)
    from tqdm.auto import tqdm

    return tqdm(total=total, initial=start, desc=name[-40:], unit="step", dynamic_ncols=True)


def _finish(run_dir: Path, cfg: RunConfig, model, ds: DatasetFolder, n_ctx: int, rows: list[dict], stopped: str
            ) -> TrainResult:
    _save_torch_atomic({"model": model.state_dict(), "vocab": ds.vocab, "n_ctx": n_ctx,
                        "model_config": dataclasses.asdict(cfg.model)}, run_dir / MODEL)
    metrics = pd.DataFrame(rows)
    final = {k: v for k, v in rows[-1].items()} if rows else {}
    first = first_step_above(metrics, "acc/type_0", cfg.train.threshold)
    result = TrainResult(run_dir, cfg, metrics, final, first, stopped)
    write_text_atomic(run_dir / RESULT, json.dumps({"stopped": stopped, "first_step_type0_above": first,
                                                    "threshold": cfg.train.threshold, "final": final}, indent=2))
    return result


def n_params(model: torch.nn.Module) -> int:
    """Number of trainable parameters."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
