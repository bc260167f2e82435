"""Coverage's prediction of the data a task needs, before any training: per N, the training-set size at which
a share of the ID test items is k-covered (exact bisection in each dataset seed), times a calibration factor."""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from covlib.base.errors import CovlibError
from covlib.coverage.requirement import CoverageProbes
from covlib.tasks.graphs import get_task

GROWTH_GUESS = 2.3  # exponent used only to guess where the next N's crossing lies (bisection decides)
SEED_SPREAD = 1.05  # first step from another seed's crossing at the same N (seeds' crossings differ by 0-3% there)


def predict_requirement(task: str, Ns: Sequence[int], k: int = 3, share: float = 0.99, seeds: Sequence[int] = (0, 1, 2),
                        factor: float = 1.0, rel_tol: float = 0.03, test_size_per_type: int = 1000,
                        log: Callable[[str], None] | None = None) -> pd.DataFrame:
    """One row per N: the predicted n_req (``factor`` times the median crossing over ``seeds``), its range over
    the seeds (NaN where some seed does not reach the share below the largest training set the ID pool
    allows), the ID-eligible count, the probes (datasets generated), the wall seconds it took and its CPU seconds."""
    name = get_task(task).name
    rows, last = [], None
    for N in sorted(Ns):
        start, cpu, found, probes = time.perf_counter(), time.process_time(), [], 0
        for seed in seeds:
            cell = CoverageProbes(name, int(N), int(seed), [k], test_size_per_type)
            known = [f for f in found if f == f]  # a seed that never reached the share gives no guess
            guess = known[-1] if known else (None if last is None else last[1] * (N / last[0]) ** GROWTH_GUESS)
            # another seed of the same N lands within a few percent: step from it by 5%, not by doubling
            spread = SEED_SPREAD if known else 2.0
            try:
                found.append(cell.crossing(k, share, rel_tol, guess, top_first=False, spread=spread)["n_train"])
            except CovlibError:  # even the largest training set the pool allows falls short in this seed
                found.append(np.nan)
            probes += len(cell.shares)
            eligible = cell.eligible
        if np.isnan(found).any():  # the median would hide a seed that never gets there: no prediction
            found = [np.nan] * len(found)
        else:
            last = (N, float(np.median(found)))
        seconds = time.perf_counter() - start
        rows.append({"task": name, "N": int(N), "k": k, "share": share, "factor": factor,
                     "n_pred": factor * float(np.median(found)), "n_low": factor * min(found),
                     "n_high": factor * max(found), "eligible": eligible, "seeds": len(found), "probes": probes,
                     "seconds": seconds, "cpu_seconds": time.process_time() - cpu})
        if log:
            log(f"N={N}: {factor * np.median(found):,.0f} ({seconds:.1f} s)")
    return pd.DataFrame(rows)
