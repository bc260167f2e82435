"""Evaluation: teacher-forced and greedy accuracy per test type and per k-cutoff group."""
from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from covlib.base.errors import CovlibError
from covlib.tasks.folders import DatasetFolder
from covlib.training.model import FastForward

ANNOTATED = "test_annotated.json"


ALWAYS_COVERED = 10**6  # k-cutoff given to training inputs (null in test_annotated.json)


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


def annotated_cutoffs(ds: DatasetFolder) -> np.ndarray | None:
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
    greedy: bool = True  # also decode CoT targets greedily (a lean evaluation, restricted_to, does not)

    @property
    def cot(self) -> bool:
        return self.targets.shape[1] > 1

    def restricted_to(self, types: Sequence[str]) -> EvalSet:
        """Only the items of the test ``types`` (with the k-groups, which hold type_0 items), renumbered and
        teacher-forced only (no greedy decoding): what a lean evaluation scores. A type the dataset lacks is
        skipped."""
        keep = [name for name in self.groups
                if name in types or name.startswith("k") and "type_0" in types]
        items = np.unique(np.concatenate([self.groups[name] for name in keep] or [np.zeros(0, dtype=np.int64)]))
        renumber = np.full(len(self.prompts), -1, dtype=np.int64)
        renumber[items] = np.arange(len(items))
        index = torch.from_numpy(items).to(self.prompts.device)
        return EvalSet(self.prompts[index], self.targets[index], {name: renumber[self.groups[name]] for name in keep},
                       greedy=False)


def eval_set(ds: DatasetFolder, device: torch.device) -> EvalSet:
    """Group test items per type and, when annotated, type_0 items per k-cutoff group and per k."""
    types = ds.test.types
    groups = {t: np.flatnonzero(types == t) for t in ds.test_types}
    ks = annotated_cutoffs(ds)
    if ks is not None:
        id_items = types == "type_0"
        for name, mask in (("k<3", ks < 3), ("k=3", ks == 3), ("k>3", ks > 3)):
            groups[name] = np.flatnonzero(id_items & mask)
        for k in sorted(set(ks[id_items].tolist()) - {ALWAYS_COVERED}):
            groups[f"k={k}"] = np.flatnonzero(id_items & (ks == k))
    prompts = torch.from_numpy(ds.test.inputs.astype(np.int64)).to(device)
    targets = torch.from_numpy(ds.test.targets.astype(np.int64)).to(device)
    return EvalSet(prompts, targets, groups)


def logits_from(model, tokens: torch.Tensor, start: int) -> torch.Tensor:
    """Logits [batch, pos - start, vocab] of the positions from ``start`` on: through the model's ``tail``
    when it has one (a FastForward computes only those positions in its last block), else every position."""
    return model.tail(tokens, start) if isinstance(model, FastForward) else model(tokens)[:, start:]


@torch.no_grad()
def predict(model, prompts: torch.Tensor, targets: torch.Tensor, batch_size: int = 2048, greedy: bool = True
            ) -> dict[str, torch.Tensor]:
    """Per-item teacher-forced results: ``correct`` (all target tokens), ``answer_correct``, ``loss``
    (mean CE per target token) and, when targets have more than one token and ``greedy``, ``greedy_correct``.
    ``model`` maps tokens to logits: a model, or a FastForward of one (the same logits, fewer operations)."""
    m, L = prompts.shape[1], targets.shape[1]
    greedy = greedy and L > 1
    out: dict[str, list[torch.Tensor]] = {"correct": [], "answer_correct": [], "loss": []}
    if greedy:
        out["greedy_correct"] = []
    for start in range(0, len(prompts), batch_size):
        p, t = prompts[start : start + batch_size], targets[start : start + batch_size]
        seq = torch.cat([p, t[:, :-1]], dim=1)
        logits = logits_from(model, seq, m - 1).float()
        hit = logits.argmax(-1) == t
        out["correct"].append(hit.all(1))
        out["answer_correct"].append(hit[:, -1])
        out["loss"].append(F.cross_entropy(logits.transpose(1, 2), t, reduction="none").mean(1))
        if greedy:
            out["greedy_correct"].append(greedy_decode(model, p, L)[:, -1] == t[:, -1])
    return {k: torch.cat(v).cpu() for k, v in out.items()}


@torch.no_grad()
def greedy_decode(model, prompts: torch.Tensor, length: int) -> torch.Tensor:
    """Greedily decode ``length`` tokens after each prompt (bridges, then answer, for CoT)."""
    seq = prompts
    for _ in range(length):
        seq = torch.cat([seq, logits_from(model, seq, seq.shape[1] - 1)[:, -1].argmax(-1, keepdim=True)], dim=1)
    return seq[:, prompts.shape[1] :]


def evaluate(model: torch.nn.Module, es: EvalSet, batch_size: int = 2048, forward=None) -> dict[str, float]:
    """Every metric (see the module docstring) of ``model`` on the test set, without gradients; ``forward``
    (default: the model) computes its logits, e.g. the FastForward training uses. An EvalSet without ``greedy``
    leaves out the greedy decoding of CoT targets (one forward pass per target token) and its ``greedy/`` metrics."""
    was_training = model.training
    model.eval()
    try:
        res = {k: v.numpy() for k, v in predict(forward or model, es.prompts, es.targets, batch_size, es.greedy).items()}
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
