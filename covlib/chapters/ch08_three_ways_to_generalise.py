"""Chapter 8 (the taxonomy): symmetry and shared-operator reach, and their models."""
from __future__ import annotations

import json
import os
from pathlib import Path

import altair as alt
import numpy as np
import pandas as pd

from covlib.base.errors import CovlibError
from covlib.coverage.exact import coverage_sweep
from covlib.tasks.datasets import Dataset, DatasetConfig, decode, encode, ensure_dataset, generate, target_tokens
from covlib.training.evaluation import predict
from covlib.training.runs import load_model
from covlib.training.shipped import train_or_load

K_DEFAULT = 3  # the paper's smallest meaningful evidence threshold


def all_inputs(num_tokens: int, n_inputs: int) -> np.ndarray:
    """Every input tuple of X^m, in code order."""
    return decode(np.arange(num_tokens**n_inputs, dtype=np.int64), num_tokens, n_inputs)


def commutative_swap(dataset: Dataset) -> tuple[int, int]:
    """Input positions whose exchange leaves the output unchanged: the arguments of the first commutative hop."""
    task = dataset.task
    for hop in task.hops:
        if hop.primitive in dataset.config.commutative and all(a in task.input_names for a in hop.inputs):
            i, j = (task.input_names.index(a) for a in hop.inputs)
            return i, j
    raise CovlibError(
        f"{dataset.config.folder_name} has no commutative primitive applied to two raw inputs; pass swap=(i, j) "
        "explicitly or generate the dataset with commutative=('f1',)"
    )


def symmetry_reach(dataset: Dataset, queries: np.ndarray, k: int = K_DEFAULT,
                   swap: tuple[int, int] | None = None) -> pd.DataFrame:
    """Per query: its k-cutoff, its mirror's (positions ``swap`` exchanged), whether outputs agree, and
    ``reachable`` = outside k-coverage, mirror inside it, same output (reachable only through the symmetry)."""
    if k < 1:
        raise CovlibError(f"k={k} must be at least 1")
    queries = np.asarray(queries)
    i, j = swap if swap is not None else commutative_swap(dataset)
    mirror = queries.copy()
    mirror[:, [i, j]] = queries[:, [j, i]]
    n_tok = dataset.config.num_tokens
    answers = dataset.evaluate(dataset.train_inputs)["t"]
    both = np.concatenate([queries, mirror])
    cut = coverage_sweep(dataset.train_inputs, answers, n_tok, both).cutoffs
    n = len(queries)
    same = dataset.evaluate(queries)["t"] == dataset.evaluate(mirror)["t"]
    frame = pd.DataFrame({"cutoff": cut[:n], "mirror_cutoff": cut[n:], "same_output": same})
    frame["mirror_covered"] = (frame.cutoff < k) & (frame.mirror_cutoff >= k)
    frame["reachable"] = frame.mirror_covered & frame.same_output
    return frame


def role_reach(dataset: Dataset, queries: np.ndarray, include_atomic: bool | None = None) -> pd.DataFrame:
    """Per query and hop: was the fact it needs used by training in that hop's own role, in any role?

    Facts are compared by flat index, so with distinct tables "another role" is a coincidence of
    indices (the control); with ``same_functions`` it is the same fact. Atomic facts (include_atomic)
    count as seen in the role ``atomic`` for the first hop's table. ``cross_role`` marks queries
    with every fact seen in some role and some fact unseen in its own role: reachable only by reuse.
    """
    task, cfg = dataset.task, dataset.config
    include_atomic = cfg.include_atomic if include_atomic is None else include_atomic
    _, train_facts = task.evaluate(dataset.train_inputs, dataset.tables, cfg.same_functions)
    _, facts = task.evaluate(np.asarray(queries), dataset.tables, cfg.same_functions)
    sizes = [dataset.tables[t].size for t in task.table_of_hop(cfg.same_functions)]
    if len(set(sizes)) != 1:
        raise CovlibError(f"task {task.name} has tables of different sizes; role reuse needs one binary table shape")
    own = [np.zeros(sizes[0], dtype=bool) for _ in facts]
    for h, flat in enumerate(train_facts):
        own[h][flat] = True
    anywhere = np.logical_or.reduce(own)
    if include_atomic:
        anywhere = np.ones_like(anywhere)  # every fact of the first table is a training item
    frame = pd.DataFrame({f"own_{h + 1}": own[h][f] for h, f in enumerate(facts)})
    for h, f in enumerate(facts):
        frame[f"any_{h + 1}"] = anywhere[f]
    own_all = frame[[f"own_{h + 1}" for h in range(len(facts))]].all(axis=1)
    any_all = frame[[f"any_{h + 1}" for h in range(len(facts))]].all(axis=1)
    frame["cross_role"] = any_all & ~own_all
    return frame


def item_correct(run_dir: str | os.PathLike, dataset: Dataset, queries: np.ndarray) -> np.ndarray:
    """Whether the trained model of ``run_dir`` gets each query's full target right (teacher-forced)."""
    import torch


    model = load_model(run_dir)
    prompts = torch.from_numpy(np.asarray(queries, dtype=np.int64))
    targets = torch.from_numpy(target_tokens(dataset, queries).astype(np.int64))
    return predict(model, prompts, targets)["correct"].numpy()


def not_training(dataset: Dataset, queries: np.ndarray) -> np.ndarray:
    """Mask of queries that are not training inputs."""
    n_tok = dataset.config.num_tokens
    return ~np.isin(encode(queries, n_tok), encode(dataset.train_inputs, n_tok))


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
            "cross_role": roles.cross_role,
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
        raise CovlibError(f"{out_dir} holds no groups.csv; run covlib.chapters.ch08_three_ways_to_generalise.run_taxonomy (see COMMANDS.txt) or set recompute = True")
    return pd.read_csv(out_dir / "groups.csv"), json.loads((out_dir / "meta.json").read_text())


def acc_of(table: pd.DataFrame, condition: str, group: str) -> tuple[float, int]:
    """Accuracy and item count of one (condition, group) row."""
    row = table[(table.condition == condition) & (table.group == group)]
    if row.empty:
        raise CovlibError(f"no row for condition {condition!r}, group {group!r}")
    return float(row.acc.iloc[0]), int(row.n.iloc[0])


CONDITION_LABELS = {"commutative": "f1 commutative", "distinct": "distinct tables (control)",
                    "shared": "one shared table + atomic facts"}


def reach_accuracy_chart(table: pd.DataFrame, groups: list[str], title: str) -> alt.Chart:
    """Grouped bars: accuracy of each condition's model on each group of inputs (n in the tooltip)."""
    data = table[table.group.isin(groups)].copy()
    data["model"] = data.condition.map(CONDITION_LABELS).fillna(data.condition)
    return (
        alt.Chart(data, title=title)
        .mark_bar()
        .encode(
            x=alt.X("group:N", sort=groups, title=None, axis=alt.Axis(labelAngle=-20, labelLimit=300)),
            xOffset=alt.XOffset("model:N"),
            y=alt.Y("acc:Q", title="accuracy", scale=alt.Scale(domain=[0, 1])),
            color=alt.Color("model:N", title="model", legend=alt.Legend(orient="bottom", labelLimit=400)),
            tooltip=["model", "group", "n", alt.Tooltip("acc:Q", format=".3f")],
        )
        .properties(width=420, height=240)
    )
