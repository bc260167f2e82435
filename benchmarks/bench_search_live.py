"""The search policies compared live: psi against bisection on the same preregistered cells (data/QUEUE.sh, step
19c), each policy's probes in a table of its own, every cell estimated alike (the logistic model under the slope the
replicates of data/scaling/probes.csv measure: point at its estimate, intervals at the shallow end of its own
interval). Prints, per cell, each policy's n_req, 90% interval, probes, training steps and recorded minutes, whether
the intervals overlap, and a line on the whole. The minutes are each run's wall time on the queue's two one-thread
workers, so they count whatever else loaded the machine while it ran; the steps do not, and are the fairer cost
where the two policies ran at different times.
Run: PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_search_live.py
"""
from __future__ import annotations

import pandas as pd

from covlib.base.paths import repository_path
from covlib.search.policy_live import live_comparison, live_sentence
from covlib.search.probes import read_curves, read_probes
from covlib.search.recheck import BOOK_FLOOR
from covlib.search.reproduction import rule_cells

TABLES = {"bisect": "data/predict/probes_preregistered.csv", "psi": "data/predict/probes_preregistered_psi.csv"}
REPLICATES = "data/scaling/probes.csv"
QUEUE_PSI_SLOPE = 102.0  # the --psi-slope of data/QUEUE.sh's step 19c: it decides when psi's searches stop


def main() -> None:
    book = repository_path(REPLICATES)
    slope = rule_cells(read_probes(book, replicates=True), read_curves(book), BOOK_FLOOR)["floor"].attrs["slope"]
    print(f"slope {slope.slope:.0f} per unit of log n (90% interval {slope.low:.0f}-{slope.high:.0f}; "
          f"{slope.replicates} replicates, {slope.flips} changed)")
    tables = {name: read_probes(repository_path(path), replicates=True) for name, path in TABLES.items()}
    comparison = live_comparison(tables, slope, BOOK_FLOOR, QUEUE_PSI_SLOPE)
    if len(comparison):
        shown = comparison[["task", "N", "seed"]].copy()
        for name in TABLES:
            shown[name] = [f"{n:,.0f} ({lo:,.0f}-{hi:,.0f}), {p} probes, {st:,} steps, {m:.0f} min"
                           for n, lo, hi, p, st, m in zip(
                               comparison[f"n_req_{name}"], comparison[f"low_90_{name}"],
                               comparison[f"high_90_{name}"], comparison[f"probes_{name}"],
                               comparison[f"steps_{name}"], comparison[f"minutes_{name}"])]
        shown["overlap"] = comparison["overlap"]
        shown["finished"] = [" and ".join(name for name in TABLES if row[f"finished_{name}"]) or "neither"
                             for _, row in comparison.iterrows()]
        with pd.option_context("display.width", 200, "display.max_colwidth", 60):
            print(shown.to_string(index=False))
    print(live_sentence(comparison, *TABLES))


if __name__ == "__main__":
    main()
