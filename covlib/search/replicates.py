"""How noisy is a probe's outcome? Replicates of chosen probes near their cell's n_req.

A search treats each probe's outcome (99% ID accuracy or not) as exact, yet the two ends of a bracket sit right
at the boundary, where a different initialisation or another draw of the training set may turn a success into a
failure. A replicate reruns one of the search's probes at the same size under the same rule, with one thing
changed: "init" trains another initialisation (and batch order) on the same training set; "draw" keeps the
cell's training seed and draws another training set of the same size from the same task instance (its tables
and seen split). Replicates are rows of the probe table, marked in its ``replicate`` column; a search never reads
them (covlib.search.probes.read_probes)."""
from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import fisher_exact
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from covlib.base.errors import CovlibError
from covlib.search.cells import Cell, Probe, ProbeRules
from covlib.search.probes import REPLICATE_KINDS, cell_rows, read_probes
from covlib.search.recheck import BOOK_FLOOR
from covlib.search.required_data import run_probe, search_states
from covlib.search.summary import summarise
from covlib.training.pool import Job, run_jobs

# two replicates of each kind per probe; a draw's seed is combined with the cell's, an init seed replaces it
REPLICATE_SEEDS = {"init": (1001, 1002), "draw": (1, 2)}


PLAN_COLUMNS = ["task", "N", "model", "seed", "cot", "n_train", "eligible", "n_req", "side", "original_success",
                "step_cap", "minutes", "replicate", "replicate_seed", "round"]


@dataclass(frozen=True)
class ReplicateCell:
    """A cell whose two bracket ends (under the floor) are replicated."""

    task: str
    N: int
    seed: int
    cot: bool = False
    model: str = "L4-d128"

    def cell(self) -> Cell:
        return Cell(self.task, self.N, self.model, self.seed, self.cot)


# The book's replicate design, chosen before any replicate ran, from the brackets finished under the floor and
# their end probes' minutes: both ends of eight cells (16 probes, each within 1.13x of its cell's n_req), five
# tasks with and without chain of thought, mostly at small N where a probe costs 3-17 minutes, and three-hop
# CoT at its largest N (40), where the failing ends stopped at 98.3-98.9% best accuracy, to see whether the
# noise grows with N. Cells whose n_req nears the ID pool (two-hop N = 20-25, three-hop N = 10) are avoided: there
# another draw of the training set is nearly the same set. Budget: ~470 one-thread CPU-minutes at the end
# probes' own pace (replicate_plan's ``minutes``).
BOOK_REPLICATE_CELLS = (
    ReplicateCell("twohop", 30, 0),
    ReplicateCell("twohop", 35, 0),
    ReplicateCell("twohop", 30, 1, cot=True),
    ReplicateCell("threehop", 12, 0),
    ReplicateCell("threehop", 14, 0),
    ReplicateCell("threehop", 24, 0, cot=True),
    ReplicateCell("parallel_twohop", 16, 0),
    ReplicateCell("threehop", 40, 1, cot=True),
)


def replicate_plan(probes: pd.DataFrame, cells: Sequence[ReplicateCell] = BOOK_REPLICATE_CELLS,
                   give_up_floor: int = BOOK_FLOOR, strict: bool = True) -> pd.DataFrame:
    """One row per replicate to run: the cell, the end probe it repeats (``side``: "below" for the failing lower
    end, "above" for the succeeding upper end, with the original outcome and minutes), the kind and its seed.
    Ordered in rounds: every probe's first init and first draw replicate before any second one, so that a queue
    stopped halfway has measured every probe once of each kind. ``strict``: a cell not bracketed is an error;
    otherwise it is skipped (a table that holds other cells, as a miniature's)."""
    search_rows = probes[probes["replicate"] == "search"] if "replicate" in probes else probes
    rows = []
    for rc in cells:
        cell = rc.cell()
        # a cell without probes is not bracketed; its state would compute a first guess from coverage for nothing
        # (30 s of a smoke run, whose miniature table holds none of these cells)
        started = len(cell_rows(search_rows, cell, None)) > 0
        state = summarise(search_states([cell], search_rows, give_up_floor=give_up_floor)).iloc[0] if started else None
        status = state["status"] if started else "no probes"
        if status != "bracketed":
            if not strict:
                continue
            raise CovlibError(f"{cell.label()} is not bracketed under the floor of {give_up_floor} steps "
                              f"({status}): a replicate repeats a bracket's ends; choose a finished cell")
        ends = cell_rows(search_rows, cell, give_up_floor).set_index("n_train")
        n_req = float(np.sqrt(state["low"] * state["high"]))
        for side, n in (("below", int(state["low"])), ("above", int(state["high"]))):
            end = ends.loc[n]
            for round_, k in enumerate(range(2)):
                for kind in REPLICATE_KINDS:
                    rows.append({"task": cell.task, "N": cell.N, "model": cell.model, "seed": cell.seed,
                                 "cot": cell.cot, "n_train": n, "eligible": int(end["eligible"]),
                                 "n_req": n_req, "side": side, "original_success": bool(end["success"]),
                                 "step_cap": int(end["step_cap"]), "minutes": float(end["minutes"]),
                                 "replicate": kind, "replicate_seed": REPLICATE_SEEDS[kind][k], "round": round_})
    plan = pd.DataFrame(rows, columns=PLAN_COLUMNS)
    return plan.sort_values(["round", "minutes"], kind="stable").reset_index(drop=True)


def done_mask(plan: pd.DataFrame, table: pd.DataFrame, give_up_floor: int = BOOK_FLOOR) -> np.ndarray:
    """Which replicates of the plan the table already holds (run under ``give_up_floor``)."""
    if not len(table) or not len(plan):
        return np.zeros(len(plan), dtype=bool)
    key = ["task", "N", "model", "seed", "cot", "n_train", "replicate", "replicate_seed"]
    have = table[table["give_up_floor"] == give_up_floor][key].astype(str).drop_duplicates()
    merged = plan[key].astype(str).merge(have.assign(_done=True), on=key, how="left")
    return merged["_done"].fillna(False).to_numpy(bool)


def run_replicates(table: str | os.PathLike, work_dir: str | os.PathLike, plan: pd.DataFrame, jobs: int = 2,
                   give_up_floor: int = BOOK_FLOOR, log: Callable[[str], None] | None = print) -> int:
    """Train every replicate of ``plan`` the table lacks (resumable: a finished one is skipped, an interrupted one
    resumes from its checkpoint), each appending its row; returns how many failed to run."""
    todo = plan[~done_mask(plan, read_probes(table, replicates=True), give_up_floor)]
    probe_jobs = []
    for r in todo.itertuples(index=False):
        cell = Cell(r.task, int(r.N), r.model, int(r.seed), bool(r.cot))
        rules = ProbeRules(give_up_floor=give_up_floor, step_cap=int(r.step_cap))
        probe = Probe(cell, int(r.n_train), int(r.eligible), rules, str(table), str(work_dir),
                      replicate=r.replicate, replicate_seed=int(r.replicate_seed))
        probe_jobs.append(Job(run_probe, {"probe": probe}, str(probe.run_dir()),
                              f"{cell.label()} n={r.n_train} {r.replicate}-{r.replicate_seed}"))
    if log:
        log(f"{len(todo)} of {len(plan)} replicates to run, about {todo['minutes'].sum():.0f} CPU-minutes at the "
            f"pace of the probes they repeat")

    def report(outcome) -> None:
        if log:
            result = outcome.result or {}
            said = (("success" if result.get("success") else "failure") + f", {result.get('minutes', 0):.1f} min"
                    if outcome.status == "done" else f"{outcome.status}: {outcome.error}")
            log(f"{outcome.name}: {said}")

    outcomes = run_jobs(probe_jobs, workers=jobs, progress=False, on_outcome=report)
    return sum(o.status != "done" for o in outcomes)


def replicate_outcomes(table: pd.DataFrame, plan: pd.DataFrame, give_up_floor: int = BOOK_FLOOR) -> pd.DataFrame:
    """The plan's replicates that have run, each beside the outcome of the probe it repeats (``changed``: the
    outcome differs), with the replicate's best ID accuracy."""
    if not len(plan):
        return plan.assign(success=pd.Series(dtype=bool), changed=pd.Series(dtype=bool))
    key = ["task", "N", "model", "seed", "cot", "n_train", "replicate", "replicate_seed"]
    ran = table[(table["replicate"] != "search") & (table["give_up_floor"] == give_up_floor)]
    ran = ran[[*key, "success", "best_type0", "minutes"]].rename(columns={"minutes": "replicate_minutes"})
    merged = plan.astype({k: str for k in key}).merge(ran.astype({k: str for k in key}), on=key, how="inner")
    merged = merged.astype({"N": int, "seed": int, "n_train": int, "replicate_seed": int})
    merged["cot"] = merged["cot"] == "True"
    merged["success"] = merged["success"].astype(bool)
    merged["changed"] = merged["success"] != merged["original_success"]
    return merged


def flip_shares(outcomes: pd.DataFrame) -> pd.DataFrame:
    """How often a replicate's outcome differs from the probe it repeats: overall, by kind (init, draw), and by
    side of the boundary; each with its count and a Wilson 95% interval."""
    rows = []
    groups = [("all", outcomes)] + [(f"{k}", g) for k, g in outcomes.groupby("replicate")] \
        + [(f"side {s}", g) for s, g in outcomes.groupby("side")]
    for name, g in groups:
        n, flips = len(g), int(g["changed"].sum()) if len(g) else 0
        low, high = proportion_confint(flips, n, method="wilson") if n else (np.nan, np.nan)
        rows.append({"source": name, "replicates": n, "changed": flips, "share": flips / n if n else np.nan,
                     "ci_low": low, "ci_high": high})
    return pd.DataFrame(rows)


LARGEST_N = 40  # the replicated cells at a series' largest N (three-hop CoT's), against every smaller one
MIN_AT_LARGEST_N = 8  # both ends, each rerun twice per source: too few before that to compare at all


@dataclass(frozen=True)
class NoiseBySize:
    """Outcome changes among the replicates at the largest N and at smaller N, and Fisher's exact test (two-sided)
    of whether the share differs, with what the counts rule out: the difference of the shares (largest N minus
    smaller N) and its Newcombe 95% interval. ``p`` and the interval are NaN while either group is empty."""

    changed_large: int
    replicates_large: int
    changed_small: int
    replicates_small: int
    p: float
    ci_low: float = float("nan")
    ci_high: float = float("nan")

    @property
    def enough(self) -> bool:
        return self.replicates_large >= MIN_AT_LARGEST_N and self.replicates_small > 0

    @property
    def difference(self) -> float:
        """The share changed at the largest N minus the share at smaller N (NaN while either group is empty)."""
        if not (self.replicates_large and self.replicates_small):
            return float("nan")
        return self.changed_large / self.replicates_large - self.changed_small / self.replicates_small


def noise_by_size(outcomes: pd.DataFrame, largest_n: int = LARGEST_N) -> NoiseBySize:
    """Does the noise grow with N? A share of changed outcomes compared by Fisher's exact test (counts this small
    leave a chi-squared approximation unreliable); written before any replicate at that N had finished. The
    difference's interval was added after the last of them (2026-11-29): it decides nothing, it says what the
    counts leave open."""
    large = outcomes["N"] >= largest_n
    a, n_a = int(outcomes.loc[large, "changed"].sum()), int(large.sum())
    b, n_b = int(outcomes.loc[~large, "changed"].sum()), int((~large).sum())
    if not (n_a and n_b):
        return NoiseBySize(a, n_a, b, n_b, float("nan"))
    p = float(fisher_exact([[a, n_a - a], [b, n_b - b]]).pvalue)
    # Newcombe's hybrid score interval: it keeps its level at counts this small (the Wald interval does not)
    low, high = confint_proportions_2indep(a, n_a, b, n_b, method="newcomb", compare="diff")
    return NoiseBySize(a, n_a, b, n_b, p, float(low), float(high))


def measured_pace(outcomes: pd.DataFrame) -> float:
    """The median ratio of a replicate's minutes to those of the probe it repeats (NaN before any has run): how far
    the plan's minutes, taken from the repeated probes, understate the cost on the machine the replicates run on."""
    if not len(outcomes):
        return float("nan")
    return float(np.median(outcomes["replicate_minutes"] / outcomes["minutes"]))
