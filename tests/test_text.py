"""The phrasing helpers of generated prose (covlib.figures.text), one test per degenerate case."""
from __future__ import annotations

import math

from covlib.figures.text import fmt, p_value, rounds_to_zero, series, share_of, signed_gap, up_to


def test_fmt_writes_missing_values_as_such():
    assert fmt(0.123, ".1%") == "12.3%"
    assert fmt(None) == "n/a" and fmt(math.nan, missing="not in the cache") == "not in the cache"


def test_rounds_to_zero_reads_the_printed_digits():
    assert rounds_to_zero(0.004, ".0%") and rounds_to_zero(-0.004, ".0%") and rounds_to_zero(0.0, "+.1f")
    assert not rounds_to_zero(0.006, ".0%") and not rounds_to_zero(-0.06, "+.1f")
    assert not rounds_to_zero(3e-45, ".1g")  # exponent digits are not the value's digits


def test_a_p_value_below_display_precision_is_a_bound_never_zero():
    assert p_value(0.0) == "p < 1e-300" and p_value(1e-320) == "p < 1e-300"
    assert p_value(3.2e-45) == "p = 3.2e-45"
    assert p_value(0.0004, decimals=3) == "p < 0.001"
    assert p_value(0.95, decimals=3) == "p = 0.950" and p_value(0.0423) == "p = 0.042"
    assert "= 0" not in p_value(0.0) and p_value(math.nan) == "p not computed"


def test_a_negative_share_is_none_of_the_whole_and_says_which_way():
    text = share_of(-0.09, "CoT's data saving")
    assert text.startswith("none of CoT's data saving") and "9%" in text and "-9%" not in text
    assert share_of(-0.001, "the way") == "none of the way"  # rounds to zero: no move to report
    assert share_of(0.0, "the way") == "none of the way"
    assert share_of(0.4, "CoT's data saving") == "40% of CoT's data saving"
    assert share_of(1.3, "the saving") == "all of the saving and more (130%)"
    assert share_of(math.nan, "the saving") == "an unknown share of the saving"


def test_up_to_zero_is_no_predictions():
    assert up_to(0.0, "predictions") == "no predictions" and up_to(0.004, "predictions") == "no predictions"
    assert up_to(0.42, "predictions") == "up to 42% of predictions"


def test_a_gap_that_prints_as_zero_is_no_gap():
    assert signed_gap(0.0) == "no gap (under 0.05 points)" and signed_gap(-0.03) == "no gap (under 0.05 points)"
    assert "+0.0" not in signed_gap(0.04)
    assert signed_gap(1.25) == "a gap of +1.2 points" and signed_gap(-2.0) == "a gap of -2.0 points"


def test_series_joins_a_list_for_a_sentence():
    assert series([]) == "" and series(["a"]) == "a" and series(["a", "b"]) == "a and b"
    assert series(["a", "b", "c"]) == "a, b and c"


def test_a_count_agrees_with_its_noun():
    from covlib.figures.text import count_of

    assert count_of(1, "size") == "1 size" and count_of(2, "size") == "2 sizes" and count_of(0, "size") == "0 sizes"
    assert count_of(1, "lower end is", "lower ends are") == "1 lower end is"
    assert count_of(1200, "probe") == "1,200 probes"


def test_run_time_is_stated_in_run_hours_and_days_of_one_core():
    from covlib.figures.text import run_time

    assert run_time(47.1266) == "47.1 run-hours, about 2.0 days of one CPU core"
    assert run_time(6.0) == "6.0 run-hours, about 0.2 days of one CPU core"
