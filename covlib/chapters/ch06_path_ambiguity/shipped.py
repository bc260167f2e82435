"""Chapter 6's two shipped models (two-hop and non-tree at one N and n_train): what they are, where the
book keeps them, and the chapter's first line about them."""
from __future__ import annotations

from pathlib import Path

from covlib.training.shipped import ShippedRun, archive_status, missing_archive_note

DATA_DIR = "data/ambiguity"  # relative to the repository


TASKS = ("twohop", "nontree")


# the default preset's pair of models: the same N and n_train, where two-hop generalises (chapter 4: n_req at
# N = 30 is about 7,300-9,000); 5,000 steps is about four times what two-hop needs to reach 99%
_SHIPPED = {"default": {"num_tokens": 30, "n_train": 10_000, "test_size_per_type": 1000, "steps": 5000,
                        "preset": "default"},
            "smoke": {"num_tokens": 8, "n_train": 200, "test_size_per_type": 100, "steps": 300, "preset": "smoke"}}


def shipped_runs(preset: str = "default") -> dict[str, ShippedRun]:
    """The chapter's two models (twohop and nontree, data seed 0) at a preset ("paper" uses the default's)."""
    knobs = _SHIPPED["smoke" if preset == "smoke" else "default"]
    runs = {}
    for task in TASKS:
        dataset = {"task": task, "num_tokens": knobs["num_tokens"], "n_train": knobs["n_train"], "seed": 0,
                   "test_size_per_type": knobs["test_size_per_type"]}
        runs[task] = ShippedRun(task, dataset, {"steps": knobs["steps"]}, knobs["preset"],
                                command=f"covlib ship ambiguity --only {task}")
    return runs


def models_status(preset: str, N: int, n_train: int, dest: Path, ready: dict[str, bool]) -> str:
    """The chapter's first line: the preset, the pair's N and n_train, and which models the archive holds."""
    return archive_status(f"preset={preset}: twohop and nontree at N = {N}, n_train = {n_train:,}; models", dest, ready)


def missing_models_note(runs: dict[str, ShippedRun], ready: dict[str, bool]) -> str:
    """Markdown naming the models not in the cache and the commands that make them ("" when all are there)."""
    return missing_archive_note(runs, ready, "about 15 CPU-minutes each; `data/ambiguity/COMMANDS.txt`",
                                after="Sections 6.2-6.3 show what they can without them. ")
