"""The probe table (one row per training run of the search) and its learning curves."""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd

from covlib.base.errors import CovlibError
from covlib.base.tables import read_table, replace_rows, upsert_row
from covlib.search.cells import CELL_KEY, PROBE_EVAL_TYPES, Cell, Probe, ProbeRules
from covlib.training.runs import load_metrics

PROBE_COLUMNS = [
    "task", "N", "model", "params", "seed", "n_train", "eligible", "success", "stopped", "steps", "best_type0",
    "final_type0", "final_train", "first_fit_step", "minutes", "threshold", "give_up_epochs", "step_cap",
    "cot", "weight_decay", "give_up_floor", "policy", "replicate", "replicate_seed",
]
# rule columns added after the first probes were run: the value every older row was run under
# (give_up_floor 0 is the authors' rule alone)
# (and the search policy that chose the probe's n_train, which never changes what the probe measures: not in the key)
# (and whether the row is a search's probe or a replicate of one, which the search never reads: REPLICATE_KINDS)
RULE_DEFAULTS = {"give_up_floor": 0, "policy": "bisect", "replicate": "search", "replicate_seed": 0}
# a replicate reruns a probe of the search at the same size: "init" with another training seed (initialisation and
# batch order) on the same training set, "draw" with the cell's training seed on another draw of the training set
# from the same task instance (its tables and seen split); replicate_seed is that other seed
REPLICATE_KINDS = ("init", "draw")


def read_probes(path: str | os.PathLike, replicates: bool = False) -> pd.DataFrame:
    """The probe table (empty with the right columns when the file does not exist yet): the searches' own probes,
    or with ``replicates`` every row, the replicates of chosen probes included (column ``replicate``)."""
    df = read_table(path, PROBE_COLUMNS, RULE_DEFAULTS)
    df["give_up_floor"] = df["give_up_floor"].astype(int)
    df["success"] = df["success"].astype(bool)
    df["cot"] = df["cot"].astype(bool)
    df["replicate_seed"] = df["replicate_seed"].astype(int)
    return df if replicates else df[df["replicate"] == "search"].reset_index(drop=True)


def append_probe(path: str | os.PathLike, row: dict) -> None:
    """Add one finished probe to the table atomically, under an exclusive lock (safe across processes);
    a probe of the same cell and n_train is replaced. A row that names no replicate kind is a search's probe."""
    if row.get("replicate") not in REPLICATE_KINDS:
        row = row | {"replicate": "search", "replicate_seed": 0}
    upsert_row(path, row, PROBE_COLUMNS, PROBE_KEY, sort=["task", "cot", "model", "N", "seed", "n_train", "give_up_floor",
                                                          "replicate", "replicate_seed"],
               defaults=RULE_DEFAULTS)


CURVE_METRICS = ["train_loss", *(f"acc/{name}" for name in PROBE_EVAL_TYPES)]


# a probe is one cell at one n_train under one give-up rule: a rerun under a step floor keeps the authors'-rule row
# (a replicate is a row of its own: replicate and replicate_seed)
PROBE_KEY = ["task", "N", "model", "seed", "cot", "n_train", "give_up_floor", "replicate", "replicate_seed"]


def curves_path(table: str | os.PathLike) -> Path:
    """The learning curves that go with a probe table: ``probes.csv`` -> ``probes_curves.csv``."""
    table = Path(table)
    return table.with_name(f"{table.stem}_curves.csv")


def append_curve(path: str | os.PathLike, row: dict, metrics: pd.DataFrame) -> None:
    """Keep a probe's learning curve (a few accuracies per evaluation) beside the probe table, so the
    book can show any probe's training without shipping its run folder; replaces an older copy."""
    cols = [c for c in CURVE_METRICS if c in metrics]
    curve = metrics[["step", *cols]].copy()
    for k in PROBE_KEY:
        curve.insert(0, k, row[k])
    replace_rows(path, curve, list(curve.columns), PROBE_KEY, float_format="%.4g", defaults=RULE_DEFAULTS)


def backfill_curves(table: str | os.PathLike, work_dir: str | os.PathLike) -> int:
    """Add the curves of probes in ``table`` whose run folders exist under ``work_dir`` but whose curve
    is missing (probes run by an older covlib); returns how many were added."""

    probes = read_probes(table)
    path = curves_path(table)
    have = (read_table(path, PROBE_KEY, RULE_DEFAULTS)[PROBE_KEY].drop_duplicates().astype(str)
            if path.is_file() else None)
    added = 0
    for row in probes.to_dict("records"):
        if have is not None and (have == pd.Series({k: str(row[k]) for k in PROBE_KEY})).all(axis=1).any():
            continue
        cell = Cell(row["task"], int(row["N"]), row["model"], int(row["seed"]), bool(row["cot"]))
        rules = ProbeRules(give_up_floor=int(row["give_up_floor"]))
        run_dir = Probe(cell, int(row["n_train"]), int(row["eligible"]), rules, str(table), str(work_dir)).run_dir()
        if (run_dir / "metrics.jsonl").is_file():
            append_curve(path, row, load_metrics(run_dir))
            added += 1
    return added


def read_curves(table: str | os.PathLike) -> pd.DataFrame:
    """Every learning curve kept beside a probe table (PROBE_KEY, step and CURVE_METRICS); empty if it kept none."""
    path = curves_path(table)
    return read_table(path, PROBE_KEY, RULE_DEFAULTS) if path.is_file() else pd.DataFrame(columns=[*PROBE_KEY, "step"])


def read_curve(table: str | os.PathLike, **key) -> pd.DataFrame:
    """One probe's learning curve (columns step and CURVE_METRICS), selected by task, N, model, seed, cot, n_train
    and give_up_floor; without give_up_floor, the lowest floor's curve of that probe (the authors' where there is
    one: a higher floor's row stands for the authors' rule only where the two rules run alike, see rule_rows)."""
    path = curves_path(table)
    if not path.is_file():
        raise CovlibError(f"{path} does not exist: the probes of {table} kept no curves")
    curves = read_table(path, PROBE_KEY, RULE_DEFAULTS)
    mask = np.ones(len(curves), dtype=bool)
    for k, v in key.items():
        mask &= (curves[k].astype(str) == str(v)).to_numpy()
    if not mask.any():
        raise CovlibError(f"no curve in {path} for {key}")
    found = curves[mask]
    found = found[found["give_up_floor"].astype(int) == found["give_up_floor"].astype(int).min()]
    return found.drop(columns=PROBE_KEY).sort_values("step").reset_index(drop=True)


def cell_rows(table: pd.DataFrame, cell: Cell, give_up_floor: int | None = 0) -> pd.DataFrame:
    """The rows of the probe table that belong to ``cell`` and count under the give-up rule with
    ``give_up_floor`` (see rule_rows; None: the rows of every rule)."""
    if not len(table):
        return table
    mask = ((table["task"] == cell.task) & (table["N"] == cell.N) & (table["model"] == cell.model)
            & (table["seed"] == cell.seed) & (table["cot"] == cell.cot))
    rows = table[mask].sort_values("n_train")
    return rows if give_up_floor is None else rule_rows(rows, give_up_floor)[0]


def split_cells(table: pd.DataFrame) -> dict[tuple, pd.DataFrame]:
    """Each cell's rows, as cell_rows(table, cell, None) gives them, keyed by (task, N, model, seed, cot): a loop
    over many cells splits the table once here instead of filtering all of it for every cell."""
    if not len(table):
        return {}
    return {(str(task), int(N), str(model), int(seed), bool(cot)): rows.sort_values("n_train")
            for (task, N, model, seed, cot), rows in table.groupby(CELL_KEY, sort=False, dropna=False)}


def rule_rows(rows: pd.DataFrame, give_up_floor: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Split probe rows by what they say under the give-up rule with a step floor of ``give_up_floor``
    (give up only once the training set has been fitted for max(give_up_epochs, floor steps)): the rows
    that count under it, and the failures it would reopen.

    Rows run under that rule count. So do rows run under another floor whose outcome this one cannot change,
    because training is the same run until one of the two rules gives up:
    - under a lower floor (the authors' rule is floor 0): a success (a higher floor only postpones giving up),
      a run the step cap stopped, and a give-up that came at least ``give_up_floor`` steps after the fit. The
      lower rules' other give-ups are reopened: this floor might have let them succeed. At each n_train the row
      of the highest floor not above this one speaks for it (a rerun under a floor replaces the authors' row);
    - under a higher floor: only where the two rules are one rule, because 100 epochs of that training set
      (give_up_epochs) last at least the higher floor's steps, so neither floor can act (at batch 512, two-hop at
      N = 70 under a floor of 2,000 steps); elsewhere a higher floor's rows never count."""
    if not len(rows):
        return rows, rows
    # positions, not frames: a cell's rows are few, and every pandas filter or take on them costs more than the
    # arithmetic (the book reads a hundred cells under several rules); the frames are taken once, at the end
    floor = (rows["give_up_floor"].fillna(0).astype(int).to_numpy() if "give_up_floor" in rows  # absent or empty:
             else np.zeros(len(rows), dtype=int))                                              # the authors'
    n = rows["n_train"].to_numpy()
    epoch_steps = _epoch_steps(rows).to_numpy()
    own = np.flatnonzero(floor == give_up_floor)
    same_rule = np.flatnonzero((floor > give_up_floor) & (epoch_steps >= floor) & ~np.isin(n, n[own]))
    own = np.concatenate([own, _one_per_size(same_rule, floor, n, lowest=True)])
    if give_up_floor == 0:
        return rows.iloc[_by_size(own, n)], rows.iloc[:0]
    lower = _one_per_size(np.flatnonzero((floor < give_up_floor) & ~np.isin(n, n[own])), floor, n, lowest=False)
    past_fit = (rows["steps"].to_numpy(float) - rows["first_fit_step"].to_numpy(float))[lower]
    settled = (rows["success"].to_numpy(bool)[lower] | (rows["stopped"].to_numpy(object)[lower] != "gave_up")
               | (past_fit >= give_up_floor))
    return rows.iloc[_by_size(np.concatenate([own, lower[settled]]), n)], rows.iloc[_by_size(lower[~settled], n)]


def one_rule_rows(table: pd.DataFrame, give_up_floor: int) -> pd.DataFrame:
    """The probes run under the step floor ``give_up_floor`` on training sets whose 100 epochs (give_up_epochs)
    outlast it: the floor cannot act on them, so they count under the authors' rule too (rule_rows)."""
    if not len(table):
        return table
    return table[(table["give_up_floor"].astype(int) == give_up_floor) & (_epoch_steps(table) >= give_up_floor)]


def _epoch_steps(rows: pd.DataFrame) -> pd.Series:
    """The steps the authors' rule waits past the fit for each probe: give_up_epochs epochs of its training set
    (the default epochs where a table has no such column) at the probes' batch size."""
    epochs = (rows["give_up_epochs"].astype(float) if "give_up_epochs" in rows
              else pd.Series(ProbeRules.give_up_epochs, index=rows.index))
    return epochs * rows["n_train"].astype(float) / ProbeRules.batch_size


def _one_per_size(positions: np.ndarray, floor: np.ndarray, n: np.ndarray, lowest: bool) -> np.ndarray:
    """One position per n_train among ``positions`` (rows' floors ``floor``, sizes ``n``): the lowest floor's, or
    the highest's; in order of floor, as a stable sort by floor leaves them."""
    by_floor = positions[np.argsort(floor[positions], kind="stable")]
    sizes = n[by_floor] if lowest else n[by_floor][::-1]
    first = np.unique(sizes, return_index=True)[1]  # each size's first occurrence (from the end: its last)
    keep = first if lowest else len(by_floor) - 1 - first
    return by_floor[np.sort(keep)]


def _by_size(positions: np.ndarray, n: np.ndarray) -> np.ndarray:
    """``positions`` sorted by n_train, ties kept in their order."""
    return positions[np.argsort(n[positions], kind="stable")]


def metrics_n_ctx(run_dir: Path) -> int:
    """n_ctx recorded in a run's config.json."""
    return int(json.loads((run_dir / "config.json").read_text())["dataset"]["n_ctx"])
