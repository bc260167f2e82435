"""How much training data coverage needs: the n_train at which a share of the ID test items is k-covered,
found by bisection on n_train (one dataset per probe), with its median and spread over dataset seeds."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Executor

import numpy as np
import pandas as pd

from covlib.base.errors import CovlibError
from covlib.coverage.annotate import coverage_by_k, coverage_inputs
from covlib.coverage.evidence import (
    EVIDENCE_KINDS,
    independent_sweep,
    population_hop_evidence,
    sound_sweep,
    space_answers,
)
from covlib.coverage.exact import coverage_sweep
from covlib.tasks.datasets import DatasetConfig, generate

TEST_KEPT = 1000  # the largest probe leaves this many ID-eligible inputs (at most a quarter) to test on


def first_crossing(n: np.ndarray, share: np.ndarray, target: float) -> float:
    """The n (interpolated in log n) where a share, made non-decreasing, first reaches ``target``; NaN if never."""
    share = np.maximum.accumulate(np.asarray(share, float))
    hit = np.flatnonzero(share >= target)
    if not len(hit):
        return float("nan")
    i = int(hit[0])
    if i == 0:
        return float(n[0])
    x0, x1 = np.log(n[i - 1]), np.log(n[i])
    return float(np.exp(x0 + (target - share[i - 1]) * (x1 - x0) / (share[i] - share[i - 1])))


def bisect_crossing(reaches: Callable[[int], bool], lo: int, hi: int, rel_tol: float = 0.03) -> tuple[int, int, int]:
    """Bisection in log n between ``lo`` (taken to fail) and ``hi`` (taken to succeed): returns (below, at,
    probes) with ``reaches(below)`` False, ``reaches(at)`` True (unless never probed) and at / below <= 1 + rel_tol,
    or at - below = 1 (rel_tol = 0 runs to adjacent integers)."""
    probes = 0
    while hi - lo > 1 and hi > lo * (1 + rel_tol):
        mid = min(max(int(round(np.sqrt(max(lo, 1) * hi))), lo + 1), hi - 1)
        probes += 1
        if reaches(mid):
            hi = mid
        else:
            lo = mid
    return lo, hi, probes


def bisect_crossing_two(reaches_both: Callable[[int, int], tuple[bool, bool]], lo: int, hi: int,
                        rel_tol: float = 0.03) -> tuple[int, int, int]:
    """bisect_crossing with two probes a round, at the thirds of [lo, hi] in log n, for two workers: each round
    cuts the bracket three-fold where bisection cuts it two-fold. ``reaches_both(a, b)`` answers for a < b
    (computed side by side); returns (below, at, probes) with the same guarantee as bisect_crossing."""
    probes = 0
    while hi - lo > 2 and hi > lo * (1 + rel_tol):
        low, high = np.log(max(lo, 1)), np.log(hi)
        a = min(max(int(round(np.exp(low + (high - low) / 3))), lo + 1), hi - 2)
        b = min(max(int(round(np.exp(low + 2 * (high - low) / 3))), a + 1), hi - 1)
        probes += 2
        at_a, at_b = reaches_both(a, b)
        if at_a:
            hi = a
        elif at_b:
            lo, hi = a, b
        else:
            lo = b
    if hi - lo == 2 and hi > lo * (1 + rel_tol):  # one integer left between them
        below, at, more = bisect_crossing(lambda n: reaches_both(n, n)[0], lo, hi, rel_tol)
        return below, at, probes + more
    return lo, hi, probes


def largest_probe(eligible: int) -> int:
    """The largest n_train a crossing probes: the ID-eligible inputs less those kept to test."""
    return max(eligible - min(TEST_KEPT, eligible // 4), 1)


def check_evidence(evidence: str) -> str:
    """``evidence`` if it is one of EVIDENCE_KINDS, else a CovlibError naming them."""
    if evidence not in EVIDENCE_KINDS:
        raise CovlibError(f"evidence={evidence!r}: choose one of {', '.join(EVIDENCE_KINDS)}", parameter="evidence")
    return evidence


def shares_at(task: str, num_tokens: int, seed: int, ks: Sequence[int], test_size_per_type: int, n: int,
              evidence: str = "contexts") -> dict[int, float]:
    """The share of one dataset's ID test items (type_0) with evidence at least k at every k of ``ks``, the dataset
    generated at n_train ``n`` (a function of its arguments alone, so that a worker process can compute it).

    ``evidence`` (covlib.coverage.evidence): "contexts", k-coverage as the paper defines it; "sound", k-coverage
    through true equivalences only; "independent", k-coverage counting independent contexts; "pooled", through
    true equivalences with contexts counted up to their own true equivalence; "hop facts", every hop fact of the
    item used by at least k training examples (chain of thought), read over every ID input not in training rather
    than the ID test items (which are conditioned on the facts training uses)."""
    if check_evidence(evidence) == "hop facts":  # exact over the whole ID population, no test sample
        ds = generate(DatasetConfig(task, num_tokens, n, seed=seed, test_size_per_type=0))
        level = population_hop_evidence(ds)
        return {k: float(np.mean(level >= k)) if len(level) else 0.0 for k in ks}
    ds = generate(DatasetConfig(task, num_tokens, n, seed=seed, test_size_per_type=test_size_per_type))
    data = coverage_inputs(ds)
    ids = data.test_types == "type_0"
    if not ids.any():  # no type_0 item at all (non-tree at small n): nothing is covered
        return {k: 0.0 for k in ks}
    queries = data.test_inputs[ids]
    if evidence in ("sound", "pooled"):
        result = sound_sweep(data.train_inputs, data.train_answers, data.num_tokens, space_answers(ds), queries,
                             max_k=max(ks), min_k=min(ks), pooled=evidence == "pooled")
    elif evidence == "independent":
        result = independent_sweep(data.train_inputs, data.train_answers, data.num_tokens, queries, max_k=max(ks),
                                   min_k=min(ks))
    else:
        result = coverage_sweep(data.train_inputs, data.train_answers, data.num_tokens, queries, max_k=max(ks),
                                min_k=min(ks))
    return {k: float(np.mean(result.cutoffs >= k)) for k in ks}


class CoverageProbes:
    """Shares of one cell's ID test items (type_0) k-covered, per n_train, each dataset generated once.

    One sweep gives every k in ``ks`` (levels below min(ks) are skipped: they cannot change those shares).
    """

    def __init__(self, task: str, num_tokens: int, seed: int, ks: Sequence[int], test_size_per_type: int = 1000,
                 evidence: str = "contexts"):
        self.task, self.num_tokens, self.seed = task, num_tokens, seed
        self.ks, self.test_size_per_type = tuple(sorted(set(ks))), test_size_per_type
        self.evidence = check_evidence(evidence)
        self.eligible = generate(DatasetConfig(task, num_tokens, 1, seed=seed, test_size_per_type=0)).eligible_count
        self.shares: dict[int, dict[int, float]] = {}

    def share(self, n: int, k: int) -> float:
        if n not in self.shares:
            self.shares[n] = shares_at(self.task, self.num_tokens, self.seed, self.ks, self.test_size_per_type, n,
                                       self.evidence)
        return self.shares[n][k]

    def shares_side_by_side(self, sizes: Sequence[int], pool: Executor) -> None:
        """Compute the shares of the sizes not yet probed, one per worker of ``pool``, side by side."""
        missing = [n for n in dict.fromkeys(sizes) if n not in self.shares]
        jobs = [pool.submit(shares_at, self.task, self.num_tokens, self.seed, self.ks, self.test_size_per_type, n,
                            self.evidence) for n in missing]
        self.shares.update({n: job.result() for n, job in zip(missing, jobs)})

    def _unreachable(self, top: int, k: int, target: float) -> None:
        raise CovlibError(f"even {top} training examples give less than {target:.0%} of the ID test items evidence "
                          f"{k} ({self.evidence}), {self.task} N={self.num_tokens} (seed {self.seed}): lower the "
                          "share or k")

    def bracket(self, k: int, target: float) -> tuple[int, int]:
        """The tightest (fails, reaches) pair among the sizes probed so far (0 and the largest probe by default)."""
        lo, hi = 0, largest_probe(self.eligible)
        for n, s in self.shares.items():
            if s[k] >= target:
                hi = min(hi, n)
        for n, s in self.shares.items():
            if s[k] < target and n < hi:
                lo = max(lo, n)
        return lo, hi

    def crossing(self, k: int, target: float, rel_tol: float = 0.03, guess: int | None = None,
                 top_first: bool = True, spread: float = 2.0, pool: Executor | None = None) -> dict:
        """The smallest n_train (to ``rel_tol``) whose ID test items are ``target`` k-covered, by bisection.

        ``top_first`` probes the largest training set the pool allows before anything else (the book's cached
        crossings were computed so); without it the bracket is found by stepping from ``guess`` (default 16 N)
        by a factor ``spread`` (2: doubling or halving), squared at every step after the first when it is below
        2 (a guess from another seed of the same cell sits within a few percent, so a first step of 1.05 brackets
        it at once), and the largest probe, by far the costliest (about 2 million examples at two-hop N = 200), is
        only generated when nothing below it reaches the share. Either way the answer is a bracketed crossing.
        With a ``pool`` of two workers the bracket is narrowed two probes a round (bisect_crossing_two)."""
        if spread <= 1:
            raise CovlibError(f"spread={spread:g}: the step from a guess must be a factor above 1")
        top = largest_probe(self.eligible)
        if top_first and self.share(top, k) < target:
            self._unreachable(top, k, target)
        lo, hi = self.bracket(k, target)
        if guess is not None or not top_first:
            n = min(max(int(guess if guess is not None else 16 * self.num_tokens), 1), top)
            step = spread
            while lo < n < hi:
                if self.share(n, k) >= target:
                    hi, n = n, int(n / step)
                else:
                    lo, n = n, min(int(np.ceil(n * step)), top)
                step = step if spread >= 2 else min(step * step, 2.0)
            lo, hi = self.bracket(k, target)
        if self.share(hi, k) < target:  # only the largest probe is left, and it falls short
            self._unreachable(top, k, target)
        before = len(self.shares)
        if pool is None:
            below, at, _ = bisect_crossing(lambda n: self.share(n, k) >= target, lo, hi, rel_tol)
        else:
            def reaches_both(a: int, b: int) -> tuple[bool, bool]:
                self.shares_side_by_side([a, b], pool)
                return self.shares[a][k] >= target, self.shares[b][k] >= target
            below, at, _ = bisect_crossing_two(reaches_both, lo, hi, rel_tol)
        return {"task": self.task, "N": self.num_tokens, "seed": self.seed, "k": k, "target": target,
                "n_train": at, "below": below, "eligible": self.eligible, "probes": len(self.shares) - before}


def data_for_coverage(task: str, num_tokens: int, k: int = 3, target: float = 0.9, seed: int = 0,
                      test_size_per_type: int = 1000, rel_tol: float = 0.03) -> dict:
    """Smallest n_train (to ``rel_tol``) whose type_0 test items are at least ``target`` k-covered, one seed.

    Bisection on log(n_train) up to the largest probe; each probe generates a dataset and sweeps coverage.
    Returns N, the bracketing sizes and the number of probes."""
    found = CoverageProbes(task, num_tokens, seed, [k], test_size_per_type).crossing(k, target, rel_tol)
    return {key: found[key] for key in ("N", "k", "target", "n_train", "below", "eligible", "probes")}


def crossings(task: str, num_tokens: int, ks: Sequence[int] = (3,), targets: Sequence[float] = (0.99,),
              seeds: Sequence[int] = (0, 1, 2), test_size_per_type: int = 1000, rel_tol: float = 0.03,
              evidence: str = "contexts") -> pd.DataFrame:
    """Every seed's crossing at every (k, target) of one N (the probes of one seed serve all its crossings;
    each seed after the first starts from the previous seed's crossing). One row per (seed, k, target); a
    crossing that even the largest probe does not reach has n_train NaN. Evidence other than the paper's
    ("contexts", whose cached crossings probed the whole pool first) steps from a guess instead: the largest probe
    is generated only when nothing below it reaches the share."""
    rows, guesses = [], {}
    top_first = evidence == "contexts"
    for seed in seeds:
        probes = CoverageProbes(task, num_tokens, seed, ks, test_size_per_type, evidence)
        for k in ks:
            for target in targets:
                try:
                    row = probes.crossing(k, target, rel_tol, guesses.get((k, target)), top_first=top_first)
                except CovlibError:  # unreachable below the largest probe
                    row = {"task": task, "N": num_tokens, "seed": seed, "k": k, "target": target, "n_train": np.nan,
                           "below": largest_probe(probes.eligible), "eligible": probes.eligible, "probes": 0}
                guesses[(k, target)] = row["n_train"] if row["n_train"] == row["n_train"] else None
                rows.append(row | {"evidence": evidence} if evidence != "contexts" else row)
    return pd.DataFrame(rows)


def summarise_crossings(table: pd.DataFrame) -> pd.DataFrame:
    """Per (task, N, k, target): the median crossing over seeds, its range and the seeds."""
    g = table.groupby(["task", "N", "k", "target"], sort=True)
    out = g.agg(eligible=("eligible", "max"), n_train=("n_train", "median"), n_train_min=("n_train", "min"),
                n_train_max=("n_train", "max"), seeds=("seed", lambda s: " ".join(str(int(v)) for v in sorted(s))))
    return out.reset_index()


def coverage_requirement(task: str, Ns: Sequence[int], ks: Sequence[int] = (1, 2, 3, 4),
                         targets: Sequence[float] = (0.9, 0.99), seeds: Sequence[int] = (0, 1, 2),
                         test_size_per_type: int = 1000, rel_tol: float = 0.03) -> pd.DataFrame:
    """The coverage-predicted requirement per N, k and target: the exact crossing (bisection on n_train) in
    every seed, summarised by its median and range (columns task, N, k, target, eligible, n_train,
    n_train_min, n_train_max, seeds)."""
    return pd.concat([summarise_crossings(crossings(task, N, ks, targets, seeds, test_size_per_type, rel_tol))
                      for N in Ns], ignore_index=True)


def probe_coverage_by_k(task: str, N: int, n_train: int, seed: int, max_k: int = 6, test_size_per_type: int = 1000
                ) -> pd.DataFrame:
    """Coverage by k (k = 1..max_k) of the ID test items of a probe's dataset (regenerated: it is deterministic)."""

    table = coverage_by_k(generate(DatasetConfig(task, N, n_train, seed=seed, test_size_per_type=test_size_per_type)),
                          max_k)
    return table[table["type"] == "type_0"].reset_index(drop=True)
