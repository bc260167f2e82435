"""The longer floor's control (covlib.search.longer_floor, covlib.figures.longer_floor): the cells a 2,000-step floor
finished, paired with where a 4,000-step floor leaves them, the n_req ratio, the tilt of the fit with its interval,
and what chapter 4 says of them before and after the reruns."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from covlib.figures.longer_floor import longer_floor_command, longer_floor_metrics, longer_floor_note
from covlib.search.longer_floor import LONGER_FLOOR, longer_floor_cells, longer_floor_test
from covlib.search.probes import PROBE_COLUMNS
from covlib.search.recheck import BOOK_FLOOR

Ns = [10, 12, 14, 16, 20]


def row(N: int, seed: int, n: int, ok: bool, floor: int, past_fit: int = 0) -> dict:
    """A probe under ``floor``: a success, or a give-up ``past_fit`` steps after fitting at step 200."""
    base = {c: 0 for c in PROBE_COLUMNS}
    return base | {"task": "twohop", "N": N, "model": "smoke", "seed": seed, "cot": False, "n_train": n,
                   "eligible": 10**6, "success": ok, "stopped": "early_stop" if ok else "gave_up",
                   "steps": 900 if ok else 200 + past_fit, "first_fit_step": 200, "threshold": 0.99,
                   "give_up_epochs": 100.0, "step_cap": 6000, "weight_decay": 0.1, "give_up_floor": floor}


def base_rows() -> list[dict]:
    """Every cell bracketed under the book's floor at (2 N^2, 2.5 N^2]; each lower end gave up 2,000 steps past its
    fit, so the longer floor reopens it."""
    return [r for N in Ns for seed in (0, 1)
            for r in (row(N, seed, 2 * N**2, False, BOOK_FLOOR, past_fit=BOOK_FLOOR),
                      row(N, seed, int(2.5 * N**2), True, BOOK_FLOOR))]


def longer_rows(walk) -> list[dict]:
    """Each lower end flips under the longer floor, and the search walks down from it in steps of 1.25x: ``walk(N)``
    more successes, then a failure, so the cell brackets again 1.25x wide, 0.8^(walk(N) + 1) times as high."""
    rows = []
    for N in Ns:
        for seed in (0, 1):
            sizes = [int(2 * N**2 / 1.25**k) for k in range(walk(N) + 2)]
            rows += [row(N, seed, n, True, LONGER_FLOOR) for n in sizes[:-1]]
            rows.append(row(N, seed, sizes[-1], False, LONGER_FLOOR, past_fit=LONGER_FLOOR))
    return rows


def test_before_the_reruns_every_reopened_cell_is_pending_and_the_note_gives_the_command():
    cells = longer_floor_cells(pd.DataFrame(base_rows()), model="smoke")
    assert len(cells) == 10 and cells["reopened"].all() and cells["ratio"].isna().all()
    test = longer_floor_test(cells, reps=200)
    assert (test["cells"], test["reopened"], test["reruns"], test["flips"], test["pending"]) == (10, 10, 0, 0, 10)
    assert test["tilt"] is None and np.isnan(test["ratio"])
    command = longer_floor_command("twohop", "L4-d128", BOOK_FLOOR, LONGER_FLOOR)
    assert command.startswith("covlib scaling recheck --task twohop --model L4-d128 --from-floor 2000 --give-up-floor 4000")
    note = longer_floor_note(test, "two-hop", BOOK_FLOOR, LONGER_FLOOR, command)
    assert f"(`{command}`" in note and "0 of the 10 it reopens rerun so far" in note
    assert "once all 10 cells are finished under both floors (10 still searching)" in note
    metrics = longer_floor_metrics(test, "twohop", LONGER_FLOOR)
    assert metrics["longer_floor_pending_twohop"] == 10 and np.isnan(metrics["longer_floor_tilt_twohop"])
    assert metrics["exponent_twohop_longer_floor_n_values"] == 0


def test_a_longer_floor_that_lowers_every_cell_alike_lowers_n_req_without_a_tilt():
    rows = pd.DataFrame(base_rows() + longer_rows(lambda N: 0))
    test = longer_floor_test(longer_floor_cells(rows, model="smoke"), reps=400)
    assert (test["reruns"], test["flips"], test["pending"], test["pairs"]) == (10, 10, 0, 10)
    assert test["ratio"] < 1 and test["ratio_max"] / test["ratio_min"] == pytest.approx(1, abs=0.01)
    assert abs(test["tilt"]["c"]) < 0.02 and test["tilt"]["c_low"] <= 0 <= test["tilt"]["c_high"]
    assert test["longer_fit"]["c"] == pytest.approx(test["base_fit"]["c"], abs=0.02)
    note = longer_floor_note(test, "two-hop", BOOK_FLOOR, LONGER_FLOOR, "cmd")
    assert "10 of the 10 it reopens rerun so far, 10 flipped" in note and "Over the 10 cells bracketed under both" in note
    assert "The interval holds 0: the longer floor lowers n_req without a tilt" in note


def test_a_longer_floor_that_lowers_small_n_most_steepens_the_fit_and_the_tilt_is_the_paired_slope():
    rows = pd.DataFrame(base_rows() + longer_rows(lambda N: {10: 3, 12: 2, 14: 2, 16: 1, 20: 0}[N]))
    cells = longer_floor_cells(rows, model="smoke")
    test = longer_floor_test(cells, reps=400)
    slope = np.polyfit(np.log(cells["N"].astype(float)), np.log(cells["ratio"].astype(float)), 1)[0]
    assert test["tilt"]["c"] == pytest.approx(slope) and slope > 0.5
    assert test["longer_fit"]["c"] - test["base_fit"]["c"] == pytest.approx(slope)  # one least-squares fit minus another
    assert test["tilt"]["c_low"] > 0
    note = longer_floor_note(test, "two-hop", BOOK_FLOOR, LONGER_FLOOR, "cmd")
    assert "The interval excludes 0: more patience steepens the fit" in note
    metrics = longer_floor_metrics(test, "twohop", LONGER_FLOOR)
    assert metrics["longer_floor_tilt_twohop"] == pytest.approx(slope) and metrics["longer_floor_steps"] == 4000
    assert metrics["longer_floor_tilt_twohop_ci_low"] > 0 and metrics["exponent_twohop_longer_floor_n_values"] == 5


def test_a_table_without_the_series_has_no_cells():
    cells = longer_floor_cells(pd.DataFrame(base_rows()), model="L4-d128")
    assert cells.empty and longer_floor_test(cells)["cells"] == 0
    assert longer_floor_cells(pd.DataFrame(columns=PROBE_COLUMNS)).empty
