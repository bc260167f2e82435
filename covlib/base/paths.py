"""Where things live: the repository root, shipped data, generated datasets, figures; environment names."""
from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]  # covlib/base/paths.py -> the repository
RULE_FILE = "data/predict/rule.json"  # the rule chapter 10 fits and `covlib predict` applies (repository-relative)

FIGURES_ENV = "COVLIB_FIGURES_DIR"  # set by `covlib book` / `covlib sweep` for the kernels they start
RUN_DIR_ENV = "COVLIB_RUN_DIR"  # the run folder of the config a kernel executes (unset outside sweeps)
PROGRESS_ENV = "COVLIB_PROGRESS"  # "text": progress bars print text lines (kernels run by `covlib book`)


def repository_path(relative: str | os.PathLike) -> Path:
    """A path inside the repository (e.g. shipped data under data/), whatever the working folder."""
    return REPO / relative


def readable_path(path: str | os.PathLike) -> str:
    """A path as a reader may see it: relative to the repository when inside it (``data/runs/...``), else its
    name alone; never the absolute path of the machine that ran the book."""
    path = Path(path)
    try:
        return path.resolve().relative_to(REPO).as_posix()
    except ValueError:
        return path.name if path.is_absolute() else path.as_posix()


def default_root() -> Path:
    """Where notebooks keep generated datasets (ignored by git): ``<repo>/build/datasets``."""
    return REPO / "build" / "datasets"


def default_figures_dir() -> Path:
    """Where figures go when the caller names no folder: $COVLIB_FIGURES_DIR if set, else build/figures/ of the
    repository. Never papers_figures/: only `covlib book --preset default` writes there, and it passes that folder
    itself (covlib.book.runner.preset_figures_dir), so that a reader's run leaves the book's figures as they were."""
    env = os.environ.get(FIGURES_ENV)
    return Path(env) if env else REPO / "build" / "figures"
