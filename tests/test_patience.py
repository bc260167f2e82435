"""Is the step floor patient enough: the life table of successes past the fit, counted with censoring, the
failures still climbing when they gave up, and where the brackets patience still decides sit along N."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from figure_checks import missing_tooltips, unexplained_layers

from covlib.figures import patience as shown  # what the reader sees
from covlib.search.patience import (
    lower_end_accuracy,
    near_misses,
    steps_past_fit,
    still_climbing,
    success_life_table,
)


def probe(past: int, ok: bool, floor: int = 1000, best: float = 0.5, fit: float | None = 100) -> dict:
    return {"task": "twohop", "N": 20, "model": "smoke", "seed": 0, "cot": False, "n_train": 500,
            "success": ok, "steps": (fit or 0) + past,
            "first_fit_step": fit, "give_up_floor": floor, "best_type0": 0.995 if ok else best, "threshold": 0.99}


def table() -> pd.DataFrame:
    return pd.DataFrame([probe(100, True), probe(300, True), probe(600, True), probe(950, True),
                         probe(1000, False, best=0.985), probe(1000, False, best=0.97), probe(1000, False),
                         probe(200, False, floor=0),  # the authors' rule gave it up early: not this floor's
                         probe(1500, True, floor=0), probe(1200, False, floor=0),  # its long runs: past the floor
                         probe(400, False, fit=None)]  # never fitted: no clock past the fit
                        ).assign(n_train=lambda rows: 100 * (rows.index + 1))  # one probe per training set


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


def curve(row: dict, accuracies: list[float]) -> pd.DataFrame:
    """A learning curve for a probe row, evaluated every 250 steps up to its end."""
    steps = np.linspace(0, row["steps"], len(accuracies)).round().astype(int)
    key = {k: row[k] for k in ("task", "N", "model", "seed", "cot", "n_train", "give_up_floor")}
    return pd.DataFrame([key | {"step": s, "acc/type_0": a} for s, a in zip(steps, accuracies)])


def test_a_failure_still_climbing_is_told_from_a_flat_one():
    rows = table()
    flat = curve(rows.iloc[4].to_dict(), [0.2, 0.9, 0.985, 0.985, 0.984])
    climbing = curve(rows.iloc[5].to_dict(), [0.2, 0.5, 0.8, 0.9, 0.97])  # evaluated at 0, 275, 550, 825, 1,100
    gains = still_climbing(rows, pd.concat([flat, climbing]), 1000, window=500)
    assert gains["best_type0"].tolist() == [0.985, 0.97]  # the third failure kept no curve: left out
    np.testing.assert_allclose(gains["gain"], [0.0, 0.97 - 0.8])  # the last 500 steps: 825 and 1,100


def test_the_note_and_metrics_read_the_floors_end():
    rows = table()
    curves = pd.concat([curve(rows.iloc[4].to_dict(), [0.2, 0.9, 0.985, 0.985, 0.984]),
                        curve(rows.iloc[5].to_dict(), [0.2, 0.5, 0.8, 0.9, 0.97])])
    note = shown.patience_note(rows, curves, 1000)
    assert "4 succeeded, 1 of them in its last quarter" in note and "25% in the floor's last 250 (1 of 4)" in note
    assert "1 of the 3 failures ended within one point of the threshold, 0 of those still climbing" in note
    assert "Of the 2 failures whose learning curve the table kept, 1 was still climbing" in note
    assert "below about 5,120 examples (100 epochs at batch 512 are 1,000 steps there)" in note
    assert ("Under the authors' rule, 2 probes (all of at least 900 examples, where 100 epochs are longer) trained "
            "more than 1,000 steps past the fit; 1 of them reached 99% only after that, at 1,500 steps past "
            "it.") in note
    assert shown.patience_metrics(rows, curves, 1000) == {"floor_hazard_last_window": 0.25, "floor_near_misses": 1,
                                                    "floor_failures_climbing": 1}
    no_floor = rows[rows["give_up_floor"] == 0]
    assert shown.patience_note(no_floor, curves, 1000) == ""
    assert shown.patience_metrics(no_floor, curves, 1000)["floor_near_misses"] == 0


def cell_probe(N: int, n: int, ok: bool, best: float, floor: int = 1000, seed: int = 0) -> dict:
    return probe(1000 if not ok else 300, ok, floor=floor, best=best) | {
        "N": N, "n_train": n, "model": "smoke", "seed": seed, "cot": False,
        "stopped": "early_stop" if ok else "gave_up"}


def summary_of(lows: dict[int, int]) -> pd.DataFrame:
    return pd.DataFrame([{"task": "twohop", "cot": False, "N": N, "model": "smoke", "seed": 0, "low": low,
                          "high": 2 * low, "status": "bracketed"} for N, low in lows.items()]
                        + [{"task": "twohop", "cot": False, "N": 99, "model": "smoke", "seed": 0, "low": None,
                            "high": None, "status": "searching"}])


def test_a_brackets_lower_end_accuracy_is_its_failing_probe_under_the_rule():
    probes = pd.DataFrame([cell_probe(10, 100, False, 0.985), cell_probe(10, 200, True, 0.995),
                           cell_probe(10, 100, False, 0.90, floor=0),  # the authors' row, replaced by the floor's
                           cell_probe(20, 400, False, 0.95), cell_probe(20, 800, True, 0.995)])
    curves = curve(probes.iloc[0].to_dict(), [0.2, 0.5, 0.8, 0.9, 0.985])
    ends = lower_end_accuracy(summary_of({10: 100, 20: 400}), probes, curves, 1000)
    assert ends["N"].tolist() == [10, 20] and ends["low_best"].tolist() == [0.985, 0.95]  # the searching cell left out
    assert ends["low_gain"].iloc[0] > 0.01 and np.isnan(ends["low_gain"].iloc[1])  # N = 20 kept no curve


def climbing_exponents(rising_at: list[int]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Cells at N = 10..50 whose lower ends were still climbing at ``rising_at`` and flat elsewhere."""
    Ns = [10, 20, 30, 40, 50]
    probes = pd.DataFrame([cell_probe(N, 100 * N, False, 0.9) for N in Ns])
    curves = pd.concat([curve(row, [0.2, 0.5, 0.7, 0.8, 0.9] if row["N"] in rising_at else [0.2, 0.9, 0.9, 0.9, 0.9])
                        for row in probes.to_dict("records")])
    exponents = pd.DataFrame([{"exponent": "twohop", "give_up_floor": 1000, "c": 2.0,
                               "summary": summary_of({N: 100 * N for N in Ns})},
                              {"exponent": "twohop", "give_up_floor": 0, "c": 1.8, "summary": summary_of({})}])
    return exponents, probes, curves


def test_the_lower_end_note_says_where_patience_decides_and_leans_only_on_enough_of_them():
    def note(rising_at: list[int], keep_curves: int | None = None, **options) -> str:
        exponents, probes, curves = climbing_exponents(rising_at)
        ends = shown.lower_ends(exponents, probes, curves.iloc[:keep_curves], 1000, str.upper)
        return shown.lower_end_note(ends, **options)

    said = note([10, 20, 30])
    assert "TWOHOP 3 of 5 (N = 10, 20, 30; its cells span N = 10-50)" in said
    assert "2 of them lie below their series' middle N and 0 above it, 1 at it: too few" in said
    assert "likely steepen" in note([10, 20, 30], min_to_lean=2)
    assert "spread over small and large N" in note([10, 50], min_to_lean=2)
    assert "1 of 5 (N = 10;" in note([10, 50], keep_curves=5) and "4 lower ends kept no learning curve" in note(
        [10, 50], keep_curves=5)
    exponents, probes, curves = climbing_exponents([10])
    unfitted = shown.lower_ends(exponents[exponents["give_up_floor"] == 0], probes, curves, 1000, str.upper)
    assert unfitted.empty and shown.lower_end_note(unfitted) == ""


def test_the_lower_ends_chart_marks_each_lower_end_with_its_rise_and_tooltip():
    exponents, probes, curves = climbing_exponents([10, 50])
    ends = shown.lower_ends(exponents, probes, curves, 1000, str.upper)
    assert ends["side"].tolist() == ["below", "below", "middle", "above", "above"]
    spec = shown.lower_ends_chart(ends).to_dict()
    points = spec["layer"][1]
    fields = set(json.dumps(points["encoding"]).split('"'))
    assert points["mark"]["type"] == "point" and {"series", "N", "rise"} <= fields
    assert not missing_tooltips(spec) and not unexplained_layers(spec)


def test_the_summary_bullet_counts_only_the_lower_ends_that_kept_a_curve():
    exponents, probes, curves = climbing_exponents([10, 50])
    said = shown.patience_bullet(shown.lower_ends(exponents, probes, curves.iloc[:10], 1000, str.upper))
    assert said.startswith("Of the 2 brackets whose lower end kept a learning curve under the floor, 1 had")
    assert shown.patience_bullet(shown.lower_ends(exponents, probes, curves.iloc[:0], 1000, str.upper)) == ""
