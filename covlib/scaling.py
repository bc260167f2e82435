"""How much data (SPEC §5.2): the smallest training set that generalises, searched by training.

The *required data* n_req of a (task, N, model, seed) cell is the smallest ``n_train`` at which
type_0 accuracy reaches a threshold (0.99 in the paper). One *probe* trains one model on one
``n_train`` with the authors' rule made explicit:

* success: the first evaluation with ``acc/type_0 >= threshold`` (the run stops there);
* give up: the training set has been fitted (``acc/train_inferred >= 0.99``) for ``give_up_epochs``
  epochs without success, or the step cap is reached.

The search walks ``n_train`` on a log scale: from a starting size it steps by ``step_factor`` up
after a failure and down after a success until it holds a bracket [largest failing n, smallest
succeeding n], then bisects (geometric midpoints) until the bracket's ratio is at most
``bracket_ratio``. The estimate is the bracket's geometric mean.

Every probe is an ordinary run folder (``covlib.train``: resumable from its checkpoint), and
every finished probe appends one row to a CSV table (``data/scaling/probes.csv`` for the book),
under a file lock so that parallel workers, local or on a cluster, share it. The search state is
a pure function of that table, so a search interrupted anywhere resumes where it stopped, on
this machine or another, as long as the table is kept (the book commits it).
"""
from __future__ import annotations

import dataclasses
import fcntl
import itertools
import json
import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from covlib.errors import CovlibError
from covlib.table import upsert_row

PROBE_COLUMNS = [
    "task", "N", "model", "params", "seed", "n_train", "eligible", "success", "stopped", "steps", "best_type0",
    "final_type0", "final_train", "first_fit_step", "minutes", "threshold", "give_up_epochs", "step_cap",
    "cot", "weight_decay",
]

# model shapes for the parameter-scaling experiment: name -> overrides of the default preset
MODEL_SHAPES: dict[str, dict] = {
    "L2-d64": {"n_layers": 2, "d_model": 64, "n_heads": 4},
    "L4-d128": {"n_layers": 4, "d_model": 128, "n_heads": 4},  # the book's default model
    "L6-d128": {"n_layers": 6, "d_model": 128, "n_heads": 4},  # 11x L2-d64's parameters at 1.5x the default's cost
    "L4-d256": {"n_layers": 4, "d_model": 256, "n_heads": 8},
    "L6-d256": {"n_layers": 6, "d_model": 256, "n_heads": 8},
    "smoke": {"n_layers": 1, "d_model": 32, "n_heads": 2},
}


@dataclass(frozen=True)
class ProbeRules:
    """What counts as success and when a probe gives up (the authors' rule, SPEC §5.2)."""

    threshold: float = 0.99  # type_0 accuracy that counts as generalising
    give_up_epochs: float = 100.0  # epochs after the training set is fitted without success
    step_cap: int = 6000  # hard cap on optimiser steps per probe
    eval_every: int = 50
    batch_size: int = 512
    weight_decay: float = 0.1
    test_size_per_type: int = 1000  # test items per type of each probe's dataset

    def train_overrides(self) -> dict:
        return {"steps": self.step_cap, "early_stop": True, "threshold": self.threshold,
                "give_up_epochs": self.give_up_epochs, "eval_every": self.eval_every, "batch_size": self.batch_size,
                "weight_decay": self.weight_decay, "checkpoint_every": 500}


@dataclass(frozen=True)
class SearchRules:
    """How the search walks n_train: start, step, and when a bracket is tight enough."""

    step_factor: float = 1.6  # multiply or divide n_train by this until success and failure are bracketed
    bracket_ratio: float = 1.3  # stop bisecting once smallest success / largest failure <= this
    min_n: int = 16
    # the largest probe leaves this many ID-eligible inputs (at most a quarter of them) out of training, so
    # that the ID test set (type_0) still holds that many items: near the whole pool nothing is left to test
    min_test_items: int = 1000

    def largest_n(self, eligible: int) -> int:
        """The largest n_train a search tries: the ID-eligible inputs less those kept to test."""
        return max(eligible - min(self.min_test_items, eligible // 4), self.min_n)


@dataclass(frozen=True)
class Cell:
    """One (task, N, model, seed) whose required data the search estimates."""

    task: str
    N: int
    model: str = "L4-d128"
    seed: int = 0
    cot: bool = False
    start: int | None = None  # first n_train to probe; None: a guess from the coverage of the ID test
    # placeholder bridges (SPEC §1 fake_bridge). The probe table has no column for it: keep such cells in a
    # table of their own (chapter 7 uses data/cot/probes_fakebridge.csv; the CLI refuses the book's table)
    fake_bridge: bool = False

    def key(self) -> tuple:
        return (self.task, self.N, self.model, self.seed, self.cot, self.fake_bridge)

    def label(self) -> str:
        style = "-cot" if self.cot else "-fakebridge" if self.fake_bridge else ""
        return f"{self.task}{style} N={self.N} {self.model} seed={self.seed}"


@dataclass
class CellState:
    """What the probes so far say about one cell."""

    cell: Cell
    probes: pd.DataFrame  # this cell's rows of the probe table
    eligible: int
    next_n: int | None  # the next n_train to probe, None when finished
    status: str  # "searching", "bracketed", "unreachable" (fails at the largest testable n), "below_min"
    low: int | None = None  # largest failing n below the smallest success
    high: int | None = None  # smallest succeeding n
    inversions: int = 0  # failures above the smallest success (non-monotone evidence)

    @property
    def estimate(self) -> float | None:
        """The geometric mean of the bracket (None until both ends exist)."""
        if self.low is None or self.high is None:
            return None
        return float(np.sqrt(self.low * self.high))


# ----------------------------------------------------------------------------- the probe table


def read_probes(path: str | os.PathLike) -> pd.DataFrame:
    """The probe table (empty with the right columns when the file does not exist yet)."""
    path = Path(path)
    if not path.is_file():
        return pd.DataFrame(columns=PROBE_COLUMNS)
    try:
        df = pd.read_csv(path)
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise CovlibError(f"{path} is not a probe table ({exc}); restore it from git or delete it to start over") from None
    missing = sorted(set(PROBE_COLUMNS) - set(df.columns))
    if missing:
        raise CovlibError(f"{path} lacks the columns {missing}; it was not written by covlib.scaling")
    df["success"] = df["success"].astype(bool)
    df["cot"] = df["cot"].astype(bool)
    return df


def append_probe(path: str | os.PathLike, row: dict) -> None:
    """Add one finished probe to the table atomically, under an exclusive lock (safe across processes);
    a probe of the same cell and n_train is replaced."""
    upsert_row(path, row, PROBE_COLUMNS, ["task", "N", "model", "seed", "cot", "n_train"],
               sort=["task", "cot", "model", "N", "seed", "n_train"])


CURVE_METRICS = ["train_loss", "acc/train_inferred", "acc/type_0", "acc/type_1", "acc/type_2", "acc/type_3"]
PROBE_KEY = ["task", "N", "model", "seed", "cot", "n_train"]


def curves_path(table: str | os.PathLike) -> Path:
    """The learning curves that go with a probe table: ``probes.csv`` -> ``probes_curves.csv``."""
    table = Path(table)
    return table.with_name(f"{table.stem}_curves.csv")


def append_curve(path: str | os.PathLike, row: dict, metrics: pd.DataFrame) -> None:
    """Keep a probe's learning curve (a few accuracies per evaluation) beside the probe table, so the
    book can show any probe's training without shipping its run folder; replaces an older copy."""
    path = Path(path)
    cols = [c for c in CURVE_METRICS if c in metrics]
    curve = metrics[["step", *cols]].copy()
    for k in PROBE_KEY:
        curve.insert(0, k, row[k])
    with open(path.with_name(f".{path.name}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        old = pd.read_csv(path) if path.is_file() else pd.DataFrame(columns=curve.columns)
        if len(old):
            same = np.ones(len(old), dtype=bool)
            for k in PROBE_KEY:
                same &= (old[k].astype(str) == str(row[k])).to_numpy()
            old = old[~same]
        table = pd.concat([old, curve], ignore_index=True) if len(old) else curve
        tmp = path.with_name(f".{path.name}.tmp")
        table.to_csv(tmp, index=False, float_format="%.4g")
        os.replace(tmp, path)


def backfill_curves(table: str | os.PathLike, work_dir: str | os.PathLike) -> int:
    """Add the curves of probes in ``table`` whose run folders exist under ``work_dir`` but whose curve
    is missing (probes run by an older covlib); returns how many were added."""
    from covlib.train import load_metrics

    probes = read_probes(table)
    path = curves_path(table)
    have = pd.read_csv(path)[PROBE_KEY].drop_duplicates().astype(str) if path.is_file() else None
    added = 0
    for row in probes.to_dict("records"):
        if have is not None and (have == pd.Series({k: str(row[k]) for k in PROBE_KEY})).all(axis=1).any():
            continue
        cell = Cell(row["task"], int(row["N"]), row["model"], int(row["seed"]), bool(row["cot"]))
        run_dir = Probe(cell, int(row["n_train"]), int(row["eligible"]), ProbeRules(), str(table), str(work_dir)).run_dir()
        if (run_dir / "metrics.jsonl").is_file():
            append_curve(path, row, load_metrics(run_dir))
            added += 1
    return added


def read_curve(table: str | os.PathLike, **key) -> pd.DataFrame:
    """One probe's learning curve (columns step and CURVE_METRICS), selected by task, N, model, seed, cot, n_train."""
    path = curves_path(table)
    if not path.is_file():
        raise CovlibError(f"{path} does not exist: the probes of {table} kept no curves")
    curves = pd.read_csv(path)
    mask = np.ones(len(curves), dtype=bool)
    for k, v in key.items():
        mask &= (curves[k].astype(str) == str(v)).to_numpy()
    if not mask.any():
        raise CovlibError(f"no curve in {path} for {key}")
    return curves[mask].drop(columns=PROBE_KEY).sort_values("step").reset_index(drop=True)


def cell_rows(table: pd.DataFrame, cell: Cell) -> pd.DataFrame:
    """The rows of the probe table that belong to ``cell``."""
    if not len(table):
        return table
    mask = ((table["task"] == cell.task) & (table["N"] == cell.N) & (table["model"] == cell.model)
            & (table["seed"] == cell.seed) & (table["cot"] == cell.cot))
    return table[mask].sort_values("n_train")


# ----------------------------------------------------------------------------- the search


def eligible_count(task: str, N: int, seed: int, cot: bool = False) -> int:
    """The number of ID-eligible inputs of a cell's dataset (training examples can be at most this minus one)."""
    from covlib.data import DatasetConfig, generate

    return generate(DatasetConfig(task, N, 1, seed=seed, test_size_per_type=0, cot=cot)).eligible_count


def next_probe(cell: Cell, rows: pd.DataFrame, eligible: int, rules: SearchRules, start: int,
               step_cap: int | None = None) -> CellState:
    """Where the search of one cell stands, and which n_train to probe next (a pure function of its rows).

    With ``step_cap`` (the cap of the probes to come), a failure that stopped at a lower cap, before the
    give-up rule could decide, is probed again (its run resumes) before the search steps up from it or
    ends on it: raising the cap keeps every decided probe and reopens only the undecided ones it rests on."""
    most = rules.largest_n(eligible)
    rows = rows[rows["n_train"] <= most] if len(rows) else rows  # probes past the cap (older rules) are ignored
    ok = rows.loc[rows["success"], "n_train"].astype(int).tolist()
    bad = rows.loc[~rows["success"], "n_train"].astype(int).tolist()
    undecided = set()
    if step_cap is not None and len(rows) and "stopped" in rows:
        capped = rows[~rows["success"] & (rows["stopped"] == "steps") & (rows["step_cap"].astype(int) < step_cap)]
        undecided = set(capped["n_train"].astype(int))
    state = CellState(cell, rows, eligible, None, "searching")
    if not ok and not bad:
        state.next_n = int(min(max(start, rules.min_n), most))
        return state
    if not ok:
        top = max(bad)
        if top in undecided:
            state.next_n = top
            return state
        if top >= most:
            state.status, state.low = "unreachable", top
            return state
        state.next_n = int(min(round(top * rules.step_factor), most))
        return state
    high = min(ok)
    state.high = high
    below = [n for n in bad if n < high]
    state.inversions = sum(n > high for n in bad)
    if not below:
        if high <= rules.min_n:
            state.status = "below_min"
            return state
        state.next_n = int(max(round(high / rules.step_factor), rules.min_n))
        return state
    state.low = max(below)
    if high / state.low <= rules.bracket_ratio or high - state.low <= 1:
        if state.low in undecided:
            state.next_n = state.low
            return state
        state.status = "bracketed"
        return state
    state.next_n = int(round(np.sqrt(state.low * high)))
    return state


def starting_size(task: str, N: int, seed: int, coverage_k: int = 3, coverage_target: float = 0.99,
                  cot: bool = False) -> int:
    """A first guess for n_req: the data that ``coverage_k``-covers ``coverage_target`` of the ID test
    items (SPEC §2), which chapter 2 found close to what training needs (the first searches, at N = 20
    to 30, started from 90% and needed one probe more)."""
    from covlib.coverage import data_for_coverage

    try:
        return int(data_for_coverage(task, N, k=coverage_k, target=coverage_target, seed=seed, rel_tol=0.1)["n_train"])
    except CovlibError:  # small N (not even the whole pool is that well covered), or a CoT-only task
        return eligible_count(task, N, seed, cot) // 2


def first_guess(cell: Cell, table: pd.DataFrame, rules: SearchRules = SearchRules()) -> int:
    """Where a cell's search starts: the estimate of a finished search of the same task, N, seed and
    target style with another model (the paper finds the requirement does not move with model size,
    so this saves the probes that walk up from coverage). A CoT cell with none starts from the same
    model's finished plain estimate, or else the coverage guess, divided by COT_START_DIVISOR (the paper's
    CoT models need 5-10 times less data: this saves the probes that walk down). Else starting_size's
    coverage guess. The start changes how many probes a search takes, never the bracket it ends with."""
    estimates = _finished_estimates(table, cell, rules) if len(table) else []
    if estimates:
        return int(round(np.exp(np.mean(np.log(estimates)))))
    if cell.cot:
        plain = _finished_estimates(table, dataclasses.replace(cell, cot=False), rules, same_model=True) if len(table) else []
        base = plain[0] if plain else starting_size(cell.task, cell.N, cell.seed, cot=True)
        return max(rules.min_n, int(round(base / COT_START_DIVISOR)))
    return starting_size(cell.task, cell.N, cell.seed, cot=cell.cot)


COT_START_DIVISOR = 5.0


def _finished_estimates(table: pd.DataFrame, cell: Cell, rules: SearchRules, same_model: bool = False
                        ) -> list[float]:
    """Bracket estimates of finished searches of the cell's task, N, seed and target style: of other
    models (default), or of the cell's own model (``same_model``)."""
    same = table[(table["task"] == cell.task) & (table["N"] == cell.N) & (table["seed"] == cell.seed)
                 & (table["cot"] == cell.cot)]
    same = same[same["model"] == cell.model] if same_model else same[same["model"] != cell.model]
    estimates = []
    for model, rows in same.groupby("model"):
        other = dataclasses.replace(cell, model=model)
        state = next_probe(other, rows.sort_values("n_train"), int(rows["eligible"].iloc[0]), rules, 0)
        if state.status == "bracketed":
            estimates.append(state.estimate)
    return estimates


def search_states(cells: Sequence[Cell], table: pd.DataFrame, rules: SearchRules = SearchRules(),
                  starts: dict[tuple, int] | None = None, step_cap: int | None = None) -> list[CellState]:
    """The state of every cell given the probe table (starting sizes from ``starts`` or the cell; with
    ``step_cap``, failures a lower cap stopped are reopened as next_probe says)."""
    states = []
    for cell in cells:
        start = cell.start or (starts or {}).get(cell.key())
        rows = cell_rows(table, cell)
        if start is None and not len(rows):
            start = first_guess(cell, table, rules)
        eligible = int(rows["eligible"].iloc[0]) if len(rows) else eligible_count(cell.task, cell.N, cell.seed, cell.cot)
        states.append(next_probe(cell, rows, eligible, rules, start or 0, step_cap))
    return states


# ----------------------------------------------------------------------------- one probe


@dataclass(frozen=True)
class Probe:
    """One training run of the search: a cell at one n_train (picklable: it crosses process boundaries)."""

    cell: Cell
    n_train: int
    eligible: int
    rules: ProbeRules
    table: str  # the probe table this probe appends its row to
    work_dir: str  # datasets/ and runs/ go here (build/scaling for the book)

    def run_dir(self) -> Path:
        c = self.cell
        style = ".cot" if c.cot else ".fakebridge" if c.fake_bridge else ""
        return Path(self.work_dir) / "runs" / f"{c.task}{style}.{c.N}.{self.n_train}.seed-{c.seed}_{c.model}"


def model_overrides(model: str) -> dict:
    """The default preset's overrides for a named model shape (MODEL_SHAPES)."""
    if model not in MODEL_SHAPES:
        raise CovlibError(f"unknown model shape {model!r}; choose one of: {', '.join(MODEL_SHAPES)}")
    return dict(MODEL_SHAPES[model])


def model_params(model: str, N: int, n_ctx: int) -> int:
    """Parameters of a named model shape on a vocabulary of N task tokens plus </a>."""
    from covlib.train import make_config

    return make_config("default", model_overrides(model)).model.n_params(N + 1, n_ctx)


def run_probe(probe: Probe) -> dict:
    """Train one probe (resuming its run folder if a checkpoint exists), append its row, return it."""
    from covlib.data import DatasetConfig, ensure_dataset
    from covlib.train import load_metrics, train

    c, rules = probe.cell, probe.rules
    ds_dir = ensure_dataset(DatasetConfig(c.task, c.N, probe.n_train, seed=c.seed, cot=c.cot,
                                          fake_bridge=c.fake_bridge, test_size_per_type=rules.test_size_per_type),
                            Path(probe.work_dir) / "datasets")
    overrides = rules.train_overrides() | model_overrides(c.model) | {"seed": c.seed}
    t0 = time.perf_counter()
    result = train(ds_dir, probe.run_dir(), preset="default", overrides=overrides, resume=True, progress=False)
    metrics = load_metrics(probe.run_dir())
    fitted = metrics.loc[metrics["acc/train_inferred"] >= 0.99, "step"]
    final = result.final
    row = {
        "task": c.task, "N": c.N, "model": c.model, "params": model_params(c.model, c.N, metrics_n_ctx(probe.run_dir())),
        "seed": c.seed, "n_train": probe.n_train, "eligible": probe.eligible,
        "success": result.stopped == "early_stop", "stopped": result.stopped, "steps": int(final["step"]),
        "best_type0": float(metrics["acc/type_0"].max()), "final_type0": float(final["acc/type_0"]),
        "final_train": float(final["acc/train_inferred"]),
        "first_fit_step": int(fitted.iloc[0]) if len(fitted) else None,
        "minutes": round(float(final.get("elapsed", time.perf_counter() - t0)) / 60, 3),
        "threshold": rules.threshold, "give_up_epochs": rules.give_up_epochs, "step_cap": rules.step_cap,
        "cot": c.cot, "weight_decay": rules.weight_decay,
    }
    append_probe(probe.table, row)
    append_curve(curves_path(probe.table), row, metrics)
    if result.stopped != "steps":  # a probe the step cap stopped keeps its checkpoint: a higher cap resumes it
        (probe.run_dir() / "checkpoint.pt").unlink(missing_ok=True)  # the row, its curve and model.pt are what we keep
    return row


def metrics_n_ctx(run_dir: Path) -> int:
    """n_ctx recorded in a run's config.json."""
    return int(json.loads((run_dir / "config.json").read_text())["dataset"]["n_ctx"])


def _one_thread_worker() -> None:
    """Every pool worker trains on one thread: two one-thread processes beat one two-thread run."""
    os.environ["OMP_NUM_THREADS"] = "1"
    import torch

    torch.set_num_threads(1)


# ----------------------------------------------------------------------------- the whole search


@dataclass
class SearchResult:
    """Every cell's state after a search; ``summary()`` is one row per cell."""

    states: list[CellState]
    table: pd.DataFrame
    probes_run: int = 0  # probes this call trained (the rest came from the table)
    crashed: list[str] = field(default_factory=list)  # cells whose probe raised

    def summary(self) -> pd.DataFrame:
        return summarise(self.states)


def summarise(states: Iterable[CellState]) -> pd.DataFrame:
    """One row per cell: task, N, model, seed, bracket, estimate (only once the bracket is tight: a cell
    still searching has none, so fits use finished cells only), status, probes and CPU minutes.
    ``low_capped`` says the bracket's failing probe (for an unreachable cell, the largest) was stopped by the
    step cap before the authors' rule (``give_up_epochs`` after fitting) could decide: a failure within the
    budget, so the estimate may sit above what a longer run would need."""
    rows = []
    for s in states:
        c = s.cell
        at_low = s.probes[s.probes["n_train"].astype(int) == s.low] if s.low is not None else s.probes.iloc[:0]
        rows.append({"task": c.task, "cot": c.cot, "N": c.N, "model": c.model, "seed": c.seed, "low": s.low,
                     "high": s.high, "n_req": s.estimate if s.status == "bracketed" else None,
                     "status": s.status, "next_n": s.next_n,
                     "probes": len(s.probes), "eligible": s.eligible,
                     "minutes": float(s.probes["minutes"].sum()) if len(s.probes) else 0.0,
                     "inversions": s.inversions, "low_capped": bool("stopped" in at_low and (at_low["stopped"] == "steps").any())})
    return pd.DataFrame(rows)


def search(cells: Sequence[Cell], table: str | os.PathLike, work_dir: str | os.PathLike,
           probe_rules: ProbeRules = ProbeRules(), search_rules: SearchRules = SearchRules(), jobs: int = 1,
           max_probes: int | None = None, log: Callable[[str], None] | None = print, executor: str = "local",
           slurm=None) -> SearchResult:
    """Search the required data of every cell; resumes from ``table``.

    With ``jobs`` > 1, probes run in a pool of one-thread worker processes, and a worker that
    finishes takes the next probe of any cell at once (no waiting for a round to end). A cell is
    never probed twice at the same time, so every probe uses all the evidence of its cell.
    With ``executor="slurm"`` (``slurm``: covlib.executors.SlurmOptions), each round submits the next
    probe of every unfinished cell as one job array; the table needs a file system the tasks share."""
    if executor == "slurm":
        return _search_on_slurm(cells, str(table), work_dir, probe_rules, search_rules, max_probes, log, slurm)
    table = str(table)
    _check_rules(probe_rules, table, cells)
    backfill_curves(table, work_dir)
    starts: dict[tuple, int] = {}

    def next_of(cell: Cell) -> Probe | None:
        probes = read_probes(table)
        rows = cell_rows(probes, cell)
        if cell.start is None and not len(rows) and cell.key() not in starts:
            starts[cell.key()] = first_guess(cell, probes, search_rules)
        eligible = int(rows["eligible"].iloc[0]) if len(rows) else eligible_count(cell.task, cell.N, cell.seed, cell.cot)
        state = next_probe(cell, rows, eligible, search_rules, cell.start or starts.get(cell.key(), 0),
                           probe_rules.step_cap)
        if state.next_n is None:
            return None
        return Probe(cell, state.next_n, eligible, probe_rules, table, str(work_dir))

    def report(row: dict) -> None:
        if log:
            log(f"{row['task']}{'-cot' if row['cot'] else ''} N={row['N']} {row['model']} seed={row['seed']} "
                f"n={row['n_train']}: {'success' if row['success'] else 'failure'} ({row['stopped']}, step "
                f"{row['steps']}, best type_0 {row['best_type0']:.3f}, {row['minutes']:.1f} min)")

    broken: list[Cell] = []  # cells whose probe crashed: left alone for the rest of this call

    def crashed(cell: Cell, exc: BaseException) -> None:
        broken.append(cell)
        if log:
            log(f"{cell.label()}: probe crashed ({type(exc).__name__}: {exc}); the other cells go on")

    launched = 0
    if jobs <= 1:
        while max_probes is None or launched < max_probes:
            probe = next((p for c in cells if c not in broken and (p := next_of(c)) is not None), None)
            if probe is None:
                break
            launched += 1
            try:
                report(run_probe(probe))
            except Exception as exc:  # noqa: BLE001  (recorded; the search goes on)
                crashed(probe.cell, exc)
    else:
        from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
        from multiprocessing import get_context

        busy: dict = {}  # future -> cell
        with ProcessPoolExecutor(jobs, mp_context=get_context("spawn"), initializer=_one_thread_worker) as pool:
            while True:
                while len(busy) < jobs and (max_probes is None or launched < max_probes):
                    probe = next((p for c in cells if c not in busy.values() and c not in broken
                                  and (p := next_of(c)) is not None), None)
                    if probe is None:
                        break
                    if log:
                        log(f"start {probe.cell.label()} n={probe.n_train}")
                    busy[pool.submit(run_probe, probe)] = probe.cell
                    launched += 1
                if not busy:
                    break
                finished, _ = wait(busy, return_when=FIRST_COMPLETED)
                for fut in finished:
                    cell = busy.pop(fut)
                    try:
                        report(fut.result())
                    except Exception as exc:  # noqa: BLE001  (recorded; the search goes on)
                        crashed(cell, exc)
    final = search_states(cells, read_probes(table), search_rules, starts, probe_rules.step_cap)
    return SearchResult(final, read_probes(table), launched, [c.label() for c in broken])


def _search_on_slurm(cells, table: str, work_dir, probe_rules, search_rules, max_probes, log, slurm) -> SearchResult:
    """The search in rounds of SLURM job arrays (one task per unfinished cell)."""
    from covlib.executors import Job, SlurmOptions, run_jobs

    _check_rules(probe_rules, table, cells)
    starts: dict[tuple, int] = {}
    launched, crashed = 0, []
    while max_probes is None or launched < max_probes:
        states = [s for s in search_states(cells, read_probes(table), search_rules, starts, probe_rules.step_cap)
                  if s.next_n is not None and s.cell.label() not in crashed]
        if max_probes is not None:
            states = states[: max_probes - launched]
        if not states:
            break
        probes = [Probe(s.cell, s.next_n, s.eligible, probe_rules, table, str(work_dir)) for s in states]
        if log:
            log("submitting " + "; ".join(f"{p.cell.label()} n={p.n_train}" for p in probes))
        jobs = [Job(run_probe, {"probe": p}, str(p.run_dir()), p.cell.label()) for p in probes]
        outcomes = run_jobs(jobs, "slurm", slurm=slurm or SlurmOptions(), folder=Path(work_dir) / "submitit",
                            progress=log is not None)
        launched += len(probes)
        for o in outcomes:
            if o.status != "done":
                crashed.append(o.name)
                if log:
                    log(f"{o.name}: probe {o.status} ({o.error}); the other cells go on")
    final = search_states(cells, read_probes(table), search_rules, starts, probe_rules.step_cap)
    return SearchResult(final, read_probes(table), launched, crashed)


def _check_rules(rules: ProbeRules, table: str, cells: Sequence[Cell] = ()) -> None:
    """A table holds probes of one rule set: mixing thresholds or budgets would corrupt the brackets. The
    step cap may differ between cells, and within a cell it may only grow: probes the give-up rule decided
    stand under a higher cap, and the search probes again those a lower cap stopped (next_probe); under a
    lower cap, probes decided late would not."""
    df = read_probes(table)
    if not len(df):
        return
    for col, value in (("threshold", rules.threshold), ("give_up_epochs", rules.give_up_epochs),
                       ("weight_decay", rules.weight_decay)):
        other = sorted(set(df[col].astype(float)) - {float(value)})
        if other:
            raise CovlibError(f"{table} holds probes with {col}={other[0]:g}, not {value:g}; use another table "
                              "(--table) for other probe rules")
    for cell in cells:
        higher = cell_rows(df, cell)["step_cap"].astype(int)
        higher = higher[higher > rules.step_cap]
        if len(higher):
            raise CovlibError(f"{table} holds probes of {cell.label()} with step_cap={int(higher.max())}, above "
                              f"{rules.step_cap}; pass --step-cap {int(higher.max())} or more (a cell's cap may grow, "
                              "not shrink), or use another table")


# ----------------------------------------------------------------------------- fits


def power_fit(N: Sequence[float], n: Sequence[float]) -> dict:
    """Least squares of log n = log a + c log N: returns a, c and R^2."""
    x, y = np.log(np.asarray(N, float)), np.log(np.asarray(n, float))
    if len(np.unique(x)) < 2:
        raise CovlibError("a power-law fit needs estimates at two values of N or more")
    c, log_a = np.polyfit(x, y, 1)
    resid = y - (log_a + c * x)
    ss_tot = float(((y - y.mean()) ** 2).sum())
    r2 = 1.0 - float((resid**2).sum()) / ss_tot if ss_tot > 0 else float("nan")
    return {"a": float(np.exp(log_a)), "c": float(c), "r2": r2, "points": int(len(x))}


def bootstrap_exponent(estimates: pd.DataFrame, reps: int = 2000, seed: int = 0, level: float = 0.95) -> dict:
    """The fitted exponent with a bootstrap interval: resample the N values, and the seeds within each
    N, with replacement (``estimates`` has columns N and n_req, one row per seed)."""
    est = estimates.dropna(subset=["n_req"])
    fit = power_fit(est["N"], est["n_req"])
    groups = [g["n_req"].to_numpy(float) for _, g in est.groupby("N")]
    Ns = np.array(sorted(est["N"].unique()), float)
    rng = np.random.default_rng(seed)
    cs = []
    for _ in range(reps):
        pick = rng.integers(0, len(Ns), len(Ns))
        if len(np.unique(Ns[pick])) < 2:
            continue
        xs, ys = [], []
        for i in pick:
            vals = groups[i][rng.integers(0, len(groups[i]), len(groups[i]))]
            xs += [np.log(Ns[i])] * len(vals)
            ys += list(np.log(vals))
        cs.append(np.polyfit(xs, ys, 1)[0])
    lo, hi = np.quantile(cs, [(1 - level) / 2, (1 + level) / 2]) if cs else (np.nan, np.nan)
    return fit | {"c_low": float(lo), "c_high": float(hi), "reps": len(cs)}


def requirement_ratio(top: pd.DataFrame, bottom: pd.DataFrame, labels: tuple[str, str] = ("top", "bottom")
                      ) -> pd.DataFrame:
    """n_req of one search over n_req of another at every (N, seed) both have finished (search summaries).
    Columns N, seed, n_req_<label>, n_req_<label>, ratio."""
    cols = ["N", "seed", "n_req"]
    a, b = (f.dropna(subset=["n_req"])[cols] if len(f) else pd.DataFrame(columns=cols) for f in (top, bottom))
    both = a.merge(b, on=["N", "seed"], suffixes=tuple(f"_{x}" for x in labels))
    both = both.astype({f"n_req_{x}": float for x in labels})
    ratio = both[f"n_req_{labels[0]}"] / both[f"n_req_{labels[1]}"]
    return both.assign(ratio=ratio).sort_values(["N", "seed"]).reset_index(drop=True)


def seed_spread(summary: pd.DataFrame) -> float:
    """How far apart two seeds' estimates of the same cell typically are: the geometric mean, over every
    pair of seeds finished at the same N, of the larger n_req over the smaller (1.0 = identical; NaN when no
    N has two finished seeds). The yardstick for a difference between models searched on one seed."""
    done = summary.dropna(subset=["n_req"]) if len(summary) else summary
    gaps = [abs(np.log(x / y)) for _, g in (done.groupby("N") if len(done) else [])
            for x, y in itertools.combinations(g["n_req"].astype(float), 2)]
    return float(np.exp(np.mean(gaps))) if gaps else float("nan")


def coverage_requirement(task: str, Ns: Sequence[int], ks: Sequence[int] = (1, 2, 3, 4),
                         targets: Sequence[float] = (0.9, 0.99), seed: int = 0, test_size_per_type: int = 1000,
                         points: int = 14) -> pd.DataFrame:
    """The coverage-predicted requirement: the smallest n_train whose ID test items are ``target``
    k-covered, for every k and target at once, per N. One coverage sweep gives every k, so instead of
    a bisection per (k, target) we sweep a log grid of n_train and interpolate each crossing in log n
    (coverage rises with n)."""
    from covlib.coverage import coverage_by_k
    from covlib.data import DatasetConfig, generate

    rows = []
    for N in Ns:
        eligible = eligible_count(task, N, seed)
        grid = np.unique(np.geomspace(max(N, 16), eligible - 1, points).round().astype(int))
        cov = []
        for n in grid:
            ds = generate(DatasetConfig(task, N, int(n), seed=seed, test_size_per_type=test_size_per_type))
            t = coverage_by_k(ds, max(ks))
            t0 = t[t["type"] == "type_0"].set_index("k")["covered"]
            cov.append([float(t0[k]) for k in ks])
        cov = np.array(cov)  # (grid, k)
        for j, k in enumerate(ks):
            for target in targets:
                rows.append({"task": task, "N": N, "k": k, "target": target, "eligible": eligible,
                             "n_train": _crossing(grid, cov[:, j], target)})
    return pd.DataFrame(rows)


def _crossing(n: np.ndarray, share: np.ndarray, target: float) -> float:
    """The n (interpolated in log n) where a rising share first reaches target; NaN if it never does."""
    share = np.maximum.accumulate(share)
    hit = np.flatnonzero(share >= target)
    if not len(hit):
        return float("nan")
    i = hit[0]
    if i == 0:
        return float(n[0])
    x0, x1, y0, y1 = np.log(n[i - 1]), np.log(n[i]), share[i - 1], share[i]
    return float(np.exp(x0 + (target - y0) * (x1 - x0) / (y1 - y0)))


def cells_for(task: str, Ns: Iterable[int], seeds: Iterable[int], model: str = "L4-d128", cot: bool = False,
              fake_bridge: bool = False) -> list[Cell]:
    """Every (N, seed) cell of one task and model."""
    return [Cell(task, int(N), model, int(s), cot, fake_bridge=fake_bridge) for N in Ns for s in seeds]


def rules_dict(rules) -> dict:
    return dataclasses.asdict(rules)


def bracket_pair(summary: pd.DataFrame) -> pd.Series | None:
    """The bracketed cell whose failing and succeeding probes are closest (in ratio): the clearest
    picture of what happens just below the required data. None if no cell is bracketed."""
    done = summary[summary["status"] == "bracketed"] if len(summary) else summary
    if not len(done):
        return None
    return done.loc[(done["high"] / done["low"]).idxmin()]


def id_coverage(task: str, N: int, n_train: int, seed: int, max_k: int = 6, test_size_per_type: int = 1000
                ) -> pd.DataFrame:
    """Coverage by k (k = 1..max_k) of the ID test items of a probe's dataset (regenerated: it is deterministic)."""
    from covlib.coverage import coverage_by_k
    from covlib.data import DatasetConfig, generate

    table = coverage_by_k(generate(DatasetConfig(task, N, n_train, seed=seed, test_size_per_type=test_size_per_type)),
                          max_k)
    return table[table["type"] == "type_0"].reset_index(drop=True)


# ----------------------------------------------------------------------------- the book's experiments

BOOK_TABLE = "data/scaling/probes.csv"  # relative to the repository
BOOK_WORK = "build/scaling"
# chapter 4's experiments: name -> task, N values, seeds, model shape (the cells the cache should hold)
BOOK_EXPERIMENTS: dict[str, dict] = {
    "twohop": {"task": "twohop", "N": [20, 25, 30, 35, 40, 50], "seeds": [0, 1], "model": "L4-d128"},
    # model sizes: one seed each at three N (compute budget); L6-d128 rather than L4-d256 (30x, but about
    # 3x the default's cost per probe) so that the span passes 10x within a session's CPU. The small model
    # also runs N = 40 (its probes are cheap): at N = 25 it fails even at the largest training set
    "twohop_small_model": {"task": "twohop", "N": [25, 30, 35, 40], "seeds": [0], "model": "L2-d64"},
    "twohop_large_model": {"task": "twohop", "N": [25, 30, 35], "seeds": [0], "model": "L6-d128"},
    # one seed each (compute budget); at N = 8 the requirement would be most of the ID pool (coverage_<task>.csv)
    "threehop": {"task": "threehop", "N": [10, 12, 14, 16], "seeds": [0], "model": "L4-d128"},
    "parallel_twohop": {"task": "parallel_twohop", "N": [10, 12, 14, 16], "seeds": [0], "model": "L4-d128"},
}


def _experiment(experiment: str | dict) -> dict:
    if isinstance(experiment, dict):
        return experiment
    if experiment not in BOOK_EXPERIMENTS:
        raise CovlibError(f"unknown experiment {experiment!r}; the book's experiments: {', '.join(BOOK_EXPERIMENTS)}")
    return BOOK_EXPERIMENTS[experiment]


def experiment_cells(experiment: str | dict) -> list[Cell]:
    """The cells of one experiment: a name in BOOK_EXPERIMENTS, or a dict in its format (task, N, seeds,
    model, and optional cot, fake_bridge, table), as chapters 6 and 7 keep theirs."""
    e = _experiment(experiment)
    return cells_for(e["task"], e["N"], e["seeds"], e["model"], bool(e.get("cot", False)),
                     bool(e.get("fake_bridge", False)))


def experiment_command(experiment: str | dict, jobs: int = 2) -> str:
    """The shell command that fills (or resumes) one experiment's rows of its probe table (the dict's
    ``table``, by default the book's)."""
    e = _experiment(experiment)
    style = " --cot" if e.get("cot") else " --fake-bridge" if e.get("fake_bridge") else ""
    return (f"covlib scaling search --task {e['task']} --N {' '.join(map(str, e['N']))} "
            f"--seeds {' '.join(map(str, e['seeds']))} --model {e['model']}{style} "
            f"--table {e.get('table', BOOK_TABLE)} --work {BOOK_WORK} --jobs {jobs}")
