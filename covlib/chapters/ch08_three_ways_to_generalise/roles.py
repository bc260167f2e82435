"""Reuse across roles, separated from atomic facts used in their own role: four conditions at equal data and
steps, each input's facts by the role training taught them in, and the accuracy table over training seeds."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from covlib.base.errors import CovlibError
from covlib.base.tables import read_table, replace_rows
from covlib.chapters.ch08_three_ways_to_generalise.model_runs import item_correct
from covlib.chapters.ch08_three_ways_to_generalise.reach import K_DEFAULT, all_inputs, not_training
from covlib.coverage.exact import coverage_sweep
from covlib.tasks.datasets import Dataset, DatasetConfig, ensure_dataset, generate
from covlib.training.shipped import train_or_load

TREATED = ("shared_atomic", "shared_first_role")  # one table for both hops
CONTROLS = ("distinct_atomic", "distinct_first_role")  # the same extras, a table per hop


def role_conditions(num_tokens: int) -> dict[str, dict]:
    """Condition -> DatasetConfig options. Every condition adds N^2 items to the same composed training set: the
    atomic ones every fact of the first table (N^2 items), the first-role ones N^2 composed items whose first
    fact is held out (so held-out facts are taught in the first hop's role only)."""
    extra = num_tokens**2
    return {"distinct_atomic": {"include_atomic": True},
            "shared_atomic": {"same_functions": True, "include_atomic": True},
            "distinct_first_role": {"first_role_items": extra},
            "shared_first_role": {"same_functions": True, "first_role_items": extra}}


STATUSES = ("own", "other_role", "atomic", "none")  # how training taught a fact, best first


def fact_status(dataset: Dataset, queries: np.ndarray) -> pd.DataFrame:
    """Per query and hop h, how training taught the fact it needs (``status_h``): ``own`` (a composed training
    item uses it in hop h), ``other_role`` (only in another hop reading the same table), ``atomic`` (only as
    an atomic item of the first table) or ``none``."""
    task, cfg = dataset.task, dataset.config
    hop_tables = task.table_of_hop(cfg.same_functions)
    _, train_facts = task.evaluate(dataset.train_inputs, dataset.tables, cfg.same_functions)
    _, facts = task.evaluate(np.asarray(queries), dataset.tables, cfg.same_functions)
    frame = {}
    for h, (flat, name) in enumerate(zip(facts, hop_tables)):
        size = dataset.tables[name].size
        own = np.zeros(size, dtype=bool)
        own[train_facts[h]] = True
        other = np.zeros(size, dtype=bool)
        for g, name_g in enumerate(hop_tables):
            if g != h and name_g == name:
                other[train_facts[g]] = True
        atomic = np.full(size, cfg.include_atomic and name == hop_tables[0])
        status = np.select([own[flat], other[flat], atomic[flat]], list(STATUSES[:3]), STATUSES[3])
        frame[f"status_{h + 1}"] = status
    return pd.DataFrame(frame)


def role_groups(dataset: Dataset, queries: np.ndarray) -> dict[str, np.ndarray]:
    """The groups of inputs the table reports: each test type (by the ID items, so a type's inputs are the same
    in every condition of one data seed), and the second-role reuse group: first fact used in its own role,
    second fact held out of the ID items and taught in another role or as an atomic item only."""
    types = dataset.type_names(queries)
    status = fact_status(dataset, queries)
    groups = {f"type:{t}": types == t for t in ("type_0", "type_1", "type_2", "type_3")}
    taught_elsewhere = status["status_2"].isin(["other_role", "atomic"]).to_numpy()
    groups["reuse_second_role"] = (types == "type_3") & (status["status_1"] == "own").to_numpy() & taught_elsewhere
    groups["reuse_first_role_own"] = (types == "type_2") & (status["status_1"] != "none").to_numpy()
    return groups


ROLE_COLUMNS = ["condition", "seed", "group", "n", "correct", "acc", "covered_share", "status_1", "status_2",
                "steps", "minutes"]


def group_rows(dataset: Dataset, correct: np.ndarray, queries: np.ndarray, k: int = K_DEFAULT) -> pd.DataFrame:
    """One row per group: inputs, correct answers, accuracy, the k-covered share (exact coverage by the composed
    training items), and the commonest status of each hop's fact in the group."""
    answers = dataset.evaluate(dataset.train_inputs)["t"]
    cutoff = coverage_sweep(dataset.train_inputs, answers, dataset.config.num_tokens, queries).cutoffs
    status = fact_status(dataset, queries)
    rows = []
    for group, mask in role_groups(dataset, queries).items():
        n = int(mask.sum())
        rows.append({"group": group, "n": n, "correct": int(correct[mask].sum()),
                     "acc": float(correct[mask].mean()) if n else float("nan"),
                     "covered_share": float((cutoff[mask] >= k).mean()) if n else float("nan"),
                     **{col: (status.loc[mask, col].mode().iloc[0] if n else "") for col in status}})
    return pd.DataFrame(rows)


def roles_path(out_dir: str | os.PathLike) -> Path:
    return Path(out_dir) / "roles.csv"


ROLE_ORDER = ("shared_first_role", "distinct_first_role", "distinct_atomic", "shared_atomic")  # training order


def run_roles(out_dir: str | os.PathLike, work_dir: str | os.PathLike, num_tokens: int = 30, n_train: int = 10_000,
              data_seed: int = 0, preset: str = "default", steps: int = 2000, seeds: tuple[int, ...] = (0, 1),
              conditions: tuple[str, ...] = ROLE_ORDER, k: int = K_DEFAULT, eval_every: int = 250,
              progress: bool = False) -> pd.DataFrame:
    """Train one model per condition and training seed (resuming: a (condition, seed) already in roles.csv is
    skipped, a killed run resumes from its checkpoint), classify every non-training input and write its group
    rows to ``out_dir/roles.csv`` as each run ends. Seed by seed, so a half-finished table holds every
    condition once first."""
    options = role_conditions(num_tokens)
    unknown = set(conditions) - set(options)
    if unknown:
        raise CovlibError(f"unknown conditions {sorted(unknown)}; choose among {', '.join(options)}")
    path, work_dir = roles_path(out_dir), Path(work_dir)
    done = read_table(path, ROLE_COLUMNS)
    have = set(zip(done["condition"].astype(str), done["seed"].astype(int))) if len(done) else set()
    for seed in seeds:
        for name in conditions:
            if (name, seed) in have:
                continue
            cfg = DatasetConfig("twohop", num_tokens, n_train, seed=data_seed, **options[name])
            folder = ensure_dataset(cfg, work_dir / "datasets")
            run_dir = work_dir / "runs" / f"{name}.seed-{seed}"
            result = train_or_load(folder, run_dir, preset=preset, overrides={"steps": steps, "seed": seed, "eval_every": eval_every},
                                   progress=progress)
            dataset = generate(cfg)
            queries = all_inputs(num_tokens, dataset.task.n_inputs)
            queries = queries[not_training(dataset, queries)]
            rows = group_rows(dataset, item_correct(run_dir, dataset, queries), queries, k)
            minutes = float(result.metrics["elapsed"].max()) / 60 if "elapsed" in result.metrics else float("nan")
            rows = rows.assign(condition=name, seed=seed, steps=steps, minutes=round(minutes, 2))
            replace_rows(path, rows, ROLE_COLUMNS, ["condition", "seed"], sort=["condition", "seed"])
    return read_table(path, ROLE_COLUMNS)
