"""Time what chapters 4, 7 and 10 spend reading the shipped probe table: every cell's rows under a give-up rule
(rule_rows), the state of every cell (search_states), the step floor's recheck of the authors' brackets
(floor_recheck) and an exponent's two-level bootstrap (exponent_fit, 2,000 resamples as the chapters draw).
The code before a change runs it too (it imports nothing new): PYTHONPATH=<an older worktree> for a side-by-side.

Medians of CPU seconds over --repeats runs in this process, on data/scaling/probes.csv with its replicate rows.
Run: PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_probe_tables.py [--repeats 5]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from covlib.analyses.fits import exponent_fit
from covlib.search.probes import read_probes, rule_rows
from covlib.search.recheck import BOOK_FLOOR, floor_recheck, table_cells
from covlib.search.required_data import search_states

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe, load  # noqa: E402

TABLE = Path(__file__).resolve().parents[1] / "data" / "scaling" / "probes.csv"
FLOORS = (0, BOOK_FLOOR, 2 * BOOK_FLOOR)


def cpu_seconds(work, repeats: int) -> float:
    """Median CPU seconds of ``work()`` over ``repeats`` runs."""
    times = []
    for _ in range(repeats):
        start = time.process_time()
        work()
        times.append(time.process_time() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="runs per timing (median)")
    args = parser.parse_args()
    table = read_probes(TABLE, replicates=True)
    cells = table_cells(table)
    by_cell = [rows.sort_values("n_train") for _, rows in table.groupby(["task", "N", "model", "seed", "cot"])]
    # two-hop's law with a stand-in for each cell's n_req (its smallest success) and a spread per cell
    law = table[(table["task"] == "twohop") & ~table["cot"] & (table["model"] == "L4-d128") & table["success"]]
    law = law.groupby(["N", "seed"], as_index=False)["n_train"].min().rename(columns={"n_train": "n_req"})
    law["log_sd"] = np.full(len(law), 0.05)
    print(f"{describe()}; {load()}")
    print(f"{TABLE.name}: {len(table)} rows (replicates included), {len(cells)} cells; medians of {args.repeats} runs, "
          "CPU seconds")
    work = {
        f"rule_rows, every cell x floors {FLOORS}": lambda: [rule_rows(rows, f) for rows in by_cell
                                                              for f in FLOORS],
        f"search_states, {len(cells)} cells, floor {BOOK_FLOOR}": lambda: search_states(cells, table,
                                                                                       give_up_floor=BOOK_FLOOR),
        f"floor_recheck, floor {BOOK_FLOOR}": lambda: floor_recheck(table, BOOK_FLOOR),
        f"exponent_fit, two-hop ({len(law)} cells), 2,000 resamples": lambda: exponent_fit(law, reps=2000),
    }
    for name, job in work.items():
        print(f"  {name:<52} {cpu_seconds(job, args.repeats):7.3f}")


if __name__ == "__main__":
    main()
