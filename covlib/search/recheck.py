"""Retesting a give-up rule: rerun the lower end of every finished bracket under a step floor, and count what flips.

The authors' rule gives up once the training set has been fitted for 100 epochs, which is a few hundred steps
for a small training set. A probe given up that early may have generalised later; under a floor of F steps
(give up only after max(100 epochs, F steps) past the fit) its lower end is rerun. A lower end that flips to
success makes its bracket wrong, and the search walks that cell down again under the floor."""
from __future__ import annotations

import os
from collections.abc import Callable, Sequence

import pandas as pd

from covlib.search.cells import CELL_KEY, FINISHED, Cell, ProbeRules, SearchRules
from covlib.search.probes import read_probes, split_cells
from covlib.search.required_data import SearchResult, search, search_states

# the step floor the book reruns its brackets under: floor_from_probes of data/scaling/probes.csv
BOOK_FLOOR = 2000


def floor_from_probes(table: pd.DataFrame, share: float = 0.95, most_n: int = 10_000, round_to: int = 500
                      ) -> tuple[int, float, int]:
    """A step floor chosen from the data: the step by which ``share`` of the succeeding probes (authors' rule,
    n_train up to ``most_n``) first reached the threshold, rounded up to a multiple of ``round_to``.
    Returns (floor, that quantile before rounding, how many successes it rests on)."""
    ok = table[table["success"].astype(bool) & (table["n_train"] <= most_n)
               & (table.get("give_up_floor", pd.Series(0, index=table.index)).astype(int) == 0)]
    if not len(ok):
        raise ValueError("no succeeding probe at that size: a floor cannot be chosen from this table")
    quantile = float(ok["steps"].quantile(share))
    return int(-(-quantile // round_to) * round_to), quantile, len(ok)


def row_cells(cells: pd.DataFrame) -> list[Cell]:
    """The cells of a per-cell table (one row per cell), in its row order: the order a search takes them in."""
    return [Cell(k.task, int(k.N), k.model, int(k.seed), bool(k.cot)) for k in cells[CELL_KEY].itertuples(index=False)]


def table_cells(table: pd.DataFrame) -> list[Cell]:
    """Every cell (task, N, model, seed, cot) of a probe table or a per-cell table, in sorted order."""
    if not len(table):
        return []
    return row_cells(table[CELL_KEY].drop_duplicates().sort_values(CELL_KEY))


def floor_recheck(table: pd.DataFrame, give_up_floor: int, rules: SearchRules = SearchRules(),
                  from_floor: int = 0) -> pd.DataFrame:
    """One row per cell the authors' rule finished (``authors_status``; with ``from_floor``, the rule with that
    lower floor: a longer floor's control): bracketed, or unreachable (even the
    largest training set the ID pool allows failed; its lower end is that largest probe, ``high`` is empty).
    Its bracket, how far past the fit its lower end trained, whether the floor reopens it, and where the cell
    stands under the floor (``floor_status``, ``floor_low``, ``floor_high``; ``flipped``: the lower end, rerun
    under the floor, succeeded). An unreachable cell that flips gains a bracket the authors' rule never had: the
    cells the pool seemed to cut off are the smallest N, where the rule gives the fewest steps.
    Ordered by the steps the lower end trained past its fit, fewest first (the order of the reruns)."""
    if not from_floor < give_up_floor:
        raise ValueError(f"a recheck raises the floor: {give_up_floor} is not above the rule it rechecks ({from_floor})")
    rows = []
    by_cell = split_cells(table)  # each cell's state reads only its own rows (it starts at 0: no first guess)
    for cell in table_cells(table):
        every = by_cell[cell.key()[:5]]
        authors = search_states([cell], every, rules, starts={cell.key(): 0}, give_up_floor=from_floor)[0]
        if authors.status not in FINISHED:
            continue
        at_low = authors.probes[authors.probes["n_train"].astype(int) == authors.low].iloc[0]
        # a probe that never fitted its training set (the step cap stopped it first) has no steps past the fit
        past_fit = at_low["steps"] - at_low["first_fit_step"] if pd.notna(at_low["first_fit_step"]) else None
        rerun = every[(every["give_up_floor"].astype(int) == give_up_floor) & (every["n_train"] == authors.low)]
        floor = search_states([cell], every, rules, starts={cell.key(): 0}, give_up_floor=give_up_floor,
                              step_cap=int(every["step_cap"].max()))[0]
        reopened = bool(at_low["stopped"] == "gave_up" and past_fit is not None and past_fit < give_up_floor)
        # a lower end the floor cannot change is no rerun, even where a row of the floor stands at it (a probe of
        # a training set whose 100 epochs outlast the floor counts under both rules: rule_rows)
        rerun = rerun if reopened else rerun.iloc[:0]
        rows.append({"task": cell.task, "cot": cell.cot, "N": cell.N, "model": cell.model, "seed": cell.seed,
                     "authors_status": authors.status, "low": authors.low, "high": authors.high, "n_req": authors.estimate,
                     "past_fit": past_fit, "step_cap": int(every["step_cap"].max()), "reopened": reopened,
                     "rerun": bool(len(rerun)), "flipped": bool(len(rerun) and rerun["success"].iloc[0]),
                     "floor_status": floor.status, "floor_low": floor.low, "floor_high": floor.high,
                     "floor_n_req": floor.estimate if floor.status == "bracketed" else None})
    columns = ["task", "cot", "N", "model", "seed", "authors_status", "low", "high", "n_req", "past_fit", "step_cap", "reopened",
               "rerun", "flipped", "floor_status", "floor_low", "floor_high", "floor_n_req"]
    frame = pd.DataFrame(rows, columns=columns).astype({"past_fit": "Int64"})
    return frame.sort_values(["past_fit", "task", "N", "seed"], kind="stable", ignore_index=True)


def flip_counts(recheck: pd.DataFrame) -> pd.DataFrame:
    """Per task (and CoT): finished brackets, cells found unreachable, lower ends the floor reopens (of both),
    reruns done, and flips to success."""
    key = recheck["task"] + recheck["cot"].map({True: "_cot", False: ""})
    return (recheck.assign(key=key, bracketed=recheck["authors_status"] == "bracketed",
                           unreachable=recheck["authors_status"] == "unreachable")
            .groupby("key", sort=True)
            .agg(brackets=("bracketed", "sum"), unreachable=("unreachable", "sum"), reopened=("reopened", "sum"),
                 reruns=("rerun", "sum"), flips=("flipped", "sum"))
            .astype(int).reset_index().rename(columns={"key": "task"}))


def select_cells(cells: pd.DataFrame, models: Sequence[str] | None = None, exclude_models: Sequence[str] = (),
                 tasks: Sequence[str] | None = None) -> pd.DataFrame:
    """The rows of a per-cell table (columns task, cot, model) of ``models`` (None: every one) but not
    ``exclude_models``, and of ``tasks`` (None: every one), where "threehop-cot" names three-hop's CoT cells."""
    keep = ~cells["model"].isin(list(exclude_models))
    if models:
        keep &= cells["model"].isin(list(models))
    if tasks:
        keep &= (cells["task"] + cells["cot"].map({True: "-cot", False: ""})).isin(list(tasks))
    return cells[keep]


def recheck_brackets(table: str | os.PathLike, work_dir: str | os.PathLike, give_up_floor: int, jobs: int = 2,
                     models: Sequence[str] | None = None, exclude_models: Sequence[str] = (),
                     tasks: Sequence[str] | None = None, statuses: Sequence[str] = FINISHED,
                     probe_rules: ProbeRules = ProbeRules(), log: Callable[[str], None] | None = print,
                     from_floor: int = 0) -> list[SearchResult]:
    """Search, under the floor, every cell the authors' rule finished (with a status in ``statuses``: bracketed,
    unreachable) whose lower end the floor reopens (of ``models``, or all but ``exclude_models``; of ``tasks``,
    where "threehop-cot" names three-hop's CoT cells): cells already walking down first, then fewest steps past the
    fit first; cells are grouped by their step cap, which a search keeps. Resumable: what the table holds under the
    floor is not run again. With ``from_floor``, the cells that rule finished stand in for the authors'."""
    recheck = floor_recheck(read_probes(table), give_up_floor, from_floor=from_floor)
    # every cell the floor has not finished: its lower end not yet rerun, or flipped and walking down
    todo = recheck[(recheck["floor_status"] == "searching") & recheck["authors_status"].isin(list(statuses))]
    todo = select_cells(todo, models, exclude_models, tasks)
    # a cell walking down (its lower end rerun and flipped) is the nearest to a bracket, and its exponent may wait
    # on it alone: it takes the first free worker, ahead of lower ends not yet rerun
    todo = todo.sort_values("rerun", ascending=False, kind="stable")
    return search_by_cap(todo, table, work_dir, give_up_floor, probe_rules, SearchRules(), jobs, log)


def search_by_cap(todo: pd.DataFrame, table: str | os.PathLike, work_dir: str | os.PathLike, give_up_floor: int,
                  probe_rules: ProbeRules, search_rules: SearchRules, jobs: int,
                  log: Callable[[str], None] | None) -> list[SearchResult]:
    """Search the cells of a per-cell table (columns CELL_KEY and step_cap) under the give-up floor, one search per
    step cap (a cell's cap may only grow, so each group keeps the larger of its own and ``probe_rules``'), each
    taking its cells in the table's row order."""
    results = []
    for cap, group in todo.groupby("step_cap", sort=True):
        rules = ProbeRules(**{**probe_rules.__dict__, "give_up_floor": give_up_floor,
                              "step_cap": max(int(cap), probe_rules.step_cap)})
        results.append(search(row_cells(group), table, work_dir, rules, search_rules, jobs=jobs, log=log))
    return results


def rerun_minutes(table: pd.DataFrame, recheck: pd.DataFrame, give_up_floor: int) -> float:
    """What the lower ends still to rerun would cost, in one-thread CPU-minutes: each trains to its fit plus
    the floor (unless it succeeds first) at the steps per minute its cell's probes ran (an upper estimate where
    those probes shared the cores)."""
    todo = recheck[recheck["reopened"] & ~recheck["rerun"]]
    minutes = 0.0
    for r in todo.itertuples(index=False):
        rows = table[(table["task"] == r.task) & (table["N"] == r.N) & (table["model"] == r.model)
                     & (table["seed"] == r.seed) & (table["cot"] == r.cot)]
        low = rows[rows["n_train"] == r.low].iloc[0]
        pace = float((rows["steps"] / rows["minutes"]).median())
        minutes += (float(low["first_fit_step"]) + give_up_floor) / pace
    return minutes
