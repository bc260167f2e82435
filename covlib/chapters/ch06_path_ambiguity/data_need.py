"""How much data each task needs for 99% coverage: the coverage-need table (computed, or cached in
COVERAGE_NEED and resumed), its summary per N, its reading and its lines in the required-data chart."""
from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from covlib.base.files import write_text_atomic
from covlib.base.paths import repository_path
from covlib.chapters.ch06_path_ambiguity.coverage import POPULATIONS, population_coverage
from covlib.chapters.ch06_path_ambiguity.shipped import TASKS
from covlib.coverage.requirement import first_crossing
from covlib.figures.give_up_rule import READER_NAMES
from covlib.search.cells import SearchRules
from covlib.tasks.datasets import DatasetConfig, eligible_count, generate

COVERAGE_NEED = "data/ambiguity/coverage_need.csv"


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


NEED_COLUMNS = ["task", "N", "population", "k", "target", "eligible", "n_train", "max_covered", "largest_n"]


def coverage_need_table(need_N: Sequence[int] | None, k: int, test_size_per_type: int) -> pd.DataFrame:
    """``coverage_need`` rows of both tasks: computed here at ``need_N`` (smoke), else read from the cache
    (COVERAGE_NEED); an empty table with its columns when the cache does not hold it yet."""
    if need_N is not None:
        return pd.concat([coverage_need(t, need_N, ks=(k,), test_size_per_type=test_size_per_type, points=6)
                          for t in TASKS], ignore_index=True)
    path = repository_path(COVERAGE_NEED)
    return pd.read_csv(path) if path.is_file() else pd.DataFrame(columns=NEED_COLUMNS)


def need_summary(need: pd.DataFrame, k: int) -> pd.DataFrame:
    """Per N, the data that k-covers 99% of each task's type_0 items (and of non-tree's ID pool), the most of
    that pool any size covers, and the non-tree / two-hop ratio; empty when ``need`` has no such rows."""
    sel = need[(need["k"] == k) & (need["target"] == 0.99)] if len(need) else need
    if not len(sel):
        return pd.DataFrame()
    by_N = sel.pivot_table(index="N", columns=["population", "task"], values="n_train")
    table = pd.DataFrame({
        "ID pool": sel[(sel["task"] == "nontree") & (sel["population"] == "type_0")].set_index("N")["eligible"],
        "twohop: 99% of type_0": by_N.get(("type_0", "twohop")),
        "nontree: 99% of type_0": by_N.get(("type_0", "nontree")),
        "nontree: 99% of the ID pool": by_N.get(("id_pool", "nontree")),
        "nontree: most of the ID pool covered": sel[(sel["task"] == "nontree") & (sel["population"] == "id_pool")]
        .set_index("N")["max_covered"],
    })
    table["nontree / twohop (type_0)"] = table["nontree: 99% of type_0"] / table["twohop: 99% of type_0"]
    return table


def need_text(need_table: pd.DataFrame, k: int) -> str:
    """How much more data non-tree needs for 99% coverage, and how much of its pool it can cover at all."""
    ratios = need_table["nontree / twohop (type_0)"].dropna()
    pool_max = need_table["nontree: most of the ID pool covered"].dropna()
    never = need_table["nontree: 99% of the ID pool"].isna().sum()
    return (
        f"To {k}-cover 99% of the ID test items, non-tree needs {ratios.min():.1f} to {ratios.max():.1f} times "
        f"the data two-hop needs (N = {', '.join(str(int(n)) for n in ratios.index)}). Over the whole ID pool the "
        f"target is out of reach at {never} of {len(need_table)} values of N: even the largest training set the "
        f"search allows {k}-covers at most {pool_max.max():.0%} of the rest of the pool (at least "
        f"{pool_max.min():.0%}).")


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
                                       "series": f"{READER_NAMES.get(task, task)}: {target:.0%} of {population} {k}-covered"}))
    pools = sel.pivot_table(index="N", columns="task", values="eligible").dropna()
    if len(pools.columns) == 2 and np.allclose(pools.iloc[:, 0], pools.iloc[:, 1], rtol=0.02):
        lines.append(pd.DataFrame({"N": pools.index, "n": pools.iloc[:, 0].to_numpy(), "dash": "pool",
                                   "series": "ID pool (two-hop and non-tree, within 2%)"}))  # one line, not two on top
    else:
        for task, g in sel.groupby("task"):
            g = g.sort_values("N")
            lines.append(pd.DataFrame({"N": g["N"], "n": g["eligible"], "dash": "pool", "series": f"{task}: ID pool"}))
    return pd.concat(lines, ignore_index=True) if lines else pd.DataFrame(columns=["N", "n", "dash", "series"])
