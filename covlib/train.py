"""Training (SPEC §3): the authors' recipe sized for a CPU, with per-type evaluation and exact resume.

Python API for the book::

    result = train(dataset_dir, run_dir, preset="default", overrides={"steps": 2000})
    result.metrics                    # pandas DataFrame, one row per evaluation (see load_metrics)
    result.final                      # dict: the last evaluation's metrics
    result.first_step_type0_above     # first evaluated step with acc/type_0 >= threshold, or None
    model = load_model(run_dir)       # TransformerBridge with the final weights, in eval mode

Sequences are ``prompt + target[:-1]`` (teacher forcing; the final ``</a>`` carries no loss and
is not fed), so ``n_ctx = prompt length + target length``. The loss is the mean cross-entropy
over target tokens only (the answer, plus the bridges for chain of thought). Items with another
prompt length (``train_extra``, e.g. included atomic facts) are right-padded and masked.

Metric names (flat, one column each; ``{t}`` is a test type such as ``type_0``):

- ``acc/{t}``: teacher-forced accuracy: every target token after the prompt is the argmax.
- ``answer_acc/{t}``: teacher-forced accuracy of the answer token alone (equals acc for non-CoT).
- ``loss/{t}``: mean cross-entropy per target token.
- ``greedy/{t}``: CoT only: greedy decoding (bridges, then answer) ends in the right answer.
- ``acc/k<3``, ``acc/k=3``, ``acc/k>3``, ``acc/k={k}`` (and ``greedy/...`` for CoT): type_0 test
  items grouped by k-cutoff, when DATASET_DIR/test_annotated.json exists (``covlib coverage``).
- ``step``, ``elapsed`` (wall seconds of training and evaluation, summed over resumed calls), ``train_loss`` (mean
  loss over the steps since the previous evaluation), ``lr``.

A run folder holds ``config.json``, ``metrics.jsonl`` (one JSON line per evaluation),
``checkpoint.pt`` (latest; model + optimizer + RNG state + step + loss accumulator),
optionally ``checkpoints/step_NNNNNN.pt``, and at the end ``model.pt`` and ``result.json``.
The batch order is a pure function of (seed, step) (seeded epoch-wise shuffles), the model has
no dropout, and the learning rate is a function of the step, so a run killed at any point and
resumed from its last checkpoint ends with exactly the same weights and metrics.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F

from covlib.errors import CovlibError
from covlib.io import DatasetFolder, load_dataset, write_json_atomic
from covlib.model import MODEL_PRESETS, FastForward, ModelConfig, build_model, model_config_from_dict

IGNORE = -100  # label of positions that carry no loss
CONFIG, METRICS, CHECKPOINT, MODEL, RESULT = "config.json", "metrics.jsonl", "checkpoint.pt", "model.pt", "result.json"
ANNOTATED = "test_annotated.json"
ALWAYS_COVERED = 10**6  # k-cutoff given to training inputs (null in test_annotated.json)


# ----------------------------------------------------------------------------- configs


@dataclass(frozen=True)
class TrainConfig:
    """Optimisation and bookkeeping knobs; the defaults are the measured CPU recipe (SPEC §3)."""

    steps: int = 2000  # fixed step budget
    batch_size: int = 512
    grad_accum: int = 1  # micro-batches per step (same result, less memory: the paper preset)
    lr: float = 1e-3
    betas: tuple[float, float] = (0.9, 0.98)
    weight_decay: float = 0.1  # on weight matrices and embeddings; never on biases or LayerNorm
    warmup_steps: int = 100  # linear warm-up, then constant
    grad_clip: float = 1.0
    seed: int = 42  # model init and batch order
    eval_every: int = 50
    eval_batch_size: int = 2048
    checkpoint_every: int = 250  # also at the end; 0 = only at the end
    keep_checkpoints: bool = False  # also keep checkpoints/step_NNNNNN.pt (for training-dynamics analyses)
    threshold: float = 0.99  # type_0 accuracy whose first crossing is recorded
    early_stop: bool = False  # stop at the first evaluation with acc/type_0 >= threshold
    # the authors' give-up rule (SPEC §5.2): stop once the training set has been fitted (acc/train_inferred
    # >= fit_threshold) for this many epochs without reaching the threshold; 0 = never give up
    give_up_epochs: float = 0.0
    fit_threshold: float = 0.99
    fast_forward: bool = True  # train through model.FastForward (same function, fused ops, no hook wrappers)

    def __post_init__(self) -> None:
        object.__setattr__(self, "betas", tuple(float(b) for b in self.betas))
        positive = ("steps", "batch_size", "grad_accum", "eval_every", "eval_batch_size")
        for name in positive:
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise CovlibError(f"{name}={getattr(self, name)!r} must be a positive integer")
        if self.batch_size % self.grad_accum:
            raise CovlibError(f"batch_size={self.batch_size} must be a multiple of grad_accum={self.grad_accum}")
        if self.give_up_epochs < 0:
            raise CovlibError(f"give_up_epochs={self.give_up_epochs} must be 0 (never give up) or more")
        if self.checkpoint_every < 0 or self.warmup_steps < 0:
            raise CovlibError("checkpoint_every and warmup_steps must be 0 or more")
        if not self.lr > 0 or self.weight_decay < 0 or not self.grad_clip > 0:
            raise CovlibError(f"lr={self.lr} and grad_clip={self.grad_clip} must be > 0, weight_decay >= 0")


TRAIN_PRESETS: dict[str, TrainConfig] = {
    "smoke": TrainConfig(steps=300, batch_size=128, warmup_steps=20, eval_every=50, checkpoint_every=100),
    "default": TrainConfig(),
    # the authors' run: AdamW (0.9, 0.999), lr 8e-4 after 2000 warm-up steps, batch 16,384, eval every 25
    "paper": TrainConfig(steps=62_500, batch_size=16_384, grad_accum=8, lr=8e-4, betas=(0.9, 0.999),
                         warmup_steps=2000, eval_every=25, checkpoint_every=500, early_stop=True),
}
PRESETS = tuple(TRAIN_PRESETS)
RESUME_MAY_CHANGE = ("steps", "early_stop", "threshold", "keep_checkpoints", "checkpoint_every", "eval_batch_size",
                     "give_up_epochs", "fit_threshold")


@dataclass(frozen=True)
class RunConfig:
    """Everything that determines a run: model shape, optimisation, and which preset it came from."""

    model: ModelConfig
    train: TrainConfig
    preset: str = "default"

    def to_dict(self) -> dict:
        return {"preset": self.preset, "model": dataclasses.asdict(self.model), "train": dataclasses.asdict(self.train)}


def make_config(preset: str = "default", overrides: dict | None = None) -> RunConfig:
    """A preset's RunConfig with ``overrides`` applied (flat keys such as ``lr`` or ``n_layers``,
    or dotted ones such as ``model.d_model``); unknown presets or keys raise CovlibError."""
    if preset not in TRAIN_PRESETS:
        raise CovlibError(f"unknown preset {preset!r}; choose one of: {', '.join(PRESETS)}")
    model, tr = MODEL_PRESETS[preset], TRAIN_PRESETS[preset]
    m_names = {f.name: f for f in dataclasses.fields(ModelConfig)}
    t_names = {f.name: f for f in dataclasses.fields(TrainConfig)}
    m_set, t_set = {}, {}
    for key, value in (overrides or {}).items():
        scope, _, name = key.rpartition(".")
        if scope in ("", "model") and name in m_names:
            m_set[name] = _coerce(value, getattr(model, name), key)
        elif scope in ("", "train") and name in t_names:
            t_set[name] = _coerce(value, getattr(tr, name), key)
        else:
            raise CovlibError(
                f"unknown setting {key!r}; model settings: {', '.join(m_names)}; training settings: {', '.join(t_names)}"
            )
    return RunConfig(dataclasses.replace(model, **m_set), dataclasses.replace(tr, **t_set), preset)


def _coerce(value, current, key: str):
    """Parse CLI strings (``--set lr=3e-4``) into the type of the field's current value."""
    if isinstance(value, str) and not isinstance(current, str):
        try:
            value = json.loads(value.replace("(", "[").replace(")", "]"))
        except json.JSONDecodeError:
            raise CovlibError(f"cannot read {key}={value!r}: expected a value like {current!r}") from None
    if isinstance(current, bool) and not isinstance(value, bool):
        raise CovlibError(f"{key} must be true or false, got {value!r}")
    if isinstance(current, float) and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if isinstance(current, tuple) and isinstance(value, list):
        value = tuple(value)
    if current is not None and not isinstance(value, type(current)):
        raise CovlibError(f"{key} must be a {type(current).__name__} like {current!r}, got {value!r}")
    return value


def run_name(dataset_name: str, cfg: RunConfig) -> str:
    """The authors' run-folder style: ``<dataset>_wd-0.1_layer-4_head-4_seed-42``."""
    return f"{dataset_name}_wd-{cfg.train.weight_decay:g}_layer-{cfg.model.n_layers}_head-{cfg.model.n_heads}_seed-{cfg.train.seed}"


# ----------------------------------------------------------------------------- data as tensors


@dataclass
class Batches:
    """The training set as one right-padded token array plus labels (IGNORE where no loss)."""

    tokens: torch.Tensor  # (n, T) long: prompt + target[:-1], padded
    labels: torch.Tensor  # (n, T) long: label at position i is the token at i+1 when it is a target
    seed: int
    _perms: dict[int, np.ndarray] = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return len(self.tokens)

    def indices(self, step: int, batch_size: int) -> np.ndarray:
        """Item indices of step ``step`` (0-based): a window on a stream of seeded epoch shuffles.

        A pure function of (seed, step), so a resumed run sees exactly the batches it would have seen."""
        n = len(self)
        pos = np.arange(step * batch_size, (step + 1) * batch_size, dtype=np.int64)
        epochs, offsets = pos // n, pos % n
        out = np.empty(batch_size, dtype=np.int64)
        for e in np.unique(epochs):
            mask = epochs == e
            out[mask] = self._perm(int(e))[offsets[mask]]
        return out

    def _perm(self, epoch: int) -> np.ndarray:
        if epoch not in self._perms:
            if len(self._perms) > 4:
                self._perms.clear()
            self._perms[epoch] = np.random.default_rng([self.seed, epoch]).permutation(len(self))
        return self._perms[epoch]


def sequence_length(ds: DatasetFolder) -> int:
    """n_ctx for a dataset: the longest prompt + target (the final </a> is not fed)."""
    splits = [ds.train, ds.test, *ds.train_extra]
    return max(s.inputs.shape[1] + s.targets.shape[1] for s in splits if len(s))


def training_batches(ds: DatasetFolder, seed: int, device: torch.device) -> Batches:
    """Every training item (train.json, all prompt lengths) as padded tokens and masked labels."""
    n_ctx = sequence_length(ds)
    width = n_ctx - 1
    pad = ds.vocab.index("</a>")
    tokens, labels = [], []
    for split in [ds.train, *ds.train_extra]:
        m, L = split.inputs.shape[1], split.targets.shape[1]
        seq = np.concatenate([split.inputs, split.targets], axis=1).astype(np.int64)
        tok = np.full((len(split), width), pad, dtype=np.int64)
        tok[:, : m + L - 1] = seq[:, :-1]
        lab = np.full((len(split), width), IGNORE, dtype=np.int64)
        lab[:, m - 1 : m + L - 1] = split.targets
        tokens.append(tok)
        labels.append(lab)
    return Batches(torch.from_numpy(np.concatenate(tokens)).to(device), torch.from_numpy(np.concatenate(labels)).to(device), seed)


def dataset_fingerprint(ds: DatasetFolder) -> str:
    """A short hash of the vocabulary and every train/test item: identifies the data a run saw."""
    h = hashlib.sha256(json.dumps(ds.vocab).encode())
    for split in [ds.train, ds.test, *ds.train_extra]:
        h.update(np.ascontiguousarray(split.inputs, dtype=np.int32).tobytes())
        h.update(np.ascontiguousarray(split.targets, dtype=np.int32).tobytes())
    if ds.test.types is not None:
        h.update("\n".join(ds.test.types.tolist()).encode())
    return h.hexdigest()[:16]


def annotation_fingerprint(ds: DatasetFolder) -> str | None:
    """A short hash of test_annotated.json (the k-cutoffs the k-group metrics use), None if absent."""
    file = Path(ds.path) / ANNOTATED
    return hashlib.sha256(file.read_bytes()).hexdigest()[:16] if file.is_file() else None


# ----------------------------------------------------------------------------- evaluation


def k_cutoffs(ds: DatasetFolder) -> np.ndarray | None:
    """k-cutoff of every test item from DATASET_DIR/test_annotated.json, or None if the file is absent.

    The file (written by ``covlib coverage``) holds the test items each with an integer "k_cutoff",
    plus duplicated type_0 items typed "covered_{k}" (the authors' format), which are ignored here.
    A null k_cutoff (a training input: covered at every k) becomes ALWAYS_COVERED."""
    file = Path(ds.path) / ANNOTATED
    if not file.is_file():
        return None
    try:
        raw = json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise CovlibError(f"{file} is not valid JSON ({exc}); rerun `covlib coverage` on the dataset") from None
    by_text: dict[str, int] = {}
    for item in raw if isinstance(raw, list) else []:
        if not isinstance(item, dict) or str(item.get("type", "")).startswith("covered_"):
            continue
        if isinstance(item.get("input_text"), str) and "k_cutoff" in item:
            # training inputs are covered at every k and carry null: give them a cutoff above any k
            by_text[item["input_text"]] = item["k_cutoff"] if isinstance(item["k_cutoff"], int) else ALWAYS_COVERED
    table = np.array(ds.vocab, dtype=object)
    texts = ["".join(row) for row in table[ds.test.inputs].tolist()]
    missing = sum(t not in by_text for t in texts)
    if missing:
        raise CovlibError(
            f"{file} gives no k_cutoff for {missing} of the {len(texts)} items of test.json; it belongs to another "
            "dataset or an older version: rerun `covlib coverage` on this dataset folder"
        )
    return np.array([by_text[t] for t in texts], dtype=np.int64)


@dataclass
class EvalSet:
    """The test set as tensors, with the item groups every metric is averaged over."""

    prompts: torch.Tensor  # (n, m) long
    targets: torch.Tensor  # (n, L) long
    groups: dict[str, np.ndarray]  # metric suffix ("type_0", "k<3", ...) -> item indices

    @property
    def cot(self) -> bool:
        return self.targets.shape[1] > 1


def eval_set(ds: DatasetFolder, device: torch.device) -> EvalSet:
    """Group test items per type and, when annotated, type_0 items per k-cutoff group and per k."""
    types = ds.test.types
    groups = {t: np.flatnonzero(types == t) for t in ds.test_types}
    ks = k_cutoffs(ds)
    if ks is not None:
        id_items = types == "type_0"
        for name, mask in (("k<3", ks < 3), ("k=3", ks == 3), ("k>3", ks > 3)):
            groups[name] = np.flatnonzero(id_items & mask)
        for k in sorted(set(ks[id_items].tolist()) - {ALWAYS_COVERED}):
            groups[f"k={k}"] = np.flatnonzero(id_items & (ks == k))
    prompts = torch.from_numpy(ds.test.inputs.astype(np.int64)).to(device)
    targets = torch.from_numpy(ds.test.targets.astype(np.int64)).to(device)
    return EvalSet(prompts, targets, groups)


@torch.no_grad()
def predict(model: torch.nn.Module, prompts: torch.Tensor, targets: torch.Tensor, batch_size: int = 2048) -> dict[str, torch.Tensor]:
    """Per-item teacher-forced results: ``correct`` (all target tokens), ``answer_correct``, ``loss``
    (mean CE per target token) and, when targets have more than one token, ``greedy_correct``."""
    m, L = prompts.shape[1], targets.shape[1]
    out: dict[str, list[torch.Tensor]] = {"correct": [], "answer_correct": [], "loss": []}
    if L > 1:
        out["greedy_correct"] = []
    for start in range(0, len(prompts), batch_size):
        p, t = prompts[start : start + batch_size], targets[start : start + batch_size]
        seq = torch.cat([p, t[:, :-1]], dim=1)
        logits = model(seq)[:, m - 1 :].float()
        hit = logits.argmax(-1) == t
        out["correct"].append(hit.all(1))
        out["answer_correct"].append(hit[:, -1])
        out["loss"].append(F.cross_entropy(logits.transpose(1, 2), t, reduction="none").mean(1))
        if L > 1:
            out["greedy_correct"].append(greedy_decode(model, p, L)[:, -1] == t[:, -1])
    return {k: torch.cat(v).cpu() for k, v in out.items()}


@torch.no_grad()
def greedy_decode(model: torch.nn.Module, prompts: torch.Tensor, length: int) -> torch.Tensor:
    """Greedily decode ``length`` tokens after each prompt (bridges, then answer, for CoT)."""
    seq = prompts
    for _ in range(length):
        seq = torch.cat([seq, model(seq)[:, -1].argmax(-1, keepdim=True)], dim=1)
    return seq[:, prompts.shape[1] :]


def evaluate(model: torch.nn.Module, es: EvalSet, batch_size: int = 2048) -> dict[str, float]:
    """Every metric (see the module docstring) of ``model`` on the test set, without gradients."""
    was_training = model.training
    model.eval()
    try:
        res = {k: v.numpy() for k, v in predict(model, es.prompts, es.targets, batch_size).items()}
    finally:
        model.train(was_training)
    metrics: dict[str, float] = {}
    for name, idx in es.groups.items():
        if not len(idx):
            continue
        metrics[f"acc/{name}"] = float(res["correct"][idx].mean())
        if name.startswith("k"):
            if "greedy_correct" in res:
                metrics[f"greedy/{name}"] = float(res["greedy_correct"][idx].mean())
            continue
        metrics[f"answer_acc/{name}"] = float(res["answer_correct"][idx].mean())
        metrics[f"loss/{name}"] = float(res["loss"][idx].mean())
        if "greedy_correct" in res:
            metrics[f"greedy/{name}"] = float(res["greedy_correct"][idx].mean())
    return metrics


# ----------------------------------------------------------------------------- optimisation


def make_optimizer(model: torch.nn.Module, cfg: TrainConfig) -> torch.optim.AdamW:
    """AdamW with weight decay on matrices and embeddings, none on biases and LayerNorm weights
    (the authors' Hugging Face Trainer rule: 1-D parameters are exempt)."""
    decay, no_decay = [], []
    for _, p in model.named_parameters():
        if p.requires_grad:
            (decay if p.dim() >= 2 else no_decay).append(p)
    groups = [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    # the fused kernel (CPU and CUDA) is deterministic and spares ~1 ms of Python per step per tensor group
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=cfg.betas, fused=True)


def lr_at(step: int, cfg: TrainConfig) -> float:
    """Linear warm-up over ``warmup_steps`` (step is 0-based), then constant."""
    if cfg.warmup_steps and step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    return cfg.lr


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
        logits = forward(tokens[start : start + micro])
        picked = logits[rows[sel] - start, cols[sel]].float()
        loss = F.cross_entropy(picked, labels[rows[sel], cols[sel]], reduction="sum") / n_targets
        loss.backward()
        total += float(loss.detach())
    torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
    opt.step()
    return total


# ----------------------------------------------------------------------------- run folders


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


def first_step_above(metrics: pd.DataFrame, metric: str = "acc/type_0", value: float = 0.9) -> int | None:
    """First evaluated step at which ``metric`` reached ``value`` in a load_metrics table, else None."""
    if metric not in metrics:
        return None
    hits = metrics.loc[metrics[metric] >= value, "step"]
    return int(hits.iloc[0]) if len(hits) else None


def load_metrics(run_dir: str | os.PathLike, long: bool = False) -> pd.DataFrame:
    """metrics.jsonl as a DataFrame: wide (one row per evaluation, columns step, elapsed,
    train_loss, lr and every metric name) or, with ``long=True``, tidy rows (step, metric, value)
    that altair charts directly."""
    if not (Path(run_dir) / METRICS).is_file():
        raise CovlibError(f"{run_dir} holds no {METRICS}; train a model there first with `covlib train`")
    df = pd.DataFrame(_read_rows(Path(run_dir)))
    if long:
        df = df.melt(id_vars=["step"], var_name="metric", value_name="value").dropna()
    return df


def load_run_config(run_dir: str | os.PathLike) -> dict:
    """config.json of a run folder (model, train, dataset, preset)."""
    file = Path(run_dir) / CONFIG
    if not file.is_file():
        raise CovlibError(f"{run_dir} is not a run folder (no {CONFIG}); train one with `covlib train`")
    return json.loads(file.read_text(encoding="utf-8"))


def load_model(run_dir: str | os.PathLike, dataset_dir: str | os.PathLike | None = None, device=None, checkpoint: str | None = None):
    """The trained TransformerBridge of a run folder (final ``model.pt``, else the latest checkpoint),
    in eval mode. With ``dataset_dir``, check that the dataset's vocabulary is the model's."""
    run_dir = Path(run_dir)
    meta = load_run_config(run_dir)
    file = run_dir / (checkpoint or (MODEL if (run_dir / MODEL).is_file() else CHECKPOINT))
    if not file.is_file():
        raise CovlibError(f"{run_dir} holds no {MODEL} or {CHECKPOINT}; the run has not saved weights yet")
    state = torch.load(file, map_location="cpu", weights_only=False)
    if dataset_dir is not None:
        _check_vocab(load_dataset(dataset_dir), state["vocab"], file)
    model = build_model(model_config_from_dict(meta["model"]), len(state["vocab"]), state["n_ctx"],
                        seed=meta["train"]["seed"], device=device)
    model.load_state_dict(state["model"])
    model.eval()
    return model


def _check_vocab(ds: DatasetFolder, vocab: list[str], where: Path) -> None:
    if list(ds.vocab) != list(vocab):
        raise CovlibError(
            f"the vocabulary of {ds.path} ({len(ds.vocab)} tokens) does not match the one {where} was trained on "
            f"({len(vocab)} tokens); pass the dataset folder the run was trained on"
        )


def _save_torch_atomic(obj, path: Path) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    torch.save(obj, tmp)
    os.replace(tmp, path)


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
        write_json_atomic(cfg_file, json.dumps(config_doc, indent=2))
        return (run_dir / CHECKPOINT).is_file()
    run_dir.mkdir(parents=True, exist_ok=True)
    write_json_atomic(cfg_file, json.dumps(config_doc, indent=2))
    return False


# ----------------------------------------------------------------------------- the loop


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
    field by name (``{"steps": 4000, "weight_decay": 1.0, "n_layers": 2}``). With ``resume``, a
    run folder holding a checkpoint continues from it (a finished run is returned as it is,
    unless ``steps`` grew); without it, a folder that already holds a run is an error.
    ``callback(step, metrics_or_None)`` runs after every step (metrics at evaluation steps);
    raising from it aborts the run like a kill (tests use this)."""
    from covlib.device import get_device, seed_everything

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
        rows.append(_eval_row(model, es, tc, 0, 0.0, None))
        _append_row(run_dir, rows[-1])
    stopped = "steps"
    if tc.early_stop and rows and rows[-1].get("acc/type_0", 0.0) >= tc.threshold:
        stopped = "early_stop"
    elif gave_up(rows, tc, len(batches)):
        stopped = "gave_up"
    bar = _progress(progress, step, tc.steps, run_dir.name)
    try:
        while step < tc.steps and stopped == "steps":
            t0 = time.perf_counter()
            loss = train_step(model, opt, batches, step, tc, forward)
            step += 1
            loss_sum, loss_n = loss_sum + loss, loss_n + 1
            row = None
            if step % tc.eval_every == 0 or step == tc.steps:
                row = _eval_row(model, es, tc, step, elapsed + time.perf_counter() - t0, loss_sum / max(loss_n, 1))
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
            elapsed += time.perf_counter() - t0  # wall time of training and evaluation
            if bar is not None:
                bar.update(1)
            if stopped == "steps" and step < tc.steps and tc.checkpoint_every and step % tc.checkpoint_every == 0:
                checkpoint()
            if callback is not None:
                callback(step, row)
    finally:
        if bar is not None:
            bar.close()
    checkpoint(stopped)
    return _finish(run_dir, cfg, model, ds, n_ctx, rows, stopped)


def gave_up(rows: list[dict], tc: TrainConfig, n_train: int) -> bool:
    """The authors' give-up rule: the training set has been fitted (acc/train_inferred >= fit_threshold)
    since an evaluation at least ``give_up_epochs`` epochs ago, and type_0 never reached the threshold."""
    if not tc.give_up_epochs or not rows:
        return False
    fitted = [r["step"] for r in rows if r.get("acc/train_inferred", 0.0) >= tc.fit_threshold]
    if not fitted or any(r.get("acc/type_0", 0.0) >= tc.threshold for r in rows):
        return False
    return (rows[-1]["step"] - fitted[0]) * tc.batch_size >= tc.give_up_epochs * n_train


def _eval_row(model, es: EvalSet, tc: TrainConfig, step: int, elapsed: float, train_loss: float | None) -> dict:
    lr = lr_at(max(step - 1, 0), tc) if step else 0.0
    return {"step": step, "elapsed": round(elapsed, 3), "train_loss": train_loss, "lr": lr} | evaluate(model, es, tc.eval_batch_size)


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


def _read_rows(run_dir: Path) -> list[dict]:
    file = run_dir / METRICS
    if not file.is_file():
        return []
    rows = []
    for line in file.read_text(encoding="utf-8").splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:  # a line torn by a kill mid-write
            continue
    return rows


def _write_rows(run_dir: Path, rows: list[dict]) -> None:
    write_json_atomic(run_dir / METRICS, "".join(json.dumps(r) + "\n" for r in rows))


def _append_row(run_dir: Path, row: dict) -> None:
    """Append one evaluation; a kill mid-write leaves at most a torn last line past the checkpoint,
    which resume drops (it rewrites the file up to the checkpoint's step)."""
    with open(run_dir / METRICS, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(row) + "\n")


def _finish(run_dir: Path, cfg: RunConfig, model, ds: DatasetFolder, n_ctx: int, rows: list[dict], stopped: str
            ) -> TrainResult:
    _save_torch_atomic({"model": model.state_dict(), "vocab": ds.vocab, "n_ctx": n_ctx,
                        "model_config": dataclasses.asdict(cfg.model)}, run_dir / MODEL)
    metrics = pd.DataFrame(rows)
    final = {k: v for k, v in rows[-1].items()} if rows else {}
    first = first_step_above(metrics, "acc/type_0", cfg.train.threshold)
    result = TrainResult(run_dir, cfg, metrics, final, first, stopped)
    write_json_atomic(run_dir / RESULT, json.dumps({"stopped": stopped, "first_step_type0_above": first,
                                                    "threshold": cfg.train.threshold, "final": final}, indent=2))
    return result


def n_params(model: torch.nn.Module) -> int:
    """Number of trainable parameters."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)

