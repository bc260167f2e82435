"""Replay the required-data search on the finished cells of data/scaling/probes.csv, with no training.

Usage: .venv/bin/python benchmarks/bench_search_replay.py [--draws 20] [--policies bisect guided]
       [--give-up-floor 0] [--seed 0]

Each bracketed cell of the probe table (authors' give-up rule) becomes a simulated cell whose requirement is
its bracket's estimate (geometric mean) moved by the seed-to-seed noise: each draw takes
n_req * exp(sigma * z), z ~ N(0, 1), with sigma the spread of log estimates between the two seeds of the same
task, N, model and target style (pooled over every pair of seeds). A probe at n succeeds when n >= the draw.
Every policy sees the same draws. What a probe costs comes from the cell's own probes:
- a failure trains until the give-up rule: the cell's median epochs to fit the training set, then
  max(give_up_epochs epochs, --give-up-floor steps), at most the step cap;
- a success trains for the steps of the cell's successes, interpolated in log n (flat beyond them);
- a step costs the cell's median CPU-seconds per step (its probes' minutes / steps, evaluations included);
- a failure's best ID accuracy (what the "guided" policy reads) is the cell's failures' accuracy,
  interpolated in log n up to 0.99 at the draw's requirement.
The search starts where `covlib scaling search` would: first_guess on the table without the cell's own
rows (another seed's or model's estimate, or the power law through other N; the coverage guess read from
data/scaling/coverage_*.csv, else half the eligible pool). The table's cells finished in an order, so real
searches had fewer neighbours; the replay gives every policy the same ones.
Reports probes and CPU-minutes per bracketed cell per policy, the brackets' width, how far each policy's
estimate lies from the first's, and the saving of the policy the search uses by default and of the best.
"""
from __future__ import annotations

import argparse
import dataclasses
import math
from pathlib import Path

import numpy as np
import pandas as pd

import covlib.search.required_data as required_data
from covlib.search.cells import POLICIES, Cell, SearchRules
from covlib.search.probes import read_probes
from covlib.search.required_data import first_guess, next_probe

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "data" / "scaling" / "probes.csv"
MAX_PROBES = 20
BATCH, EVAL_EVERY, GIVE_UP_EPOCHS = 512, 50, 100.0


def coverage_guess(task: str, N: int, seed: int, coverage_k: int = 3, coverage_target: float = 0.99,
                   cot: bool = False) -> int:
    """starting_size from the shipped coverage tables (computing coverage takes minutes for large N)."""
    file = ROOT / "data" / "scaling" / f"coverage_{task}.csv"
    if file.is_file():
        cov = pd.read_csv(file)
        hit = cov[(cov["N"] == N) & (cov["k"] == coverage_k) & (cov["target"] == coverage_target)]
        if len(hit):
            return int(hit["n_train"].iloc[0])
    return int(TABLE_ELIGIBLE.get((task, N, seed, cot), 1000)) // 2


TABLE_ELIGIBLE: dict[tuple, int] = {}


@dataclasses.dataclass
class SimCell:
    """A finished cell as the replay sees it: its estimate, cost model, failures' accuracy and starting guess."""

    cell: Cell
    estimate: float
    eligible: int
    step_cap: int
    sec_per_step: float
    fit_epochs: float
    ok_n: np.ndarray
    ok_steps: np.ndarray
    bad_n: np.ndarray
    bad_acc: np.ndarray
    start: int

    def probe(self, n: int, n_req: float, floor: int) -> dict:
        if n >= n_req:
            steps = float(np.exp(np.interp(np.log(n), np.log(self.ok_n), np.log(self.ok_steps))))
            acc = 0.99
        else:
            past = max(GIVE_UP_EPOCHS * n / BATCH, floor)
            steps = self.fit_epochs * n / BATCH + past
            keep = self.bad_n < n_req
            x = np.r_[np.log(n_req) - 1.0, np.log(self.bad_n[keep]), np.log(n_req)]
            y = np.r_[0.4, self.bad_acc[keep], 0.99]
            order = np.argsort(x)
            acc = float(np.interp(np.log(n), x[order], y[order]))
        steps = min(math.ceil(steps / EVAL_EVERY) * EVAL_EVERY, self.step_cap)
        return {"n_train": n, "success": n >= n_req, "best_type0": acc, "stopped": "early_stop" if n >= n_req
                else "gave_up", "step_cap": self.step_cap, "minutes": steps * self.sec_per_step / 60}


def finished_cells(table: pd.DataFrame) -> list[SimCell]:
    """Every bracketed cell of the table (authors' give-up rule), with its cost model and leave-one-out start."""
    rules = SearchRules()
    cells = []
    table = table[table["give_up_floor"] == 0]
    for key, rows in table.groupby(["task", "N", "model", "seed", "cot"]):
        TABLE_ELIGIBLE[(key[0], int(key[1]), int(key[3]), bool(key[4]))] = int(rows["eligible"].iloc[0])
    for key, rows in table.groupby(["task", "N", "model", "seed", "cot"]):
        cell = Cell(key[0], int(key[1]), key[2], int(key[3]), bool(key[4]))
        rows = rows.sort_values("n_train")
        state = next_probe(cell, rows, int(rows["eligible"].iloc[0]), rules, 0)
        ok, bad = rows[rows["success"]], rows[~rows["success"]]
        if state.status != "bracketed" or not len(ok):
            continue
        fitted = rows.dropna(subset=["first_fit_step"])
        others = table.drop(index=rows.index)
        cells.append(SimCell(
            cell, state.estimate, int(rows["eligible"].iloc[0]), int(rows["step_cap"].max()),
            float((rows["minutes"] * 60 / rows["steps"].clip(lower=1)).median()),
            float((fitted["first_fit_step"] * BATCH / fitted["n_train"]).median()) if len(fitted) else 50.0,
            ok["n_train"].to_numpy(float), ok["steps"].clip(lower=EVAL_EVERY).to_numpy(float),
            bad["n_train"].to_numpy(float), bad["best_type0"].to_numpy(float),
            first_guess(cell, others, rules)))
    return cells


def seed_sigma(cells: list[SimCell]) -> float:
    """The seed-to-seed spread of log n_req: sqrt(mean squared log gap / 2) over pairs of seeds of one cell."""
    by = {}
    for c in cells:
        by.setdefault((c.cell.task, c.cell.N, c.cell.model, c.cell.cot), []).append(np.log(c.estimate))
    gaps = [v[0] - v[1] for v in by.values() if len(v) == 2]
    return float(np.sqrt(np.mean(np.square(gaps)) / 2))


def replay(c: SimCell, n_req: float, rules: SearchRules, floor: int) -> dict:
    """One simulated search of ``c`` whose requirement is ``n_req``: probes, CPU-minutes, and its bracket."""
    rows = pd.DataFrame(columns=["n_train", "success", "best_type0", "stopped", "step_cap", "minutes"])
    for _ in range(MAX_PROBES):
        state = next_probe(c.cell, rows, c.eligible, rules, c.start)
        if state.next_n is None:
            break
        row = c.probe(state.next_n, n_req, floor)
        rows = pd.concat([rows[rows["n_train"] != row["n_train"]], pd.DataFrame([row])]).sort_values("n_train")
        rows["success"] = rows["success"].astype(bool)
    return {"probes": len(rows), "minutes": float(rows["minutes"].sum()), "status": state.status,
            "estimate": state.estimate, "ratio": state.high / state.low if state.estimate else np.nan}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=20, help="simulated requirements per cell")
    ap.add_argument("--policies", nargs="+", default=list(POLICIES), choices=POLICIES)
    ap.add_argument("--give-up-floor", type=int, default=0, help="the give-up rule's step floor the costs assume")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    required_data.starting_size = coverage_guess  # the shipped coverage tables, not a fresh computation
    table = read_probes(TABLE)
    cells = finished_cells(table)
    sigma = seed_sigma(cells)
    z = np.random.default_rng(args.seed).standard_normal((len(cells), args.draws))
    print(f"{len(cells)} bracketed cells of {TABLE.relative_to(ROOT)} ({len(table)} probes, "
          f"{table['minutes'].sum() / 60:.1f} CPU-hours recorded); seed noise sigma = {sigma:.3f} in log n_req "
          f"({np.exp(sigma):.2f}x); {args.draws} draws per cell; give-up floor {args.give_up_floor} steps")
    results = {}
    for policy in args.policies:
        rules = SearchRules(policy=policy)
        out = [dict(replay(c, c.estimate * np.exp(sigma * z[i, d]), rules, args.give_up_floor), cell=i, draw=d)
               for i, c in enumerate(cells) for d in range(args.draws)]
        results[policy] = pd.DataFrame(out)
    first = results[args.policies[0]]
    print(f"\n{'policy':<10}{'bracketed':>10}{'probes/cell':>12}{'CPU-min/cell':>13}{'bracket ratio':>14}"
          f"{'est. vs ' + args.policies[0]:>22}")
    for policy, res in results.items():
        done = res["status"] == "bracketed"
        shift = np.abs(np.log(res["estimate"] / first["estimate"]))
        print(f"{policy:<10}{done.mean():>10.0%}{res['probes'].mean():>12.2f}{res['minutes'].mean():>13.1f}"
              f"{res.loc[done, 'ratio'].mean():>14.3f}{f'median {np.exp(shift.median()):.3f}x, max {np.exp(shift.max()):.2f}x':>22}")
    # the floor under any policy that picks n: one success just above the requirement and one failure just below,
    # the bracket's width apart (a search that knew every draw's requirement)
    half = np.sqrt(SearchRules().bracket_ratio)
    oracle = np.mean([c.probe(int(np.ceil(r * half)), r, args.give_up_floor)["minutes"]
                      + c.probe(int(r / half), r, args.give_up_floor)["minutes"]
                      for i, c in enumerate(cells) for r in c.estimate * np.exp(sigma * z[i])])
    print(f"{'oracle':<10}{'100%':>10}{2:>12.2f}{oracle:>13.1f}{SearchRules().bracket_ratio:>14.3f}"
          f"{'(knows n_req)':>22}")
    default = SearchRules().policy
    base = results[args.policies[0]]
    for policy, res in results.items():
        if policy == args.policies[0]:
            continue
        tag = " (the search's default)" if policy == default else ""
        print(f"{policy}{tag}: {base['minutes'].mean() / res['minutes'].mean():.2f}x fewer CPU-minutes and "
              f"{base['probes'].mean() / res['probes'].mean():.2f}x fewer probes per bracketed cell than "
              f"{args.policies[0]}, at bracket ratio <= {SearchRules().bracket_ratio}")
    print(f"the oracle: {base['minutes'].mean() / oracle:.2f}x fewer CPU-minutes than {args.policies[0]} (the most any "
          "choice of n can save under this cost model); the search's default policy is " + repr(default))


if __name__ == "__main__":
    main()
