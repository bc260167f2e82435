"""Three-hop and parallel two-hop against two-hop: their exponents beside the paper's, and which is steeper."""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from covlib.analyses.fits import describe_exponent
from covlib.base.paper import EXPONENTS
from covlib.chapters.ch04_how_much_data.searches import cells_text, pending_clause
from covlib.chapters.ch04_how_much_data.twohop_law import interval_text
from covlib.figures.give_up_rule import reader_name
from covlib.figures.required_data import requirement_frame
from covlib.figures.text import sentence_start

CHAIN_TASKS = ("twohop", "parallel_twohop", "threehop")


def chain_table(summaries: Mapping[str, pd.DataFrame], experiments: Mapping[str, dict],
                fits: Mapping[str, dict | None]) -> tuple[pd.DataFrame, list[pd.DataFrame]]:
    """Per task (two-hop and the longer chains): N values, exponent, interval, the paper's and finished cells
    (a table), and the estimates as chart points (one frame per task with a bracketed cell)."""
    rows, points = [], []
    for name in CHAIN_TASKS:
        s, f = summaries.get(name, pd.DataFrame()), fits.get(name)
        rows.append({"task": name, "N values": ", ".join(map(str, experiments.get(name, {}).get("N", []))),
                     "exponent": f["c"] if f else np.nan,
                     "interval": interval_text(f), "seeds": f["seeds"] if f else 0,
                     "paper": EXPONENTS.get(name), "finished cells": int(s["n_req"].notna().sum()) if len(s) else 0,
                     "cells": len(s)})
        if len(s) and s["n_req"].notna().any():  # a task with no bracketed cell has no point to draw
            points.append(requirement_frame(s.assign(model=reader_name(name))))
    return pd.DataFrame(rows), points


def chain_note(summaries: Mapping[str, pd.DataFrame], fits: Mapping[str, dict | None], threshold: float) -> str:
    """The longer chains in prose: fit against the paper's, estimates, and N values no training set reaches."""
    parts = []
    for name in ("threehop", "parallel_twohop"):
        s, f = summaries.get(name, pd.DataFrame()), fits.get(name)
        if not len(s):
            continue
        done = s.dropna(subset=["n_req"]).sort_values(["N", "seed"])
        text = f"{reader_name(name)}: " + (describe_exponent(f) + f" against the paper's {EXPONENTS[name]:.2f}"
                                           if f else "no fit yet")
        if len(done):
            text += " (n_req " + "; ".join(f"at N = {int(n)}: " + " and ".join(f"{v:,.0f}" for v in cell["n_req"])
                                           for n, cell in done.groupby("N")) + ")"
        lost = s[s["status"] == "unreachable"]
        if len(lost):
            text += f"; at N = {cells_text(lost)} no training set the pool allows reaches {threshold:.0%}"
        if pending := pending_clause(s):
            text += f"; {pending}"
        parts.append(text)
    return sentence_start("; ".join(parts))
