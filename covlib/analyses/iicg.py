"""IICG, the paper's probe of what the model represents: intra- minus inter-group cosine of residual vectors, per
layer and position."""
from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from covlib.analyses.residuals import SPLIT_ALIASES, TaskTables, residual_streams, split_items
from covlib.base.errors import CovlibError
from covlib.tasks.folders import DatasetFolder


def iicg_peaks(table: pd.DataFrame) -> pd.DataFrame:
    """Per grouping key (and any selection columns), the (layer, position) of the largest IICG, over every
    layer but never at a cell that is high by construction (column ``by_construction``, see by_construction):
    such a cell says nothing about what the model learned."""
    if table.empty:
        raise CovlibError("no IICG rows to read peaks from")
    keep = table[~table["by_construction"].astype(bool)] if "by_construction" in table else table
    by = [c for c in ("task", "model", "split", "k_group", "group_by", "selection") if c in keep]
    idx = keep.groupby(by, sort=False)["iicg"].idxmax()
    return keep.loc[idx.to_numpy()].reset_index(drop=True)


def iicg_at(table: pd.DataFrame, layer: int, position: str, group_by: str) -> float:
    """The IICG of one cell (layer, position) of one grouping key."""
    cell = table[(table["layer"] == layer) & (table["position"] == position) & (table["group_by"] == group_by)]
    if cell.empty:
        raise CovlibError(f"no IICG for {group_by} at layer {layer}, {position}")
    return float(cell["iicg"].iloc[0])


# grouping key -> (nodes whose values form the key, input positions of the fragment that determines it)
GROUP_KEYS: dict[str, dict[str, tuple[tuple[str, ...], tuple[int, ...]]]] = {
    "twohop": {"b": (("b1",), (0, 1)), "t": (("t",), (0, 1, 2)), "x2": (("x2",), (0, 1)),
               "b,x2": (("b1", "x2"), (0, 1))},
    "nontree": {"b": (("b1",), (0, 1)), "t": (("t",), (0, 1, 2)), "x2": (("x2",), (0, 1)),
                "b,x2": (("b1", "x2"), (0, 1)), "b,x1": (("b1", "x1"), (0, 1))},
    "threehop": {"b1": (("b1",), (0, 1)), "b2": (("b2",), (0, 1, 2)), "t": (("t",), (0, 1, 2, 3))},
    "parallel_twohop": {"b1": (("b1",), (0, 1)), "b2": (("b2",), (2, 3)), "t": (("t",), (0, 1, 2, 3))},
}


def fixed_positions(nodes: tuple[str, ...] | list[str], positions: list[str], bridges_written: bool = True) -> set[int]:
    """Indices of the sequence positions whose token a grouping key fixes: an input the key names (x2 at
    position x2), or a bridge written out in the sequence (b at the bridge position of a chain-of-thought
    target; not when the position holds a placeholder, ``bridges_written=False``)."""
    def canonical(name: str) -> str:
        return "b1" if name == "b" else name

    names = {canonical(n) for n in nodes if bridges_written or not canonical(n).startswith("b")}
    return {i for i, position in enumerate(positions) if canonical(position) in names}


def by_construction(layer: int, position: int, fixed: set[int]) -> bool:
    """True where the IICG is high whatever the model learned. At the embeddings (layer 0) a position's
    residual is its token's vector, so a key that fixes that token makes each group identical; above,
    under the causal mask the residual depends only on the tokens at or before the position, so a key
    that fixes all of them does the same. Such cells are marked in figures and left out of peaks."""
    if layer == 0:
        return position in fixed
    return all(i in fixed for i in range(position + 1))


def item_groups(tables: TaskTables, inputs: np.ndarray, key: str) -> tuple[np.ndarray, np.ndarray]:
    """(kept item indices, group label of each kept item) for IICG grouped by ``key``.

    As the authors do, a group keeps one item per distinct fragment that determines the key (the
    first in the given order), so that repeats of one fragment do not inflate the within-group
    similarity. Grouping by x2 keeps one item per (x1, x2), like grouping by b."""
    spec = GROUP_KEYS.get(tables.task.name, {})
    if key not in spec:
        raise CovlibError(f"unknown group key {key!r} for task {tables.task.name}; choose one of: "
                          f"{', '.join(spec) or 'none (no keys defined for this task)'}")
    nodes, fragment = spec[key]
    values = tables.values(inputs)
    _, first = np.unique(inputs[:, list(fragment)], axis=0, return_index=True)
    kept = np.sort(first)
    label_cols = np.stack([values[n][kept] for n in nodes], axis=1)
    _, labels = np.unique(label_cols, axis=0, return_inverse=True)
    return kept, labels.reshape(-1)


def iicg_map(resid: np.ndarray, labels: np.ndarray) -> dict[str, np.ndarray]:
    """Within-group, between-group mean cosine and their gap (IICG), per (layer, position).

    ``resid``: (items, L+1, m, d); ``labels``: (items,) group ids. Within = mean cosine over all
    pairs of distinct items in the same group, pooled over groups; between = mean over all pairs
    from different groups. Computed from unit vectors and group sums (no items x items matrix):
    for unit vectors the sum of pairwise cosines in a set is (|sum|^2 - count) / 2."""
    labels = np.asarray(labels)
    if resid.shape[0] != len(labels):
        raise CovlibError(f"{resid.shape[0]} residual vectors but {len(labels)} labels")
    groups, labels = np.unique(labels, return_inverse=True)
    sizes = np.bincount(labels)
    within_pairs = float((sizes * (sizes - 1) / 2).sum())
    all_pairs = len(labels) * (len(labels) - 1) / 2
    if len(groups) < 2:
        raise CovlibError("IICG needs at least two groups (a between-group similarity); this selection has "
                          f"{len(groups)}: choose a larger split or another key")
    if within_pairs == 0:
        raise CovlibError("IICG needs a group with two items or more (a within-group similarity); every group here "
                          "holds one item: choose a larger split or a coarser key")
    x = torch.from_numpy(np.ascontiguousarray(resid, dtype=np.float64))
    unit = x / x.norm(dim=-1, keepdim=True).clamp_min(1e-12)
    flat = unit.reshape(len(labels), -1)
    sums = torch.zeros(len(groups), flat.shape[1], dtype=torch.float64).index_add_(0, torch.from_numpy(labels), flat)
    sums = sums.reshape(len(groups), *resid.shape[1:])
    within_sum = ((sums**2).sum(-1).sum(0) - len(labels)) / 2  # (L+1, m)
    total = unit.sum(0)
    all_sum = ((total**2).sum(-1) - len(labels)) / 2
    within = within_sum / within_pairs
    between = (all_sum - within_sum) / (all_pairs - within_pairs)
    return {"within": within.numpy(), "between": between.numpy(), "iicg": (within - between).numpy(),
            "items": len(labels), "groups": len(groups)}


def iicg_bruteforce(resid: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """IICG by listing every pair (slow; the reference the tests compare ``iicg_map`` with)."""
    n = len(labels)
    resid = np.asarray(resid, dtype=np.float64)
    unit = resid / np.maximum(np.linalg.norm(resid, axis=-1, keepdims=True), 1e-12)
    within, between = [], []
    for i in range(n):
        for j in range(i + 1, n):
            cos = (unit[i] * unit[j]).sum(-1)
            (within if labels[i] == labels[j] else between).append(cos)
    return np.mean(within, axis=0) - np.mean(between, axis=0)


def iicg_table(model, ds: DatasetFolder, tables: TaskTables, keys: list[str], splits: list[str],
               k_groups: list[str | None] = (None,), max_items: int = 2000, batch_size: int = 1024) -> pd.DataFrame:
    """IICG maps as a long table (split, k_group, group_by, layer, position, iicg, within, between,
    items, groups, by_construction) for every split x k-group x key; residuals computed once per selection."""
    rows = []
    positions = [f"x{i + 1}" for i in range(ds.n_inputs)]
    for split in splits:
        for kg in k_groups:
            idx = split_items(ds, split, kg)[:max_items]
            inputs = ds.test.inputs[idx]
            resid = residual_streams(model, inputs, batch_size)
            for key in keys:
                kept, labels = item_groups(tables, inputs, key)
                res = iicg_map(resid[kept], labels)
                fixed = fixed_positions(GROUP_KEYS[tables.task.name][key][0], positions)
                for layer in range(resid.shape[1]):
                    for p, pos in enumerate(positions):
                        rows.append({"split": SPLIT_ALIASES.get(split, split), "k_group": kg or "all", "group_by": key,
                                     "layer": layer, "position": pos, "iicg": float(res["iicg"][layer, p]),
                                     "within": float(res["within"][layer, p]),
                                     "between": float(res["between"][layer, p]),
                                     "items": res["items"], "groups": res["groups"],
                                     "by_construction": by_construction(layer, p, fixed)})
    return pd.DataFrame(rows)
