"""`covlib scaling value` (covlib.search.evidence_value): what a new N of one series would decide per CPU-hour, by
simulating its cells from the series' own fit."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from covlib.search.evidence_value import candidate_table, candidate_value
from covlib.search.reproduction import PAPER, SERIES


def _cells(name: str, c: float, Ns: tuple[int, ...], seeds: tuple[int, ...] = (0, 1)) -> pd.DataFrame:
    """A series' cell table on an exact power law of exponent ``c`` (no scatter, each cell known to 1%)."""
    task, cot, model = SERIES[name]
    rows = [{"task": task, "cot": cot, "model": model, "N": N, "seed": s, "n_req_bracket": 10.0 * N ** c,
             "n_req_logistic": 10.0 * N ** c, "log_sd": 0.01, "pool_limited": False} for N in Ns for s in seeds]
    return pd.DataFrame(rows)


def _probes(name: str, Ns: tuple[int, ...]) -> pd.DataFrame:
    """Three probes a cell, their minutes growing with n_train."""
    task, cot, model = SERIES[name]
    return pd.DataFrame([{"task": task, "cot": cot, "model": model, "N": N, "seed": s, "n_train": 100 * N * k,
                          "minutes": 0.1 * N * k} for N in Ns for s in (0, 1) for k in (1, 2, 3)])


def test_a_fourth_n_decides_an_exponent_that_three_cannot():
    # three values of N give no interval, so no verdict: a fourth, on the same law, decides it every time
    far = PAPER["fivehop_cot"] + 0.5
    by_rule = {"floor": _cells("fivehop_cot", far, (8, 10, 12))}
    value = candidate_value(by_rule, _probes("fivehop_cot", (8, 10, 12)), "fivehop_cot", 14, draws=4, reps=200)
    assert value["verdict_now"] == "inconclusive" and value["verdict_changes"] == 1.0
    assert value["decided_per_cpu_hour"] == pytest.approx(1.0 / value["cpu_hours"])
    # its cost: the series' minutes against n_train (here n_train / 1,000) at the predicted size, 3 probes a cell, 2 seeds
    assert value["n_req_predicted"] == pytest.approx(10.0 * 14 ** far)
    assert value["cpu_hours"] == pytest.approx(value["n_req_predicted"] / 1_000 * 3 * 2 / 60)


def test_a_step_that_only_narrows_decides_nothing_and_ranks_after_one_that_decides():
    on_paper = _cells("fivehop_cot", PAPER["fivehop_cot"], (8, 10, 12, 14))  # reproduced already
    undecided = _cells("threehop_cot", PAPER["threehop_cot"] + 0.5, (20, 24, 30))
    by_rule = {"floor": pd.concat([on_paper, undecided], ignore_index=True)}
    probes = pd.concat([_probes("fivehop_cot", (8, 10, 12, 14)), _probes("threehop_cot", (20, 24, 30))])
    table = candidate_table(by_rule, probes, [("fivehop_cot", 16), ("threehop_cot", 40)], draws=4, reps=200)
    assert list(table["series"]) == ["threehop_cot", "fivehop_cot"]
    kept = table.set_index("series").loc["fivehop_cot"]
    assert kept["verdict_now"] == "reproduced" and kept["verdict_changes"] == 0.0 and kept["decided_per_cpu_hour"] == 0
    assert np.isfinite(kept["narrowing_per_cpu_hour"])
    # the claim that reads three-hop CoT has no three-hop cells here: no interval before or after, no change
    assert table.set_index("series").loc["threehop_cot", "claim_changes"] == "cot_flattens_threehop inconclusive 0%"
