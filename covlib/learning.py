"""What a training run learned, read against coverage (chapter 3): reuse finished runs, and
tabulate accuracy per k-cutoff and the step at which each group of test items is learned."""
from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from covlib.errors import CovlibError
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
    try:
        return tr.train(dataset_dir, run_dir, preset=preset, overrides=overrides,
                        resume=existing.is_file(), progress=progress)
    except tr.RunConfigMismatch as exc:
        raise CovlibError(f"{exc}. In a chapter, set retrain = True to train this run again from scratch") from None


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
    from covlib.train import k_cutoffs

    folder = load_dataset(dataset_dir)
    cutoffs = k_cutoffs(folder)
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


def archive_run(run_dir: str | os.PathLike, dest: str | os.PathLike, commands: list[str],
                weights: dict[str, str] | None = None) -> Path:
    """Copy a run's small files (config, metrics, result) to ``dest`` for the book to ship under data/,
    with the commands that regenerate it in ``COMMANDS.txt``; ``weights`` (name -> file in the run
    folder) also ships those weights as ``weights/<name>.pt`` (fp16, model state only)."""
    from covlib import train as tr
    from covlib.io import write_json_atomic

    run_dir, dest = Path(run_dir), Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    for name in (tr.CONFIG, tr.METRICS, tr.RESULT):
        write_json_atomic(dest / name, (run_dir / name).read_text(encoding="utf-8"))
    write_json_atomic(dest / "COMMANDS.txt", "\n".join(commands) + "\n")
    if weights:
        from covlib.mechanisms import save_weights

        for name, file in weights.items():
            save_weights(run_dir, dest / "weights" / f"{name}.pt", None if file == tr.MODEL else file)
    return dest


# The book's run at the edge of coverage (chapter 3.5): shipped under data/runs/, regenerated by these commands.
EDGE_RUN = {
    "archive": "data/runs/twohop.30.4000.seed-0_wd-1.0",  # relative to the repository root
    "dataset": {"task": "twohop", "num_tokens": 30, "n_train": 4000, "seed": 0},
    "overrides": {"steps": 10_000, "weight_decay": 1.0, "checkpoint_every": 500, "keep_checkpoints": True},
    # weights chapter 5 reads (fp16, model state only): checkpoints across the rise of ID accuracy, and the end
    "weights": {"step_000500": "checkpoints/step_000500.pt", "step_002500": "checkpoints/step_002500.pt",
                "step_005000": "checkpoints/step_005000.pt", "step_007500": "checkpoints/step_007500.pt",
                "final": "model.pt"},
    "commands": [
        "covlib generate twohop --num-tokens 30 --n-train 4000 --seed 0 --out build/datasets",
        "covlib coverage build/datasets/twohop.30.4000.diff-f12.inf.seed-0 --max-k 8",
        "covlib train build/datasets/twohop.30.4000.diff-f12.inf.seed-0 --out build/runs/edge "
        "--steps 10000 --weight-decay 1.0 --checkpoint-every 500 --set keep_checkpoints=true",
        "python -c \"from covlib.learning import archive_run, EDGE_RUN; "
        "archive_run('build/runs/edge', 'data/runs/twohop.30.4000.seed-0_wd-1.0', EDGE_RUN['commands'], "
        "EDGE_RUN['weights'])\"",
    ],
}


def repository_path(relative: str | os.PathLike) -> Path:
    """A path inside the repository (e.g. shipped data under data/), whatever the working folder."""
    return Path(__file__).resolve().parent.parent / relative


# ----------------------------------------------------------------------------- models the chapters ship


@dataclass(frozen=True)
class ShippedRun:
    """A model a chapter analyses at its default preset (chapters 6 and 7): its dataset, its training, and
    the command that trains and archives it. ``dataset`` holds DatasetConfig's arguments."""

    name: str  # short name inside its set, e.g. "nontree" or "twohop_cot"
    dataset: dict
    overrides: dict = field(default_factory=dict)  # covlib.train overrides (steps, weight decay, model shape)
    preset: str = "default"  # the training preset the overrides apply to
    command: str = ""  # the shell command that makes this run's archive (written to its COMMANDS.txt)

    def config(self):
        """The run's covlib.data.DatasetConfig."""
        from covlib.data import DatasetConfig

        return DatasetConfig(**self.dataset)

    @property
    def folder(self) -> str:
        """The archive's folder name: the dataset's self-describing name."""
        return self.config().folder_name


def ship_run(run: ShippedRun, dest_root: str | os.PathLike, work_dir: str | os.PathLike, retrain: bool = False,
             progress: bool = True) -> Path:
    """Generate and annotate the run's dataset, train it (resuming a killed run), and archive its config,
    metrics, result and final weights (fp16) under ``dest_root/<run.folder>``; returns that folder."""
    from covlib.coverage import annotate_dataset
    from covlib.data import ensure_dataset

    work_dir = Path(work_dir)
    folder = ensure_dataset(run.config(), work_dir / "datasets")
    annotate_dataset(folder, max_k=8)
    run_dir = work_dir / "runs" / run.folder
    train_or_load(folder, run_dir, preset=run.preset, overrides=run.overrides, retrain=retrain, progress=progress)
    commands = [run.command] if run.command else []
    return archive_run(run_dir, Path(dest_root) / run.folder, commands, {"final": "model.pt"})


def shipped_ready(run: ShippedRun, dest_root: str | os.PathLike) -> bool:
    """Whether the archive of ``run`` (metrics and final weights) exists under ``dest_root``."""
    dest = Path(dest_root) / run.folder
    return (dest / "weights" / "final.pt").is_file() and (dest / "metrics.jsonl").is_file()


def ensure_shipped(runs: dict[str, ShippedRun], smoke: bool, data_dir: str, out_root: str | os.PathLike,
                   smoke_name: str, recompute: bool = False) -> tuple[Path, Path, dict[str, bool]]:
    """Where a chapter's models are archived, its work folder, and which of ``runs`` are there.

    Smoke: the tiny models are trained (once) under ``out_root/smoke_name``. Otherwise the archive is the
    repository's ``data_dir``, read as it is, unless ``recompute`` asks to train every model again into it
    (work under ``out_root/ship``)."""
    out_root = Path(out_root)
    if smoke:
        dest, work = out_root / smoke_name / "shipped", out_root / smoke_name
    else:
        dest, work = repository_path(data_dir), out_root / "ship"
    for run in runs.values():
        if (smoke and not shipped_ready(run, dest)) or (not smoke and recompute):
            ship_run(run, dest, work, progress=not smoke)
    return dest, work, {name: shipped_ready(run, dest) for name, run in runs.items()}


def open_shipped(run: ShippedRun, dest_root: str | os.PathLike, datasets_dir: str | os.PathLike):
    """(model, dataset folder, task tables, metrics) of an archived run; its dataset is regenerated (it is
    deterministic) and annotated under ``datasets_dir``."""
    from covlib.coverage import annotate_dataset
    from covlib.data import ensure_dataset
    from covlib.mechanisms import open_run
    from covlib.train import load_metrics

    dest = Path(dest_root) / run.folder
    if not shipped_ready(run, dest_root):
        raise CovlibError(f"{dest} holds no archived run; make it with: {run.command or 'covlib ship'}")
    folder = ensure_dataset(run.config(), datasets_dir)
    if not (folder / "test_annotated.json").is_file():
        annotate_dataset(folder, max_k=8)
    model, ds, tables = open_run(dest, folder, "weights/final.pt")
    return model, ds, tables, load_metrics(dest)


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
