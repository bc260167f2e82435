"""Learning curves read by k-cutoff: first steps above thresholds, accuracy per k-cutoff."""
from __future__ import annotations

import os

import numpy as np
import pandas as pd

from covlib.base.errors import CovlibError
from covlib.tasks.folders import load_dataset
from covlib.training.evaluation import annotated_cutoffs
from covlib.training.runs import first_step_above


def combine_curves(metrics: dict[str, pd.DataFrame], columns: dict[str, str]) -> tuple[pd.DataFrame, dict[str, str]]:
    """Learning curves of several runs in one wide frame for figures.accuracy_curves_chart: for every run label
    and metric label (label -> load_metrics column) a column "<run>, <metric>". Returns (frame, series)."""
    frame, series = None, {}
    for run, table in metrics.items():
        part = table[["step"]].copy()
        for label, col in columns.items():
            if col in table:
                name = f"{run}, {label}"
                part[name] = table[col].to_numpy()
                series[name] = name
        frame = part if frame is None else frame.merge(part, on="step", how="outer")
    if frame is None:
        raise CovlibError("no learning curves to combine")
    return frame.sort_values("step").reset_index(drop=True), series


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


def _type0_cutoffs(dataset_dir: str | os.PathLike) -> np.ndarray:
    """The k-cutoff of every type_0 test item, from DATASET_DIR/test_annotated.json."""

    folder = load_dataset(dataset_dir)
    cutoffs = annotated_cutoffs(folder)
    if cutoffs is None:
        raise CovlibError(f"{folder.path} has no test_annotated.json; run `covlib coverage {folder.path}` first")
    return cutoffs[folder.test.types == "type_0"]


def cutoff_table(metrics: pd.DataFrame, dataset_dir: str | os.PathLike, threshold: float = 0.9) -> pd.DataFrame:
    """type_0 items per k-cutoff value: how many, final accuracy, first step at ``threshold``.

    Counts come from DATASET_DIR/test_annotated.json; accuracies from the run's ``acc/k={k}`` metrics.
    """
    cutoffs = _type0_cutoffs(dataset_dir)
    rows = []
    for k, n in zip(*np.unique(cutoffs, return_counts=True)):
        col = f"acc/k={k}"
        if col not in metrics:
            continue
        hits = metrics.loc[metrics[col] >= threshold, "step"]
        rows.append({"k_cutoff": int(k), "n": int(n), "accuracy": float(metrics[col].iloc[-1]),
                     f"first_step_{round(threshold * 100)}": int(hits.iloc[0]) if len(hits) else None})
    return _nullable_steps(pd.DataFrame(rows))


def cutoff_shares(dataset_dir: str | os.PathLike, k: int = 3) -> dict[str, float]:
    """Shares of the type_0 test items whose k-cutoff lies below, at and above ``k`` (the groups
    ``k<3``, ``k=3``, ``k>3`` of the training metrics when k = 3)."""
    cutoffs = _type0_cutoffs(dataset_dir)
    return {f"k<{k}": float(np.mean(cutoffs < k)), f"k={k}": float(np.mean(cutoffs == k)),
            f"k>{k}": float(np.mean(cutoffs > k))}


def _nullable_steps(frame: pd.DataFrame) -> pd.DataFrame:
    """Step columns as nullable integers: "never reached" shows as <NA>, not as a float NaN."""
    for col in frame.columns:
        if "step" in col:
            frame[col] = frame[col].astype("Int64")
    return frame


def cutoff_bins(per_k: pd.DataFrame, n_bins: int = 3) -> dict[str, list[int]]:
    """Split k-cutoff values into ``n_bins`` consecutive ranges holding about equal numbers of items.

    ``per_k`` is a cutoff_table; returns label ("k 9-12") -> the k-cutoffs in that range.
    """
    table = per_k.sort_values("k_cutoff")
    share = table["n"].cumsum() / table["n"].sum()
    which = np.minimum((share.to_numpy() - 1e-9) * n_bins, n_bins - 1).astype(int)
    bins = {}
    for b in sorted(set(which.tolist())):
        ks = table["k_cutoff"].to_numpy()[which == b].tolist()
        bins[f"k {ks[0]}-{ks[-1]}" if len(ks) > 1 else f"k {ks[0]}"] = ks
    return bins


def binned_accuracy(metrics: pd.DataFrame, per_k: pd.DataFrame, bins: dict[str, list[int]]) -> pd.DataFrame:
    """Accuracy over training of each bin of k-cutoffs: the item-weighted mean of its ``acc/k={k}``."""
    counts = per_k.set_index("k_cutoff")["n"]
    out = metrics[["step"]].copy()
    for label, ks in bins.items():
        weights = counts.loc[ks].to_numpy(dtype=float)
        out[label] = metrics[[f"acc/k={k}" for k in ks]].to_numpy() @ weights / weights.sum()
    return out


def cutoff_snapshot(metrics: pd.DataFrame, per_k: pd.DataFrame, step: int) -> pd.DataFrame:
    """Accuracy of the type_0 items of each k-cutoff at one training step (columns k_cutoff, n, accuracy)."""
    row = metrics.loc[metrics["step"] == step].iloc[0]
    return per_k[["k_cutoff", "n"]].assign(accuracy=[float(row[f"acc/k={k}"]) for k in per_k["k_cutoff"]])


def final_value(metrics: pd.DataFrame | None, column: str = "acc/type_0") -> float:
    """The last evaluation's value of ``column`` (NaN when the run is not there)."""
    if metrics is None or column not in metrics or metrics.empty:
        return float("nan")
    return float(metrics[column].iloc[-1])


def step_reached(metrics: pd.DataFrame | None, value: float = 0.99, column: str = "acc/type_0") -> str:
    """In words, when ``column`` first reached ``value``: "step 1,250", "never", or "n/a" (no run)."""
    if metrics is None or column not in metrics:
        return "n/a"
    step = first_step_above(metrics, column, value)
    return f"step {step:,}" if step is not None else "never"
