"""What a training run learned, read against coverage (chapter 3): reuse finished runs, and
tabulate accuracy per k-cutoff and the step at which each group of test items is learned."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd

from covlib.io import load_dataset


def train_or_load(dataset_dir: str | os.PathLike, run_dir: str | os.PathLike, preset: str = "default",
                  overrides: dict | None = None, retrain: bool = False, progress: bool = True):
    """A finished run with this exact config is read back; otherwise train (resuming a killed run).

    ``retrain=True`` deletes ``run_dir`` first and trains from scratch. Returns covlib.train.TrainResult.
    """
    from covlib import train as tr

    run_dir = Path(run_dir)
    if retrain and run_dir.exists():
        shutil.rmtree(run_dir)
    existing = run_dir / tr.CONFIG
    return tr.train(dataset_dir, run_dir, preset=preset, overrides=overrides,
                    resume=existing.is_file() and not retrain, progress=progress)


def first_steps(metrics: pd.DataFrame, series: dict[str, str], thresholds: tuple[float, ...] = (0.5, 0.9)) -> pd.DataFrame:
    """For each series (label -> metric column), the first evaluated step reaching each threshold."""
    rows = []
    for label, col in series.items():
        if col not in metrics:
            continue
        row = {"group": label, "final accuracy": float(metrics[col].iloc[-1])}
        for t in thresholds:
            hits = metrics.loc[metrics[col] >= t, "step"]
            row[f"first step >= {t:g}"] = int(hits.iloc[0]) if len(hits) else None
        rows.append(row)
    return _nullable_steps(pd.DataFrame(rows))


def cutoff_table(metrics: pd.DataFrame, dataset_dir: str | os.PathLike, threshold: float = 0.9) -> pd.DataFrame:
    """type_0 items per k-cutoff value: how many, final accuracy, first step at ``threshold``.

    Counts come from DATASET_DIR/test_annotated.json; accuracies from the run's ``acc/k={k}`` metrics.
    """
    folder = load_dataset(dataset_dir)
    annotated = json.loads((folder.path / "test_annotated.json").read_text(encoding="utf-8"))
    cutoffs = np.array([it["k_cutoff"] for it in annotated[: len(folder.test)] if it["type"] == "type_0"])
    rows = []
    for k, n in zip(*np.unique(cutoffs, return_counts=True)):
        col = f"acc/k={k}"
        if col not in metrics:
            continue
        hits = metrics.loc[metrics[col] >= threshold, "step"]
        rows.append({"k_cutoff": int(k), "n": int(n), "accuracy": float(metrics[col].iloc[-1]),
                     f"first_step_{round(threshold * 100)}": int(hits.iloc[0]) if len(hits) else None})
    return _nullable_steps(pd.DataFrame(rows))


def _nullable_steps(frame: pd.DataFrame) -> pd.DataFrame:
    """Step columns as nullable integers: "never reached" shows as <NA>, not as a float NaN."""
    for col in frame.columns:
        if "step" in col:
            frame[col] = frame[col].astype("Int64")
    return frame
