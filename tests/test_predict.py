"""Exact crossings (bisection against a brute-force scan), covlib predict, and tasks written as formulas."""
from __future__ import annotations

import json

import numpy as np
import pytest

from covlib.base.errors import CovlibError
from covlib.base.paths import repository_path
from covlib.cli.main import main
from covlib.coverage.predict import predict_requirement
from covlib.coverage.requirement import CoverageProbes, bisect_crossing, bisect_crossing_two, coverage_requirement
from covlib.tasks.datasets import DatasetConfig, dataset_files, generate
from covlib.tasks.graphs import TASKS, get_task

FORMULAS = {
    "twohop": "b=f1(x1,x2); t=f2(b,x3)",
    "parallel_twohop": "b1=f1(x1,x2); b2=f2(x3,x4); t=f3(b1,b2)",
    "threehop": "b1=f1(x1,x2); b2=f2(b1,x3); t=f3(b2,x4)",
    "nontree": "b=f1(x1,x2); t=f2(b,x2,x3)",
    "fivehop": "b1=f1(x1,x2); b2=f2(b1,x3); b3=f3(b2,x4); b4=f4(b3,x5); t=f5(b4,x6)",
}


@pytest.mark.parametrize("rel_tol", [0.0, 0.05])
def test_bisection_finds_the_first_success_of_a_monotone_step(rel_tol):
    for first in (2, 3, 17, 500, 999):
        calls = []
        below, at, probes = bisect_crossing(lambda n, calls=calls, first=first: calls.append(n) or n >= first, 1,
                                            1000, rel_tol)
        assert below < first <= at and (at - below == 1 or at <= below * (1 + rel_tol))
        if rel_tol == 0:
            assert at == first  # to adjacent integers: the brute-force answer itself
        assert probes == len(calls) < 2 * np.log2(1000)


@pytest.mark.parametrize("rel_tol", [0.0, 0.05])
def test_two_probes_a_round_find_the_same_first_success_in_fewer_rounds(rel_tol):
    for first in (2, 3, 4, 17, 500, 998, 999):
        rounds = []
        below, at, probes = bisect_crossing_two(
            lambda a, b, rounds=rounds, first=first: rounds.append((a, b)) or (a >= first, b >= first), 1, 1000, rel_tol)
        assert below < first <= at and (at - below == 1 or at <= below * (1 + rel_tol))
        if rel_tol == 0:
            assert at == first
        assert all(1 <= a <= b < 1000 for a, b in rounds)
        assert len(rounds) <= np.ceil(np.log(1000) / np.log(3)) + 1 < np.log2(1000)  # rounds, each two probes


def test_a_crossing_narrowed_by_two_workers_is_a_bracketed_crossing_like_bisection():
    from concurrent.futures import ProcessPoolExecutor

    k, target = 3, 0.9
    alone = CoverageProbes("twohop", 16, 0, [k], test_size_per_type=300)
    paired = CoverageProbes("twohop", 16, 0, [k], test_size_per_type=300)
    with ProcessPoolExecutor(2) as pool:
        row = paired.crossing(k, target, rel_tol=0.0, top_first=False, pool=pool)
    assert row["n_train"] - row["below"] == 1
    assert paired.share(row["n_train"], k) >= target > paired.share(row["below"], k)  # worker shares, checked here
    assert alone.share(row["n_train"], k) == paired.shares[row["n_train"]][k]  # a worker computes the same share
    assert row["n_train"] == pytest.approx(alone.crossing(k, target, rel_tol=0.03, top_first=False)["n_train"], rel=0.06)


def test_predict_on_two_workers_gives_the_crossings_of_one_to_within_the_tolerance():
    one = predict_requirement("twohop", [12, 16], k=2, share=0.9, seeds=(0, 1, 2), test_size_per_type=300)
    two = predict_requirement("twohop", [12, 16], k=2, share=0.9, seeds=(0, 1, 2), test_size_per_type=300, jobs=2)
    assert one["N"].tolist() == two["N"].tolist() and (two["seeds"] == 3).all()
    for column in ("n_pred", "n_low", "n_high"):  # each seed's crossing is bracketed to 3% either way
        assert np.allclose(two[column], one[column], rtol=0.07), (one[column].tolist(), two[column].tolist())
    with pytest.raises(CovlibError, match="jobs must be at least 1"):
        predict_requirement("twohop", [12], jobs=0)


def test_bisection_on_real_coverage_matches_a_brute_force_scan():
    """Two-hop at N = 8: every training-set size is scanned; the bisection's answer (to adjacent sizes) must be a
    size where coverage reaches the share while the size below does not, between the scan's first and last such
    step (datasets of different sizes are separate samples, so the share need not rise at every step)."""
    k, target = 2, 0.9
    cell = CoverageProbes("twohop", 8, 0, [k], test_size_per_type=200)
    top = 180
    scan = np.array([cell.share(n, k) >= target for n in range(1, top + 1)])
    steps = [n for n in range(2, top + 1) if scan[n - 1] and not scan[n - 2]]
    assert steps, "the scan must cross the share somewhere"
    row = cell.crossing(k, target, rel_tol=0.0)
    assert row["n_train"] - row["below"] == 1
    assert cell.share(row["n_train"], k) >= target > cell.share(row["below"], k)
    assert steps[0] <= row["n_train"] <= steps[-1]
    assert row["n_train"] == steps[0] or len(steps) > 1  # a single step is found exactly


def test_a_guess_from_another_seed_brackets_the_crossing_in_a_few_probes():
    k, target = 3, 0.9
    found = CoverageProbes("twohop", 16, 0, [k], test_size_per_type=300).crossing(k, target, top_first=False)
    wide, near = (CoverageProbes("twohop", 16, 1, [k], test_size_per_type=300) for _ in range(2))
    doubled = wide.crossing(k, target, guess=found["n_train"], top_first=False)
    stepped = near.crossing(k, target, guess=found["n_train"], top_first=False, spread=1.05)
    for cell, row in ((wide, doubled), (near, stepped)):
        assert cell.share(row["n_train"], k) >= target > cell.share(row["below"], k)
        assert row["n_train"] <= row["below"] * 1.03 or row["n_train"] - row["below"] == 1
    assert len(near.shares) < len(wide.shares)  # fewer datasets generated
    with pytest.raises(CovlibError, match="spread=1"):
        near.crossing(k, target, guess=100, top_first=False, spread=1.0)


def test_coverage_requirement_is_per_seed_bisection_with_median_and_range():
    table = coverage_requirement("twohop", [12, 16], ks=(2, 3), targets=(0.9,), seeds=(0, 1, 2), test_size_per_type=300)
    assert set(table.columns) >= {"n_train", "n_train_min", "n_train_max", "seeds", "eligible"}
    assert (table["n_train_min"] <= table["n_train"]).all() and (table["n_train"] <= table["n_train_max"]).all()
    assert (table["seeds"] == "0 1 2").all()
    wide = table.pivot(index="N", columns="k", values="n_train")
    assert (wide[3] > wide[2]).all() and (wide.loc[16] > wide.loc[12]).all()  # deeper coverage, larger N: more data


def test_predict_function_and_cli_agree(capsys):
    table = predict_requirement("twohop", [12], k=2, share=0.9, seeds=(0,), factor=2.0, test_size_per_type=300)
    row = table.iloc[0]
    cell = CoverageProbes("twohop", 12, 0, [2], test_size_per_type=300)
    raw = cell.crossing(2, 0.9, top_first=False)  # predict never starts from the top of the pool
    assert row["n_pred"] == 2 * raw["n_train"]
    assert cell.share(raw["n_train"], 2) >= 0.9 > cell.share(raw["below"], 2)
    assert row["n_low"] <= row["n_pred"] <= row["n_high"] and row["seconds"] > 0
    assert main(["predict", "--task", "twohop", "--N", "12", "--raw", "--k", "2", "--share", "0.9", "--seeds", "1",
                 "--factor", "2", "--test-size", "300", "--jobs", "1"]) == 0
    out = capsys.readouterr().out
    assert f"{row['n_pred']:,.0f}" in out and "total" in out
    assert main(["predict", "--task", "twohop", "--N", "12", "--jobs", "0"]) == 2
    assert "--jobs must be at least 1" in capsys.readouterr().err


def test_predict_applies_a_fitted_rule_and_prints_it_with_its_accuracy(tmp_path, capsys):
    from covlib.coverage.predict import predict_with_rule
    from covlib.coverage.rule import Rule, save_rule

    rule = Rule(plain_share=0.9, cot_level=2, cot_share=0.9, factor=1.5, fitted_on=["two-hop", "three-hop"], cells=4,
                provenance={"protocol": "the give-up floor of 2,000 steps", "commit": "abc1234"},
                accuracy={"cells": 4, "within_115": 0.5, "within_125": 0.75, "median_ratio": {"two-hop": 1.02}})
    path = tmp_path / "rule.json"
    save_rule(rule, path)
    plain = predict_with_rule("twohop", [12], rule, seeds=(0,), test_size_per_type=300)
    bare = predict_requirement("twohop", [12], k=3, share=0.9, seeds=(0,), test_size_per_type=300, evidence="sound")
    assert plain["n_pred"].iloc[0] == pytest.approx(1.5 * bare["n_pred"].iloc[0])  # k = depth + 1 = 3, sound
    cot = predict_with_rule("twohop", [12], rule, cot=True, seeds=(0,), test_size_per_type=300)
    hops = predict_requirement("twohop", [12], k=2, share=0.9, seeds=(0,), test_size_per_type=300, evidence="hop facts")
    assert cot["n_pred"].iloc[0] == pytest.approx(1.5 * hops["n_pred"].iloc[0]) and cot["seed_0"].iloc[0] > 0
    assert main(["predict", "--task", "twohop", "--N", "12", "--seeds", "1", "--test-size", "300", "--jobs", "1",
                 "--rule", str(path)]) == 0
    out = capsys.readouterr().out
    assert "fitted on 4 cells of 2 tasks under the give-up floor of 2,000 steps; fitted at commit abc1234" in out
    assert "k = 3 (depth 2 + 1)" in out and "75% of 4 cells within 1.25x, 50% within 1.15x" in out
    assert f"{plain['n_pred'].iloc[0]:,.0f}" in out
    assert main(["predict", "--task", "twohop", "--N", "12", "--seeds", "1", "--test-size", "300", "--jobs", "1",
                 "--rule", str(path), "--cot"]) == 0
    assert "every hop fact in at least 2 training examples" in capsys.readouterr().out


def test_every_predict_error_names_the_flags_of_predict(tmp_path, capsys):
    assert main(["predict", "--task", "twohop", "--N", "12", "--k", "2"]) == 2
    assert "--k set the bare crossing: add --raw" in capsys.readouterr().err
    assert main(["predict", "--task", "twohop", "--N", "12", "--raw", "--cot"]) == 2
    assert "--raw takes no --rule or --cot" in capsys.readouterr().err
    assert main(["predict", "--task", "twohop", "--N", "12", "--rule", str(tmp_path / "none.json")]) == 2
    assert "no fitted rule at" in capsys.readouterr().err
    assert main(["predict", "--task", "threehop", "--N", "500", "--raw"]) == 2
    err = capsys.readouterr().err
    assert "use a smaller num_tokens (N) (option --N)" in err and "--num-tokens" not in err
    assert main(["generate", "threehop", "--num-tokens", "500", "--n-train", "5", "--out", str(tmp_path)]) == 2
    assert "(option --num-tokens)" in capsys.readouterr().err


@pytest.mark.parametrize("name", list(FORMULAS))
def test_each_named_task_is_its_formula_byte_for_byte(name):
    task = get_task(FORMULAS[name])
    assert task is TASKS[name]
    N = {"fivehop": 4, "threehop": 6, "parallel_twohop": 6}.get(name, 8)
    opts = dict(seed=3, test_size_per_type=20, cot=name == "fivehop")
    named = dataset_files(generate(DatasetConfig(name, N, 60, **opts)))
    written = dataset_files(generate(DatasetConfig(FORMULAS[name], N, 60, **opts)))
    assert named == written


def test_formulas_are_read_up_to_names_and_order():
    assert get_task("t = h(c, x3); c = g(x1, x2)") is TASKS["twohop"]  # other names, steps out of order
    mine = get_task("b=f1(x1,x2); t=f2(b,x3,x1)")
    assert mine.name not in TASKS and mine.n_inputs == 3 and mine.primitives == {"f1": 2, "f2": 3}
    assert get_task(mine.name) == mine and mine.authors_name.startswith("graph-")
    shared = get_task("b=f(x1,x2); t=f(b,x3)")  # one primitive named twice: one shared table
    assert shared.table_names(False) == ["f1"]

def test_a_task_given_as_its_steps_is_the_formula_they_spell():
    from covlib.tasks.graphs import formula_of

    steps = {"b": "f1(x2,x3)", "t": "f2(x1,b)"}
    assert formula_of(steps) == "b=f1(x2,x3); t=f2(x1,b)"
    assert get_task(steps) == get_task("b=f1(x2,x3); t=f2(x1,b)")
    assert get_task({"c": "g(x1, x2)", "t": "h(c, x3)"}) is TASKS["twohop"]
    with pytest.raises(CovlibError, match="the step 'b': 3 is not text"):
        get_task({"b": 3, "t": "f2(b,x3)"})
    with pytest.raises(CovlibError, match="cannot read"):
        get_task({"b": "f1 x1 x2", "t": "f2(b,x3)"})


@pytest.mark.parametrize("formula, problem", [
    ("b=f1(x1,x2); t=f2(c,x3)", "unknown node c"),
    ("b=f1(x1,x2); t=f2(x1,x3)", "unused node b"),
    ("b=f1(x1,x3); t=f2(b,x3)", "unused node x2"),
    ("b=f1(c,x1); c=f2(b,x2); t=f3(c,x3)", "cycle"),
    ("b=f(x1,x2); t=f(b,x2,x3)", "two arities"),
    ("b=f1(x1,x2); c=f2(b,x3)", "no output t"),
    ("b=f1(x1,x2) t=f2(b,x3)", "cannot read"),
])
def test_a_malformed_formula_is_one_error_line_exit_2_and_nothing_written(formula, problem, tmp_path, capsys):
    with pytest.raises(CovlibError, match=problem):
        get_task(formula)
    out = tmp_path / "out"
    code = main(["generate", "--graph", formula, "--num-tokens", "8", "--n-train", "50", "--out", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and problem in err[0]
    assert not out.exists()


def test_a_task_name_and_a_formula_together_or_neither_are_refused(tmp_path, capsys):
    for argv in (["generate", "twohop", "--graph", FORMULAS["twohop"]], ["generate"]):
        assert main(argv + ["--num-tokens", "8", "--n-train", "50", "--out", str(tmp_path / "o")]) == 2
    assert "exactly one" in capsys.readouterr().err
    assert main(["predict", "--graph", "t=f1(x1)", "--N", "8"]) == 2


def test_generate_writes_a_readers_formula(tmp_path, capsys):
    code = main(["generate", "--graph", "b=f1(x1,x2); t=f2(b,x3,x1)", "--num-tokens", "8", "--n-train", "100",
                 "--test-size-per-type", "10", "--out", str(tmp_path)])
    assert code == 0
    folders = list(tmp_path.iterdir())
    assert len(folders) == 1 and folders[0].name.startswith("graph-")
    assert (folders[0] / "atomic_facts_f2.json").is_file()
    command = json.loads((folders[0] / "covlib.json").read_text())["command"]
    assert command.startswith('covlib generate --graph "b=f1(x1,x2);t=f2(b,x3,x1)" --num-tokens 8 --n-train 100')


def test_shared_contexts_on_bit_sets_equal_the_lookup(monkeypatch):
    """pair_evidence counts shared contexts on bit sets when they fit in memory, else by look-ups: the same
    evidence either way."""
    import covlib.coverage.exact as exact

    ds = generate(DatasetConfig("threehop", 8, 700, seed=2, test_size_per_type=0))
    answers = ds.evaluate(ds.train_inputs)["t"]
    dense = exact.all_pair_evidence(ds.train_inputs, answers, 8)
    monkeypatch.setattr(exact, "DENSE_BITS", 0)
    lookup = exact.all_pair_evidence(ds.train_inputs, answers, 8)
    for a, b in zip(dense, lookup):
        assert a.positions == b.positions and len(a) == len(b)
        assert (a.left == b.left).all() and (a.right == b.right).all() and (a.count == b.count).all()
    assert sum(len(a) for a in dense) > 100


def test_a_search_cell_of_a_formula_gets_a_folder_name_and_status_reads_named_tasks(capsys):
    from covlib.search.cells import Cell, Probe, ProbeRules

    mine = get_task("b=f1(x1,x2); t=f2(b,x3,x1)").name
    run_dir = Probe(Cell(mine, 8), 100, 300, ProbeRules(), "t.csv", "work").run_dir()
    assert run_dir.name.startswith(get_task(mine).authors_name + ".8.100") and "(" not in str(run_dir)
    assert Probe(Cell("twohop", 8), 100, 300, ProbeRules(), "t.csv", "work").run_dir().name.startswith("twohop.8.100")
    # a formula equal to two-hop reads two-hop's cells of the book's probe table
    assert main(["scaling", "status", "--graph", "b=g(x1,x2); t=h(b,x3)", "--N", "25", "--seeds", "0",
                 "--table", str(repository_path("data/scaling/probes.csv"))]) == 0
    assert "twohop" in capsys.readouterr().out
