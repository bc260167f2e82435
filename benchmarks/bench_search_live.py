"""The search policies compared live: psi against bisection on the same preregistered cells (data/QUEUE.sh, step
19c), each policy's probes in a table of its own, every cell estimated alike (the logistic model under the slope the
replicates of data/scaling/probes.csv measure: point at its estimate, intervals at the shallow end of its own
interval). Prints, per cell, each policy's n_req, 90% interval, probes and recorded CPU-minutes, whether the
intervals overlap, and a line on the whole. The minutes are those each probe recorded on the machine that ran it
(the queue's two one-thread workers), so the comparison holds only as far as both ran alike.
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


def main() -> None:
    book = repository_path(REPLICATES)
    slope = rule_cells(read_probes(book, replicates=True), read_curves(book), BOOK_FLOOR)["floor"].attrs["slope"]
    print(f"slope {slope.slope:.0f} per unit of log n (90% interval {slope.low:.0f}-{slope.high:.0f}; "
          f"{slope.replicates} replicates, {slope.flips} changed)")
    tables = {name: read_probes(repository_path(path), replicates=True) for name, path in TABLES.items()}
    comparison = live_comparison(tables, slope, BOOK_FLOOR)
    if len(comparison):
        shown = comparison[["task", "N", "seed"]].copy()
        for name in TABLES:
            shown[name] = [f"{n:,.0f} ({lo:,.0f}-{hi:,.0f}), {p} probes, {m:.0f} min" for n, lo, hi, p, m in zip(
                comparison[f"n_req_{name}"], comparison[f"low_90_{name}"], comparison[f"high_90_{name}"],
                comparison[f"probes_{name}"], comparison[f"minutes_{name}"])]
        shown["overlap"] = comparison["overlap"]
        with pd.option_context("display.width", 200, "display.max_colwidth", 60):
            print(shown.to_string(index=False))
    print(live_sentence(comparison, *TABLES))


if __name__ == "__main__":
    main()
