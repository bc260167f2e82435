"""Chapter 3 (coverage predicts generalisation): the live run, the run at the edge of coverage, what they record."""
from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from covlib.base.paths import repository_path
from covlib.training.loop import TrainResult
from covlib.training.shipped import EDGE_RUN, train_or_load

PRESETS = {
    # model preset, live dataset and budget
    "smoke": {"model": "smoke", "N": 10, "n_train": 450, "steps": 300, "eval_every": 50},
    "default": {"model": "default", "N": 30, "n_train": 10_000, "steps": 2000, "eval_every": 50},
    "paper": {"model": "paper", "N": 30, "n_train": 10_000, "steps": 62_500, "eval_every": 25},
}


def training_speed(metrics: pd.DataFrame) -> str:
    """How long a run's training took: steps, minutes and steps per second (evaluation included)."""
    step, elapsed = metrics["step"].iloc[-1], metrics["elapsed"].iloc[-1]
    return (f"trained {int(step)} steps in {elapsed / 60:.1f} min "
            f"({step / elapsed:.1f} steps/s including evaluation)")


def edge_shares_text(shares: Mapping[str, float]) -> str:
    """One sentence on how the ID test items of the edge dataset split by k-cutoff (below, at, above 3)."""
    return (f"ID test items of the edge dataset by k-cutoff: {shares['k<3']:.0%} below 3, "
            f"{shares['k=3']:.0%} exactly 3, {shares['k>3']:.0%} above.")


def edge_run_folder(edge_dataset: str | os.PathLike, root: Path, recompute: bool, edge_run: str | os.PathLike,
                    retrain: bool) -> Path:
    """The run at the edge of coverage: retrained under ``root``/runs/edge when ``recompute``, else the folder
    ``edge_run``, else the one shipped under data/runs/ (it takes about 20 CPU-minutes to train)."""
    if recompute:
        result = train_or_load(edge_dataset, root / "runs" / "edge", preset="default",
                               overrides=EDGE_RUN["overrides"], retrain=retrain)
        return result.run_dir
    return Path(edge_run) if edge_run else repository_path(EDGE_RUN["archive"])


def describe_run(run_dir: str | os.PathLike, metrics: pd.DataFrame, config: Mapping[str, Any]) -> str:
    """A run folder in one line: its dataset, steps trained and weight decay."""
    return (f"{run_dir}: {config['dataset']['name']}, {int(metrics['step'].iloc[-1])} steps, "
            f"weight decay {config['train']['weight_decay']}")


def run_commands(run_dir: str | os.PathLike) -> str:
    """The commands that regenerate a shipped run (its COMMANDS.txt), or "" when it has none."""
    commands = Path(run_dir) / "COMMANDS.txt"
    return commands.read_text() if commands.is_file() else ""


def central_metrics(num_tokens: int, n_train: int, result: TrainResult, edge: pd.DataFrame,
                    edge_shares: Mapping[str, float], type_series: Mapping[str, str],
                    group_series: Mapping[str, str]) -> dict[str, Any]:
    """What the chapter records: the live run's size, time, ID threshold step and final accuracy per type,
    and the edge run's final accuracy and item share per k-cutoff group."""
    metrics, final, edge_final = result.metrics, result.final, edge.iloc[-1]
    return {
        "N": num_tokens, "n_train": n_train, "steps": int(metrics["step"].iloc[-1]),
        "minutes": float(metrics["elapsed"].iloc[-1] / 60),
        "first_step_type0_0.9": result.first_step_above("acc/type_0", 0.9),
        **{f"final_{t}": float(final[f"acc/{t}"]) for t in type_series if f"acc/{t}" in final},
        **{f"edge_final_{g}": float(edge_final[f"acc/{g}"]) for g in group_series if f"acc/{g}" in edge},
        **{f"edge_share_{g}": share for g, share in edge_shares.items()},
    }
