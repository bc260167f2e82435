"""The required-data search against a synthetic world where success is known: for many thresholds and pools
the search ends, its bracket holds the threshold, and the bracket meets the rule; and a real training run
gives up by the authors' rule."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from covlib.base.errors import CovlibError
from covlib.search.cells import POLICIES, Cell, SearchRules
from covlib.search.required_data import next_probe
from covlib.tasks.datasets import DatasetConfig, ensure_dataset
from covlib.training.loop import train

CELL = Cell("twohop", 30)


def run_search(threshold_n: int, eligible: int, start: int, rules: SearchRules, limit: int = 80):
    """Walk next_probe to its end in a world where a probe succeeds iff n_train >= threshold_n."""
    rows = pd.DataFrame(columns=["n_train", "success", "stopped", "step_cap", "best_type0"])
    for _ in range(limit):
        state = next_probe(CELL, rows, eligible, rules, start)
        if state.next_n is None:
            return state, len(rows)
        assert state.next_n not in set(rows["n_train"]), "the search probed the same size twice"
        success = state.next_n >= threshold_n
        new = pd.DataFrame([{"n_train": state.next_n, "success": success, "stopped": "early_stop" if success
                             else "gave_up", "step_cap": 6000,
                             "best_type0": min(0.99, (state.next_n / threshold_n) ** 4)}])  # closer: more accurate
        rows = pd.concat([rows, new], ignore_index=True) if len(rows) else new
        rows["success"] = rows["success"].astype(bool)
    raise AssertionError(f"no end after {limit} probes (threshold {threshold_n}, pool {eligible}, start {start})")


@pytest.mark.parametrize(("seed", "policy"), [(s, "bisect") for s in range(4)] + [(s, p) for p in POLICIES[1:] for s in range(2)])
def test_the_search_ends_with_a_bracket_around_the_threshold(seed, policy):
    rng = np.random.default_rng(seed)
    rules = SearchRules(policy=policy)
    for _ in range(40 if policy == "psi" else 300):  # psi designs each probe on a grid posterior: slower per probe
        eligible = int(rng.integers(200, 200_000))
        most = rules.largest_n(eligible)
        threshold_n = int(rng.integers(rules.min_n + 1, most + 1))
        start = int(rng.integers(1, eligible))
        state, probes = run_search(threshold_n, eligible, start, rules)
        assert state.status == "bracketed", (threshold_n, eligible, start, state.status)
        assert state.low < threshold_n <= state.high
        assert state.high / state.low <= rules.bracket_ratio or state.high - state.low <= 1
        assert state.high <= most and probes < 40


def test_the_guided_policy_reads_how_close_a_failure_came():
    rules = SearchRules(policy="guided")
    assert next_probe(CELL, pd.DataFrame(columns=["n_train", "success"]), 20_000, rules, 1000).next_n == round(
        1000 * np.sqrt(rules.bracket_ratio))  # just above the guess
    near = pd.DataFrame({"n_train": [1000], "success": [False], "best_type0": [0.97]})
    far = near.assign(best_type0=0.3)
    assert next_probe(CELL, near, 20_000, rules, 1000).next_n == round(1000 * rules.bracket_ratio)
    assert next_probe(CELL, far, 20_000, rules, 1000).next_n == round(1000 * rules.step_factor)
    assert next_probe(CELL, far, 20_000, SearchRules(), 1000).next_n == round(1000 * rules.step_factor)
    with pytest.raises(CovlibError, match="unknown search policy 'oracle'"):
        SearchRules(policy="oracle")


def test_a_threshold_beyond_the_largest_testable_size_is_unreachable():
    rules = SearchRules()
    for eligible in (500, 3_000, 40_000):
        state, _ = run_search(10**9, eligible, start=eligible // 10, rules=rules)
        assert state.status == "unreachable" and state.low == rules.largest_n(eligible)


def test_success_at_the_smallest_size_ends_below_min():
    rules = SearchRules(min_n=16)
    state, _ = run_search(5, 10_000, start=3_000, rules=rules)
    assert state.status == "below_min" and state.high == rules.min_n and state.low is None


def test_adjacent_sizes_end_the_search_when_the_ratio_cannot_shrink():
    rules = SearchRules(min_n=2, bracket_ratio=1.1)
    state, _ = run_search(4, 10_000, start=3, rules=rules)  # 3 fails, 4 succeeds: ratio 1.33 > 1.1, but adjacent
    assert state.status == "bracketed" and (state.low, state.high) == (3, 4)


def test_a_failure_the_step_cap_stopped_is_probed_again_under_a_higher_cap():
    rows = pd.DataFrame({"n_train": [1000, 1600], "success": [False, False], "stopped": ["gave_up", "steps"],
                         "step_cap": [6000, 6000]})
    rules = SearchRules()
    assert next_probe(CELL, rows, 100_000, rules, 1000, step_cap=12_000).next_n == 1600  # reopened
    assert next_probe(CELL, rows, 100_000, rules, 1000, step_cap=6000).next_n == round(1600 * rules.step_factor)
    decided = rows.assign(stopped="gave_up")
    assert next_probe(CELL, decided, 100_000, rules, 1000, step_cap=12_000).next_n == round(1600 * rules.step_factor)


@pytest.mark.slow
def test_a_real_run_gives_up_by_the_rule_when_it_fits_without_generalising(tmp_path):
    """An unreachable threshold: training fits its set, then stops give_up_epochs later, not at the budget."""
    folder = ensure_dataset(DatasetConfig("twohop", 8, 120, seed=0, test_size_per_type=50), tmp_path)
    result = train(folder, tmp_path / "run", preset="smoke",
                   overrides={"steps": 3000, "early_stop": True, "threshold": 1.01, "give_up_epochs": 20,
                              "eval_every": 10, "batch_size": 64}, progress=False)
    metrics = result.metrics
    fitted = metrics.loc[metrics["acc/train_inferred"] >= result.config.train.fit_threshold, "step"]
    assert result.stopped == "gave_up" and len(fitted)
    last = int(metrics["step"].iloc[-1])
    assert last < 3000
    assert (last - fitted.iloc[0]) * 64 >= 20 * 120 > (last - 10 - fitted.iloc[0]) * 64  # the first evaluation past 20 epochs
