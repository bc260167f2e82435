"""Chapter 9, the diversity / exposure / coverage audit: pools, measures, selection, runs, statistics and prose."""
from __future__ import annotations

import dataclasses
import re
from collections import Counter

import numpy as np
import pandas as pd
import pytest
import vl_convert as vlc
from scipy import stats
from test_coverage import covered_by_definition, twohop_answers

from covlib.base.errors import CovlibError
from covlib.base.paths import repository_path
from covlib.base.tables import read_table, upsert_row
from covlib.book.setup import setup_chapter
from covlib.chapters.ch09_diversity_exposure_coverage.audit import (
    BOOK_PLAN,
    PRESETS,
    SMOKE_PLAN,
    AuditSetup,
    arm_balance,
    candidates_path,
    check_coverage,
    check_extremes,
    complete_per_arm,
    contrast_arms,
    contrast_runs,
    coverage_column,
    coverage_growth,
    coverage_profile,
    describe_setup,
    describe_spread,
    draw_subset,
    ensure_candidates,
    entropy,
    extreme_draws,
    growth_sizes,
    make_pool,
    measures_correlation,
    most_variable_thresholds,
    pending,
    run_audit,
    select_extremes,
    spread_at,
    spread_by_threshold,
    subset_dataset,
    surface_profile,
    typical_mask,
)
from covlib.chapters.ch09_diversity_exposure_coverage.coverage_range import (
    RANGE_COLUMNS,
    directed_subset,
    fragment_overlap,
    gaps,
    range_cell,
    range_finding,
    range_summary,
)
from covlib.chapters.ch09_diversity_exposure_coverage.figures import candidates_chart, contrast_chart, pending_figure
from covlib.chapters.ch09_diversity_exposure_coverage.stats import (
    ACC,
    answer,
    arm_accuracies,
    contrast,
    contrast_numbers,
    coverage_gap,
    describe_contrast,
    describe_effect,
    describe_logit,
    describe_mixture,
    dose_curve,
    dose_levels,
    dose_response,
    effect_numbers,
    effect_per_point,
    escape_logit,
    escape_mixture,
    exposure_effect,
    factorial_analysis,
    factorial_anova,
    factorial_answer,
    partial_eta2,
    seeds_per_cell,
    separating_factor,
    side_by_side,
    verdict,
)

SETUP = AuditSetup(N=10, test_size=100, model="smoke", batch_size=64, evals=2)


@pytest.fixture(scope="module")
def pool():
    return make_pool(SETUP)


def test_pool_and_test_are_id_disjoint_and_fixed(pool):
    codes = lambda a: set(map(tuple, a.tolist()))  # noqa: E731
    assert not codes(pool.pool) & codes(pool.test)
    assert len(pool.test) == SETUP.test_size
    # every pool input uses facts of the seen split only, and every test input facts the pool uses (type_0)
    f1, seen = pool.base.tables["f1"], pool.base.seen_split
    assert all(seen["f1"][x1, x2] and seen["f2"][f1[x1, x2], x3] for x1, x2, x3 in pool.pool.tolist())
    used_f1 = {(x1, x2) for x1, x2, _ in pool.pool.tolist()}
    used_f2 = {(int(f1[x1, x2]), x3) for x1, x2, x3 in pool.pool.tolist()}
    assert all((x1, x2) in used_f1 and (int(f1[x1, x2]), x3) in used_f2 for x1, x2, x3 in pool.test.tolist())
    again = make_pool(SETUP)
    assert np.array_equal(again.pool, pool.pool) and np.array_equal(again.test, pool.test)


def test_draws_are_deterministic_distinct_and_checked(pool):
    a, b = draw_subset(pool, 50, 0), draw_subset(pool, 50, 1)
    assert np.array_equal(a, draw_subset(pool, 50, 0)) and not np.array_equal(a, b)
    assert len(np.unique(a)) == 50
    with pytest.raises(CovlibError, match="n_unique"):
        draw_subset(pool, pool.size + 1, 0)


def test_coverage_profile_is_the_exact_coverage_of_the_test_items(pool):
    train = pool.pool[draw_subset(pool, 250, 0)]  # large enough that 5-coverage is not zero
    prof = coverage_profile(pool, train, [1, 3, 5])
    answers = twohop_answers(pool.base.tables, train)  # the oracle: coverage by its definition
    expected = {k: covered_by_definition(train, answers, SETUP.N, pool.test, k).mean() for k in (1, 3, 5)}
    assert prof == pytest.approx(expected, abs=1e-12)
    assert prof[1] > prof[3] > prof[5] > 0


def test_surface_profile_counts_pairs_per_hop(pool):
    train = pool.pool[:3]
    prof = surface_profile(pool, train, [1, 2])
    f1 = pool.base.tables["f1"]  # the oracle: the pairs of each hop by a loop over the raw table
    x12 = {(x1, x2) for x1, x2, _ in train.tolist()}
    bx3 = {(int(f1[x1, x2]), x3) for x1, x2, x3 in train.tolist()}
    share1 = np.mean([(x1, x2) in x12 for x1, x2, _ in pool.test.tolist()])
    share2 = np.mean([(int(f1[x1, x2]), x3) in bx3 for x1, x2, x3 in pool.test.tolist()])
    assert prof[1] == pytest.approx((share1 + share2) / 2) and prof[1] > 0
    assert prof[2] <= prof[1]
    assert surface_profile(pool, pool.pool, [1])[1] > prof[1]


def test_entropy():
    assert entropy(np.array([0, 0, 0])) == 0.0
    assert entropy(np.array([0, 1, 2, 3])) == pytest.approx(np.log(4))


def test_selection_takes_the_extremes_among_typical_sets():
    rng = np.random.default_rng(0)
    c = pd.DataFrame({"draw": range(40), "cov_8": rng.random(40), "entropy_t": rng.random(40),
                      "entropy_b": rng.random(40)})
    arms = select_extremes(c, "cov_8", 3)
    typical = c[c["entropy_t"].between(*c["entropy_t"].quantile([.25, .75]))
                & c["entropy_b"].between(*c["entropy_b"].quantile([.25, .75]))]
    assert sorted(arms["high"]) == sorted(typical.nlargest(3, "cov_8")["draw"])
    assert sorted(arms["low"]) == sorted(typical.nsmallest(3, "cov_8")["draw"])
    with pytest.raises(CovlibError, match="not a column"):
        select_extremes(c, "cov_99", 3)
    with pytest.raises(CovlibError, match="typical candidates"):
        select_extremes(c, "cov_8", 20)


def test_a_larger_arm_extends_a_smaller_one_from_the_extremes_inward():
    rng = np.random.default_rng(1)
    c = pd.DataFrame({"draw": range(400), "cov_8": rng.random(400), "entropy_t": rng.random(400),
                      "entropy_b": rng.random(400)})
    six, twenty = select_extremes(c, "cov_8", 6), select_extremes(c, "cov_8", 20)
    assert twenty["low"][:6] == six["low"] and twenty["high"][:6] == six["high"]  # the first design's runs are kept
    typical = c[c["entropy_t"].between(*c["entropy_t"].quantile([.25, .75]))
                & c["entropy_b"].between(*c["entropy_b"].quantile([.25, .75]))].set_index("draw")["cov_8"]
    high = typical[twenty["high"]].to_numpy()
    assert (np.diff(high[:6]) > 0).all() and (np.diff(high[6:]) < 0).all() and high[6] < high[:6].min()
    assert (np.diff(typical[twenty["low"]].to_numpy()) > 0).all()
    assert sorted(twenty["high"]) == sorted(typical.nlargest(20).index)


def test_a_half_filled_contrast_uses_the_pairs_both_arms_have_from_the_extremes():
    arms = {"low": [10, 11, 12, 13], "high": [20, 21, 22, 23]}
    def row(arm, seed, draw):
        return {"experiment": "coverage", "selection": arm, "seed": seed, "draw": draw, "final_type0": 0.5}
    # finished out of order: the low arm's first three, the high arm's first two and its fourth, an unrelated run
    runs = pd.DataFrame([row("low", 0, 10), row("low", 1, 11), row("low", 2, 12), row("high", 0, 20),
                         row("high", 1, 21), row("high", 3, 23), {**row("low", 0, 10), "experiment": "surface"}])
    assert complete_per_arm(runs, "coverage", arms) == 2
    used = contrast_runs(runs, "coverage", arms, 2)
    assert sorted(zip(used["selection"], used["draw"])) == [("high", 20), ("high", 21), ("low", 10), ("low", 11)]
    assert complete_per_arm(runs.iloc[:0], "coverage", arms) == 0
    assert complete_per_arm(runs.assign(draw=runs["draw"] + 1), "coverage", arms) == 0  # another set, same seed
    plan = dataclasses.replace(SMOKE_PLAN, per_arm=3)
    cands = pd.DataFrame({"draw": range(60), "surf_2": np.arange(60.0), "entropy_t": 1.0, "entropy_b": 1.0})
    order = [(r.selection, r.seed) for r in plan.runs("surface", "t.csv", "w", cands)]
    assert order == [("low", 0), ("high", 0), ("low", 1), ("high", 1), ("low", 2), ("high", 2)]  # pair by pair


def test_subset_dataset_trains_on_the_subset_and_tests_on_the_fixed_items(pool):
    train = pool.pool[draw_subset(pool, 80, 2)]
    ds = subset_dataset(pool, train)
    assert np.array_equal(ds.train_inputs, train) and ds.config.n_train == 80
    assert np.array_equal(ds.test_inputs[ds.test_types == "type_0"], pool.test)
    inferred = ds.test_inputs[ds.test_types == "train_inferred"]
    assert set(map(tuple, inferred.tolist())) <= set(map(tuple, train.tolist()))


def test_plan_grids_and_budgets(tmp_path):
    plan = SMOKE_PLAN
    dose = plan.runs("dose", "t.csv", "w")
    assert {r.n_steps for r in dose} == {plan.dose_steps}  # one fixed budget
    assert sorted({r.n_unique for r in dose}) == sorted(plan.dose_levels)
    fact = plan.runs("factorial", "t.csv", "w")
    assert len(fact) == len(plan.diversity) * len(plan.exposure) * len(plan.factorial_seeds)
    # budget = diversity x exposure passes, in batches of 64 rounded up: 60 x 10 / 64 = 9.4 -> 10,
    # 60 x 20 / 64 = 18.75 -> 19, 200 x 10 / 64 = 31.25 -> 32, 200 x 20 / 64 = 62.5 -> 63
    steps = {(r.n_unique, r.exposure): r.n_steps for r in fact}
    assert steps == {(60, 10.0): 10, (60, 20.0): 19, (200, 10.0): 32, (200, 20.0): 63}
    with pytest.raises(CovlibError, match="candidate"):
        plan.runs("coverage", "t.csv", "w")
    with pytest.raises(CovlibError, match="unknown experiment"):
        plan.runs("nonsense", "t.csv", "w")


def test_audit_runs_resume_and_record(tmp_path):
    plan = dataclasses.replace(SMOKE_PLAN, dose_levels=(40, 80), dose_steps=20)
    table = tmp_path / "runs.csv"
    df = run_audit(plan, ["dose"], table, tmp_path / "work", jobs=1, progress=False, log=None)
    assert len(df) == 2 and set(df["n_unique"]) == {40, 80}
    assert (df["budget"] == 20 * plan.setup.batch_size).all()
    assert df["final_type0"].between(0, 1).all() and df["coverage"].between(0, 1).all()
    stamp = table.stat().st_mtime_ns
    assert pending(plan.runs("dose", str(table), ""), table) == []
    run_audit(plan, ["dose"], table, tmp_path / "work", jobs=1, progress=False, log=None)
    assert table.stat().st_mtime_ns == stamp  # nothing retrained, nothing rewritten


def test_contrast_runs_use_the_selected_sets(tmp_path):
    plan = dataclasses.replace(SMOKE_PLAN, candidates=30, per_arm=2)
    cands = ensure_candidates(plan, tmp_path / "runs.csv")
    assert len(cands) == 30 and candidates_path(tmp_path / "runs.csv").is_file()
    runs = plan.runs("coverage", "t.csv", "w", cands)
    col = plan.selection_column("coverage")
    high = cands.set_index("draw").loc[[r.draw for r in runs if r.selection == "high"], col]
    low = cands.set_index("draw").loc[[r.draw for r in runs if r.selection == "low"], col]
    assert high.min() >= low.max()
    assert [r.seed for r in runs if r.selection == "high"] == [r.seed for r in runs if r.selection == "low"]
    spread = spread_by_threshold(cands)
    assert set(spread["measure"]) == {"coverage", "surface"} and (spread["sd"] >= 0).all()


def test_table_upsert_replaces_by_key_and_refuses_foreign_files(tmp_path):
    path = tmp_path / "t.csv"
    upsert_row(path, {"a": 1, "b": 2, "v": 0.5}, ["a", "b", "v"], ["a", "b"])
    upsert_row(path, {"a": 1, "b": 3, "v": 0.7}, ["a", "b", "v"], ["a", "b"])
    upsert_row(path, {"a": 1, "b": 2, "v": 0.9}, ["a", "b", "v"], ["a", "b"])
    t = read_table(path, ["a", "b", "v"])
    assert t[["b", "v"]].values.tolist() == [[2, 0.9], [3, 0.7]]
    with pytest.raises(CovlibError, match="lacks the columns"):
        read_table(path, ["a", "zzz"])


def test_a_row_with_a_missing_number_rewrites_no_other_row(tmp_path):
    path = tmp_path / "t.csv"
    upsert_row(path, {"a": 1, "fit": 150.0}, ["a", "fit"], ["a"], float_format="%.6g")
    upsert_row(path, {"a": 2, "fit": None}, ["a", "fit"], ["a"], float_format="%.6g")
    assert path.read_text().splitlines() == ["a,fit", "1,150", "2,"]


# ----------------------------------------------------------------------------- statistics


def test_dose_response_recovers_a_logistic():
    n = np.repeat([100, 200, 400, 800, 1600, 3200], 3)
    truth = 0.1 + 0.8 / (1 + np.exp(-3 * (np.log(n) - np.log(600))))
    runs = pd.DataFrame({"n_unique": n, "final_type0": truth + np.random.default_rng(0).normal(0, 0.01, len(n))})
    fit = dose_response(runs)
    assert fit["midpoint_n"] == pytest.approx(600, rel=0.15)
    assert fit["r2_means"] > 0.99 and fit["spearman_means"] == pytest.approx(1.0)
    assert dose_curve(fit, np.array([600.0]))[0] == pytest.approx(0.5, abs=0.03)
    with pytest.raises(CovlibError, match="four levels"):
        dose_response(runs[runs["n_unique"] < 800])


def _sums_of_squares_by_hand(runs: pd.DataFrame) -> dict[str, float]:
    """A balanced two-way layout's sums of squares from cell, row and column means (no model fitting): each
    main effect's, the interaction's, the residual's (runs about their cell mean) and the total."""
    y, grand = runs[ACC], runs[ACC].mean()
    row = runs.groupby("n_unique")[ACC].transform("mean")
    col = runs.groupby("exposure")[ACC].transform("mean")
    cell = runs.groupby(["n_unique", "exposure"])[ACC].transform("mean")
    return {"diversity": float(((row - grand) ** 2).sum()), "exposure": float(((col - grand) ** 2).sum()),
            "diversity x exposure": float(((cell - row - col + grand) ** 2).sum()),
            "residual": float(((y - cell) ** 2).sum()), "total": float(((y - grand) ** 2).sum())}


def test_anova_reports_partial_eta2_of_two_real_factors_not_classical_eta2():
    # both factors are real: diversity moves accuracy by 0.3 over its levels, exposure by 0.04, noise sd 0.01.
    # Exposure's share of the whole variance (classical eta^2, about 0.02) is tiny beside its share of what
    # diversity leaves unexplained (partial eta^2, about 0.77): the two definitions give clearly different numbers
    rng = np.random.default_rng(1)
    runs = pd.DataFrame([{"n_unique": n, "exposure": e, ACC: 0.1 * i + 0.02 * j + rng.normal(0, 0.01)}
                         for i, n in enumerate([100, 200, 400, 800]) for j, e in enumerate((10.0, 20.0, 40.0))
                         for _ in range(5)])
    table = factorial_anova(runs)
    ss = _sums_of_squares_by_hand(runs)
    assert sum(ss[e] for e in ("diversity", "exposure", "diversity x exposure", "residual")) == pytest.approx(
        ss["total"])  # a balanced layout: the parts add up
    for effect in ("diversity", "exposure", "diversity x exposure"):
        partial = ss[effect] / (ss[effect] + ss["residual"])
        assert table.loc[effect, "partial_eta2"] == pytest.approx(partial, rel=1e-9), effect
    classical = ss["exposure"] / ss["total"]
    assert table.loc["exposure", "partial_eta2"] > 0.6 and classical < 0.05  # the design tells the two apart
    assert table.loc["diversity", "p"] < 1e-6 and table.loc["exposure", "p"] < 1e-6
    assert np.isnan(table.loc["residual", "partial_eta2"])


def test_mixture_finds_floor_and_escaped_runs_and_logit_orders_them():
    rng = np.random.default_rng(2)
    n = np.repeat([100, 200, 400, 800], 10)
    e = np.tile([10.0, 40.0], 20)
    escaped_true = rng.random(40) < 1 / (1 + np.exp(-(2 * np.log(n / 250) + 0.5 * np.log(e / 20))))
    acc = np.where(escaped_true, 0.9, 0.1) + rng.normal(0, 0.02, 40)
    mix = escape_mixture(acc)
    assert mix["bimodal"] and np.array_equal(mix["escaped"], escaped_true)
    assert not escape_mixture(rng.normal(0.5, 0.02, 40))["bimodal"]
    fit = escape_logit(pd.DataFrame({"n_unique": n, "exposure": e}), mix["escaped"])
    assert fit["coef_log_n"] > 0


def test_contrast_detects_a_difference_and_supports_equivalence_of_equals():
    rng = np.random.default_rng(3)
    a, b = rng.normal(0.6, 0.02, 8), rng.normal(0.4, 0.02, 8)
    diff = contrast(a, b)
    assert diff["diff"] == pytest.approx(0.2, abs=0.03) and diff["p"] < 0.01 and diff["p_equivalence"] > 0.5
    same = contrast(rng.normal(0.5, 0.005, 8), rng.normal(0.5, 0.005, 8))
    assert same["p_equivalence"] < 0.05 and same["detectable"] < 0.03
    assert diff["ci90_low"] < diff["diff"] < diff["ci90_high"] and diff["bound"] == pytest.approx(diff["ci90_high"])
    assert same["bound"] < 0.03  # equivalence at 3 pp holds exactly when the 90% interval lies inside +-3 pp


def test_escape_separated_by_diversity_is_flagged_and_exposure_effect_reads_the_ceiling():
    n = np.repeat([1000, 2000, 4000], 6)
    e = np.tile([10.0, 10.0, 40.0, 40.0, 160.0, 160.0], 3)
    escaped = n >= 2000  # decided by diversity alone
    acc = np.where(escaped, 0.4 + 0.1 * np.log2(e / 10), 0.1)
    runs = pd.DataFrame({"n_unique": n, "exposure": e, ACC: acc})
    fit = escape_logit(runs, escaped)
    assert fit["penalised"] and fit["separated_by"] == "n_unique"
    assert separating_factor(runs, np.tile([False, True], 9)) is None
    effect = exposure_effect(runs, escaped).set_index("n_unique")
    assert effect.loc[1000, "escaped_share"] == 0 and effect.loc[4000, "escaped_share_low_exposure"] == 1
    assert effect.loc[2000, "acc_low_exposure"] == pytest.approx(0.4)
    assert effect.loc[2000, "acc_high_exposure"] == pytest.approx(0.8)


# ----------------------------------------------------------------------------- the chapter's tables and prose


def test_presets_and_an_unknown_preset(tmp_path):
    assert PRESETS["smoke"]["plan"] is SMOKE_PLAN and PRESETS["default"]["plan"] is BOOK_PLAN
    assert PRESETS["default"]["table"] == "data/diversity/runs.csv" and not PRESETS["default"]["train"]
    with pytest.raises(CovlibError, match="smoke, default, paper"):
        setup_chapter("09", "quick", PRESETS, out_dir=tmp_path)


def test_describe_setup_sums_the_minutes():
    runs = pd.DataFrame({"minutes": [1.25, 2.5, 0.5]})
    line = describe_setup(SETUP, runs, "t.csv")
    assert line.startswith("twohop, N=10, data seed 0; model smoke, batch 64")
    assert line.endswith("3 runs in t.csv (4 CPU-minutes of training)")


def test_coverage_growth_is_draw_zero_of_every_size(pool):
    plan = dataclasses.replace(SMOKE_PLAN, dose_levels=(40, 250), diversity=(250, 60), contrast_n=120, contrast_k=5,
                               surface_min=2)
    growth = coverage_growth(pool, plan)
    assert growth["n_unique"].tolist() == [40, 60, 120, 250]
    assert list(growth.columns) == ["n_unique", "coverage k=3", "coverage k=5", "pairs m=1", "pairs m=2"]
    f1 = pool.base.tables["f1"]
    for n in (120, 250):  # the oracles: coverage by its definition, and the hop pairs counted by a loop
        train = pool.pool[draw_subset(pool, n, 0)]
        answers = twohop_answers(pool.base.tables, train)
        row = growth.set_index("n_unique").loc[n]
        for k in (3, 5):
            assert row[f"coverage k={k}"] == pytest.approx(covered_by_definition(train, answers, SETUP.N, pool.test,
                                                                                  k).mean())
        counts = Counter([("x1x2", x1, x2) for x1, x2, _ in train.tolist()]
                         + [("bx3", int(f1[x1, x2]), x3) for x1, x2, x3 in train.tolist()])
        for m in (1, 2):
            shares = [np.mean([counts["x1x2", x1, x2] >= m for x1, x2, _ in pool.test.tolist()]),
                      np.mean([counts["bx3", int(f1[x1, x2]), x3] >= m for x1, x2, x3 in pool.test.tolist()])]
            assert row[f"pairs m={m}"] == pytest.approx(np.mean(shares))
    assert growth.set_index("n_unique").loc[250, "coverage k=5"] > 0  # a check that can tell k = 5 from k = 3


def test_spread_lookups_and_description():
    spread = pd.DataFrame({"measure": ["coverage"] * 3 + ["surface"] * 2, "threshold": [3, 4, 5, 1, 2],
                           "mean": [1.0, 0.9, 0.5, 1.0, 0.7], "sd": [0.0, 0.02, 0.01, 0.0, 0.05]})
    assert most_variable_thresholds(spread) == {"coverage": 4, "surface": 2}
    assert spread_at(spread, "coverage", 5)["mean"] == 0.5
    with pytest.raises(CovlibError, match="no spread"):
        spread_at(spread, "surface", 9)
    text = describe_spread(spread, SMOKE_PLAN, 24)
    assert text.startswith("24 candidate sets of 120: exact 3-coverage 1.0000 +- 0.0000")
    assert "coverage k = 4, surface m = 2; the plan selects on k = 3 and m = 2" in text


def test_arms_balance_and_correlation():
    rng = np.random.default_rng(4)
    c = pd.DataFrame({"draw": range(60), "cov_3": rng.random(60), "surf_2": rng.random(60),
                      "entropy_t": rng.random(60), "entropy_b": rng.random(60)})
    arms = contrast_arms(c, SMOKE_PLAN)
    typical = c[c["entropy_t"].between(*c["entropy_t"].quantile([.25, .75]))
                & c["entropy_b"].between(*c["entropy_b"].quantile([.25, .75]))]
    for measure, column in (("coverage", "cov_3"), ("surface", "surf_2")):  # SMOKE_PLAN: k = 3, m = 2, 2 per arm
        assert sorted(arms[measure]["low"]) == sorted(typical.nsmallest(2, column)["draw"])
        assert sorted(arms[measure]["high"]) == sorted(typical.nlargest(2, column)["draw"])
    balance = arm_balance(c, arms, "cov_3", "surf_2").set_index(["selected on", "arm"])
    high = c.set_index("draw").loc[arms["coverage"]["high"]]
    assert balance.loc[("coverage", "high"), "cov_3"] == pytest.approx(high["cov_3"].mean())
    assert balance.loc[("surface", "low"), "sets"] == 2
    rho = stats.spearmanr(c["cov_3"], c["surf_2"]).statistic
    assert measures_correlation(c, "cov_3", "surf_2") == pytest.approx(rho)


def test_dose_levels_and_seeds_per_cell():
    dose = pd.DataFrame({"n_unique": [10, 10, 20], "seed": [0, 1, 0], "exposure": [5.0, 5.0, 2.5],
                         ACC: [0.2, 0.4, 0.9], "coverage": [0.5, 0.7, 1.0]})
    levels = dose_levels(dose)
    assert levels.loc[10, "runs"] == 2 and levels.loc[10, "accuracy"] == pytest.approx(0.3)
    assert levels.loc[10, "sd"] == pytest.approx(np.std([0.2, 0.4], ddof=1)) and levels.loc[20, "coverage_k3"] == 1.0
    fact = pd.DataFrame({"n_unique": [1, 1, 1, 2, 2], "exposure": [1.0, 1.0, 2.0, 1.0, 2.0]})
    assert seeds_per_cell(fact) == 1 and seeds_per_cell(fact.iloc[:0]) == 0


def _factorial_runs() -> pd.DataFrame:
    """A grid where escape is decided by diversity alone and exposure lifts the escaped runs."""
    n = np.repeat([1000, 2000, 4000], 6)
    e = np.tile([10.0, 10.0, 40.0, 40.0, 160.0, 160.0], 3)
    acc = np.where(n >= 2000, 0.4 + 0.1 * np.log2(e / 10), 0.1) + np.tile([0.0, 0.01], 9)
    return pd.DataFrame({"n_unique": n, "exposure": e, "steps": (n * e / 64).astype(int), ACC: acc})


def test_factorial_analysis_and_its_answer():
    fact = _factorial_runs()
    assert factorial_analysis(fact, cells_expected=9 * 2) is None  # no more runs than cells... twice over
    result = factorial_analysis(fact, cells_expected=9)
    assert result["mixture"]["bimodal"] and int(result["mixture"]["escaped"].sum()) == 12
    assert partial_eta2(result["anova"], "diversity") == result["anova"].loc["diversity", "partial_eta2"]
    assert np.isnan(partial_eta2(None, "diversity"))
    assert describe_mixture(result["mixture"], len(fact)).endswith("12 runs escaped the floor")
    assert "separated perfectly by n_unique" in describe_logit(result["logit"])
    assert describe_logit({"note": "every run on the same side"}).endswith("every run on the same side")
    line = factorial_answer(result, fact)
    assert "no run at 1,000 examples escapes and every run at 2,000, 4,000 does" in line
    assert "(2 seeds per cell;" in line


def test_contrasts_in_numbers_and_words():
    runs = pd.DataFrame({"experiment": ["coverage"] * 4 + ["dose"], "selection": ["high", "high", "low", "low", "random"],
                         ACC: [0.5, 0.7, 0.1, 0.3, 0.9]})
    high, low = arm_accuracies(runs, "coverage")
    assert sorted(high) == [0.5, 0.7] and sorted(low) == [0.1, 0.3]
    assert describe_contrast("surface", *arm_accuracies(runs, "surface"), None, 6) == (
        "surface: 0 of 12 runs in the table; fill it with: covlib diversity run --experiments surface "
        "--table data/diversity/runs.csv")
    c = {"diff": 0.4, "p": 0.01, "p_equivalence": 0.9, "detectable": 0.05, "ci90_low": 0.3, "ci90_high": 0.5,
         "bound": 0.5}
    assert describe_contrast("coverage", high, low, c, 6).startswith(
        "coverage: high 0.600 (2 runs) vs low 0.200 (2): difference +40.0 pp")
    numbers = contrast_numbers({"coverage": c, "surface": None})
    assert list(numbers) == ["coverage_contrast_pp", "coverage_contrast_p", "surface_contrast_pp", "surface_contrast_p",
                             "coverage_contrast_bound_pp", "surface_contrast_bound_pp"]
    assert numbers["coverage_contrast_pp"] == pytest.approx(40) and numbers["coverage_contrast_p"] == 0.01
    assert numbers["coverage_contrast_bound_pp"] == pytest.approx(50) and np.isnan(numbers["surface_contrast_p"])
    assert verdict(c, "x").startswith("Selecting on x changes accuracy")
    assert "equivalent to zero" in verdict({**c, "p": 0.5, "p_equivalence": 0.01}, "x")
    assert "rules out effects larger than 50 pp" in verdict({**c, "p": 0.5}, "x")
    assert verdict(None, "x") == "The x contrast has not been run yet (see COMMANDS.txt)."


def test_side_by_side_and_the_answer():
    numbers = contrast_numbers({"coverage": None, "surface": None})
    table = side_by_side(0.9, 0.8, 0.1, {"coverage_contrast_pp": 1, "coef_log_n": 2.0, "coef_log_exposure": 0.5},
                         numbers, 3).set_index("quantity")
    assert len(table) == 10 and table.loc["escape logit: log n", "this book (twohop)"] == 2.0
    assert table.loc["seeds per factorial cell"].tolist() == [5, 3]
    assert np.isnan(side_by_side(0.9, 0.8, 0.1, None, numbers, 3).iloc[3, 2])
    cov3 = pd.Series({"mean": 1.0, "sd": 0.0})
    effects = effect_numbers(pd.DataFrame({"experiment": [], "selection": [], ACC: [], "coverage": []}))
    text = answer(SMOKE_PLAN, None, 0, None, pd.DataFrame(), {"coverage": None, "surface": None}, cov3, cov3,
                  pd.DataFrame({ACC: []}), effects, "RANGE.")
    lines = text.splitlines()
    assert len(lines) == 4 and lines[0].startswith("* **Selection on exact 3-coverage.** The exact 3-coverage contrast")
    assert "The coverage contrast has no runs in both arms yet." in lines[2]
    assert "Every candidate set of 120 3-covers 100.0% of the ID test" in lines[2]
    assert "moved accuracy by 0.37 points (p = 0.97)" in lines[2] and "effects beyond" not in text
    assert lines[3] == "* **How far selection can move exact coverage.** RANGE."


def _arms(high_acc, low_acc, high_cov, low_cov, experiment="coverage") -> pd.DataFrame:
    n_h, n_l = len(high_acc), len(low_acc)
    return pd.DataFrame({"experiment": [experiment] * (n_h + n_l), "selection": ["high"] * n_h + ["low"] * n_l,
                         ACC: [*high_acc, *low_acc], "coverage": [*high_cov, *low_cov]})


def test_a_contrast_is_read_per_point_of_the_coverage_it_moved():
    runs = _arms([0.5, 0.6, 0.7], [0.3, 0.4, 0.5], [0.70, 0.70, 0.70], [0.50, 0.50, 0.50])
    assert coverage_gap(runs, "coverage") == pytest.approx(20.0)
    e = effect_numbers(runs)
    assert e["coverage_gap_between_arms"] == pytest.approx(20.0)
    assert e["effect_per_coverage_point"] == pytest.approx(1.0)  # 20 pp of accuracy over 20 points of coverage
    welch = stats.ttest_ind([0.5, 0.6, 0.7], [0.3, 0.4, 0.5], equal_var=False).confidence_interval(0.95)
    assert e["effect_per_coverage_point_ci_low"] == pytest.approx(100 * welch.low / 20)
    # the total beside the effect per point, each worded as what it is
    assert describe_effect("coverage", e).endswith(f"accuracy differs by +20.00 pp in all, +1.00 pp per point of "
                                                   f"3-coverage (95% interval {e['effect_per_coverage_point_ci_low']:+.2f}"
                                                   f" to {e['effect_per_coverage_point_ci_high']:+.2f} per point).")
    flipped = effect_per_point([0.5, 0.6, 0.7], [0.3, 0.4, 0.5], -20.0)  # arms ordered against coverage
    assert flipped["effect"] == pytest.approx(-1.0) and flipped["ci_low"] < flipped["ci_high"]
    tiny = effect_numbers(_arms([0.5, 0.6], [0.5, 0.62], [0.999, 0.999], [0.9995, 0.9995]))
    assert abs(tiny["effect_per_coverage_point_ci_high"] - tiny["effect_per_coverage_point_ci_low"]) > 100
    said = describe_effect("coverage", tiny)  # under MIN_GAP: no effect per point, only the total
    assert "did not move 3-coverage" in said and "per point" not in said and "in all" in said
    assert f"{tiny['effect_per_coverage_point']:+.2f}" not in said
    none = effect_numbers(_arms([0.5, 0.6], [0.4, 0.5], [1.0, 1.0], [1.0, 1.0]))
    assert np.isnan(none["effect_per_coverage_point"]) and "did not move 3-coverage" in describe_effect("coverage", none)
    assert np.isnan(effect_numbers(runs)["surface_coverage_gap_between_arms"])


def test_fragment_overlap_and_directed_sets(pool):
    overlap = fragment_overlap(pool)
    i = 7
    brute = sum(int(np.all(pool.test[:, list(p)] == pool.pool[i, list(p)], axis=1).sum())
                for p in ((0,), (1,), (2,), (0, 1), (0, 2), (1, 2)))
    assert overlap[i] == brute
    near, far = (directed_subset(pool, 100, s, 0, overlap) for s in (3.0, -3.0))
    assert len(np.unique(near)) == 100 and np.array_equal(near, directed_subset(pool, 100, 3.0, 0, overlap))
    assert overlap[near].mean() > overlap.mean() > overlap[far].mean()
    with pytest.raises(CovlibError, match="n_unique=0"):
        directed_subset(pool, 0, 1.0, 0)


def test_the_range_of_coverage_and_what_it_allows(pool):
    cell = range_cell(pool, 200, 16, 2, 2.0)
    assert cell["q01"] <= cell["mean"] <= cell["q99"] and cell["min"] <= cell["q01"]
    draws = [coverage_profile(pool, pool.pool[draw_subset(pool, 200, d)], [3])[3] for d in range(16)]
    assert cell["mean"] == pytest.approx(np.mean(draws)) and cell["max"] == max(draws)
    table = pd.DataFrame([cell | {"N": 10}])
    assert gaps(table)["quantile_gap"].iloc[0] == pytest.approx(100 * (cell["q99"] - cell["q01"]))
    base = {c: 0.0 for c in RANGE_COLUMNS} | {"N": 20, "n_unique": 1000, "candidates": 200, "mean": 0.5,
                                              "directed_low": 0.4, "directed_high": 0.6, "directed_entropy_shift": 5.0}
    narrow = pd.DataFrame([base | {"sd": 0.02, "q01": 0.45, "q99": 0.55, "typical_low": 0.47, "typical_high": 0.52}])
    s = range_summary(narrow)
    assert s["qualifying"] == 0 and s["max_directed_gap"] == pytest.approx(20.0)  # only by changing make-up
    assert "exact coverage follows diversity" in range_finding(s, (20,))
    wide = narrow.assign(sd=0.05, q01=0.38, q99=0.62)  # 4.65 sd of 5 points: a 15-point contrast is reachable
    assert range_summary(wide)["qualifying"] == 1 and "may allow a contrast" in range_finding(range_summary(wide), (20,))
    fixed = narrow.assign(directed_entropy_shift=0.5)  # the directed selector now keeps the make-up
    assert range_summary(fixed)["qualifying"] == 1
    assert range_finding(range_summary(narrow.assign(mean=0.99)), (20,)).startswith("Every size measured here")


def test_pending_figure_names_the_command():
    chart = pending_figure("Dose-response", "dose")
    assert chart.data["line"].tolist() == ["not run yet; fill the table with",
                                           "covlib diversity run --experiments dose --table data/diversity/runs.csv"]


# ----------------------------------------------------------------------------- exercises


def test_exercise_coverage_column_and_its_check(pool):
    plan = dataclasses.replace(SMOKE_PLAN, dose_levels=(150, 250), diversity=(200,), contrast_n=250)
    assert growth_sizes(plan) == [150, 200, 250]
    truth = coverage_column(pool, plan, 3)
    growth = coverage_growth(pool, plan).set_index("n_unique")["coverage k=3"]
    assert truth == growth.to_dict() and truth[250] > 0  # the 9.1 table's own column, at k = 3
    at_5 = coverage_column(pool, plan, 5)
    for n in (150, 250):  # the oracle: coverage by its definition of draw 0 of each size
        train = pool.pool[draw_subset(pool, n, 0)]
        answers = twohop_answers(pool.base.tables, train)
        for k, column in ((3, truth), (5, at_5)):
            assert column[n] == pytest.approx(covered_by_definition(train, answers, SETUP.N, pool.test, k).mean())
    assert at_5[250] <= truth[250]
    assert check_coverage(truth, truth).startswith("right")
    assert check_coverage([round(c, 3) for c in truth.values()], truth).startswith("right")
    assert check_coverage(pd.Series(truth), truth).startswith("right")
    assert check_coverage({**truth, 250: truth[250] + 0.01}, truth).startswith("wrong: your share is at 250 too high.")
    assert f"{truth[250]:.3f}" not in check_coverage({**truth, 250: truth[250] + 0.01}, truth)
    assert check_coverage(list(truth.values())[:2], truth).startswith("wrong")
    assert check_coverage(0.5, truth).startswith("wrong")
    assert "coverage_profile" in check_coverage(None, truth)


def test_exercise_extreme_draws_keep_ties_and_agree_with_the_selection():
    rng = np.random.default_rng(5)
    c = pd.DataFrame({"draw": range(40), "surf_3": rng.integers(0, 4, 40) / 4, "cov_5": rng.random(40),
                      "entropy_t": rng.random(40), "entropy_b": rng.random(40)})
    # the typical candidates by hand: both entropies within their interquartile range
    typical = c[c["entropy_t"].between(*c["entropy_t"].quantile([.25, .75]))
                & c["entropy_b"].between(*c["entropy_b"].quantile([.25, .75]))]
    assert typical_mask(c).sum() == len(typical)
    for column in ("surf_3", "cov_5"):
        truth = extreme_draws(c, column)
        assert truth["low"] == sorted(typical.loc[typical[column] == typical[column].min(), "draw"])
        assert truth["high"] == sorted(typical.loc[typical[column] == typical[column].max(), "draw"])
        arms = select_extremes(c, column, 1)  # what the contrasts would choose is always right
        assert check_extremes((arms["low"][0], arms["high"][0]), truth).startswith("right")
        assert check_extremes((arms["high"][0], arms["low"][0]), truth).startswith("wrong")
        assert "is not the lowest" in check_extremes((arms["high"][0], arms["low"][0]), truth)
    truth = extreme_draws(c, "surf_3")
    assert len(truth["low"]) > 1  # a tie: any of the tied draws is right
    assert check_extremes((truth["low"][-1], truth["high"][0]), truth).startswith("right")
    assert check_extremes(7, truth).startswith("wrong")
    assert "select_extremes" in check_extremes(None, truth)
    with pytest.raises(CovlibError, match="not a column"):
        extreme_draws(c, "cov_99")


def test_the_k3_plan_contrasts_3_coverage_where_random_sets_vary_most():
    from covlib.chapters.ch09_diversity_exposure_coverage.audit import K3_PLAN
    from covlib.cli.diversity import plan_named

    assert plan_named("k3") is K3_PLAN and K3_PLAN.selection_column("coverage") == "cov_3"
    assert K3_PLAN.setup.N == 20 and K3_PLAN.candidates >= 40 * K3_PLAN.per_arm
    pool = make_pool(K3_PLAN.setup)
    assert K3_PLAN.contrast_n == round(0.5 * pool.size)  # the refined cell of data/diversity/coverage_range.csv


def test_a_contrast_says_whether_it_moved_coverage_enough_and_whether_its_runs_learned():
    from covlib.chapters.ch09_diversity_exposure_coverage.stats import contrast_context

    runs = pd.DataFrame({"experiment": "coverage", "selection": ["high"] * 3 + ["low"] * 3, "n_unique": 1304,
                         "steps": 1200, "final_type0": [0.16, 0.16, 0.15, 0.18, 0.17, 0.13]})
    text = contrast_context(runs, {"coverage_gap_between_arms": 13.78}, 15.0)
    assert "The arms reach 15.7% and 16.0% ID accuracy (3 and 3 runs, 1,304 examples, 1,200 steps)" in text
    assert "by 13.8 points, short of the 15 the design aimed at" in text and "near its floor" in text
    learned = contrast_context(runs.assign(final_type0=0.9), {"coverage_gap_between_arms": 16.0}, 15.0)
    assert "by 16.0 points, past the 15 the design aimed at" in learned and "floor" not in learned
    assert contrast_context(runs.iloc[:0], {"coverage_gap_between_arms": float("nan")}, 15.0) == ""


def test_the_longer_plan_retrains_the_k3_contrasts_first_pair_and_shares_its_candidates(tmp_path):
    from covlib.chapters.ch09_diversity_exposure_coverage.audit import K3_LONG_PLAN, K3_PLAN

    small = dataclasses.replace(SMOKE_PLAN, candidates=24, per_arm=3)
    table = tmp_path / "contrast.csv"
    cands = ensure_candidates(small, table)
    longer = dataclasses.replace(small, contrast_steps=5 * small.contrast_steps, pairs=1, candidates_table=str(table))
    assert ensure_candidates(longer, tmp_path / "longer.csv").equals(pd.read_csv(candidates_path(table)))  # read
    assert not candidates_path(tmp_path / "longer.csv").exists()
    first_pair = [r for r in small.runs("coverage", str(table), "w", cands) if r.seed == 0]
    retrained = longer.runs("coverage", str(tmp_path / "longer.csv"), "w", cands)
    assert [(r.selection, r.seed, r.draw) for r in retrained] == [(r.selection, r.seed, r.draw) for r in first_pair]
    assert {r.n_steps for r in retrained} == {5 * small.contrast_steps}
    assert K3_LONG_PLAN.pairs == 1 and K3_LONG_PLAN.contrast_steps > K3_PLAN.contrast_steps
    assert dataclasses.replace(K3_LONG_PLAN, setup=K3_PLAN.setup, contrast_steps=K3_PLAN.contrast_steps, pairs=0,
                               candidates_table="") == K3_PLAN  # only its length, evaluations and pairs differ


def test_longer_training_matches_sets_and_says_whether_they_leave_the_floor():
    from covlib.chapters.ch09_diversity_exposure_coverage.stats import longer_training, longer_training_note

    short = pd.DataFrame({"experiment": "coverage", "selection": ["low", "high", "low", "high"], "seed": [0, 0, 1, 1],
                          "draw": [950, 895, 3, 4], "steps": 1200, "final_type0": [0.15, 0.16, 0.2, 0.2]})
    long = pd.DataFrame({"experiment": "coverage", "selection": ["low", "high"], "seed": 0, "draw": [950, 895],
                         "coverage": [0.571, 0.694], "steps": 8000, "final_type0": [0.14, 0.159],
                         "best_type0": [0.16, 0.178], "final_train": [1.0, 1.0]})
    table = longer_training(short, long)
    assert table[["draw", "acc_short", "acc_long", "best_long"]].values.tolist() == [[950, 0.15, 0.14, 0.16],
                                                                                    [895, 0.16, 0.159, 0.178]]
    note = longer_training_note(table)
    assert "the high arm's set (69.4% 3-covered): 16.0% at 1,200 steps, 15.9% at 8,000 (best 17.8%)" in note
    assert "Neither set leaves the floor" in note and "follows diversity" in note
    assert "still might" in longer_training_note(table.assign(train_long=[0.8, 1.0]))
    assert "leaves the floor with more steps" in longer_training_note(table.assign(best_long=[0.2, 0.7]))
    assert "not in the cache" in longer_training_note(longer_training(short, long.iloc[:0]))


def test_arm_summary_says_where_each_arm_stands_and_whether_both_sit_at_the_floor():
    from covlib.chapters.ch09_diversity_exposure_coverage.stats import FLOOR_ACCURACY, arm_summary, leaves_floor

    runs = pd.DataFrame({"experiment": "coverage", "selection": ["high"] * 3 + ["low"] * 2,
                         "final_type0": [0.16, 0.17, 0.18, 0.2, 0.1]})
    assert arm_summary(runs) == {"acc_high": pytest.approx(0.17), "acc_low": pytest.approx(0.15), "runs_per_arm": 2,
                                 "at_floor": True}
    assert not arm_summary(runs.assign(final_type0=[0.9, 0.9, 0.9, 0.2, 0.2]))["at_floor"]
    assert arm_summary(runs[runs.selection == "high"])["runs_per_arm"] == 0
    table = pd.DataFrame({"best_long": [0.2, FLOOR_ACCURACY]})
    assert leaves_floor(table) and not leaves_floor(table.assign(best_long=0.3)) and not leaves_floor(table.iloc[:0])


def test_the_wide_plan_chooses_the_k3_contrast_among_ten_times_as_many_sets_and_reaches_the_bar():
    from covlib.chapters.ch09_diversity_exposure_coverage.audit import K3_PLAN, K3_WIDE_PLAN, K3_WIDE_TABLE
    from covlib.chapters.ch09_diversity_exposure_coverage.coverage_range import MIN_CONTRAST_GAP
    from covlib.cli.diversity import plan_named

    assert plan_named("k3_wide") is K3_WIDE_PLAN
    assert dataclasses.replace(K3_WIDE_PLAN, candidates=K3_PLAN.candidates) == K3_PLAN
    cands = pd.read_csv(candidates_path(repository_path(K3_WIDE_TABLE)))  # the committed scores
    assert len(cands) == K3_WIDE_PLAN.candidates and (cands["n_unique"] == K3_WIDE_PLAN.contrast_n).all()
    arms = select_extremes(cands, "cov_3", K3_WIDE_PLAN.per_arm)
    by_draw = cands.set_index("draw")["cov_3"]
    gap = 100 * (by_draw[arms["high"]].mean() - by_draw[arms["low"]].mean())
    assert gap >= MIN_CONTRAST_GAP


def test_each_contrasts_train_command_parses_to_its_own_plan_and_table():
    import shlex

    from covlib.chapters.ch09_diversity_exposure_coverage.audit import K3_CONTRASTS, train_command
    from covlib.cli.diversity import plan_named
    from covlib.cli.main import build_parser

    for name, (plan, table) in K3_CONTRASTS.items():
        args = build_parser("diversity").parse_args(shlex.split(train_command(name))[1:])
        assert (args.action, args.table, args.experiments) == ("run", table, ["coverage"])
        assert plan_named(args.plan) is plan
    with pytest.raises(CovlibError, match="unknown contrast 'k4'; choose one of: k3, k3_long, k3_wide"):
        train_command("k4")


def _dot_positions(chart) -> list[tuple[float, float]]:
    """Where a chart draws its dots (x, y in its plot's own coordinates), from the SVG vl-convert renders."""
    svg = vlc.vegalite_to_svg(chart.to_dict())
    groups = re.findall(r'<g class="mark-symbol role-mark[^"]*"[^>]*>(.*?)</g>', svg, flags=re.S)
    return [(float(x), float(y)) for group in groups
            for x, y in re.findall(r'transform="translate\(([-\d.]+),([-\d.]+)\)"', group)]


def test_the_contrast_charts_keep_their_extreme_points_off_the_plots_edges():
    """Values that end exactly on a nice number (0.76, 0.85) would sit on the plot's edge without padding."""
    n = 40
    rng = np.random.default_rng(0)
    candidates = pd.DataFrame({"draw": range(n), "cov_8": np.r_[0.59, 0.73, rng.uniform(0.6, 0.72, n - 2)],
                               "surf_9": np.r_[0.68, 0.76, rng.uniform(0.69, 0.75, n - 2)], "entropy_t": 1.0,
                               "entropy_b": 1.0, "n_unique": 4500})
    arms = {"coverage": {"low": [2], "high": [3]}, "surface": {"low": [4], "high": [1]}}
    dots = _dot_positions(candidates_chart(candidates, "cov_8", "surf_9", arms))
    assert len(dots) == n
    xs, ys = [x for x, _ in dots], [y for _, y in dots]
    assert min(xs) >= 5 and max(xs) <= 380 - 5 and min(ys) >= 5 and max(ys) <= 260 - 5
    runs = pd.DataFrame({"experiment": ["coverage"] * 4 + ["surface"] * 4, "selection": ["low", "high"] * 4,
                         "seed": [0, 0, 1, 1] * 2, "draw": range(8), "n_unique": 4500,
                         ACC: [0.30, 0.85, 0.50, 0.60, 0.40, 0.70, 0.45, 0.55], "coverage_sel": 0.6,
                         "surface_sel": 0.7})
    ys = [y for _, y in _dot_positions(contrast_chart(runs))]
    assert len(ys) == 8 and min(ys) >= 5 and max(ys) <= 240 - 5
