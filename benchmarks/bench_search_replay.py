"""Replay the required-data search on the book's finished cells with noisy outcomes, with no training.

Usage: PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_search_replay.py [--draws 10] [--slope S] [--seed 0]
       [--policies bisect guided psi] [--reps 2000] [--start-off F]

The world the policies search:
- Cells: every cell the book finished under its give-up rule (a floor of BOOK_FLOOR steps; rule_cells' "floor"
  table of data/scaling/probes.csv), less those whose n_req nears the ID pool (pool_limited: bounded by the
  pool, not by the model). Each draw's truth is the cell's estimate moved by the seed-to-seed noise,
  n_req * exp(sigma z), z ~ N(0, 1), sigma the spread of log n_req between the two seeds of one cell.
- Outcomes: a probe at n succeeds with P = logistic(s (log n - log n_req)) (covlib.analyses.success_curve), s
  the slope the replicates measure on the floor's same-run table (replicate_slope) once one has flipped, else
  the placeholder PLACEHOLDER_SLOPE (10% to 90% success over a factor of 1.3 in n_train), flagged as such.
- Costs: a probe's CPU-minutes from covlib.search.psi.fit_probe_costs on the search probes that count under the
  floor: per series (task, chain of thought, model), log minutes against a level per cell, the outcome, and how
  far n lies from the cell's n_req (a success well above it stops early); each cell at its own level.
- Starts: first_guess_source on the table without the cell's own rows (another seed's or model's estimate, the
  power law through other N, else coverage's guess from the shipped coverage tables). The table's cells finished
  in an order, so real searches had fewer neighbours; every policy gets the same ones. With --start-off F every cell
  starts instead from F x its estimate under the wide prior of a given start, as a task never trained does from
  coverage's prediction.

Scoring: every policy runs until the same estimator, the logistic fit on all of its probes with the known slope
(covlib.search.psi.logistic_estimate, the estimator of success_curve.cell_estimate), gives a 90% interval of n_req
at most 1.3x wide (or MAX_PROBES probes). bisect and guided walk and bisect as the search does and then go on
bisecting their bracket; "bisect, as today" stops at its 1.3x bracket as the search does now. psi proposes pairs
(the two workers) and runs both before it looks again. Reported per cell: the share that reached the target,
probes, rounds (a pair is one round), CPU-minutes, the interval's median width, and the error of the estimate
against the draw's truth (its root mean square as a factor, and how often the 90% interval held the truth).
Intervals of the ratios resample whole cells. The last line compares psi with bisect at the same target.
"""
from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

import covlib.search.required_data as required_data
from covlib.search.cells import PLACEHOLDER_SLOPE, Cell, SearchRules
from covlib.search.probes import read_curves, read_probes, rule_rows
from covlib.search.psi import (
    CRITERIA,
    PRIOR_SD,
    ProbeCosts,
    PsiPrior,
    costs_for,
    fit_probe_costs,
    logistic_estimate,
)
from covlib.search.recheck import BOOK_FLOOR
from covlib.search.reproduction import rule_cells
from covlib.search.required_data import first_guess_source, next_probe

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe, load  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "data" / "scaling" / "probes.csv"
MAX_PROBES = 16
TARGET = 1.3  # the 90% interval of n_req every policy must reach (high / low)
KEY = ["task", "N", "model", "seed", "cot"]


def coverage_guess(task: str, N: int, seed: int, coverage_k: int = 3, coverage_target: float = 0.99,
                   cot: bool = False) -> int:
    """starting_size from the shipped coverage tables (computing coverage takes minutes for large N)."""
    file = ROOT / "data" / "scaling" / f"coverage_{task}.csv"
    if file.is_file():
        cov = pd.read_csv(file)
        hit = cov[(cov["N"] == N) & (cov["k"] == coverage_k) & (cov["target"] == coverage_target)]
        if len(hit):
            return int(hit["n_train"].iloc[0])
    return int(ELIGIBLE.get((task, N, seed, cot), 1000)) // 2


ELIGIBLE: dict[tuple, int] = {}


@dataclasses.dataclass
class SimCell:
    """A finished cell as the replay sees it: its estimate, pool, cost model and level, and its first guess."""

    cell: Cell
    estimate: float
    eligible: int
    costs: ProbeCosts
    level: float
    start: int
    source: str

    def minutes(self, n: int, success: bool, n_req: float) -> float:
        return float(self.costs.minutes(np.log(n), np.log(n_req), success, level=self.level))


def under_floor(table: pd.DataFrame) -> pd.DataFrame:
    """The search probes that count under the book's give-up rule (rule_rows per cell)."""
    return pd.concat([rule_rows(rows, BOOK_FLOOR)[0] for _, rows in table.groupby(KEY)])


def book_cells(table: pd.DataFrame, cells: pd.DataFrame, costs: dict) -> list[SimCell]:
    """The floor's finished cells that the pool does not bound, with their costs and leave-one-out start."""
    out = []
    done = cells.dropna(subset=["n_req_bracket"])
    done = done[~done["pool_limited"].astype(bool)]
    for _, c in done.iterrows():
        cell = Cell(c["task"], int(c["N"]), c["model"], int(c["seed"]), bool(c["cot"]))
        own = (table["task"] == cell.task) & (table["N"] == cell.N) & (table["model"] == cell.model) \
            & (table["seed"] == cell.seed) & (table["cot"].astype(bool) == cell.cot)
        start, source = first_guess_source(cell, table[~own], SearchRules(), None)  # table: under the floor already
        model = costs_for(costs, cell)
        label = "|".join(str(v) for v in (cell.task, cell.N, cell.model, cell.seed, cell.cot))
        estimate = float(c["n_req_logistic"]) if np.isfinite(c["n_req_logistic"]) else float(c["n_req_bracket"])
        out.append(SimCell(cell, estimate, int(c["eligible"]), model, model.levels.get(label, model.level),
                           start, source))
    return out


def seed_sigma(cells: list[SimCell]) -> float:
    """The seed-to-seed spread of log n_req: sqrt(mean squared log gap / 2) over pairs of seeds of one cell."""
    by: dict[tuple, list[float]] = {}
    for c in cells:
        by.setdefault((c.cell.task, c.cell.N, c.cell.model, c.cell.cot), []).append(np.log(c.estimate))
    gaps = [v[0] - v[1] for v in by.values() if len(v) == 2]
    return float(np.sqrt(np.mean(np.square(gaps)) / 2))


def score(x: list[float], y: list[bool], slope: float) -> tuple[float, float, float]:
    """(log n_req, 90% low, high) by the one estimator; NaNs until both outcomes are seen."""
    if all(y) or not any(y):
        return math.nan, math.nan, math.nan
    return logistic_estimate(np.array(x), np.array(y), slope, 0.90)


POLICIES = ("bisect-today", "bisect", "guided", "psi", "psi-pairs")


def replay(c: SimCell, policy: str, n_req: float, slope: float, rng: np.random.Generator,
           design: ProbeCosts | None = None, criterion: str = "information") -> dict:
    """One simulated search of ``c`` whose requirement is ``n_req``: it stops once the estimator's 90% interval is at
    most TARGET wide (policy "bisect-today": once its bracket is, as the search does now). "psi" runs one probe at a
    time (a full queue: each worker on a cell of its own), "psi-pairs" both of each proposed pair at once (a cell
    alone on the two workers); ``design`` replaces the cost model psi designs with (the truth's stays)."""
    today = policy == "bisect-today"
    name = {"bisect-today": "bisect", "psi-pairs": "psi"}.get(policy, policy)
    rules = SearchRules(policy=name, psi_slope=slope, max_probes=MAX_PROBES, pairs=policy == "psi-pairs",
                        psi_criterion=criterion)
    prior = PsiPrior(c.start, PRIOR_SD[c.source], c.source)
    x: list[float] = []
    y: list[bool] = []
    minutes, rounds = 0.0, 0
    theta = low = high = math.nan
    while len(x) < MAX_PROBES:
        rows = pd.DataFrame({"n_train": np.exp(x).round().astype(int), "success": y})
        state = next_probe(c.cell, rows, c.eligible, rules, c.start, prior=prior, costs=design or c.costs)
        sizes = list(state.pair or ((state.next_n,) if state.next_n is not None else ()))
        if not sizes and not today and state.status == "bracketed" and state.high - state.low > 1:
            sizes = [int(round(np.sqrt(state.low * state.high)))]  # bisect on past its bracket, to the target
        if not sizes:
            break
        rounds += 1
        for n in sizes[: MAX_PROBES - len(x)]:
            ok = bool(rng.random() < 1 / (1 + np.exp(-slope * (np.log(n) - np.log(n_req)))))
            minutes += c.minutes(n, ok, n_req)
            x.append(float(np.log(n)))
            y.append(ok)
        theta, low, high = score(x, y, slope)
        if not today and np.exp(high - low) <= TARGET:
            break
    ratio = float(np.exp(high - low)) if np.isfinite(low) else math.inf
    return {"probes": len(x), "rounds": rounds, "minutes": minutes, "reached": ratio <= TARGET, "ratio": ratio,
            "error": theta - np.log(n_req), "covered": bool(low <= np.log(n_req) <= high) if np.isfinite(low) else False}


def oracle(c: SimCell, n_req: float, slope: float, rng: np.random.Generator) -> dict:
    """A search that knows the draw's n_req: every probe at (or, to keep sizes distinct, next to) the size with the
    most Fisher information per expected CPU-minute there, until the same estimator meets the same target. Not a
    bound: probes all at one size need luck to show both outcomes, which the interval needs (--policies oracle)."""
    theta = np.log(n_req)
    u = theta + np.linspace(-0.5, 0.5, 201)
    p = 1 / (1 + np.exp(-slope * (u - theta)))
    cost = p * c.costs.minutes(u, theta, True, level=c.level) + (1 - p) * c.costs.minutes(u, theta, False, level=c.level)
    best = u[int(np.argmax(p * (1 - p) / cost))]
    x: list[float] = []
    y: list[bool] = []
    minutes, est, low, high = 0.0, math.nan, math.nan, math.nan
    while len(x) < MAX_PROBES:
        n = int(round(np.exp(best + 0.01 * ((len(x) + 1) // 2) * (-1) ** len(x))))
        ok = bool(rng.random() < 1 / (1 + np.exp(-slope * (np.log(n) - theta))))
        minutes += c.minutes(n, ok, n_req)
        x.append(float(np.log(n)))
        y.append(ok)
        est, low, high = score(x, y, slope)
        if np.exp(high - low) <= TARGET:
            break
    ratio = float(np.exp(high - low)) if np.isfinite(low) else math.inf
    return {"probes": len(x), "rounds": len(x), "minutes": minutes, "reached": ratio <= TARGET, "ratio": ratio,
            "error": est - theta, "covered": bool(low <= theta <= high) if np.isfinite(low) else False}


def cell_boot(a: pd.DataFrame, b: pd.DataFrame, reps: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Bootstrap over cells (whole cells resampled, draws kept together): the ratio of mean minutes a / b and the
    difference of RMS log errors a - b."""
    ma, mb = a.groupby("cell")["minutes"].mean(), b.groupby("cell")["minutes"].mean()
    ea, eb = a.assign(e2=a["error"] ** 2).groupby("cell")["e2"].mean(), b.assign(e2=b["error"] ** 2).groupby("cell")["e2"].mean()
    idx = rng.integers(0, len(ma), (reps, len(ma)))
    ratio = ma.to_numpy()[idx].mean(axis=1) / mb.to_numpy()[idx].mean(axis=1)
    diff = np.sqrt(ea.to_numpy()[idx].mean(axis=1)) - np.sqrt(eb.to_numpy()[idx].mean(axis=1))
    return ratio, diff


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=10, help="simulated searches per cell and policy")
    ap.add_argument("--policies", nargs="+", default=list(POLICIES), choices=[*POLICIES, "oracle"])
    ap.add_argument("--criterion", default="information", choices=CRITERIA, help="what psi's design maximises")
    ap.add_argument("--slope", type=float, default=None,
                    help="the slope of success against log n_train (default: the measured one, else the placeholder)")
    ap.add_argument("--start-off", type=float, default=None, metavar="F",
                    help="start every cell from F x its estimate, with the prior of a given start (a new task, whose "
                         "first guess is coverage's prediction: the live preregistered cells started near F = 0.5)")
    ap.add_argument("--reps", type=int, default=2000, help="bootstrap resamples of the cells")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    t0 = time.perf_counter()
    print(f"machine: {describe()}; {load()}")
    required_data.starting_size = coverage_guess  # the shipped coverage tables, not a fresh computation
    table = read_probes(TABLE)
    for key, rows in table.groupby(["task", "N", "seed", "cot"]):
        ELIGIBLE[(key[0], int(key[1]), int(key[2]), bool(key[3]))] = int(rows["eligible"].iloc[0])
    floor_cells = rule_cells(read_probes(TABLE, replicates=True), read_curves(TABLE), BOOK_FLOOR)["floor"]
    fit = floor_cells.attrs["slope"]
    if args.slope is not None:
        slope, said = args.slope, f"s = {args.slope:.1f} (given on the command line)"
    elif fit.identified:
        slope, said = fit.slope, (f"s = {fit.slope:.1f} (90% {fit.low:.1f}-{fit.high:.1f}), measured by "
                                  f"{fit.replicates} replicates of {fit.cells} cells, {fit.flips} of them flipped")
    else:
        slope, said = PLACEHOLDER_SLOPE, (
            f"s = {PLACEHOLDER_SLOPE:.1f} PLACEHOLDER (success rises from 10% to 90% over a factor of 1.3 in "
            f"n_train): the replicates do not identify the slope yet ({fit.replicates} replicates of {fit.cells} "
            f"cells, none flipped)")
    floor_table = under_floor(table)  # read under the floor once (first_guess_source would, for each cell)
    costs = fit_probe_costs(floor_table)
    cells = book_cells(floor_table, floor_cells, costs)
    sigma = seed_sigma(cells)
    if args.start_off is not None:
        if args.start_off <= 0:
            raise SystemExit(f"--start-off must be positive (a factor of each cell's estimate), not {args.start_off}")
        cells = [dataclasses.replace(c, start=max(1, int(round(args.start_off * c.estimate))), source="start")
                 for c in cells]
    print(f"{len(cells)} cells the book finished under its give-up rule (floor {BOOK_FLOOR} steps), pool-limited "
          f"ones left out; {len(table)} search probes, {table['minutes'].sum() / 60:.0f} CPU-hours recorded")
    print(f"noise: {said}; truths move by the seed spread sigma = {sigma:.3f} in log n_req ({np.exp(sigma):.2f}x); "
          f"{args.draws} draws per cell; target: 90% interval <= {TARGET}x, at most {MAX_PROBES} probes")
    pooled = costs[None]
    print(f"cost model (pooled over series): a success at n_req costs {np.exp(pooled.success_shift):.2f}x a "
          f"failure there and {pooled.success_slope:+.2f} in log minutes per unit of log(n / n_req) above it; "
          f"a failure {pooled.failure_slope:+.2f} per unit below; {len(costs) - 1} series fitted")
    starts = pd.DataFrame([{"source": c.source, "error": np.log(c.start / c.estimate)} for c in cells])
    print(("first guesses (leave-one-out)" if args.start_off is None else f"first guesses (--start-off {args.start_off:g})")
          + " against the cells' estimates, RMS log error by source: "
          + "; ".join(f"{s} {np.sqrt((g['error'] ** 2).mean()):.2f} ({len(g)} cells, prior sd {PRIOR_SD[s]})"
                      for s, g in starts.groupby("source")))
    z = np.random.default_rng(args.seed).standard_normal((len(cells), args.draws))
    results = {}
    for policy in args.policies:
        t = time.perf_counter()
        rng = np.random.default_rng(args.seed + 1)  # the same outcome stream for every policy
        out = [dict(oracle(c, c.estimate * np.exp(sigma * z[i, d]), slope, rng) if policy == "oracle" else
                    replay(c, policy, c.estimate * np.exp(sigma * z[i, d]), slope, rng, criterion=args.criterion),
                    cell=i, draw=d)
               for i, c in enumerate(cells) for d in range(args.draws)]
        results[policy] = pd.DataFrame(out)
        print(f"  {policy}: {time.perf_counter() - t:.0f} s", file=sys.stderr)
    print(f"\n{'policy':<14}{'reached':>8}{'probes':>8}{'rounds':>8}{'CPU-min':>9}{'interval':>10}{'RMS error':>11}"
          f"{'|error| p90':>12}{'held truth':>11}")
    for policy, res in results.items():
        err = res["error"].dropna()
        print(f"{policy:<14}{res['reached'].mean():>8.0%}{res['probes'].mean():>8.2f}{res['rounds'].mean():>8.2f}"
              f"{res['minutes'].mean():>9.1f}{res['ratio'].replace(np.inf, np.nan).median():>9.2f}x"
              f"{np.exp(np.sqrt((err ** 2).mean())):>10.3f}x{np.exp(err.abs().quantile(0.9)):>11.3f}x"
              f"{res['covered'].mean():>11.0%}")
    print("(per cell: means over cells and draws; interval: median 90% width; errors: the estimate against the "
          "draw's truth, as factors; held truth: the 90% interval's coverage)")
    if "psi" in results and "bisect" in results:
        base, new = results["bisect"], results["psi"]
        ratio, diff = cell_boot(base, new, args.reps, np.random.default_rng(args.seed + 2))
        saving = base["minutes"].mean() / new["minutes"].mean()
        rms = {p: float(np.sqrt((results[p]["error"] ** 2).mean())) for p in ("bisect", "psi")}
        bar = saving >= 1.5 and rms["psi"] <= rms["bisect"]
        print(f"\npsi (one probe at a time) against bisect, both to a 90% interval <= {TARGET}x: {saving:.2f}x fewer "
              f"CPU-minutes per cell (90% interval over cells {np.quantile(ratio, 0.05):.2f}-"
              f"{np.quantile(ratio, 0.95):.2f}x), {new['probes'].mean():.2f} probes against {base['probes'].mean():.2f}; "
              f"RMS log error {rms['psi']:.3f} against {rms['bisect']:.3f} (psi - bisect, 90% interval over cells "
              f"{-np.quantile(diff, 0.95):+.3f} to {-np.quantile(diff, 0.05):+.3f})")
        if "psi-pairs" in results:
            pairs = results["psi-pairs"]
            print(f"psi in pairs (a cell alone on both workers): {base['minutes'].mean() / pairs['minutes'].mean():.2f}x "
                  f"fewer CPU-minutes, {base['rounds'].mean() / pairs['rounds'].mean():.2f}x fewer rounds (its wall "
                  "time) than bisect")
        if "oracle" in results:
            print(f"a search that knew each n_req, every probe beside its most informative size per minute: "
                  f"{base['minutes'].mean() / results['oracle']['minutes'].mean():.2f}x fewer CPU-minutes than bisect")
        print(f"the bar for adopting psi (>= 1.5x, error no larger): {'met' if bar else 'not met'} on this replay"
              + ("" if fit.identified or args.slope is not None else ", under the placeholder slope")
              + f"; {time.perf_counter() - t0:.0f} s in all")
        print(f"{saving:.2f}x fewer CPU-minutes per cell at equal interval")


if __name__ == "__main__":
    main()
