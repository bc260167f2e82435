"""n_req from every probe (covlib.analyses.success_curve), both give-up rules read off the same runs
(covlib.search.same_runs), and the reproduction's exponents, verdicts and claims (covlib.search.reproduction)."""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from covlib.analyses.fits import exponent_difference, exponent_intervals
from covlib.analyses.success_curve import (
    SLOPE_BOUNDS,
    cell_estimate,
    cell_estimates,
    flip_probability,
    replicate_slope,
)
from covlib.search.estimates import cell_table, shared_slope
from covlib.search.same_runs import authors_outcome, cell_brackets, rule_table, same_run_outcomes


def _searched_and_replicated(n_cells: int = 40, slope: float = 20.0, seed: int = 0, reps: int = 4):
    """Cells as the book runs them: a bracket of width 0.12 in log n around each cell's n_req (placed uniformly in
    it), end probes whose outcomes the search saw ordered, and ``reps`` replicates at each end drawn from the
    logistic model. Returns the replicates' bracket widths and flips, the probes as one table, and the true
    log n_req."""
    rng = np.random.default_rng(seed)
    gaps, changed, rows, truth = [], [], [], {}
    for c in range(n_cells):
        low = rng.uniform(6, 10)
        theta = low + rng.uniform(0, 0.12)
        truth[f"c{c}"] = theta
        xs, ys = np.array([low - 0.3, low, low + 0.12, low + 0.4]), np.array([False, False, True, True])
        xr = np.repeat(xs[1:3], reps)
        yr = rng.random(len(xr)) < expit(slope * (xr - theta))
        gaps += [0.12] * len(xr)
        changed += list(yr != np.repeat(ys[1:3], reps))
        rows += [{"cell": f"c{c}", "log_n": a, "success": bool(b)} for a, b in zip(np.r_[xs, xr], np.r_[ys, yr])]
    return np.array(gaps), np.array(changed), pd.DataFrame(rows), truth


def test_the_replicates_measure_the_shared_slope_and_each_cells_interval_covers_its_n_req():
    fits = [replicate_slope(*_searched_and_replicated(seed=seed)[:2], cells=40) for seed in range(20)]
    assert all(f.identified for f in fits)
    assert sum(f.low < 20.0 < f.high for f in fits) >= 15  # a 90% interval: about 18 of 20 expected
    assert np.median([f.slope for f in fits]) == pytest.approx(20.0, rel=0.3)
    gaps, changed, probes, truth = _searched_and_replicated()
    fit = replicate_slope(gaps, changed, cells=40)
    est = cell_estimates(probes, fit.slope, fit.low).set_index("cell")
    inside = [est.loc[c, "low_95"] <= np.exp(t) <= est.loc[c, "high_95"] for c, t in truth.items() if c in est.index]
    assert np.mean(inside) >= 0.85
    assert (est["low_90"] >= est["low_95"]).all() and (est["high_90"] <= est["high_95"]).all()
    assert ((est["low_95"] <= est["n_req"]) & (est["n_req"] <= est["high_95"])).all()


def test_the_flip_probability_falls_from_a_coin_flip_as_the_slope_steepens():
    p = flip_probability(np.array([1e-6, 1.0, 10.0, 100.0, 1e4]), 0.12)
    assert p[0] == pytest.approx(0.5, abs=1e-3) and (np.diff(p) < 0).all() and p[-1] < 1e-2


def test_a_replicate_that_flips_at_the_size_it_repeats_gives_a_finite_slope():
    # maximising over the cell's n_req would put it on the tie and send the slope to infinity
    fit = replicate_slope(np.full(8, 0.12), np.array([True] + [False] * 7), cells=2)
    assert fit.identified and fit.slope < SLOPE_BOUNDS[1] / 10 and fit.low < fit.slope < fit.high


def test_without_a_flip_the_replicates_bound_the_slope_only_from_below():
    fit = replicate_slope(np.full(8, 0.12), np.zeros(8, bool), cells=4)
    assert not fit.identified and fit.bounded and fit.high == np.inf
    more = replicate_slope(np.full(16, 0.12), np.zeros(16, bool), cells=8)
    assert more.low > fit.low  # twice the agreeing replicates rule out more noise


def test_a_separated_cell_with_a_steep_slope_is_placed_between_its_outcomes():
    # a GLM with a large offset diverged on this cell (theta -0.32, far below every probe)
    x, y = np.log([3077, 1119, 718, 373, 241, 98]), np.array([1, 1, 1, 1, 0, 0], bool)
    est = cell_estimate(x, y, 16.75)
    assert np.log(241) < est["theta"] < np.log(373)
    assert est["low_95"] < np.log(241) + 0.05 and est["high_95"] > np.log(373) - 0.05


def test_a_cell_estimate_needs_both_outcomes_and_its_interval_narrows_with_a_steeper_slope():
    x, y = np.log([100, 120, 140, 160]), np.array([False, False, True, True])
    with pytest.raises(ValueError, match="both"):
        cell_estimate(x, np.ones(4, bool), 5.0)
    wide, narrow = cell_estimate(x, y, 5.0), cell_estimate(x, y, 50.0)
    assert narrow["high_95"] - narrow["low_95"] < wide["high_95"] - wide["low_95"]
    assert np.log(120) - 0.05 < narrow["theta"] < np.log(140) + 0.05


def _curve(steps, train, type0):
    return pd.DataFrame({"step": steps, "acc/train_inferred": train, "acc/type_0": type0})


def test_the_authors_outcome_is_read_off_a_floor_runs_curve():
    steps = list(range(0, 3001, 50))
    fitted = [1.0 if s >= 200 else 0.5 for s in steps]
    late = [0.995 if s >= 1500 else 0.5 for s in steps]
    # 100 epochs of 2,000 examples at batch 512 are 390.6 steps: the authors' rule gives up at step 600
    assert authors_outcome(_curve(steps, fitted, late), 2000) is False
    # 100 epochs of 10,000 examples are 1,953 steps: success at 1,500 comes first
    assert authors_outcome(_curve(steps, fitted, late), 10_000) is True
    # a curve that ends before either: undecided by the curve
    assert authors_outcome(_curve(steps[:5], fitted[:5], late[:5]), 2000) is None


def _row(n, ok, floor, steps=3000, fit=100, replicate="search", rseed=0, stopped=None):
    return {"task": "twohop", "N": 20, "model": "smoke", "seed": 0, "cot": False, "n_train": n, "eligible": 5000,
            "success": ok, "stopped": stopped or ("early_stop" if ok else "gave_up"), "steps": steps,
            "first_fit_step": fit, "minutes": 1.0, "threshold": 0.99, "give_up_epochs": 100.0,
            "give_up_floor": floor, "replicate": replicate, "replicate_seed": rseed}


def test_both_rules_come_from_one_run_per_size():
    steps = list(range(0, 2501, 50))
    probes = pd.DataFrame([
        _row(1000, False, 0, steps=350, fit=100),   # authors' give-up short of the floor, rerun below
        _row(1000, True, 2000, steps=1500, fit=100),  # its floor rerun: succeeded late
        _row(2000, True, 0, steps=400),               # an authors' success: both rules
        _row(500, False, 0, steps=300, fit=100),      # short of the floor, never rerun: floor unknown
    ])
    fit = [1.0 if s >= 100 else 0.3 for s in steps]
    curves = pd.DataFrame(_curve(steps, fit, [0.995 if s >= 1500 else 0.4 for s in steps])).assign(
        task="twohop", N=20, model="smoke", seed=0, cot=False, n_train=1000, give_up_floor=2000, replicate="search",
        replicate_seed=0)
    out = same_run_outcomes(probes, curves, 2000).set_index("n_train")
    assert out.loc[1000, "source"] == "floor run"
    assert out.loc[1000, "success_floor"] and not out.loc[1000, "success_authors"]  # the same run, two rules
    assert out.loc[2000, "success_authors"] and out.loc[2000, "success_floor"]
    assert not out.loc[500, "success_authors"]
    assert np.isnan(out.loc[500, "success_floor"])
    floor = cell_brackets(rule_table(out.reset_index(), "floor"))
    authors = cell_brackets(rule_table(out.reset_index(), "authors"))
    assert floor["high"].iloc[0] == 1000 and np.isnan(floor["low"].iloc[0])  # no failure below under the floor
    assert authors["low"].iloc[0] == 1000 and authors["high"].iloc[0] == 2000


def test_without_overlap_the_logistic_estimate_is_the_bracket_with_the_bracket_as_interval():
    table = pd.DataFrame([_row(n, n >= 450, 2000) for n in (300, 400, 450, 700)]).assign(success=lambda d: d["success"])
    cells = cell_table(table, shared_slope(table))
    r = cells.iloc[0]
    assert not r["slope_identified"]
    assert r["n_req_logistic"] == pytest.approx(np.sqrt(400 * 450))
    assert (r["low_95"], r["high_95"]) == (400, 450)


def test_exponent_intervals_carry_each_cells_uncertainty():
    Ns = [20, 25, 30, 35, 40]
    rows = [{"N": N, "seed": s, "n_req": 3.0 * N**2.2 * (1.05 if s else 0.95)} for N in Ns for s in (0, 1)]
    sure = exponent_intervals(pd.DataFrame(rows), reps=2000)
    unsure = exponent_intervals(pd.DataFrame(rows).assign(log_sd=0.3), reps=2000)
    assert sure["c"] == pytest.approx(2.2, abs=0.01)
    assert sure["ci95_low"] <= sure["ci90_low"] <= 2.2 <= sure["ci90_high"] <= sure["ci95_high"]
    assert unsure["ci95_high"] - unsure["ci95_low"] > 2 * (sure["ci95_high"] - sure["ci95_low"])
    assert np.isnan(exponent_intervals(pd.DataFrame(rows[:6]), reps=100)["ci95_low"])  # 3 values of N: none


def test_a_paired_difference_cancels_what_both_series_share():
    rng = np.random.default_rng(1)
    Ns = [20, 25, 30, 35, 40, 50]
    shared = {(N, s): rng.normal(0, 0.15) for N in Ns for s in (0, 1)}  # a common wobble per cell
    a = pd.DataFrame([{"N": N, "seed": s, "n_req": np.exp(2.4 * np.log(N) + shared[N, s])} for N in Ns for s in (0, 1)])
    b = pd.DataFrame([{"N": N, "seed": s, "n_req": np.exp(2.1 * np.log(N) + shared[N, s] + 1)} for N in Ns for s in (0, 1)])
    paired = exponent_difference(a, b, reps=2000)
    unpaired = exponent_difference(a, b, reps=2000, paired=False)
    assert paired["difference"] == pytest.approx(0.3, abs=1e-9)
    assert paired["ci95_low"] == pytest.approx(0.3, abs=1e-6) and paired["ci95_high"] == pytest.approx(0.3, abs=1e-6)
    assert unpaired["ci95_high"] - unpaired["ci95_low"] > 0.1


def _reproduction(replicates: pd.DataFrame, claims: pd.DataFrame):
    from covlib.search.replicates import flip_shares
    from covlib.search.reproduction import Reproduction

    verdicts = pd.DataFrame({"series": ["twohop"], "verdict": ["inconclusive"], "c": [2.15], "paper": [2.26],
                             "ci90_low": [2.0], "ci90_high": [2.4], "ci95_low": [1.97], "ci95_high": [2.45],
                             "n_values": [6], "seeds": [2]})
    return Reproduction({}, pd.DataFrame(), verdicts, claims, replicates, flip_shares(replicates))


def _claims(**diff):
    from covlib.search.reproduction import CLAIMS

    rows = []
    for c in CLAIMS:
        d = diff.get(c.name, 0.1)
        rows.append({"claim": c.name, "text": c.text, "difference": d, "paired": True, "cells": 8, "n_values": 4,
                     "ci90_low": d - 0.3, "ci90_high": d + 0.3, "ci95_low": d - 0.4, "ci95_high": d + 0.4,
                     "verdict": "inconclusive"})
    return pd.DataFrame(rows)


def test_the_pattern_says_when_a_claims_estimate_runs_against_the_paper():
    from covlib.figures.reproduction import pattern_note

    empty = pd.DataFrame(columns=["replicate", "side", "changed", "N"])
    text = pattern_note(_reproduction(empty, _claims(cot_flattens_twohop=-0.29)))
    assert "runs the other way (two-hop below two-hop with CoT)" in text
    assert "1 inconclusive" in text and "0 reproduced" in text


def test_the_claims_bullet_names_only_the_claims_asked_for():
    from covlib.figures.reproduction import claims_bullet

    empty = pd.DataFrame(columns=["replicate", "side", "changed", "N"])
    rep = _reproduction(empty, _claims(cot_flattens_twohop=-0.29))
    both = claims_bullet(rep, only=("cot_flattens_twohop", "cot_flattens_threehop"))
    assert both.startswith("The paper's comparative claims, judged by the same rule (section 4.11). That chain of "
                           "thought flattens two-hop's law: inconclusive")
    assert both.count("That ") == 2 and "runs the other way" in both and "Mamba" not in both
    assert claims_bullet(rep).count("That ") == 6


def test_the_noise_note_handles_no_replicates_and_counts_by_source():
    from covlib.figures.reproduction import noise_note

    none = pd.DataFrame(columns=["replicate", "side", "changed", "N"])
    assert "No replicate has run yet" in noise_note(_reproduction(none, _claims()))
    some = pd.DataFrame({"replicate": ["init", "draw", "init", "draw"], "side": ["below", "below", "above", "above"],
                         "changed": [True, False, False, False], "N": [12, 12, 40, 40]})
    text = noise_note(_reproduction(some, _claims()))
    assert "1 changed" in text and "1 of 2 with another initialisation" in text and "too few replicates" in text


@pytest.mark.parametrize("flips", [None, 0, 1])
def test_the_slope_note_says_what_measures_the_slope_before_and_after_a_flip(flips):
    from covlib.figures.reproduction import slope_note

    rep = _reproduction(pd.DataFrame(columns=["replicate", "side", "changed", "N"]), _claims())
    fit = (replicate_slope(np.array([]), np.array([], bool)) if flips is None
           else replicate_slope(np.full(12, 0.12), np.arange(12) < flips, cells=3))
    rep.by_rule = {"floor": pd.DataFrame()}
    rep.by_rule["floor"].attrs["slope"] = fit
    text = slope_note(rep)
    if flips is None:
        assert text.startswith("No replicate has run yet")
    else:
        assert "12 reruns of bracket ends in 3 cells" in text and f"{flips} did" in text
        assert ("no finite estimate" in text) == (flips == 0)
        assert f"{fit.low:.1f}" in text  # the shallow end the cells' intervals are computed at


def _outcomes(changed_large: int, n_large: int, changed_small: int, n_small: int) -> pd.DataFrame:
    large = [True] * changed_large + [False] * (n_large - changed_large)
    small = [True] * changed_small + [False] * (n_small - changed_small)
    return pd.DataFrame({"replicate": ["init", "draw"] * ((n_large + n_small) // 2) + ["init"] * ((n_large + n_small) % 2),
                         "side": "below", "changed": large + small, "N": [40] * n_large + [12] * n_small})


@pytest.mark.parametrize("counts,expected", [
    ((1, 4, 2, 28), "too few replicates at that N (fewer than 8)"),
    ((6, 8, 3, 56), "the noise is larger at the largest N (Fisher's exact test, p = "),
    ((2, 8, 6, 56), "no difference these counts can show (Fisher's exact test, p = "),
])
def test_the_noise_note_tests_whether_the_noise_grows_with_n(counts, expected):
    from scipy.stats import fisher_exact

    from covlib.figures.reproduction import noise_note
    from covlib.search.replicates import noise_by_size

    outcomes = _outcomes(*counts)
    text = noise_note(_reproduction(outcomes, _claims()))
    assert expected in text and f"{counts[0]} of {counts[1]} changed, at the smaller N {counts[2]} of {counts[3]}" in text
    a, n_a, b, n_b = counts
    assert noise_by_size(outcomes).p == pytest.approx(fisher_exact([[a, n_a - a], [b, n_b - b]]).pvalue)
    if counts[1] >= 8:  # the verdict follows the test, not the bare shares: 2 of 8 (25%) beats 6 of 56 (11%)
        assert (noise_by_size(outcomes).p < 0.05) == ("larger" in text)
        # and says what the counts leave open: the difference of the shares with Newcombe's interval (statsmodels)
        from statsmodels.stats.proportion import confint_proportions_2indep

        low, high = confint_proportions_2indep(a, n_a, b, n_b, method="newcomb", compare="diff")
        by_size = noise_by_size(outcomes)
        assert (by_size.ci_low, by_size.ci_high) == pytest.approx((low, high))
        assert by_size.difference == pytest.approx(a / n_a - b / n_b)
        assert f"differs by {(a / n_a - b / n_b) * 100:+.0f} points, 95% interval {low * 100:+.0f} to {high * 100:+.0f}" in text
        assert ("as well as a rise of" in text) == (low <= 0 <= high)


def test_the_noise_by_n_has_no_interval_while_a_group_is_empty():
    from covlib.search.replicates import noise_by_size

    empty = noise_by_size(_outcomes(0, 0, 3, 28))
    assert math.isnan(empty.p) and math.isnan(empty.ci_low) and math.isnan(empty.difference)


def test_each_claims_paper_gap_is_the_papers_own_difference():
    from covlib.search.reproduction import CLAIMS

    gaps = {c.name: round(c.paper_gap, 2) for c in CLAIMS}
    assert gaps == {"cot_flattens_twohop": 0.17, "cot_flattens_threehop": 0.82, "threehop_steeper": 0.32,
                    "parallel_between": 0.15,  # the smaller of 2.43 - 2.26 and 2.58 - 2.43
                    "model_size_unchanged": 0.0, "mamba_equals_transformer": 0.0}


def _drawn_rows(chart, panel: int) -> list[dict]:
    spec = chart.to_dict()
    datasets = spec["datasets"]
    view = spec["vconcat"][panel]
    names = {part["data"]["name"] for part in [view, *view["layer"]] if "data" in part}
    return [row for name in names for row in datasets[name] if "label" in row]


def test_the_verdicts_chart_draws_every_estimate_against_the_papers_value_and_band():
    from covlib.figures.verdicts_chart import VERDICT_COLORS, claim_rows, exponent_rows, verdicts_chart

    empty = pd.DataFrame(columns=["replicate", "side", "changed", "N"])
    rep = _reproduction(empty, _claims(cot_flattens_twohop=-0.29, mamba_equals_transformer=np.nan))
    rows = exponent_rows(rep, margin=0.25)
    assert rows.loc[0, ["label", "paper", "band_low", "band_high"]].tolist() == ["two-hop", 2.26, 2.01, 2.51]
    claims = claim_rows(rep).set_index("label")
    assert claims.loc["chain of thought flattens two-hop's law", "paper"] == pytest.approx(0.17)
    assert math.isnan(claims.loc["chain of thought flattens two-hop's law", "band_low"])
    equal = claims.loc["model size leaves the exponent unchanged"]
    assert (equal["paper"], equal["band_low"], equal["band_high"]) == (0.0, -0.25, 0.25)

    chart = verdicts_chart(rep)
    drawn = {row["label"] for row in _drawn_rows(chart, 1)}
    assert "a Mamba's exponent equals the transformer's" not in drawn and len(drawn) == 5  # no estimate: not drawn
    assert "No estimate yet, not drawn: a Mamba's exponent equals the transformer's" in \
        " ".join(chart.vconcat[1].title.subtitle)
    assert {row["label"] for row in _drawn_rows(chart, 0)} == {"two-hop"}
    scale = chart.to_dict()["vconcat"][0]["layer"][1]["encoding"]["color"]["scale"]
    assert dict(zip(scale["domain"], scale["range"])) == VERDICT_COLORS  # one colour per verdict in every chapter

    only = verdicts_chart(rep, claims=("cot_flattens_twohop",))
    assert {row["label"] for row in _drawn_rows(only, 1)} == {"chain of thought flattens two-hop's law"}


def test_the_verdicts_chart_waits_for_a_first_estimate():
    from covlib.figures.verdicts_chart import verdicts_chart

    empty = pd.DataFrame(columns=["replicate", "side", "changed", "N"])
    rep = _reproduction(empty, _claims())
    rep.verdicts["c"] = np.nan
    pending = verdicts_chart(rep).to_dict()
    assert "vconcat" not in pending and "no exponent has an estimate yet" in json.dumps(pending)


def test_one_slope_for_every_task_is_rejected_only_when_the_tasks_flip_differently():
    from covlib.analyses.success_curve import slope_by_group

    gaps = np.full(48, 0.12)
    alike = np.tile([True, False, False, False, False, False], 8)  # every task flips one replicate in six
    groups = np.repeat(["twohop", "threehop", "twohop_cot"], 16)
    same = slope_by_group(gaps, alike, groups, sims=200)
    assert same.df == 2 and same.p > 0.5 and set(same.groups) == {"twohop", "threehop", "twohop_cot"}
    apart = np.concatenate([np.tile([True, False], 8), np.zeros(32, bool)])  # one task flips half its replicates
    differ = slope_by_group(gaps, apart, groups, sims=200)
    assert differ.p < 0.01 and differ.statistic > same.statistic
    assert differ.groups["twohop"].slope < same.groups["twohop"].slope and not differ.groups["threehop"].identified
    assert math.isnan(slope_by_group(gaps, np.zeros(48, bool), groups, sims=10).p)  # no flip: nothing to test


def test_the_slope_note_says_whether_one_slope_fits_every_task():
    from covlib.analyses.success_curve import slope_by_group
    from covlib.figures.reproduction import slope_by_series_note

    gaps, groups = np.full(32, 0.12), np.repeat(["twohop", "threehop_cot"], 16)
    rep = _reproduction(pd.DataFrame(columns=["replicate", "side", "changed", "N"]), _claims())
    rep.slope_by_series = slope_by_group(gaps, np.tile([True, False, False, False], 8), groups, sims=100)
    said = slope_by_series_note(rep)
    assert said.startswith("Does one slope fit every task? Fitted to each task's replicates alone: two-hop ")
    assert "4 of 16 changed); three-hop with CoT" in said and "give no reason for a slope per task" in said
    rep.slope_by_series = slope_by_group(gaps, np.concatenate([np.tile([True, False], 8), np.zeros(16, bool)]),
                                         groups, sims=100)
    assert "The replicates reject one slope for every task" in slope_by_series_note(rep)


def test_a_decided_claim_is_also_read_as_one_of_the_family():
    from covlib.analyses.family import family_levels
    from covlib.analyses.fits import exponent_difference, exponent_intervals
    from covlib.figures.reproduction import claims_sentence

    assert family_levels(6) == pytest.approx({"fam_equiv": 1 - 0.1 / 6, "fam_excl": 1 - 0.05 / 6})
    assert family_levels(1) == pytest.approx({"fam_equiv": 0.90, "fam_excl": 0.95})  # one test: the rule's own levels
    rng = np.random.default_rng(3)
    cells = [(N, s) for N in (10, 12, 14, 16, 20) for s in (0, 1)]
    first = pd.DataFrame({"N": [N for N, _ in cells], "seed": [s for _, s in cells],
                          "n_req": [N ** 2.6 * np.exp(rng.normal(0, 0.1)) for N, _ in cells]})
    second = first.assign(n_req=[N ** 2.0 * np.exp(rng.normal(0, 0.1)) for N, _ in cells])
    d = exponent_difference(first, second, reps=2000, named_levels=family_levels(6))
    assert d["fam_excl_low"] < d["ci95_low"] < d["ci95_high"] < d["fam_excl_high"]  # the family's interval is wider
    assert d["fam_equiv_low"] < d["ci90_low"] and "fam_excl_low" not in exponent_difference(first, second, reps=200)
    one = exponent_intervals(first, reps=2000, named_levels=family_levels(7))
    assert one["fam_excl_low"] < one["ci95_low"] and one["fam_equiv_high"] > one["ci90_high"]

    claims = _claims(cot_flattens_threehop=1.1).assign(fam_excl_low=np.nan, fam_excl_high=np.nan,
                                                        family_verdict="inconclusive")
    row = claims["claim"] == "cot_flattens_threehop"
    claims.loc[row, ["verdict", "fam_excl_low", "fam_excl_high"]] = ["same_sign", -0.2, 2.8]
    rep = _reproduction(pd.DataFrame(columns=["replicate", "side", "changed", "N"]), claims)
    said = claims_sentence(rep, only=("cot_flattens_threehop",))
    assert said.endswith("read as one of the 6 claims tested at once (Bonferroni: each interval at 99.2%), its "
                         "interval is -0.20 to +2.80, so that, read with the other claims, it is inconclusive.")
    claims.loc[row, ["fam_excl_low", "family_verdict"]] = [0.1, "same_sign"]
    assert claims_sentence(rep, only=("cot_flattens_threehop",)).endswith(
        "its interval is +0.10 to +2.80, which keeps its verdict (holds (same sign)).")


def test_a_decided_exponent_is_also_read_as_one_of_the_published_seven():
    from covlib.figures.reproduction import exponent_family_sentence
    from covlib.search.reproduction import exponent_verdicts

    exponents = pd.DataFrame([{"series": "parallel_twohop", "cells_used": "own", "rule": "floor",
                               "estimator": "logistic", "pool": "without", "c": 2.40, "ci90_low": 2.26,
                               "ci90_high": 2.59, "ci95_low": 2.22, "ci95_high": 2.63, "fam_equiv_low": 2.16,
                               "fam_equiv_high": 2.73, "fam_excl_low": 2.10, "fam_excl_high": 2.82, "paper": 2.43,
                               "n_values": 7, "seeds": 2}])
    verdicts = exponent_verdicts(exponents)
    assert verdicts.loc[0, ["verdict", "family_verdict"]].tolist() == ["reproduced", "inconclusive"]
    rep = _reproduction(pd.DataFrame(columns=["replicate", "side", "changed", "N"]), _claims())
    rep = type(rep)(rep.by_rule, exponents, verdicts, rep.claims, rep.replicates, rep.flips)
    assert exponent_family_sentence(rep) == (
        "Read as one family of the 1 published exponents tested at once (Bonferroni: a reproduction's interval at "
        "98.6%, an exclusion's at 99.3%): parallel two-hop (reproduced; 2.16 to 2.73) is inconclusive.")
    assert exponent_family_sentence(_reproduction(pd.DataFrame(columns=["replicate", "side", "changed", "N"]),
                                                  _claims())) == ""  # nothing decided: nothing to say


def test_the_halves_of_n_show_whether_a_law_bends_within_the_n_it_measured():
    from covlib.search.reproduction import SERIES, half_exponents

    def cells(name: str, law) -> pd.DataFrame:
        task, cot, model = SERIES[name]
        return pd.DataFrame([{"task": task, "cot": cot, "model": model, "N": N, "seed": s, "n_req_bracket": law(N),
                              "n_req_logistic": law(N), "log_sd": 0.01, "pool_limited": False}
                             for N in (6, 7, 8, 9, 10, 12, 14, 16) for s in (0, 1)])

    bent = cells("fivehop_cot", lambda N: 10 * N ** 1.5 if N <= 9 else 10 * 9 ** 1.5 * (N / 9) ** 2.5)
    straight = cells("twohop", lambda N: 3 * N ** 2.2)
    short = cells("threehop", lambda N: N ** 2.6).query("N < 9")  # 3 values of N: left out
    halves = half_exponents({"floor": pd.concat([bent, straight, short])},
                            {n: SERIES[n] for n in ("fivehop_cot", "twohop", "threehop")}).set_index("series")
    assert list(halves.index) == ["fivehop_cot", "twohop"]
    assert halves.loc["fivehop_cot", "c_lower"] == pytest.approx(1.5) and halves.loc["fivehop_cot", "N_upper"] == (10, 16)
    assert halves.loc["fivehop_cot", "c_upper"] == pytest.approx(2.5)
    assert halves.loc["twohop", ["c_lower", "c_upper"]].tolist() == pytest.approx([2.2, 2.2])


def test_a_differing_exponent_says_whether_its_law_bends():
    from covlib.figures.reproduction import pattern_note

    rep = _reproduction(pd.DataFrame(columns=["replicate", "side", "changed", "N"]), _claims())
    rep.verdicts.loc[0, ["verdict", "c", "paper"]] = ["differs", 1.47, 1.80]
    rep.verdicts["family_verdict"] = "inconclusive"
    rep.verdicts[["fam_excl_low", "fam_excl_high"]] = [0.99, 1.87]
    rep.halves = pd.DataFrame([{"series": "twohop", "c_lower": 1.49, "N_lower": (6, 9), "c_upper": 1.50,
                                "N_upper": (10, 16)}])
    assert ("Differs: two-hop 1.47 against the paper's 1.80 (its law is about as steep over N = 6-9 (c = 1.49) as "
            "over N = 10-16 (c = 1.50), each half fitted alone: no bend within the N measured explains the gap; "
            "beyond N = 16 these cells cannot say).") in pattern_note(rep)
    rep.halves.loc[0, "c_upper"] = 2.1
    assert "its law is steeper over N = 10-16 (c = 2.10) than over N = 6-9 (c = 1.49)" in pattern_note(rep)
