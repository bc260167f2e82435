"""The exponent fit: its interval follows the design (resampled cells, a slope's t-interval, none below 4 N),
checked against statsmodels."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from covlib.analyses.fits import exponent_fit, power_fit

N_VALUES = np.array([20.0, 25, 30, 40, 50])


def law(N: np.ndarray, c: float = 2.2, a: float = 3.0, noise: float = 0.0, rng=None) -> np.ndarray:
    n = a * N**c
    return n * np.exp(rng.normal(0, noise, len(N))) if noise else n


def test_one_seed_gives_the_slope_t_interval_of_ordinary_least_squares():
    rng = np.random.default_rng(1)
    est = pd.DataFrame({"N": N_VALUES, "n_req": law(N_VALUES, noise=0.1, rng=rng), "seed": 0})
    fit = exponent_fit(est)
    ols = sm.OLS(np.log(est["n_req"]), sm.add_constant(np.log(est["N"]))).fit()
    low, high = ols.conf_int(0.05).iloc[1]
    assert fit["interval"] == "slope t-interval"
    assert fit["c"] == pytest.approx(ols.params.iloc[1])
    assert (fit["c_low"], fit["c_high"]) == pytest.approx((low, high))
    assert (fit["n_values"], fit["seeds"], fit["N_min"], fit["N_max"]) == (5, 1, 20.0, 50.0)


def test_the_t_interval_covers_the_true_exponent_about_as_often_as_it_claims():
    rng = np.random.default_rng(7)
    hits = 0
    for _ in range(400):
        est = pd.DataFrame({"N": N_VALUES, "n_req": law(N_VALUES, c=2.3, noise=0.15, rng=rng)})
        fit = exponent_fit(est)
        hits += fit["c_low"] <= 2.3 <= fit["c_high"]
    assert 0.91 <= hits / 400 <= 0.99


def test_fewer_than_four_values_of_N_give_no_interval():
    est = pd.DataFrame({"N": [10.0, 12, 14], "n_req": [700.0, 1000, 1500], "seed": 0})
    fit = exponent_fit(est)
    assert np.isnan(fit["c_low"]) and np.isnan(fit["c_high"])
    assert fit["interval"].startswith("none") and fit["n_values"] == 3
    assert fit["c"] == pytest.approx(power_fit(est["N"], est["n_req"])["c"])
    assert exponent_fit(est.iloc[:1]) is None  # one N: no fit at all


def test_two_seeds_resample_whole_cells_and_noisier_seeds_widen_the_interval():
    rng = np.random.default_rng(3)
    quiet = pd.concat([pd.DataFrame({"N": N_VALUES, "n_req": law(N_VALUES, noise=0.02, rng=rng), "seed": s})
                       for s in (0, 1)])
    loud = pd.concat([pd.DataFrame({"N": N_VALUES, "n_req": law(N_VALUES, noise=0.3, rng=rng), "seed": s})
                      for s in (0, 1)])
    q, lo = exponent_fit(quiet), exponent_fit(loud)
    assert q["interval"] == lo["interval"] == "resampling N-cells and the seeds within them" and q["seeds"] == 2 and q["points"] == 10
    slope = np.polyfit(np.log(loud["N"]), np.log(loud["n_req"]), 1)[0]
    assert lo["c"] == pytest.approx(slope)  # the point estimate uses every seed
    assert q["c_low"] <= q["c"] <= q["c_high"] and lo["c_low"] <= lo["c"] <= lo["c_high"]
    assert (lo["c_high"] - lo["c_low"]) > 1.5 * (q["c_high"] - q["c_low"])


def test_a_design_with_some_single_seed_cells_fits_cell_means():
    est = pd.DataFrame({"N": [20.0, 20, 25, 30, 40], "n_req": [2000.0, 3000, 4000, 6000, 11000],
                        "seed": [0, 1, 0, 0, 0]})
    fit = exponent_fit(est)
    means = np.exp(np.log(est["n_req"]).groupby(est["N"]).mean())
    assert fit["interval"] == "slope t-interval over N-cell means"
    assert fit["c"] == pytest.approx(power_fit(means.index, means.to_numpy())["c"])



def test_a_design_with_two_seeds_at_most_n_still_resamples_cells_and_seeds():
    """One N whose second seed is still searching does not turn the interval into one over cell means, which
    would drop the seed-to-seed spread that the other cells measure."""
    rng = np.random.default_rng(5)
    both = pd.concat([pd.DataFrame({"N": N_VALUES, "n_req": law(N_VALUES, noise=0.15, rng=rng), "seed": s})
                      for s in (0, 1)])
    one_short = both[~((both["N"] == N_VALUES.max()) & (both["seed"] == 1))]
    fit = exponent_fit(one_short)
    assert fit["interval"] == "resampling N-cells and the seeds within them" and fit["seeds"] == 2
    assert fit["c"] == pytest.approx(np.polyfit(np.log(one_short["N"]), np.log(one_short["n_req"]), 1)[0])


def test_the_seed_spread_inside_cells_widens_the_interval_even_when_cell_means_lie_on_a_line():
    """Two seeds per N whose means lie exactly on N^2.1 but differ by 1.3x between seeds: the interval must
    still be wide (resampling whole cells alone would give a point)."""
    means = 6.0 * N_VALUES**2.1
    est = pd.concat([pd.DataFrame({"N": N_VALUES, "n_req": means * f, "seed": s}) for s, f in ((0, 0.87), (1, 1.15))])
    fit = exponent_fit(est)
    assert fit["c"] == pytest.approx(2.1, abs=0.05) and fit["c_high"] - fit["c_low"] > 0.2
