"""The audit's runs: pools, candidate training sets, the plan, the run table."""
from __future__ import annotations

import dataclasses
import json
import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from covlib.base.errors import CovlibError
from covlib.base.files import write_folder_atomic
from covlib.base.paths import readable_path
from covlib.base.tables import read_table, upsert_row
from covlib.coverage.exact import k_cutoffs
from covlib.figures.exercises import read_answer, right, unanswered, wrong
from covlib.tasks.datasets import Dataset, DatasetConfig, dataset_files, eligible_count, generate
from covlib.tasks.folders import META
from covlib.training.loop import train
from covlib.training.pool import Job, run_jobs
from covlib.training.runs import load_metrics
from covlib.training.shapes import model_overrides

RUN_COLUMNS = [
    "experiment", "selection", "n_unique", "exposure", "steps", "budget", "seed", "draw", "coverage", "coverage_sel",
    "surface", "surface_sel", "entropy_t", "entropy_b", "final_type0", "best_type0", "final_train", "minutes",
]


RUN_KEY = ["experiment", "selection", "n_unique", "steps", "seed", "draw"]  # steps and n_unique fix the exposure


@dataclass(frozen=True)
class AuditSetup:
    """The task, the fixed ID test and the model every run of the audit shares."""

    task: str = "twohop"
    N: int = 25
    data_seed: int = 0  # primitive tables, seen split, pool and test set
    test_size: int = 1000  # ID test items, held out of every training set
    model: str = "L4-d128"  # a covlib.training.shapes.MODEL_SHAPES name
    batch_size: int = 512
    weight_decay: float = 0.1
    evals: int = 5  # evaluations per run, evenly spaced (the last at the end of the budget)
    k: int = 3  # evidence threshold of the coverage measure

    def steps_for(self, n_unique: int, exposure: float) -> int:
        """Optimiser steps that show each of ``n_unique`` examples ``exposure`` times (rounded up)."""
        return max(1, math.ceil(n_unique * exposure / self.batch_size))


@dataclass
class Pool:
    """What every run draws from: a random order of ID-eligible inputs and the fixed ID test set."""

    setup: AuditSetup
    base: Dataset  # generated once: tables, seen split, the pool as its training inputs
    pool: np.ndarray  # (P, m) ID-eligible inputs outside the test set
    test: np.ndarray  # (T, m) the fixed ID test items (type_0 of the base dataset)

    @property
    def size(self) -> int:
        return len(self.pool)


def make_pool(setup: AuditSetup) -> Pool:
    """The pool and the fixed ID test set of ``setup`` (deterministic given its data seed)."""

    eligible = eligible_count(setup.task, setup.N, setup.data_seed)
    n_pool = eligible - int(round(1.3 * setup.test_size))  # leaves room for test_size type_0 items
    if n_pool < 2 * setup.test_size // 10 or n_pool < 20:
        raise CovlibError(f"{setup.task} at N={setup.N} has only {eligible} ID-eligible inputs: too few for a pool "
                          f"and {setup.test_size} test items; raise N or lower test_size")
    base = generate(DatasetConfig(setup.task, setup.N, n_pool, seed=setup.data_seed,
                                  test_size_per_type=setup.test_size))
    test = base.test_inputs[base.test_types == "type_0"]
    if len(test) < setup.test_size:
        raise CovlibError(f"only {len(test)} ID test items are left at N={setup.N} (asked {setup.test_size}); "
                          "lower test_size")
    return Pool(setup, base, base.train_inputs, test)


def draw_subset(pool: Pool, n_unique: int, draw: int) -> np.ndarray:
    """Indices of a uniformly random training set of ``n_unique`` pool inputs (draw = its seed)."""
    if not 1 <= n_unique <= pool.size:
        raise CovlibError(f"n_unique={n_unique} must lie in 1..{pool.size} (the pool at N={pool.setup.N})")
    rng = np.random.default_rng([pool.setup.data_seed, n_unique, draw])
    return np.sort(rng.choice(pool.size, n_unique, replace=False))


def coverage_profile(pool: Pool, train: np.ndarray, ks: Sequence[int]) -> dict[int, float]:
    """Share of the ID test items in exact k-coverage (chapter 2; the paper's section on coverage) of the training inputs ``train``, per k."""
    answers = pool.base.evaluate(train)["t"]
    cut = k_cutoffs(train, answers, pool.setup.N, queries=pool.test, max_k=max(ks))
    return {k: float((cut >= k).mean()) for k in ks}


def surface_profile(pool: Pool, train: np.ndarray, min_counts: Sequence[int]) -> dict[int, float]:
    """The surface measure, per threshold m: for every hop, the share of test items whose pair of hop
    inputs (for twohop: (x1,x2) and (b,x3)) occurs in at least m training items; averaged over hops.
    With m = 1 it is the plain pair coverage of the companion study."""
    n_tok = pool.setup.N
    tv, qv = pool.base.evaluate(train), pool.base.evaluate(pool.test)
    shares = np.zeros(len(min_counts))
    for hop in pool.base.task.hops:
        weights = n_tok ** np.arange(len(hop.inputs), dtype=np.int64)  # a pair of tokens as one code
        train_codes = np.stack([tv[a] for a in hop.inputs], axis=1).astype(np.int64) @ weights
        test_codes = np.stack([qv[a] for a in hop.inputs], axis=1).astype(np.int64) @ weights
        counts = np.bincount(train_codes, minlength=n_tok ** len(hop.inputs))[test_codes]
        shares += [(counts >= m).mean() for m in min_counts]
    return dict(zip(min_counts, (shares / len(pool.base.task.hops)).tolist()))


def entropy(values: np.ndarray) -> float:
    """Shannon entropy (nats) of the empirical distribution of ``values``."""
    p = np.bincount(values) / len(values)
    p = p[p > 0]
    return float(-(p * np.log(p)).sum())


PROFILE_KS = tuple(range(3, 13))  # evidence thresholds whose coverage every candidate set records


PROFILE_MS = tuple(range(1, 13))  # pair-count thresholds of the surface measure


def describe_subset(pool: Pool, train: np.ndarray, contrast_k: int = 3, surface_min: int = 1) -> dict:
    """What the audit records of a training set: exact 3-coverage of the ID test (``coverage``) and
    at the contrast's k (``coverage_sel``), plain pair coverage (``surface``) and at the contrast's
    count threshold (``surface_sel``), and typicality (entropy of answers and of first bridges)."""
    values = pool.base.evaluate(train)
    bridge = pool.base.task.hops[0].output
    cov = coverage_profile(pool, train, sorted({pool.setup.k, contrast_k}))
    surf = surface_profile(pool, train, sorted({1, surface_min}))
    return {"coverage": cov[pool.setup.k], "coverage_sel": cov[contrast_k], "surface": surf[1],
            "surface_sel": surf[surface_min], "entropy_t": entropy(values["t"]), "entropy_b": entropy(values[bridge])}


def score_candidates(pool: Pool, n_unique: int, count: int, progress: bool = False) -> pd.DataFrame:
    """``count`` random training sets of ``n_unique`` (draws 0..count-1), each with its coverage at every
    k of PROFILE_KS (``cov_k``), its surface measure at every m of PROFILE_MS (``surf_m``) and typicality."""
    from tqdm.auto import tqdm

    rows = []
    for draw in tqdm(range(count), desc=f"candidate sets of {n_unique}", disable=not progress):
        train = pool.pool[draw_subset(pool, n_unique, draw)]
        values = pool.base.evaluate(train)
        row = {"draw": draw, "n_unique": n_unique}
        row |= {f"cov_{k}": v for k, v in coverage_profile(pool, train, PROFILE_KS).items()}
        row |= {f"surf_{m}": v for m, v in surface_profile(pool, train, PROFILE_MS).items()}
        row |= {"entropy_t": entropy(values["t"]), "entropy_b": entropy(values[pool.base.task.hops[0].output])}
        rows.append(row)
    return pd.DataFrame(rows)


def spread_by_threshold(candidates: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard deviation across candidate sets of each measure at each threshold: a measure
    can only separate training sets of one size where it varies between them."""
    rows = []
    for prefix, measure in (("cov_", "coverage"), ("surf_", "surface")):
        for col in (c for c in candidates if c.startswith(prefix)):
            rows.append({"measure": measure, "threshold": int(col[len(prefix):]), "mean": candidates[col].mean(),
                         "sd": candidates[col].std()})
    return pd.DataFrame(rows)


def typical_mask(candidates: pd.DataFrame, band: float = 0.5) -> np.ndarray:
    """The candidates of typical make-up: both entropies (answers, bridges) within the central ``band`` of
    their distributions."""
    lo_q, hi_q = (1 - band) / 2, (1 + band) / 2
    typical = np.ones(len(candidates), dtype=bool)
    for col in ("entropy_t", "entropy_b"):
        lo, hi = candidates[col].quantile([lo_q, hi_q])
        typical &= candidates[col].between(lo, hi).to_numpy()
    return typical


FIRST_RING = 6  # the sets per arm of the audit's first design, whose runs (and seed pairing) the larger one keeps


def select_extremes(candidates: pd.DataFrame, measure: str, per_arm: int, band: float = 0.5) -> dict[str, list[int]]:
    """The draws with the lowest and highest ``measure`` (a column such as cov_8 or surf_1) among
    candidates of typical make-up: both entropies within the central ``band`` of their distributions
    (so the arms differ in the measure, not in how skewed their answers and bridges are).

    Each arm is ordered from its extreme inward, so that a larger ``per_arm`` extends a smaller one (a set's
    position is its model seed, and its run is kept): the low arm by rising measure; the high arm's
    ``FIRST_RING`` most extreme sets by rising measure (the first design's order), then the rest by falling
    measure."""
    if measure not in candidates:
        raise CovlibError(f"measure={measure!r} is not a column of the candidates; choose one of cov_k or surf_m")
    pick = candidates[typical_mask(candidates, band)].sort_values([measure, "draw"])
    if len(pick) < 2 * per_arm:
        raise CovlibError(f"only {len(pick)} typical candidates for {2 * per_arm} selections; score more candidates")
    top_first = pick["draw"].tail(per_arm).tolist()[::-1]
    return {"low": pick["draw"].head(per_arm).tolist(), "high": top_first[:FIRST_RING][::-1] + top_first[FIRST_RING:]}


def complete_per_arm(runs: pd.DataFrame, experiment: str, arms: dict[str, list[int]]) -> int:
    """How many sets per arm the contrast can use: the largest m such that the first m sets of both arms (their
    most extreme, in select_extremes' order) have their run in the table, whatever order the runs finished in."""
    done = runs[runs["experiment"] == experiment] if len(runs) else runs
    have = {(r.selection, int(r.seed), int(r.draw)) for r in done.itertuples()} if len(done) else set()
    m = 0
    while m < min(len(arms["low"]), len(arms["high"])) and all(
            (arm, m, int(arms[arm][m])) in have for arm in ("low", "high")):
        m += 1
    return m


def contrast_runs(runs: pd.DataFrame, experiment: str, arms: dict[str, list[int]], m: int) -> pd.DataFrame:
    """The rows of one contrast's first ``m`` sets per arm (complete_per_arm)."""
    wanted = {(arm, i, int(arms[arm][i])) for arm in ("low", "high") for i in range(m)}
    keys = zip(runs["selection"], runs["seed"].astype(int), runs["draw"].astype(int))
    return runs[(runs["experiment"] == experiment).to_numpy() & np.array([k in wanted for k in keys], dtype=bool)]


@dataclass(frozen=True)
class AuditRun:
    """One training run of the audit (picklable: it crosses process boundaries)."""

    setup: AuditSetup
    experiment: str  # dose, factorial, coverage, surface
    selection: str  # random, low, high
    n_unique: int
    exposure: float  # passes per distinct example
    seed: int  # model initialisation and batch order
    draw: int  # which training set of n_unique
    table: str
    work_dir: str
    steps: int = 0  # 0: from n_unique and exposure
    contrast_k: int = 3  # the evidence threshold recorded as coverage_sel
    surface_min: int = 1  # the pair-count threshold recorded as surface_sel

    @property
    def n_steps(self) -> int:
        return self.steps or self.setup.steps_for(self.n_unique, self.exposure)

    def key(self) -> dict:
        return {"experiment": self.experiment, "selection": self.selection, "n_unique": self.n_unique,
                "exposure": round(float(self.exposure), 4), "steps": self.n_steps, "seed": self.seed, "draw": self.draw}

    def name(self) -> str:
        s = self.setup
        return (f"{s.task}.{s.N}.data-{s.data_seed}.{s.model}.{self.experiment}-{self.selection}.n-{self.n_unique}"
                f".draw-{self.draw}.steps-{self.n_steps}.seed-{self.seed}")


def subset_dataset(pool: Pool, train: np.ndarray, n_inferred: int = 500) -> Dataset:
    """A dataset whose training set is ``train`` and whose test set is the fixed ID test items plus a
    sample of the training items (memorisation)."""
    rng = np.random.default_rng(len(train))
    inferred = train[np.sort(rng.choice(len(train), min(n_inferred, len(train)), replace=False))]
    base = pool.base
    config = dataclasses.replace(base.config, n_train=len(train), test_size_per_type=len(pool.test))
    return dataclasses.replace(
        base, config=config, train_inputs=train, test_inputs=np.concatenate([pool.test, inferred]),
        test_types=np.array(["type_0"] * len(pool.test) + ["train_inferred"] * len(inferred)),
        population={"type_0": len(pool.test)})


def write_subset(pool: Pool, run: AuditRun, train: np.ndarray) -> Path:
    """The dataset folder of one run (the authors' format), rewritten only when missing."""
    folder = Path(run.work_dir) / "datasets" / run.name().rsplit(".seed-", 1)[0].replace(f".steps-{run.n_steps}", "")
    if (folder / META).is_file():
        return folder
    files = dataset_files(subset_dataset(pool, train))
    meta = json.loads(files[META])
    meta["command"] = (f"covlib.chapters.ch09_diversity_exposure_coverage.audit: pool of {pool.setup.task} N={pool.setup.N} data seed {pool.setup.data_seed}, "
                       f"training set draw {run.draw} of {run.n_unique}")
    files[META] = json.dumps(meta, indent=2)
    return write_folder_atomic(folder, files)


_POOLS: dict[AuditSetup, Pool] = {}


def pool_of(setup: AuditSetup) -> Pool:
    """make_pool, memoised per process (a worker trains many runs of one setup)."""
    if setup not in _POOLS:
        _POOLS[setup] = make_pool(setup)
    return _POOLS[setup]


def run_one(run: AuditRun) -> dict:
    """Train one run (resuming its folder), append its row to the table and return it."""

    pool = pool_of(run.setup)
    subset = pool.pool[draw_subset(pool, run.n_unique, run.draw)]
    ds_dir = write_subset(pool, run, subset)
    steps = run.n_steps
    overrides = model_overrides(run.setup.model) | {
        "steps": steps, "batch_size": run.setup.batch_size, "weight_decay": run.setup.weight_decay, "seed": run.seed,
        "eval_every": max(1, math.ceil(steps / run.setup.evals)), "checkpoint_every": 500,
        "warmup_steps": min(100, max(1, steps // 10)),
    }
    t0 = time.perf_counter()
    run_dir = Path(run.work_dir) / "runs" / run.name()
    result = train(ds_dir, run_dir, preset="default", overrides=overrides, resume=True, progress=False)
    metrics = load_metrics(run_dir)
    row = run.key() | describe_subset(pool, subset, run.contrast_k, run.surface_min) | {
        "budget": steps * run.setup.batch_size,
        "final_type0": float(result.final["acc/type_0"]), "best_type0": float(metrics["acc/type_0"].max()),
        "final_train": float(result.final["acc/train_inferred"]),
        "minutes": round(float(result.final.get("elapsed", time.perf_counter() - t0)) / 60, 3),
    }
    upsert_row(run.table, row, RUN_COLUMNS, RUN_KEY)
    (run_dir / "checkpoint.pt").unlink(missing_ok=True)
    return row


@dataclass(frozen=True)
class AuditPlan:
    """The three experiments' grids (the book's sizes are BOOK_PLAN; tests use tiny ones)."""

    setup: AuditSetup = AuditSetup()
    dose_levels: tuple[int, ...] = (1000, 1600, 2500, 3500, 4500, 6000)
    dose_steps: int = 1500  # the fixed budget of the dose-response, in steps of batch_size
    dose_seeds: tuple[int, ...] = (0, 1)
    diversity: tuple[int, ...] = (2000, 3000, 4500, 6000)
    exposure: tuple[float, ...] = (40.0, 80.0, 160.0)  # passes per distinct example
    factorial_seeds: tuple[int, ...] = (0, 1, 2, 3, 4)
    contrast_n: int = 4500  # n_unique of the coverage-at-fixed-diversity contrast
    contrast_steps: int = 1200
    # the thresholds the contrasts select on: where the measures vary between candidate sets of
    # contrast_n (spread_by_threshold; at N=25 and 4,500 examples 3-coverage and plain pair
    # coverage are 100% for every set, so they cannot separate sets of that size)
    contrast_k: int = 8
    surface_min: int = 9
    candidates: int = 400
    per_arm: int = 20  # training sets per arm (each with its own model seed, paired across arms); the first
    # design had 6 (FIRST_RING), which bounded an equivalence only to about +-13 points
    measures: tuple[str, ...] = ("coverage", "surface")
    candidates_table: str = ""  # read the candidates scored beside this table (another plan's, in the same folder)
    pairs: int = 0  # train only the first this many pairs of a contrast's arms (0: all per_arm)
    extra: dict = field(default_factory=dict, compare=False)

    def runs(self, experiment: str, table: str, work_dir: str, candidates: pd.DataFrame | None = None) -> list[AuditRun]:
        """Every run of one experiment (dose, factorial, coverage, surface)."""
        s = self.setup
        th = {"contrast_k": self.contrast_k, "surface_min": self.surface_min}
        if experiment == "dose":
            return [AuditRun(s, "dose", "random", n, self.dose_steps * s.batch_size / n, seed, seed, table, work_dir,
                             steps=self.dose_steps, **th) for n in self.dose_levels for seed in self.dose_seeds]
        if experiment == "factorial":
            return [AuditRun(s, "factorial", "random", n, e, seed, seed, table, work_dir, **th)
                    for n in self.diversity for e in self.exposure for seed in self.factorial_seeds]
        if experiment in ("coverage", "surface"):
            if candidates is None:
                raise CovlibError(f"the {experiment} contrast needs the candidate sets (score_candidates)")
            arms = select_extremes(candidates, self.selection_column(experiment), self.per_arm)
            # pair by pair from the extremes inward, so that a half-trained contrast is already balanced
            return [AuditRun(s, experiment, arm, self.contrast_n, self.contrast_steps * s.batch_size / self.contrast_n,
                             i, arms[arm][i], table, work_dir, steps=self.contrast_steps, **th)
                    for i in range(self.pairs or self.per_arm) for arm in ("low", "high")]
        raise CovlibError(f"unknown experiment {experiment!r}; choose dose, factorial, coverage or surface")

    def selection_column(self, experiment: str) -> str:
        """The candidates' column a contrast selects on."""
        return f"cov_{self.contrast_k}" if experiment == "coverage" else f"surf_{self.surface_min}"


BOOK_PLAN = AuditPlan()


SMOKE_PLAN = AuditPlan(
    setup=AuditSetup(N=10, test_size=100, model="smoke", batch_size=64, evals=2),
    dose_levels=(40, 80, 150, 250), dose_steps=60, dose_seeds=(0,), diversity=(60, 200), exposure=(10.0, 20.0),
    factorial_seeds=(0, 1), contrast_n=120, contrast_steps=40, contrast_k=3, surface_min=2, candidates=24, per_arm=2)


# the contrast of exact 3-coverage itself, where selection at fixed make-up can move it most (coverage_range: N = 20,
# 1,304 examples, mean 3-coverage 64%): the extremes of 1,000 random sets, six per arm
K3_PLAN = AuditPlan(setup=AuditSetup(N=20), contrast_n=1304, contrast_steps=1200, contrast_k=3, surface_min=1,
                    candidates=1000, per_arm=6)
K3_TABLE = "data/diversity/contrast_k3.csv"
# the same contrast's first pair (its seed 0: the same two training sets and model seed) trained 6.7x longer and
# evaluated 16 times: do more steps lift a set of 1,304 examples off the accuracy floor, where a difference in
# 3-coverage could show?
K3_LONG_PLAN = dataclasses.replace(K3_PLAN, setup=dataclasses.replace(K3_PLAN.setup, evals=16), contrast_steps=8000,
                                   pairs=1, candidates_table=K3_TABLE)
K3_LONG_TABLE = "data/diversity/contrast_k3_long.csv"
# the same contrast chosen among ten times as many random sets: its six most extreme typical sets per arm differ by
# more than MIN_CONTRAST_GAP points of 3-coverage, the bar the 1,000-set contrast fell short of (13.8 points)
K3_WIDE_PLAN = dataclasses.replace(K3_PLAN, candidates=10_000)
K3_WIDE_TABLE = "data/diversity/contrast_k3_wide.csv"
# the 3-coverage contrasts by their `covlib diversity run --plan` name: (plan, table of its runs)
K3_CONTRASTS = {"k3": (K3_PLAN, K3_TABLE), "k3_long": (K3_LONG_PLAN, K3_LONG_TABLE),
                "k3_wide": (K3_WIDE_PLAN, K3_WIDE_TABLE)}


def train_command(contrast: str) -> str:
    """The command that trains a 3-coverage contrast's missing runs into its table (resumes), for a reader whose
    cache lacks them."""
    if contrast not in K3_CONTRASTS:
        raise CovlibError(f"unknown contrast {contrast!r}; choose one of: {', '.join(K3_CONTRASTS)}")
    return (f"covlib diversity run --plan {contrast} --experiments coverage --table {K3_CONTRASTS[contrast][1]} "
            "--jobs 1")


EXPERIMENTS = ("dose", "factorial", "coverage", "surface")


PRESETS = {
    # smoke: twohop N=10, a one-layer width-32 model, every run live in seconds
    "smoke": {"plan": SMOKE_PLAN, "table": "", "train": True},
    # default: the book's plan (twohop N=25); reads the shipped table and trains only when asked
    "default": {"plan": BOOK_PLAN, "table": "data/diversity/runs.csv", "train": False},
    # paper scale does not apply (the companion study's runs are T5 on COGS); the book's plan, retrained
    "paper": {"plan": BOOK_PLAN, "table": "", "train": True},
}


def candidates_path(table: str | os.PathLike) -> Path:
    """The candidate sets scored for the contrasts, kept beside the run table."""
    table = Path(table)
    return table.with_name(f"{table.stem}_candidates.csv")


def ensure_candidates(plan: AuditPlan, table: str | os.PathLike, progress: bool = False) -> pd.DataFrame:
    """The scored candidate sets of ``plan`` (read from beside the table, or computed and written)."""
    path = candidates_path(Path(table).with_name(Path(plan.candidates_table).name) if plan.candidates_table else table)
    if path.is_file():
        cands = pd.read_csv(path)
        if len(cands) == plan.candidates and (cands["n_unique"] == plan.contrast_n).all():
            return cands
    cands = score_candidates(pool_of(plan.setup), plan.contrast_n, plan.candidates, progress)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    cands.to_csv(tmp, index=False, float_format="%.6g")
    os.replace(tmp, path)
    return cands


def pending(runs: Sequence[AuditRun], table: str | os.PathLike) -> list[AuditRun]:
    """The runs whose row the table does not hold yet."""
    done = read_table(table, RUN_COLUMNS)
    if not len(done):
        return list(runs)
    have = {tuple(str(v) for v in r) for r in done[RUN_KEY].astype(str).itertuples(index=False)}
    return [r for r in runs if tuple(str(v) for v in pd.Series(r.key())[RUN_KEY].astype(str)) not in have]


def run_audit(plan: AuditPlan, experiments: Sequence[str], table: str | os.PathLike, work_dir: str | os.PathLike,
              jobs: int = 1, progress: bool = True, log: Callable[[str], None] | None = print) -> pd.DataFrame:
    """Train every pending run of ``experiments`` (one-thread workers when jobs > 1); returns the table."""

    table, work_dir = str(table), str(work_dir)
    unknown = sorted(set(experiments) - set(EXPERIMENTS))
    if unknown:
        raise CovlibError(f"unknown experiments {unknown}; choose among {', '.join(EXPERIMENTS)}")
    runs: list[AuditRun] = []
    for exp in experiments:
        cands = ensure_candidates(plan, table, progress) if exp in ("coverage", "surface") else None
        runs += plan.runs(exp, table, work_dir, cands)
    todo = pending(runs, table)
    if log:
        log(f"{len(runs) - len(todo)} of {len(runs)} runs already in {readable_path(table)}; training {len(todo)}")
    jobs_ = [Job(run_one, {"run": r}, str(Path(work_dir) / "runs" / r.name()), r.name()) for r in todo]
    outcomes = run_jobs(jobs_, "local", workers=jobs, progress=progress)
    failed = [o for o in outcomes if o.status != "done"]
    if failed and log:
        for o in failed:
            log(f"{o.name}: {o.status} ({o.error})")
    return read_table(table, RUN_COLUMNS)


def read_runs(table: str | os.PathLike) -> pd.DataFrame:
    """The audit's run table (empty with the right columns when missing)."""
    return read_table(table, RUN_COLUMNS)


def describe_setup(setup: AuditSetup, runs: pd.DataFrame, table: str | os.PathLike) -> str:
    """One line on what every run shares, and how many runs the table holds and what they cost."""
    return (f"{setup.task}, N={setup.N}, data seed {setup.data_seed}; model {setup.model}, batch {setup.batch_size}, "
            f"weight decay {setup.weight_decay}; {len(runs)} runs in {readable_path(table)} "
            f"({runs['minutes'].sum():.0f} CPU-minutes of training)")


def growth_sizes(plan: AuditPlan) -> list[int]:
    """Every number of distinct examples the plan trains on, in increasing order (the rows of coverage_growth)."""
    return sorted({*plan.dose_levels, *plan.diversity, plan.contrast_n})


def coverage_growth(pool: Pool, plan: AuditPlan) -> pd.DataFrame:
    """Exact coverage (k = 3 and the contrast's k) and the surface measure (m = 1 and the contrast's m) of the
    ID test by one random training set (draw 0) of every size the plan trains on."""
    rows = []
    for n in growth_sizes(plan):
        train_set = pool.pool[draw_subset(pool, n, 0)]
        cov = coverage_profile(pool, train_set, sorted({3, plan.contrast_k}))
        surf = surface_profile(pool, train_set, sorted({1, plan.surface_min}))
        rows.append({"n_unique": n, "coverage k=3": cov[3], f"coverage k={plan.contrast_k}": cov[plan.contrast_k],
                     "pairs m=1": surf[1], f"pairs m={plan.surface_min}": surf[plan.surface_min]})
    return pd.DataFrame(rows)


def spread_at(spread: pd.DataFrame, measure: str, threshold: int) -> pd.Series:
    """The row of ``spread_by_threshold`` for one measure at one threshold (its mean and sd)."""
    row = spread[(spread.measure == measure) & (spread.threshold == threshold)]
    if row.empty:
        raise CovlibError(f"no spread for {measure} at threshold {threshold}")
    return row.iloc[0]


def most_variable_thresholds(spread: pd.DataFrame) -> dict[str, int]:
    """Per measure, the threshold at which it varies most between candidate sets."""
    return spread.loc[spread.groupby("measure")["sd"].idxmax()].set_index("measure")["threshold"].to_dict()


def describe_spread(spread: pd.DataFrame, plan: AuditPlan, n_candidates: int) -> str:
    """How much 3-coverage and plain pair coverage vary between candidate sets, where each measure varies
    most, and the thresholds the plan selects on."""
    cov3, surf1 = spread_at(spread, "coverage", 3), spread_at(spread, "surface", 1)
    most_variable = most_variable_thresholds(spread)
    return (f"{n_candidates} candidate sets of {plan.contrast_n:,}: exact 3-coverage {cov3['mean']:.4f} +- "
            f"{cov3['sd']:.4f}, plain pair coverage {surf1['mean']:.4f} +- {surf1['sd']:.4f}; the most variable "
            f"thresholds: coverage k = {most_variable['coverage']}, surface m = {most_variable['surface']}; the plan "
            f"selects on k = {plan.contrast_k} and m = {plan.surface_min}")


def contrast_arms(candidates: pd.DataFrame, plan: AuditPlan) -> dict[str, dict[str, list[int]]]:
    """Per contrast (coverage, surface): the draws of its low and its high arm."""
    return {m: select_extremes(candidates, plan.selection_column(m), plan.per_arm) for m in ("coverage", "surface")}


def measures_correlation(candidates: pd.DataFrame, cov_col: str, surf_col: str) -> float:
    """Spearman correlation of exact coverage and the surface measure across the candidate sets."""
    return float(candidates[[cov_col, surf_col]].corr(method="spearman").iloc[0, 1])


def arm_balance(candidates: pd.DataFrame, arms: dict[str, dict[str, list[int]]], cov_col: str,
                surf_col: str) -> pd.DataFrame:
    """Per contrast and arm: how many sets, and their mean coverage, surface measure and typicality
    (so that the arms can be seen to differ in the measure and not in make-up)."""
    rows = []
    for measure, sides in arms.items():
        for side, draws in sides.items():
            chosen = candidates[candidates["draw"].isin(draws)]
            rows.append({"selected on": measure, "arm": side, "sets": len(draws), cov_col: chosen[cov_col].mean(),
                         surf_col: chosen[surf_col].mean(), "entropy_t": chosen["entropy_t"].mean(),
                         "entropy_b": chosen["entropy_b"].mean()})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- exercises


def coverage_column(pool: Pool, plan: AuditPlan, k: int) -> dict[int, float]:
    """Exercise 1: exact k-coverage of the ID test by draw 0 of every size of coverage_growth's table."""
    return {n: coverage_profile(pool, pool.pool[draw_subset(pool, n, 0)], [k])[k] for n in growth_sizes(plan)}


def check_coverage(answer, truth: dict[int, float], tolerance: float = 5e-4, name: str = "my_coverage") -> str:
    """Exercise 1: a reader's {n_unique: coverage} (or the shares in the table's order) against coverage_column. A
    wrong answer learns at which sizes its share is too high or too low, not the shares."""
    if answer is None:
        return unanswered(name, "run audit.coverage_profile at exercise_k on draw 0 (audit.draw_subset) of every "
                                "size in the 9.1 table, and write {n_unique: share, ...}")
    value = read_answer(answer)
    try:
        given = ({int(n): float(c) for n, c in value.items()} if hasattr(value, "items")
                 else dict(zip(truth, (float(c) for c in value), strict=True)))
    except (TypeError, ValueError):
        return wrong(f"{name} is {{n_unique: share}} for the {len(truth)} sizes of the 9.1 table "
                     f"({', '.join(f'{n:,}' for n in truth)}); you gave {answer!r}.")
    if given.keys() != truth.keys():
        return wrong(f"{name} needs the {len(truth)} sizes of the 9.1 table: {', '.join(f'{n:,}' for n in truth)}.")
    off = [f"at {n:,} too {'high' if given[n] > c else 'low'}" for n, c in truth.items()
           if abs(given[n] - c) > tolerance]
    if not off:
        return right("the exact coverage by size is " + ", ".join(f"{n:,}: {c:.3f}" for n, c in truth.items()) + ".")
    return wrong("your share is " + "; ".join(off) + ". Hint: the threshold is exercise_k, and each size's training "
                 "set is its draw 0 (audit.draw_subset(pool, n, 0)).")


def extreme_draws(candidates: pd.DataFrame, measure: str, band: float = 0.5) -> dict[str, list[int]]:
    """Exercise 2: among the typical candidates (typical_mask), every draw with the lowest and every draw with
    the highest value of ``measure`` (ties kept: any of them is what an arm of one set may take)."""
    if measure not in candidates:
        raise CovlibError(f"measure={measure!r} is not a column of the candidates; choose one of cov_k or surf_m")
    typical = candidates[typical_mask(candidates, band)]
    if typical.empty:
        raise CovlibError("no typical candidates; score more candidates")
    values = typical[measure]
    return {"low": sorted(typical.loc[values == values.min(), "draw"].astype(int)),
            "high": sorted(typical.loc[values == values.max(), "draw"].astype(int))}


def check_extremes(answer, truth: dict[str, list[int]], name: str = "my_extremes") -> str:
    """Exercise 2: a reader's (lowest draw, highest draw) against extreme_draws (any tied draw is right). A wrong
    answer learns which of the two is wrong, not the draws."""
    if answer is None:
        return unanswered(name, "run audit.select_extremes on exercise_column with one set per arm, and write "
                                "(lowest draw, highest draw)")
    try:
        low, high = (int(d) for d in read_answer(answer))
    except (TypeError, ValueError):
        return wrong(f"{name} is two draw numbers, (lowest draw, highest draw); you gave {answer!r}.")
    right_low, right_high = low in truth["low"], high in truth["high"]
    if right_low and right_high:
        return right(f"the lowest is draw {' or '.join(map(str, truth['low']))}, the highest draw "
                     f"{' or '.join(map(str, truth['high']))}.")
    parts = ["the lowest draw is right" if right_low else f"draw {low} is not the lowest",
             "the highest draw is right" if right_high else f"draw {high} is not the highest"]
    return wrong("; ".join(parts) + ". Hint: only the typical candidates count (audit.select_extremes keeps them), "
                 "and the column is exercise_column.")
