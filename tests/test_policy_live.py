"""Two search policies compared live on the same cells (covlib.search.policy_live)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from covlib.analyses.success_curve import SlopeFit
from covlib.base.errors import CovlibError
from covlib.search.policy_live import live_comparison, live_sentence

SLOPE = SlopeFit(slope=100.0, low=30.0, high=900.0, cells=7, replicates=17, flips=1)


def _probes(sizes, n_req, seed=0, minutes=2.0, floor=2000, replicate="search"):
    return [{"task": "b=f1(x1,x2);t=f2(b,x3,x4)", "N": 10, "model": "L4-d128", "seed": seed, "cot": False,
             "n_train": n, "eligible": 4918, "success": n >= n_req, "minutes": minutes, "give_up_floor": floor,
             "replicate": replicate} for n in sizes]


def test_both_policies_are_estimated_alike_and_their_spending_compared():
    bisect = pd.DataFrame(_probes([1652, 2643, 2066], 1900) + _probes([1652, 1033, 1291], 1200, seed=1))
    psi = pd.DataFrame(_probes([1800, 2000], 1900, minutes=3.0) + _probes([1250, 1150], 1200, seed=1, minutes=3.0))
    out = live_comparison({"bisect": bisect, "psi": psi}, SLOPE, 2000).set_index("seed")
    assert list(out.index) == [0, 1]
    # the same data estimated alike: each n_req between the policy's own largest failure and smallest success
    assert 1652 < out.loc[0, "n_req_bisect"] < 2066 and 1800 < out.loc[0, "n_req_psi"] < 2000
    assert out["overlap"].all()
    assert out.loc[0, "probes_bisect"] == 3 and out.loc[0, "minutes_psi"] == 6.0
    assert out.loc[0, "minutes_ratio"] == pytest.approx(1.0)  # 3 x 2 against 2 x 3 minutes
    assert out.loc[0, "estimate_ratio"] == pytest.approx(out.loc[0, "n_req_psi"] / out.loc[0, "n_req_bisect"])
    assert "2 cells run by both" in live_sentence(out.reset_index(), "bisect", "psi")


def test_cells_apart_do_not_overlap_and_unplaced_cells_and_other_rules_are_left_out():
    bisect = pd.DataFrame(_probes([1000, 1100], 1050) + _probes([1000, 1600], 5000, seed=1)  # seed 1: no success
                          + _probes([3000], 0, floor=0))  # the authors' rule: another table's business
    psi = pd.DataFrame(_probes([4000, 4400], 4200) + _probes([1000, 9000], 5000, seed=1)
                       + _probes([1100], 0, replicate="init"))  # a replicate is no probe of the policy
    out = live_comparison({"bisect": bisect, "psi": psi}, SLOPE, 2000)
    assert list(out["seed"]) == [0]
    assert not out["overlap"].iloc[0] and out["estimate_ratio"].iloc[0] > 3
    assert out["probes_psi"].iloc[0] == 2


def test_a_live_comparison_needs_two_tables_and_a_slope_with_an_interval():
    table = pd.DataFrame(_probes([1000, 1100], 1050))
    with pytest.raises(CovlibError, match="two policies"):
        live_comparison({"bisect": table}, SLOPE, 2000)
    unbounded = SlopeFit(slope=np.inf, low=np.nan, high=np.inf, cells=3, replicates=6, flips=0)
    with pytest.raises(CovlibError, match="replicates"):
        live_comparison({"bisect": table, "psi": table}, unbounded, 2000)
    assert live_sentence(pd.DataFrame(), "bisect", "psi").startswith("No cell")
