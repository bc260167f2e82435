"""Chapter 8's controls for reuse across roles: the first_role_items dataset option, how training taught each
input's facts, the groups and the one-sided reuse test against the best control."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from covlib.base.errors import CovlibError
from covlib.chapters.ch08_three_ways_to_generalise.reach import all_inputs, not_training
from covlib.chapters.ch08_three_ways_to_generalise.reuse import (
    own_role_numbers,
    per_type_reading,
    per_type_sentence,
    reuse_metrics,
    reuse_test,
    reuse_verdict,
    role_table_frame,
)
from covlib.chapters.ch08_three_ways_to_generalise.roles import (
    ROLE_COLUMNS,
    fact_status,
    role_conditions,
    role_groups,
)
from covlib.cli.main import main
from covlib.tasks.datasets import DatasetConfig, dataset_files, generate, generate_command

BASE = dict(task="twohop", num_tokens=8, n_train=150, seed=2, test_size_per_type=10)


@pytest.fixture(scope="module")
def shared_first():
    return generate(DatasetConfig(**BASE, same_functions=True, first_role_items=40))


@pytest.fixture(scope="module")
def shared_plain():
    return generate(DatasetConfig(**BASE, same_functions=True))


def test_without_the_option_every_file_is_as_before():
    cfg = DatasetConfig(**BASE, same_functions=True, include_atomic=True)
    assert "first_role_items" not in cfg.to_dict()
    assert dataset_files(generate(cfg)) == dataset_files(generate(DatasetConfig(**BASE, same_functions=True,
                                                                                include_atomic=True,
                                                                                first_role_items=0)))


def test_first_role_items_use_a_held_out_first_fact_and_seen_later_facts(shared_first, shared_plain):
    ds = shared_first
    n = ds.config.n_train
    assert len(ds.train_inputs) == n + 40
    assert np.array_equal(ds.train_inputs[:n], shared_plain.train_inputs)  # the ID items are untouched
    extra = ds.train_inputs[n:]
    f = ds.tables["f1"]
    b = f[extra[:, 0], extra[:, 1]]
    assert not ds.seen_split["f1"][extra[:, 0], extra[:, 1]].any()
    assert ds.seen_split["f1"][b, extra[:, 2]].all()
    assert len(np.unique(extra, axis=0)) == 40
    # test types still describe the ID items: seen_used is the plain dataset's, and no test item is a training item
    assert np.array_equal(ds.seen_used["f1"], shared_plain.seen_used["f1"])
    assert not_training(ds, ds.test_inputs[ds.test_types != "train_inferred"]).all()


def test_first_role_items_are_named_written_and_refused_when_too_many(tmp_path, shared_first):
    cfg = shared_first.config
    assert cfg.folder_name.endswith(".first-role-40.seed-2")
    assert generate_command(cfg).endswith("--same-functions --first-role-items 40")
    files = dataset_files(shared_first)
    assert len(json.loads(files["train.json"])) == 190
    main(["generate", "twohop", "-N", "8", "--n-train", "150", "--seed", "2", "--test-size-per-type", "10",
          "--same-functions", "--first-role-items", "40", "--out", str(tmp_path)])
    assert json.loads((tmp_path / cfg.folder_name / "train.json").read_text()) == json.loads(files["train.json"])
    with pytest.raises(CovlibError, match="first_role_items=5000 exceeds"):
        generate(DatasetConfig(**BASE, first_role_items=5000))
    with pytest.raises(CovlibError, match="must be 0 or more"):
        DatasetConfig(**BASE, first_role_items=-1)


def _brute_status(ds, queries):
    """How training taught each hop's fact, by Python loops over the training items."""
    shared = ds.config.same_functions
    f1 = ds.tables["f1"]
    used = [set(), set()]
    for x1, x2, x3 in ds.train_inputs.tolist():
        used[0].add((x1, x2))
        used[1].add((int(f1[x1, x2]), x3))
    out = []
    for x1, x2, x3 in queries.tolist():
        facts = [(x1, x2), (int(f1[x1, x2]), x3)]
        row = []
        for h, fact in enumerate(facts):
            if fact in used[h]:
                row.append("own")
            elif shared and fact in used[1 - h]:
                row.append("other_role")
            elif ds.config.include_atomic and (h == 0 or shared):
                row.append("atomic")
            else:
                row.append("none")
        out.append(row)
    return np.array(out)


@pytest.mark.parametrize("options", [dict(same_functions=True, first_role_items=40), dict(first_role_items=40),
                                     dict(same_functions=True, include_atomic=True), dict(include_atomic=True)])
def test_fact_status_matches_brute_force(options):
    ds = generate(DatasetConfig(**BASE, **options))
    q = all_inputs(8, 3)
    status = fact_status(ds, q)
    assert np.array_equal(status[["status_1", "status_2"]].to_numpy(), _brute_status(ds, q))


def test_the_reuse_group_exists_only_where_one_table_is_taught_in_another_role():
    q = all_inputs(8, 3)
    for name, options in role_conditions(8).items():
        ds = generate(DatasetConfig(**BASE, **options))
        keep = q[not_training(ds, q)]
        groups = role_groups(ds, keep)
        reuse = groups["reuse_second_role"]
        assert not (reuse & ~groups["type:type_3"]).any()
        assert reuse.any() == name.startswith("shared"), name
        status = fact_status(ds, keep)
        assert set(status.status_2[reuse]) <= {"other_role", "atomic"}
    assert role_conditions(8)["shared_first_role"]["first_role_items"] == 64  # N^2, as many as the atomic items


def _roles(treated_acc: list[float], control_acc: list[float], n: int = 2000) -> pd.DataFrame:
    """A made-up role table: per seed, the treated model on its reuse group and two controls on type_3."""
    rows = []
    for seed, (a_t, a_c) in enumerate(zip(treated_acc, control_acc)):
        rows.append({"condition": "shared_first_role", "seed": seed, "group": "reuse_second_role", "n": n,
                     "correct": round(a_t * n), "acc": round(a_t * n) / n})
        for cond, acc in (("distinct_atomic", a_c), ("distinct_first_role", a_c / 2)):
            rows.append({"condition": cond, "seed": seed, "group": "type:type_3", "n": n, "correct": round(acc * n),
                         "acc": round(acc * n) / n})
        rows.append({"condition": "shared_atomic", "seed": seed, "group": "type:type_2", "n": n,
                     "correct": n // 2, "acc": 0.5})
        rows.append({"condition": "distinct_atomic", "seed": seed, "group": "type:type_2", "n": n,
                     "correct": n // 4, "acc": 0.25})
    frame = pd.DataFrame(rows)
    for col in ROLE_COLUMNS:
        if col not in frame:
            frame[col] = "own" if col.startswith("status") else 0.0
    return frame[ROLE_COLUMNS]


def test_the_reuse_verdict_follows_the_numbers_whichever_way_they_fall():
    shown = reuse_test(_roles([0.20, 0.22], [0.05, 0.05]), 30)
    assert shown["holds"] and shown["control"] == "distinct_atomic"  # the better of the two controls
    assert shown["acc_control"] == pytest.approx(0.05) and shown["n"] == 4000 and len(shown["p_per_seed"]) == 2
    assert "A fact learned in one role is reused" in reuse_verdict(shown, "CMD")
    split = reuse_test(_roles([0.20, 0.05], [0.05, 0.05]), 30)  # one seed shows it, the other does not
    assert split["p"] < 0.01 and not split["holds"]
    assert "The seeds disagree (1 of 2 below p = 0.01), so reuse across roles is not shown" in reuse_verdict(split, "CMD")
    neither = reuse_test(_roles([0.05, 0.05], [0.05, 0.05]), 30)
    assert "No reuse across roles is shown" in reuse_verdict(neither, "CMD")
    null = reuse_test(_roles([0.05], [0.05]), 30)
    assert not null["holds"] and "decides nothing yet" in reuse_verdict(null, "CMD")
    one_seed = reuse_test(_roles([0.20], [0.05]), 30)  # a large gap, p far below 0.01, but one training run
    assert one_seed["p"] < 1e-6 and not one_seed["holds"]
    said = reuse_verdict(one_seed, "CMD")
    assert "1 training seed that has both this model and its control, this decides nothing yet" in said
    assert "`CMD`" in said and "is reused" not in said
    unpaired = _roles([0.20, 0.20], [0.05, 0.05])
    unpaired = unpaired[~((unpaired.seed == 1) & unpaired.condition.isin(["distinct_atomic", "distinct_first_role"]))]
    half = reuse_test(unpaired, 30)  # the model in two seeds, its controls in one
    assert half["seeds"] == 2 and half["paired_seeds"] == 1 and not half["holds"]
    assert "decides nothing yet" in reuse_verdict(half, "CMD") and reuse_metrics(half)["seeds_reuse_second_role"] == 1
    empty = reuse_test(pd.DataFrame(columns=ROLE_COLUMNS), 30)
    assert reuse_verdict(empty, "CMD").startswith("**Not measured yet:**") and "`CMD`" in reuse_verdict(empty, "CMD")
    metrics = reuse_metrics(shown)
    assert metrics["n_reuse_second_role"] == 2000 and metrics["acc_reuse_second_role"] == pytest.approx(0.21)
    assert metrics["reuse_second_role_shown"] == 1 and reuse_metrics(split)["reuse_second_role_shown"] == 0
    assert reuse_metrics(split)["p_reuse_second_role_max_seed"] == max(split["p_per_seed"]) > 0.01
    assert np.isnan(reuse_metrics(empty)["acc_reuse_second_role_control"])
    assert own_role_numbers(_roles([0.2], [0.05])) == {"shared_atomic": 0.5, "distinct_atomic": 0.25}
    assert role_table_frame(pd.DataFrame(columns=ROLE_COLUMNS)).empty
    alone = _roles([0.2], [0.05])
    alone = alone[alone.condition == "shared_first_role"]
    assert "no control to read it against" in reuse_verdict(reuse_test(alone, 30), "CMD")


def test_the_one_seed_cache_split_by_type():
    rows = [{"condition": c, "group": f"type:type_{t}", "n": 1000, "acc": acc}
            for c, accs in (("shared", (0.04, 0.40, 0.04)), ("distinct", (0.03, 0.07, 0.04))) for t, acc in zip((1, 2, 3), accs)]
    reading = per_type_reading(pd.DataFrame(rows))
    assert reading["type_2_share_of_correct"] == pytest.approx(400 / 480)
    assert reading["p_type_3"] == pytest.approx(0.5, abs=0.01) and reading["p_type_2"] < 1e-10
    text = per_type_sentence(reading)
    assert text.startswith("Split by test type, 83% of the shared model's correct OOD answers are type_2")
    assert "no sign of reuse in the second hop's role" in text
    rows[2]["acc"] = 0.10  # the shared model now beats the control on type_3
    assert "a sign of second-role reuse" in per_type_sentence(per_type_reading(pd.DataFrame(rows)))
    assert "atomic facts used in their own role" in text
    rows[1]["acc"] = 0.07  # type_2 no better than the control
    assert "no clear use of atomic facts" in per_type_sentence(per_type_reading(pd.DataFrame(rows)))
