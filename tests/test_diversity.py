"""The diversity / exposure / coverage audit (chapter 9): pools, measures, selection, runs and statistics."""
from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from covlib.base.errors import CovlibError
from covlib.base.tables import read_table, upsert_row
from covlib.chapters.ch09_diversity_exposure_coverage.audit import (
    SMOKE_PLAN,
    AuditSetup,
    candidates_path,
    coverage_profile,
    draw_subset,
    ensure_candidates,
    entropy,
    make_pool,
    pending,
    run_audit,
    select_extremes,
    spread_by_threshold,
    subset_dataset,
    surface_profile,
)
from covlib.chapters.ch09_diversity_exposure_coverage.stats import (
    ACC,
    contrast,
    dose_curve,
    dose_response,
    escape_logit,
    escape_mixture,
    exposure_effect,
    factorial_anova,
    separating_factor,
)
from covlib.coverage.exact import k_cutoffs

SETUP = AuditSetup(N=10, test_size=100, model="smoke", batch_size=64, evals=2)


@pytest.fixture(scope="module")
def pool():
    return make_pool(SETUP)


def test_pool_and_test_are_id_disjoint_and_fixed(pool):
    codes = lambda a: set(map(tuple, a.tolist()))  # noqa: E731
    assert not codes(pool.pool) & codes(pool.test)
    assert len(pool.test) == SETUP.test_size
    types = pool.base.type_names(np.concatenate([pool.pool, pool.test]))
    assert set(types) == {"type_0"}  # every pool and test input uses seen facts only
    again = make_pool(SETUP)
    assert np.array_equal(again.pool, pool.pool) and np.array_equal(again.test, pool.test)


def test_draws_are_deterministic_distinct_and_checked(pool):
    a, b = draw_subset(pool, 50, 0), draw_subset(pool, 50, 1)
    assert np.array_equal(a, draw_subset(pool, 50, 0)) and not np.array_equal(a, b)
    assert len(np.unique(a)) == 50
    with pytest.raises(CovlibError, match="n_unique"):
        draw_subset(pool, pool.size + 1, 0)


def test_coverage_profile_is_the_exact_coverage_of_the_test_items(pool):
    train = pool.pool[draw_subset(pool, 150, 0)]
    prof = coverage_profile(pool, train, [1, 3, 5])
    cut = k_cutoffs(train, pool.base.evaluate(train)["t"], SETUP.N, queries=pool.test)
    assert prof == {k: float((cut >= k).mean()) for k in (1, 3, 5)}
    assert prof[1] >= prof[3] >= prof[5]


def test_surface_profile_counts_pairs_per_hop(pool):
    train = pool.pool[:3]
    prof = surface_profile(pool, train, [1, 2])
    tv, qv = pool.base.evaluate(train), pool.base.evaluate(pool.test)
    x12 = {(a, b) for a, b in zip(tv["x1"], tv["x2"])}
    bx3 = {(a, b) for a, b in zip(tv["b1"], tv["x3"])}
    share1 = np.mean([(a, b) in x12 for a, b in zip(qv["x1"], qv["x2"])])
    share2 = np.mean([(a, b) in bx3 for a, b in zip(qv["b1"], qv["x3"])])
    assert prof[1] == pytest.approx((share1 + share2) / 2)
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
    for r in fact:  # budget = diversity x exposure
        assert r.n_steps == int(np.ceil(r.n_unique * r.exposure / plan.setup.batch_size))
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


def test_anova_separates_a_real_factor_from_a_null_one():
    rng = np.random.default_rng(1)
    rows = [{"n_unique": n, "exposure": e, "final_type0": 0.1 * i + rng.normal(0, 0.01)}
            for i, n in enumerate([100, 200, 400, 800]) for e in (10.0, 20.0, 40.0) for _ in range(5)]
    table = factorial_anova(pd.DataFrame(rows))
    assert table.loc["diversity", "partial_eta2"] > 0.95
    assert table.loc["exposure", "partial_eta2"] < 0.2
    assert table.loc["diversity", "p"] < 1e-6


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
