"""The audit's contrast (chapter 9) against independent implementations: the equivalence test is Welch's TOST,
computed here from scipy's one-sided Welch t-tests, and it agrees exactly with the 90% Welch interval."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from covlib.chapters.ch09_diversity_exposure_coverage.stats import contrast


def welch_tost(high: np.ndarray, low: np.ndarray, margin: float) -> float:
    """Two one-sided Welch t-tests with scipy: H0 diff <= -margin, and H0 diff >= +margin; the larger p."""
    lower = stats.ttest_ind(high + margin, low, equal_var=False, alternative="greater").pvalue
    upper = stats.ttest_ind(high - margin, low, equal_var=False, alternative="less").pvalue
    return float(max(lower, upper))


def test_the_equivalence_p_value_is_welchs_tost():
    rng = np.random.default_rng(0)
    for _ in range(50):
        high, low = rng.normal(0.5, rng.uniform(0.01, 0.2), 20), rng.normal(0.52, rng.uniform(0.01, 0.2), 14)
        result = contrast(high, low, margin=0.05, resamples=200)
        assert result["p_equivalence"] == pytest.approx(welch_tost(high, low, 0.05), rel=1e-9, abs=1e-12)


def test_equivalence_and_the_interval_agree_in_every_unequal_variance_case():
    rng = np.random.default_rng(1)
    disagree = 0
    for _ in range(400):
        n_high, n_low = rng.integers(3, 25, 2)
        high = rng.normal(0.5, rng.uniform(0.005, 0.15), n_high)
        low = rng.normal(0.5 + rng.normal(0, 0.02), rng.uniform(0.005, 0.15), n_low)
        result = contrast(high, low, margin=0.03, resamples=100)
        inside = -0.03 < result["ci90_low"] and result["ci90_high"] < 0.03
        disagree += (result["p_equivalence"] < 0.05) != inside
        assert result["bound"] == pytest.approx(max(abs(result["ci90_low"]), abs(result["ci90_high"])))
    assert disagree == 0


def test_the_interval_is_welchs():
    high, low = np.array([0.61, 0.58, 0.66, 0.7, 0.55]), np.array([0.5, 0.52, 0.49, 0.51])
    result = contrast(high, low, resamples=100)
    welch = stats.ttest_ind(high, low, equal_var=False).confidence_interval(0.90)
    assert (result["ci90_low"], result["ci90_high"]) == pytest.approx((welch.low, welch.high))
    assert result["diff"] == pytest.approx(high.mean() - low.mean())
