"""Chapter 8's exercises: small datasets enumerated exactly, the quantities the reader computes, and the
checks of their answers."""
from __future__ import annotations

import numpy as np

from covlib.base.errors import CovlibError
from covlib.chapters.ch08_three_ways_to_generalise.model_runs import CONDITIONS
from covlib.chapters.ch08_three_ways_to_generalise.reach import all_inputs, not_training, role_reach, symmetry_reach
from covlib.figures.exercises import check_counts, check_share
from covlib.tasks.datasets import Dataset, DatasetConfig, generate

EXERCISE_N = 12  # the most tokens the exercises use: every input is enumerated and covered exactly in a second


def id_pool(num_tokens: int, seed: int) -> int:
    """The smallest ID-eligible pool among the three conditions' twohop datasets at ``num_tokens``: a training
    set of the exercises must be smaller than this."""
    return min(generate(DatasetConfig("twohop", num_tokens, 1, seed=seed, test_size_per_type=0, **options)).eligible_count
               for _, options in CONDITIONS.values())


def exercise_datasets(num_tokens: int, n_train: int, seed: int) -> dict[str, Dataset]:
    """The three conditions' datasets (CONDITIONS: commutative, distinct, shared) at a size small enough to
    enumerate every input: the exercises' material."""
    pool = id_pool(num_tokens, seed)
    if not 1 <= n_train < pool:
        raise CovlibError(f"n_train={n_train} must lie in 1..{pool - 1} (the smallest ID pool of the three conditions "
                          f"at N={num_tokens}); lower it")
    return {name: generate(DatasetConfig("twohop", num_tokens, n_train, seed=seed, test_size_per_type=10, **options))
            for name, (_, options) in CONDITIONS.items()}


def outside_training(dataset: Dataset) -> np.ndarray:
    """Every input of the dataset's task that is not a training input, in code order."""
    queries = all_inputs(dataset.config.num_tokens, dataset.task.n_inputs)
    return queries[not_training(dataset, queries)]


def reachable_counts(dataset: Dataset, ks: tuple[int, ...]) -> dict[int, int]:
    """Per evidence threshold k: how many inputs outside training are reachable only through the symmetry
    (exercise 1; ``dataset`` has a commutative f1)."""
    queries = outside_training(dataset)
    return {k: int(symmetry_reach(dataset, queries, k).reachable.sum()) for k in ks}


def mirror_agreement(dataset: Dataset) -> float:
    """Share of the inputs outside training with x1 != x2 whose mirror (x2, x1, x3) has the same answer
    (exercise 2: how often the control's mirror agrees by chance)."""
    queries = outside_training(dataset)
    queries = queries[queries[:, 0] != queries[:, 1]]
    mirror = queries[:, [1, 0, *range(2, queries.shape[1])]]
    return float((dataset.evaluate(queries)["t"] == dataset.evaluate(mirror)["t"]).mean())


def cross_role_counts(dataset: Dataset) -> tuple[int, int]:
    """Cross-role inputs outside training when atomic facts are not counted, and when they are (exercise 3)."""
    queries = outside_training(dataset)
    return tuple(int(role_reach(dataset, queries, include_atomic=atomic).cross_role.sum()) for atomic in (False, True))


def check_reachable(answer, truth: dict[int, int], name: str = "my_reachable") -> str:
    """Exercise 1: the counts of inputs reachable only through the symmetry, per k (``truth``: reachable_counts). A
    wrong answer learns which count is too high or too low, not the counts."""
    return check_counts(answer, truth, {k: f"at k = {k}" for k in truth}, name,
                        "run reach.symmetry_reach on the commutative dataset's inputs outside training at each "
                        "threshold and count its 'reachable', a pair (count at k, count at exercise_k)",
                        hint="count the commutative dataset's inputs outside training (outside['commutative']), "
                             "once per threshold.")


def check_agreement(answer, truth: float, num_tokens: int, tolerance: float = 1e-3,
                    name: str = "my_agreement") -> str:
    """Exercise 2: the share of the control's off-diagonal inputs whose mirror has the same answer."""
    scale = f"compare it with 1/N = {1 / num_tokens:.3f} and 2/N = {2 / num_tokens:.3f}"
    verdict = check_share(answer, truth, "the share of mirrors with the same answer",
                          "run reach.symmetry_reach on the distinct-table dataset's inputs outside training with "
                          "x1 != x2 (pass swap, it has no commutative primitive) and average its 'same_output'",
                          tol=tolerance, name=name, hint="keep only the inputs with x1 != x2, on the distinct-table "
                                                         "dataset.")
    return f"{verdict[:-1]} ({scale})." if verdict.startswith(("right", "wrong")) else verdict


def check_cross_role(answer, truth: tuple[int, int], name: str = "my_cross_role") -> str:
    """Exercise 3: cross-role inputs outside training without and with atomic facts (``truth``: cross_role_counts)."""
    return check_counts(answer, dict(enumerate(truth)), {0: "without atomic facts", 1: "with them"}, name,
                        "run reach.role_reach on the shared-table dataset's inputs outside training, once with each "
                        "include_atomic, and count its 'cross_role', a pair (without, with)",
                        hint="count the shared-table dataset's inputs outside training, and give the count without "
                             "atomic facts first.")
