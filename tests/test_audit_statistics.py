"""The audit's contrast (chapter 9) against independent implementations: the equivalence test is Welch's TOST,
computed here from scipy's one-sided Welch t-tests, and it agrees exactly with the 90% Welch interval (computed by
hand); the permutation p against every split of the runs; the detectable difference against statsmodels' power."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.power import NormalIndPower

from covlib.chapters.ch09_diversity_exposure_coverage.stats import bound_need, contrast, runs_to_bound


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
        low_end, high_end = welch_interval(high, low, 0.90)
        assert (result["ci90_low"], result["ci90_high"]) == pytest.approx((low_end, high_end), rel=1e-9)
        assert result["bound"] == pytest.approx(max(abs(low_end), abs(high_end)))
    assert disagree == 0


def welch_interval(high: np.ndarray, low: np.ndarray, level: float) -> tuple[float, float]:
    """The Welch interval of the mean difference by hand: the unequal-variance standard error and the
    Welch-Satterthwaite degrees of freedom, with scipy's t quantile only."""
    a, b = high.var(ddof=1) / len(high), low.var(ddof=1) / len(low)
    se = np.sqrt(a + b)
    df = (a + b) ** 2 / (a**2 / (len(high) - 1) + b**2 / (len(low) - 1))
    half = stats.t.ppf(0.5 + level / 2, df) * se
    diff = high.mean() - low.mean()
    return diff - half, diff + half


def exact_permutation_p(high: np.ndarray, low: np.ndarray) -> float:
    """The two-sided p of the mean difference over every split of the pooled runs into arms of the same sizes:
    twice the smaller one-sided share of splits at least as extreme as the observed one, at most 1 (scipy's
    convention for a two-sided permutation test)."""
    pooled, observed = np.concatenate([high, low]), high.mean() - low.mean()
    diffs = []
    for chosen in itertools.combinations(range(len(pooled)), len(high)):
        mask = np.zeros(len(pooled), dtype=bool)
        mask[list(chosen)] = True
        diffs.append(pooled[mask].mean() - pooled[~mask].mean())
    diffs, tie = np.array(diffs), 1e-12
    return float(min(1.0, 2 * min(np.mean(diffs <= observed + tie), np.mean(diffs >= observed - tie))))


def test_the_interval_is_welchs():
    high, low = np.array([0.61, 0.58, 0.66, 0.7, 0.55]), np.array([0.5, 0.52, 0.49, 0.51])
    result = contrast(high, low, resamples=100)
    assert (result["ci90_low"], result["ci90_high"]) == pytest.approx(welch_interval(high, low, 0.90), rel=1e-9)
    assert result["diff"] == pytest.approx(high.mean() - low.mean())


def test_the_permutation_p_is_exact_over_every_split():
    # 5 + 4 runs have 126 splits: below the default number of resamples, so the test must enumerate them all
    high, low = np.array([0.61, 0.58, 0.66, 0.7, 0.55]), np.array([0.5, 0.52, 0.49, 0.51])
    assert contrast(high, low)["p"] == pytest.approx(exact_permutation_p(high, low), rel=1e-9)
    # every high run lies above every low run: the observed split is the most extreme of the 126, one-sided 1/126
    assert contrast(high, low)["p"] == pytest.approx(2 / 126)
    overlapping = np.array([0.55, 0.5, 0.62, 0.47]), np.array([0.52, 0.58, 0.45, 0.5, 0.6])
    p = contrast(*overlapping)["p"]
    assert p == pytest.approx(exact_permutation_p(*overlapping), rel=1e-9) and p > 0.3


def test_the_detectable_difference_is_the_normal_power_calculation():
    high, low = np.array([0.61, 0.58, 0.66, 0.7, 0.55]), np.array([0.5, 0.52, 0.49, 0.51])
    pooled_sd = np.sqrt((4 * high.var(ddof=1) + 3 * low.var(ddof=1)) / 7)
    # statsmodels' power of the two-sided z-test: the standardised effect found with 80% power at 5%
    effect = NormalIndPower().solve_power(effect_size=None, nobs1=5, alpha=0.05, power=0.8, ratio=4 / 5)
    assert contrast(high, low, resamples=100)["detectable"] == pytest.approx(effect * pooled_sd, rel=1e-4)


def test_runs_to_bound_inverts_the_interval_half_width():
    c = {"diff": 0.01, "pooled_sd": 0.1, "bound": 0.13, "n_high": 6}
    n = runs_to_bound(c, 0.05)
    # at n runs per arm the normal 90% interval, diff +- z * sd * sqrt(2 / n), fits inside +-5 pp; at n - 1 it does not
    half = lambda k: stats.norm.ppf(0.95) * 0.1 * np.sqrt(2 / k)  # noqa: E731
    assert 0.01 + half(n) <= 0.05 < 0.01 + half(n - 1)
    assert "about 34 runs per arm" in bound_need(c) and "(6 now)" in bound_need(c)
    assert bound_need({**c, "bound": 0.04}) == ""
    assert np.isinf(runs_to_bound({**c, "diff": -0.06})) and "No number of runs" in bound_need({**c, "diff": -0.06})
