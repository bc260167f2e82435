"""Summaries of finished searches: n_req per cell, ratios between searches, the seed spread."""
from __future__ import annotations

import itertools
from collections.abc import Iterable

import numpy as np
import pandas as pd

from covlib.search.cells import CellState


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
        if "step_cap" in at_low and len(at_low):  # rerun under a higher cap: the longest run decides
            at_low = at_low[at_low["step_cap"].astype(int) == at_low["step_cap"].astype(int).max()]
        rows.append({"task": c.task, "cot": c.cot, "N": c.N, "model": c.model, "seed": c.seed, "low": s.low,
                     "high": s.high, "n_req": s.estimate if s.status == "bracketed" else None,
                     "status": s.status, "next_n": s.next_n,
                     "probes": len(s.probes), "eligible": s.eligible,
                     "minutes": float(s.probes["minutes"].sum()) if len(s.probes) else 0.0,
                     "inversions": s.inversions, "low_capped": bool("stopped" in at_low and (at_low["stopped"] == "steps").any())})
    return pd.DataFrame(rows)


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


def geometric_mean(values) -> float:
    """The typical factor among ratios: their mean in log space (NaN for no values)."""
    values = np.asarray(values, float)
    return float(np.exp(np.log(values).mean())) if len(values) else float("nan")


def seed_spread(summary: pd.DataFrame) -> float:
    """How far apart two seeds' estimates of the same cell typically are: the geometric mean, over every
    pair of seeds finished at the same N, of the larger n_req over the smaller (1.0 = identical; NaN when no
    N has two finished seeds). The yardstick for a difference between models searched on one seed."""
    done = summary.dropna(subset=["n_req"]) if len(summary) else summary
    gaps = [abs(np.log(x / y)) for _, g in (done.groupby("N") if len(done) else [])
            for x, y in itertools.combinations(g["n_req"].astype(float), 2)]
    return float(np.exp(np.mean(gaps))) if gaps else float("nan")


def bracket_pair(summary: pd.DataFrame) -> pd.Series | None:
    """The bracketed cell whose failing and succeeding probes are closest (in ratio): the clearest
    picture of what happens just below the required data. None if no cell is bracketed."""
    done = summary[summary["status"] == "bracketed"] if len(summary) else summary
    if not len(done):
        return None
    return done.loc[(done["high"] / done["low"]).idxmin()]
