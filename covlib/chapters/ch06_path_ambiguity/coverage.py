"""Coverage of non-tree against two-hop on the same data, computed exactly: the two populations, what the
equivalence classes merge, their readings in words, and the exercises' quantities and checks."""
from __future__ import annotations

import numpy as np
import pandas as pd

from covlib.chapters.ch06_path_ambiguity.shipped import TASKS
from covlib.coverage.exact import class_purity, coverage_sweep, fragment_classes
from covlib.figures.exercises import check_share
from covlib.search.cells import SearchRules
from covlib.tasks.codes import decode, encode
from covlib.tasks.datasets import DatasetConfig, generate, type_ids

POPULATIONS = ("type_0", "id_pool")  # the ID test items (type_0); every ID-eligible input not in training


POPULATION_LABELS = {"type_0": "ID test (type_0)", "id_pool": "whole ID pool (not in training)"}


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


def merged_value(merged: pd.DataFrame, task: str, shared: str, column: str = "share") -> float:
    """One number of ``merged_pairs`` rows of both tasks: ``column`` of the row of ``task`` and ``shared``."""
    return float(merged[(merged["task"] == task) & (merged["shared"] == shared)][column].iloc[0])


def classes_text(merged: pd.DataFrame, N: int) -> str:
    """What the k-equivalence classes of both tasks group, in words (``merged_pairs`` rows of both tasks)."""
    def value(task: str, shared: str, column: str = "share") -> float:
        return merged_value(merged, task, shared, column)

    return (
        f"Two-hop: {value('twohop', 'b', 'fragments'):.0f} training fragments fall into "
        f"{value('twohop', 'b', 'classes'):.0f} classes (the largest holds "
        f"{value('twohop', 'b', 'largest_class'):.0f}); {value('twohop', 'b'):.1%} of the "
        f"{value('twohop', 'b', 'merged_pairs'):,.0f} merged pairs share the bridge, and only "
        f"{value('twohop', 'x2'):.1%} share $x_2$ (chance: 1/N = {1 / N:.1%}). Non-tree: the same number of "
        f"fragments falls into {value('nontree', 'b', 'classes'):.0f} classes (the largest holds "
        f"{value('nontree', 'b', 'largest_class'):.0f}); {value('nontree', 'b', 'merged_pairs'):,.0f} "
        f"pairs merge, and {value('nontree', 'b and x2'):.1%} of them share both $b$ and $x_2$.")


def cov_at(cov: pd.DataFrame, task: str, population: str, k: int) -> float:
    """The k-covered share of one task's population in a ``coverage_comparison`` table."""
    sel = cov[(cov["task"] == task) & (cov["population"] == population) & (cov["k"] == k)]
    return float(sel["covered"].iloc[0])


def pool_count(cov: pd.DataFrame, task: str, population: str) -> int:
    """How many inputs one task's population holds in a ``coverage_comparison`` table."""
    return int(cov[(cov["task"] == task) & (cov["population"] == population)]["n"].iloc[0])


def type0_shares(cov: pd.DataFrame) -> dict[str, float]:
    """Per task, the share of the ID pool (less training) whose every fact is in training: the type_0 population."""
    return {t: float(cov[cov["task"] == t]["type0_population"].iloc[0]) / pool_count(cov, t, "id_pool") for t in TASKS}


def coverage_text(cov: pd.DataFrame, k: int) -> str:
    """Coverage of both tasks at ``k`` and the two effects behind the gap, in words (``coverage_comparison``)."""
    covered = {t: cov_at(cov, t, "type_0", k) for t in TASKS}
    type0_share = type0_shares(cov)
    return (
        f"At $k = {k}$: **{covered['twohop']:.1%}** of two-hop's ID test items are covered, against "
        f"**{covered['nontree']:.1%}** of non-tree's. Over the whole ID pool the gap is wider: "
        f"{cov_at(cov, 'twohop', 'id_pool', k):.1%} against {cov_at(cov, 'nontree', 'id_pool', k):.1%}. Two effects "
        f"add up. First, {type0_share['twohop']:.0%} of two-hop's remaining pool has every fact in training, against "
        f"{type0_share['nontree']:.0%} of non-tree's: non-tree's second function has $N^3$ facts, not $N^2$, so most "
        f"are seen by at most one training item, and an input whose $f_2$ fact no item shows cannot be answered by any "
        f"learner (those inputs are not even ID test items). Second, among the ID test items, coverage needs pairs of "
        f"training items that share $x_2$, $x_3$ and a bridge: the small $(b, x_2)$ classes above.")


# --- the exercises: the quantity each asks for, and its check ------------------------------------------------------


def merged_share(dataset, k: int, shared: str = "x2") -> float:
    """Exercise 1's quantity: the share of the merged pairs of training fragments (``merged_pairs`` at ``k``)
    whose two fragments share ``shared`` (b, x2, or "b and x2")."""
    return float(merged_pairs(dataset, k).set_index("shared").loc[shared, "share"])


def check_share_x2(answer, truth: float) -> str:
    """Exercise 1's check: the share of merged non-tree fragment pairs at k = 2 that share x2."""
    return check_share(answer, truth, "the share of merged non-tree pairs (k = 2) that share x2",
                       "call coverage.merged_pairs on the non-tree dataset of `pair` with k = 2 and read "
                       "the share of its row 'x2'", name="my_share_x2_k2",
                       hint="the row 'x2' counts the pairs that share x2 alone; check that you read k = 2, "
                            "on the non-tree dataset.")


def largest_train_size(pair: dict) -> int:
    """Exercise 2's training-set size: the largest the required-data search would try for both tasks of a
    ``paired_datasets`` pair (the smaller ID pool less a test set, covlib.search.cells.SearchRules.largest_n).
    Twice the chapter's n_train would not fit at the default preset: the non-tree pool at N = 30 holds 13,255."""
    return min(SearchRules().largest_n(ds.eligible_count) for ds in pair.values())


def pool_coverage(N: int, n_train: int, k: int, seed: int = 0, test_size_per_type: int = 1000,
                  task: str = "nontree") -> float:
    """Exercise 2's quantity: the k-covered share of one task's whole ID pool (less training) at ``n_train``,
    as ``coverage_comparison`` computes it for that task (only that task's dataset is generated)."""
    dataset = generate(DatasetConfig(task, N, n_train, seed=seed, test_size_per_type=test_size_per_type))
    table = population_coverage(dataset, max_k=k)
    return float(table[(table["population"] == "id_pool") & (table["k"] == k)]["covered"].iloc[0])


def check_pool_coverage(answer, truth: float, k: int = 3) -> str:
    """Exercise 2's check: non-tree's k-covered share of its whole ID pool at the largest training set."""
    return check_share(answer, truth, f"non-tree's {k}-covered share of its whole ID pool at that size",
                       "call coverage.coverage_comparison at N and n_big (with test_size) and read "
                       f"non-tree's 'id_pool' row at k = {k} (coverage.cov_at)", name="my_pool_coverage",
                       hint=f"read the 'id_pool' population, not the ID test (type_0), of non-tree at k = {k}.")
