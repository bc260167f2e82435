"""Replicates of a search's probes (covlib.search.replicates): another initialisation or another draw of the
training set at the same size, kept in the probe table but never read by a search."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from covlib.base.errors import CovlibError
from covlib.search.cells import Cell, Probe, ProbeRules
from covlib.search.probes import PROBE_COLUMNS, append_probe, read_probes
from covlib.search.replicates import (
    ReplicateCell,
    done_mask,
    flip_shares,
    measured_pace,
    replicate_outcomes,
    replicate_plan,
    run_replicates,
)
from covlib.search.required_data import run_probe, search_states
from covlib.tasks.datasets import DatasetConfig, generate


def row(n: int, ok: bool, replicate: str = "search", rseed: int = 0, floor: int = 2000, N: int = 20) -> dict:
    return {c: 0 for c in PROBE_COLUMNS} | {
        "task": "twohop", "N": N, "model": "smoke", "seed": 0, "cot": False, "n_train": n, "eligible": 4000,
        "success": ok, "stopped": "early_stop" if ok else "gave_up", "steps": 3000, "first_fit_step": 100,
        "minutes": n / 100, "threshold": 0.99, "give_up_epochs": 100.0, "step_cap": 6000, "weight_decay": 0.1,
        "give_up_floor": floor, "policy": "bisect", "replicate": replicate, "replicate_seed": rseed}


def test_a_draw_keeps_the_task_instance_and_draws_other_items():
    base = DatasetConfig("twohop", 12, 300, seed=3, test_size_per_type=20)
    same, other = generate(base), generate(dataclasses.replace(base, draw_seed=1))
    for name in same.tables:
        np.testing.assert_array_equal(same.tables[name], other.tables[name])
        np.testing.assert_array_equal(same.seen_split[name], other.seen_split[name])
    assert same.eligible_count == other.eligible_count
    assert {tuple(x) for x in same.train_inputs} != {tuple(x) for x in other.train_inputs}
    assert len(other.train_inputs) == 300
    again = generate(dataclasses.replace(base, draw_seed=1))
    np.testing.assert_array_equal(again.train_inputs, other.train_inputs)  # deterministic
    assert dataclasses.replace(base, draw_seed=1).folder_name.endswith(".draw-1")
    assert "draw_seed" not in base.to_dict()  # existing datasets keep their recorded config


def test_a_replicate_probe_trains_another_seed_or_draw_in_a_folder_of_its_own():
    cell = Cell("twohop", 20, "smoke", 0)
    search = Probe(cell, 500, 4000, ProbeRules(), "t.csv", "w")
    init = dataclasses.replace(search, replicate="init", replicate_seed=1001)
    draw = dataclasses.replace(search, replicate="draw", replicate_seed=1)
    assert (search.train_seed, search.draw_seed) == (0, None)
    assert (init.train_seed, init.draw_seed) == (1001, None)
    assert (draw.train_seed, draw.draw_seed) == (0, 1)
    assert len({search.run_dir(), init.run_dir(), draw.run_dir()}) == 3


def test_replicate_rows_sit_beside_the_probe_they_repeat_and_no_search_reads_them(tmp_path: Path):
    table = tmp_path / "p.csv"
    append_probe(table, row(500, True))
    append_probe(table, row(500, False, "init", 1001))
    append_probe(table, row(500, True, "draw", 1))
    assert len(read_probes(table)) == 1 and read_probes(table)["replicate"].eq("search").all()
    every = read_probes(table, replicates=True)
    assert sorted(every["replicate"]) == ["draw", "init", "search"]


def _bracketed_table() -> pd.DataFrame:
    return pd.DataFrame([row(300, False), row(400, False), row(450, True), row(700, True)]).astype({"success": bool})


def test_the_plan_repeats_both_ends_in_rounds_and_refuses_an_unfinished_cell():
    cells = [ReplicateCell("twohop", 20, 0, model="smoke")]
    plan = replicate_plan(_bracketed_table(), cells)
    assert len(plan) == 8  # two ends x two kinds x two seeds
    assert set(plan["n_train"]) == {400, 450}
    assert plan.loc[plan["n_train"] == 400, "original_success"].eq(False).all()
    assert plan.loc[plan["n_train"] == 450, "side"].eq("above").all()
    assert plan["round"].tolist() == [0] * 4 + [1] * 4  # every end once of each kind before any second
    assert plan["n_req"].iloc[0] == pytest.approx(np.sqrt(400 * 450))
    with pytest.raises(CovlibError, match="not bracketed"):
        replicate_plan(_bracketed_table()[lambda d: d["success"]], cells)


def test_a_cell_without_probes_is_skipped_or_refused_without_computing_its_first_guess(monkeypatch):
    import covlib.search.required_data as required_data

    def no_guess(*args, **kwargs):
        raise AssertionError("the plan computed a first guess for a cell it cannot use")

    monkeypatch.setattr(required_data, "first_guess", no_guess)
    absent = [ReplicateCell("twohop", 20, 0, model="smoke"), ReplicateCell("threehop", 40, 1, cot=True)]
    plan = replicate_plan(_bracketed_table(), absent, strict=False)
    assert set(plan["N"]) == {20}  # the cell with probes is planned, the other skipped
    with pytest.raises(CovlibError, match=r"not bracketed .*\(no probes\)"):
        replicate_plan(_bracketed_table(), absent)


def test_flips_are_counted_against_the_probe_each_replicate_repeats():
    cells = [ReplicateCell("twohop", 20, 0, model="smoke")]
    table = _bracketed_table()
    plan = replicate_plan(table, cells)
    ran = pd.DataFrame([row(400, True, "init", 1001), row(400, False, "draw", 1), row(450, True, "init", 1001),
                        row(450, False, "draw", 1), row(450, False, "draw", 2, floor=0)])  # another rule: not read
    both = pd.concat([table, ran], ignore_index=True).astype({"success": bool})
    assert done_mask(plan, both).sum() == 4
    outcomes = replicate_outcomes(both, plan)
    assert len(outcomes) == 4 and outcomes["changed"].sum() == 2
    shares = flip_shares(outcomes).set_index("source")
    assert shares.loc["all", "share"] == 0.5
    assert shares.loc["init", "changed"] == 1 and shares.loc["draw", "changed"] == 1
    assert 0 <= shares.loc["all", "ci_low"] < 0.5 < shares.loc["all", "ci_high"] <= 1
    paced = outcomes.assign(minutes=[2.0, 2.0, 4.0, 4.0], replicate_minutes=[2.0, 6.0, 12.0, 20.0])
    assert measured_pace(paced) == 3.0 and np.isnan(measured_pace(outcomes.iloc[:0]))


@pytest.mark.slow
def test_replicates_run_resume_and_land_in_the_table(tmp_path: Path):
    # a miniature: the smoke model at N = 6, a search probe and its replicates trained for real
    rules = ProbeRules(threshold=0.3, step_cap=100, eval_every=25, batch_size=32, test_size_per_type=30,
                       give_up_floor=50)
    table = tmp_path / "p.csv"
    cell = Cell("twohop", 6, "smoke", 0)
    for n in (40, 80):
        run_probe(Probe(cell, n, 100, rules, str(table), str(tmp_path / "w")))
    probes = read_probes(table)
    plan = pd.DataFrame([{"task": "twohop", "N": 6, "model": "smoke", "seed": 0, "cot": False, "n_train": 40,
                          "eligible": 100, "n_req": 56.0, "side": "below",
                          "original_success": bool(probes["success"].iloc[0]), "step_cap": 100, "minutes": 0.1,
                          "replicate": kind, "replicate_seed": s, "round": 0}
                         for kind, s in (("init", 1001), ("draw", 1))])
    assert run_replicates(table, tmp_path / "w", plan, jobs=1, give_up_floor=50, log=None) == 0
    every = read_probes(table, replicates=True)
    assert len(every) == 4 and len(read_probes(table)) == 2
    assert done_mask(plan, every, 50).all()
    assert run_replicates(table, tmp_path / "w", plan, jobs=1, give_up_floor=50, log=None) == 0  # nothing left
    assert len(read_probes(table, replicates=True)) == 4


def test_a_cells_pool_size_comes_from_its_rows_under_any_rule(monkeypatch):
    import covlib.search.required_data as required_data

    def no_generation(*args, **kwargs):
        raise AssertionError("the pool size was counted by generating the dataset")

    monkeypatch.setattr(required_data, "eligible_count", no_generation)
    floor_only = pd.DataFrame([row(400, False), row(450, True)]).astype({"success": bool})
    cell = Cell("twohop", 20, "smoke", 0)
    # under the authors' rule none of these rows counts, yet each records the pool
    state = search_states([cell], floor_only, starts={cell.key(): 300}, give_up_floor=0)[0]
    assert state.eligible == 4000
