"""What a model could reach beyond coverage: every input of the task, the symmetry reach of a commutative
function and the cross-role reach of a shared operator."""
from __future__ import annotations

import numpy as np
import pandas as pd

from covlib.base.errors import CovlibError
from covlib.coverage.exact import coverage_sweep
from covlib.tasks.codes import decode, encode
from covlib.tasks.datasets import Dataset

K_DEFAULT = 3  # the paper's smallest meaningful evidence threshold


def all_inputs(num_tokens: int, n_inputs: int) -> np.ndarray:
    """Every input tuple of X^m, in code order."""
    return decode(np.arange(num_tokens**n_inputs, dtype=np.int64), num_tokens, n_inputs)


def commutative_swap(dataset: Dataset) -> tuple[int, int]:
    """Input positions whose exchange leaves the output unchanged: the arguments of the first commutative hop."""
    task = dataset.task
    for hop in task.hops:
        if hop.primitive in dataset.config.commutative and all(a in task.input_names for a in hop.inputs):
            i, j = (task.input_names.index(a) for a in hop.inputs)
            return i, j
    raise CovlibError(
        f"{dataset.config.folder_name} has no commutative primitive applied to two raw inputs; pass swap=(i, j) "
        "explicitly or generate the dataset with commutative=('f1',)"
    )


def symmetry_reach(dataset: Dataset, queries: np.ndarray, k: int = K_DEFAULT,
                   swap: tuple[int, int] | None = None) -> pd.DataFrame:
    """Per query: its k-cutoff, its mirror's (positions ``swap`` exchanged), whether outputs agree, and
    ``reachable`` = outside k-coverage, mirror inside it, same output (reachable only through the symmetry)."""
    if k < 1:
        raise CovlibError(f"k={k} must be at least 1")
    queries = np.asarray(queries)
    i, j = swap if swap is not None else commutative_swap(dataset)
    mirror = queries.copy()
    mirror[:, [i, j]] = queries[:, [j, i]]
    n_tok = dataset.config.num_tokens
    answers = dataset.evaluate(dataset.train_inputs)["t"]
    both = np.concatenate([queries, mirror])
    cut = coverage_sweep(dataset.train_inputs, answers, n_tok, both).cutoffs
    n = len(queries)
    same = dataset.evaluate(queries)["t"] == dataset.evaluate(mirror)["t"]
    frame = pd.DataFrame({"cutoff": cut[:n], "mirror_cutoff": cut[n:], "same_output": same})
    frame["mirror_covered"] = (frame.cutoff < k) & (frame.mirror_cutoff >= k)
    frame["reachable"] = frame.mirror_covered & frame.same_output
    return frame


def role_reach(dataset: Dataset, queries: np.ndarray, include_atomic: bool | None = None) -> pd.DataFrame:
    """Per query and hop: was the fact it needs used by training in that hop's own role, in any role?

    Facts are compared by flat index, so with distinct tables "another role" is a coincidence of
    indices (the control); with ``same_functions`` it is the same fact. Atomic facts (include_atomic)
    count as seen in the role ``atomic`` for the first hop's table. ``cross_role`` marks queries
    with every fact seen in some role and some fact unseen in its own role: reachable only by reuse.
    """
    task, cfg = dataset.task, dataset.config
    include_atomic = cfg.include_atomic if include_atomic is None else include_atomic
    _, train_facts = task.evaluate(dataset.train_inputs, dataset.tables, cfg.same_functions)
    _, facts = task.evaluate(np.asarray(queries), dataset.tables, cfg.same_functions)
    sizes = [dataset.tables[t].size for t in task.table_of_hop(cfg.same_functions)]
    if len(set(sizes)) != 1:
        raise CovlibError(f"task {task.name} has tables of different sizes; role reuse needs one binary table shape")
    own = [np.zeros(sizes[0], dtype=bool) for _ in facts]
    for h, flat in enumerate(train_facts):
        own[h][flat] = True
    anywhere = np.logical_or.reduce(own)
    if include_atomic:
        anywhere = np.ones_like(anywhere)  # every fact of the first table is a training item
    frame = pd.DataFrame({f"own_{h + 1}": own[h][f] for h, f in enumerate(facts)})
    for h, f in enumerate(facts):
        frame[f"any_{h + 1}"] = anywhere[f]
    own_all = frame[[f"own_{h + 1}" for h in range(len(facts))]].all(axis=1)
    any_all = frame[[f"any_{h + 1}" for h in range(len(facts))]].all(axis=1)
    frame["cross_role"] = any_all & ~own_all
    return frame


def not_training(dataset: Dataset, queries: np.ndarray) -> np.ndarray:
    """Mask of queries that are not training inputs."""
    n_tok = dataset.config.num_tokens
    return ~np.isin(encode(queries, n_tok), encode(dataset.train_inputs, n_tok))
