"""What a search is made of: its cells (task, N, model, seed), their state, its rules and probes."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # an annotation only: the command line reads this module's names without loading pandas
    import pandas as pd

from covlib.base.errors import CovlibError
from covlib.tasks.graphs import get_task, is_formula

# what a probe's evaluations score before its last (which scores every type): the types early stop and the give-up
# rule read, and those its kept learning curve shows (probes.CURVE_METRICS); teacher-forced, so CoT is not decoded
PROBE_EVAL_TYPES = ("train_inferred", "type_0", "type_1", "type_2", "type_3")


CELL_KEY = ["task", "N", "model", "seed", "cot"]  # the probe-table columns that name a cell


@dataclass(frozen=True)
class ProbeRules:
    """What counts as success and when a probe gives up (the authors' rule)."""

    threshold: float = 0.99  # type_0 accuracy that counts as generalising
    give_up_epochs: float = 100.0  # epochs after the training set is fitted without success
    step_cap: int = 6000  # hard cap on optimiser steps per probe
    eval_every: int = 50
    batch_size: int = 512
    weight_decay: float = 0.1
    test_size_per_type: int = 1000  # test items per type of each probe's dataset
    # a step floor on the give-up rule: give up only after max(give_up_epochs epochs, this many steps) past the
    # fit, so that a small training set is not given up after a few hundred steps; 0 = the authors' rule alone
    give_up_floor: int = 0
    # lean evaluation (TrainConfig.eval_types): it changes no decision, only what the intermediate evaluations
    # cost (five-hop CoT: 33 types, each CoT target greedily decoded); () scores every type at every evaluation
    eval_types: tuple[str, ...] = PROBE_EVAL_TYPES

    def one_rule_size(self, give_up_floor: int) -> float:
        """The training-set size from which give_up_epochs epochs last at least ``give_up_floor`` steps: there the
        floor cannot act, and the authors' rule and the floor's are one rule."""
        return give_up_floor * self.batch_size / self.give_up_epochs

    def describe(self) -> str:
        """The rules in words, for a reader."""
        return (f"success at {self.threshold:.0%} ID accuracy (evaluated every {self.eval_every} steps); a probe gives "
                f"up {self.give_up_epochs:g} epochs after fitting its training set"
                + (f" but not before {self.give_up_floor:,} steps past the fit" if self.give_up_floor else "")
                + f", or at {self.step_cap:,} steps; "
                f"batch {self.batch_size}, weight decay {self.weight_decay:g}")

    def train_overrides(self) -> dict:
        return {"steps": self.step_cap, "early_stop": True, "threshold": self.threshold,
                "give_up_epochs": self.give_up_epochs, "give_up_floor": self.give_up_floor, "eval_every": self.eval_every, "batch_size": self.batch_size,
                "weight_decay": self.weight_decay, "checkpoint_every": 500, "eval_types": self.eval_types}


POLICIES = ("bisect", "guided", "psi")  # the search policies SearchRules.policy may name; "bisect" is the original
# the slope of success against log n_train (P = logistic(s (log n - log n_req))) the "psi" policy assumes until
# replicate probes measure it: success rises from 10% to 90% over a factor of 1.3 in n_train, the bracket ratio
PLACEHOLDER_SLOPE = 2 * math.log(9) / math.log(1.3)
FINISHED = ("bracketed", "unreachable")  # the statuses that end a search
# covlib.search.tighten's defaults: bisect a finished bracket to this ratio (the estimate within 1.07x of either
# end) where that costs at most this many one-thread CPU-minutes
TIGHT_RATIO, MAX_MINUTES = 1.15, 60.0


@dataclass(frozen=True)
class SearchRules:
    """How the search walks n_train: start, step, and when a bracket is tight enough."""

    step_factor: float = 1.6  # multiply or divide n_train by this until success and failure are bracketed
    bracket_ratio: float = 1.3  # stop bisecting once smallest success / largest failure <= this
    min_n: int = 16
    # the largest probe leaves this many ID-eligible inputs (at most a quarter of them) out of training, so
    # that the ID test set (type_0) still holds that many items: near the whole pool nothing is left to test
    min_test_items: int = 1000
    # how the next n_train is chosen (POLICIES): "bisect" steps by step_factor and bisects; "guided" also reads
    # how close the failures came (their best ID accuracy) and starts just above the first guess
    policy: str = "bisect"
    close_accuracy: float = 0.95  # "guided": a failure at least this accurate is within one bracket_ratio of n_req
    # "psi" (covlib.search.psi): places each probe where it most narrows the posterior of n_req per expected CPU-minute
    # and stops once the logistic estimate's 90% interval is at most bracket_ratio wide, or after max_probes probes
    psi_slope: float = PLACEHOLDER_SLOPE
    max_probes: int = 16
    pairs: bool = True  # "psi": propose two probes of a cell at a time, for the two workers
    psi_criterion: str = "information"  # "psi": what a probe is worth (covlib.search.psi.design): or "entropy"

    def __post_init__(self) -> None:
        if self.policy not in POLICIES:
            raise CovlibError(f"unknown search policy {self.policy!r}; choose one of: {', '.join(POLICIES)}")
        if not self.psi_slope > 0:
            raise CovlibError(f"psi_slope {self.psi_slope}: the slope of success against log n_train must be positive")

    def largest_n(self, eligible: int) -> int:
        """The largest n_train a search tries: the ID-eligible inputs less those kept to test."""
        return max(eligible - min(self.min_test_items, eligible // 4), self.min_n)


@dataclass(frozen=True)
class Cell:
    """One (task, N, model, seed) whose required data the search estimates."""

    task: str
    N: int
    model: str = "L4-d128"
    seed: int = 0
    cot: bool = False
    start: int | None = None  # first n_train to probe; None: a guess from the coverage of the ID test
    # placeholder bridges (DatasetConfig.fake_bridge in covlib.tasks.datasets). The probe table has no column for
    # it: keep such cells in a table of their own (chapter 7 uses data/cot/probes_fakebridge.csv; the CLI refuses
    # the book's table)
    fake_bridge: bool = False
    # the step cap its experiment runs its probes at (experiments' step_cap_by_N), when above the search's: a
    # failure a lower cap stopped is then undecided, so a status read from the table alone does not call it final
    step_cap: int | None = None

    def key(self) -> tuple:
        return (self.task, self.N, self.model, self.seed, self.cot, self.fake_bridge)

    def label(self) -> str:
        style = "-cot" if self.cot else "-fakebridge" if self.fake_bridge else ""
        return f"{self.task}{style} N={self.N} {self.model} seed={self.seed}"


@dataclass
class CellState:
    """What the probes so far say about one cell."""

    cell: Cell
    probes: pd.DataFrame  # this cell's rows of the probe table
    eligible: int
    next_n: int | None  # the next n_train to probe, None when finished
    status: str  # "searching", "bracketed", "unreachable" (fails at the largest testable n), "below_min"
    low: int | None = None  # largest failing n below the smallest success
    high: int | None = None  # smallest succeeding n
    inversions: int = 0  # failures above the smallest success (non-monotone evidence)
    pair: tuple[int, ...] = ()  # "psi": the probes it proposes to run together (next_n first)

    @property
    def estimate(self) -> float | None:
        """The geometric mean of the bracket (None until both ends exist)."""
        if self.low is None or self.high is None:
            return None
        return float(np.sqrt(self.low * self.high))


@dataclass(frozen=True)
class Probe:
    """One training run of the search: a cell at one n_train (picklable: it crosses process boundaries)."""

    cell: Cell
    n_train: int
    eligible: int
    rules: ProbeRules
    table: str  # the probe table this probe appends its row to
    work_dir: str  # datasets/ and runs/ go here (build/scaling for the book)
    policy: str = "bisect"  # the search policy that chose n_train (SearchRules.policy), recorded in the probe's row
    # a search's probe ("search"), or a replicate of one (probes.REPLICATE_KINDS: "init" trains with seed
    # replicate_seed on the same training set, "draw" on the draw replicate_seed of the training set)
    replicate: str = "search"
    replicate_seed: int = 0

    @property
    def train_seed(self) -> int:
        """The seed of the model's initialisation and batch order."""
        return self.replicate_seed if self.replicate == "init" else self.cell.seed

    @property
    def draw_seed(self) -> int | None:
        """The draw of the training set (None: the cell's own, from its seed)."""
        return self.replicate_seed if self.replicate == "draw" else None

    def _run_name(self, n_train: str) -> str:
        c = self.cell
        style = ".cot" if c.cot else ".fakebridge" if c.fake_bridge else ""
        name = get_task(c.task).authors_name if is_formula(c.task) else c.task  # a formula is no folder name
        floor = f"_floor-{self.rules.give_up_floor}" if self.rules.give_up_floor else ""
        rep = "" if self.replicate == "search" else f"_rep-{self.replicate}-{self.replicate_seed}"
        return f"{name}{style}.{c.N}.{n_train}.seed-{c.seed}_{c.model}{floor}{rep}"

    def run_dir(self) -> Path:
        return Path(self.work_dir) / "runs" / self._run_name(str(self.n_train))

    def interrupted_sizes(self) -> list[int]:
        """The n_train of this probe's cell, rules and replicate whose run folders hold a checkpoint: probes an
        interrupted search left part-trained (a probe that ends deletes its checkpoint unless a step cap stopped it,
        and then its row is in the table), in increasing order."""
        head, tail = self._run_name("<n>").split("<n>")
        pattern = re.compile(re.escape(head) + r"(\d+)" + re.escape(tail))
        found = (pattern.fullmatch(c.parent.name) for c in (Path(self.work_dir) / "runs").glob("*/checkpoint.pt"))
        return sorted(int(m.group(1)) for m in found if m)
