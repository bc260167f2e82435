"""The options of `covlib scaling` (its work: covlib.cli.scaling)."""
from __future__ import annotations

import argparse

from covlib.cli.task_option import add_task_options
from covlib.coverage.evidence import EVIDENCE_KINDS
from covlib.search.cells import FINISHED, MAX_MINUTES, PLACEHOLDER_SLOPE, POLICIES, TIGHT_RATIO, SearchRules
from covlib.training.shapes import MODEL_SHAPES


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    for name, help_text in (("search", "train probes until every cell's required data is bracketed"),
                            ("status", "print where the search of each cell stands (no training)")):
        s = sub.add_parser(name, help=help_text, description=help_text)
        add_task_options(s)
        s.add_argument("--N", type=int, nargs="+", required=True, help="token-set sizes")
        s.add_argument("--seeds", type=int, nargs="+", default=[0, 1], help="dataset and model seeds (default 0 1)")
        s.add_argument("--model", nargs="+", default=["L4-d128"],
                       help=f"model shape(s): {', '.join(MODEL_SHAPES)} (default L4-d128; mamba-* are Mamba models); "
                            "several are searched as one pool of probes, so both workers stay busy to the end")
        s.add_argument("--cot", action="store_true", help="chain of thought: the bridges are written out")
        s.add_argument("--fake-bridge", action="store_true",
                       help="placeholder bridges (</b>) where --cot writes the true ones; needs a table of its own")
        s.add_argument("--table", required=True, help="the probe table (CSV) to read and append to")
        s.add_argument("--threshold", type=float, default=0.99, help="type_0 accuracy that counts as success")
        s.add_argument("--give-up-epochs", type=float, default=100.0,
                       help="give up after the training set has been fitted this many epochs (default 100)")
        s.add_argument("--give-up-floor", type=int, default=0, metavar="STEPS",
                       help="give up only after max(--give-up-epochs epochs, STEPS steps) past the fit; probes of "
                            "each floor form their own brackets (default 0: the authors' rule alone)")
        s.add_argument("--step-cap", type=int, default=6000, help="most optimiser steps per probe (default 6000)")
        s.add_argument("--weight-decay", type=float, default=0.1)
        s.add_argument("--start", type=int, nargs="+", default=None,
                       help="first n_train of every cell, or one per --N in its order (default: from coverage); one "
                            "search over several N keeps both workers busy where one seed's cell ends first")
        s.add_argument("--policy", choices=POLICIES, default=SearchRules().policy,
                       help="how the next n_train is chosen: bisect (step by 1.6, then bisect; the default), guided "
                            "(also reads how close a failure came) or psi (each probe where it teaches most about "
                            "n_req per expected CPU-minute, until the logistic estimate's 90%% interval is at most "
                            "1.3x wide; pairs of probes for two workers); recorded in every probe row")
        s.add_argument("--psi-slope", type=float, default=PLACEHOLDER_SLOPE, metavar="S",
                       help="psi: the slope of success against log n_train it assumes (default %(default).1f, a "
                            "placeholder until replicates measure it)")
        if name == "search":
            s.add_argument("--work", default="build/scaling", help="datasets/ and runs/ of the probes")
            s.add_argument("--jobs", type=int, default=2, help="one-thread worker processes (default 2)")
            s.add_argument("--max-probes", type=int, default=None, help="stop after this many probes")
            s.add_argument("--executor", choices=["local", "slurm"], default="local",
                           help="local: --jobs one-thread processes; slurm: each round as a submitit job array")
            s.add_argument("--partition", default=None, help="SLURM partition")
            s.add_argument("--time-min", type=int, default=120, help="SLURM time limit per probe, minutes")
            s.add_argument("--cpus", type=int, default=1, help="SLURM cpus per probe")
    r = sub.add_parser("recheck", help="rerun, under a step floor, the lower end of every finished bracket it reopens",
                       description="Rerun, under --give-up-floor, the failing lower end of every bracket the authors' "
                                   "rule finished, fewest steps past the fit first; a lower end that flips to success "
                                   "is searched downward again under the floor. Resumable. Without --run, print the "
                                   "brackets, what the floor reopens and the flips so far.")
    _add_bracket_options(r)
    r.add_argument("--status", nargs="+", choices=FINISHED, default=list(FINISHED),
                   help="only cells the authors' rule left with these statuses (default both: bracketed, and "
                        "unreachable, where even the largest training set the pool allows failed)")
    r.add_argument("--from-floor", type=int, default=0, metavar="STEPS",
                   help="recheck the brackets finished under this lower floor instead of the authors' rule (0): a "
                        "longer floor's control, e.g. --from-floor 2000 --give-up-floor 4000")
    t = sub.add_parser("tighten", help="bisect finished brackets wider than --ratio where that is cheap enough",
                       description="Bisect, under --give-up-floor, every finished bracket wider than --ratio whose "
                                   "extra probes are estimated (from the minutes of its two end probes) at most "
                                   "--max-minutes one-thread CPU-minutes. Resumable. Without --run, print the plan.")
    _add_bracket_options(t)
    t.add_argument("--ratio", type=float, default=TIGHT_RATIO,
                   help=f"target smallest success / largest failure (default {TIGHT_RATIO})")
    t.add_argument("--max-minutes", type=float, default=MAX_MINUTES,
                   help=f"tighten a cell only where that costs at most this many CPU-minutes (default {MAX_MINUTES:g})")
    t.add_argument("--largest-n", type=int, default=None, metavar="K",
                   help="only cells at the K largest N each task and model has bracketed (a verdict reads the local "
                        "slope between the two largest: --largest-n 2 tightens those first)")
    rep = sub.add_parser("replicate", help="rerun chosen bracket ends with other seeds: how noisy a probe's outcome is",
                         description="Rerun both ends of the book's replicate cells (covlib.search.replicates) under "
                                     "--give-up-floor, twice with another initialisation and twice on another draw "
                                     "of the training set; the rows go to --table, marked as replicates, which no "
                                     "search reads. Resumable. Without --run, print the plan and the flips so far.")
    rep.add_argument("--give-up-floor", type=int, default=2000, metavar="STEPS", help="the rule (default 2000)")
    rep.add_argument("--table", required=True, help="the probe table (CSV) to read and append to")
    rep.add_argument("--work", default="build/scaling", help="datasets/ and runs/ of the probes")
    rep.add_argument("--jobs", type=int, default=2, help="one-thread worker processes (default 2)")
    rep.add_argument("--run", action="store_true", help="train the replicates (default: only report)")
    rep.add_argument("--rounds", type=int, default=None, metavar="K",
                     help="train only the first K rounds (round 1: every end once with another initialisation and "
                          "once on another draw; default: both rounds)")
    v = sub.add_parser("value", help="what a new N would decide, and how much it would narrow each decisive interval, "
                                     "per CPU-hour (no training)",
                       description="For each candidate SERIES:N (a series of covlib.search.reproduction.SERIES, e.g. "
                                   "twohop_cot:70), simulate its two seeds' cells from the series' own fit, refit, and "
                                   "print the share of draws in which the exponent's and its claims' verdicts change, "
                                   "the verdicts changed per CPU-hour, and the expected narrowing of their 90% "
                                   "intervals per CPU-hour; the most verdicts changed per CPU-hour first, then the "
                                   "most narrowing.")
    v.add_argument("--candidates", nargs="+", required=True, metavar="SERIES:N")
    v.add_argument("--table", required=True, help="the probe table (CSV)")
    v.add_argument("--give-up-floor", type=int, default=2000, metavar="STEPS")
    v.add_argument("--draws", type=int, default=10,
                   help="simulated outcomes per candidate (default 10; 40 to rank by verdicts changed)")
    c = sub.add_parser("coverage", help="the coverage-predicted requirement per k (no training)")
    add_task_options(c)
    c.add_argument("--N", type=int, nargs="+", required=True)
    c.add_argument("--ks", type=int, nargs="+", default=[1, 2, 3, 4])
    c.add_argument("--targets", type=float, nargs="+", default=[0.9, 0.99], help="shares of ID test items covered")
    c.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="dataset seeds (median and range)")
    c.add_argument("--rel-tol", type=float, default=0.03, help="bisection stops once the bracket is this tight")
    c.add_argument("--per-seed", action="store_true", help="one row per seed (its crossing) instead of the summary")
    c.add_argument("--evidence", default="contexts", choices=EVIDENCE_KINDS,
                   help="what counts as evidence (covlib.coverage.evidence): contexts, the paper's k-coverage (the "
                        "default); sound, k-coverage through true equivalences only; independent, counting independent "
                        "contexts; hop facts, every hop fact in k training examples (chain of thought); --per-seed only")
    c.add_argument("--out", required=True,
                   help="CSV to write (task, N, k, target, eligible, n_train = median crossing, its min, max, seeds)")


def _add_bracket_options(p: argparse.ArgumentParser) -> None:
    """The options of the commands that work on finished brackets (recheck, tighten)."""
    p.add_argument("--give-up-floor", type=int, required=True, metavar="STEPS")
    p.add_argument("--table", required=True, help="the probe table (CSV) to read and append to")
    p.add_argument("--work", default="build/scaling", help="datasets/ and runs/ of the probes")
    p.add_argument("--jobs", type=int, default=2, help="one-thread worker processes (default 2)")
    p.add_argument("--task", nargs="+", default=None, metavar="TASK",
                   help="only these tasks; TASK-cot (or TASK_cot) names a task's chain-of-thought cells (default: every one)")
    p.add_argument("--model", nargs="+", default=None, help="only these model shapes (default: every one)")
    p.add_argument("--exclude-model", nargs="+", default=[], help="leave these model shapes out")
    p.add_argument("--run", action="store_true", help="train the probes (default: only report)")
