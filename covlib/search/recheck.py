"""Retesting a give-up rule: rerun the lower end of every finished bracket under a step floor, and count what flips.

The authors' rule gives up once the training set has been fitted for 100 epochs, which is a few hundred steps
for a small training set. A probe given up that early may have generalised later; under a floor of F steps
(give up only after max(100 epochs, F steps) past the fit) its lower end is rerun. A lower end that flips to
success makes its bracket wrong, and the search walks that cell down again under the floor."""
from __future__ import annotations

import os
from collections.abc import Callable, Sequence

import pandas as pd

from covlib.search.cells import Cell, ProbeRules, SearchRules
from covlib.search.probes import cell_rows, read_probes
from covlib.search.required_data import SearchResult, search, search_states

CELL_KEY = ["task", "N", "model", "seed", "cot"]

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


def _cells(table: pd.DataFrame) -> list[Cell]:
    keys = table[CELL_KEY].drop_duplicates().sort_values(CELL_KEY).itertuples(index=False)
    return [Cell(k.task, int(k.N), k.model, int(k.seed), bool(k.cot)) for k in keys]


def floor_recheck(table: pd.DataFrame, give_up_floor: int, rules: SearchRules = SearchRules()) -> pd.DataFrame:
    """One row per cell bracketed under the authors' rule: its bracket, how far past the fit its lower end
    trained, whether the floor reopens it, and where the cell stands under the floor (``floor_status``,
    ``floor_low``, ``floor_high``; ``flipped``: the lower end, rerun under the floor, succeeded).
    Ordered by the steps the lower end trained past its fit, fewest first (the order of the reruns)."""
    rows = []
    for cell in _cells(table) if len(table) else []:
        authors = search_states([cell], table, rules, starts={cell.key(): 0})[0]
        if authors.status != "bracketed":
            continue
        at_low = authors.probes[authors.probes["n_train"].astype(int) == authors.low].iloc[0]
        past_fit = int(at_low["steps"] - at_low["first_fit_step"])
        every = cell_rows(table, cell, None)
        rerun = every[(every["give_up_floor"].astype(int) == give_up_floor) & (every["n_train"] == authors.low)]
        floor = search_states([cell], table, rules, starts={cell.key(): 0}, give_up_floor=give_up_floor,
                              step_cap=int(every["step_cap"].max()))[0]
        rows.append({"task": cell.task, "cot": cell.cot, "N": cell.N, "model": cell.model, "seed": cell.seed,
                     "low": authors.low, "high": authors.high, "n_req": authors.estimate,
                     "past_fit": past_fit, "step_cap": int(every["step_cap"].max()),
                     "reopened": bool(at_low["stopped"] == "gave_up" and past_fit < give_up_floor),
                     "rerun": bool(len(rerun)), "flipped": bool(len(rerun) and rerun["success"].iloc[0]),
                     "floor_status": floor.status, "floor_low": floor.low, "floor_high": floor.high,
                     "floor_n_req": floor.estimate if floor.status == "bracketed" else None})
    columns = ["task", "cot", "N", "model", "seed", "low", "high", "n_req", "past_fit", "step_cap", "reopened",
               "rerun", "flipped", "floor_status", "floor_low", "floor_high", "floor_n_req"]
    return pd.DataFrame(rows, columns=columns).sort_values(["past_fit", "task", "N", "seed"], kind="stable",
                                                           ignore_index=True)


def flip_counts(recheck: pd.DataFrame) -> pd.DataFrame:
    """Per task (and CoT): finished brackets, lower ends the floor reopens, reruns done, and flips to success."""
    label = recheck["task"] + recheck["cot"].map({True: " (CoT)", False: ""})
    return (recheck.assign(task_label=label)
            .groupby("task_label", sort=True)
            .agg(brackets=("low", "size"), reopened=("reopened", "sum"), reruns=("rerun", "sum"),
                 flips=("flipped", "sum"))
            .reset_index().rename(columns={"task_label": "task"}))


def recheck_brackets(table: str | os.PathLike, work_dir: str | os.PathLike, give_up_floor: int, jobs: int = 2,
                     models: Sequence[str] | None = None, exclude_models: Sequence[str] = (),
                     tasks: Sequence[str] | None = None, probe_rules: ProbeRules = ProbeRules(), log: Callable[[str], None] | None = print
                     ) -> list[SearchResult]:
    """Search, under the floor, every authors'-rule bracket whose lower end it reopens (of ``models``, or all
    but ``exclude_models``; of ``tasks``, where "threehop-cot" names three-hop's CoT cells), fewest steps past
    the fit first; cells are grouped by their step cap, which a search keeps. Resumable: what the table holds
    under the floor is not run again."""
    recheck = floor_recheck(read_probes(table), give_up_floor)
    # every cell the floor has not finished: its lower end not yet rerun, or flipped and walking down
    todo = recheck[(recheck["floor_status"] == "searching") & ~recheck["model"].isin(list(exclude_models))]
    if models:
        todo = todo[todo["model"].isin(list(models))]
    if tasks:
        labels = todo["task"] + todo["cot"].map({True: "-cot", False: ""})
        todo = todo[labels.isin(list(tasks))]
    results = []
    for cap, group in todo.groupby("step_cap", sort=True):
        cells = [Cell(r.task, int(r.N), r.model, int(r.seed), bool(r.cot)) for r in group.itertuples(index=False)]
        rules = ProbeRules(**{**probe_rules.__dict__, "give_up_floor": give_up_floor,
                              "step_cap": max(int(cap), probe_rules.step_cap)})
        results.append(search(cells, table, work_dir, rules, jobs=jobs, log=log))
    return results
