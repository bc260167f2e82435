"""The search for n_req: bracket the smallest training set that reaches the threshold."""
from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from covlib.base.errors import CovlibError
from covlib.base.workers import one_thread_worker
from covlib.coverage.requirement import data_for_coverage
from covlib.search.cells import Cell, CellState, Probe, ProbeRules, SearchRules
from covlib.search.claims import CellClaims
from covlib.search.probes import (
    append_curve,
    append_probe,
    backfill_curves,
    cell_rows,
    curves_path,
    metrics_n_ctx,
    read_probes,
    rule_rows,
    split_cells,
)
from covlib.search.psi import PRIOR_SD, ProbeCosts, PsiPrior, costs_for, fit_probe_costs, psi_state, psi_stopped
from covlib.search.summary import summarise
from covlib.tasks.datasets import DatasetConfig, eligible_count, ensure_dataset
from covlib.training.config import model_params
from covlib.training.loop import train
from covlib.training.pool import Job, SlurmOptions, run_jobs
from covlib.training.runs import load_metrics
from covlib.training.shapes import model_overrides


def next_probe(cell: Cell, rows: pd.DataFrame, eligible: int, rules: SearchRules, start: int,
               step_cap: int | None = None, reopened: Sequence[int] = (), prior: PsiPrior | None = None,
               costs: ProbeCosts | None = None, pending: Sequence[int] = ()) -> CellState:
    """Where the search of one cell stands, and which n_train to probe next (a pure function of its rows).

    With ``step_cap`` (the cap of the probes to come), a failure that stopped at a lower cap, before the
    give-up rule could decide, is probed again (its run resumes) before the search steps up from it or
    ends on it: raising the cap keeps every decided probe and reopens only the undecided ones it rests on.
    ``reopened`` are sizes whose failures another give-up rule decided (rule_rows): below the smallest
    success, with no failure of this rule beneath it, the largest of them is probed again before the search
    steps down, so that a step floor reruns a bracket's lower end first and walks on down only if it flips.

    The "psi" policy (covlib.search.psi.psi_state) reads ``prior`` (else a wide one around ``start``), ``costs``
    (the cell's series' CPU-minutes model; else every probe costs alike) and ``pending``, the sizes of the cell now
    running, and proposes pairs of probes (``pair`` of the state)."""
    most = rules.largest_n(eligible)
    rows = rows[rows["n_train"] <= most] if len(rows) else rows  # probes past the cap (older rules) are ignored
    ok = rows.loc[rows["success"], "n_train"].astype(int).tolist()
    bad = rows.loc[~rows["success"], "n_train"].astype(int).tolist()
    undecided = set()
    if step_cap is not None and len(rows) and "stopped" in rows:
        # each size's longest run decides it: a rerun under a higher cap supersedes the run the lower cap stopped
        longest = rows.sort_values("step_cap", kind="stable").drop_duplicates("n_train", keep="last")
        capped = longest[~longest["success"] & (longest["stopped"] == "steps")
                         & (longest["step_cap"].astype(int) < step_cap)]
        undecided = set(capped["n_train"].astype(int))
    if rules.policy == "psi":
        if prior is None:
            prior = PsiPrior(start if start and start > 0 else float(np.sqrt(rules.min_n * most)), PRIOR_SD["start"])
        return psi_state(cell, rows, eligible, rules, prior, costs or ProbeCosts(), pending, sorted(undecided))
    state = CellState(cell, rows, eligible, None, "searching")
    guided = rules.policy == "guided"
    if not ok and not bad:
        # guided: just above the guess, so that a success there and a failure at the guess / bracket_ratio end it
        first = start * np.sqrt(rules.bracket_ratio) if guided else start
        state.next_n = int(min(max(round(first), rules.min_n), most))
        return state
    if not ok:
        top = max(bad)
        if top in undecided:
            state.next_n = top
            return state
        if top >= most:
            state.status, state.low = "unreachable", top
            return state
        step = rules.bracket_ratio if guided and _close(rows, top, rules) else rules.step_factor
        state.next_n = int(min(round(top * step), most))
        return state
    high = min(ok)
    state.high = high
    below = [n for n in bad if n < high]
    state.inversions = sum(n > high for n in bad)
    if not below:
        if high <= rules.min_n:
            state.status = "below_min"
            return state
        again = [int(n) for n in reopened if n < high]
        if again:
            state.next_n = max(again)
            return state
        # guided: the first probe sat just above the guess, so the next one goes just below it
        step = rules.bracket_ratio if guided and len(rows) == 1 else rules.step_factor
        state.next_n = int(max(round(high / step), rules.min_n))
        return state
    state.low = max(below)
    if high / state.low <= rules.bracket_ratio or high - state.low <= 1:
        if state.low in undecided:
            state.next_n = state.low
            return state
        state.status = "bracketed"
        return state
    if guided and high / state.low > rules.bracket_ratio**2 and _close(rows, state.low, rules):
        state.next_n = int(round(state.low * rules.bracket_ratio))  # a success there ends it; bisecting would not
        return state
    state.next_n = int(round(np.sqrt(state.low * high)))
    return state


def _close(rows: pd.DataFrame, n: int, rules: SearchRules) -> bool:
    """Whether the failure at ``n`` came close: its best ID accuracy reached rules.close_accuracy (on replay of the
    finished cells, such failures sat within one bracket_ratio below n_req; benchmarks/bench_search_replay.py)."""
    if "best_type0" not in rows:
        return False
    acc = rows.loc[rows["n_train"] == n, "best_type0"].astype(float)
    return bool(len(acc)) and float(acc.max()) >= rules.close_accuracy


def starting_size(task: str, N: int, seed: int, coverage_k: int = 3, coverage_target: float = 0.99,
                  cot: bool = False) -> int:
    """A first guess for n_req: the data that ``coverage_k``-covers ``coverage_target`` of the ID test
    items (the paper's k-coverage), which chapter 2 found close to what training needs (the first searches, at N = 20
    to 30, started from 90% and needed one probe more)."""

    try:
        return int(data_for_coverage(task, N, k=coverage_k, target=coverage_target, seed=seed, rel_tol=0.1)["n_train"])
    except CovlibError:  # small N (not even the whole pool is that well covered), or a CoT-only task
        return eligible_count(task, N, seed, cot) // 2


def first_guess(cell: Cell, table: pd.DataFrame, rules: SearchRules = SearchRules(), give_up_floor: int = 0) -> int:
    """Where a cell's search starts (first_guess_source without its source)."""
    return first_guess_source(cell, table, rules, give_up_floor)[0]


def first_guess_source(cell: Cell, table: pd.DataFrame, rules: SearchRules = SearchRules(),
                       give_up_floor: int | None = 0) -> tuple[int, str]:
    """Where a cell's search starts, and where that guess comes from ("model", "seed", "law", "cot" or "coverage"): the estimate of a finished search of the same task, N, seed and
    target style with another model (the paper finds the requirement does not move with model size,
    so this saves the probes that walk up from coverage); else that of the same model with other seeds
    (a second seed lands near the first); else the power law through the same model's finished estimates
    at two or more other N, read at the cell's N (coverage's guess sits well below what three-hop needs).
    A CoT cell with none of these starts from the same model's finished plain estimate, or else the
    coverage guess, divided by COT_START_DIVISOR (the paper's CoT models need 5-10 times less data: this
    saves the probes that walk down). Else starting_size's coverage guess.
    The start changes how many probes a search takes, never the bracket it ends with. Only the probes that
    count under the give-up rule with ``give_up_floor`` are read (rule_rows)."""
    table = _under_rule(table, give_up_floor)
    source = "model"
    estimates = _finished_estimates(table, cell, rules) if len(table) else []
    if not estimates and len(table):
        estimates, source = _other_seed_estimates(table, cell, rules), "seed"
    if estimates:
        return int(round(np.exp(np.mean(np.log(estimates))))), source
    law = _law_estimate(table, cell, rules) if len(table) else None
    if law is not None:
        return min(max(rules.min_n, int(round(law))), eligible_count(cell.task, cell.N, cell.seed, cell.cot)), "law"
    if cell.cot:
        plain = _finished_estimates(table, dataclasses.replace(cell, cot=False), rules, same_model=True) if len(table) else []
        base = plain[0] if plain else starting_size(cell.task, cell.N, cell.seed, cot=True)
        return max(rules.min_n, int(round(base / COT_START_DIVISOR))), "cot"
    return starting_size(cell.task, cell.N, cell.seed, cot=cell.cot), "coverage"


COT_START_DIVISOR = 5.0


def _finished_estimates(table: pd.DataFrame, cell: Cell, rules: SearchRules, same_model: bool = False
                        ) -> list[float]:
    """Bracket estimates of finished searches of the cell's task, N, seed and target style: of other
    models (default), or of the cell's own model (``same_model``)."""
    same = table[(table["task"] == cell.task) & (table["N"] == cell.N) & (table["seed"] == cell.seed)
                 & (table["cot"] == cell.cot)]
    same = same[same["model"] == cell.model] if same_model else same[same["model"] != cell.model]
    return _bracket_estimates(same, cell, "model", rules)


def _other_seed_estimates(table: pd.DataFrame, cell: Cell, rules: SearchRules) -> list[float]:
    """Bracket estimates of the cell's own model, task, N and target style under the other seeds."""
    same = table[(table["task"] == cell.task) & (table["N"] == cell.N) & (table["model"] == cell.model)
                 & (table["cot"] == cell.cot) & (table["seed"] != cell.seed)]
    return _bracket_estimates(same, cell, "seed", rules)


def _law_estimate(table: pd.DataFrame, cell: Cell, rules: SearchRules) -> float | None:
    """The cell's model, task and target style at other N (every seed): the least-squares power law through
    the geometric mean of each N's finished estimates, read at the cell's N (None below two values of N)."""
    same = table[(table["task"] == cell.task) & (table["model"] == cell.model) & (table["cot"] == cell.cot)
                 & (table["N"] != cell.N)]
    by_N = {int(N): _bracket_estimates(group, dataclasses.replace(cell, N=int(N)), "seed", rules)
            for N, group in same.groupby("N")}
    by_N = {N: np.mean(np.log(e)) for N, e in by_N.items() if e}
    if len(by_N) < 2:
        return None
    slope, intercept = np.polyfit(np.log(list(by_N)), list(by_N.values()), 1)
    return float(np.exp(intercept + slope * np.log(cell.N)))


def _bracket_estimates(rows: pd.DataFrame, cell: Cell, by: str, rules: SearchRules) -> list[float]:
    """The estimate of each finished search among ``rows``, one per value of ``by`` (model or seed): finished by the
    bracket rule, or, for a search the psi policy ran, by psi's (its interval at most bracket_ratio wide)."""
    estimates = []
    bracket = dataclasses.replace(rules, policy="bisect")
    for value, group in rows.groupby(by):
        other = dataclasses.replace(cell, **{by: int(value) if by == "seed" else value})
        group = group.sort_values("n_train")
        state = next_probe(other, group, int(group["eligible"].iloc[0]), bracket, 0)
        if state.status == "searching" and state.low is not None and psi_stopped(group, rules.psi_slope,
                                                                                 rules.bracket_ratio):
            state.status = "bracketed"
        if state.status == "bracketed":
            estimates.append(state.estimate)
    return estimates


def _under_rule(table: pd.DataFrame, give_up_floor: int | None) -> pd.DataFrame:
    """The rows of a whole probe table that count under the give-up rule with ``give_up_floor`` (None: the table is
    already read under its rule)."""
    if not len(table) or give_up_floor is None:
        return table
    parts = [rule_rows(rows, give_up_floor)[0] for _, rows in table.groupby(["task", "N", "model", "seed", "cot"])]
    return pd.concat(parts) if parts else table.iloc[:0]


def cell_step_cap(cell: Cell, step_cap: int | None) -> int | None:
    """The cap a cell's probes run at: the search's ``step_cap``, or the cell's own where that is higher."""
    caps = [c for c in (step_cap, cell.step_cap) if c is not None]
    return max(caps) if caps else None


def cell_state(cell: Cell, table: pd.DataFrame, rules: SearchRules, start: int | None, step_cap: int | None,
               give_up_floor: int = 0, pending: Sequence[int] = (), prior: PsiPrior | None = None,
               costs: dict | None = None, every: pd.DataFrame | None = None) -> CellState:
    """One cell's state under the give-up rule with ``give_up_floor`` (its reopened failures guide the walk),
    its probes capped at cell_step_cap. Under the "psi" policy: ``pending`` sizes of the cell now running, its
    ``prior`` (else psi_prior) and ``costs`` (fit_probe_costs of the table under the rule, else fitted here).
    ``every``: the cell's rows of ``table`` under every rule, where the caller has them (split_cells)."""
    step_cap = cell_step_cap(cell, step_cap)
    every = cell_rows(table, cell, None) if every is None else every
    rows, reopened = rule_rows(every, give_up_floor)
    # the ID pool's size: any row of the cell records it, under whatever rule (else the dataset is generated to
    # count it, a second or more per cell)
    eligible = int(every["eligible"].iloc[0]) if len(every) else eligible_count(cell.task, cell.N, cell.seed, cell.cot)
    if rules.policy == "psi":
        if prior is None:
            prior = psi_prior(cell, table, rules, cell.start, give_up_floor)
        model = costs_for(costs if costs is not None else fit_probe_costs(_under_rule(table, give_up_floor)), cell)
        return next_probe(cell, rows, eligible, rules, int(prior.centre), step_cap, (), prior, model, pending)
    if start is None and not len(rows) and not len(reopened):
        start = first_guess(cell, table, rules, give_up_floor)
    if not len(rows) and len(reopened) and not start:
        start = int(reopened["n_train"].max())  # nothing counts yet: rerun the largest reopened size first
    return next_probe(cell, rows, eligible, rules, start or 0, step_cap, reopened["n_train"].astype(int).tolist())


def search_states(cells: Sequence[Cell], table: pd.DataFrame, rules: SearchRules = SearchRules(),
                  starts: dict[tuple, int] | None = None, step_cap: int | None = None,
                  give_up_floor: int = 0) -> list[CellState]:
    """The state of every cell given the probe table (starting sizes from ``starts`` or the cell; with
    ``step_cap``, failures a lower cap stopped are reopened as next_probe says), under the give-up rule
    with ``give_up_floor`` (0: the authors' rule)."""
    by_cell = split_cells(table) if len(cells) > 1 else {}  # one cell: filtering the table is cheaper

    def every(cell: Cell) -> pd.DataFrame | None:
        return by_cell.get(cell.key()[:5], table.iloc[:0]) if by_cell else None
    if rules.policy != "psi":
        return [cell_state(cell, table, rules, cell.start or (starts or {}).get(cell.key()), step_cap, give_up_floor,
                           every=every(cell)) for cell in cells]
    ruled = _under_rule(table, give_up_floor)  # once for every cell's prior and the cost model
    costs = fit_probe_costs(ruled)
    return [cell_state(cell, table, rules, None, step_cap, give_up_floor,
                       prior=psi_prior(cell, ruled, rules, cell.start, None), costs=costs, every=every(cell))
            for cell in cells]


def psi_prior(cell: Cell, table: pd.DataFrame, rules: SearchRules, start: int | None = None,
              give_up_floor: int | None = 0) -> PsiPrior:
    """The "psi" policy's prior of a cell's n_req: around ``start`` where one is given (wide), else around
    first_guess_source's guess with the width of its source (covlib.search.psi.PRIOR_SD); ``give_up_floor`` None:
    ``table`` is already read under the rule."""
    if start:
        return PsiPrior(float(start), PRIOR_SD["start"], "start")
    n, source = first_guess_source(cell, table, rules, give_up_floor)
    return PsiPrior(float(n), PRIOR_SD[source], source)


def resume_first(probe: Probe, rows: pd.DataFrame, pending: Sequence[int] = ()) -> int | None:
    """The size of a part-trained probe of ``probe``'s cell to finish before starting a new one: of the sizes an
    interrupted search left with a checkpoint (no row in the cell's ``rows`` yet, none running), the one nearest
    ``probe.n_train`` in log size; None if there is none."""
    done = set(rows["n_train"].astype(int)) if len(rows) else set()
    left = [n for n in probe.interrupted_sizes() if n not in done and n not in pending]
    return min(left, key=lambda n: abs(np.log(n / probe.n_train))) if left else None


def run_probe(probe: Probe) -> dict:
    """Train one probe (resuming its run folder if a checkpoint exists), append its row, return it."""

    c, rules = probe.cell, probe.rules
    ds_dir = ensure_dataset(DatasetConfig(c.task, c.N, probe.n_train, seed=c.seed, cot=c.cot,
                                          fake_bridge=c.fake_bridge, test_size_per_type=rules.test_size_per_type,
                                          draw_seed=probe.draw_seed),
                            Path(probe.work_dir) / "datasets")
    overrides = rules.train_overrides() | model_overrides(c.model) | {"seed": probe.train_seed}
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
        "cot": c.cot, "weight_decay": rules.weight_decay, "give_up_floor": rules.give_up_floor,
        "policy": probe.policy, "replicate": probe.replicate, "replicate_seed": probe.replicate_seed,
    }
    append_probe(probe.table, row)
    append_curve(curves_path(probe.table), row, metrics)
    if result.stopped != "steps":  # a probe the step cap stopped keeps its checkpoint: a higher cap resumes it
        (probe.run_dir() / "checkpoint.pt").unlink(missing_ok=True)  # the row, its curve and model.pt are what we keep
    return row


@dataclass
class SearchResult:
    """Every cell's state after a search; ``summary()`` is one row per cell."""

    states: list[CellState]
    table: pd.DataFrame
    probes_run: int = 0  # probes this call trained (the rest came from the table)
    crashed: list[str] = field(default_factory=list)  # cells whose probe raised

    def summary(self) -> pd.DataFrame:
        return summarise(self.states)


def search(cells: Sequence[Cell], table: str | os.PathLike, work_dir: str | os.PathLike,
           probe_rules: ProbeRules = ProbeRules(), search_rules: SearchRules = SearchRules(), jobs: int = 1,
           max_probes: int | None = None, log: Callable[[str], None] | None = print, executor: str = "local",
           slurm=None) -> SearchResult:
    """Search the required data of every cell; resumes from ``table``.

    With ``jobs`` > 1, probes run in a pool of one-thread worker processes, and a worker that
    finishes takes the next probe of any cell at once (no waiting for a round to end). A cell is
    never probed twice at the same time, so every probe uses all the evidence of its cell (except under the "psi"
    policy, which proposes pairs: a worker that no other cell can use runs the partner of a cell's running probe);
    nor by two searches of one table in different processes (covlib.search.claims): a cell another search is
    probing is left to it.
    With ``executor="slurm"`` (``slurm``: covlib.training.pool.SlurmOptions), each round submits the next
    probe of every unfinished cell as one job array; the table needs a file system the tasks share."""
    if executor == "slurm":
        return _search_on_slurm(cells, str(table), work_dir, probe_rules, search_rules, max_probes, log, slurm)
    table = str(table)
    _check_rules(probe_rules, table, cells)
    backfill_curves(table, work_dir)
    starts: dict[tuple, int] = {}
    priors: dict[tuple, PsiPrior] = {}  # "psi": each cell's prior, found once per call (coverage's guess takes time)
    psi = search_rules.policy == "psi"
    costs = fit_probe_costs(_under_rule(read_probes(table), probe_rules.give_up_floor)) if psi else None
    slots = 2 if psi and search_rules.pairs else 1  # probes of one cell at a time

    floor = probe_rules.give_up_floor

    def next_of(cell: Cell, pending: Sequence[int] = ()) -> Probe | None:
        probes = read_probes(table)
        if psi:
            if cell.key() not in priors:
                priors[cell.key()] = psi_prior(cell, probes, search_rules, cell.start, floor)
            state = cell_state(cell, probes, search_rules, None, probe_rules.step_cap, floor, pending,
                               priors[cell.key()], costs)
        else:
            if cell.start is None and cell.key() not in starts and not len(cell_rows(probes, cell, None)):
                starts[cell.key()] = first_guess(cell, probes, search_rules, floor)
            state = cell_state(cell, probes, search_rules, cell.start or starts.get(cell.key()), probe_rules.step_cap,
                               floor)
        if state.next_n is None:
            return None
        probe = Probe(cell, state.next_n, state.eligible, rules_for(cell, probe_rules), table, str(work_dir),
                      search_rules.policy)
        if psi:  # psi's choice depends on what runs beside it, so after a restart it would not pick these again
            resumed = resume_first(probe, cell_rows(probes, cell, None), pending)
            probe = dataclasses.replace(probe, n_train=resumed) if resumed else probe
        return probe

    claims = CellClaims(table, floor)
    left_to_others: set[tuple] = set()

    def claimed_next(cell: Cell, pending: Sequence[int] = ()) -> Probe | None:
        """The cell's next probe, claimed for this search; None where it has none or another search holds it
        (claimed before the table is read, so that the other's last row is in it). ``pending``: the sizes of the
        cell this search is running (psi's pairs); the claim stays while any runs."""
        if not claims.take(cell):
            left_to_others.add(cell.key())
            return None
        left_to_others.discard(cell.key())
        probe = next_of(cell, pending)
        if probe is None and not pending:
            claims.release(cell)
        return probe

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
    try:
        if jobs <= 1:
            while max_probes is None or launched < max_probes:
                probe = next((p for c in cells if c not in broken and (p := claimed_next(c)) is not None), None)
                if probe is None:
                    break
                launched += 1
                try:
                    report(run_probe(probe))
                except Exception as exc:  # noqa: BLE001  (recorded; the search goes on)
                    crashed(probe.cell, exc)
                finally:
                    claims.release(probe.cell)
        else:
            from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
            from multiprocessing import get_context

            busy: dict = {}  # future -> probe

            def running(cell: Cell) -> list[int]:
                return [p.n_train for p in busy.values() if p.cell == cell]

            with ProcessPoolExecutor(jobs, mp_context=get_context("spawn"), initializer=one_thread_worker) as pool:
                while True:
                    while len(busy) < jobs and (max_probes is None or launched < max_probes):
                        probe = next((p for c in cells if not running(c) and c not in broken
                                      and (p := claimed_next(c)) is not None), None)
                        if probe is None and slots > 1:  # no other cell has a probe to run: the partner of one running
                            probe = next((p for c in cells if 0 < len(running(c)) < slots and c not in broken
                                          and (p := claimed_next(c, running(c))) is not None), None)
                        if probe is None:
                            break
                        if log:
                            log(f"start {probe.cell.label()} n={probe.n_train}")
                        busy[pool.submit(run_probe, probe)] = probe
                        launched += 1
                    if not busy:
                        break
                    finished, _ = wait(busy, return_when=FIRST_COMPLETED)
                    for fut in finished:
                        cell = busy.pop(fut).cell
                        try:
                            report(fut.result())
                        except Exception as exc:  # noqa: BLE001  (recorded; the search goes on)
                            crashed(cell, exc)
                        finally:
                            if not running(cell):
                                claims.release(cell)
    finally:
        claims.release_all()
    if log and left_to_others:
        log(f"{len(left_to_others)} cell(s) left to another search of this table, which was probing them")
    final = search_states(cells, read_probes(table), search_rules, starts, probe_rules.step_cap, floor)
    return SearchResult(final, read_probes(table), launched, [c.label() for c in broken])


def _search_on_slurm(cells, table: str, work_dir, probe_rules, search_rules, max_probes, log, slurm) -> SearchResult:
    """The search in rounds of SLURM job arrays (one task per unfinished cell)."""

    _check_rules(probe_rules, table, cells)
    starts: dict[tuple, int] = {}
    launched, crashed = 0, []
    while max_probes is None or launched < max_probes:
        states = [s for s in search_states(cells, read_probes(table), search_rules, starts, probe_rules.step_cap,
                                           probe_rules.give_up_floor)
                  if s.next_n is not None and s.cell.label() not in crashed]
        if max_probes is not None:
            states = states[: max_probes - launched]
        if not states:
            break
        probes = [Probe(s.cell, n, s.eligible, rules_for(s.cell, probe_rules), table, str(work_dir),
                        search_rules.policy) for s in states for n in (s.pair or (s.next_n,))]
        if max_probes is not None:  # psi's pairs may pass the round's share
            probes = probes[: max_probes - launched]
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
    final = search_states(cells, read_probes(table), search_rules, starts, probe_rules.step_cap,
                          probe_rules.give_up_floor)
    return SearchResult(final, read_probes(table), launched, crashed)


def rules_for(cell: Cell, rules: ProbeRules) -> ProbeRules:
    """The probe rules of one cell's probes: ``rules`` at the cell's own step cap where that is higher (else a
    failure that cap reopens would be rerun at the lower cap, and stop there undecided again)."""
    cap = cell_step_cap(cell, rules.step_cap)
    return rules if cap == rules.step_cap else dataclasses.replace(rules, step_cap=cap)


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
        higher = cell_rows(df, cell, rules.give_up_floor)["step_cap"].astype(int)
        cap = rules_for(cell, rules).step_cap
        higher = higher[higher > cap]
        if len(higher):
            raise CovlibError(f"{table} holds probes of {cell.label()} with step_cap={int(higher.max())}, above "
                              f"{cap}; pass --step-cap {int(higher.max())} or more (a cell's cap may grow, "
                              "not shrink), or use another table")

