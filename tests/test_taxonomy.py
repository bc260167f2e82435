"""The commutative option and the taxonomy module (chapter 8): symmetry and shared-operator reach."""
from __future__ import annotations

import json

import numpy as np
import pytest

from covlib.base.errors import CovlibError
from covlib.chapters.ch08_three_ways_to_generalise import (
    all_inputs,
    commutative_swap,
    not_training,
    role_reach,
    symmetry_reach,
)
from covlib.coverage.exact import coverage_sweep
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
    ids = comm.type_names(comm.test_inputs)
    assert np.array_equal(ids[comm.test_types != "train_inferred"], comm.test_types[comm.test_types != "train_inferred"])


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


def test_symmetry_reach_matches_coverage_of_each_mirror(comm):
    q = all_inputs(8, 3)
    q = q[not_training(comm, q)]
    k = 2
    frame = symmetry_reach(comm, q, k)
    answers = comm.evaluate(comm.train_inputs)["t"]
    mirror = q[:, [1, 0, 2]]
    direct = coverage_sweep(comm.train_inputs, answers, 8, q).cutoffs
    mirrored = coverage_sweep(comm.train_inputs, answers, 8, mirror).cutoffs
    assert np.array_equal(frame.cutoff, direct) and np.array_equal(frame.mirror_cutoff, mirrored)
    assert frame.same_output.all()  # commutative f1: the mirror always has the same answer
    expected = (direct < k) & (mirrored >= k)
    assert np.array_equal(frame.reachable, expected)
    assert frame.reachable.any()


def test_symmetry_reach_control_needs_the_same_output(base):
    q = all_inputs(8, 3)
    frame = symmetry_reach(base, q, 2, swap=(0, 1))
    t = base.evaluate(q)["t"]
    assert np.array_equal(frame.same_output, t == base.evaluate(q[:, [1, 0, 2]])["t"])
    assert not frame.same_output.all()
    assert (frame.reachable == (frame.mirror_covered & frame.same_output)).all()
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
