"""The book's verdict rule (covlib.analyses.equivalence): each outcome on synthetic intervals."""
import math

import numpy as np
import pytest

from covlib.analyses.equivalence import (
    EQUIVALENCE_MARGIN,
    EQUIVALENCE_RULE,
    Interval,
    direction_verdict,
    equivalence_verdict,
)

NAN = Interval(math.nan, math.nan)


def test_a_tight_interval_inside_the_margin_is_reproduced():
    assert equivalence_verdict(2.30, Interval(2.15, 2.45), Interval(2.10, 2.50), paper=2.26) == "reproduced"


def test_the_margin_bounds_the_90_interval_not_the_95():
    # the 95% interval strays past the margin, the 90% does not: still reproduced
    assert equivalence_verdict(2.26, Interval(2.02, 2.50), Interval(1.95, 2.60), paper=2.26) == "reproduced"
    # the 90% interval's upper end crosses paper + margin: not reproduced
    assert equivalence_verdict(2.26, Interval(2.02, 2.52), Interval(1.95, 2.60), paper=2.26) == "inconclusive"


def test_a_wide_interval_holding_the_paper_is_inconclusive():
    # the Mamba's kind of result: 2.17 (1.77-2.57) would also "hold" 1.8 or 2.5
    assert equivalence_verdict(2.17, Interval(1.84, 2.50), Interval(1.77, 2.57), paper=2.00) == "inconclusive"


def test_an_estimate_far_off_with_an_interval_that_excludes_the_paper_differs():
    assert equivalence_verdict(2.46, Interval(2.22, 2.70), Interval(2.17, 2.75), paper=2.09) == "differs"


def test_excluded_but_within_the_margin_is_inconclusive_not_differs():
    # the interval misses the paper's value, but the estimate is within the margin of it
    assert equivalence_verdict(2.40, Interval(2.32, 2.48), Interval(2.30, 2.50), paper=2.20) == "inconclusive"
    # a precise estimate a little off the paper's value is reproduced: equivalence, not a point null
    assert equivalence_verdict(2.35, Interval(2.30, 2.40), Interval(2.28, 2.42), paper=2.20) == "reproduced"


def test_no_interval_is_inconclusive():
    assert equivalence_verdict(2.26, NAN, NAN, paper=2.26) == "inconclusive"
    assert equivalence_verdict(math.nan, Interval(2, 2.5), Interval(1.9, 2.6), paper=2.26) == "inconclusive"


def test_a_90_interval_wider_than_twice_the_margin_is_never_reproduced():
    rng = np.random.default_rng(0)
    for _ in range(2000):
        paper = rng.uniform(1, 3)
        center = paper + rng.normal(0, 0.1)
        half90 = EQUIVALENCE_MARGIN + rng.uniform(1e-6, 1.0)
        ci90 = Interval(center - half90, center + half90)
        ci95 = Interval(center - 1.2 * half90, center + 1.2 * half90)
        assert equivalence_verdict(center, ci90, ci95, paper) != "reproduced"


def test_directional_claims():
    assert direction_verdict(Interval(0.05, 0.40), paper_sign=1) == "same_sign"
    assert direction_verdict(Interval(-0.40, -0.05), paper_sign=1) == "opposite_sign"
    assert direction_verdict(Interval(-0.40, -0.05), paper_sign=-1) == "same_sign"
    assert direction_verdict(Interval(-0.1, 0.3), paper_sign=1) == "inconclusive"
    assert direction_verdict(NAN, paper_sign=1) == "inconclusive"
    with pytest.raises(ValueError, match="sign"):
        direction_verdict(Interval(0.1, 0.2), paper_sign=0)


def test_the_rule_text_states_the_margin():
    assert f"{EQUIVALENCE_MARGIN:.2f}" in EQUIVALENCE_RULE and "90% interval" in EQUIVALENCE_RULE
