"""Coverage's prediction of the data a task needs, before any training: per N, the training-set size at which
a share of the ID test items is k-covered (exact bisection in each dataset seed), times a calibration factor."""
from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor

import numpy as np
import pandas as pd

from covlib.base.errors import CovlibError
from covlib.base.workers import one_thread_worker
from covlib.coverage.requirement import CoverageProbes
from covlib.coverage.rule import Rule
from covlib.tasks.graphs import get_task

GROWTH_GUESS = 2.3  # exponent used only to guess where the next N's crossing lies (bisection decides)
SEED_SPREAD = 1.05  # first step from another seed's crossing at the same N (seeds' crossings differ by 0-3% there)


def seed_crossing(task: str, N: int, seed: int, k: int, share: float, rel_tol: float, test_size_per_type: int,
                  guess: float | None, spread: float, pool: Executor | None = None, evidence: str = "contexts"
                  ) -> tuple[float, int, int]:
    """One seed's crossing (NaN when even the largest training set the pool allows falls short), the datasets it
    generated and the ID-eligible count (a top-level function, so that a worker process can run it)."""
    cell = CoverageProbes(task, N, seed, [k], test_size_per_type, evidence)
    try:
        found = cell.crossing(k, share, rel_tol, guess, top_first=False, spread=spread, pool=pool)["n_train"]
    except CovlibError:
        found = np.nan
    return found, len(cell.shares), cell.eligible


def predict_requirement(task: str, Ns: Sequence[int], k: int = 3, share: float = 0.99, seeds: Sequence[int] = (0, 1, 2),
                        factor: float = 1.0, rel_tol: float = 0.03, test_size_per_type: int = 1000,
                        log: Callable[[str], None] | None = None, jobs: int = 1, evidence: str = "contexts"
                        ) -> pd.DataFrame:
    """One row per N: the predicted n_req (``factor`` times the median crossing over ``seeds``), its range over
    the seeds (NaN where some seed does not reach the share below the largest training set the ID pool
    allows), each seed's prediction (columns seed_0, seed_1, ...), the ID-eligible count, the probes (datasets
    generated), the wall seconds it took and its CPU seconds (of this process: with ``jobs`` > 1 the workers' time
    is not in it). ``evidence`` is what the crossing counts (covlib.coverage.evidence.EVIDENCE_KINDS; k is the fact
    count m for "hop facts").

    With ``jobs`` = 2 the work runs on two one-thread worker processes: the first seed narrows its bracket two
    probes a round, and the other seeds, which start from its crossing, run side by side. The crossings are the
    same bracketed answers (to ``rel_tol``) either way, not always the same sizes."""
    if jobs < 1:
        raise CovlibError(f"jobs must be at least 1, not {jobs}")
    name = get_task(task).name
    pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"), initializer=one_thread_worker) \
        if jobs > 1 else None
    rows, last = [], None
    try:
        for N in sorted(Ns):
            start, cpu = time.perf_counter(), time.process_time()
            guess = None if last is None else last[1] * (N / last[0]) ** GROWTH_GUESS
            first = seed_crossing(name, int(N), int(seeds[0]), k, share, rel_tol, test_size_per_type, guess, 2.0, pool,
                                  evidence)
            found, probes, eligible = [first[0]], first[1], first[2]
            # the other seeds land within a few percent of a known crossing: step from it by 5%, not by doubling
            known = first[0] if first[0] == first[0] else guess
            spread = SEED_SPREAD if first[0] == first[0] else 2.0
            if pool is None:  # one at a time, each seed starting from the last crossing found
                results = []
                for seed in seeds[1:]:
                    results.append(seed_crossing(name, int(N), int(seed), k, share, rel_tol, test_size_per_type,
                                                 known, spread, None, evidence))
                    if results[-1][0] == results[-1][0]:
                        known, spread = results[-1][0], SEED_SPREAD
            else:  # side by side, each starting from the first seed's crossing
                results = [job.result() for job in [
                    pool.submit(seed_crossing, name, int(N), int(seed), k, share, rel_tol, test_size_per_type, known,
                                spread, None, evidence) for seed in seeds[1:]]]
            for crossing, more, _ in results:
                found.append(crossing)
                probes += more
            per_seed = {f"seed_{int(seed)}": factor * value for seed, value in zip(seeds, found)}
            if np.isnan(found).any():  # the median would hide a seed that never gets there: no prediction
                found = [np.nan] * len(found)
            else:
                last = (N, float(np.median(found)))
            seconds = time.perf_counter() - start
            rows.append({"task": name, "N": int(N), "k": k, "share": share, "factor": factor,
                         "n_pred": factor * float(np.median(found)), "n_low": factor * min(found),
                         "n_high": factor * max(found), "eligible": eligible, "seeds": len(found), "probes": probes,
                         "seconds": seconds, "cpu_seconds": time.process_time() - cpu, "evidence": evidence,
                         **per_seed})
            if log:
                log(f"N={N}: {factor * np.median(found):,.0f} ({seconds:.1f} s)")
    finally:
        if pool is not None:
            pool.shutdown()
    return pd.DataFrame(rows)


def predict_with_rule(task: str, Ns: Sequence[int], rule: Rule, cot: bool = False, seeds: Sequence[int] = (0, 1, 2),
                      rel_tol: float = 0.03, test_size_per_type: int = 1000, log: Callable[[str], None] | None = None,
                      jobs: int = 1) -> pd.DataFrame:
    """predict_requirement with a fitted rule (covlib.coverage.rule): the evidence, level and share it reads for this
    task, with or without chain of thought, and its factor; the rule in words in column ``rule``."""
    evidence, level, share = rule.evidence(task, cot)
    table = predict_requirement(task, Ns, level, share, seeds, rule.factor, rel_tol, test_size_per_type, log, jobs,
                                evidence)
    return table.assign(cot=bool(cot), rule=rule.describe(task, cot))
