"""The give-up rule with a step floor: a probe gives up only after max(100 epochs, F steps) past its fit, its
rows form their own brackets, and the authors'-rule rows it cannot change count under it."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from covlib.search.cells import Cell, Probe, ProbeRules, SearchRules
from covlib.search.probes import PROBE_COLUMNS, append_probe, cell_rows, read_probes, rule_rows, split_cells
from covlib.search.required_data import search_states
from covlib.training.config import TrainConfig
from covlib.training.loop import gave_up

CELL = Cell("twohop", 20, "smoke", 0)


def row(n: int, ok: bool, steps: int = 400, fit: float | None = 100, floor: int = 0, stopped: str | None = None) -> dict:
    base = {c: 0 for c in PROBE_COLUMNS}
    return base | {"task": "twohop", "N": 20, "model": "smoke", "seed": 0, "cot": False, "n_train": n,
                   "eligible": 4000, "success": ok, "stopped": stopped or ("early_stop" if ok else "gave_up"),
                   "steps": steps, "first_fit_step": fit, "threshold": 0.99, "give_up_epochs": 100.0,
                   "step_cap": 6000, "weight_decay": 0.1, "give_up_floor": floor}


def test_the_floor_postpones_giving_up_until_that_many_steps_past_the_fit():
    evals = [{"step": s, "acc/train_inferred": 1.0 if s >= 100 else 0.5, "acc/type_0": 0.5} for s in range(0, 2200, 50)]
    authors = TrainConfig(batch_size=100, give_up_epochs=2)
    floored = TrainConfig(batch_size=100, give_up_epochs=2, give_up_floor=2000)
    n_train = 500  # two epochs are 10 steps: the authors' rule gives up at the first evaluation after the fit
    assert gave_up(evals[:4], authors, n_train)
    assert not gave_up(evals[:4], floored, n_train)
    assert not gave_up(evals[:42], floored, n_train)  # step 2050: 1,950 steps past the fit
    assert gave_up(evals[:43], floored, n_train)  # step 2100: 2,000 steps past it
    big = 10**6  # when 100 epochs are longer than the floor, the epochs decide, as before
    assert gave_up(evals, floored, big) == gave_up(evals, authors, big) is False


def test_many_cells_read_their_rows_from_one_split_as_each_would_alone():
    """search_states splits the table once for many cells (split_cells): each cell's rows, and so its state, are
    those it reads alone; rows of one size under several floors and a replicate beside its probe included."""
    other = Cell("threehop", 12, "smoke", 1)
    rows = [row(100, False, steps=300), row(200, False, steps=2600, fit=500), row(400, True, steps=900),
            row(100, True, floor=2000), row(200, False, steps=3000, fit=500, floor=2000), row(300, True, floor=2000)]
    rows += [r | {"task": "threehop", "N": 12, "seed": 1} for r in (row(500, False), row(900, True), row(700, True))]
    rows.append(row(200, True, floor=2000) | {"replicate": "init", "replicate_seed": 1002})
    table = pd.DataFrame(rows).sample(frac=1.0, random_state=3)  # in no particular order, as appended
    by_cell = split_cells(table)
    assert set(by_cell) == {("twohop", 20, "smoke", 0, False), ("threehop", 12, "smoke", 1, False)}
    for cell in (CELL, other):
        pd.testing.assert_frame_equal(by_cell[cell.key()[:5]], cell_rows(table, cell, None))
    for floor in (0, 2000):
        together = search_states([CELL, other], table, SearchRules(), give_up_floor=floor)
        alone = [search_states([c], table, SearchRules(), give_up_floor=floor)[0] for c in (CELL, other)]
        assert [(s.status, s.low, s.high, s.next_n) for s in together] == [(s.status, s.low, s.high, s.next_n)
                                                                           for s in alone]
        for a, b in zip(together, alone):
            pd.testing.assert_frame_equal(a.probes, b.probes)
    assert split_cells(table.iloc[:0]) == {}


def test_authors_rows_count_under_a_floor_only_where_the_floor_cannot_change_them():
    rows = pd.DataFrame([row(100, False, steps=300, fit=100),   # gave up 200 steps past the fit: reopened
                         row(200, False, steps=2600, fit=500),  # 2,100 steps past the fit: stands
                         row(300, False, steps=6000, fit=None, stopped="steps"),  # the cap stopped it: stands
                         row(400, True, steps=900)])            # a success: stands
    counted, reopened = rule_rows(rows, 2000)
    assert counted["n_train"].tolist() == [200, 300, 400] and reopened["n_train"].tolist() == [100]
    assert rule_rows(rows, 0)[0]["n_train"].tolist() == [100, 200, 300, 400]  # the authors' rule reads its own rows
    rerun = pd.concat([rows, pd.DataFrame([row(100, True, steps=1500, floor=2000)])])
    counted, reopened = rule_rows(rerun, 2000)
    assert counted.loc[counted["n_train"] == 100, "give_up_floor"].tolist() == [2000] and reopened.empty
    assert rule_rows(rerun, 0)[0].loc[lambda d: d["n_train"] == 100, "success"].tolist() == [False]
    assert rule_rows(rerun, 1000)[0]["give_up_floor"].eq(0).all()  # another floor's rows never count


def test_a_longer_floor_counts_a_lower_floors_rows_where_it_cannot_change_them():
    rows = pd.DataFrame([row(100, False, steps=300, fit=100),              # authors': 200 past the fit
                         row(100, False, steps=2100, fit=100, floor=2000),  # its rerun: 2,000 past, still short
                         row(200, False, steps=4300, fit=200),              # authors': 4,100 past the fit
                         row(300, True, steps=2500, floor=2000)])           # a success under the lower floor
    counted, reopened = rule_rows(rows, 4000)
    assert counted["n_train"].tolist() == [200, 300] and counted["give_up_floor"].tolist() == [0, 2000]
    # at n_train 100 the 2,000-step floor's rerun speaks, not the authors' row, and 4,000 steps reopen it
    assert reopened[["n_train", "give_up_floor"]].values.tolist() == [[100, 2000]]
    longer = pd.concat([rows, pd.DataFrame([row(100, True, steps=3600, floor=4000)])])
    assert rule_rows(longer, 4000)[0]["give_up_floor"].tolist() == [4000, 0, 2000] and rule_rows(longer, 4000)[1].empty
    assert 4000 not in rule_rows(longer, 2000)[0]["give_up_floor"].tolist()  # a higher floor's rows never count


def test_a_longer_floor_rechecks_the_brackets_a_lower_floor_finished(tmp_path: Path, capsys):
    from covlib.cli.main import main
    from covlib.search.recheck import flip_counts, floor_recheck

    # the authors' bracket 1600-2000 reopened, flipped under 2,000 steps, and bracketed again at 1265-1600
    floor_rows = [row(1000, False, steps=300), row(1600, False, steps=400), row(2000, True, steps=900),
                  row(1600, True, steps=1200, floor=2000), row(1000, False, steps=2200, fit=200, floor=2000),
                  row(1265, False, steps=2300, fit=300, floor=2000)]
    from_floor = floor_recheck(pd.DataFrame(floor_rows), 4000, from_floor=2000).iloc[0]
    assert (from_floor["authors_status"], from_floor["low"], from_floor["high"]) == ("bracketed", 1265, 1600)
    assert from_floor["reopened"] and not from_floor["rerun"] and from_floor["floor_status"] == "searching"
    flipped = pd.DataFrame(floor_rows + [row(1265, True, steps=3000, floor=4000)])
    counts = flip_counts(floor_recheck(flipped, 4000, from_floor=2000)).iloc[0]
    assert (counts["brackets"], counts["reopened"], counts["reruns"], counts["flips"]) == (1, 1, 1, 1)
    table = tmp_path / "probes.csv"
    for r in floor_rows:
        append_probe(table, r)
    assert main(["scaling", "recheck", "--give-up-floor", "4000", "--from-floor", "2000", "--table", str(table)]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1].split()[-5:] == ["1", "0", "1", "0", "0"]
    assert main(["scaling", "recheck", "--give-up-floor", "2000", "--from-floor", "2000", "--table", str(table)]) == 2
    assert "--from-floor 2000" in capsys.readouterr().err


def test_a_floor_search_reruns_the_lower_end_first_and_walks_down_only_if_it_flips():
    rules = SearchRules(step_factor=1.6, bracket_ratio=1.3)
    old = pd.DataFrame([row(1000, False, steps=300), row(1600, False, steps=400), row(2000, True, steps=900)])
    authors = search_states([CELL], old, rules)[0]
    assert (authors.status, authors.low, authors.high) == ("bracketed", 1600, 2000)
    first = search_states([CELL], old, rules, give_up_floor=2000)[0]
    assert (first.status, first.next_n, first.high) == ("searching", 1600, 2000)
    held = pd.concat([old, pd.DataFrame([row(1600, False, steps=2500, fit=400, floor=2000)])])
    state = search_states([CELL], held, rules, give_up_floor=2000)[0]
    assert (state.status, state.low, state.high) == ("bracketed", 1600, 2000)
    flipped = pd.concat([old, pd.DataFrame([row(1600, True, steps=1200, floor=2000)])])
    state = search_states([CELL], flipped, rules, give_up_floor=2000)[0]
    assert (state.status, state.next_n, state.high) == ("searching", 1000, 1600)  # the next old failure below
    assert search_states([CELL], flipped, rules)[0].low == 1600  # the authors' bracket is untouched


def test_floor_rows_keep_the_authors_rows_and_run_in_their_own_folders(tmp_path: Path):
    table = tmp_path / "probes.csv"
    append_probe(table, row(1600, False))
    append_probe(table, row(1600, True, floor=2000))
    df = read_probes(table)
    assert sorted(df["give_up_floor"]) == [0, 2000]
    assert cell_rows(df, CELL)["success"].tolist() == [False]
    assert cell_rows(df, CELL, 2000)["success"].tolist() == [True]
    old = Probe(CELL, 1600, 4000, ProbeRules(), str(table), str(tmp_path)).run_dir()
    new = Probe(CELL, 1600, 4000, ProbeRules(give_up_floor=2000), str(table), str(tmp_path)).run_dir()
    assert old != new and new.name.endswith("_floor-2000")


def test_a_table_written_before_the_floor_existed_reads_as_the_authors_rule(tmp_path: Path):
    table = tmp_path / "old.csv"
    pd.DataFrame([row(1600, False)]).drop(columns=["give_up_floor", "replicate", "replicate_seed"]).to_csv(table, index=False)
    assert read_probes(table)["give_up_floor"].tolist() == [0]
    append_probe(table, row(1600, True, floor=2000))  # and resumes: the old row stays, the new one joins it
    assert sorted(read_probes(table)["give_up_floor"]) == [0, 2000]


def test_the_books_floor_is_the_step_by_which_95_percent_of_small_successes_had_succeeded():
    from covlib.base.paths import repository_path
    from covlib.search.recheck import BOOK_FLOOR, floor_from_probes

    floor, quantile, n = floor_from_probes(read_probes(repository_path("data/scaling/probes.csv")))
    assert floor == BOOK_FLOOR and quantile <= floor < quantile + 500 and n >= 80
    made_up = pd.DataFrame([row(100 * i, True, steps=s) for i, s in enumerate([100, 200, 300, 400, 1700], 1)])
    assert floor_from_probes(made_up, share=0.5)[0] == 500  # the median, 300 steps, rounded up to 500


def test_recheck_counts_reruns_and_flips_per_task():
    from covlib.search.recheck import flip_counts, floor_recheck

    old = pd.DataFrame([row(1000, False, steps=300), row(1600, False, steps=400), row(2000, True, steps=900)])
    before = floor_recheck(old, 2000)
    assert before[["reopened", "rerun", "flipped", "floor_status"]].values.tolist() == [[True, False, False, "searching"]]
    flipped = pd.concat([old, pd.DataFrame([row(1600, True, steps=1200, floor=2000)])])
    counts = flip_counts(floor_recheck(flipped, 2000)).iloc[0]
    assert (counts["brackets"], counts["reopened"], counts["reruns"], counts["flips"]) == (1, 1, 1, 1)


def test_recheck_runs_a_cell_walking_down_before_lower_ends_not_yet_rerun(tmp_path: Path, monkeypatch):
    import covlib.search.recheck as recheck

    def bracket(N: int, seed: int, past_fit: int) -> list[dict]:
        at = {"N": N, "seed": seed}
        return [row(1000, False, steps=100 + past_fit) | at, row(1300, True, steps=900) | at]

    table = tmp_path / "probes.csv"
    walking = [row(1000, True, steps=1200, floor=2000) | {"N": 24, "seed": 0}]  # trained longest, but flipped
    for r in bracket(20, 0, 300) + bracket(22, 0, 100) + bracket(24, 0, 500) + walking:
        append_probe(table, r)
    handed: list[list[tuple]] = []
    monkeypatch.setattr(recheck, "search", lambda cells, *a, **k: handed.append([(c.N, c.seed) for c in cells]))
    recheck.recheck_brackets(table, tmp_path / "work", 2000, log=None)
    assert handed == [[(24, 0), (22, 0), (20, 0)]]  # the walk, then the rest fewest steps past the fit first


def test_a_cell_the_pool_seemed_to_cut_off_is_rerun_at_its_largest_probe_and_may_gain_a_bracket():
    from covlib.search.recheck import flip_counts, floor_recheck

    most = SearchRules().largest_n(4000)  # the largest training set the ID pool leaves room to test
    cut_off = pd.DataFrame([row(1500, False, steps=400), row(most, False, steps=600, fit=200)])
    before = floor_recheck(cut_off, 2000).iloc[0]
    assert (before["authors_status"], before["low"], before["reopened"], before["floor_status"]) == (
        "unreachable", most, True, "searching")
    assert search_states([CELL], cut_off, give_up_floor=2000)[0].next_n == most  # its largest probe, first
    still = pd.concat([cut_off, pd.DataFrame([row(most, False, steps=2700, fit=200, floor=2000)])])
    assert floor_recheck(still, 2000).iloc[0]["floor_status"] == "unreachable"
    flipped = pd.concat([cut_off, pd.DataFrame([row(most, True, steps=1900, floor=2000)])])
    after = floor_recheck(flipped, 2000).iloc[0]
    assert after["flipped"] and after["floor_high"] == most and after["floor_status"] == "searching"
    assert search_states([CELL], flipped, give_up_floor=2000)[0].next_n == 1500  # walking down from there
    counts = flip_counts(floor_recheck(flipped, 2000)).iloc[0]
    assert (counts["brackets"], counts["unreachable"], counts["flips"]) == (0, 1, 1)


def test_a_cut_off_cell_whose_largest_probe_never_fitted_is_not_reopened():
    from covlib.search.recheck import floor_recheck

    most = SearchRules().largest_n(4000)
    capped = pd.DataFrame([row(most, False, steps=6000, fit=None, stopped="steps")])  # the cap stopped it unfitted
    checked = floor_recheck(capped, 2000).iloc[0]
    assert checked["authors_status"] == "unreachable" and pd.isna(checked["past_fit"]) and not checked["reopened"]
    assert checked["floor_status"] == "unreachable"


def test_a_floor_exponent_waits_for_every_cell_the_authors_rule_finished():
    from covlib.search.verdicts import exponents_by_rule

    def cell_rows_at(N: int, floor_rows: bool) -> list[dict]:
        low, high = int(2 * N**2), int(2 * N**2 * 1.25)
        rows = [row(low, False, steps=400) | {"N": N}, row(high, True, steps=900) | {"N": N}]
        return rows + ([row(low, False, steps=2500, fit=400, floor=2000) | {"N": N}] if floor_rows else [])

    Ns = [10, 12, 14, 16]
    cells = {"law": [Cell("twohop", N, "smoke", 0) for N in Ns]}
    half = pd.DataFrame([r for N in Ns for r in cell_rows_at(N, N < 14)])
    rules = exponents_by_rule(cells, half, [0, 2000], {"law": 2.0}, reps=200).set_index("give_up_floor")
    assert rules.loc[0, "c"] == pytest.approx(2.0, abs=0.01) and rules.loc[0, "n_values"] == 4
    assert rules.loc[2000, "pending"] == 2 and np.isnan(rules.loc[2000, "c"]) and rules.loc[2000, "fit"] is None
    cut_off = [row(500, False, steps=600, fit=200) | {"N": 8, "eligible": 666}]  # unreachable: 500 is the most 666 eligible inputs allow
    cells8 = {"law": [Cell("twohop", N, "smoke", 0) for N in [8, *Ns]]}
    every = pd.DataFrame([r for N in Ns for r in cell_rows_at(N, True)] + cut_off)
    rules = exponents_by_rule(cells8, every, [0, 2000], {"law": 2.0}, reps=200).set_index("give_up_floor")
    assert rules.loc[2000, "pending"] == 1  # the cell at N = 8 the authors' rule found unreachable, not yet rerun
    every = pd.DataFrame([r for N in Ns for r in cell_rows_at(N, True)])
    rules = exponents_by_rule(cells, every, [0, 2000], {"law": 2.0}, reps=200).set_index("give_up_floor")
    assert rules.loc[2000, "pending"] == 0 and rules.loc[2000, "c"] == pytest.approx(rules.loc[0, "c"])


def test_the_recheck_command_reports_flips_and_refuses_bad_input(tmp_path: Path, capsys):
    from covlib.cli.main import main

    table = tmp_path / "probes.csv"
    for r in (row(1000, False, steps=300), row(1600, False, steps=400), row(2000, True, steps=900),
              row(1600, True, steps=1200, floor=2000)):
        append_probe(table, r)
    assert main(["scaling", "recheck", "--give-up-floor", "2000", "--table", str(table)]) == 0
    out = capsys.readouterr().out
    assert "flips" in out and out.strip().splitlines()[-1].split()[-5:] == ["1", "0", "1", "1", "1"]
    assert main(["scaling", "recheck", "--give-up-floor", "2000", "--table", str(table), "--task", "threehop"]) == 0
    assert "twohop" not in capsys.readouterr().out  # the status it prints is of the cells asked about
    assert main(["scaling", "recheck", "--give-up-floor", "2000", "--table", str(table), "--task", "twohop_cot"]) == 0
    assert "twohop" not in capsys.readouterr().out  # the metrics' spelling names the CoT cells, of which there are none
    assert main(["scaling", "recheck", "--give-up-floor", "0", "--table", str(table)]) == 2
    assert main(["scaling", "recheck", "--give-up-floor", "2000", "--table", str(table), "--task", "fourhop"]) == 2
    assert "unknown task" in capsys.readouterr().err


def test_the_rules_say_in_words_whether_a_floor_holds_the_give_up_back():
    assert "but not before" not in ProbeRules().describe()
    assert "gives up 100 epochs after fitting its training set but not before 2,000 steps past the fit, or at 6,000 " \
           "steps" in ProbeRules(give_up_floor=2000).describe()


def test_cells_searched_under_the_floor_alone_are_left_out_of_the_authors_rule():
    from covlib.search.experiments import (
        authors_rule_cells,
        authors_rule_N,
        experiment_command,
        floor_only_cells,
        floor_only_N,
    )
    from covlib.search.verdicts import exponents_by_rule

    experiment = {"task": "twohop", "N": [10, 12, 14, 16, 20], "seeds": [0], "model": "smoke", "floor_only_N": [20]}
    assert floor_only_N(experiment) == [20] and floor_only_N({**experiment, "floor_only_N": []}) == []
    assert [c.N for c in authors_rule_cells(experiment)] == authors_rule_N(experiment) == [10, 12, 14, 16]
    assert [c.N for c in floor_only_cells(experiment)] == [20]
    command = experiment_command(experiment, Ns=[20], give_up_floor=2000)
    assert "--N 20 --seeds 0" in command and "--give-up-floor 2000" in command
    assert "--give-up-floor" not in experiment_command(experiment) and "--N 10 12 14 16 20 " in experiment_command(experiment)

    def bracket(N: int, floor_only: bool) -> list[dict]:
        low, high = int(2 * N**2), int(2 * N**2 * 1.25)
        if floor_only:  # only the floor's failing probe: the authors' rule has no failure to bracket with
            return [row(high, True, steps=900) | {"N": N}, row(low, False, steps=2500, fit=400, floor=2000) | {"N": N}]
        return [row(high, True, steps=900) | {"N": N}, row(low, False, steps=2500, fit=100) | {"N": N}]

    probes = pd.DataFrame([r for N in (10, 12, 14, 16) for r in bracket(N, False)] + bracket(20, True))
    cells = {"law": [Cell("twohop", N, "smoke", 0) for N in (10, 12, 14, 16, 20)]}
    plain = exponents_by_rule(cells, probes, [0, 2000], {"law": 2.0}, reps=200).set_index("give_up_floor")
    assert plain.loc[0, "searching"] == 1  # without the list, N = 20 looks unfinished under the authors' rule
    told = exponents_by_rule(cells, probes, [0, 2000], {"law": 2.0}, reps=200,
                             floor_only={"law": [c for c in cells["law"] if c.N == 20]}).set_index("give_up_floor")
    assert told.loc[0, "searching"] == 0 and told.loc[0, "N_max"] == 16
    assert told.loc[2000, "N_max"] == 20 and told.loc[2000, "n_values"] == 5 and told.loc[2000, "pending"] == 0
    # floor-only seeds: the Mamba's second seed is searched under the floor alone, at every N
    mamba = {"task": "twohop", "N": [25, 30], "seeds": [0, 1], "model": "smoke", "floor_only_seeds": [1]}
    assert [(c.N, c.seed) for c in authors_rule_cells(mamba)] == [(25, 0), (30, 0)]
    assert [(c.N, c.seed) for c in floor_only_cells(mamba)] == [(25, 1), (30, 1)]
    assert "--seeds 0 --model" in experiment_command(mamba)
    assert "--seeds 0 1 --model" in experiment_command(mamba, give_up_floor=2000)
    # a step cap per N: a command takes the highest cap among the N it searches
    capped = {**experiment, "step_cap_by_N": {16: 12000, 20: 20000}}
    assert "--step-cap" not in experiment_command(capped, Ns=[10, 12])
    assert "--step-cap 12000" in experiment_command(capped, Ns=[14, 16])
    assert "--step-cap 20000" in experiment_command(capped)


def test_a_cell_carries_its_experiments_cap_so_a_failure_a_lower_cap_stopped_is_not_read_as_final():
    from covlib.search.experiments import experiment_cells, experiment_step_cap
    from covlib.search.required_data import rules_for, search_states
    from covlib.search.status import search_summary
    from covlib.search.verdicts import rule_summary

    experiment = {"task": "twohop", "N": [20, 25], "seeds": [0], "model": "smoke", "step_cap_by_N": {20: 12000}}
    assert [experiment_step_cap(experiment, N) for N in (20, 25)] == [12000, None]
    assert experiment_step_cap({**experiment, "step_cap": 9000}, 25) == 9000
    raised, plain = experiment_cells(experiment)
    assert (raised.step_cap, plain.step_cap) == (12000, None) and raised.key() == Cell("twohop", 20, "smoke", 0).key()
    # the bracket's lower end stopped at the old cap of 6,000 steps, never decided by the give-up rule
    probes = pd.DataFrame([row(1000, True, steps=900), row(800, False, steps=6000, fit=5000, stopped="steps")])
    bare = Cell("twohop", 20, "smoke", 0)
    assert search_states([bare], probes, starts={bare.key(): 0})[0].status == "bracketed"
    state = search_states([raised], probes, starts={raised.key(): 0})[0]
    assert state.status == "searching" and state.next_n == 800  # resumed under the raised cap before it counts
    assert search_summary([raised], probes)["status"].tolist() == ["searching"]
    assert rule_summary([raised], probes)["status"].tolist() == ["searching"]
    # its probes run at the cell's cap, never below the search's own
    assert rules_for(raised, ProbeRules()).step_cap == 12000
    assert rules_for(raised, ProbeRules(step_cap=20000)).step_cap == 20000
    assert rules_for(plain, ProbeRules()) == ProbeRules()
    # once rerun under the raised cap and given up by the rule, the bracket stands
    rerun = pd.concat([probes, pd.DataFrame([row(800, False, steps=7500, fit=5000) | {"step_cap": 12000}])])
    assert search_states([raised], rerun, starts={raised.key(): 0})[0].status == "bracketed"


def test_a_floors_rows_count_under_a_lower_rule_only_where_100_epochs_outlast_the_floor():
    one_rule = 2000 * ProbeRules.batch_size // 100  # 10,240 examples: 100 epochs at batch 512 are 2,000 steps
    rows = pd.DataFrame([row(one_rule - 1, True, steps=1500, floor=2000),              # the floor could have acted
                         row(one_rule, False, steps=2100 + 1999, fit=2100, floor=2000),  # 100 epochs decided: one rule
                         row(2 * one_rule, True, steps=5000, floor=2000),
                         row(2 * one_rule, True, steps=5000),                            # the authors' own row
                         row(3 * one_rule, True, steps=6000, floor=4000)])               # 100 epochs outlast 4,000
    counted = rule_rows(rows, 0)[0]
    assert counted["n_train"].tolist() == [one_rule, 2 * one_rule, 3 * one_rule]
    assert counted["give_up_floor"].tolist() == [2000, 0, 4000]  # the authors' own row first where there is one
    assert rule_rows(rows, 2000)[0]["give_up_floor"].tolist() == [2000, 2000, 2000, 4000]
    assert 4000 not in rule_rows(rows.iloc[[4]].assign(n_train=one_rule), 2000)[0]["give_up_floor"].tolist()
    from covlib.search.probes import one_rule_rows
    assert one_rule_rows(rows, 2000)["n_train"].tolist() == [one_rule, 2 * one_rule]


def test_a_lower_end_the_floor_cannot_change_is_no_rerun_even_with_a_floor_row_at_it():
    from covlib.search.recheck import flip_counts, floor_recheck

    big = 20_000  # 100 epochs are 3,906 steps: the floor's row at the lower end ran as the authors' rule would
    rows = pd.DataFrame([row(big, False, steps=8000, fit=4000, floor=2000), row(int(big * 1.2), True, steps=7000)]
                        ).assign(eligible=10 * big)
    recheck = floor_recheck(rows, 2000)
    assert recheck[["authors_status", "low", "reopened", "rerun", "flipped"]].values.tolist() == \
        [["bracketed", big, False, False, False]]
    assert flip_counts(recheck)[["brackets", "reopened", "reruns", "flips"]].values.tolist() == [[1, 0, 0, 0]]


def test_a_curve_asked_for_without_a_floor_is_the_lowest_floors_of_that_probe(tmp_path: Path):
    from covlib.base.errors import CovlibError
    from covlib.search.probes import append_curve, read_curve

    table = tmp_path / "probes.csv"
    curves = tmp_path / "probes_curves.csv"
    for floor, acc in ((2000, 0.5), (4000, 0.7)):  # only floors' rows: a probe that counts under both rules
        append_curve(curves, row(20_000, True, floor=floor), pd.DataFrame({"step": [50, 100], "acc/type_0": [0.1, acc]}))
    key = {"task": "twohop", "N": 20, "model": "smoke", "seed": 0, "cot": False, "n_train": 20_000}
    assert read_curve(table, **key)["acc/type_0"].tolist() == [0.1, 0.5]
    assert read_curve(table, **key, give_up_floor=4000)["acc/type_0"].tolist() == [0.1, 0.7]
    append_curve(curves, row(20_000, True), pd.DataFrame({"step": [50], "acc/type_0": [0.2]}))
    assert read_curve(table, **key)["acc/type_0"].tolist() == [0.2]  # the authors' own, where it has one
    with pytest.raises(CovlibError, match="no curve"):
        read_curve(table, **key, give_up_floor=1000)


def test_the_note_on_probes_counted_under_both_rules_names_their_cells_and_leaves_out_floor_only_ones():
    from covlib.figures.give_up_rule import one_rule_note

    big = 20_000
    rows = pd.DataFrame([row(big, True, floor=2000) | {"N": 40}, row(big, True, floor=2000) | {"N": 50},
                         row(big, True, floor=2000) | {"N": 50, "seed": 1}, row(big // 4, True, floor=2000)])
    note = one_rule_note(rows, 2000)
    assert note.startswith("3 probes run under the floor trained on sets of at least 10,240 examples")
    assert note.endswith("counts under both (two-hop (smoke) at N = 40 and 50).")
    alone = [Cell("twohop", 50, "smoke", 1)]
    assert one_rule_note(rows, 2000, alone).startswith("2 probes run under the floor")
    assert one_rule_note(rows.iloc[[3]], 2000).startswith("No probe under the floor has yet trained on a set")


def test_cells_added_under_the_floor_join_its_fit_together_once_all_have_finished():
    from covlib.search.verdicts import exponents_by_rule, exponents_for_reader

    def bracket(N: int, seed: int) -> list[dict]:
        low, high = int(2 * N**2 * (1.1 if seed else 1.0)), int(2 * N**2 * 1.25 * (1.1 if seed else 1.0))
        return [row(high, True, steps=900) | {"N": N, "seed": seed},
                row(low, False, steps=2500, fit=400, floor=2000 if seed else 0) | {"N": N, "seed": seed}]

    Ns = (10, 12, 14, 16)
    seed0 = [r for N in Ns for r in bracket(N, 0)]
    cells = {"law": [Cell("twohop", N, "smoke", s) for N in Ns for s in (0, 1)]}
    added = {"law": [c for c in cells["law"] if c.seed == 1]}
    half = pd.DataFrame(seed0 + [r for N in Ns[:2] for r in bracket(N, 1)])  # seed 1 at its two smallest N only
    floor = exponents_by_rule(cells, half, [0, 2000], {"law": 2.0}, reps=200, floor_only=added).set_index("give_up_floor")
    assert floor.loc[2000, "seeds"] == 1 and floor.loc[2000, "held"] == 2 and floor.loc[2000, "finished"] == 4
    assert set(floor.loc[2000, "summary"]["seed"]) == {0}  # the verdict's local slopes read the same cells
    assert floor.loc[0, "seeds"] == 1 and floor.loc[0, "held"] == 0
    text = exponents_for_reader(floor.reset_index()).set_index("give_up_floor").loc[2000, "cells"]
    assert text == "4 finished, 2 still searching, 2 held back until the cells added under the floor all finish"
    whole = pd.DataFrame(seed0 + [r for N in Ns for r in bracket(N, 1)])
    both = exponents_by_rule(cells, whole, [0, 2000], {"law": 2.0}, reps=200, floor_only=added).set_index("give_up_floor")
    assert both.loc[2000, "seeds"] == 2 and both.loc[2000, "held"] == 0 and both.loc[2000, "finished"] == 8
    assert both.loc[0, "seeds"] == 1  # the authors' rule never reads the added seed
