"""Chapter 8's presets and its three models: train (or load) one model per condition, classify every input
into its groups, and cache the table with what the runs took."""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd

from covlib.base.errors import CovlibError
from covlib.base.paths import readable_path, repository_path
from covlib.chapters.ch08_three_ways_to_generalise.reach import (
    K_DEFAULT,
    all_inputs,
    not_training,
    role_reach,
    symmetry_reach,
)
from covlib.tasks.datasets import Dataset, DatasetConfig, ensure_dataset, generate, target_tokens
from covlib.training.evaluation import predict
from covlib.training.runs import load_model
from covlib.training.shipped import train_or_load

PRESETS = {
    # smoke trains three tiny models in seconds; default reads the shipped tables (data/taxonomy/)
    "smoke": {"model": "smoke", "N": 8, "n_train": 200, "steps": 300, "cache": "", "steps_of": {}, "role_seeds": (0,)},
    # every model gets the same 2,000 steps, so that no control is weaker for being trained less
    "default": {"model": "default", "N": 30, "n_train": 10_000, "steps": 2000, "cache": "data/taxonomy",
                "steps_of": {}, "role_seeds": (0, 1)},
    "paper": {"model": "paper", "N": 30, "n_train": 10_000, "steps": 62_500, "cache": "", "steps_of": {},
              "role_seeds": (0, 1)},
}


# fills data/taxonomy/roles.csv (resumes: a condition and seed already there is skipped); see COMMANDS.txt there
ROLES_COMMAND = ("python -c \"from covlib.chapters.ch08_three_ways_to_generalise.roles import run_roles; "
                 "run_roles('data/taxonomy', 'build/taxonomy-roles')\"")


def item_correct(run_dir: str | os.PathLike, dataset: Dataset, queries: np.ndarray) -> np.ndarray:
    """Whether the trained model of ``run_dir`` gets each query's full target right (teacher-forced)."""
    import torch


    model = load_model(run_dir)
    prompts = torch.from_numpy(np.asarray(queries, dtype=np.int64))
    targets = torch.from_numpy(target_tokens(dataset, queries).astype(np.int64))
    return predict(model, prompts, targets)["correct"].numpy()


CONDITIONS = {
    # condition -> (experiment, the DatasetConfig options that differ from the base)
    "commutative": ("property", {"commutative": ("f1",)}),
    "distinct": ("control", {}),
    "shared": ("shared", {"same_functions": True, "include_atomic": True}),
}


def run_taxonomy(out_dir: str | os.PathLike, work_dir: str | os.PathLike, task: str = "twohop", num_tokens: int = 30,
                 n_train: int = 10_000, data_seed: int = 0, preset: str = "default", steps: int = 2000,
                 k: int = K_DEFAULT, conditions: tuple[str, ...] = tuple(CONDITIONS),
                 retrain: bool = False, progress: bool = False,
                 steps_of: dict[str, int] | None = None) -> pd.DataFrame:
    """Train one model per condition (one at a time), classify every input, write ``groups.csv`` and ``meta.json``.

    ``steps_of`` overrides the step budget of single conditions (e.g. ``{"shared": 1250}``)."""

    unknown = set(conditions) - set(CONDITIONS)
    if unknown:
        raise CovlibError(f"unknown conditions {sorted(unknown)}; choose among {', '.join(CONDITIONS)}")
    out_dir, work_dir = Path(out_dir), Path(work_dir)
    rows, minutes = [], {}
    for name in conditions:
        cfg = DatasetConfig(task, num_tokens, n_train, seed=data_seed, **CONDITIONS[name][1])
        folder = ensure_dataset(cfg, work_dir / "datasets")
        result = train_or_load(folder, work_dir / "runs" / name, preset=preset, overrides={"steps": (steps_of or {}).get(name, steps)},
                               retrain=retrain, progress=progress)
        minutes[name] = round(float(result.metrics["elapsed"].max()) / 60, 2) if "elapsed" in result.metrics else None
        dataset = generate(cfg)
        queries = all_inputs(num_tokens, dataset.task.n_inputs)
        keep = not_training(dataset, queries)
        queries = queries[keep]
        correct = item_correct(work_dir / "runs" / name, dataset, queries)
        types = dataset.type_names(queries)
        sym = symmetry_reach(dataset, queries, k, swap=(0, 1))
        roles = role_reach(dataset, queries)
        groups = {
            "covered": sym.cutoff >= k,
            "uncovered": sym.cutoff < k,
            "mirror_covered": sym.mirror_covered,
            "symmetry_reachable": sym.reachable,
            "uncovered_mirror_uncovered": (sym.cutoff < k) & (sym.mirror_cutoff < k),
            # covered inputs apart by whether every fact they need was seen: coverage can reach an input one
            # of whose facts training never showed, and such items are not the structure-based kind
            "covered_all_facts_seen": (sym.cutoff >= k) & (types == "type_0"),
            "covered_a_fact_unseen": (sym.cutoff >= k) & (types != "type_0"),
            "cross_role": roles.cross_role,
            # the shared-operator test proper: cross-role inputs that coverage does not reach
            "cross_role_uncovered": np.asarray(roles.cross_role) & (sym.cutoff < k),
            "cross_role_covered": np.asarray(roles.cross_role) & (sym.cutoff >= k),
            **{f"type:{t}": types == t for t in sorted(set(types))},
        }
        for group, mask in groups.items():
            mask = np.asarray(mask)
            rows.append({"condition": name, "group": group, "n": int(mask.sum()),
                         "acc": float(correct[mask].mean()) if mask.any() else float("nan"),
                         "covered_share": float((sym.cutoff[mask] >= k).mean()) if mask.any() else float("nan")})
    table = pd.DataFrame(rows)
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = out_dir / "groups.csv.tmp"
    table.to_csv(tmp, index=False)
    tmp.replace(out_dir / "groups.csv")
    meta = {"task": task, "num_tokens": num_tokens, "n_train": n_train, "data_seed": data_seed, "preset": preset,
            "steps": steps, "steps_of": steps_of or {}, "k": k, "conditions": list(conditions), "training_minutes": minutes}
    tmp = out_dir / "meta.json.tmp"
    tmp.write_text(json.dumps(meta, indent=2))
    tmp.replace(out_dir / "meta.json")
    return table


def load_taxonomy(out_dir: str | os.PathLike) -> tuple[pd.DataFrame, dict]:
    """The cached group table and its meta (written by ``run_taxonomy``)."""
    out_dir = Path(out_dir)
    if not (out_dir / "groups.csv").is_file():
        raise CovlibError(f"{out_dir} holds no groups.csv; run covlib.chapters.ch08_three_ways_to_generalise.model_runs.run_taxonomy (see COMMANDS.txt) or set recompute = True")
    return pd.read_csv(out_dir / "groups.csv"), json.loads((out_dir / "meta.json").read_text())


def taxonomy_tables(values: dict, root: Path, preset: str, data_seed: int, k: int,
                    recompute: bool) -> tuple[pd.DataFrame, dict, str | None]:
    """The chapter's group table and its meta: read from the preset's cache, or trained under ``root``.

    ``values`` are the chapter's resolved knobs (model, N, n_train, steps, cache, steps_of); the third
    item says where the shipped tables came from (None when the models were trained here)."""
    cache = values["cache"]
    if cache and not recompute:
        table, meta = load_taxonomy(repository_path(cache))
        note = f"read the shipped tables ({readable_path(repository_path(cache))}); made by the commands in COMMANDS.txt there"
        return table, meta, note
    results = repository_path(cache) if cache else root / "taxonomy" / f"{preset}-tables"
    table = run_taxonomy(results, root / "taxonomy" / preset, num_tokens=values["N"], n_train=values["n_train"],
                         data_seed=data_seed, preset=values["model"], steps=values["steps"], k=k, retrain=recompute,
                         steps_of=values["steps_of"])
    return table, load_taxonomy(results)[1], None


def steps_text(meta: dict) -> str:
    """The step budget in words, naming the conditions that got a budget of their own."""
    steps_note = ", ".join(f"{c}: {s}" for c, s in meta.get("steps_of", {}).items())
    fewer = [c for c, s in meta.get("steps_of", {}).items() if s < meta["steps"]]
    warning = (f"; the {' and '.join(fewer)} {'model' if len(fewer) == 1 else 'models'} trained for fewer steps than the others, so a control among "
               "them is weaker than its treated model for that reason alone") if fewer else ""
    return f"{meta['steps']} steps per model" + (f" ({steps_note})" if steps_note else "") + warning


def training_minutes(meta: dict) -> float:
    """CPU-minutes of training of every condition's model (those recorded)."""
    return sum(v for v in meta["training_minutes"].values() if v is not None)


def run_description(meta: dict) -> str:
    """One line on the task, the data, the step budgets and each model's training time."""
    return (f"{meta['task']}, N={meta['num_tokens']}, n_train={meta['n_train']}, {steps_text(meta)}, k={meta['k']}; "
            "training: " + ", ".join(f"{c} {m:.1f} min" for c, m in meta["training_minutes"].items()))
