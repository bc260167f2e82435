"""Chapter 4's presets and its required-data searches: what each preset searches, running or resuming
the searches, and what the probe table holds for each experiment."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from covlib.figures.text import sentence_start
from covlib.search.cells import Cell, ProbeRules
from covlib.search.experiments import BOOK_EXPERIMENTS, probe_table
from covlib.search.required_data import search, search_states
from covlib.search.summary import summarise

# a miniature of every experiment: tiny N, a one-layer model, short budgets (seconds)
SMOKE_EXPERIMENTS: dict[str, dict] = {
    "twohop": {"task": "twohop", "N": [6, 7, 8], "seeds": [0, 1], "model": "smoke"},
    "twohop_small_model": {"task": "twohop", "N": [6, 7, 8], "seeds": [0], "model": "smoke"},
    "threehop": {"task": "threehop", "N": [4, 5], "seeds": [0], "model": "smoke"},
    "parallel_twohop": {"task": "parallel_twohop", "N": [4, 5], "seeds": [0], "model": "smoke"},
    "twohop_mamba": {"task": "twohop", "N": [6, 7], "seeds": [0], "model": "mamba-smoke"},
}


PAPER_NOTE = ("The paper's scale (8-layer GPT-2, N up to 200, batch 16,384) needs a GPU for days; this preset "
              "reads the same cache as the default one. Run `covlib scaling search --model ...` on a GPU to extend it.")


# experiments: what is searched; rules: ProbeRules beyond the threshold; coverage_N: N values whose coverage
# requirement is computed here (None: read data/scaling/coverage_<task>.csv); fresh_table: a probe table under the
# output folder instead of the book's; always_recompute: search even if recompute is False; quiet_search: one job,
# no log; describe_cache: say how to regenerate the book's cache and what it still lacks; note: printed at set-up
PRESETS: dict[str, dict] = {
    "smoke": {"experiments": SMOKE_EXPERIMENTS,
              "rules": {"step_cap": 300, "give_up_epochs": 20, "eval_every": 25, "batch_size": 128,
                        "test_size_per_type": 200},
              "coverage_N": {"twohop": [8, 12, 16], "threehop": [5, 6], "parallel_twohop": [5, 6]},
              "fresh_table": "scaling/probes_smoke.csv", "always_recompute": True, "quiet_search": True,
              "describe_cache": False, "note": ""},
    "default": {"experiments": BOOK_EXPERIMENTS, "rules": {}, "coverage_N": None, "fresh_table": "",
                "always_recompute": False, "quiet_search": False, "describe_cache": True, "note": ""},
    "paper": {"experiments": BOOK_EXPERIMENTS, "rules": {}, "coverage_N": None, "fresh_table": "",
              "always_recompute": False, "quiet_search": False, "describe_cache": True, "note": PAPER_NOTE},
}


def probe_table_path(table: str, root: Path, fresh_table: str) -> Path:
    """The probe table to read: the reader's ``table``, else a fresh one under ``root`` (smoke), else the book's."""
    return probe_table(table, root / fresh_table if fresh_table else None)


def run_searches(cells_of: Mapping[str, Sequence[Cell]], table_path: Path, work_dir: Path, rules: ProbeRules,
                 jobs: int, quiet: bool = False) -> None:
    """Run (or resume) every experiment's search into the probe table; ``quiet``: one job and no log."""
    for name, cells in cells_of.items():
        print(f"== {name}")
        search(cells, table_path, work_dir, rules, jobs=1 if quiet else jobs, log=None if quiet else print)


def experiment_summaries(cells_of: Mapping[str, Sequence[Cell]], probes: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Each experiment's search summary (one row per cell) from the probe table; empty when it has no probes."""
    states = {name: search_states(cells, probes) if len(probes) else [] for name, cells in cells_of.items()}
    return {name: summarise(s) if s else pd.DataFrame() for name, s in states.items()}


def search_cost(summaries: Mapping[str, pd.DataFrame]) -> tuple[int, float]:
    """(probes, run-hours) the chapter's experiments took: the size of the cache the chapter rests on."""
    cells = pd.concat([s for s in summaries.values() if len(s)] or [pd.DataFrame(columns=["probes", "minutes"])])
    return int(cells["probes"].sum()), float(cells["minutes"].sum() / 60)


def coverage_of_cache(summary: pd.DataFrame) -> str:
    """How far one experiment's search has got, e.g. "5 bracketed, 1 searching of 6 cells"."""
    if summary.empty:
        return "no probes yet"
    counts = summary["status"].value_counts().to_dict()
    return ", ".join(f"{v} {k}" for k, v in counts.items()) + f" of {len(summary)} cells"


def cache_status(summaries: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per experiment saying what the cache holds for it."""
    return pd.DataFrame({"experiment": list(summaries), "cells": [coverage_of_cache(s) for s in summaries.values()]})


def cells_text(cells: pd.DataFrame) -> str:
    """Cells by N with their seeds, e.g. "24 (seeds 0 and 1), 30 (seed 0)"."""
    return ", ".join(f"{int(n)} (seed{'s' if len(cell) > 1 else ''} "
                     f"{' and '.join(str(int(v)) for v in sorted(cell['seed']))})" for n, cell in cells.groupby("N"))


def pending_clause(summary: pd.DataFrame) -> str:
    """The cells of a search summary still searching or not started, as a clause ("" when every cell is done):
    a partly filled cache, whose fit rests on the finished cells only."""
    pending = [f"{status} at N = {cells_text(summary[summary['status'] == status])}"
               for status in ("searching", "not started") if len(summary) and (summary["status"] == status).any()]
    if not pending:
        return ""
    return (f"{' and '.join(pending)}: not finished, so left out of the fit (the commands in "
            "data/scaling/COMMANDS.txt resume these searches from the probe table)")


def pending_sentence(summary: pd.DataFrame) -> str:
    """pending_clause as a sentence of its own, with a space after it ("" when every cell is done)."""
    clause = pending_clause(summary)
    return f"{sentence_start(clause)}. " if clause else ""


def experiment_probes(probes: pd.DataFrame, experiment: Mapping) -> pd.DataFrame:
    """The probe table's rows of one experiment's task and model (no chain of thought)."""
    if not len(probes):
        return probes
    return probes[(probes["task"] == experiment["task"]) & ~probes["cot"].astype(bool)
                  & (probes["model"] == experiment["model"])]
