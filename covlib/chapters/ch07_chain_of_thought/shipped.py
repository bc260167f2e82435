"""Chapter 7's four shipped models (plain, CoT, placeholder bridge, non-tree with CoT): what they are, where the
book keeps them, what a reader calls them, and the names of their target tokens."""
from __future__ import annotations

import os
from collections.abc import Mapping

import pandas as pd

from covlib.training.shipped import ShippedRun, archive_status, missing_archive_note

DATA_DIR = "data/cot"


# the default preset's four models: one (N, n_train) where plain two-hop fails (chapter 4: n_req at N = 30 is
# about 7,300-9,000) and CoT, which the paper finds needs 5-10 times less, should not
_SHIPPED = {"default": {"num_tokens": 30, "n_train": 6000, "test_size_per_type": 1000, "steps": 4000,
                        "preset": "default"},
            "smoke": {"num_tokens": 8, "n_train": 200, "test_size_per_type": 100, "steps": 300, "preset": "smoke"}}


MODELS = {  # name -> (task, target style)
    "twohop": ("twohop", {}),
    "twohop_cot": ("twohop", {"cot": True}),
    "twohop_fakebridge": ("twohop", {"fake_bridge": True}),
    "nontree_cot": ("nontree", {"cot": True}),
}


def shipped_runs(preset: str = "default") -> dict[str, ShippedRun]:
    """The chapter's four models (data seed 0, one N and n_train) at a preset ("paper" uses the default's)."""
    knobs = _SHIPPED["smoke" if preset == "smoke" else "default"]
    runs = {}
    for name, (task, style) in MODELS.items():
        dataset = {"task": task, "num_tokens": knobs["num_tokens"], "n_train": knobs["n_train"], "seed": 0,
                   "test_size_per_type": knobs["test_size_per_type"], **style}
        runs[name] = ShippedRun(name, dataset, {"steps": knobs["steps"]}, knobs["preset"],
                                command=f"covlib ship cot --only {name}")
    return runs


def target_layout(ds) -> list[str]:
    """Names of the target tokens of a dataset folder: the bridges (b, or b1, b2, ...) then the answer t."""
    n_targets = ds.test.targets.shape[1]
    bridges = n_targets - 1
    return (["b"] if bridges == 1 else [f"b{i + 1}" for i in range(bridges)]) + ["t"]


def cache_line(preset: str, N: int, n_train: int, dest: os.PathLike, ready: Mapping[str, bool]) -> str:
    """One line saying where the four models are looked for and which of them are there."""
    return archive_status(f"preset={preset}: four models at N = {N}, n_train = {n_train:,};", dest, ready)


def missing_models_note(runs: Mapping[str, ShippedRun], ready: Mapping[str, bool]) -> str:
    """The commands that fill the cache with the models it lacks ("" when it holds them all)."""
    note = missing_archive_note(runs, ready, "about 10 CPU-minutes each; `data/cot/COMMANDS.txt`")
    return note and note + (" Or rerun this chapter with `recompute = True`. The sections below say what each "
                            "one needs.")


MODEL_LABELS = {"twohop": "two-hop without CoT", "twohop_cot": "two-hop with CoT",
                "twohop_fakebridge": "two-hop with the placeholder", "nontree_cot": "non-tree with CoT"}


def model_names(models: pd.Series) -> pd.Series:
    """A column of model keys in a reader's words (MODEL_LABELS; a key it lacks stays as it is)."""
    return models.map(MODEL_LABELS).fillna(models)
