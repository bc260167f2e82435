"""Chapter 8: the commutative option, symmetry and shared-operator reach, and the chapter's tables and sentences."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_coverage import covered_by_definition, twohop_answers

from covlib.base.errors import CovlibError
from covlib.book.setup import preset_values, setup_chapter
from covlib.chapters.ch08_three_ways_to_generalise.exercises import (
    EXERCISE_N,
    check_agreement,
    check_cross_role,
    check_reachable,
    cross_role_counts,
    exercise_datasets,
    id_pool,
    mirror_agreement,
    outside_training,
    reachable_counts,
)
from covlib.chapters.ch08_three_ways_to_generalise.model_runs import (
    PRESETS,
    run_description,
    steps_text,
    taxonomy_tables,
    training_minutes,
)
from covlib.chapters.ch08_three_ways_to_generalise.reach import (
    all_inputs,
    commutative_swap,
    not_training,
    role_reach,
    symmetry_reach,
)
from covlib.chapters.ch08_three_ways_to_generalise.readings import (
    covered_share,
    findings,
    own_role,
    property_groups,
    property_numbers,
    property_table,
    shared_groups,
    shared_numbers,
    shared_table,
    taxonomy_metrics,
    taxonomy_summary,
)
from covlib.chapters.ch08_three_ways_to_generalise.reuse import reuse_test
from covlib.tasks.datasets import DatasetConfig, dataset_files, generate, generate_command


@pytest.fixture(scope="module")
def comm():
    return generate(DatasetConfig("twohop", 8, 150, seed=3, test_size_per_type=20, commutative=("f1",)))


@pytest.fixture(scope="module")
def base():
    return generate(DatasetConfig("twohop", 8, 150, seed=3, test_size_per_type=20))


def test_commutative_table_is_symmetric_and_keeps_the_upper_triangle(comm, base):
    f1 = comm.tables["f1"]
    assert np.array_equal(f1, f1.T)
    iu = np.triu_indices(8)
    assert np.array_equal(f1[iu], base.tables["f1"][iu])  # same random stream, mirrored below
    assert np.array_equal(comm.tables["f2"], base.tables["f2"])
    assert not np.array_equal(base.tables["f1"], base.tables["f1"].T)


def test_commutative_seen_split_is_per_fact(comm):
    seen = comm.seen_split["f1"]
    off = ~np.eye(8, dtype=bool)
    assert (seen != seen.T)[off].any()  # a fact and its mirror are seen independently


def test_commutative_types_follow_the_facts(comm):
    # the oracle: the facts each training item uses, collected by a loop, and the type of each test item from
    # whether its own two facts (not their mirrors) are among them
    f1 = comm.tables["f1"]
    used_f1 = {(x1, x2) for x1, x2, _ in comm.train_inputs.tolist()}
    used_f2 = {(int(f1[x1, x2]), x3) for x1, x2, x3 in comm.train_inputs.tolist()}
    type_of = {(True, True): "type_0", (False, False): "type_1", (False, True): "type_2", (True, False): "type_3"}
    held_out = comm.test_types != "train_inferred"
    expected = [type_of[(x1, x2) in used_f1, (int(f1[x1, x2]), x3) in used_f2]
                for x1, x2, x3 in comm.test_inputs[held_out].tolist()]
    assert comm.test_types[held_out].tolist() == expected
    assert comm.type_names(comm.test_inputs[held_out]).tolist() == expected
    assert len(set(expected)) == 4  # every OOD type is exercised


def test_commutative_is_named_written_and_replayed(comm, base):
    assert comm.config.folder_name == base.config.folder_name.replace(".seed-3", ".comm-f1.seed-3")
    meta = json.loads(dataset_files(comm)["covlib.json"])
    assert meta["config"]["commutative"] == ["f1"]
    assert "commutative" not in json.loads(dataset_files(base)["covlib.json"])["config"]
    assert generate_command(comm.config).endswith("--commutative f1")
    assert DatasetConfig(**meta["config"]) == comm.config


def test_commutative_cli_flag(tmp_path):
    from covlib.cli.main import main

    assert main(["generate", "twohop", "-N", "6", "--n-train", "60", "--test-size-per-type", "5",
                 "--commutative", "f1", "--out", str(tmp_path)]) == 0
    folder = tmp_path / "twohop.6.60.diff-f12.inf.comm-f1"
    assert json.loads((folder / "covlib.json").read_text())["config"]["commutative"] == ["f1"]


@pytest.mark.parametrize("bad", [("f3",), ("f9",)])
def test_commutative_rejects_unknown_primitives(bad):
    with pytest.raises(CovlibError, match="commutative"):
        DatasetConfig("twohop", 8, 100, commutative=bad)


def test_commutative_rejects_ternary_primitives():
    with pytest.raises(CovlibError, match="binary"):
        DatasetConfig("nontree", 8, 100, commutative=("f2",))


def test_commutative_swap(comm, base):
    assert commutative_swap(comm) == (0, 1)
    with pytest.raises(CovlibError, match="swap"):
        commutative_swap(base)


def _outside_training(ds) -> np.ndarray:
    """Every input of X^3 that is not a training input, in code order, by enumeration."""
    train = set(map(tuple, ds.train_inputs.tolist()))
    n_tok = ds.config.num_tokens
    return np.array([x for x in np.ndindex(n_tok, n_tok, n_tok) if x not in train])


def test_symmetry_reach_matches_coverage_of_each_mirror(comm):
    q = _outside_training(comm)
    assert np.array_equal(all_inputs(8, 3)[not_training(comm, all_inputs(8, 3))], q)
    k = 2
    frame = symmetry_reach(comm, q, k)
    mirror = q[:, [1, 0, 2]]
    answers = twohop_answers(comm.tables, comm.train_inputs)
    # the oracle: coverage by its definition; a cutoff c is right when c >= j exactly at the j that cover
    for j in (1, 2, 3):
        assert np.array_equal(frame.cutoff >= j, covered_by_definition(comm.train_inputs, answers, 8, q, j)), j
        assert np.array_equal(frame.mirror_cutoff >= j,
                              covered_by_definition(comm.train_inputs, answers, 8, mirror, j)), j
    assert frame.same_output.all()  # commutative f1: the mirror always has the same answer
    direct = covered_by_definition(comm.train_inputs, answers, 8, q, k)
    mirrored = covered_by_definition(comm.train_inputs, answers, 8, mirror, k)
    assert np.array_equal(frame.reachable, ~direct & mirrored)
    assert frame.reachable.any()


def test_symmetry_reach_control_needs_the_same_output(base):
    q = all_inputs(8, 3)
    assert q.tolist() == [list(x) for x in np.ndindex(8, 8, 8)]  # every input, in code order
    frame = symmetry_reach(base, q, 2, swap=(0, 1))
    mirror = q[:, [1, 0, 2]]
    same = twohop_answers(base.tables, q) == twohop_answers(base.tables, mirror)
    assert np.array_equal(frame.same_output, same)
    assert 0 < same.sum() < len(q)
    answers = twohop_answers(base.tables, base.train_inputs)
    inside = covered_by_definition(base.train_inputs, answers, 8, q, 2)
    mirror_inside = covered_by_definition(base.train_inputs, answers, 8, mirror, 2)
    assert np.array_equal(frame.mirror_covered, ~inside & mirror_inside)
    assert np.array_equal(frame.reachable, ~inside & mirror_inside & same)
    with pytest.raises(CovlibError, match="k="):
        symmetry_reach(base, q, 0, swap=(0, 1))


def _brute_roles(ds, queries, atomic):
    """Own-role and any-role flags by Python loops over the training items."""
    own = [set(), set()]
    for x1, x2, x3 in ds.train_inputs.tolist():
        b = int(ds.tables["f1"][x1, x2])
        own[0].add((x1, x2))
        own[1].add((b, x3))
    anywhere = own[0] | own[1]
    out = []
    for x1, x2, x3 in queries.tolist():
        b = int(ds.tables["f1"][x1, x2])
        facts = [(x1, x2), (b, x3)]
        own_ok = all(f in own[h] for h, f in enumerate(facts))
        any_ok = atomic or all(f in anywhere for f in facts)
        out.append(any_ok and not own_ok)
    return np.array(out)


@pytest.mark.parametrize("atomic", [False, True])
def test_role_reach_matches_brute_force(atomic):
    ds = generate(DatasetConfig("twohop", 7, 40, seed=1, test_size_per_type=5, same_functions=True,
                                include_atomic=atomic))
    q = all_inputs(7, 3)
    frame = role_reach(ds, q)
    assert np.array_equal(frame.cross_role.to_numpy(), _brute_roles(ds, q, atomic))
    assert frame.cross_role.any()


# ----------------------------------------------------------------------------- the chapter's tables and sentences

META = {"task": "twohop", "num_tokens": 8, "n_train": 200, "steps": 300, "steps_of": {"shared": 100}, "k": 3,
        "training_minutes": {"commutative": 0.5, "distinct": None, "shared": 0.25}}


def _groups_table() -> pd.DataFrame:
    """A made-up group table: acc = 0.1 * row number, n = 10 + row number, covered_share = 0.01 * row number."""
    groups = ["covered", "uncovered", "mirror_covered", "symmetry_reachable", "uncovered_mirror_uncovered",
              "cross_role", "type:type_0", "type:type_1", "type:type_3", "type:type_2"]
    rows = [{"condition": c, "group": g} for c in ("commutative", "distinct", "shared") for g in groups]
    table = pd.DataFrame(rows)
    i = np.arange(len(table))
    return table.assign(n=10 + i, acc=0.1 * i / len(table), covered_share=0.01 * i)


def test_presets_and_an_unknown_preset(tmp_path):
    assert set(PRESETS) == {"smoke", "default", "paper"}
    assert preset_values(PRESETS, "smoke", N=None, steps=50) == {**PRESETS["smoke"], "steps": 50}
    with pytest.raises(CovlibError, match="smoke, default, paper"):
        setup_chapter("08", "fast", PRESETS, out_dir=tmp_path)


def test_taxonomy_tables_read_the_shipped_cache():
    table, meta, note = taxonomy_tables(PRESETS["default"], Path("unused"), "default", data_seed=0, k=3,
                                        recompute=False)
    shipped = pd.read_csv(Path(__file__).resolve().parents[1] / "data" / "taxonomy" / "groups.csv")
    pd.testing.assert_frame_equal(table, shipped)
    assert meta["num_tokens"] == 30 and note.startswith("read the shipped tables")


def test_steps_minutes_and_description():
    assert steps_text(META).startswith("300 steps per model (shared: 100); the shared model trained for fewer")
    assert steps_text({**META, "steps_of": {"shared": 300}}) == "300 steps per model (shared: 300)"
    assert steps_text({**META, "steps_of": {}}) == "300 steps per model"
    assert training_minutes(META) == pytest.approx(0.75)  # the missing time is skipped
    assert run_description({**META, "training_minutes": {"commutative": 0.5}}) == (
        f"twohop, N=8, n_train=200, {steps_text(META)}, k=3; training: commutative 0.5 min")


def test_property_and_shared_numbers_read_their_rows():
    table = _groups_table()
    at = {(r.condition, r.group): r for r in table.itertuples()}
    prop = property_numbers(table)
    assert prop["acc_reachable"] == at["commutative", "symmetry_reachable"].acc
    assert prop["n_control"] == at["distinct", "mirror_covered"].n
    assert prop["acc_ctrl_id"] == at["distinct", "type:type_0"].acc
    assert prop["id_cov"] == at["distinct", "type:type_0"].covered_share
    shared = shared_numbers(table, 8)
    assert np.isnan(shared["acc_uncovered"]) and shared["n_uncovered"] == 0 and shared["chance"] == 1 / 8
    assert shared["acc_ood"] == at["shared", "cross_role"].acc and shared["n_control"] == at["distinct", "cross_role"].n
    assert covered_share(table, "shared", "cross_role") == at["shared", "cross_role"].covered_share
    with pytest.raises(CovlibError, match="no row"):
        covered_share(table, "shared", "nonsense")


def test_pivots_and_figure_groups():
    table = _groups_table()
    pivot = property_table(table)
    assert sorted(pivot.index) == sorted(["covered", "symmetry_reachable", "mirror_covered",
                                          "uncovered_mirror_uncovered"])
    assert pivot.loc["covered", ("n", "distinct")] == 20  # the eleventh row of the table
    assert sorted(shared_table(table).index) == ["cross_role", "type:type_0", "type:type_1", "type:type_2",
                                                 "type:type_3"]
    assert shared_groups(table) == ["covered", "cross_role", "type:type_1", "type:type_2", "type:type_3"]


def test_summary_metrics_and_findings():
    table = _groups_table()
    prop, shared = property_numbers(table), shared_numbers(table, 8)
    per_type = {"shared_type_2": 0.4, "control_type_2": 0.07}
    own = own_role(per_type, {"shared_atomic": float("nan"), "distinct_atomic": float("nan")})
    assert own["acc"] == 0.4 and own["control"] == "distinct tables, no atomic facts"  # the cache's bundle, named
    own_equal = own_role(per_type, {"shared_atomic": 0.5, "distinct_atomic": 0.45})
    assert own_equal["acc_control"] == 0.45 and "same atomic facts" in own_equal["control"]
    reuse = reuse_test(pd.DataFrame(columns=["condition", "seed", "group", "n", "correct", "acc"]), 8)
    summary = taxonomy_summary(prop, own, reuse)
    assert len(summary) == 7 and summary["measured accuracy"].tolist()[1] == pytest.approx(0.01)  # as below
    assert summary["coverage's verdict"].tolist()[-1] == "not measured yet" and np.isnan(summary.iloc[-2, 3])
    metrics = taxonomy_metrics(prop, shared, META, own, reuse)
    assert list(metrics)[:16] == ["acc_property_reachable", "acc_property_control", "acc_shared_ood",
                                  "acc_shared_control", "acc_covered", "acc_id", "n_property_reachable",
                                  "n_shared_ood", "shared_ood_covered_share", "training_minutes",
                                  "acc_shared_uncovered", "acc_shared_uncovered_control", "n_shared_uncovered",
                                  "chance_shared", "N", "n_train"]
    assert {"acc_reuse_second_role", "acc_reuse_second_role_control", "n_reuse_second_role"} <= set(metrics)
    assert metrics["N"] == 8 and metrics["training_minutes"] == pytest.approx(0.75)
    assert metrics["acc_own_role_atomic"] == 0.4 and metrics["n_reuse_second_role"] == 0
    text = findings(prop, shared, META, 12.4, "PER TYPE.", "REUSE.")
    assert len(text.splitlines()) == 6 and text.endswith("this chapter ran in 12 s.")
    assert "PER TYPE." in text.splitlines()[3] and text.splitlines()[4].endswith("REUSE.")
    # the commutative model's symmetry_reachable row is the table's fourth: n = 10 + 3, acc = 0.1 * 3 / 30
    assert "13 inputs lie outside 3-coverage" in text and "the commutative model gets 0.010 of them" in text


def test_property_groups_keep_covered_inputs_with_an_unseen_fact_apart():
    old = _groups_table()
    assert property_groups(old)[0] == "covered"
    new = pd.concat([old, pd.DataFrame([{"condition": "distinct", "group": "covered_all_facts_seen", "n": 5,
                                         "acc": 0.9, "covered_share": 1.0}])])
    assert property_groups(new)[:2] == ["covered_all_facts_seen", "covered_a_fact_unseen"]


# ----------------------------------------------------------------------------- exercises


@pytest.fixture(scope="module")
def small_sets():
    n_tok = 7
    return exercise_datasets(n_tok, id_pool(n_tok, 0) // 2, 0)


def test_exercise_datasets_are_the_three_conditions_below_their_pools(small_sets):
    assert list(small_sets) == ["commutative", "distinct", "shared"] and EXERCISE_N >= 8
    assert small_sets["commutative"].config.commutative == ("f1",)
    assert small_sets["shared"].config.same_functions and small_sets["shared"].config.include_atomic
    assert all(len(ds.train_inputs) == id_pool(7, 0) // 2 for ds in small_sets.values())
    with pytest.raises(CovlibError, match="smallest ID pool"):
        exercise_datasets(7, id_pool(7, 0), 0)
    outside = outside_training(small_sets["distinct"])
    assert len(outside) == 7**3 - len(small_sets["distinct"].train_inputs)


def test_exercise_reachable_counts_and_their_check(small_sets):
    ds = small_sets["commutative"]
    truth = reachable_counts(ds, (3, 4))
    q = _outside_training(ds)  # by brute force: coverage of every input and of its mirror, by the definition
    answers = twohop_answers(ds.tables, ds.train_inputs)
    expected = {}
    for k in (3, 4):
        direct = covered_by_definition(ds.train_inputs, answers, 7, q, k)
        mirrored = covered_by_definition(ds.train_inputs, answers, 7, q[:, [1, 0, 2]], k)
        expected[k] = int((~direct & mirrored).sum())  # f1 commutative: a mirror always has the same answer
    assert truth == expected and truth[3] > 0
    assert check_reachable((truth[3], truth[4]), truth).startswith("right")
    assert check_reachable(dict(truth), truth).startswith("right")
    assert check_reachable((truth[3], truth[4] + 1), truth).startswith("wrong")
    assert check_reachable((truth[3], truth[4] + 1), truth) == (
        "wrong: the count at k = 4 is too high. Hint: count the commutative dataset's inputs outside training "
        "(outside['commutative']), once per threshold.")  # which count is off, never its value
    assert check_reachable(str((truth[3], truth[4])), truth).startswith("right")  # as papermill -p passes it
    assert check_reachable((truth[4], truth[3]), truth).startswith("wrong") or truth[3] == truth[4]
    assert check_reachable("wrong", truth).startswith("wrong")
    assert "symmetry_reach" in check_reachable(None, truth)
    same = reachable_counts(ds, (3, 3))
    assert check_reachable((same[3], same[3]), same).startswith("right")


def test_exercise_mirror_agreement_and_its_check(small_sets):
    ds = small_sets["distinct"]
    truth = mirror_agreement(ds)
    f1, f2 = ds.tables["f1"], ds.tables["f2"]  # by a loop over the raw tables
    agree = [f2[f1[x1, x2], x3] == f2[f1[x2, x1], x3] for x1, x2, x3 in _outside_training(ds).tolist() if x1 != x2]
    assert truth == pytest.approx(np.mean(agree))
    assert 1 / 7 < truth < 3 / 7  # f1 agreeing, or f2 sending two bridges to one answer: about 2/N
    assert mirror_agreement(small_sets["commutative"]) == 1.0
    assert check_agreement(round(truth, 3), truth, 7).startswith("right")
    assert check_agreement(1 / 7, truth, 7).startswith("wrong")
    assert f"{truth:.3f}" not in check_agreement(1 / 7, truth, 7) and "too low" in check_agreement(1 / 7, truth, 7)
    assert check_agreement("a lot", truth, 7).startswith("wrong")
    assert "same_output" in check_agreement(None, truth, 7)


def test_exercise_cross_role_counts_and_their_check(small_sets):
    ds = small_sets["shared"]
    truth = cross_role_counts(ds)
    q = _outside_training(ds)
    assert truth == tuple(int(_brute_roles(ds, q, atomic).sum()) for atomic in (False, True))
    assert truth[1] > truth[0]
    assert check_cross_role(truth, truth).startswith("right")
    assert check_cross_role(list(truth), truth).startswith("right")
    assert check_cross_role((truth[1], truth[0]), truth).startswith("wrong")
    assert check_cross_role((truth[1], truth[0]), truth).startswith(
        "wrong: the count without atomic facts is too high; the count with them is too low.")
    assert check_cross_role((truth[0],), truth).startswith("wrong")
    assert "role_reach" in check_cross_role(None, truth)
