"""The authors' coverage script, reproduced to show where it departs from the definition."""
from __future__ import annotations

import numpy as np

from covlib.base.errors import CovlibError
from covlib.coverage.exact import (
    CoverageResult,
    _check_training,
    _union,
    component_roots,
    encode_inputs,
    pair_evidence,
    proper_subsets,
)


def _covered_nodes(bucket_keys: list[np.ndarray], is_train: np.ndarray) -> np.ndarray:
    """Nodes connected to a training node when every bucket (equal key) is a clique."""
    n = len(is_train)
    keys = np.concatenate(bucket_keys)
    node = np.tile(np.arange(n), len(bucket_keys))
    _, bucket = np.unique(keys, return_inverse=True)
    bucket = bucket.ravel() + n
    comp = component_roots(int(bucket.max(initial=n - 1)) + 1, node, bucket)  # nodes, then one node per bucket
    good = np.zeros(len(comp), dtype=bool)
    good[comp[:n][is_train]] = True
    return good[comp[:n]]


def authors_sweep(train_inputs: np.ndarray, train_answers: np.ndarray, num_tokens: int,
                  test_inputs: np.ndarray, test_answers: np.ndarray, test_types: np.ndarray,
                  max_k: int | None = None) -> CoverageResult:
    """k-cutoff of every test item by the authors' algorithm (see the module docstring).

    Needs the test items' true answers (their oracle) and types (their node set). Training
    inputs, and items covered with no equivalence at all, get the ceiling (max_k, or the largest
    evidence + 1).
    """
    inputs, answers = _check_training(train_inputs, train_answers, num_tokens)
    test_inputs = np.asarray(test_inputs, dtype=np.int64)
    test_answers = np.asarray(test_answers, dtype=np.int64).reshape(-1)
    test_types = np.asarray(test_types).astype(str)
    m = inputs.shape[1]
    if test_inputs.ndim != 2 or test_inputs.shape[1] != m or not len(test_inputs) == len(test_answers) == len(test_types):
        raise CovlibError("test inputs (n, m), answers (n,) and types (n,) must describe the same n items")
    if max_k is not None and max_k < 1:
        raise CovlibError(f"max_k={max_k} must be at least 1")
    subsets = proper_subsets(m)
    evidence = [pair_evidence(inputs, answers, num_tokens, p) for p in subsets]
    top = max((int(ev.count.max()) for ev in evidence if len(ev)), default=0)
    ceiling = max_k if max_k is not None else top + 1
    levels = [ceiling] + sorted({int(c) for ev in evidence for c in np.unique(ev.count) if c < ceiling}, reverse=True)

    # one union-find over fragment *values*: a fragment of length L has id offset[L] + its base-N code
    offset = np.cumsum([0] + [num_tokens**length for length in range(1, m)])
    frag_labels = np.arange(int(offset[-1]), dtype=np.int64)
    pair_left = np.concatenate([offset[len(ev.positions) - 1] + ev.left for ev in evidence])
    pair_right = np.concatenate([offset[len(ev.positions) - 1] + ev.right for ev in evidence])
    pair_count = np.concatenate([ev.count for ev in evidence])

    train_codes = encode_inputs(inputs, num_tokens)
    test_codes = encode_inputs(test_inputs, num_tokens)
    in_train = np.isin(test_codes, train_codes)
    cutoffs = np.where(in_train, ceiling, 0).astype(np.int64)

    graphs = []  # per test type: node inputs, labels, training flags, which test items they are
    for name in sorted(set(test_types[~in_train].tolist())):
        items = np.flatnonzero((test_types == name) & ~in_train)
        codes, first, inverse = np.unique(test_codes[items], return_index=True, return_inverse=True)
        nodes = np.concatenate([inputs, test_inputs[items[first]]])
        labels = np.concatenate([answers, test_answers[items[first]]])
        is_train = np.arange(len(nodes)) < len(inputs)
        frag_ids, ctx_ids = [], []
        for p in subsets:
            rest = [i for i in range(m) if i not in p]
            frag_ids.append(offset[len(p) - 1] + encode_inputs(nodes[:, list(p)], num_tokens))
            ctx_ids.append(encode_inputs(nodes[:, rest], num_tokens) * num_tokens + labels)
        graphs.append((items, len(inputs) + inverse.ravel(), is_train, frag_ids, ctx_ids))

    previous = None
    for level in levels:
        sel = (pair_count >= level) if previous is None else (pair_count >= level) & (pair_count < previous)
        _union(frag_labels, pair_left[sel], pair_right[sel])
        previous = level
        for items, node_of_item, is_train, frag_ids, ctx_ids in graphs:
            todo = cutoffs[items] == 0
            if not todo.any():
                continue
            keys = [frag_labels[f] * num_tokens**m + c for f, c in zip(frag_ids, ctx_ids)]
            covered = _covered_nodes(keys, is_train)[node_of_item]
            cutoffs[items[todo & covered]] = level
    return CoverageResult(cutoffs, in_train, ceiling, levels)


def authors_k_cutoffs(train_inputs: np.ndarray, train_answers: np.ndarray, num_tokens: int,
                      test_inputs: np.ndarray, test_answers: np.ndarray, test_types: np.ndarray,
                      max_k: int | None = None) -> np.ndarray:
    """k-cutoff of each test item by the authors' algorithm; see ``authors_sweep``."""
    return authors_sweep(train_inputs, train_answers, num_tokens, test_inputs, test_answers, test_types, max_k).cutoffs
