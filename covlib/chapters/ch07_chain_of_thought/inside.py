"""Inside chapter 7's models: IICG over every position of the CoT sequence (prompt and bridge positions), its
chart, its peaks, and what they say about where the bridge forms."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import altair as alt
import numpy as np
import pandas as pd

from covlib.analyses.iicg import GROUP_KEYS, by_construction, fixed_positions, iicg_map, iicg_peaks, item_groups
from covlib.analyses.residuals import residual_streams, split_items
from covlib.base.errors import CovlibError
from covlib.chapters.ch07_chain_of_thought.shipped import MODEL_LABELS, model_names, target_layout
from covlib.figures.heatmaps import layer_position_heatmap
from covlib.figures.style import pending_chart


def iicg_peak_table(table: pd.DataFrame, position: str | None = None) -> pd.DataFrame:
    """Per model and grouping key of an ``iicg_sequence_table`` (with a ``model`` column): the largest IICG
    over every layer but never at a cell high by construction (covlib.analyses.iicg.iicg_peaks), over every position
    or at one ``position``. Indexed by (model, group_by); columns iicg, layer, position."""

    sel = table if position is None else table[table["position"] == position]
    if sel.empty:
        raise CovlibError(f"no IICG rows at position {position!r}; positions here: "
                          f"{', '.join(dict.fromkeys(table['position'])) if len(table) else 'none'}")
    return iicg_peaks(sel).set_index(["model", "group_by"])[["iicg", "layer", "position"]]


def sequence_positions(ds) -> list[str]:
    """Names of the positions of the teacher-forced sequence: the prompt x1..xm, then the bridge positions
    (b or b1, b2, ...; for a fake-bridge dataset they hold the placeholder </b>)."""
    return [f"x{i + 1}" for i in range(ds.n_inputs)] + target_layout(ds)[:-1]


def iicg_sequence_table(model, ds, tables, keys: Sequence[str], split: str = "type_0", max_items: int = 2000
                        ) -> pd.DataFrame:
    """IICG maps over every position of the teacher-forced sequence (prompt and bridge positions): the
    covlib.analyses grouping (one item per determining fragment) on the residuals of prompt + true target
    tokens but the last. Long table (split, group_by, layer, position, iicg, within, between, items, groups,
    by_construction)."""

    idx = split_items(ds, split)[:max_items]
    inputs = ds.test.inputs[idx]
    sequences = np.concatenate([inputs, ds.test.targets[idx][:, :-1]], axis=1)
    resid = residual_streams(model, sequences)
    positions = sequence_positions(ds)
    written = not (ds.meta or {}).get("config", {}).get("fake_bridge", False)
    rows = []
    for key in keys:
        kept, labels = item_groups(tables, inputs, key)
        res = iicg_map(resid[kept], labels)
        fixed = fixed_positions(GROUP_KEYS[tables.task.name][key][0], positions, bridges_written=written)
        for layer in range(resid.shape[1]):
            for p, pos in enumerate(positions):
                rows.append({"split": split, "group_by": key, "layer": layer, "position": pos,
                             "iicg": float(res["iicg"][layer, p]), "within": float(res["within"][layer, p]),
                             "between": float(res["between"][layer, p]), "items": res["items"],
                             "groups": res["groups"], "by_construction": by_construction(layer, p, fixed)})
    return pd.DataFrame(rows)


IICG_MODELS, IICG_KEYS = ("twohop_cot", "twohop_fakebridge", "nontree_cot"), ("b", "b,x2", "t")


def iicg_table(models: Mapping[str, tuple], max_items: int) -> tuple[pd.DataFrame, list[str]]:
    """iicg_sequence_table of each IICG model by each key (IICG_MODELS, IICG_KEYS) with a ``model`` column, and
    the selections too small to group (smoke-sized data), each as "<model>, by <key>: <why>"."""
    parts, skipped = [], []
    for name in IICG_MODELS:
        if name not in models:
            continue
        model, ds, tables, _ = models[name]
        for key in IICG_KEYS:
            try:
                parts.append(iicg_sequence_table(model, ds, tables, [key], max_items=max_items).assign(model=name))
            except CovlibError as exc:
                skipped.append(f"{name}, by {key}: {exc}")
    return (pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()), skipped


ALL_MODELS = "every model"


def iicg_chart(iicg: pd.DataFrame) -> alt.TopLevelMixin:
    """IICG by layer and position of the CoT sequence, one panel per model and key (a placeholder if empty),
    with a dropdown that keeps one model's row of panels."""
    if not len(iicg):
        return pending_chart("IICG over the CoT sequence", "covlib ship cot")
    names = list(dict.fromkeys(iicg["model"]))
    model = alt.param(name="iicg_model", value=ALL_MODELS, bind=alt.binding_select(
        options=[ALL_MODELS, *names], labels=[ALL_MODELS, *(MODEL_LABELS.get(n, n) for n in names)], name="model: "))
    heat = layer_position_heatmap(iicg.assign(panel=model_names(iicg["model"]) + ": by " + iicg["group_by"]), "iicg",
                                  "IICG over the CoT sequence (ID test items)", facet="panel", columns=len(IICG_KEYS),
                                  domain=(-0.1, max(0.5, float(iicg["iicg"].max()))),
                                  positions=list(dict.fromkeys(iicg["position"])))
    return heat.add_params(model).transform_filter(f"iicg_model == '{ALL_MODELS}' || datum.model == iicg_model")


def iicg_peaks_by(iicg: pd.DataFrame, key: str) -> pd.DataFrame:
    """iicg_peak_table of the rows grouped by ``key``, over every position (empty when there are none)."""
    has_key = len(iicg) and (iicg["group_by"] == key).any()
    return iicg_peak_table(iicg[iicg["group_by"] == key]) if has_key else pd.DataFrame()


def bridge_position_peaks(iicg: pd.DataFrame) -> pd.DataFrame:
    """iicg_peak_table at the bridge position b, for every model and key (empty without IICG rows)."""
    return iicg_peak_table(iicg, position="b") if len(iicg) else pd.DataFrame()


def peak_at_bridge(at_bridge: pd.DataFrame, name: str, key: str) -> float:
    """The largest IICG at the bridge position of model ``name`` grouped by ``key`` (NaN when absent)."""
    return float(at_bridge.loc[(name, key), "iicg"]) if (name, key) in at_bridge.index else float("nan")


def context_gaps(at_bridge: pd.DataFrame) -> dict[str, float]:
    """Per IICG model: IICG by (b, x2) minus IICG by b at the bridge position (does it carry x2 along?)."""
    return {name: peak_at_bridge(at_bridge, name, "b,x2") - peak_at_bridge(at_bridge, name, "b") for name in IICG_MODELS}


def two_decimals(x: float) -> str:
    """Two decimals without a negative zero."""
    return f"{np.round(x, 2) + 0.0:.2f}"


def formed_text(where_b: pd.DataFrame, name: str, n_inputs: int) -> str:
    """Where model ``name`` groups items by their bridge most, and what that position is."""
    r = where_b.loc[(name, "b")]
    last_input = f"x{n_inputs}"
    why = (", the position whose output is the bridge token: the first hop is computed where it is written out"
           if r["position"] == last_input and name != "twohop_fakebridge" else
           ", where chapter 5 found the bridge of the model without CoT" if r["position"] == "x2" else "")
    return f"{name} at {r['position']}, layer {int(r['layer'])} ({r['iicg']:.2f}){why}"


def inside_text(where_b: pd.DataFrame, at_bridge: pd.DataFrame, where_t: pd.DataFrame,
                n_inputs: Mapping[str, int]) -> str:
    """What the IICG peaks say: where the bridge forms, what the bridge position computes, whether non-tree's
    bridge position stays context-dependent, and what the placeholder does with its extra position."""
    def peak(name: str, key: str) -> float:
        return peak_at_bridge(at_bridge, name, key)

    gap = context_gaps(at_bridge)
    lines = []
    if len(where_b):
        lines.append("Where the bridge forms (the largest IICG by $b$ past the embeddings): "
                     + "; ".join(formed_text(where_b, name, n_inputs[name]) for name in IICG_MODELS
                                 if (name, "b") in where_b.index) + ".")
    answer_at_bridge = peak("twohop_cot", "t")
    if not np.isnan(answer_at_bridge) and not np.isnan(peak("twohop_cot", "b")):
        leader = max(IICG_KEYS, key=lambda k: -np.inf if np.isnan(peak("twohop_cot", k)) else peak("twohop_cot", k))
        lines.append(f"At the bridge position two-hop with CoT groups items by $t$ up to {answer_at_bridge:.2f} "
                     f"(by $b$: {peak('twohop_cot', 'b'):.2f} past the embeddings)"
                     + (": the position that reads the bridge computes the answer." if leader == "t" else "."))
    if not np.isnan(gap["nontree_cot"]) and not np.isnan(gap["twohop_cot"]):
        separated = gap["nontree_cot"] - gap["twohop_cot"] > 0.05
        lines.append(f"At the bridge position, grouping by $(b, x_2)$ beats grouping by $b$ by "
                     f"**{two_decimals(gap['nontree_cot'])}** for non-tree with CoT against "
                     f"{two_decimals(gap['twohop_cot'])} for two-hop with CoT"
                     + (": non-tree's bridge position carries $x_2$ along with the bridge, which its second hop needs. "
                        "Its representation stays context-dependent even with the bridge written out, as the paper "
                        "reports." if separated else ": this cache shows no context dependence peculiar to non-tree."))
    if ("twohop_fakebridge", "t") in where_t.index:
        r = where_t.loc[("twohop_fakebridge", "t")]
        bridge_at_x2 = (("twohop_fakebridge", "b") in where_b.index
                        and where_b.loc[("twohop_fakebridge", "b"), "position"] == "x2")
        lines.append(f"The placeholder model groups items by $t$ most at "
                     f"{'the placeholder' if r['position'] == 'b' else r['position']} "
                     f"position (layer {int(r['layer'])}, {r['iicg']:.2f})"
                     + ((": it computes the bridge at $x_2$ as a model without CoT does, and" if bridge_at_x2 else ": it")
                        + " uses the extra position for the second hop: the room to compute of section 7.4."
                        if r["position"] == "b" else "."))
    return " ".join(lines)
