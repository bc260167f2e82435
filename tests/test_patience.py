"""Is the step floor patient enough: the life table of successes past the fit, counted with censoring, and the
near misses it reports."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from covlib.figures.patience import patience_metrics, patience_note
from covlib.search.patience import near_misses, steps_past_fit, success_life_table


def probe(past: int, ok: bool, floor: int = 1000, best: float = 0.5, fit: float | None = 100) -> dict:
    return {"task": "twohop", "N": 20, "n_train": 500, "success": ok, "steps": (fit or 0) + past,
            "first_fit_step": fit, "give_up_floor": floor, "best_type0": 0.995 if ok else best, "threshold": 0.99}


def table() -> pd.DataFrame:
    return pd.DataFrame([probe(100, True), probe(300, True), probe(600, True), probe(950, True),
                         probe(1000, False, best=0.985), probe(1000, False, best=0.97), probe(1000, False),
                         probe(200, False, floor=0),  # the authors' rule gave it up early: not this floor's
                         probe(400, False, fit=None)])  # never fitted: no clock past the fit


def test_the_life_table_counts_each_probe_at_risk_until_it_succeeds_or_gives_up():
    life = success_life_table(table(), 1000, window=250)
    assert life["start"].tolist() == [0, 250, 500, 750]
    assert life["at_risk"].tolist() == [7, 6, 5, 4]  # the floor's fitted probes, less those already ended
    assert life["successes"].tolist() == [1, 1, 1, 1]
    np.testing.assert_allclose(life["hazard"], [1 / 7, 1 / 6, 1 / 5, 1 / 4])


def test_a_failure_given_up_early_leaves_the_risk_set_instead_of_counting_as_a_later_failure():
    rows = pd.DataFrame([probe(200, False, floor=0), probe(1500, True, floor=0), probe(1500, False, floor=0)])
    life = success_life_table(rows, 0, window=500)  # the authors' rule: windows up to its longest probe
    assert life["at_risk"].tolist() == [3, 2, 2] and life["successes"].tolist() == [0, 0, 1]


def test_near_misses_are_the_failures_within_a_point_of_the_threshold():
    assert near_misses(table(), 1000)["best_type0"].tolist() == [0.985]
    assert len(near_misses(table(), 1000, margin=0.03)) == 2


def test_steps_past_fit_refuses_a_floor_the_table_does_not_hold():
    with pytest.raises(ValueError, match="give_up_floor=2000.*0, 1000"):
        steps_past_fit(table(), 2000)


def test_the_note_and_metrics_read_the_floors_end():
    note = patience_note(table(), 1000)
    assert "4 succeeded, 1 of them in its last quarter" in note and "25% in the floor's last 250 (1 of 4)" in note
    assert "1 of the 3 failures ended within one point" in note
    assert patience_metrics(table(), 1000) == {"floor_hazard_last_window": 0.25, "floor_near_misses": 1}
    no_floor = table()[table()["give_up_floor"] == 0]
    assert patience_note(no_floor, 1000) == ""
    assert patience_metrics(no_floor, 1000)["floor_near_misses"] == 0
