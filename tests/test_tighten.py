"""Tightening finished brackets: which cells get another bisection probe, at what cost, under which rule."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from covlib.search.cells import Cell, SearchRules
from covlib.search.probes import PROBE_COLUMNS, append_probe
from covlib.search.required_data import search_states
from covlib.search.tighten import probes_to_ratio, select_largest, tighten_brackets, tighten_plan


def row(N: int, n: int, ok: bool, minutes: float, steps: int = 400, fit: int = 100, floor: int = 0) -> dict:
    base = {c: 0 for c in PROBE_COLUMNS}
    return base | {"task": "twohop", "N": N, "model": "smoke", "seed": 0, "cot": False, "n_train": n,
                   "eligible": 40_000, "success": ok, "stopped": "early_stop" if ok else "gave_up", "steps": steps,
                   "first_fit_step": fit, "minutes": minutes, "threshold": 0.99, "give_up_epochs": 100.0,
                   "step_cap": 6000, "weight_decay": 0.1, "give_up_floor": floor}


def table() -> pd.DataFrame:
    return pd.DataFrame([
        # N = 20: bracket 1,600-2,000 (1.25) under the floor, its ends 12 and 30 minutes: one probe, ~30 minutes
        row(20, 1600, False, 12, steps=2500, fit=400, floor=2000), row(20, 2000, True, 30),
        # N = 30: 1.25 too, but its ends ran 90 minutes: too dear
        row(30, 4000, False, 90, steps=2500, fit=400, floor=2000), row(30, 5000, True, 20),
        # N = 40: already 1.1
        row(40, 8000, False, 10, steps=2500, fit=400, floor=2000), row(40, 8800, True, 10),
        # N = 50: the authors' rule gave its lower end up 300 steps past the fit: not finished under the floor
        row(50, 9000, False, 5, steps=400), row(50, 11000, True, 5),
    ])


def test_bisections_needed_to_reach_a_ratio():
    assert probes_to_ratio(1600, 2000, 1.15) == 1  # 1.25 -> 1.12
    assert probes_to_ratio(1000, 1600, 1.15) == 2  # 1.6 -> 1.26 -> 1.12
    assert probes_to_ratio(1000, 1100, 1.15) == 0


def test_the_plan_picks_wide_finished_brackets_within_the_budget():
    plan = tighten_plan(table(), 2000, ratio=1.15, max_minutes=60).set_index("N")
    assert list(plan.index) == [20, 30]  # N = 40 is tight, N = 50 not finished under the floor
    assert plan.loc[20, "minutes"] == 30 and plan.loc[20, "selected"]
    assert plan.loc[30, "minutes"] == 90 and not plan.loc[30, "selected"]
    assert list(tighten_plan(table(), 2000, max_minutes=100)["selected"]) == [True, True]
    # N = 40 and 30 are the series' two largest bracketed N under the floor (50 is not finished under it)
    assert plan.loc[30, "from_largest"] == 2 and plan.loc[20, "from_largest"] == 3
    assert list(select_largest(plan.reset_index(), 2)["N"]) == [30]
    assert len(select_largest(plan, None)) == 2


def test_a_tighter_ratio_bisects_once_more():
    cell = Cell("twohop", 20, "smoke", 0)
    loose = search_states([cell], table(), SearchRules(), give_up_floor=2000)[0]
    tight = search_states([cell], table(), SearchRules(bracket_ratio=1.15), give_up_floor=2000)[0]
    assert loose.status == "bracketed" and loose.next_n is None
    assert tight.status == "searching" and tight.next_n == 1789  # the geometric middle of 1,600 and 2,000


def test_tightening_searches_the_selected_cells_under_the_floor_and_the_ratio(tmp_path: Path, monkeypatch):
    path = tmp_path / "probes.csv"
    for r in table().to_dict("records"):
        append_probe(path, r)
    calls = []
    monkeypatch.setattr("covlib.search.recheck.search",
                        lambda cells, table, work, rules, search_rules, **kw: calls.append((cells, rules, search_rules)))
    tighten_brackets(path, tmp_path / "work", 2000, ratio=1.15, max_minutes=60, log=None)
    (cells, rules, search_rules), = calls
    assert [c.N for c in cells] == [20] and rules.give_up_floor == 2000 and search_rules.bracket_ratio == 1.15
    calls.clear()
    tighten_brackets(path, tmp_path / "work", 2000, ratio=1.15, max_minutes=60, tasks=["twohop-cot"], log=None)
    assert calls == []  # no CoT cell in the table
    tighten_brackets(path, tmp_path / "work", 2000, ratio=1.15, max_minutes=60, largest_n=2, log=None)
    assert calls == []  # N = 20 is the third largest: left for a later pass
    tighten_brackets(path, tmp_path / "work", 2000, ratio=1.15, max_minutes=60, largest_n=3, log=None)
    assert [c.N for c in calls[0][0]] == [20]


def test_the_tighten_command_prints_its_plan_and_refuses_bad_input(tmp_path: Path, capsys):
    from covlib.cli.main import main

    path = tmp_path / "probes.csv"
    for r in table().to_dict("records"):
        append_probe(path, r)
    assert main(["scaling", "tighten", "--give-up-floor", "2000", "--table", str(path)]) == 0
    assert "2 bracket(s) wider than 1.15; 1 within 60 CPU-minutes each: 1 probe(s)" in capsys.readouterr().out
    assert main(["scaling", "tighten", "--give-up-floor", "2000", "--table", str(path), "--ratio", "1"]) == 2
    assert "--ratio 1" in capsys.readouterr().err
    assert main(["scaling", "tighten", "--give-up-floor", "2000", "--table", str(path), "--largest-n", "2"]) == 0
    assert "1 bracket(s) wider than 1.15; 0 within 60 CPU-minutes each" in capsys.readouterr().out
    assert main(["scaling", "tighten", "--give-up-floor", "2000", "--table", str(path), "--largest-n", "0"]) == 2
    assert "--largest-n 0" in capsys.readouterr().err
