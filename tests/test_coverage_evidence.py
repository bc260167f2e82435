"""Evidence a predictor reads (covlib.coverage.evidence): independent contexts, true equivalences only, and the per-hop
fact count of chain of thought, each against a brute force written from its definition."""
from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest
from test_coverage import CASES, random_training

from covlib.base.errors import CovlibError
from covlib.coverage.evidence import (
    fact_uses,
    hop_evidence,
    independent_pair_evidence,
    independent_sweep,
    population_hop_evidence,
    sound_sweep,
    space_answers,
    true_classes,
)
from covlib.coverage.exact import k_cutoffs, pair_evidence
from covlib.coverage.requirement import CoverageProbes, shares_at
from covlib.tasks.datasets import DatasetConfig, generate
from covlib.tasks.graphs import TASKS, get_task


def brute_classes(train: dict[tuple, int], N: int, m: int, k: int, independent: bool = False,
                  truth: dict[tuple, int] | None = None, pooled: bool = False) -> dict[tuple, int]:
    """Class of every fragment, keyed (P, fragment): fragments are joined when they share k contexts or more (k
    independent ones: at least k distinct values at every context position; with ``pooled``, k contexts that differ
    in their true behaviour) and disagree on none, and, with ``truth`` (every input's true output), only when they
    give the same output in every context of X^m."""
    class_of = {}
    for r in range(1, m):
        for P in itertools.combinations(range(m), r):
            rest = [i for i in range(m) if i not in P]

            def compose(frag: tuple, context: tuple, P=P, rest=rest) -> tuple:
                x = [0] * m
                for i, v in zip(P, frag):
                    x[i] = v
                for i, v in zip(rest, context):
                    x[i] = v
                return tuple(x)

            def context_of(context: tuple, P=P) -> tuple:  # a context, or its true behaviour when pooled
                if not pooled:
                    return context
                return tuple(truth[compose(f, context)] for f in itertools.product(range(N), repeat=len(P)))

            behaviour: dict[tuple, dict[tuple, int]] = {}
            for x, t in train.items():
                behaviour.setdefault(tuple(x[i] for i in P), {})[context_of(tuple(x[i] for i in rest))] = t
            graph = nx.Graph()
            graph.add_nodes_from(itertools.product(range(N), repeat=len(P)))
            for a, b in itertools.combinations(behaviour, 2):
                shared = set(behaviour[a]) & set(behaviour[b])
                if not shared or any(behaviour[a][c] != behaviour[b][c] for c in shared):
                    continue
                count = min(len({c[j] for c in shared}) for j in range(len(rest))) if independent else len(shared)
                if count < k:
                    continue
                if truth is not None:
                    contexts = list(itertools.product(range(N), repeat=len(rest)))
                    if [truth[compose(a, c)] for c in contexts] != [truth[compose(b, c)] for c in contexts]:
                        continue
                graph.add_edge(a, b)
            for i, comp in enumerate(nx.connected_components(graph)):
                for frag in comp:
                    class_of[P, frag] = i
    return class_of


def brute_covered(train: dict[tuple, int], N: int, m: int, k: int, **kind) -> set[tuple]:
    """The k-covered inputs of X^m under brute_classes: linked when they agree outside some P and their P-fragments
    share a class; covered when linked to a training input."""
    class_of = brute_classes(train, N, m, k, **kind)
    everything = list(itertools.product(range(N), repeat=m))
    graph = nx.Graph()
    graph.add_nodes_from(everything)
    buckets: dict[tuple, list[tuple]] = {}
    for x in everything:
        for r in range(1, m):
            for P in itertools.combinations(range(m), r):
                context = tuple(x[i] for i in range(m) if i not in P)
                buckets.setdefault((P, context, class_of[P, tuple(x[i] for i in P)]), []).append(x)
    for members in buckets.values():
        nx.add_path(graph, members)
    covered = set()
    for comp in nx.connected_components(graph):
        if any(x in train for x in comp):
            covered |= comp
    return covered


def truth_of(task_name: str, N: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """random_training's training set with the truth it came from: every input's output in code order."""
    inputs, answers = random_training(task_name, N, *_density_seed(task_name, N, seed))
    task = TASKS[task_name]
    rng = np.random.default_rng(_density_seed(task_name, N, seed)[1])
    tables = {name: rng.integers(0, N, size=(N,) * ar) for name, ar in task.primitives.items()}
    everything = np.array(list(itertools.product(range(N), repeat=task.n_inputs)))
    return inputs, answers, task.evaluate(everything, tables)[0]["t"]


def _density_seed(task_name: str, N: int, seed: int) -> tuple[float, int]:
    return next((d, s) for t, n, d, s in CASES if (t, n, s) == (task_name, N, seed))


SMALL = [case for case in CASES if case[0] != "fivehop"]


@pytest.mark.parametrize("task_name,N,density,seed", SMALL)
def test_independent_and_sound_coverage_match_their_brute_force(task_name, N, density, seed):
    inputs, answers, everything_answers = truth_of(task_name, N, seed)
    m = inputs.shape[1]
    everything = list(itertools.product(range(N), repeat=m))
    train = {tuple(x): int(t) for x, t in zip(inputs.tolist(), answers.tolist())}
    truth = {x: int(t) for x, t in zip(everything, everything_answers.tolist())}
    paper = k_cutoffs(inputs, answers, N, max_k=6)
    independent = independent_sweep(inputs, answers, N, max_k=6)
    sound = sound_sweep(inputs, answers, N, everything_answers, max_k=6)
    both = sound_sweep(inputs, answers, N, everything_answers, max_k=6, independent=True)
    pooled = sound_sweep(inputs, answers, N, everything_answers, max_k=6, pooled=True)
    assert (independent.cutoffs <= paper).all() and (sound.cutoffs <= paper).all()
    assert (both.cutoffs <= np.minimum(sound.cutoffs, independent.cutoffs)).all()
    for k in range(2, min(int(paper[paper < 6].max()), 5) + 1):
        for result, kind in ((independent, {"independent": True}), (sound, {"truth": truth}),
                             (both, {"independent": True, "truth": truth}), (pooled, {"truth": truth, "pooled": True})):
            reference = brute_covered(train, N, m, k, **kind)
            fast = {x for x, c in zip(everything, result.covered(k).tolist()) if c}
            assert fast == reference, (k, kind.keys())


def test_the_independent_count_is_the_fewest_distinct_values_of_a_context_position():
    # fragments x2 = 0 and x2 = 1 agree in contexts (x1, x3) = (0, 0), (0, 1), (0, 2): one x1 behind all three
    inputs = np.array([[0, a, c] for a in (0, 1) for c in (0, 1, 2)] + [[1, 0, 0], [2, 1, 1]])
    answers = np.array([5, 6, 7, 5, 6, 7, 3, 4])
    paper = pair_evidence(inputs, answers, 10, (1,))
    independent = independent_pair_evidence(inputs, answers, 10, (1,))
    assert (paper.left.tolist(), paper.right.tolist(), paper.count.tolist()) == ([0], [1], [3])
    assert (independent.left.tolist(), independent.right.tolist(), independent.count.tolist()) == ([0], [1], [1])
    # one context position: the two counts are one
    one = independent_pair_evidence(inputs, answers, 10, (0, 1))
    assert one.count.tolist() == pair_evidence(inputs, answers, 10, (0, 1)).count.tolist()


def test_true_classes_group_fragments_by_their_whole_behaviour():
    N, task = 5, TASKS["twohop"]
    rng = np.random.default_rng(0)
    tables = {name: rng.integers(0, N, size=(N,) * ar) for name, ar in task.primitives.items()}
    everything = np.array(list(itertools.product(range(N), repeat=3)))
    answers = task.evaluate(everything, tables)[0]["t"]
    bridge = tables["f1"].reshape(-1)
    classes = true_classes(answers, N, 3, (0, 1))
    same_class = classes[:, None] == classes[None, :]
    same_bridge = bridge[:, None] == bridge[None, :]
    assert (same_class >= same_bridge).all()  # one bridge, one behaviour (two bridges may coincide by chance)


def test_sound_coverage_never_reaches_an_item_whose_fact_is_unseen():
    """The ternary first hop: coincidences make the paper's coverage reach items of unseen facts; through true
    equivalences it reaches none, and every ID item it reaches is reached by the paper's too."""
    ds = generate(DatasetConfig("b=f1(x1,x2,x3); t=f2(b,x4)", 9, 2500, seed=0, test_size_per_type=200))
    answers = ds.evaluate(ds.train_inputs)["t"]
    paper = k_cutoffs(ds.train_inputs, answers, 9, ds.test_inputs, max_k=4)
    sound = sound_sweep(ds.train_inputs, answers, 9, space_answers(ds), ds.test_inputs, max_k=4).cutoffs
    ood = np.isin(ds.test_types, ["type_1", "type_2", "type_3"])
    assert (paper[ood] >= 2).mean() > 0.1 and (sound[ood] == 0).all()
    assert (sound <= paper).all()


def test_hop_evidence_is_the_fewest_uses_of_any_of_an_items_facts():
    for name, same in (("twohop", False), ("threehop", False), ("twohop", True)):
        ds = generate(DatasetConfig(name, 7, 150, seed=1, test_size_per_type=30, same_functions=same))
        task = ds.task
        values = ds.evaluate(ds.train_inputs)
        table_of = task.table_of_hop(same)
        facts = [(table_of[h], tuple(int(v) for v in vals)) for x in range(len(ds.train_inputs))
                 for h, hop in enumerate(task.hops) for vals in [[values[a][x] for a in hop.inputs]]]
        counted = {}
        for fact in facts:
            counted[fact] = counted.get(fact, 0) + 1
        queries = ds.test_inputs
        qv = ds.evaluate(queries)
        expected = [min(counted.get((table_of[h], tuple(int(qv[a][i]) for a in hop.inputs)), 0)
                        for h, hop in enumerate(task.hops)) for i in range(len(queries))]
        assert hop_evidence(ds, queries).tolist() == expected
        assert sum(int(u.sum()) for u in fact_uses(ds).values()) == len(ds.train_inputs) * len(task.hops)


@pytest.mark.parametrize("name,same", [("twohop", False), ("parallel_twohop", False), ("twohop", True)])
def test_population_hop_evidence_covers_every_id_input_not_in_training(name, same, monkeypatch):
    N = 6
    ds = generate(DatasetConfig(name, N, 60 if name == "twohop" else 200, seed=2, test_size_per_type=0,
                                same_functions=same))
    task = ds.task
    everything = np.array(list(itertools.product(range(N), repeat=task.n_inputs)))
    _, facts = task.evaluate(everything, ds.tables, same)
    tables = task.table_of_hop(same)
    eligible = np.all([ds.seen_split[t].reshape(-1)[f] for f, t in zip(facts, tables)], axis=0)
    train = {tuple(x) for x in ds.train_inputs.tolist()}
    outside = np.array([tuple(x) not in train for x in everything.tolist()])
    expected = hop_evidence(ds, everything[eligible & outside])
    assert sorted(population_hop_evidence(ds).tolist()) == sorted(expected.tolist())
    assert len(expected) == ds.eligible_count - len(train)
    import covlib.coverage.evidence as evidence  # a space too large to keep: labelled chunk by chunk

    kept = population_hop_evidence(ds).tolist()
    monkeypatch.setattr(evidence, "space_facts", lambda *args: None)
    assert population_hop_evidence(ds, chunk=50).tolist() == kept


def test_a_crossing_of_hop_facts_is_bracketed_like_any_other():
    cell = CoverageProbes("threehop", 10, 0, [2, 3], test_size_per_type=300, evidence="hop facts")
    row = cell.crossing(3, 0.9, rel_tol=0.0, top_first=False)
    assert row["n_train"] - row["below"] == 1
    assert cell.share(row["n_train"], 3) >= 0.9 > cell.share(row["below"], 3)
    ds = generate(DatasetConfig("threehop", 10, row["n_train"], seed=0, test_size_per_type=0))
    assert shares_at("threehop", 10, 0, [3], 300, row["n_train"], "hop facts")[3] == \
        pytest.approx(np.mean(population_hop_evidence(ds) >= 3))
    sound = shares_at("twohop", 12, 0, [2, 3], 300, 500, "sound")
    paper = shares_at("twohop", 12, 0, [2, 3], 300, 500, "contexts")
    assert all(sound[k] <= paper[k] for k in (2, 3))
    with pytest.raises(CovlibError, match="choose one of contexts, sound, independent, pooled, hop facts"):
        CoverageProbes("twohop", 8, 0, [3], evidence="bridges")


def test_the_depth_of_a_task_is_its_longest_chain_of_hops():
    from covlib.coverage.rule import depth, plain_k
    assert [depth(t) for t in ("twohop", "parallel_twohop", "threehop", "fivehop")] == [2, 2, 3, 5]
    assert depth(get_task("b1=f1(x1,x2); b2=f2(x3,x4); b3=f3(b1,b2); t=f4(b3,x5)")) == 3
    assert plain_k("threehop") == 4


def test_the_scaling_command_writes_crossings_of_any_evidence(tmp_path, capsys):
    import pandas as pd

    from covlib.cli.main import main

    out = tmp_path / "sound.csv"
    assert main(["scaling", "coverage", "--task", "twohop", "--N", "8", "--ks", "1", "--targets", "0.9", "--seeds", "0",
                 "--per-seed", "--evidence", "hop facts", "--out", str(out)]) == 0
    table = pd.read_csv(out)
    assert table["evidence"].tolist() == ["hop facts"] and table["n_train"].iloc[0] > 0
    # another task at the same N goes into the same file (a run resumes per task and N, not per N alone)
    assert main(["scaling", "coverage", "--graph", "b=f1(x1,x2); t=f2(b,x3,x4)", "--N", "8", "--ks", "1", "--targets",
                 "0.9", "--seeds", "0", "--per-seed", "--evidence", "hop facts", "--out", str(out)]) == 0
    assert sorted(pd.read_csv(out)["task"]) == ["b=f1(x1,x2);t=f2(b,x3,x4)", "twohop"]
    assert main(["scaling", "coverage", "--task", "twohop", "--N", "8", "--evidence", "sound", "--out",
                 str(tmp_path / "x.csv")]) == 2
    assert "add --per-seed" in capsys.readouterr().err
