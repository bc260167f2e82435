"""Inside the two models: IICG by grouping key and its peaks, the logit lens, and causal tracing with three
corruptions, each with its reading in words."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from covlib.analyses.iicg import iicg_at, iicg_table
from covlib.analyses.lens import logit_lens
from covlib.analyses.residuals import residual_streams, split_items
from covlib.analyses.tracing import trace_table
from covlib.base.errors import CovlibError
from covlib.chapters.ch06_path_ambiguity.shipped import TASKS
from covlib.figures.give_up_rule import reader_name
from covlib.figures.text import rounds_to_zero, up_to

IICG_KEYS = {"twohop": ["b", "x2", "b,x2"], "nontree": ["b", "x2", "b,x2", "b,x1"]}


PEAK_COLUMNS = ["task", "split", "group_by", "layer", "position", "iicg", "within", "between", "items", "groups"]


def iicg_by_key(models: dict, max_items: int) -> tuple[pd.DataFrame, list[str]]:
    """IICG maps of each model (name -> open_shipped result) on its ID test and training items, by every key of
    IICG_KEYS, with a task column; and the selections too small to group (smoke-sized data), in words."""
    parts, problems = [], []
    for name, (model, ds, tables, _) in models.items():
        for split in ("type_0", "train_inferred"):
            for key in IICG_KEYS[name]:
                try:
                    parts.append(iicg_table(model, ds, tables, [key], [split], max_items=max_items).assign(task=name))
                except CovlibError as exc:
                    problems.append(f"{name}, {split}, by {key}: {exc}")
    return (pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()), problems


def peak_of(peaks: pd.DataFrame, task: str, key: str, split: str = "type_0") -> pd.Series | None:
    """The iicg_peaks row of one task, grouping key and split (None when there is none)."""
    sel = peaks[(peaks["task"] == task) & (peaks["group_by"] == key) & (peaks["split"] == split)]
    return sel.iloc[0] if len(sel) else None


def peak_value(peaks: pd.DataFrame, task: str, key: str, split: str = "type_0") -> float:
    """The peak IICG of one task, grouping key and split (NaN when there is none)."""
    peak = peak_of(peaks, task, key, split)
    return float(peak["iicg"]) if peak is not None else float("nan")


def iicg_maxima(peaks: pd.DataFrame) -> dict[tuple[str, str], float]:
    """(task, key) -> peak IICG of the ID test items, for both tasks and the keys b, x2, (b, x2), (b, x1)."""
    return {(t, key): peak_value(peaks, t, key) for t in TASKS for key in ("b", "x2", "b,x2", "b,x1")}


def x2_at_bridge_peak(iicg: pd.DataFrame, peaks: pd.DataFrame) -> float | None:
    """Non-tree's IICG by x2 alone at the cell where its IICG by (b, x2) peaks: the baseline that (b, x2) must
    rise above (None when there is no (b, x2) peak)."""
    bx2 = peak_of(peaks, "nontree", "b,x2")
    if bx2 is None:
        return None
    return iicg_at(iicg[(iicg["task"] == "nontree") & (iicg["split"] == "type_0")], int(bx2["layer"]),
                   bx2["position"], "x2")


def iicg_text(peaks: pd.DataFrame, iicg_max: dict[tuple[str, str], float], x2_same_cell: float) -> str:
    """What the IICG peaks say about bridge clusters in both models, in words."""
    bx2, tw = peak_of(peaks, "nontree", "b,x2"), peak_of(peaks, "twohop", "b")
    weaker = iicg_max[("nontree", "b")] < 0.5 * iicg_max[("twohop", "b")]
    return (
        f"Two-hop's ID items cluster by the bridge: IICG by $b$ peaks at **{iicg_max[('twohop', 'b')]:.2f}**"
        + (f" (layer {int(tw['layer'])}, {tw['position']})" if tw is not None else "") + ". "
        + ("Non-tree's barely do" if weaker else "Non-tree's do too") + ": "
        f"the largest IICG by $b$ anywhere is **{iicg_max[('nontree', 'b')]:.2f}**. Grouped by $(b, x_2)$ it peaks "
        f"at **{iicg_max[('nontree', 'b,x2')]:.2f}** (layer {int(bx2['layer'])}, {bx2['position']}), where grouping "
        f"by $x_2$ alone gives {x2_same_cell:.2f}: the bridge adds {iicg_max[('nontree', 'b,x2')] - x2_same_cell:+.2f} "
        f"once $x_2$ is fixed. Grouped by $(b, x_1)$: {iicg_max[('nontree', 'b,x1')]:.2f}.")


def lens_table(models: dict, max_items: int) -> pd.DataFrame:
    """Logit lens of each model on its ID test items, for the bridge b and the answer t, with a task column."""
    parts = []
    for name, (model, ds, tables, _) in models.items():
        inputs = ds.test.inputs[split_items(ds, "type_0")][:max_items]
        values = tables.values(inputs)
        parts.append(logit_lens(model, residual_streams(model, inputs),
                                {"bridge b": values["b1"], "answer t": values["t"]}).assign(task=name))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def lens_bridge_best(lens: pd.DataFrame) -> dict[str, float]:
    """Per task, the largest share of ID items whose top token is the bridge, at layers 1 and up."""
    return {t: float(lens[(lens["task"] == t) & (lens["target"] == "bridge b") & (lens["layer"] >= 1)]["top1"].max())
            for t in dict.fromkeys(lens["task"])}


def lens_text(lens_best: dict[str, float], N: int) -> str:
    """The logit lens's best reading of the bridge per task, in words."""
    return ("The bridge as the top token, best cell at layers 1 and up: "
            + ", ".join(f"{reader_name(t)} {v:.0%}" for t, v in lens_best.items()) + f" of ID items (chance {1 / N:.0%}).")


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


TRACE_VARIANTS = {"twohop": ["x1", "x2"], "nontree": ["x1", "x2_keep_b", "x2_change_b"]}


def trace_models(models: dict, max_pairs: int) -> tuple[pd.DataFrame, dict[str, str]]:
    """``trace_variants`` of each model (TRACE_VARIANTS) on its training items, with a task column; and the
    variants without pairs ("<task> <variant>" -> reason)."""
    parts, skipped = [], {}
    for name, (model, ds, tables, _) in models.items():
        train_items = ds.test.inputs[split_items(ds, "train_inferred")]
        table, skip = trace_variants(model, tables, train_items, TRACE_VARIANTS[name], max_pairs=max_pairs)
        if len(table):
            parts.append(table.assign(task=name))
        skipped |= {f"{name} {v}": why for v, why in skip.items()}
    return (pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()), skipped


def trace_cell(rank: pd.DataFrame, task: str, variant: str, position: str, layers: str = "upper") -> float:
    """The largest share of predictions flipped by patching ``position`` (rank rows of causal tracing), at the
    upper layers (from max(2, L - 1)) or, with ``layers="all"``, at layers 1 and up; NaN without rows."""
    sel = rank[(rank["task"] == task) & (rank["variant"] == variant) & (rank["position"] == position)]
    if "by_construction" in sel:
        sel = sel[~sel["by_construction"].astype(bool)]
    if not len(sel):
        return float("nan")
    top = int(sel["layer"].max())
    sel = sel[sel["layer"] >= (max(2, top - 1) if layers == "upper" else 1)]
    return float(sel["value"].max())


def tracing_text(rank: pd.DataFrame, n_layers: int) -> str:
    """What causal tracing says about the direct x2 path of non-tree, against two-hop, in words."""
    kb = rank[(rank["task"] == "nontree") & (rank["variant"] == "x2_keep_b")]
    keep_b = trace_cell(rank, "nontree", "x2_keep_b", "x2")
    others = [trace_cell(rank, "nontree", "x2_change_b", "x2"), trace_cell(rank, "nontree", "x1", "x2")]
    twohop = trace_cell(rank, "twohop", "x2", "x2")
    upper = f"in the upper layers (from layer {max(2, n_layers - 1)})"
    if all(rounds_to_zero(v) for v in (keep_b, *others)):  # nothing flips in non-tree: say so once, no list of 0%
        flips = f"patching position $x_2$ {upper} flips no prediction, nor when $b$ changes too or $x_1$ changes; "
    else:
        flips = (f"patching position $x_2$ {upper} still flips {up_to(keep_b, 'predictions')}, against "
                 f"{others[0]:.0%} when $b$ changes too and {others[1]:.0%} when $x_1$ changes; ")
    flips += ("two-hop's $x_2$ position does not matter there either. " if rounds_to_zero(twohop) else
              f"two-hop's $x_2$ position matters in the upper layers for at most {twohop:.0%} of its pairs. ")
    return (
        f"Changing $x_2$ but keeping $b$ ({int(kb['pairs'].iloc[0]) if len(kb) else 0} pairs): " + flips
        + ("The direct $x_2$ path is a route of its own to the answer, which the model keeps open into the upper layers."
           if keep_b > max(0.5, trace_cell(rank, "twohop", "x2", "x2"))
           else "Here the direct path has handed its information on to the last position by the upper layers."))
