"""`covlib scaling`: the required-data search and what coverage predicts."""
from __future__ import annotations

import argparse
import sys

from covlib.base.errors import CovlibError
from covlib.base.files import write_text_atomic
from covlib.base.paths import repository_path
from covlib.cli.task_option import task_of
from covlib.coverage.requirement import coverage_requirement, crossings
from covlib.search.cells import TIGHT_RATIO, Cell, ProbeRules, SearchRules
from covlib.search.evidence_value import candidate_table
from covlib.search.experiments import BOOK_TABLE
from covlib.search.probes import read_curves, read_probes
from covlib.search.recheck import flip_counts, floor_recheck, recheck_brackets, select_cells
from covlib.search.replicates import (
    done_mask,
    flip_shares,
    measured_pace,
    replicate_outcomes,
    replicate_plan,
    run_replicates,
)
from covlib.search.reproduction import SERIES, rule_cells
from covlib.search.required_data import search, search_states
from covlib.search.summary import summarise
from covlib.search.tighten import select_largest, tighten_brackets, tighten_plan
from covlib.tasks.graphs import TASKS, get_task
from covlib.training.pool import SlurmOptions
from covlib.training.shapes import model_overrides


def _search_rules(args: argparse.Namespace) -> SearchRules:
    return SearchRules(policy=args.policy, psi_slope=args.psi_slope)


def _rules(args: argparse.Namespace):
    if args.give_up_floor < 0:
        raise CovlibError(f"--give-up-floor {args.give_up_floor}: a step floor is 0 (the authors' rule) or more steps")
    return ProbeRules(threshold=args.threshold, give_up_epochs=args.give_up_epochs, step_cap=args.step_cap,
                      weight_decay=args.weight_decay, give_up_floor=args.give_up_floor)


def _check_fake_bridge(args: argparse.Namespace) -> None:
    """--fake-bridge probes are not marked in the probe table (it has no column for them), so they must not
    share a table with other probes: refuse the book's table, and --cot with --fake-bridge."""
    from pathlib import Path


    if not args.fake_bridge:
        return
    if args.cot:
        raise CovlibError("--cot and --fake-bridge exclude each other: the bridge is written out either true or as a "
                          "placeholder; pass one of them")
    if Path(args.table).resolve() == repository_path(BOOK_TABLE).resolve():
        raise CovlibError(f"--fake-bridge probes would be indistinguishable from plain ones in {BOOK_TABLE}; give them "
                          "a table of their own, e.g. --table data/cot/probes_fakebridge.csv")


def run(args: argparse.Namespace) -> int:
    if args.action in ("recheck", "tighten"):  # their --task is a list of tasks, not one task to search
        return _recheck(args) if args.action == "recheck" else _tighten(args)
    if args.action == "replicate":
        return _replicate(args)
    if args.action == "value":
        return _value(args)
    args.task = task_of(args)
    if args.action == "coverage":
        import time
        from pathlib import Path

        import pandas as pd

        if args.evidence != "contexts" and not args.per_seed:
            raise CovlibError(f"--evidence {args.evidence} writes per-seed crossings: add --per-seed")
        out = Path(args.out)
        table = pd.read_csv(out) if out.is_file() else pd.DataFrame()
        for N in args.N:  # one N at a time, written as it finishes: an interrupted run resumes
            if len(table) and ((table["N"] == N) & (table["task"] == get_task(args.task).name)).any():
                continue  # a file may hold several tasks: each (task, N) is computed once
            t0 = time.perf_counter()
            part = (crossings(args.task, N, args.ks, args.targets, args.seeds, rel_tol=args.rel_tol,
                              evidence=args.evidence) if args.per_seed
                    else coverage_requirement(args.task, [N], args.ks, args.targets, args.seeds, rel_tol=args.rel_tol))
            table = pd.concat([table, part], ignore_index=True).sort_values([c for c in ("N", "seed", "k", "target") if c in part])
            write_text_atomic(out, table.to_csv(index=False, float_format="%.6g"))
            print(f"{args.task} N={N}: {time.perf_counter() - t0:.0f} s", flush=True)
        print(table.to_string(index=False))
        return 0
    for model in args.model:
        model_overrides(model)  # an unknown shape fails here, before any work
    _check_fake_bridge(args)
    rules = _rules(args)
    starts = _starts_by_N(args.start, args.N)
    cells = [Cell(args.task, N, model, s, args.cot, starts[N], args.fake_bridge)
             for model in args.model for N in args.N for s in args.seeds]
    if args.action == "status":
        states = search_states(cells, read_probes(args.table), _search_rules(args), step_cap=args.step_cap,
                               give_up_floor=rules.give_up_floor)
        print(summarise(states).to_string(index=False))
        return 0

    slurm = SlurmOptions(partition=args.partition, time_min=args.time_min, cpus=args.cpus)
    result = search(cells, args.table, args.work, rules, _search_rules(args), jobs=args.jobs,
                       max_probes=args.max_probes, log=lambda line: print(line, flush=True),
                       executor=args.executor, slurm=slurm)
    print(result.summary().to_string(index=False))
    sys.stdout.flush()
    return 1 if result.crashed else 0


def _starts_by_N(starts: list[int] | None, sizes: list[int]) -> dict[int, int | None]:
    """--start: one first n_train for every cell, or one per --N in its order."""
    if starts is None or len(starts) == 1:
        return {N: starts[0] if starts else None for N in sizes}
    if len(starts) != len(sizes):
        raise CovlibError(f"--start {' '.join(map(str, starts))}: give one size for every cell, or one per --N "
                          f"({len(sizes)} here, in the order of --N {' '.join(map(str, sizes))})")
    return dict(zip(sizes, starts))


def _check_bracket_options(args: argparse.Namespace) -> None:
    """recheck and tighten: a floor of at least one step, known model shapes and tasks, before any work."""
    if args.give_up_floor < 1:
        raise CovlibError(f"--give-up-floor {args.give_up_floor}: {args.action} needs a floor of 1 step or more")
    for model in [*(args.model or []), *args.exclude_model]:
        model_overrides(model)
    # the metrics and experiments spell a task's CoT cells "twohop_cot": take that spelling too
    args.task = [task.removesuffix("_cot") + "-cot" if task.endswith("_cot") else task for task in args.task or []] or None
    for task in args.task or []:
        if task.removesuffix("-cot") not in TASKS:
            raise CovlibError(f"--task {task}: unknown task; choose from {', '.join(TASKS)} (add -cot for CoT cells)")


def _recheck(args: argparse.Namespace) -> int:
    """`covlib scaling recheck`: the floor's reruns (with --run), then where every bracket stands."""
    _check_bracket_options(args)
    if not 0 <= args.from_floor < args.give_up_floor:
        raise CovlibError(f"--from-floor {args.from_floor}: the rule a recheck starts from is the authors' (0) or a "
                          f"floor below --give-up-floor {args.give_up_floor}")
    crashed = False
    if args.run:
        results = recheck_brackets(args.table, args.work, args.give_up_floor, args.jobs, args.model,
                                   args.exclude_model, tasks=args.task, statuses=args.status,
                                   log=lambda line: print(line, flush=True), from_floor=args.from_floor)
        crashed = any(r.crashed for r in results)
    # where the cells this command was asked about stand (every cell without --task or --model)
    recheck = select_cells(floor_recheck(read_probes(args.table), args.give_up_floor, from_floor=args.from_floor), args.model,
                           args.exclude_model, args.task)
    print(recheck.to_string(index=False))
    print(flip_counts(recheck).to_string(index=False))
    return 1 if crashed else 0


def _tighten(args: argparse.Namespace) -> int:
    """`covlib scaling tighten`: the bisection probes (with --run), then the plan of what is still wide."""
    _check_bracket_options(args)
    if args.ratio <= 1:
        raise CovlibError(f"--ratio {args.ratio:g}: a bracket ratio is above 1 (the book tightens to {TIGHT_RATIO})")
    if args.largest_n is not None and args.largest_n < 1:
        raise CovlibError(f"--largest-n {args.largest_n}: give how many of each series' largest N to tighten, 1 or more")
    crashed = False
    if args.run:
        results = tighten_brackets(args.table, args.work, args.give_up_floor, args.ratio, args.max_minutes, args.jobs,
                                   args.model, args.exclude_model, args.task, args.largest_n,
                                   log=lambda line: print(line, flush=True))
        crashed = any(r.crashed for r in results)
    plan = select_cells(select_largest(tighten_plan(read_probes(args.table), args.give_up_floor, args.ratio,
                                                    args.max_minutes), args.largest_n),
                        args.model, args.exclude_model, args.task)
    print(plan.to_string(index=False, float_format=lambda x: f"{x:.2f}"))
    chosen = plan[plan["selected"]]
    print(f"{len(plan)} bracket(s) wider than {args.ratio:g}; {len(chosen)} within {args.max_minutes:g} CPU-minutes "
          f"each: {int(chosen['probes'].sum())} probe(s), about {chosen['minutes'].sum():.0f} CPU-minutes")
    return 1 if crashed else 0


def _replicate(args: argparse.Namespace) -> int:
    """`covlib scaling replicate`: the replicates of the book's chosen bracket ends (with --run), then the plan and
    how often a replicate's outcome differs from the probe it repeats."""
    if args.give_up_floor < 0:
        raise CovlibError(f"--give-up-floor {args.give_up_floor}: a step floor is 0 (the authors' rule) or more steps")
    if args.rounds is not None and args.rounds < 1:
        raise CovlibError(f"--rounds {args.rounds}: give 1 or more rounds to train (or leave it out for all)")
    plan = replicate_plan(read_probes(args.table, replicates=True), give_up_floor=args.give_up_floor)
    failed = 0
    if args.run:
        chosen = plan if args.rounds is None else plan[plan["round"] < args.rounds]
        failed = run_replicates(args.table, args.work, chosen, args.jobs, args.give_up_floor,
                                log=lambda line: print(line, flush=True))
    outcomes = replicate_outcomes(read_probes(args.table, replicates=True), plan, args.give_up_floor)
    print(f"{len(outcomes)} of {len(plan)} replicates run (plan: about {plan['minutes'].sum():.0f} CPU-minutes)")
    if len(outcomes):
        print(flip_shares(outcomes).to_string(index=False, float_format=lambda x: f"{x:.2f}"))
        pace, left = measured_pace(outcomes), plan[~done_mask(plan, read_probes(args.table, replicates=True),
                                                              args.give_up_floor)]
        print(f"the replicates so far took a median {pace:.1f}x the minutes of the probes they repeat: the "
              f"{len(left)} left need about {pace * left['minutes'].sum():.0f} CPU-minutes at that pace")
    return 1 if failed else 0


def _value(args: argparse.Namespace) -> int:
    """`covlib scaling value`: the verdicts each candidate is expected to change, and its narrowing of decisive
    intervals, per CPU-hour."""
    candidates = []
    for text in args.candidates:
        name, _, N = text.partition(":")
        if name not in SERIES or not N.isdigit():
            raise CovlibError(f"--candidates {text}: give SERIES:N with SERIES one of {', '.join(SERIES)}")
        candidates.append((name, int(N)))
    probes = read_probes(args.table, replicates=True)
    by_rule = rule_cells(probes, read_curves(args.table), args.give_up_floor)
    table = candidate_table(by_rule, read_probes(args.table), candidates, draws=args.draws, reps=500)
    print(table.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    return 0
