"""Residual streams through TransformerLens hooks, the task's tables, and the items of each split."""
from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from covlib.base.errors import CovlibError
from covlib.coverage.annotate import annotate_dataset
from covlib.tasks.datasets import DatasetConfig, ensure_dataset, generate
from covlib.tasks.folders import DatasetFolder, load_dataset
from covlib.tasks.graphs import Task, get_task
from covlib.training.evaluation import annotated_cutoffs
from covlib.training.model import ModelConfig, model_family
from covlib.training.runs import load_metrics, load_model, load_run_config, load_weights, run_family
from covlib.training.shipped import ShippedRun, shipped_ready


def open_shipped(run: ShippedRun, dest_root: str | os.PathLike, datasets_dir: str | os.PathLike):
    """(model, dataset folder, task tables, metrics) of an archived run; its dataset is regenerated (it is
    deterministic) and annotated under ``datasets_dir``."""

    dest = Path(dest_root) / run.folder
    if not shipped_ready(run, dest_root):
        raise CovlibError(f"{dest} holds no archived run; make it with: {run.command or 'covlib ship'}")
    folder = ensure_dataset(run.config(), datasets_dir)
    if not (folder / "test_annotated.json").is_file():
        annotate_dataset(folder, max_k=8)
    model, ds, tables = open_run(dest, folder, "weights/final.pt")
    return model, ds, tables, load_metrics(dest)


@dataclass
class TaskTables:
    """A dataset's task, its primitive tables and the facts its training set uses."""

    task: Task
    tables: dict[str, np.ndarray]
    same_functions: bool
    seen: dict[str, np.ndarray]  # table name -> bool array: the fact appears in some training item

    def values(self, inputs: np.ndarray) -> dict[str, np.ndarray]:
        """Every node's value (x1.., b1.., t) for a batch of inputs."""
        return self.task.evaluate(inputs, self.tables, self.same_functions)[0]

    def all_facts_seen(self, inputs: np.ndarray) -> np.ndarray:
        """True where every primitive application of the input is a fact used in training."""
        _, facts = self.task.evaluate(inputs, self.tables, self.same_functions)
        ok = np.ones(len(inputs), dtype=bool)
        for flat, name in zip(facts, self.task.table_of_hop(self.same_functions)):
            ok &= self.seen[name].reshape(-1)[flat]
        return ok


def task_tables(ds: DatasetFolder) -> TaskTables:
    """The primitive tables behind a dataset folder (see the module docstring)."""
    meta = ds.meta or {}
    config = meta.get("config")
    if config:
        cfg = DatasetConfig(**config)
        data = generate(dataclasses.replace(cfg, test_size_per_type=0))  # no test set: the tables do not depend on it
        task, tables, same = data.task, data.tables, cfg.same_functions
    else:
        task = _task_from_name(ds.name)
        same = ".same-" in ds.name
        facts = ds.atomic_facts()
        if not facts:
            raise CovlibError(f"{ds.path} has neither covlib.json nor atomic_facts_f*.json: the bridge values of its "
                              "items cannot be computed; regenerate it with `covlib generate`")
        tables = {}
        for name in task.table_names(same):
            if name not in facts:
                raise CovlibError(f"{ds.path} lacks atomic_facts_{name}.json; regenerate it with `covlib generate`")
            arity = task.primitives[name]
            table = np.full((ds.num_tokens,) * arity, -1, dtype=np.int64)
            table[tuple(facts[name].inputs.T)] = facts[name].answers
            tables[name] = table
    _, used = task.evaluate(ds.train.inputs, tables, same)
    seen = {name: np.zeros(t.shape, dtype=bool) for name, t in tables.items()}
    for flat, name in zip(used, task.table_of_hop(same)):
        seen[name].reshape(-1)[flat] = True
    return TaskTables(task, tables, same, seen)


def _task_from_name(name: str) -> Task:
    try:
        return get_task(name.split(".")[0])
    except CovlibError:
        raise CovlibError(f"cannot tell the task of dataset folder {name!r} (no covlib.json, and its name does not "
                          "start with a task such as twohop.); regenerate it with `covlib generate`") from None


# what a run of another family (a Mamba model) can still be read with
APPLIES_TO_ANY_FAMILY = ("its learning curves and its accuracy per test type and k-cutoff group (covlib.training.runs."
                         "load_metrics, covlib.analyses.curves), and the required-data search (covlib scaling search)")


def require_transformer(family: str, what: str) -> None:
    """Refuse a TransformerLens analysis (residual streams, IICG, causal tracing, logit lens) of a model of
    another family: they read the transformer's hooks, which a Mamba model does not have."""
    if family != ModelConfig.family:
        raise CovlibError(
            f"{what} is a {family} model: the TransformerLens analyses (residual streams, IICG, causal tracing, logit "
            f"lens) need a transformer's hooks and do not apply to it. For a {family} run use "
            f"{APPLIES_TO_ANY_FAMILY}; analyse a transformer run (e.g. trained with --shape L4-d128) instead")


def require_transformer_model(model) -> None:
    """require_transformer for a built model."""
    require_transformer(model_family(model), "this model")


def hook_names(n_layers: int) -> list[str]:
    """The residual-stream hooks of layers 0..L (embedding output, then every block's output)."""
    return ["blocks.0.hook_resid_pre"] + [f"blocks.{i}.hook_resid_post" for i in range(n_layers)]


@torch.no_grad()
def residual_streams(model, prompts: np.ndarray | torch.Tensor, batch_size: int = 1024) -> np.ndarray:
    """The residual stream at every layer and prompt position: float32 array (items, L+1, m, d_model).

    Caches only the L+1 residual hooks (``run_with_cache`` with a names_filter), in batches."""
    require_transformer_model(model)
    names = hook_names(model.cfg.n_layers)
    wanted = set(names)
    prompts = torch.as_tensor(np.asarray(prompts), dtype=torch.long)
    device = next(model.parameters()).device
    out = []
    for start in range(0, len(prompts), batch_size):
        batch = prompts[start : start + batch_size].to(device)
        _, cache = model.run_with_cache(batch, names_filter=lambda n: n in wanted)
        out.append(torch.stack([cache[n] for n in names], dim=1).float().cpu())
    if not out:
        raise CovlibError("no items to analyse: the selection is empty")
    return torch.cat(out).numpy()


SPLIT_ALIASES = {"id_train": "train_inferred", "id_test": "type_0"}


def first_hop_unseen_types(n_primitives: int) -> list[str]:
    """The OOD test types whose first primitive application is unseen (numbered as covlib.tasks.datasets does)."""
    return [f"type_{bits + 1}" for bits in range(2 ** (n_primitives - 1))]


def split_items(ds: DatasetFolder, split: str, k_group: str | None = None) -> np.ndarray:
    """Indices of test items of one split (a test type such as type_0; id_train, id_test; or ood_first_hop,
    every OOD type whose first hop is unseen), optionally restricted to a k-cutoff group of type_0
    ("k<3", "k=3", "k>3"; needs test_annotated.json)."""
    types = ds.test.types
    if split == "ood_first_hop":
        n_prim = int(np.log2(len([t for t in ds.test_types if t.startswith("type_")])))
        wanted = set(first_hop_unseen_types(n_prim))
        return np.flatnonzero(np.isin(types, sorted(wanted)))
    split = SPLIT_ALIASES.get(split, split)
    if split not in set(types.tolist()):
        raise CovlibError(f"unknown split {split!r}; this dataset's splits: {', '.join(ds.test_types)} "
                          "(also id_train, id_test, ood_first_hop)")
    idx = np.flatnonzero(types == split)
    if k_group is not None:
        ks = annotated_cutoffs(ds)
        if ks is None:
            raise CovlibError(f"{ds.path} has no test_annotated.json; run `covlib coverage {ds.path}` first")
        tests = {"k<3": ks < 3, "k=3": ks == 3, "k>3": ks > 3}
        if k_group not in tests:
            raise CovlibError(f"unknown k-cutoff group {k_group!r}; choose k<3, k=3 or k>3")
        idx = idx[tests[k_group][idx]]
    return idx


def open_run(run_dir: str | os.PathLike, dataset_dir: str | os.PathLike | None = None, checkpoint: str | None = None,
             device=None):
    """(model, dataset, tables) for a run folder: a trained run (model.pt / checkpoints) or a shipped one
    (weights/*.pt). The dataset defaults to the one in the run's config.json."""

    run_dir = Path(run_dir)
    meta = load_run_config(run_dir)
    require_transformer(run_family(run_dir), f"the run {run_dir}")
    dataset_dir = Path(dataset_dir) if dataset_dir else Path(meta["dataset"]["path"])
    if not dataset_dir.is_dir():
        raise CovlibError(f"the run's dataset {dataset_dir} does not exist; pass --dataset (the folder the run was "
                          "trained on, e.g. regenerated with the command in its COMMANDS.txt)")
    ds = load_dataset(dataset_dir)
    if checkpoint and str(checkpoint).startswith("weights/") or (checkpoint is None and not (run_dir / "model.pt").is_file()
                                                                  and (run_dir / "weights" / "final.pt").is_file()):
        model = load_weights(run_dir, checkpoint or "weights/final.pt", ds, device)
    else:
        model = load_model(run_dir, dataset_dir, device=device, checkpoint=checkpoint)
    if json.dumps(list(ds.vocab)) != json.dumps(meta["dataset"]["vocab"]):
        raise CovlibError(f"{dataset_dir} does not have the vocabulary {run_dir} was trained on; pass its own dataset")
    return model, ds, task_tables(ds)
