"""Two search policies compared live on the same cells (covlib.search.policy_live)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from covlib.analyses.success_curve import SlopeFit
from covlib.base.errors import CovlibError
from covlib.search.policy_live import live_comparison, live_sentence

SLOPE = SlopeFit(slope=100.0, low=30.0, high=900.0, cells=7, replicates=17, flips=1)


def _probes(sizes, n_req, seed=0, minutes=2.0, floor=2000, replicate="search", steps=1000, policy="bisect"):
    return [{"task": "b=f1(x1,x2);t=f2(b,x3,x4)", "N": 10, "model": "L4-d128", "seed": seed, "cot": False,
             "n_train": n, "eligible": 4918, "success": n >= n_req, "minutes": minutes, "steps": steps, "policy": policy, "give_up_floor": floor,
             "replicate": replicate} for n in sizes]


def test_both_policies_are_estimated_alike_and_their_spending_compared():
    bisect = pd.DataFrame(_probes([1652, 2643, 2066], 1900) + _probes([1652, 1033, 1291], 1200, seed=1))
    psi = pd.DataFrame(_probes([1800, 2000], 1900, minutes=3.0, policy="psi")
                       + _probes([1250, 1150], 1200, seed=1, minutes=3.0, policy="psi"))
    out = live_comparison({"bisect": bisect, "psi": psi}, SLOPE, 2000, psi_slope=100.0).set_index("seed")
    assert out[["finished_bisect", "finished_psi"]].all().all()
    assert list(out.index) == [0, 1]
    # the same data estimated alike: each n_req between the policy's own largest failure and smallest success
    assert 1652 < out.loc[0, "n_req_bisect"] < 2066 and 1800 < out.loc[0, "n_req_psi"] < 2000
    assert out["overlap"].all()
    assert out.loc[0, "probes_bisect"] == 3 and out.loc[0, "minutes_psi"] == 6.0
    assert out.loc[0, "minutes_ratio"] == pytest.approx(1.0)  # 3 x 2 against 2 x 3 minutes
    assert out.loc[0, "steps_ratio"] == pytest.approx(1.5)  # 3 probes of 1,000 steps against 2
    assert out.loc[0, "estimate_ratio"] == pytest.approx(out.loc[0, "n_req_psi"] / out.loc[0, "n_req_bisect"])
    said = live_sentence(out.reset_index(), "bisect", "psi")
    assert "2 cells finished by both" in said and "bisect ran 6 probes, 6,000 training steps and 12 recorded minutes" in said
    assert "(bisect over psi: 1.50x the steps, 1.00x the minutes)" in said


def test_cells_apart_do_not_overlap_and_unplaced_cells_and_other_rules_are_left_out():
    bisect = pd.DataFrame(_probes([1000, 1100], 1050) + _probes([1000, 1600], 5000, seed=1)  # seed 1: no success
                          + _probes([3000], 0, floor=0))  # the authors' rule: another table's business
    psi = pd.DataFrame(_probes([4000, 4400], 4200) + _probes([1000, 9000], 5000, seed=1)
                       + _probes([1100], 0, replicate="init"))  # a replicate is no probe of the policy
    out = live_comparison({"bisect": bisect, "psi": psi}, SLOPE, 2000, psi_slope=100.0)
    assert list(out["seed"]) == [0]
    assert not out["overlap"].iloc[0] and out["estimate_ratio"].iloc[0] > 3
    assert out["probes_psi"].iloc[0] == 2


def test_a_live_comparison_needs_two_tables_and_a_slope_with_an_interval():
    table = pd.DataFrame(_probes([1000, 1100], 1050))
    with pytest.raises(CovlibError, match="two policies"):
        live_comparison({"bisect": table}, SLOPE, 2000, psi_slope=100.0)
    unbounded = SlopeFit(slope=np.inf, low=np.nan, high=np.inf, cells=3, replicates=6, flips=0)
    with pytest.raises(CovlibError, match="replicates"):
        live_comparison({"bisect": table, "psi": table}, unbounded, 2000, psi_slope=100.0)
    assert live_sentence(pd.DataFrame(), "bisect", "psi").startswith("No cell")


def test_a_cell_still_searching_is_shown_but_not_scored():
    """psi has bracketed its cell only 3x wide, and its interval is wider still: it is still running, so the
    sentence scores no cell until it stops."""
    bisect = pd.DataFrame(_probes([1000, 1200], 1100))
    psi = pd.DataFrame(_probes([600, 1800], 1100, policy="psi"))
    running = live_comparison({"bisect": bisect, "psi": psi}, SLOPE, 2000, psi_slope=100.0)
    assert running["finished_bisect"].all() and not running["finished_psi"].any()
    assert live_sentence(running, "bisect", "psi") == (
        "No cell has been finished by both bisect and psi yet (1 more placed by both, still running).")
    psi = pd.DataFrame(_probes([600, 1800, 1040, 1180], 1100, policy="psi"))
    stopped = live_comparison({"bisect": bisect, "psi": psi}, SLOPE, 2000, psi_slope=100.0)
    assert stopped["finished_psi"].all()
    assert live_sentence(stopped, "bisect", "psi").startswith("1 cell finished by both")
