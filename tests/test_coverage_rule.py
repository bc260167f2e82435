"""The prediction rule (covlib.coverage.rule): its form, its fit, leave-one-task-out, and its file."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from covlib.base.errors import CovlibError
from covlib.coverage.rule import (
    Rule,
    apply_rule,
    depth,
    fit_rule,
    leave_one_task_out,
    load_rule,
    plain_k,
    save_rule,
    within,
)


def fake_table(scale: dict[str, float] | None = None, pool_limited: tuple[str, int] = ("", 0)) -> pd.DataFrame:
    """Cells of two plain series (two-hop, three-hop) and one CoT series, each with crossings at every candidate:
    the measured n_req is 1.5 x the crossing at the right candidate (90% for plain, m = 3 at 95% for CoT) times the
    series' ``scale``, and 3-24 x the crossing elsewhere (growing with N)."""
    scale = scale or {}
    rows = []
    specs = (("two-hop", "twohop", False), ("three-hop", "threehop", False), ("two-hop, CoT", "twohop", True))
    for series, task, cot in specs:
        for N in (10, 20, 40):
            n_req = 100.0 * N**2
            levels = [plain_k(task), plain_k(task) + 1] if not cot else [2, 3, 4]
            for level in levels:
                for target in (0.9, 0.95, 0.99):
                    right = (target == 0.9 and level == plain_k(task)) if not cot else (level == 3 and target == 0.95)
                    crossing = n_req / (1.5 * scale.get(series, 1.0)) if right else n_req / (3.0 * (N / 10) ** 1.5)
                    rows.append({"series": series, "task": task, "cot": cot, "N": N, "seed": 0, "n_req": n_req,
                                 "level": level, "target": target, "crossing": crossing,
                                 "pool_limited": (series, N) == pool_limited})
    return pd.DataFrame(rows)


def test_depth_and_k_follow_the_longest_chain():
    assert [depth(t) for t in ("twohop", "parallel_twohop", "threehop", "fivehop", "nontree")] == [2, 2, 3, 5, 2]
    assert [plain_k(t) for t in ("twohop", "threehop", "fivehop")] == [3, 4, 6]
    assert depth("b1=f1(x1,x2); b2=f2(x3,x4); b3=f3(b1,b2); t=f4(b3,x5)") == 3


def test_the_fit_finds_the_right_candidate_and_its_one_factor():
    rule = fit_rule(fake_table())
    assert (rule.plain_share, rule.cot_level, rule.cot_share) == (0.9, 3, 0.95)
    assert rule.factor == pytest.approx(1.5) and rule.cells == 9
    assert rule.fitted_on == ["three-hop", "two-hop", "two-hop, CoT"]
    tested = apply_rule(fake_table(), rule)
    assert np.allclose(tested["ratio"], 1.0) and len(tested) == 9


def test_each_task_weighs_one_whatever_its_cells_and_pool_limited_cells_are_left_out():
    table = fake_table({"three-hop": 2.0})  # three-hop's cells sit 2x higher
    rule = fit_rule(table)
    assert rule.factor == pytest.approx(1.5 * 2 ** (1 / 3))  # each of three tasks weighs one third
    extra = table[table["series"] == "two-hop"].assign(seed=1)  # two-hop with twice the cells: weighs the same
    assert fit_rule(pd.concat([table, extra])).factor == pytest.approx(rule.factor)
    limited = fake_table({"three-hop": 2.0}, pool_limited=("three-hop", 40))
    assert fit_rule(limited).cells == 8


def test_a_candidate_some_fitting_cell_lacks_is_never_chosen():
    table = fake_table()
    gone = (table["series"] == "two-hop") & (table["N"] == 40) & (table["target"] == 0.9)
    rule = fit_rule(table.assign(crossing=table["crossing"].where(~gone)))
    assert rule.plain_share != 0.9  # every 90% candidate misses a cell's crossing
    assert fit_rule(table[table["series"] == "nothing"]) is None


def test_leave_one_task_out_never_lets_a_task_inform_its_own_prediction():
    table = fake_table({"three-hop": 2.0})
    oos = leave_one_task_out(table)
    # the only CoT task is not predicted: no other task of its kind fits the fact count it reads
    assert len(oos) == 6 and set(oos["series"]) == {"two-hop", "three-hop"}
    three = oos[oos["series"] == "three-hop"]
    assert three["factor"].iloc[0] == pytest.approx(1.5)  # fitted on the other two tasks, both at 1.5
    assert np.allclose(three["ratio"], 2.0)
    moved = table.copy()  # moving three-hop's own measurements changes its ratios, never its held-out rule
    moved.loc[moved["series"] == "three-hop", "n_req"] *= 7
    again = leave_one_task_out(moved)
    assert again[again["series"] == "three-hop"]["factor"].iloc[0] == pytest.approx(1.5)
    assert not np.allclose(again[again["series"] == "two-hop"]["factor"], oos[oos["series"] == "two-hop"]["factor"])


def test_within_counts_a_missing_prediction_as_outside():
    assert within([1.0, 1.3, 0.85, np.nan], 1.25) == 0.5 and within([1.25, 0.8], 1.25) == 1.0
    assert np.isnan(within([], 1.25))


def test_the_rule_file_round_trips_and_says_what_it_reads(tmp_path):
    rule = Rule(plain_share=0.99, cot_level=2, cot_share=0.9, factor=1.3, fitted_on=["a"], cells=3,
                provenance={"commit": "abc"}, accuracy={"cells": 3})
    save_rule(rule, tmp_path / "rule.json")
    back = load_rule(tmp_path / "rule.json")
    assert back == rule
    assert back.evidence("threehop", False) == ("sound", 4, 0.99)
    assert back.evidence("threehop", True) == ("hop facts", 2, 0.9)
    assert "k = 4 (depth 3 + 1)" in back.describe("threehop", False)
    assert "at least 2 training examples" in back.describe("threehop", True)
    with pytest.raises(CovlibError, match="no fitted rule"):
        load_rule(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{\"x\": 1}")
    with pytest.raises(CovlibError, match="not a rule file"):
        load_rule(tmp_path / "bad.json")
