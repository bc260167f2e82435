"""The search for required data (covlib.search): bracket logic, the probe table, fits, and a real miniature search."""
from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from covlib.analyses.fits import power_fit
from covlib.base.errors import CovlibError
from covlib.cli.main import main
from covlib.coverage.requirement import coverage_requirement, first_crossing, probe_coverage_by_k
from covlib.search.cells import Cell, ProbeRules, SearchRules
from covlib.search.experiments import BOOK_EXPERIMENTS, BOOK_TABLE, cells_for, experiment_cells, experiment_command
from covlib.search.probes import (
    PROBE_COLUMNS,
    append_probe,
    backfill_curves,
    cell_rows,
    curves_path,
    read_curve,
    read_probes,
)
from covlib.search.required_data import COT_START_DIVISOR, _check_rules, _law_estimate, first_guess, next_probe, search
from covlib.search.summary import bracket_pair, requirement_ratio, seed_spread, summarise
from covlib.training.config import TrainConfig
from covlib.training.loop import gave_up
from covlib.training.shapes import model_overrides

RULES = SearchRules(step_factor=2.0, bracket_ratio=1.3, min_n=10)
CELL = Cell("twohop", 20, "smoke", 0)
TINY = ProbeRules(step_cap=300, give_up_epochs=20, eval_every=25, batch_size=128, test_size_per_type=200)


def rows(*probes: tuple[int, bool]) -> pd.DataFrame:
    return pd.DataFrame({"n_train": [n for n, _ in probes], "success": [ok for _, ok in probes]})


def test_first_probe_is_the_start_clipped_to_the_pool():
    assert next_probe(CELL, rows(), 1000, RULES, start=300).next_n == 300
    assert next_probe(CELL, rows(), 1000, RULES, start=5000).next_n == 750  # a quarter of the pool is kept to test
    assert next_probe(CELL, rows(), 10_000, RULES, start=50_000).next_n == 9000  # ... at most min_test_items
    assert next_probe(CELL, rows(), 1000, RULES, start=3).next_n == 10


def test_a_new_model_starts_from_another_models_finished_bracket():
    def probe(model, n, ok, N=20):
        return {"task": "twohop", "N": N, "model": model, "seed": 0, "cot": False, "n_train": n, "success": ok,
                "eligible": 3000}

    table = pd.DataFrame([probe("L4-d128", 1000, False), probe("L4-d128", 1200, True),
                          probe("L2-d64", 800, False), probe("L2-d64", 1600, True),  # not bracketed: ignored
                          probe("L4-d128", 100, False, N=8)])  # another N: ignored
    cell = Cell("twohop", 20, "L4-d256", 0)
    assert first_guess(cell, table, RULES) == round(np.sqrt(1000 * 1200))
    table = pd.concat([table, pd.DataFrame([probe("L6-d256", 1300, False), probe("L6-d256", 1500, True)])])
    expected = np.exp(np.mean(np.log([np.sqrt(1000 * 1200), np.sqrt(1300 * 1500)])))
    assert first_guess(cell, table, RULES) == round(expected)


def test_a_second_seed_starts_from_the_first_seeds_bracket_when_no_other_model_has_one():
    def probe(seed, n, ok, model="L4-d128", cot=True):
        return {"task": "fivehop", "N": 7, "model": model, "seed": seed, "cot": cot, "n_train": n, "success": ok,
                "eligible": 19734}

    table = pd.DataFrame([probe(0, 610, False), probe(0, 771, True), probe(2, 300, False)])  # seed 2: unfinished
    seed1 = Cell("fivehop", 7, "L4-d128", 1, cot=True)
    assert first_guess(seed1, table, RULES) == round(np.sqrt(610 * 771))
    # another model's estimate for the same seed comes first; plain rows never stand in for CoT ones
    table = pd.concat([table, pd.DataFrame([probe(1, 500, False, "L2-d64"), probe(1, 600, True, "L2-d64"),
                                            probe(0, 5000, False, cot=False), probe(0, 6000, True, cot=False)])])
    assert first_guess(seed1, table, RULES) == round(np.sqrt(500 * 600))
    assert first_guess(Cell("fivehop", 7, "L4-d128", 1), table, RULES) == round(np.sqrt(5000 * 6000))


def test_a_new_N_starts_from_the_power_law_through_the_models_other_N():
    def law(N):
        return 3.0 * N**2.5

    def bracket(N, seed, cot=False, model="L4-d128"):  # failure and success 1.1x either side of the law
        return [{"task": "threehop", "N": N, "model": model, "seed": seed, "cot": cot, "n_train": round(law(N) * f),
                 "success": f > 1, "eligible": 10**6} for f in (1 / 1.1, 1.1)]

    table = pd.DataFrame(bracket(12, 0) + bracket(12, 1) + bracket(16, 0) + bracket(14, 1, model="L2-d64")
                         + bracket(14, 0, cot=True) + bracket(18, 0, cot=True))
    cell = Cell("threehop", 20, "L4-d128", 0)
    assert first_guess(cell, table, RULES) == pytest.approx(law(20), rel=1e-3)
    # another model's rows and CoT rows are not the cell's law: with them alone there is one N, so no law
    assert _law_estimate(table[table["N"] != 16], cell, RULES) is None
    # a CoT cell reads the CoT rows (their law, here the same one)
    assert _law_estimate(table, Cell("threehop", 20, "L4-d128", 1, cot=True), RULES) == pytest.approx(law(20), rel=1e-3)


def test_steps_up_after_failures_and_down_after_successes():
    assert next_probe(CELL, rows((300, False)), 1000, RULES, 300).next_n == 600
    assert next_probe(CELL, rows((300, False), (600, False)), 1000, RULES, 300).next_n == 750
    assert next_probe(CELL, rows((300, True)), 1000, RULES, 300).next_n == 150


def test_bisects_a_bracket_then_stops_when_tight():
    s = next_probe(CELL, rows((150, False), (300, True)), 1000, RULES, 300)
    assert (s.low, s.high, s.next_n, s.status) == (150, 300, 212, "searching")
    s = next_probe(CELL, rows((150, False), (212, False), (300, True), (250, True)), 1000, RULES, 300)
    assert (s.low, s.high, s.next_n, s.status) == (212, 250, None, "bracketed")
    assert s.estimate == pytest.approx(np.sqrt(212 * 250))


def test_a_failure_at_the_largest_testable_size_is_unreachable_and_inversions_are_counted():
    s = next_probe(CELL, rows((500, False), (750, False)), 1000, RULES, 500)
    assert (s.status, s.next_n, s.low) == ("unreachable", None, 750)
    s = next_probe(CELL, rows((500, False), (999, True)), 1000, RULES, 500)  # past the cap: ignored
    assert (s.status, s.next_n, s.high) == ("searching", 750, None)
    s = next_probe(CELL, rows((100, False), (120, True), (200, False)), 1000, RULES, 100)
    assert (s.low, s.high, s.inversions, s.status) == (100, 120, 1, "bracketed")


def test_a_higher_step_cap_reopens_only_the_capped_failures_the_search_rests_on():
    def table(*probes: tuple[int, bool, str]) -> pd.DataFrame:
        return pd.DataFrame({"n_train": [n for n, _, _ in probes], "success": [ok for _, ok, _ in probes],
                             "stopped": [how for _, _, how in probes], "step_cap": 6000})

    capped_top = table((150, False, "gave_up"), (300, False, "steps"))
    assert next_probe(CELL, capped_top, 1000, RULES, 150).next_n == 600  # same cap: a failure, step up
    assert next_probe(CELL, capped_top, 1000, RULES, 150, step_cap=6000).next_n == 600
    assert next_probe(CELL, capped_top, 1000, RULES, 150, step_cap=12000).next_n == 300  # probe it again first
    # a capped failure inside a wide bracket is only a provisional lower end: bisect first ...
    wide = table((150, False, "steps"), (300, True, "early_stop"))
    assert next_probe(CELL, wide, 1000, RULES, 150, step_cap=12000).next_n == 212
    # ... and reopen it only when the search would end on it
    tight = table((150, False, "steps"), (180, True, "early_stop"), (300, True, "early_stop"))
    s = next_probe(CELL, tight, 1000, RULES, 150, step_cap=12000)
    assert (s.status, s.next_n) == ("searching", 150)
    assert next_probe(CELL, tight, 1000, RULES, 150).status == "bracketed"  # reading the table: as it stands
    decided = table((150, False, "gave_up"), (180, True, "early_stop"))
    assert next_probe(CELL, decided, 1000, RULES, 150, step_cap=12000).status == "bracketed"
    at_pool = table((750, False, "steps"))
    assert next_probe(CELL, at_pool, 1000, RULES, 750, step_cap=12000).next_n == 750
    assert next_probe(CELL, at_pool, 1000, RULES, 750).status == "unreachable"


def test_summary_flags_a_bracket_whose_failure_was_stopped_by_the_step_cap():
    def summary_of(stopped_at_low: str) -> pd.Series:
        probes = pd.DataFrame({"n_train": [150, 212, 250], "success": [False, False, True],
                               "stopped": ["gave_up", stopped_at_low, "early_stop"], "minutes": [1.0, 2.0, 1.5]})
        state = next_probe(CELL, probes, 1000, RULES, 150)
        return summarise([state]).iloc[0]

    decided = summary_of("gave_up")
    assert (decided["status"], decided["low"], decided["low_capped"]) == ("bracketed", 212, False)
    assert decided["minutes"] == pytest.approx(4.5)
    assert summary_of("steps")["low_capped"]  # the failing end ran out of steps before the give-up rule decided
    unreachable = next_probe(CELL, pd.DataFrame({"n_train": [750], "success": [False], "stopped": ["steps"],
                                                    "minutes": [3.0]}), 1000, RULES, 750)
    assert summarise([unreachable]).iloc[0]["low_capped"]
    # rerun under a higher cap, the pool's largest size is decided by the longer run: the give-up rule this time
    rerun = pd.DataFrame({"n_train": [750, 750], "success": [False, False], "stopped": ["steps", "gave_up"],
                          "step_cap": [6000, 12000], "minutes": [3.0, 5.0]})
    decided_late = summarise([next_probe(CELL, rerun, 1000, RULES, 750, step_cap=12000)]).iloc[0]
    assert (decided_late["status"], decided_late["low_capped"]) == ("unreachable", False)
    still_capped = rerun.assign(stopped=["steps", "steps"])
    assert summarise([next_probe(CELL, still_capped, 1000, RULES, 750)]).iloc[0]["low_capped"]


def test_give_up_rule_counts_epochs_from_the_first_fitted_evaluation():
    tc = TrainConfig(batch_size=100, give_up_epochs=2, threshold=0.99)
    evals = [{"step": 0, "acc/train_inferred": 0.1, "acc/type_0": 0.0},
             {"step": 10, "acc/train_inferred": 0.995, "acc/type_0": 0.5},
             {"step": 20, "acc/train_inferred": 1.0, "acc/type_0": 0.6}]
    assert not gave_up(evals[:2], tc, n_train=1000)  # fitted, but 0 epochs ago
    assert gave_up(evals, tc, n_train=500)  # 10 steps x 100 = 1000 examples = 2 epochs of 500
    assert not gave_up(evals, tc, n_train=1000)  # only 1 epoch of 1000
    assert not gave_up(evals, TrainConfig(batch_size=100), n_train=500)  # rule off by default
    succeeded = evals + [{"step": 30, "acc/train_inferred": 1.0, "acc/type_0": 0.995}]
    assert not gave_up(succeeded, tc, n_train=100)


def probe_row(n: int, ok: bool, **extra) -> dict:
    row = {c: 0 for c in PROBE_COLUMNS} | {"task": "twohop", "N": 20, "model": "smoke", "seed": 0, "cot": False,
                                              "n_train": n, "success": ok, "stopped": "x", "threshold": 0.99,
                                              "give_up_epochs": 20.0, "step_cap": 300, "weight_decay": 0.1}
    return row | extra


def test_probe_table_appends_replaces_the_same_probe_and_round_trips(tmp_path: Path):
    table = tmp_path / "t" / "probes.csv"
    assert read_probes(table).empty
    append_probe(table, probe_row(300, False))
    append_probe(table, probe_row(100, True))
    append_probe(table, probe_row(300, True))  # the same probe again: replaces the first row
    df = read_probes(table)
    assert list(df["n_train"]) == [100, 300] and df["success"].tolist() == [True, True]
    assert cell_rows(df, CELL)["n_train"].tolist() == [100, 300]
    assert cell_rows(df, Cell("twohop", 20, "smoke", 1)).empty


def test_probe_table_errors_are_clear(tmp_path: Path):
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    with pytest.raises(CovlibError, match="lacks the columns"):
        read_probes(bad)
    good = tmp_path / "good.csv"
    append_probe(good, probe_row(300, False))
    cell, other_cell = Cell("twohop", 20, "smoke", 0), Cell("twohop", 30, "smoke", 0)
    with pytest.raises(CovlibError, match="step_cap=300, above 200"):  # a cell's cap may grow, not shrink
        _check_rules(ProbeRules(step_cap=200, give_up_epochs=20), str(good), [other_cell, cell])
    _check_rules(ProbeRules(step_cap=200, give_up_epochs=20), str(good), [other_cell])  # other cells: any cap
    _check_rules(ProbeRules(step_cap=999, give_up_epochs=20), str(good), [cell])
    with pytest.raises(CovlibError, match="give_up_epochs=20"):
        _check_rules(ProbeRules(step_cap=300, give_up_epochs=100), str(good))


def test_power_fit_recovers_a_known_exponent():
    exact = power_fit([10, 100], [5.0, 500.0])
    assert exact["c"] == pytest.approx(2.0) and exact["a"] == pytest.approx(0.05) and exact["r2"] == pytest.approx(1.0)
    with pytest.raises(CovlibError, match="two values of N"):
        power_fit([10, 10], [1.0, 2.0])


def test_crossing_interpolates_in_log_n():
    n = np.array([100, 1000, 10000])
    assert first_crossing(n, np.array([0.2, 0.5, 0.9]), 0.7) == pytest.approx(np.sqrt(1000 * 10000))
    assert first_crossing(n, np.array([0.95, 0.97, 0.99]), 0.9) == 100
    assert np.isnan(first_crossing(n, np.array([0.1, 0.2, 0.3]), 0.9))


def test_coverage_requirement_rises_with_N_and_k():
    table = coverage_requirement("twohop", [12, 20], ks=(1, 3), targets=(0.9,), seeds=(0,), test_size_per_type=300)
    need = table.set_index(["N", "k"])["n_train"]
    assert need[(20, 3)] > need[(12, 3)] and need[(20, 3)] > need[(20, 1)]
    assert (table["n_train"] < table["eligible"]).all()


def test_unknown_model_shape_is_a_clear_error():
    with pytest.raises(CovlibError, match="unknown model shape 'huge'"):
        model_overrides("huge")


@pytest.mark.slow
def test_a_miniature_search_brackets_and_resumes_to_the_same_result(tmp_path: Path):
    # at N = 6 and 7 the smoke model stays near chance, so a success threshold of 0.3 splits its probes by noise
    # as much as by data; that is enough for the search's bookkeeping, which is what this test is about. With
    # these seeds N = 7 ends bracketed (76 fails, 96 and 121 succeed) and N = 6 succeeds at the smallest size
    rules = dataclasses.replace(TINY, threshold=0.3)
    cells = cells_for("twohop", [6, 7], [0], model="smoke")
    full = search(cells, tmp_path / "a.csv", tmp_path / "work_a", rules, log=None)
    summary = full.summary()
    assert set(summary["status"]) <= {"bracketed", "unreachable", "below_min"}  # every cell finished
    for _, r in summary.iterrows():
        assert r["probes"] == (full.table["N"] == r["N"]).sum()
    bracketed = summary[summary["status"] == "bracketed"]
    assert len(bracketed), "no cell ended bracketed: choose another threshold or other N for the miniature"
    for _, r in bracketed.iterrows():  # the smallest success, and the largest failure below it, read from the probes
        probes = full.table[full.table["N"] == r["N"]]
        success = probes["success"].astype(bool)
        low, high = int(r["low"]), int(r["high"])
        assert high == probes.loc[success, "n_train"].min()
        assert low == probes.loc[~success & (probes["n_train"] < high), "n_train"].max()
        assert high / low <= SearchRules().bracket_ratio or high - low <= 1  # tight enough to stop
        assert r["n_req"] == pytest.approx(np.sqrt(low * high))  # the estimate: the bracket's geometric mean
    # interrupted after two probes, then resumed: the same probes, the same outcomes
    part = search(cells, tmp_path / "b.csv", tmp_path / "work_b", rules, max_probes=2, log=None)
    assert len(part.table) == 2
    resumed = search(cells, tmp_path / "b.csv", tmp_path / "work_b", rules, log=None)
    cols = ["N", "n_train", "success", "steps", "best_type0"]
    pd.testing.assert_frame_equal(resumed.table[cols].reset_index(drop=True), full.table[cols].reset_index(drop=True))


@pytest.mark.slow
def test_cli_status_and_bad_input(tmp_path: Path, capsys):
    table = tmp_path / "p.csv"
    append_probe(table, probe_row(50, True, N=6, eligible=102))
    args = ["scaling", "status", "--task", "twohop", "--N", "6", "--seeds", "0", "--model", "smoke", "--table", str(table),
            "--start", "50"]
    out = subprocess.run([sys.executable, "-m", "covlib.cli", *args], capture_output=True, text=True)  # as a reader runs it
    assert out.returncode == 0, out.stderr
    assert "searching" in out.stdout and "31" in out.stdout  # next: 50 / 1.6
    # the rest in this process: starting torch three more times adds nothing
    assert main(args[:-2] + ["--model", "huge"]) == 2
    err = capsys.readouterr().err
    assert "unknown model shape" in err and err.count("\n") == 1
    assert main(args[:-2] + ["--model", "smoke", "L2-d64"]) == 0
    both = capsys.readouterr().out
    assert both.count("twohop") == 2 and "smoke" in both and "L2-d64" in both  # one search, two cells
    assert main(["scaling", "replicate", "--table", str(table), "--rounds", "0", "--run"]) == 2
    err = capsys.readouterr().err
    assert "--rounds 0" in err and "1 or more" in err


@pytest.mark.slow
def test_parallel_one_thread_workers_give_the_same_probes_as_one_at_a_time(tmp_path: Path):
    import torch

    cells = cells_for("twohop", [6, 7], [0], model="smoke")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the workers train on one thread; so does the reference
    try:
        serial = search(cells, tmp_path / "s.csv", tmp_path / "ws", TINY, log=None)
    finally:
        torch.set_num_threads(threads)
    pooled = search(cells, tmp_path / "p.csv", tmp_path / "wp", TINY, jobs=2, log=None)
    cols = ["N", "n_train", "success", "steps", "best_type0", "final_train"]
    pd.testing.assert_frame_equal(pooled.table[cols].reset_index(drop=True), serial.table[cols].reset_index(drop=True))


@pytest.mark.slow
def test_every_probe_keeps_its_learning_curve_and_old_probes_are_backfilled(tmp_path: Path):
    cells = cells_for("twohop", [6], [0], model="smoke")
    result = search(cells, tmp_path / "p.csv", tmp_path / "w", TINY, max_probes=2, log=None)
    first = result.table.iloc[0]
    curve = read_curve(tmp_path / "p.csv", task="twohop", N=6, model="smoke", seed=0, n_train=int(first["n_train"]))
    assert curve["step"].iloc[0] == 0 and curve["step"].iloc[-1] == first["steps"]
    assert curve["acc/type_0"].max() == pytest.approx(first["best_type0"], abs=1e-3)  # curves keep 4 digits
    curves = curves_path(tmp_path / "p.csv")
    curves.unlink()  # as if the probes had been run by a covlib that kept no curves
    assert backfill_curves(tmp_path / "p.csv", tmp_path / "w") == 2
    again = read_curve(tmp_path / "p.csv", task="twohop", N=6, model="smoke", seed=0, n_train=int(first["n_train"]))
    pd.testing.assert_frame_equal(again, curve)
    with pytest.raises(CovlibError, match="no curve"):
        read_curve(tmp_path / "p.csv", N=99)


def test_bracket_pair_picks_the_tightest_bracket_and_id_coverage_rises_with_data():
    summary = pd.DataFrame({"status": ["bracketed", "bracketed", "searching"], "low": [100, 200, 50],
                            "high": [130, 220, None], "N": [10, 20, 30]})
    assert bracket_pair(summary)["N"] == 20
    assert bracket_pair(summary[summary["status"] == "searching"]) is None
    small = probe_coverage_by_k("twohop", 12, 300, seed=0, max_k=4, test_size_per_type=200)
    large = probe_coverage_by_k("twohop", 12, 700, seed=0, max_k=4, test_size_per_type=200)
    assert list(small["k"]) == [1, 2, 3, 4] and (small["type"] == "type_0").all()
    assert large.set_index("k").loc[3, "covered"] > small.set_index("k").loc[3, "covered"]


def test_a_cot_search_starts_below_the_plain_requirement():
    def probe(n, ok, cot=False, model="L4-d128"):
        return {"task": "twohop", "N": 20, "model": model, "seed": 0, "cot": cot, "n_train": n, "success": ok,
                "eligible": 3000}

    table = pd.DataFrame([probe(1000, False), probe(1200, True)])  # the plain search of the same model, finished
    cot_cell = Cell("twohop", 20, "L4-d128", 0, cot=True)
    assert first_guess(cot_cell, table, RULES) == round(np.sqrt(1000 * 1200) / COT_START_DIVISOR)
    # a finished CoT search of another model wins over the plain one
    table = pd.concat([table, pd.DataFrame([probe(150, False, True, "L2-d64"), probe(180, True, True, "L2-d64")])])
    assert first_guess(cot_cell, table, RULES) == round(np.sqrt(150 * 180))
    # the plain cell itself is unaffected by CoT rows
    assert first_guess(Cell("twohop", 20, "L4-d256", 0), table, RULES) == round(np.sqrt(1000 * 1200))


def test_experiment_cells_and_command_take_a_name_or_a_dict():
    named = experiment_cells("threehop")
    assert [(c.task, c.N, c.seed, c.cot) for c in named] == [("threehop", N, s, False)
                                                             for N in (10, 12, 14, 16, 18, 20, 24) for s in (0, 1)]
    assert {c.step_cap for c in named if c.N == 24} == {12000}  # the cap its experiment names there
    fake = {"task": "twohop", "N": [25, 30], "seeds": [0, 1], "model": "L4-d128", "fake_bridge": True,
            "table": "data/cot/probes_fakebridge.csv"}
    cells = experiment_cells(fake)
    assert len(cells) == 4 and all(c.fake_bridge and not c.cot for c in cells)
    command = experiment_command(fake)
    assert "--fake-bridge" in command and "--table data/cot/probes_fakebridge.csv" in command
    assert "--N 25 30 --seeds 0 1" in command
    assert "--cot" in experiment_command({**fake, "fake_bridge": False, "cot": True})
    with pytest.raises(CovlibError, match="unknown experiment"):
        experiment_cells("twohop_typo")


def test_requirement_ratio_pairs_finished_cells_and_seed_spread_measures_seed_noise():
    small = pd.DataFrame({"N": [25, 30, 35], "seed": [0, 0, 0], "n_req": [8000.0, 10000.0, None]})
    large = pd.DataFrame({"N": [25, 30, 35, 40], "seed": [0, 0, 0, 0], "n_req": [4000.0, 5000.0, 9000.0, 12000.0]})
    ratio = requirement_ratio(large, small, ("large", "small"))
    assert list(ratio.columns) == ["N", "seed", "n_req_large", "n_req_small", "ratio"]
    assert ratio["N"].tolist() == [25, 30] and ratio["ratio"].tolist() == pytest.approx([0.5, 0.5])  # 35 unfinished
    assert requirement_ratio(large, small.iloc[:0], ("large", "small")).empty
    two_seeds = pd.DataFrame({"N": [25, 25, 30, 30, 35], "seed": [0, 1, 0, 1, 0],
                              "n_req": [1000.0, 1200.0, 2000.0, 1600.0, 3000.0]})
    assert seed_spread(two_seeds) == pytest.approx(np.exp(np.mean(np.log([1.2, 1.25]))))
    assert np.isnan(seed_spread(large))  # one seed per N: no yardstick


def test_the_shipped_commands_regenerate_every_cell_of_the_book_experiments():
    import argparse
    import shlex

    from covlib.base.paths import repository_path
    from covlib.cli.arguments.scaling import add_arguments

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    commanded = set()
    for line in repository_path("data/scaling/COMMANDS.txt").read_text().splitlines():
        if line.startswith("covlib scaling search"):
            args = parser.parse_args(shlex.split(line)[2:])
            assert args.table == BOOK_TABLE
            commanded |= {Cell(args.task, N, m, s, args.cot).key() for m in args.model for N in args.N
                          for s in args.seeds}
    needed = {c.key() for name in BOOK_EXPERIMENTS for c in experiment_cells(name)}
    assert needed <= commanded, f"no command in data/scaling/COMMANDS.txt for {sorted(needed - commanded)}"


@pytest.mark.slow
def test_a_probe_stopped_by_the_cap_resumes_under_a_higher_cap_as_if_trained_in_one_go(tmp_path: Path):
    cell = Cell("twohop", 8, "smoke", 0, start=150)
    short = ProbeRules(step_cap=50, give_up_epochs=1000, eval_every=25, batch_size=64, test_size_per_type=100)
    longer = dataclasses.replace(short, step_cap=125)
    first = search([cell], tmp_path / "p.csv", tmp_path / "w", short, max_probes=1, log=None).table
    assert first[["n_train", "stopped", "steps", "step_cap"]].values.tolist() == [[150, "steps", 50, 50]]
    with pytest.raises(CovlibError, match="step_cap=50, above 25"):
        search([cell], tmp_path / "p.csv", tmp_path / "w", dataclasses.replace(short, step_cap=25), log=None)
    again = search([cell], tmp_path / "p.csv", tmp_path / "w", longer, max_probes=1, log=None).table
    direct = search([cell], tmp_path / "q.csv", tmp_path / "v", longer, max_probes=1, log=None).table
    cols = ["n_train", "steps", "step_cap", "success", "stopped", "best_type0", "final_type0", "final_train"]
    assert len(again) == 1 and again["steps"].iloc[0] > 50  # the capped row was replaced, not added to
    pd.testing.assert_frame_equal(again[cols].reset_index(drop=True), direct[cols].reset_index(drop=True))
    curve = read_curve(tmp_path / "p.csv", task="twohop", N=8, model="smoke", seed=0, n_train=150)
    assert curve["step"].is_unique and curve["step"].max() == again["steps"].iloc[0]


def test_each_probe_row_records_its_policy_and_older_tables_read_as_bisect(tmp_path: Path):
    old = tmp_path / "old.csv"
    pd.DataFrame([probe_row(50, True, N=6, eligible=102)]).drop(columns=["policy", "replicate", "replicate_seed"]).to_csv(old, index=False)
    assert list(read_probes(old)["policy"]) == ["bisect"]  # a table written before the column resumes as bisect
    cell = Cell("twohop", 6, "smoke", 0, start=40)
    guided = SearchRules(policy="guided")
    result = search([cell], tmp_path / "p.csv", tmp_path / "w", TINY, guided, max_probes=1, log=None)
    row = result.table.iloc[0]
    assert row["policy"] == "guided" and row["n_train"] == round(40 * np.sqrt(guided.bracket_ratio))


def test_one_search_over_several_N_starts_each_N_at_its_own_size(tmp_path: Path, capsys):
    """The queue runs a task's preregistered N as one search (a worker a finished seed frees takes the next N), each
    from its own preregistered start."""

    base = ["scaling", "status", "--task", "twohop", "--N", "8", "10", "--seeds", "0", "--model", "smoke",
            "--table", str(tmp_path / "p.csv")]
    assert main([*base, "--start", "150", "250"]) == 0
    first = capsys.readouterr().out.splitlines()[1:]
    assert [(int(line.split()[2]), int(line.split()[9])) for line in first] == [(8, 150), (10, 250)]
    assert main([*base, "--start", "150"]) == 0  # one size: every cell
    assert [int(line.split()[9]) for line in capsys.readouterr().out.splitlines()[1:]] == [150, 150]
    assert main([*base, "--start", "150", "250", "300"]) == 2
    assert "one per --N (2 here" in capsys.readouterr().err
