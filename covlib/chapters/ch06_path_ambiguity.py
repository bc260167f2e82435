"""Chapter 6 (path ambiguity): non-tree against two-hop in coverage, learning and representations."""
from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import altair as alt
import numpy as np
import pandas as pd

from covlib.analyses.tracing import trace_table
from covlib.base.errors import CovlibError
from covlib.base.files import write_text_atomic
from covlib.coverage.exact import class_purity, coverage_sweep, fragment_classes
from covlib.coverage.requirement import first_crossing
from covlib.figures.style import TASK_COLORS
from covlib.search.cells import CellState, SearchRules
from covlib.search.probes import PROBE_COLUMNS, cell_rows
from covlib.search.required_data import search_states
from covlib.search.summary import summarise
from covlib.tasks.datasets import DatasetConfig, decode, eligible_count, encode, generate, type_ids
from covlib.training.shipped import ShippedRun

DATA_DIR = "data/ambiguity"  # relative to the repository


COVERAGE_NEED = "data/ambiguity/coverage_need.csv"


TASKS = ("twohop", "nontree")


POPULATIONS = ("type_0", "id_pool")  # the SPEC's ID test items; every ID-eligible input not in training


# the default preset's pair of models: the same N and n_train, where two-hop generalises (chapter 4: n_req at
# N = 30 is about 7,300-9,000); 5,000 steps is about four times what two-hop needs to reach 99%
_SHIPPED = {"default": {"num_tokens": 30, "n_train": 10_000, "test_size_per_type": 1000, "steps": 5000,
                        "preset": "default"},
            "smoke": {"num_tokens": 8, "n_train": 200, "test_size_per_type": 100, "steps": 300, "preset": "smoke"}}


def shipped_runs(preset: str = "default") -> dict[str, ShippedRun]:
    """The chapter's two models (twohop and nontree, data seed 0) at a preset ("paper" uses the default's)."""
    knobs = _SHIPPED["smoke" if preset == "smoke" else "default"]
    runs = {}
    for task in TASKS:
        dataset = {"task": task, "num_tokens": knobs["num_tokens"], "n_train": knobs["n_train"], "seed": 0,
                   "test_size_per_type": knobs["test_size_per_type"]}
        runs[task] = ShippedRun(task, dataset, {"steps": knobs["steps"]}, knobs["preset"],
                                command=f"covlib ship ambiguity --only {task}")
    return runs


def paired_datasets(N: int, n_train: int, seed: int = 0, test_size_per_type: int = 1000) -> dict:
    """twohop and nontree datasets (covlib.tasks.datasets.Dataset, in memory) of the same N, n_train and seed."""

    return {task: generate(DatasetConfig(task, N, n_train, seed=seed, test_size_per_type=test_size_per_type))
            for task in TASKS}


def id_pool_mask(dataset) -> np.ndarray:
    """Over all N^m inputs in code order: ID-eligible (every primitive application in the seen split) and
    not a training input. For non-tree many of these have an f2 fact no training item uses."""

    cfg = dataset.config
    n_tok, m = cfg.num_tokens, dataset.task.n_inputs
    inputs = decode(np.arange(n_tok**m, dtype=np.int64), n_tok, m)
    eligible = type_ids(dataset.task, dataset.tables, dataset.seen_split, cfg.same_functions, inputs) == 0
    eligible[encode(dataset.train_inputs, n_tok)] = False
    return eligible


def population_coverage(dataset, max_k: int = 8) -> pd.DataFrame:
    """Exact k-coverage (k = 1..max_k) of a dataset's type_0 test items and of its whole ID pool, from one
    coverage sweep over all inputs. Columns population, k, covered (share), n (items)."""

    cfg = dataset.config
    answers = dataset.evaluate(dataset.train_inputs)["t"]
    cutoffs = coverage_sweep(dataset.train_inputs, answers, cfg.num_tokens, None, max_k).cutoffs
    type0 = dataset.test_inputs[dataset.test_types == "type_0"]
    groups = {"type_0": cutoffs[encode(type0, cfg.num_tokens)], "id_pool": cutoffs[id_pool_mask(dataset)]}
    rows = []
    for population, cut in groups.items():
        for k in range(1, max_k + 1):
            rows.append({"population": population, "k": k, "covered": float((cut >= k).mean()) if len(cut) else np.nan,
                         "n": int(len(cut))})
    return pd.DataFrame(rows)


def coverage_comparison(N: int, n_train: int, seed: int = 0, max_k: int = 8, test_size_per_type: int = 1000
                        ) -> pd.DataFrame:
    """``population_coverage`` of twohop and nontree at the same N, n_train and seed, with the type_0 population
    (how many non-training inputs have every fact used in training). Columns task, population, k, covered,
    n, type0_population."""
    tables = []
    for task, ds in paired_datasets(N, n_train, seed, test_size_per_type).items():
        tables.append(population_coverage(ds, max_k).assign(task=task, type0_population=ds.population.get("type_0", 0)))
    return pd.concat(tables, ignore_index=True)[["task", "population", "k", "covered", "n", "type0_population"]]


def merged_pairs(dataset, k: int = 3) -> pd.DataFrame:
    """What the k-equivalence classes of first-hop fragments (x1, x2) group together: over every pair of
    training fragments in one class, the share that share the bridge b, the input x2, and both. Two-hop
    classes join fragments with one b across many x2; non-tree classes only join fragments that also share x2."""

    cfg = dataset.config
    n_tok = cfg.num_tokens
    answers = dataset.evaluate(dataset.train_inputs)["t"]
    labels = fragment_classes(dataset.train_inputs, answers, n_tok, k)[(0, 1)]
    frags = decode(np.arange(n_tok**2, dtype=np.int64), n_tok, 2)
    present = np.zeros(n_tok**2, dtype=bool)
    present[encode(dataset.train_inputs[:, :2], n_tok)] = True
    b = dataset.tables[dataset.task.table_of_hop(cfg.same_functions)[0]].reshape(-1)
    hidden = {"b": b, "x2": frags[:, 1], "b and x2": b.astype(np.int64) * n_tok + frags[:, 1]}
    sizes = pd.Series(labels[present]).value_counts()
    rows = []
    for name, values in hidden.items():
        pairs, share = class_purity(labels, values, present)
        rows.append({"task": dataset.task.name, "k": k, "shared": name, "merged_pairs": pairs, "share": share,
                     "fragments": int(present.sum()), "classes": int(len(sizes)),
                     "largest_class": int(sizes.max()) if len(sizes) else 0})
    return pd.DataFrame(rows)


def coverage_need(task: str, Ns: Sequence[int], ks: Sequence[int] = (3,), targets: Sequence[float] = (0.9, 0.99),
                  seed: int = 0, points: int = 12, test_size_per_type: int = 1000, max_k: int = 4) -> pd.DataFrame:
    """The coverage-predicted requirement of one task: the smallest n_train (interpolated on a log grid up to
    the largest size the required-data search tries: the ID pool less a test set) whose type_0 items, or whose whole ID pool, are ``target`` k-covered. Unlike
    covlib.coverage.requirement.coverage_requirement it survives sizes where non-tree has no type_0 item at all, and it
    records the largest share reached (``max_covered``) where the target is never reached (n_train NaN)."""

    rows = []
    for N in Ns:
        eligible = eligible_count(task, N, seed)
        top = SearchRules().largest_n(eligible)  # as the search: leave a test set
        grid = np.unique(np.geomspace(max(N, 16), top, points).round().astype(int))
        shares = {(p, k): [] for p in POPULATIONS for k in ks}
        for n in grid:
            table = population_coverage(generate(DatasetConfig(task, N, int(n), seed=seed,
                                                       test_size_per_type=test_size_per_type)), max(max_k, *ks))
            for (p, k), out in shares.items():
                value = table[(table["population"] == p) & (table["k"] == k)]["covered"].iloc[0]
                out.append(0.0 if np.isnan(value) else float(value))  # no type_0 item yet: nothing covered
        for (p, k), share in shares.items():
            share = np.asarray(share)
            for target in targets:
                rows.append({"task": task, "N": N, "population": p, "k": k, "target": target, "eligible": eligible,
                             "n_train": first_crossing(grid, share, target), "max_covered": float(share.max()),
                             "largest_n": int(grid[-1])})
    return pd.DataFrame(rows)


def write_coverage_need(out: str | os.PathLike, Ns: Sequence[int], tasks: Sequence[str] = TASKS, **kwargs
                        ) -> pd.DataFrame:
    """``coverage_need`` for each task and N, appended to the CSV ``out`` one (task, N) at a time (resumes)."""

    out = Path(out)
    table = pd.read_csv(out) if out.is_file() else pd.DataFrame()
    for task in tasks:
        for N in Ns:
            if len(table) and ((table["task"] == task) & (table["N"] == N)).any():
                continue
            part = coverage_need(task, [N], **kwargs)
            table = pd.concat([table, part], ignore_index=True).sort_values(["task", "N", "population", "k", "target"])
            write_text_atomic(out, table.to_csv(index=False, float_format="%.6g"))
            print(f"{task} N={N} done", flush=True)
    return table


# chapter 6's required-data searches: rows of chapter 4's probe table, in the format of
# covlib.search.experiments.BOOK_EXPERIMENTS (kept here so that chapter 4 does not list, or guess starts for, them)
EXPERIMENTS: dict[str, dict] = {
    "nontree": {"task": "nontree", "N": [25, 30, 40, 50], "seeds": [0], "model": "L4-d128"},
}


def search_summary(cells: Sequence, probes: pd.DataFrame) -> pd.DataFrame:
    """One row per cell of covlib.search searches (covlib.search.summary.summarise), read from the probe table
    alone: a cell without probes is "not started" (no starting size is computed for it), and every row
    adds the largest n_train probed and the best type_0 accuracy any probe of the cell reached there."""

    states = []
    for cell in cells:
        rows = cell_rows(probes, cell) if len(probes) else probes
        if len(rows):
            states.append(search_states([cell], probes, starts={cell.key(): 0})[0])
        else:
            states.append(CellState(cell, pd.DataFrame(columns=PROBE_COLUMNS), 0, None, "not started"))
    summary = summarise(states)
    largest, best = [], []
    for s in states:
        if len(s.probes):
            top = s.probes.loc[s.probes["n_train"].astype(int).idxmax()]
            largest.append(int(top["n_train"]))
            best.append(float(top["best_type0"]))
        else:
            largest.append(None)
            best.append(None)
    summary["eligible"] = summary["eligible"].where(summary["eligible"] > 0)
    return summary.assign(largest_n=largest, best_type0_at_largest=best)


def describe_cells(summary: pd.DataFrame, label: str) -> str:
    """One sentence per cell: the bracket and estimate, or, for a cell that fails at the largest size the
    search allows (the ID pool less a test set), that size, the pool and the best ID accuracy there."""
    parts = []
    for _, r in summary.iterrows():
        at = f"{label} N = {int(r['N'])} (seed {int(r['seed'])})"
        if r["status"] == "bracketed":
            parts.append(f"{at}: n_req ≈ {r['n_req']:,.0f} (bracket {int(r['low']):,} to {int(r['high']):,}, "
                         f"{r['n_req'] / r['eligible']:.0%} of the {int(r['eligible']):,} ID-eligible inputs)")
        elif r["status"] == "unreachable":
            parts.append(f"{at}: **no success even at {int(r['largest_n']):,} examples**, "
                         f"{r['largest_n'] / r['eligible']:.0%} of the {int(r['eligible']):,} ID-eligible inputs "
                         f"(the largest size that leaves a test set); best ID accuracy there "
                         f"{r['best_type0_at_largest']:.1%}"
                         + (" (that probe stopped at the step cap, before 100 epochs after fitting: a failure "
                            "within this budget, not by the authors' rule)" if r["low_capped"] else ""))
        elif r["status"] == "not started":
            parts.append(f"{at}: not searched yet")
        else:
            done = f"; so far {int(r['probes'])} probes" if r["probes"] else ""
            parts.append(f"{at}: search in progress (next n = {int(r['next_n']):,}{done})")
    return "; ".join(parts) + "." if parts else f"No {label} cells."


def trace_variants(model, tables, inputs: np.ndarray, variants: Sequence[str], max_pairs: int = 1000
                   ) -> tuple[pd.DataFrame, dict[str, str]]:
    """covlib.analyses.tracing.trace_table for each variant that has pairs; variants without any (for two-hop,
    changing x2 while keeping b never changes the answer) are returned with the reason instead."""

    tables_out, skipped = [], {}
    for variant in variants:
        try:
            tables_out.append(trace_table(model, tables, inputs, [variant], max_pairs=max_pairs))
        except CovlibError as exc:
            skipped[variant] = str(exc)
    return (pd.concat(tables_out, ignore_index=True) if tables_out else pd.DataFrame()), skipped


POPULATION_LABELS = {"type_0": "ID test (type_0)", "id_pool": "whole ID pool (not in training)"}


def _task_scale(tasks) -> alt.Scale:
    domain = list(dict.fromkeys(tasks))
    return alt.Scale(domain=domain, range=[TASK_COLORS.get(t, "#6a1b9a") for t in domain])


def coverage_compare_chart(table: pd.DataFrame, title: str) -> alt.Chart:
    """k-coverage (percent) against k for each task (colour) and population (dash): ambiguity.coverage_comparison."""
    data = table.assign(percent=table["covered"] * 100, population=table["population"].map(POPULATION_LABELS))
    return alt.Chart(data).mark_line(point=True, strokeWidth=2).encode(
        alt.X("k:O", title="k (shared contexts required for equivalence)", axis=alt.Axis(labelAngle=0)),
        alt.Y("percent:Q", title="covered (%)", scale=alt.Scale(domain=[0, 100])),
        alt.Color("task:N", title="task", scale=_task_scale(data["task"])),
        alt.StrokeDash("population:N", title=None, sort=list(POPULATION_LABELS.values())),
        tooltip=["task", "population", "k", alt.Tooltip("percent:Q", format=".1f"), "n"],
    ).properties(width=420, height=260, title=alt.TitleParams(title, anchor="start"))


def merged_pairs_chart(table: pd.DataFrame, title: str) -> alt.Chart:
    """Share of merged first-hop fragment pairs that share b, x2, or both, per task: ambiguity.merged_pairs."""
    return alt.Chart(table).mark_bar().encode(
        alt.X("shared:N", title="the two fragments share", sort=["b", "x2", "b and x2"], axis=alt.Axis(labelAngle=0)),
        alt.XOffset("task:N", sort=list(TASK_COLORS)),
        alt.Y("share:Q", title="share of merged pairs", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")),
        alt.Color("task:N", title="task", scale=_task_scale(table["task"])),
        tooltip=["task", "shared", alt.Tooltip("share:Q", format=".3f"), "merged_pairs", "classes", "largest_class"],
    ).properties(width=320, height=220, title=alt.TitleParams(title, anchor="start"))


def need_lines(need: pd.DataFrame, k: int = 3, target: float = 0.99, population: str = "type_0") -> pd.DataFrame:
    """Lines for scaling_figures.required_data_chart: the data that k-covers ``target`` of a population per task
    (ambiguity.coverage_need rows), and each task's ID pool (dashed)."""
    sel = need[(need["k"] == k) & (need["target"] == target) & (need["population"] == population)]
    lines = []
    for task, g in sel.groupby("task"):
        g = g.sort_values("N")
        reached = g.dropna(subset=["n_train"])
        if len(reached):
            lines.append(pd.DataFrame({"N": reached["N"], "n": reached["n_train"], "dash": "coverage",
                                       "series": f"{task}: {target:.0%} of {population} {k}-covered"}))
        lines.append(pd.DataFrame({"N": g["N"], "n": g["eligible"], "dash": "pool", "series": f"{task}: ID pool"}))
    return pd.concat(lines, ignore_index=True) if lines else pd.DataFrame(columns=["N", "n", "dash", "series"])


def iicg_keys_chart(peaks: pd.DataFrame, title: str) -> alt.Chart:
    """Peak IICG (layers >= 1) per grouping key, one bar per task and key: ambiguity.iicg_peaks rows with a
    task column."""
    data = peaks.assign(where=peaks["layer"].astype(str).radd("layer ") + ", " + peaks["position"])
    keys = list(dict.fromkeys(data["group_by"]))
    bars = alt.Chart(data).mark_bar().encode(
        alt.X("group_by:N", title="items grouped by", sort=keys, axis=alt.Axis(labelAngle=0)),
        alt.XOffset("task:N", sort=list(TASK_COLORS)),
        alt.Y("iicg:Q", title="largest IICG (layers 1..L)"),
        alt.Color("task:N", title="task", scale=_task_scale(data["task"])),
        tooltip=["task", "group_by", "where", alt.Tooltip("iicg:Q", format=".3f")])
    return bars.properties(width=360, height=240, title=alt.TitleParams(title, anchor="start"))
