"""Run folders: their files, metrics, configs and weights (full checkpoints and shipped fp16 weights)."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import torch

from covlib.base.errors import CovlibError
from covlib.base.files import write_text_atomic
from covlib.tasks.folders import DatasetFolder, load_dataset
from covlib.training.model import ModelConfig, build_model, model_config_from_dict


def save_weights(run_dir: str | os.PathLike, dest: str | os.PathLike, checkpoint: str | None = None,
                 half: bool = True) -> Path:
    """Copy a run's model weights (final model.pt, or ``checkpoint`` such as checkpoints/step_001000.pt)
    to ``dest`` as a small file: the model state only (no optimizer), fp16 by default."""
    src = Path(run_dir) / (checkpoint or "model.pt")
    if not src.is_file():
        raise CovlibError(f"{src} does not exist; train the run (with keep_checkpoints for checkpoints) first")
    state = torch.load(src, map_location="cpu", weights_only=False)
    weights = {k: (v.half() if half and v.is_floating_point() else v) for k, v in state["model"].items()}
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.tmp")
    torch.save({"model": weights, "vocab": state["vocab"], "n_ctx": state["n_ctx"], "step": state.get("step")}, tmp)
    os.replace(tmp, dest)
    return dest


def load_weights(run_dir: str | os.PathLike, weights: str, ds: DatasetFolder | None = None, device=None):
    """The model built from ``run_dir/config.json`` (a TransformerBridge, or a MambaLM for a Mamba run) with the
    weights file ``run_dir/weights`` (as written by ``save_weights``; fp16 is cast back to float32), in eval mode."""

    run_dir = Path(run_dir)
    meta = load_run_config(run_dir)
    file = run_dir / weights
    if not file.is_file():
        raise CovlibError(f"{file} does not exist; see {run_dir / 'COMMANDS.txt'} for the commands that make it")
    state = torch.load(file, map_location="cpu", weights_only=False)
    if ds is not None and list(ds.vocab) != list(state["vocab"]):
        raise CovlibError(f"the vocabulary of {ds.path} ({len(ds.vocab)} tokens) is not the one {file} was trained on "
                          f"({len(state['vocab'])} tokens); pass the dataset folder of this run")
    model = build_model(model_config_from_dict(meta["model"]), len(state["vocab"]), state["n_ctx"],
                        seed=meta["train"]["seed"], device=device)
    model.load_state_dict({k: v.float() for k, v in state["model"].items()})
    model.eval()
    return model


CONFIG, METRICS, CHECKPOINT, MODEL, RESULT = "config.json", "metrics.jsonl", "checkpoint.pt", "model.pt", "result.json"


def first_step_above(metrics: pd.DataFrame, metric: str = "acc/type_0", value: float = 0.9) -> int | None:
    """First evaluated step at which ``metric`` reached ``value`` in a load_metrics table, else None."""
    if metric not in metrics:
        return None
    hits = metrics.loc[metrics[metric] >= value, "step"]
    return int(hits.iloc[0]) if len(hits) else None


def load_metrics(run_dir: str | os.PathLike, long: bool = False) -> pd.DataFrame:
    """metrics.jsonl as a DataFrame: wide (one row per evaluation, columns step, elapsed,
    train_loss, lr and every metric name) or, with ``long=True``, tidy rows (step, metric, value)
    that altair charts directly."""
    if not (Path(run_dir) / METRICS).is_file():
        raise CovlibError(f"{run_dir} holds no {METRICS}; train a model there first with `covlib train`")
    df = pd.DataFrame(_read_rows(Path(run_dir)))
    if long:
        df = df.melt(id_vars=["step"], var_name="metric", value_name="value").dropna()
    return df


def load_run_config(run_dir: str | os.PathLike) -> dict:
    """config.json of a run folder (model, train, dataset, preset)."""
    file = Path(run_dir) / CONFIG
    if not file.is_file():
        raise CovlibError(f"{run_dir} is not a run folder (no {CONFIG}); train one with `covlib train`")
    return json.loads(file.read_text(encoding="utf-8"))


def run_family(run_dir: str | os.PathLike) -> str:
    """The model family of a run folder ("transformer" or "mamba"), from its config.json."""
    return load_run_config(run_dir)["model"].get("family", ModelConfig.family)


def load_model(run_dir: str | os.PathLike, dataset_dir: str | os.PathLike | None = None, device=None, checkpoint: str | None = None):
    """The trained model of a run folder (final ``model.pt``, else the latest checkpoint), in eval mode: a
    TransformerBridge, or a MambaLM for a Mamba run. With ``dataset_dir``, check the vocabulary is the model's."""
    run_dir = Path(run_dir)
    meta = load_run_config(run_dir)
    file = run_dir / (checkpoint or (MODEL if (run_dir / MODEL).is_file() else CHECKPOINT))
    if not file.is_file():
        raise CovlibError(f"{run_dir} holds no {MODEL} or {CHECKPOINT}; the run has not saved weights yet")
    state = torch.load(file, map_location="cpu", weights_only=False)
    if dataset_dir is not None:
        _check_vocab(load_dataset(dataset_dir), state["vocab"], file)
    model = build_model(model_config_from_dict(meta["model"]), len(state["vocab"]), state["n_ctx"],
                        seed=meta["train"]["seed"], device=device)
    model.load_state_dict(state["model"])
    model.eval()
    return model


def _check_vocab(ds: DatasetFolder, vocab: list[str], where: Path) -> None:
    if list(ds.vocab) != list(vocab):
        raise CovlibError(
            f"the vocabulary of {ds.path} ({len(ds.vocab)} tokens) does not match the one {where} was trained on "
            f"({len(vocab)} tokens); pass the dataset folder the run was trained on"
        )


def _save_torch_atomic(obj, path: Path) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    torch.save(obj, tmp)
    os.replace(tmp, path)


def _read_rows(run_dir: Path) -> list[dict]:
    file = run_dir / METRICS
    if not file.is_file():
        return []
    rows = []
    for line in file.read_text(encoding="utf-8").splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:  # a line torn by a kill mid-write
            continue
    return rows


def _write_rows(run_dir: Path, rows: list[dict]) -> None:
    write_text_atomic(run_dir / METRICS, "".join(json.dumps(r) + "\n" for r in rows))


def _append_row(run_dir: Path, row: dict) -> None:
    """Append one evaluation; a kill mid-write leaves at most a torn last line past the checkpoint,
    which resume drops (it rewrites the file up to the checkpoint's step)."""
    with open(run_dir / METRICS, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(row) + "\n")
