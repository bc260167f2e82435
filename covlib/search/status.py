"""Where searches stand, read from the probe table alone: one row per cell, and a sentence per cell."""
from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from covlib.search.cells import CellState
from covlib.search.probes import PROBE_COLUMNS, cell_rows
from covlib.search.required_data import search_states
from covlib.search.summary import summarise


def search_summary(cells: Sequence, probes: pd.DataFrame, give_up_floor: int = 0) -> pd.DataFrame:
    """One row per cell of covlib.search searches (covlib.search.summary.summarise), read from the probe table
    alone, under the give-up rule with ``give_up_floor`` (0: the authors'): a cell without probes that count
    under it is "not started" (no starting size is computed for it), and every row adds the largest n_train
    probed and the best type_0 accuracy any probe of the cell reached there."""

    states = []
    for cell in cells:
        rows = cell_rows(probes, cell, give_up_floor) if len(probes) else probes
        if len(rows):
            states.append(search_states([cell], probes, starts={cell.key(): 0}, give_up_floor=give_up_floor)[0])
        else:
            states.append(CellState(cell, pd.DataFrame(columns=PROBE_COLUMNS), 0, None, "not started"))
    summary = summarise(states)
    largest, best = [], []
    for s in states:
        if len(s.probes):
            top = s.probes.loc[s.probes["n_train"].astype(int).idxmax()]
            largest.append(int(top["n_train"]))
            best.append(float(top["best_type0"]))
        else:
            largest.append(None)
            best.append(None)
    summary["eligible"] = summary["eligible"].where(summary["eligible"] > 0)
    return summary.assign(largest_n=largest, best_type0_at_largest=best)


def describe_cells(summary: pd.DataFrame, label: str) -> str:
    """One sentence per cell: the bracket and estimate, or, for a cell that fails at the largest size the
    search allows (the ID pool less a test set), that size, the pool and the best ID accuracy there."""
    parts = []
    for _, r in summary.iterrows():
        at = f"{label} N = {int(r['N'])} (seed {int(r['seed'])})"
        if r["status"] == "bracketed":
            parts.append(f"{at}: n_req ≈ {r['n_req']:,.0f} (bracket {int(r['low']):,} to {int(r['high']):,}, "
                         f"{r['n_req'] / r['eligible']:.0%} of the {int(r['eligible']):,} ID-eligible inputs)")
        elif r["status"] == "unreachable":
            parts.append(f"{at}: **no success even at {int(r['largest_n']):,} examples**, "
                         f"{r['largest_n'] / r['eligible']:.0%} of the {int(r['eligible']):,} ID-eligible inputs "
                         f"(the largest size that leaves a test set); best ID accuracy there "
                         f"{r['best_type0_at_largest']:.1%}"
                         + (" (that probe stopped at the step cap, before 100 epochs after fitting: a failure "
                            "within this budget, not by the authors' rule)" if r["low_capped"] else ""))
        elif r["status"] == "not started":
            parts.append(f"{at}: not searched yet")
        else:
            done = f"; so far {int(r['probes'])} probes" if r["probes"] else ""
            parts.append(f"{at}: search in progress (next n = {int(r['next_n']):,}{done})")
    return "; ".join(parts) + "." if parts else f"No {label} cells."
