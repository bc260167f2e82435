"""Claims on cells: two searches of one probe table, in two processes, never probe the same cell at once."""
from __future__ import annotations

import multiprocessing
import time
from pathlib import Path

from covlib.search import required_data
from covlib.search.cells import Cell, ProbeRules, SearchRules
from covlib.search.claims import CellClaims
from covlib.search.probes import PROBE_COLUMNS, append_probe, read_probes

CELL = Cell("twohop", 20, "smoke", 0)


def _hold(table: str, ready: str) -> None:
    claims = CellClaims(table, 2000)
    assert claims.take(CELL)
    Path(ready).touch()  # a file, not a multiprocessing Event: killing a process inside an Event's lock hangs its peer
    time.sleep(60)


def test_a_claim_excludes_other_searches_until_released_or_its_process_ends(tmp_path: Path):
    table = tmp_path / "probes.csv"
    first, second = CellClaims(table, 2000), CellClaims(table, 2000)
    assert first.take(CELL) and first.take(CELL)  # taking a claim one holds is a no-op
    assert not second.take(CELL)
    assert second.take(Cell("twohop", 30, "smoke", 0))  # another cell
    assert CellClaims(table, 0).take(CELL)  # the same cell under another rule
    assert CellClaims(tmp_path / "other.csv", 2000).take(CELL)  # the same cell of another table
    first.release(CELL)
    assert second.take(CELL)
    second.release_all()

    ready = tmp_path / "ready"
    holder = multiprocessing.get_context("spawn").Process(target=_hold, args=(str(table), str(ready)))
    holder.start()
    try:
        for _ in range(600):  # up to a minute for the child to start and claim
            if ready.exists() or not holder.is_alive():
                break
            time.sleep(0.1)
        assert ready.exists()
        assert not first.take(CELL)  # held by the other process
        holder.kill()  # killed without releasing: the kernel drops its lock
        holder.join(30)
        assert first.take(CELL)
    finally:
        holder.kill()
        holder.join(30)
        first.release_all()


def _row(n: int, ok: bool, steps: int, fit: int, floor: int) -> dict:
    return {c: 0 for c in PROBE_COLUMNS} | {
        "task": "twohop", "N": 20, "model": "smoke", "seed": 0, "cot": False, "n_train": n, "eligible": 40_000,
        "success": ok, "stopped": "early_stop" if ok else "gave_up", "steps": steps, "first_fit_step": fit,
        "minutes": 1.0, "threshold": 0.99, "give_up_epochs": 100.0, "step_cap": 6000, "weight_decay": 0.1,
        "give_up_floor": floor}


def test_a_search_leaves_a_cell_another_search_is_probing_to_it(tmp_path: Path, monkeypatch):
    table = tmp_path / "probes.csv"
    append_probe(table, _row(1600, False, steps=2500, fit=400, floor=2000))
    append_probe(table, _row(2000, True, steps=900, fit=100, floor=0))
    probed = []

    def fake_probe(probe):  # succeeds at any size: writes its row as a real probe would
        probed.append(probe.n_train)
        row = _row(probe.n_train, True, steps=800, fit=100, floor=probe.rules.give_up_floor)
        append_probe(probe.table, row)
        return row

    monkeypatch.setattr(required_data, "run_probe", fake_probe)
    rules, tight = ProbeRules(give_up_floor=2000), SearchRules(bracket_ratio=1.15)
    other, logged = CellClaims(table, 2000), []
    assert other.take(CELL)
    result = required_data.search([CELL], table, tmp_path / "work", rules, tight, log=logged.append)
    assert result.probes_run == 0 and probed == []
    assert logged == ["1 cell(s) left to another search of this table, which was probing them"]
    other.release(CELL)
    result = required_data.search([CELL], table, tmp_path / "work", rules, tight, log=None)
    assert probed == [1789] and result.probes_run == 1  # the geometric middle of 1,600 and 2,000
    assert 1789 in set(read_probes(table)["n_train"])
    assert CellClaims(table, 2000).take(CELL)  # the search let its claim go when it ended
