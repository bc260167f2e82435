"""Tightening finished brackets: one or two more bisection probes where a cell's bracket is wider than a target ratio
and those probes are cheap enough.

A search stops once its smallest success over its largest failure is at most 1.3 (SearchRules.bracket_ratio). A
bracket of 1.3 puts the estimate (its geometric mean) within 1.14x of either end; bisecting once more halves that in
log space. Each bisection probe trains about as long as the bracket's own ends did, so a cell's cost is estimated
from the minutes its two end probes ran (as recorded: an upper estimate where they shared the cores)."""
from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence

import pandas as pd

from covlib.search.cells import MAX_MINUTES, TIGHT_RATIO, ProbeRules, SearchRules
from covlib.search.probes import cell_rows, read_probes
from covlib.search.recheck import search_by_cap, select_cells, table_cells
from covlib.search.required_data import SearchResult, search_states


def probes_to_ratio(low: int, high: int, ratio: float) -> int:
    """Bisection probes (in log space) that bring a bracket from high / low down to at most ``ratio``."""
    if high / low <= ratio:
        return 0
    return math.ceil(math.log2(math.log(high / low) / math.log(ratio)))


def tighten_plan(table: pd.DataFrame, give_up_floor: int, ratio: float = TIGHT_RATIO,
                 max_minutes: float = MAX_MINUTES) -> pd.DataFrame:
    """One row per cell bracketed under the give-up rule with ``give_up_floor`` whose bracket is wider than ``ratio``:
    its bracket, the probes that would tighten it, their estimated one-thread CPU-minutes (probes times the longer
    of its two end probes' minutes), whether that is within ``max_minutes`` (``selected``), and ``from_largest``:
    1 where its N is the largest its series (task, CoT, model) has bracketed, 2 the next, and so on. An exponent's
    verdict reads the local slope between its two largest N, so those brackets are the ones to tighten first."""
    rows = []
    states = {cell: search_states([cell], table, SearchRules(), starts={cell.key(): 0}, give_up_floor=give_up_floor)[0]
              for cell in table_cells(table)}
    bracketed_N: dict[tuple, set[int]] = {}
    for cell, state in states.items():
        if state.status == "bracketed":
            bracketed_N.setdefault((cell.task, cell.cot, cell.model), set()).add(cell.N)
    for cell, state in states.items():
        if state.status != "bracketed" or state.high / state.low <= ratio:
            continue
        counted = cell_rows(table, cell, give_up_floor)
        ends = counted[counted["n_train"].isin([state.low, state.high])]
        needed = probes_to_ratio(state.low, state.high, ratio)
        minutes = needed * float(ends["minutes"].max())
        rows.append({"task": cell.task, "cot": cell.cot, "N": cell.N, "model": cell.model, "seed": cell.seed,
                     "low": state.low, "high": state.high, "ratio": state.high / state.low, "probes": needed,
                     "minutes": minutes, "step_cap": int(counted["step_cap"].max()),
                     "selected": minutes <= max_minutes,
                     "from_largest": sorted(bracketed_N[(cell.task, cell.cot, cell.model)], reverse=True).index(cell.N) + 1})
    columns = ["task", "cot", "N", "model", "seed", "low", "high", "ratio", "probes", "minutes", "step_cap",
               "selected", "from_largest"]
    return pd.DataFrame(rows, columns=columns)


def tighten_brackets(table: str | os.PathLike, work_dir: str | os.PathLike, give_up_floor: int,
                     ratio: float = TIGHT_RATIO, max_minutes: float = MAX_MINUTES, jobs: int = 2,
                     models: Sequence[str] | None = None, exclude_models: Sequence[str] = (),
                     tasks: Sequence[str] | None = None, largest_n: int | None = None,
                     probe_rules: ProbeRules = ProbeRules(),
                     log: Callable[[str], None] | None = print) -> list[SearchResult]:
    """Bisect, under the give-up rule with ``give_up_floor``, every selected cell of tighten_plan until its bracket
    is at most ``ratio`` (cells grouped by step cap, which a search keeps); ``largest_n``: only cells at the
    ``largest_n`` largest N of their series. Resumable: the plan is read from the table, so a cell already tight
    is left alone."""
    plan = select_largest(tighten_plan(read_probes(table), give_up_floor, ratio, max_minutes), largest_n)
    todo = select_cells(plan[plan["selected"]], models, exclude_models, tasks)
    return search_by_cap(todo, table, work_dir, give_up_floor, probe_rules, SearchRules(bracket_ratio=ratio), jobs,
                         log)


def select_largest(plan: pd.DataFrame, largest_n: int | None) -> pd.DataFrame:
    """The rows of a tighten plan at the ``largest_n`` largest N of their series (None: every row)."""
    if largest_n is None:
        return plan
    if largest_n < 1:
        raise ValueError(f"largest_n must be at least 1, not {largest_n}")
    return plan[plan["from_largest"] <= largest_n]
