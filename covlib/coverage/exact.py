"""Functional k-equivalence and k-coverage, exactly as the paper defines them, with every k-cutoff in one sweep."""
from __future__ import annotations

import itertools
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from covlib.base.errors import CovlibError
from covlib.tasks.codes import decode as decode_codes
from covlib.tasks.codes import digit_weights
from covlib.tasks.codes import encode as encode_inputs

MAX_INPUTS = 1 << 28  # N^m above this would need more than ~2 GB of labels; refuse with a message


LOOKUP_CHUNK = 1 << 22  # context look-ups per chunk when counting shared contexts


DENSE_BITS = 1 << 31  # fragments x contexts at most this: count shared contexts on bit sets (at most 256 MB)


def proper_subsets(n_inputs: int) -> list[tuple[int, ...]]:
    """Every proper, non-empty set P of input positions (0-based), smallest first."""
    return [p for r in range(1, n_inputs) for p in itertools.combinations(range(n_inputs), r)]


def position_label(positions: tuple[int, ...]) -> str:
    """P as readers see it: ``{x1,x3}``."""
    return "{" + ",".join(f"x{p + 1}" for p in positions) + "}"


# bytes a pair of agreeing training inputs holds at the peak of pair_evidence (index pairs, fragment ids, pair keys
# and np.unique's sort of them: measured ~60, doubled for what else is alive)
BYTES_PER_PAIR = 128


def max_pairs() -> int:
    """How many agreeing pairs pair_evidence may hold: COVLIB_COVERAGE_MAX_PAIRS, else what the memory available
    now allows at BYTES_PER_PAIR (a larger set would be killed by the kernel, taking other work with it)."""
    forced = os.environ.get("COVLIB_COVERAGE_MAX_PAIRS", "").strip()
    if forced:
        return int(forced)
    return available_memory() // BYTES_PER_PAIR


def available_memory() -> int:
    """Bytes of memory available to a new allocation (Linux: MemAvailable), or 8 GiB where unknown."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 8 << 30


def _pairs_within_groups(sorted_keys: np.ndarray, limit: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """All index pairs (i < j) of a sorted key array with equal keys, without a Python loop; more than ``limit``
    pairs raise CoverageTooLarge before anything is allocated for them."""
    n = len(sorted_keys)
    if n < 2:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    new_group = np.empty(n, dtype=bool)
    new_group[0] = True
    np.not_equal(sorted_keys[1:], sorted_keys[:-1], out=new_group[1:])
    starts = np.flatnonzero(new_group)
    ends = np.append(starts[1:], n)
    group_end = np.repeat(ends, ends - starts)  # end (exclusive) of each item's group
    partners = group_end - np.arange(n) - 1  # items after it in its group
    total = int(partners.sum())
    if limit is not None and total > limit:
        raise CoverageTooLarge(total, limit)
    left = np.repeat(np.arange(n, dtype=np.int64), partners)
    first = np.cumsum(partners) - partners  # where each item's run of pairs begins
    right = left + 1 + (np.arange(total, dtype=np.int64) - np.repeat(first, partners))
    return left, right


def component_roots(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The smallest node of each node's connected component in the undirected graph on nodes 0..n-1 with edges
    (a[i], b[i]).

    numpy only (importing scipy.sparse.csgraph took about a third of a whole `covlib coverage`): each round
    hooks every root to the smallest root it has an edge to, jumps pointers (parent of parent) until every node
    points at its root, and drops the edges now inside one tree. A tree with an edge out merges within two rounds,
    so there are O(log n) rounds, each linear in the edges left.
    """
    parent = np.arange(n, dtype=np.int64)
    a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    while True:
        root_a, root_b = parent[a], parent[b]
        apart = root_a != root_b
        if not apart.any():
            return parent
        a, b, root_a, root_b = a[apart], b[apart], root_a[apart], root_b[apart]
        np.minimum.at(parent, np.maximum(root_a, root_b), np.minimum(root_a, root_b))
        while True:  # parent[x] <= x always, so this ends, with every node pointing at its tree's smallest node
            grand = parent[parent]
            if np.array_equal(grand, parent):
                break
            parent = grand


def _union(labels: np.ndarray, u: np.ndarray, v: np.ndarray, scratch: np.ndarray | None = None
           ) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised union-find step on a *flat* forest (``labels[x]`` is x's root, roots point to themselves).

    Joins the sets of u[i] and v[i] for all i, in place, and returns the merges that happened as
    (old root, new root) pairs: a spanning forest of the merge, one pair per root that disappeared.
    ``scratch`` (optional) is an ``arange(len(labels))`` kept between calls to avoid reallocating.
    """
    lu, lv = labels[u], labels[v]
    differ = lu != lv
    if not differ.any():
        return np.zeros(0, labels.dtype), np.zeros(0, labels.dtype)
    lu, lv = lu[differ], lv[differ]
    nodes, inverse = np.unique(np.concatenate([lu, lv]), return_inverse=True)
    inverse = inverse.ravel()
    m = len(lu)
    new_root = nodes[component_roots(len(nodes), inverse[:m], inverse[m:])]  # nodes are sorted: the smallest id
    moved = nodes != new_root
    old, new = nodes[moved], new_root[moved]
    table = np.arange(len(labels), dtype=labels.dtype) if scratch is None else scratch
    table[old] = new
    labels[:] = table[labels]
    table[old] = old  # restore the identity for the next call
    return old, new


def _check_training(train_inputs: np.ndarray, train_answers: np.ndarray, num_tokens: int
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Validate training data and drop exact duplicates; conflicting duplicates are an error."""
    inputs = np.asarray(train_inputs)
    answers = np.asarray(train_answers).reshape(-1)
    if inputs.ndim != 2 or inputs.shape[1] < 2:
        raise CovlibError(f"training inputs must have shape (n, m) with m >= 2 positions, got {inputs.shape}")
    if len(inputs) != len(answers):
        raise CovlibError(f"{len(inputs)} training inputs but {len(answers)} answers; pass one answer per input")
    if len(inputs) and (inputs.min() < 0 or inputs.max() >= num_tokens):
        raise CovlibError(f"training inputs must be token ids in [0, {num_tokens}); check num_tokens")
    space = num_tokens ** inputs.shape[1]
    if space > MAX_INPUTS:
        raise CovlibError(
            f"{num_tokens}^{inputs.shape[1]} = {space:.2e} inputs is more than the {MAX_INPUTS:.1e} the exact "
            "coverage computation labels in memory; use a smaller N"
        )
    codes = encode_inputs(inputs, num_tokens)
    uniq, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
    if len(uniq) < len(codes):
        if (answers != answers[first][inverse.ravel()]).any():
            raise CovlibError("one training input appears with two different answers; the training set is inconsistent")
        inputs, answers = inputs[first], answers[first]
    return inputs.astype(np.int64), answers.astype(np.int64)


class CoverageTooLarge(CovlibError):
    """Exact coverage of a training set would hold more agreeing pairs than memory allows."""

    def __init__(self, pairs: int, limit: int) -> None:
        self.pairs, self.limit = pairs, limit
        super().__init__(
            f"exact coverage of this training set compares {pairs:,} pairs of training inputs that agree on one set "
            f"of positions, about {pairs * BYTES_PER_PAIR / 2**30:.1f} GiB; the memory available allows "
            f"{limit:,} ({limit * BYTES_PER_PAIR / 2**30:.1f} GiB). The pairs grow as the square of n_train over "
            "the values a context takes (five-hop at n_train ~100,000 needs tens of GiB): use a smaller n_train or "
            "N (a search for n_req can start from --start instead of coverage's guess), a machine with more memory, or "
            "set COVLIB_COVERAGE_MAX_PAIRS to raise the limit at your own risk")


@dataclass
class PairEvidence:
    """Contradiction-free fragment pairs over one P: fragment ids (base-N over P) and shared contexts."""

    positions: tuple[int, ...]
    left: np.ndarray
    right: np.ndarray
    count: np.ndarray  # number of shared contexts, all of which agree

    def __len__(self) -> int:
        return len(self.count)


def shared_contexts(frag: np.ndarray, ctx: np.ndarray, n_frag: int, n_ctx: int, lo: np.ndarray, hi: np.ndarray
                    ) -> np.ndarray:
    """How many contexts fragments lo[i] and hi[i] share in training (whatever the outputs there): the popcount of
    the AND of their context bit sets when they fit in memory, else a look-up of the rarer fragment's contexts."""
    if n_frag * n_ctx <= DENSE_BITS:
        present = np.zeros((n_frag, n_ctx), dtype=bool)
        present[frag, ctx] = True
        bits = np.packbits(present, axis=1)
        del present
        shared = np.empty(len(lo), dtype=np.int64)
        step = max(1, LOOKUP_CHUNK // bits.shape[1])
        for begin in range(0, len(lo), step):
            both = bits[lo[begin:begin + step]] & bits[hi[begin:begin + step]]
            shared[begin:begin + step] = np.bitwise_count(both).sum(axis=1, dtype=np.int64)
        return shared
    item_key = frag * n_ctx + ctx
    by_frag = np.argsort(item_key, kind="stable")
    sorted_key, sorted_ctx = item_key[by_frag], ctx[by_frag]
    frag_ids, frag_start, frag_deg = np.unique(frag[by_frag], return_index=True, return_counts=True)
    slot_lo, slot_hi = np.searchsorted(frag_ids, lo), np.searchsorted(frag_ids, hi)
    small_first = frag_deg[slot_lo] <= frag_deg[slot_hi]
    small, other = np.where(small_first, slot_lo, slot_hi), np.where(small_first, hi, lo)
    shared = np.zeros(len(lo), dtype=np.int64)
    deg = frag_deg[small]
    ends = np.cumsum(deg)
    begin = 0
    while begin < len(lo):
        stop = max(int(np.searchsorted(ends, ends[begin] - deg[begin] + LOOKUP_CHUNK, side="right")), begin + 1)
        d = deg[begin:stop]
        pair = np.repeat(np.arange(begin, stop), d)
        offset = np.arange(int(d.sum())) - np.repeat(np.cumsum(d) - d, d)
        looked = other[pair] * n_ctx + sorted_ctx[frag_start[small[pair]] + offset]
        pos = np.minimum(np.searchsorted(sorted_key, looked), len(sorted_key) - 1)
        shared[begin:stop] = np.bincount(pair - begin, weights=sorted_key[pos] == looked, minlength=stop - begin)
        begin = stop
    return shared


def pair_evidence(train_inputs: np.ndarray, train_answers: np.ndarray, num_tokens: int,
                  positions: tuple[int, ...]) -> PairEvidence:
    """Evidence for every fragment pair over ``positions`` that agrees somewhere and never contradicts.

    Vectorised: agreeing pairs come from groups of equal (context, output); shared contexts are
    counted only for those candidates, by looking their contexts up in a sorted key array.
    """
    inputs = np.asarray(train_inputs, dtype=np.int64)
    answers = np.asarray(train_answers, dtype=np.int64)
    m = inputs.shape[1]
    rest = tuple(p for p in range(m) if p not in positions)
    frag = encode_inputs(inputs[:, list(positions)], num_tokens)
    ctx = encode_inputs(inputs[:, list(rest)], num_tokens)
    n_frag = num_tokens ** len(positions)
    n_ctx = num_tokens ** len(rest)

    # 1. agreeing pairs: same context, same output
    group = ctx * num_tokens + answers
    order = np.argsort(group, kind="stable")
    i, j = _pairs_within_groups(group[order], limit=max_pairs())
    a, b = frag[order][i], frag[order][j]
    pair_key = np.minimum(a, b) * n_frag + np.maximum(a, b)
    keys, agree = np.unique(pair_key, return_counts=True)
    lo, hi = keys // n_frag, keys % n_frag

    # 2. keep the candidate pairs that share every context they are seen in training
    keep = shared_contexts(frag, ctx, n_frag, n_ctx, lo, hi) == agree
    return PairEvidence(tuple(positions), lo[keep], hi[keep], agree[keep])


def all_pair_evidence(train_inputs: np.ndarray, train_answers: np.ndarray, num_tokens: int) -> list[PairEvidence]:
    """``pair_evidence`` for every proper, non-empty P (computed once; a k-sweep reuses it)."""
    inputs, answers = _check_training(train_inputs, train_answers, num_tokens)
    return [pair_evidence(inputs, answers, num_tokens, p) for p in proper_subsets(inputs.shape[1])]


def fragment_classes(train_inputs: np.ndarray, train_answers: np.ndarray, num_tokens: int, k: int,
                     evidence: list[PairEvidence] | None = None) -> dict[tuple[int, ...], np.ndarray]:
    """Class labels at level k, per P: ``classes[P][fragment id]`` is the id of its class's root fragment.

    Fragments never seen in training (or with no k-equivalent partner) are their own class.
    """
    evidence = evidence if evidence is not None else all_pair_evidence(train_inputs, train_answers, num_tokens)
    out = {}
    for ev in evidence:
        labels = np.arange(num_tokens ** len(ev.positions), dtype=np.int64)
        sel = ev.count >= k
        _union(labels, ev.left[sel], ev.right[sel])
        out[ev.positions] = labels
    return out


@dataclass
class CoverageResult:
    """k-cutoffs of query inputs from one sweep, with what is needed to read them."""

    cutoffs: np.ndarray  # (n_queries,) int: largest k at which the query is covered, 0 if none
    in_train: np.ndarray  # (n_queries,) bool: the query is a training input (covered at every k)
    ceiling: int  # value given to training inputs: max_k, or largest evidence + 1
    levels: list[int]  # evidence levels processed, high to low

    def covered(self, k: int) -> np.ndarray:
        """Which queries are k-covered."""
        return self.cutoffs >= k


def _partial_codes(ids: np.ndarray, num_tokens: int, positions: tuple[int, ...], n_inputs: int) -> np.ndarray:
    """Contribution to the full input code of a fragment (or context) id over ``positions``."""
    digits = decode_codes(ids, num_tokens, len(positions)).astype(np.int64)
    return digits @ digit_weights(num_tokens, n_inputs)[list(positions)]


def _distinct(arrays: list[np.ndarray]) -> np.ndarray:
    """The distinct values of some integer arrays, sorted. (np.unique without return_* options imports numpy.ma:
    10 ms, more than `covlib coverage` spends on the sweep of a small dataset.)"""
    values = np.sort(np.concatenate(arrays)) if arrays else np.zeros(0, dtype=np.int64)
    return values[np.r_[True, values[1:] != values[:-1]]] if len(values) else values


def coverage_sweep(train_inputs: np.ndarray, train_answers: np.ndarray, num_tokens: int,
                   queries: np.ndarray | None = None, max_k: int | None = None,
                   evidence: list[PairEvidence] | None = None, min_k: int = 1) -> CoverageResult:
    """k-cutoffs of ``queries`` (all N^m inputs in code order when None), exactly as the paper defines them, in one
    pass.

    ``max_k`` caps the sweep: levels above it are merged into one (cutoffs never exceed it).
    ``min_k`` skips the levels below it (a query covered only there gets 0): shares at k >= min_k are exact,
    and the largest merges, at the lowest levels, are not paid for.
    ``evidence`` may be passed to reuse ``all_pair_evidence`` across calls.
    """
    inputs, answers = _check_training(train_inputs, train_answers, num_tokens)
    if max_k is not None and max_k < 1:
        raise CovlibError(f"max_k={max_k} must be at least 1")
    m = inputs.shape[1]
    space = num_tokens**m
    if evidence is None:
        evidence = [pair_evidence(inputs, answers, num_tokens, p) for p in proper_subsets(m)]
    if queries is None:
        query_codes = np.arange(space, dtype=np.int64)
    else:
        queries = np.asarray(queries)
        if queries.ndim != 2 or queries.shape[1] != m:
            raise CovlibError(f"queries must have shape (n, {m}) like the training inputs, got {queries.shape}")
        if len(queries) and (queries.min() < 0 or queries.max() >= num_tokens):
            raise CovlibError(f"queries must be token ids in [0, {num_tokens})")
        query_codes = encode_inputs(queries, num_tokens)

    top = max((int(ev.count.max()) for ev in evidence if len(ev)), default=0)
    ceiling = max_k if max_k is not None else top + 1
    levels = sorted(_distinct([ev.count for ev in evidence]).tolist(), reverse=True)
    if max_k is not None:
        levels = sorted({min(c, max_k) for c in levels}, reverse=True)
    levels = [level for level in levels if level >= min_k]

    train_codes = encode_inputs(inputs, num_tokens)
    is_train = np.zeros(space, dtype=bool)
    is_train[train_codes] = True
    in_train = is_train[query_codes]
    cutoffs = np.where(in_train, ceiling, 0).astype(np.int64)
    pending = ~in_train

    input_labels = np.arange(space, dtype=np.int64)
    scratch = np.arange(space, dtype=np.int64)
    marked = np.zeros(space, dtype=bool)
    frag_labels = {ev.positions: np.arange(num_tokens ** len(ev.positions), dtype=np.int64) for ev in evidence}
    ctx_codes = {}
    for ev in evidence:
        rest = tuple(p for p in range(m) if p not in ev.positions)
        ctx_codes[ev.positions] = _partial_codes(np.arange(num_tokens ** len(rest)), num_tokens, rest, m)

    for level in levels:
        edges_u, edges_v = [], []
        for ev in evidence:
            sel = (ev.count >= level) if (max_k is not None and level == max_k) else (ev.count == level)
            if not sel.any():
                continue
            old, new = _union(frag_labels[ev.positions], ev.left[sel], ev.right[sel])
            if not len(old):
                continue
            ctx = ctx_codes[ev.positions]
            u = _partial_codes(old, num_tokens, ev.positions, m)
            v = _partial_codes(new, num_tokens, ev.positions, m)
            edges_u.append((u[:, None] + ctx[None, :]).ravel())
            edges_v.append((v[:, None] + ctx[None, :]).ravel())
        if edges_u:
            _union(input_labels, np.concatenate(edges_u), np.concatenate(edges_v), scratch)
        if not pending.any():
            break
        roots = input_labels[train_codes]
        marked[roots] = True
        newly = pending & marked[input_labels[query_codes]]
        marked[roots] = False
        cutoffs[newly] = level
        pending &= ~newly
    return CoverageResult(cutoffs, in_train, ceiling, levels)


def k_cutoffs(train_inputs: np.ndarray, train_answers: np.ndarray, num_tokens: int,
              queries: np.ndarray | None = None, max_k: int | None = None) -> np.ndarray:
    """k-cutoff of each query input (all N^m inputs in code order when ``queries`` is None).

    ``train_inputs`` (n, m) token ids, ``train_answers`` (n,) the final answer of each (for CoT
    data, the last target token). Training inputs get the ceiling (``max_k``, else the largest
    evidence + 1), so ``cutoffs >= k`` is k-coverage for every query.
    """
    return coverage_sweep(train_inputs, train_answers, num_tokens, queries, max_k).cutoffs


def class_purity(labels: np.ndarray, hidden: np.ndarray, present: np.ndarray) -> tuple[int, float]:
    """How often fragments merged into one class share a hidden value (e.g. the bridge b).

    ``labels[f]`` is the class of fragment f (from ``fragment_classes``), ``hidden[f]`` the value
    the data never shows, ``present`` marks fragments that occur in training. Returns the number
    of merged fragment pairs and the share of them whose hidden values agree.
    """
    classes, values = np.asarray(labels)[present], np.asarray(hidden)[present]
    pairs = lambda sizes: int((sizes * (sizes - 1) // 2).sum())  # noqa: E731
    merged = pairs(np.unique(classes, return_counts=True)[1])
    agreeing = pairs(np.unique(np.stack([classes, values]), axis=1, return_counts=True)[1])
    return merged, (agreeing / merged if merged else float("nan"))
