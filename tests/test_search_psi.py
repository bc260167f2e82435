"""The psi search policy on synthetic outcomes (no training): it converges on a known threshold, proposes distinct
pairs inside the pool, resumes from a table of any policy's probes, and its estimator is the logistic fit's."""
from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

import covlib.search.required_data as required_data
from covlib.analyses.success_curve import cell_estimate
from covlib.base.errors import CovlibError
from covlib.search.cells import Cell, SearchRules
from covlib.search.probes import append_probe, read_probes
from covlib.search.psi import (
    ProbeCosts,
    PsiPrior,
    design,
    fit_probe_costs,
    interval_ratio,
    log_posterior,
    logistic_estimate,
    theta_grid,
)
from covlib.search.required_data import cell_state, next_probe, psi_prior

CELL = Cell("twohop", 30)
PSI = SearchRules(policy="psi")


def noisy_search(threshold: float, eligible: int, prior: PsiPrior, rules: SearchRules = PSI, seed: int = 0,
                 slope: float | None = None, limit: int = 30):
    """Walk the psi policy to its end; a probe at n succeeds with P = logistic(slope (log n - log threshold)), both
    probes of each proposed pair run before the policy looks again."""
    rng = np.random.default_rng(seed)
    slope = rules.psi_slope if slope is None else slope
    rows = pd.DataFrame({"n_train": pd.Series(dtype=int), "success": pd.Series(dtype=bool)})
    for _ in range(limit):
        state = next_probe(CELL, rows, eligible, rules, 0, prior=prior)
        if state.next_n is None:
            return state, rows
        assert state.pair and state.pair[0] == state.next_n
        assert len(set(state.pair)) == len(state.pair), "a pair names one size twice"
        assert not set(state.pair) & set(rows["n_train"]), "a probe repeated a size already probed"
        for n in state.pair:
            assert rules.min_n <= n <= rules.largest_n(eligible)
        new = pd.DataFrame({"n_train": list(state.pair),
                            "success": rng.random(len(state.pair)) < expit(slope * np.log(np.asarray(state.pair)
                                                                                          / threshold))})
        rows = pd.concat([rows, new], ignore_index=True)
    raise AssertionError(f"no end after {limit} rounds")


@pytest.mark.parametrize("seed", range(6))
def test_psi_converges_on_a_known_threshold_under_noise(seed):
    rng = np.random.default_rng(100 + seed)
    threshold = float(np.exp(rng.uniform(np.log(200), np.log(20_000))))
    guess = threshold * np.exp(rng.normal(0, 0.5))  # a guess up to a few times off
    state, rows = noisy_search(threshold, 200_000, PsiPrior(guess, 1.0), seed=seed)
    assert state.status == "bracketed"
    assert len(rows) <= PSI.max_probes + 1
    theta, low, high = logistic_estimate(np.log(rows["n_train"]), rows["success"], PSI.psi_slope)
    if len(rows) < PSI.max_probes:  # ended on its interval, not its budget
        assert np.exp(high - low) <= PSI.bracket_ratio
    assert abs(theta - np.log(threshold)) < 0.25  # within 1.3x of the truth (its interval is ~1.3x wide)


def test_psi_finds_exact_thresholds_inside_small_and_large_pools():
    rules = SearchRules(policy="psi", psi_slope=1000.0)  # nearly exact outcomes
    rng = np.random.default_rng(5)
    for _ in range(12):
        eligible = int(rng.integers(200, 200_000))
        most = rules.largest_n(eligible)
        threshold = int(rng.integers(rules.min_n + 2, int(most / 1.02)))  # a size clearly inside the pool
        state, rows = noisy_search(threshold, eligible, PsiPrior(float(rng.integers(rules.min_n, most)), 1.0), rules)
        assert state.status == "bracketed", (threshold, eligible)
        assert state.low < threshold <= state.high


def test_psi_respects_the_pool_and_min_n():
    rules = SearchRules(policy="psi", psi_slope=200.0)
    # n_req beyond the largest size the pool allows: it ends on a failure there, never probing past it
    state, rows = noisy_search(5_000, 4_000, PsiPrior(3_000, 0.3), rules)
    assert state.status == "unreachable" and rows["n_train"].max() == rules.largest_n(4_000)
    # n_req below min_n: it ends on a success at min_n
    state, rows = noisy_search(5, 4_000, PsiPrior(100, 0.5), rules)
    assert state.status == "below_min" and rows["n_train"].min() == rules.min_n


def test_pairs_are_distinct_and_a_running_probe_gets_its_partner():
    grid = theta_grid(PSI, 100_000)
    post = log_posterior(grid, PsiPrior(3_000, 0.3), np.zeros(0), np.zeros(0, bool), PSI.psi_slope)
    sizes = np.unique(np.round(np.exp(np.linspace(np.log(1_000), np.log(9_000), 30))).astype(int))
    for criterion in ("information", "entropy"):
        a, b = design(grid, post, PSI.psi_slope, ProbeCosts(), sizes, criterion=criterion)
        assert a != b
        assert design(grid, post, PSI.psi_slope, ProbeCosts(), sizes[sizes != a], pending=[a],
                      criterion=criterion) == (b,)
        single = design(grid, post, PSI.psi_slope, ProbeCosts(), sizes, pair=False, criterion=criterion)
        assert len(single) == 1 and abs(np.log(single[0] / 3_000)) < 0.2  # near the prior's centre


def test_cheaper_sizes_win_when_information_is_alike():
    grid = theta_grid(PSI, 100_000)
    post = log_posterior(grid, PsiPrior(3_000, 0.5), np.zeros(0), np.zeros(0, bool), PSI.psi_slope)
    sizes = np.unique(np.round(np.exp(np.linspace(np.log(1_000), np.log(9_000), 30))).astype(int))
    plain = design(grid, post, PSI.psi_slope, ProbeCosts(), sizes, pair=False)[0]
    cheap_success = ProbeCosts(success_shift=-1.0, success_x=(-1.0, 1.0))  # a success costs e^-1 of a failure
    assert design(grid, post, PSI.psi_slope, cheap_success, sizes, pair=False)[0] > plain


def test_psi_resumes_from_a_table_of_older_probes(tmp_path):
    table = tmp_path / "probes.csv"
    base = {"task": "twohop", "N": 30, "model": "L4-d128", "params": 1, "seed": 0, "eligible": 20_000,
            "stopped": "gave_up", "steps": 500, "best_type0": 0.5, "final_type0": 0.5, "final_train": 1.0,
            "first_fit_step": 100, "minutes": 5.0, "threshold": 0.99, "give_up_epochs": 100.0, "step_cap": 6000,
            "cot": False, "weight_decay": 0.1, "give_up_floor": 0}
    for n, ok in ((2_000, False), (3_200, True)):  # a bisect search's two probes, before the policy column existed
        append_probe(table, base | {"n_train": n, "success": ok, "stopped": "early_stop" if ok else "gave_up"})
    frame = pd.read_csv(table).drop(columns=["policy"])
    frame.to_csv(table, index=False)
    probes = read_probes(table)
    assert list(probes["policy"]) == ["bisect", "bisect"]
    state = cell_state(CELL, probes, PSI, None, None)
    assert state.status == "searching" and 2_000 < state.next_n < 3_200  # it reads both and probes between them
    assert len(state.pair) == 2 and len(set(state.pair)) == 2
    append_probe(table, base | {"n_train": state.next_n, "success": True, "policy": "psi"})
    again = read_probes(table)
    assert set(again["policy"]) == {"bisect", "psi"}
    after = cell_state(CELL, again, PSI, None, None)
    assert after.next_n is None or after.next_n not in set(again["n_train"])
    assert cell_state(CELL, again, SearchRules(), None, None).low == 2_000  # and bisect reads psi's probes alike


def test_the_prior_reads_the_neighbours_and_a_given_start():
    rows = pd.DataFrame({"task": "twohop", "N": 30, "model": "L4-d128", "seed": 1, "cot": False, "eligible": 20_000,
                         "n_train": [2_000, 2_400], "success": [False, True], "give_up_floor": 0})
    prior = psi_prior(CELL, rows, PSI)
    assert prior.source == "seed" and prior.centre == pytest.approx(np.sqrt(2_000 * 2_400), rel=1e-3)
    assert psi_prior(CELL, rows, PSI, start=900) == PsiPrior(900.0, 1.0, "start")


def test_the_estimator_is_the_logistic_fits_where_its_glm_converges():
    rng = np.random.default_rng(3)
    checked = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(60):
            x = np.sort(rng.uniform(6, 9, 8))
            y = rng.random(8) < 1 / (1 + np.exp(-4 * (x - 7.5)))  # a gentle slope: outcomes overlap
            if y.all() or not y.any():
                continue
            theta, low, high = logistic_estimate(x, y, 4.0, 0.90)
            ref = cell_estimate(x, y, 4.0, (0.90,))
            assert theta == pytest.approx(ref["theta"], abs=1e-4)
            assert (low, high) == pytest.approx((ref["low_90"], ref["high_90"]), abs=1e-4)
            checked += 1
    assert checked > 20
    assert interval_ratio(np.log([100.0, 200.0]), [True, True], 17.0) == np.inf  # one outcome: no interval


def test_probe_costs_read_outcome_and_distance_from_n_req():
    rows = []
    for N in (20, 25, 30):
        n_req = 100 * N
        for n, ok in ((0.8, False), (0.9, False), (1.1, True), (1.5, True), (2.0, True)):
            minutes = (10.0 if not ok else 10.0 * (n / 1.1) ** -2) * N / 20
            rows.append({"task": "twohop", "N": N, "model": "L4-d128", "seed": 0, "cot": False,
                         "n_train": int(n * n_req), "success": ok, "minutes": minutes})
    costs = fit_probe_costs(pd.DataFrame(rows))
    model = costs[("twohop", False, "L4-d128")]
    assert model.success_slope == pytest.approx(-2.0, abs=0.1)  # a success well above n_req stops early
    assert model.minutes(np.log(2_000), np.log(1_000), True) < model.minutes(np.log(1_050), np.log(1_000), True)
    assert len(model.levels) == 3


def test_an_unknown_policy_or_slope_is_refused():
    with pytest.raises(CovlibError, match="psi"):
        SearchRules(policy="quest")
    with pytest.raises(CovlibError, match="slope"):
        SearchRules(policy="psi", psi_slope=0.0)


def fake_run(probe, ok: bool) -> dict:
    """A probe's row with outcome ``ok`` appended to its table, as run_probe would (no training)."""
    row = {"task": probe.cell.task, "N": probe.cell.N, "model": probe.cell.model, "params": 1,
           "seed": probe.cell.seed, "n_train": probe.n_train, "eligible": probe.eligible, "success": ok,
           "stopped": "early_stop" if ok else "gave_up", "steps": 500, "best_type0": 0.5, "final_type0": 0.5,
           "final_train": 1.0, "first_fit_step": 100, "minutes": 10.0 if not ok else 4.0, "threshold": 0.99,
           "give_up_epochs": 100.0, "step_cap": 6000, "cot": False, "weight_decay": 0.1, "give_up_floor": 0,
           "policy": probe.policy}
    append_probe(probe.table, row)
    return row


def test_the_search_runs_psi_records_it_in_each_row_and_resumes(tmp_path, monkeypatch):
    """search() with the psi policy on a synthetic world (run_probe replaced: no training): each row says psi, a
    second call resumes from the table, and the cell ends with its interval inside the target."""
    threshold = 3_000

    monkeypatch.setattr(required_data, "run_probe", lambda probe: fake_run(probe, probe.n_train >= threshold))
    monkeypatch.setattr(required_data, "backfill_curves", lambda table, work: 0)
    cell = Cell("twohop", 30, start=2_000)
    table = tmp_path / "probes.csv"
    first = required_data.search([cell], table, tmp_path / "w", search_rules=PSI, max_probes=2, log=None)
    assert first.probes_run == 2 and set(read_probes(table)["policy"]) == {"psi"}
    done = required_data.search([cell], table, tmp_path / "w", search_rules=PSI, log=None)
    probes = read_probes(table)
    assert done.states[0].status == "bracketed" and done.states[0].low < threshold <= done.states[0].high
    assert len(probes) == 2 + done.probes_run and probes["n_train"].is_unique
    assert interval_ratio(np.log(probes["n_train"]), probes["success"], PSI.psi_slope) <= PSI.bracket_ratio


def test_a_psi_search_finishes_the_probes_an_interrupted_one_left_part_trained(tmp_path, monkeypatch):
    """psi picks a probe's partner from what runs beside it, so after a restart it would choose new sizes and waste
    the checkpoints of the old; the search finishes those first (the one nearest its own choice), and ignores
    checkpoints of other cells, of other rules and of probes whose row is already in the table."""
    from covlib.search.cells import Probe, ProbeRules

    cell = Cell("twohop", 30, start=2_000)
    table, work = tmp_path / "probes.csv", tmp_path / "w"

    def left_part_trained(n: int, c: Cell = cell, rules: ProbeRules = ProbeRules()) -> None:
        run = Probe(c, n, 4000, rules, str(table), str(work)).run_dir()
        run.mkdir(parents=True)
        (run / "checkpoint.pt").write_bytes(b"")

    for n in (1_700, 2_900):
        left_part_trained(n)
    left_part_trained(2_100, Cell("twohop", 30, seed=1))  # another cell
    left_part_trained(2_050, rules=ProbeRules(give_up_floor=2000))  # another rule
    (Probe(cell, 2_200, 4000, ProbeRules(), str(table), str(work)).run_dir()).mkdir(parents=True)  # no checkpoint
    template = Probe(cell, 2_000, 4000, ProbeRules(), str(table), str(work))
    assert template.interrupted_sizes() == [1_700, 2_900]
    started = []

    def finish(probe):
        started.append(probe.n_train)
        (probe.run_dir() / "checkpoint.pt").unlink(missing_ok=True)
        return fake_run(probe, probe.n_train >= 2_500)

    monkeypatch.setattr(required_data, "run_probe", finish)
    monkeypatch.setattr(required_data, "backfill_curves", lambda table, work: 0)
    required_data.search([cell], table, work, search_rules=PSI, max_probes=3, log=None)
    assert sorted(started[:2]) == [1_700, 2_900] and started[2] not in (1_700, 2_900)
    assert template.interrupted_sizes() == []
    rows = read_probes(table)
    assert required_data.resume_first(template, rows) is None
    left_part_trained(2_400)
    left_part_trained(3_100)
    assert required_data.resume_first(dataclasses.replace(template, n_train=3_000), rows) == 3_100
    assert required_data.resume_first(dataclasses.replace(template, n_train=3_000), rows, pending=[3_100]) == 2_400
