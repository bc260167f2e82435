"""Evidence a predictor can read without being fooled: k-coverage that counts only independent contexts, and, for
chain of thought, the per-hop count of training examples that use each of an item's facts.

The paper's k-equivalence counts shared contexts. Those k contexts can share one coincidence: in
``b=f1(x1,x2,x3); t=f2(b,x4)`` two fragments (x2,x3) and (x2',x3') with f1(x1,x2,x3) = f1(x1,x2',x3') for one x1
agree in every context (x1, x4) with that x1, so k contexts that all hold the same x1 make them k-equivalent though
they differ for every other x1. ``independent_pair_evidence`` counts a pair's evidence as the fewest distinct values
any one context position takes over its shared contexts: k independent contexts differ pairwise at every position,
so no single value of any position stands behind two of them. Where the context is one position the two counts are
the same; elsewhere the independent count is at most the paper's.

With the bridge written out (chain of thought), each hop is a supervised look-up: its fact is a target the model is
taught. An ID item's per-hop evidence is the fewest training examples that use any one of its hop facts.
"""
from __future__ import annotations

import numpy as np

from covlib.coverage.exact import (
    CoverageResult,
    PairEvidence,
    _check_training,
    _pairs_within_groups,
    coverage_sweep,
    max_pairs,
    pair_evidence,
    proper_subsets,
    shared_contexts,
)
from covlib.tasks.codes import decode
from covlib.tasks.codes import encode as encode_inputs
from covlib.tasks.datasets import Dataset, DatasetConfig, generate, space_facts

EVIDENCE_KINDS = ("contexts", "sound", "independent", "pooled", "hop facts")  # the paper's count, true equivalences
# only, independent contexts, true equivalences with contexts pooled by their own true class, chain of thought's per hop


def _agreeing_pairs(frag: np.ndarray, ctx: np.ndarray, answers: np.ndarray, n_frag: int, n_ctx: int
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The fragment pairs that agree in some shared context (two training items with one context and one output):
    (lo, hi, agree = shared agreeing contexts, keep = no shared context disagrees, and per agreeing record its
    pair's index and its context)."""
    group = ctx * (int(answers.max()) + 1 if len(answers) else 1) + answers
    order = np.argsort(group, kind="stable")
    i, j = _pairs_within_groups(group[order], limit=max_pairs())
    a, b = frag[order][i], frag[order][j]
    record_ctx = ctx[order][i]
    del i, j
    keys, inverse, agree = np.unique(np.minimum(a, b) * n_frag + np.maximum(a, b), return_inverse=True,
                                     return_counts=True)
    del a, b
    lo, hi = keys // n_frag, keys % n_frag
    keep = shared_contexts(frag, ctx, n_frag, n_ctx, lo, hi) == agree
    return lo, hi, agree, keep, inverse.ravel(), record_ctx


def pooled_pair_evidence(train_inputs: np.ndarray, train_answers: np.ndarray, num_tokens: int,
                         positions: tuple[int, ...], context_class: np.ndarray) -> PairEvidence:
    """pair_evidence with contexts counted up to their own true equivalence: ``context_class[c]`` is the true class
    of context c (true_classes over the other positions), and two fragments share a context class when each occurs
    with some context of it. Where no two contexts are truly equivalent this is the paper's count; in parallel
    two-hop, contexts (x3, x4) of one bridge b2 count once, as a model that has resolved b2 may treat them."""
    inputs = np.asarray(train_inputs, dtype=np.int64)
    answers = np.asarray(train_answers, dtype=np.int64)
    m = inputs.shape[1]
    rest = tuple(p for p in range(m) if p not in positions)
    frag = encode_inputs(inputs[:, list(positions)], num_tokens)
    ctx = np.asarray(context_class, dtype=np.int64)[encode_inputs(inputs[:, list(rest)], num_tokens)]
    n_frag, n_ctx = num_tokens ** len(positions), int(np.max(context_class)) + 1
    # one item per (fragment, context class): truly equivalent contexts give one output, so nothing is lost
    _, first = np.unique(frag * n_ctx + ctx, return_index=True)
    frag, ctx, answers = frag[first], ctx[first], answers[first]
    lo, hi, agree, keep, _, _ = _agreeing_pairs(frag, ctx, answers, n_frag, n_ctx)
    return PairEvidence(tuple(positions), lo[keep], hi[keep], agree[keep])


def independent_pair_evidence(train_inputs: np.ndarray, train_answers: np.ndarray, num_tokens: int,
                              positions: tuple[int, ...]) -> PairEvidence:
    """Every contradiction-free fragment pair over ``positions`` (the pairs of covlib.coverage.exact.pair_evidence),
    its count the independent contexts: the fewest distinct values any context position takes over the pair's shared
    contexts (all of which agree). Training inputs must be free of duplicates (covlib.coverage.exact does that)."""
    inputs = np.asarray(train_inputs, dtype=np.int64)
    answers = np.asarray(train_answers, dtype=np.int64)
    m = inputs.shape[1]
    rest = tuple(p for p in range(m) if p not in positions)
    frag = encode_inputs(inputs[:, list(positions)], num_tokens)
    ctx = encode_inputs(inputs[:, list(rest)], num_tokens)
    n_frag, n_ctx = num_tokens ** len(positions), num_tokens ** len(rest)

    # the agreeing records: two training inputs with one context and one output, one record per shared context
    lo, hi, agree, keep, inverse, record_ctx = _agreeing_pairs(frag, ctx, answers, n_frag, n_ctx)
    count = agree.copy()
    if len(rest) > 1 and len(lo):
        kept = keep[inverse]
        pair, context = inverse[kept], decode(record_ctx[kept], num_tokens, len(rest)).astype(np.int64)
        for column in context.T:  # distinct values of this context position per pair
            distinct = np.unique(pair * num_tokens + column) // num_tokens
            count = np.minimum(count, np.bincount(distinct, minlength=len(lo)))
    return PairEvidence(tuple(positions), lo[keep], hi[keep], count[keep])


def all_independent_evidence(train_inputs: np.ndarray, train_answers: np.ndarray, num_tokens: int
                             ) -> list[PairEvidence]:
    """``independent_pair_evidence`` for every proper, non-empty P."""
    inputs, answers = _check_training(train_inputs, train_answers, num_tokens)
    return [independent_pair_evidence(inputs, answers, num_tokens, p) for p in proper_subsets(inputs.shape[1])]


def independent_sweep(train_inputs: np.ndarray, train_answers: np.ndarray, num_tokens: int,
                      queries: np.ndarray | None = None, max_k: int | None = None, min_k: int = 1) -> CoverageResult:
    """k-cutoffs of ``queries`` (every input when None) when k-equivalence needs k independent shared contexts:
    covlib.coverage.exact.coverage_sweep on ``all_independent_evidence``. Never above the paper's k-cutoff."""
    inputs, answers = _check_training(train_inputs, train_answers, num_tokens)
    evidence = [independent_pair_evidence(inputs, answers, num_tokens, p) for p in proper_subsets(inputs.shape[1])]
    return coverage_sweep(inputs, answers, num_tokens, queries, max_k, evidence=evidence, min_k=min_k)


def fact_uses(dataset: Dataset) -> dict[str, np.ndarray]:
    """Per primitive table, how many training examples use each of its facts (flat index), counted over every hop
    that reads the table (a table shared by two hops counts an example's use in either role)."""
    task, same = dataset.task, dataset.config.same_functions
    _, facts = task.evaluate(dataset.train_inputs, dataset.tables, same)
    uses = {name: np.zeros(table.size, dtype=np.int64) for name, table in dataset.tables.items()}
    for flat, name in zip(facts, task.table_of_hop(same)):
        uses[name] += np.bincount(flat, minlength=uses[name].size)
    return uses


def hop_evidence(dataset: Dataset, queries: np.ndarray) -> np.ndarray:
    """Each query's per-hop evidence: the fewest training examples that use any one of its hop facts (0 when some
    fact of it is used by none)."""
    task, same = dataset.task, dataset.config.same_functions
    uses = fact_uses(dataset)
    _, facts = task.evaluate(np.asarray(queries), dataset.tables, same)
    per_hop = [uses[name][flat] for flat, name in zip(facts, task.table_of_hop(same))]
    return np.min(np.stack(per_hop), axis=0) if per_hop else np.zeros(len(queries), dtype=np.int64)


def true_classes(all_answers: np.ndarray, num_tokens: int, n_inputs: int, positions: tuple[int, ...]) -> np.ndarray:
    """Per fragment over ``positions`` (its base-N id), the id of its true behaviour: two fragments share it when
    they give the same output in every context of the whole input space. ``all_answers`` holds the task's output
    for every input in code order (the truth, which a predictor has and the data does not show)."""
    rest = tuple(p for p in range(n_inputs) if p not in positions)
    grid = np.asarray(all_answers).reshape((num_tokens,) * n_inputs).transpose(positions + rest)
    rows = np.ascontiguousarray(grid.reshape(num_tokens ** len(positions), -1))
    _, inverse = np.unique(rows, axis=0, return_inverse=True)
    return inverse.ravel().astype(np.int64)


def sound_evidence(evidence: list[PairEvidence], all_answers: np.ndarray, num_tokens: int, n_inputs: int
                   ) -> list[PairEvidence]:
    """The pairs of ``evidence`` whose fragments are truly equivalent (covlib.coverage.evidence.true_classes): the
    k-equivalences the data shows that are real, none that a coincidence made."""
    out = []
    for ev in evidence:
        truth = true_classes(all_answers, num_tokens, n_inputs, ev.positions)
        real = truth[ev.left] == truth[ev.right]
        out.append(PairEvidence(ev.positions, ev.left[real], ev.right[real], ev.count[real]))
    return out


def sound_sweep(train_inputs: np.ndarray, train_answers: np.ndarray, num_tokens: int, all_answers: np.ndarray,
                queries: np.ndarray | None = None, max_k: int | None = None, min_k: int = 1,
                independent: bool = False, pooled: bool = False) -> CoverageResult:
    """k-cutoffs of ``queries`` when only true equivalences count (the paper's evidence count, the independent
    count with ``independent``, or contexts pooled by their own true equivalence with ``pooled``): the coverage no
    coincidence can inflate. Never above the paper's k-cutoff, except pooled, which can count more."""
    inputs, answers = _check_training(train_inputs, train_answers, num_tokens)
    m = inputs.shape[1]
    if pooled:
        evidence = [pooled_pair_evidence(inputs, answers, num_tokens, p,
                                         true_classes(all_answers, num_tokens, m, tuple(q for q in range(m) if q not in p)))
                    for p in proper_subsets(m)]
    elif independent:
        evidence = [independent_pair_evidence(inputs, answers, num_tokens, p) for p in proper_subsets(m)]
    else:
        evidence = [pair_evidence(inputs, answers, num_tokens, p) for p in proper_subsets(m)]
    return coverage_sweep(inputs, answers, num_tokens, queries, max_k,
                          evidence=sound_evidence(evidence, all_answers, num_tokens, m), min_k=min_k)


def space_answers(dataset: Dataset) -> np.ndarray:
    """The task's output for every input of the space, in code order."""
    N, m = dataset.config.num_tokens, dataset.task.n_inputs
    codes = np.arange(N**m, dtype=np.int64)
    return dataset.evaluate(decode(codes, N, m))["t"].astype(np.int64)


def population_hop_evidence(dataset: Dataset, chunk: int = 1 << 22) -> np.ndarray:
    """The per-hop evidence of every ID input not in training: every input whose hop facts all lie in the seen
    split (the inputs training could have drawn), less the training inputs. Exact, over the whole population, so its
    share is not conditioned on the facts the training set happens to use (the ID test type is: at a tiny training
    set every type_0 item has each of its facts used once)."""
    task, same, N = dataset.task, dataset.config.same_functions, dataset.config.num_tokens
    m = task.n_inputs
    uses = fact_uses(dataset)
    tables = task.table_of_hop(same)
    train = np.sort(encode_inputs(dataset.train_inputs, N))
    pool = space_facts(task, dataset.tables, same, N)
    space = N**m
    parts = []
    for begin in range(0, space, chunk):
        codes = np.arange(begin, min(begin + chunk, space), dtype=np.int64)
        facts = ([f[begin:begin + len(codes)] for f in pool] if pool is not None else
                 task.evaluate(decode(codes, N, m), dataset.tables, same)[1])
        eligible = np.ones(len(codes), dtype=bool)
        level = np.full(len(codes), np.iinfo(np.int64).max, dtype=np.int64)
        for flat, name in zip(facts, tables):
            eligible &= dataset.seen_split[name].reshape(-1)[flat]
            level = np.minimum(level, uses[name][flat])
        pos = np.minimum(np.searchsorted(train, codes), len(train) - 1)
        eligible &= train[pos] != codes
        parts.append(level[eligible])
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def coincidences_by_type(task: str, num_tokens: int, n_train: int, seed: int = 0, k: int = 3,
                         test_size_per_type: int = 500) -> dict:
    """How far coincidences inflate coverage in one dataset: the share of its ID (type_0) and OOD (every other type)
    test items k-covered by the paper's definition and through true equivalences only (one of an OOD item's facts is
    unseen, so only a coincidence, or tables that make two fragments interchangeable everywhere, reach it)."""
    ds = generate(DatasetConfig(task, num_tokens, n_train, seed=seed, test_size_per_type=test_size_per_type))
    answers = ds.evaluate(ds.train_inputs)["t"]
    paper = coverage_sweep(ds.train_inputs, answers, num_tokens, ds.test_inputs, max_k=k, min_k=k).covered(k)
    sound = sound_sweep(ds.train_inputs, answers, num_tokens, space_answers(ds), ds.test_inputs, max_k=k,
                        min_k=k).covered(k)
    ids, ood = ds.test_types == "type_0", ~np.isin(ds.test_types, ["type_0", "train_inferred"])
    share = lambda covered, mask: float(covered[mask].mean()) if mask.any() else float("nan")  # noqa: E731
    return {"task": ds.task.graph, "N": num_tokens, "n_train": n_train, "seed": seed, "k": k,
            "id_paper": share(paper, ids), "id_sound": share(sound, ids), "ood_paper": share(paper, ood),
            "ood_sound": share(sound, ood), "id_items": int(ids.sum()), "ood_items": int(ood.sum())}
