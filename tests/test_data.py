"""Dataset generation: targets, seen split, test types, overlap, determinism.

The checks below recompute everything from the primitive tables with plain Python loops, so
they do not share code with covlib's vectorised path.
"""
from __future__ import annotations

import itertools
import json
from collections import Counter

import numpy as np
import pytest

from covlib.base.errors import CovlibError
from covlib.tasks.codes import decode, encode
from covlib.tasks.datasets import DatasetConfig, dataset_files, generate, save_dataset
from covlib.tasks.folders import load_dataset
from covlib.tasks.graphs import TASKS

# Small but non-trivial configs: every task, plus the target styles and the shared-table case.
CONFIGS = [
    DatasetConfig("twohop", 12, 600, seed=1, test_size_per_type=40),
    DatasetConfig("parallel_twohop", 7, 600, seed=2, test_size_per_type=40),
    DatasetConfig("threehop", 7, 500, seed=3, test_size_per_type=40),
    DatasetConfig("nontree", 10, 300, seed=4, test_size_per_type=40),
    DatasetConfig("fivehop", 5, 500, seed=5, test_size_per_type=10, cot=True),
    DatasetConfig("fivehop", 5, 500, seed=6, test_size_per_type=10),  # plain: the authors train it with CoT only
    DatasetConfig("twohop", 10, 300, cot=True, test_size_per_type=30),
    DatasetConfig("threehop", 6, 200, fake_bridge=True, test_size_per_type=30),
    DatasetConfig("twohop", 10, 300, same_functions=True, test_size_per_type=30),
    DatasetConfig("parallel_twohop", 6, 300, include_atomic=True, same_functions=True, test_size_per_type=20),
]
IDS = [c.folder_name for c in CONFIGS]


def compose_by_hand(task_name: str, x: tuple, f: dict) -> tuple[list[int], list[tuple]]:
    """Bridges+answer and the (primitive, args) facts used, written out per task."""
    if task_name == "twohop":
        b = f["f1"][x[0], x[1]]
        return [b, f["f2"][b, x[2]]], [("f1", (x[0], x[1])), ("f2", (b, x[2]))]
    if task_name == "parallel_twohop":
        b1, b2 = f["f1"][x[0], x[1]], f["f2"][x[2], x[3]]
        return [b1, b2, f["f3"][b1, b2]], [("f1", (x[0], x[1])), ("f2", (x[2], x[3])), ("f3", (b1, b2))]
    if task_name == "nontree":
        b = f["f1"][x[0], x[1]]
        return [b, f["f2"][b, x[1], x[2]]], [("f1", (x[0], x[1])), ("f2", (b, x[1], x[2]))]
    # chains: threehop, fivehop
    values, facts, b = [], [("f1", (x[0], x[1]))], f["f1"][x[0], x[1]]
    values.append(b)
    for i in range(2, len(x)):
        facts.append((f"f{i}", (b, x[i])))
        b = f[f"f{i}"][b, x[i]]
        values.append(b)
    return values, facts


def tables_by_primitive(ds) -> dict:
    """Primitive name -> table, resolving the shared table when same_functions is set."""
    names = ds.task.table_of_hop(ds.config.same_functions)
    return {hop.primitive: ds.tables[t] for hop, t in zip(ds.task.hops, names)}


@pytest.fixture(scope="module", params=CONFIGS, ids=IDS)
def generated(request, tmp_path_factory):
    ds = generate(request.param)
    folder = save_dataset(ds, tmp_path_factory.mktemp("ds"))
    return ds, load_dataset(folder)


def test_every_target_matches_the_primitive_tables(generated):
    ds, folder = generated
    f = tables_by_primitive(ds)
    n_bridges = len(ds.task.bridges)
    for split in (folder.train, folder.test):
        for x, target in zip(split.inputs.tolist(), split.targets.tolist()):
            values, _ = compose_by_hand(ds.config.task, tuple(x), f)
            if ds.config.fake_bridge:
                assert target == [ds.config.num_tokens] * n_bridges + [values[-1]]
            elif ds.config.cot:
                assert target == values
            else:
                assert target == [values[-1]]


def test_atomic_fact_files_list_every_fact_of_each_primitive(generated):
    ds, folder = generated
    f = tables_by_primitive(ds)
    facts = folder.atomic_facts()
    assert sorted(facts) == sorted(f)
    for name, split in facts.items():
        table = f[name]
        assert len(split) == table.size
        assert len({tuple(r) for r in split.inputs.tolist()}) == table.size
        for args, out in zip(split.inputs.tolist(), split.answers.tolist()):
            assert table[tuple(args)] == out


def test_training_uses_only_seen_facts_and_seen_means_used(generated):
    ds, folder = generated
    used = {name: set() for name in ds.tables}
    table_of = dict(zip([h.primitive for h in ds.task.hops], ds.task.table_of_hop(ds.config.same_functions)))
    for x in folder.train.inputs.tolist():
        _, facts = compose_by_hand(ds.config.task, tuple(x), tables_by_primitive(ds))
        for prim, args in facts:
            assert ds.seen_split[table_of[prim]][args], "a training example uses a fact outside the seen split"
            used[table_of[prim]].add(args)
    for name, table in ds.seen_used.items():
        assert {tuple(a) for a in np.argwhere(table).tolist()} == used[name]


def test_test_types_follow_the_bit_rule(generated):
    ds, folder = generated
    f = tables_by_primitive(ds)
    table_of = dict(zip([h.primitive for h in ds.task.hops], ds.task.table_of_hop(ds.config.same_functions)))
    train = {tuple(x) for x in folder.train.inputs.tolist()}
    n_hops = len(ds.task.hops)
    for x, kind in zip(folder.test.inputs.tolist(), folder.test.types.tolist()):
        if kind == "train_inferred":
            assert tuple(x) in train
            continue
        assert tuple(x) not in train, "a test item overlaps training"
        _, facts = compose_by_hand(ds.config.task, tuple(x), f)
        bits = sum(int(ds.seen_used[table_of[p]][a]) << (n_hops - 1 - h) for h, (p, a) in enumerate(facts))
        assert kind == ("type_0" if bits == 2**n_hops - 1 else f"type_{bits + 1}")


def test_test_sizes_and_uniqueness(generated):
    ds, folder = generated
    counts = Counter(folder.test.types.tolist())
    t = ds.config.test_size_per_type
    assert counts["train_inferred"] == min(t, ds.config.n_train)
    for kind, n in counts.items():
        if kind != "train_inferred":
            assert n == min(t, ds.population[kind])  # all of a type when it has fewer inputs than asked
    non_train = folder.test.inputs[folder.test.types != "train_inferred"]
    assert len({tuple(x) for x in non_train.tolist()}) == len(non_train)
    assert len({tuple(x) for x in folder.train.inputs.tolist()}) == ds.config.n_train


def test_population_counts_cover_every_non_training_input():
    ds = generate(DatasetConfig("twohop", 9, 150, seed=7, test_size_per_type=5))
    assert sum(ds.population.values()) == 9**3 - 150
    seen = {name: int(s.sum()) for name, s in ds.seen_split.items()}
    assert seen == {"f1": round(0.7 * 81), "f2": round(0.7 * 81)}
    # the eligible count, by brute force over X^3
    f1, s1, s2 = ds.tables["f1"], ds.seen_split["f1"], ds.seen_split["f2"]
    brute = sum(1 for a, b, c in itertools.product(range(9), repeat=3) if s1[a, b] and s2[f1[a, b], c])
    assert ds.eligible_count == brute


def test_tables_are_random_functions_not_permutations():
    ds = generate(DatasetConfig("twohop", 30, 1000, test_size_per_type=1))
    preimages = np.bincount(ds.tables["f1"].ravel(), minlength=30)
    assert preimages.min() < preimages.max()  # unequal pre-images: drawn with replacement


def test_include_atomic_adds_every_f1_fact_to_training(tmp_path):
    cfg = DatasetConfig("parallel_twohop", 6, 300, include_atomic=True, test_size_per_type=10)
    folder = load_dataset(save_dataset(generate(cfg), tmp_path))
    assert len(folder.train) == 300
    (atomic,) = folder.train_extra
    assert atomic.inputs.shape == (36, 2)
    f1 = folder.atomic_facts()["f1"]
    assert np.array_equal(atomic.inputs, f1.inputs) and np.array_equal(atomic.answers, f1.answers)


def test_same_config_gives_byte_identical_files_and_seed_changes_them():
    cfg = DatasetConfig("threehop", 8, 700, seed=11, test_size_per_type=25, cot=True)
    first, second = dataset_files(generate(cfg)), dataset_files(generate(cfg))
    assert first == second
    other = dataset_files(generate(DatasetConfig("threehop", 8, 700, seed=12, test_size_per_type=25, cot=True)))
    assert other["train.json"] != first["train.json"]


def test_vocab_layout():
    plain = json.loads(dataset_files(generate(DatasetConfig("twohop", 5, 20, test_size_per_type=2)))["vocab.json"])
    assert plain == [f"<t_{i}>" for i in range(5)] + ["</a>"]
    fake = json.loads(
        dataset_files(generate(DatasetConfig("twohop", 5, 20, fake_bridge=True, test_size_per_type=2)))["vocab.json"]
    )
    assert fake[-2:] == ["</b>", "</a>"]


def test_folder_names_follow_the_authors():
    assert DatasetConfig("twohop", 50, 10000).folder_name == "twohop.50.10000.diff-f12.inf"
    assert DatasetConfig("threehop", 50, 10, cot=True).folder_name == "threehop.50.10.diff-f123.cot"
    assert DatasetConfig("parallel_twohop", 9, 10, same_functions=True).folder_name == "parallel2hop.9.10.same-f123.inf"
    assert DatasetConfig("twohop", 9, 10, fake_bridge=True, seed=3).folder_name == "twohop.9.10.diff-f12.fakebridge.seed-3"


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(task="fourhop", num_tokens=10, n_train=10), "unknown task 'fourhop'"),
        (dict(task="twohop", num_tokens=1, n_train=10), "too small"),
        (dict(task="twohop", num_tokens=10, n_train=0), "at least 1"),
        (dict(task="twohop", num_tokens=10, n_train=10, seen_ratio=1.5), "seen_ratio"),
        (dict(task="nontree", num_tokens=5, n_train=10, same_functions=True), "arities"),
        (dict(task="fivehop", num_tokens=60, n_train=10, cot=True), r"smaller num_tokens \(N\)"),
    ],
)
def test_bad_configs_are_refused_with_a_clear_message(kwargs, message):
    with pytest.raises(CovlibError, match=message):
        DatasetConfig(**kwargs)


def test_n_train_at_the_eligible_count_names_the_maximum():
    probe = generate(DatasetConfig("twohop", 10, 10, seed=0, test_size_per_type=1))
    with pytest.raises(CovlibError, match=f"the maximum is {probe.eligible_count - 1}"):
        generate(DatasetConfig("twohop", 10, probe.eligible_count, seed=0))
    assert len(generate(DatasetConfig("twohop", 10, probe.eligible_count - 1, seed=0, test_size_per_type=5)).train_inputs)


@pytest.mark.parametrize("task", list(TASKS))
def test_every_task_is_described_by_its_graph(task):
    spec = TASKS[task]
    assert spec.hops[-1].output == "t"
    names = set(spec.input_names)
    for hop in spec.hops:  # each hop reads only nodes computed before it
        assert set(hop.inputs) <= names
        names.add(hop.output)


@pytest.mark.parametrize("config", [
    DatasetConfig("twohop", 20, 1500, seed=0, test_size_per_type=500),
    DatasetConfig("threehop", 9, 700, seed=1, cot=True),
    DatasetConfig("parallel_twohop", 7, 600, seed=2, test_size_per_type=100),
    DatasetConfig("twohop", 12, 100, seed=3, same_functions=True, include_atomic=True),
    DatasetConfig("nontree", 14, 900, seed=0, commutative=("f1",)),
    DatasetConfig("twohop", 10, 80, seed=0, first_role_items=20, test_size_per_type=50),
], ids=lambda c: c.folder_name)
def test_labelling_the_space_from_kept_facts_gives_the_datasets_of_chunked_labelling(config, monkeypatch):
    import covlib.tasks.datasets as datasets

    kept, again = generate(config), generate(config)  # the second reuses the first's facts
    monkeypatch.setattr(datasets, "POOL_SPACE", 0)
    chunked = generate(config)
    for pooled in (kept, again):
        for field in ("train_inputs", "test_inputs", "test_types"):
            assert np.array_equal(getattr(pooled, field), getattr(chunked, field))
        assert (pooled.eligible_count, pooled.population) == (chunked.eligible_count, chunked.population)


def test_the_one_pass_reader_gives_what_the_item_by_item_reader_gives(generated, monkeypatch):
    from covlib.tasks import folders

    _, folder = generated
    vocab = json.loads((folder.path / "vocab.json").read_text())
    tok2id = {t: i for i, t in enumerate(vocab)}
    read = {}
    for name, need_type in (("test.json", True), ("train.json", False)):
        raw = folders._split_by_prompt_length(json.loads((folder.path / name).read_text()), name)[0]
        read[name] = folders._parse_uniform(raw, tok2id, need_type)
        assert read[name] is not None
    monkeypatch.setattr(folders, "_parse_uniform", lambda *args: None)  # every item read one by one
    for name, need_type in (("test.json", True), ("train.json", False)):
        raw = folders._split_by_prompt_length(json.loads((folder.path / name).read_text()), name)[0]
        slow, fast = folders._parse_items(raw, tok2id, name, need_type), read[name]
        np.testing.assert_array_equal(fast.inputs, slow.inputs)
        np.testing.assert_array_equal(fast.targets, slow.targets)
        assert (fast.types is None) == (slow.types is None)
        if fast.types is not None:
            np.testing.assert_array_equal(fast.types, slow.types)


def test_a_bad_item_is_named_whether_or_not_its_neighbours_are_fine(tmp_path):
    folder = save_dataset(generate(CONFIGS[0]), tmp_path)
    items = json.loads((folder / "test.json").read_text())
    items[5]["target_text"] = items[5]["input_text"] + "<t_1><t_999></a>"
    (folder / "test.json").write_text(json.dumps(items))
    with pytest.raises(CovlibError, match="test.json item 5 uses token"):
        load_dataset(folder)


@pytest.mark.parametrize("num_tokens,n_inputs", [(7, 3), (16, 6), (100, 6), (5, 0)])  # (100, 6): codes past int32
def test_decode_gives_each_code_its_digits_most_significant_first(num_tokens, n_inputs):
    space = num_tokens**n_inputs
    rng = np.random.default_rng(0)
    codes = np.unique(np.concatenate([[0, space - 1], rng.integers(0, space, size=500)]))
    digits = decode(codes, num_tokens, n_inputs)
    by_hand = [[(code // num_tokens**(n_inputs - 1 - j)) % num_tokens for j in range(n_inputs)] for code in codes.tolist()]
    assert digits.dtype == np.int32 and digits.tolist() == by_hand
    assert np.array_equal(encode(digits, num_tokens), codes)
