"""Chapter 1 (tasks and data): task graphs, primitive tables, the seen split, test types."""
from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

from covlib.base.errors import CovlibError
from covlib.figures.style import TRAIN_LABEL, _type_scale
from covlib.tasks.graphs import Task

NODE_KINDS = ["input", "bridge", "output"]


NODE_COLORS = ["#dbe9f6", "#fde3c8", "#d5efd5"]


def task_graph_frames(task: Task) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Nodes and edges of a task's computation graph, laid out in layers (left to right).

    A hop output sits one layer right of its latest input; an input token sits one layer left
    of its earliest consumer, so chains read as a staircase. Returns (nodes, edges).
    """
    layer: dict[str, int] = dict.fromkeys(task.input_names, 0)
    for hop in task.hops:
        layer[hop.output] = 1 + max(layer[name] for name in hop.inputs)
    for name in task.input_names:
        layer[name] = min(layer[hop.output] for hop in task.hops if name in hop.inputs) - 1
    kinds = {name: "input" for name in task.input_names}
    kinds.update({hop.output: "output" if hop.output == "t" else "bridge" for hop in task.hops})
    by_layer: dict[int, list[str]] = {}
    for name in [hop.output for hop in task.hops] + list(task.input_names):  # computed nodes on top
        by_layer.setdefault(layer[name], []).append(name)
    rows = []
    for lay, names in by_layer.items():
        for i, name in enumerate(names):
            rows.append({"node": name, "kind": kinds[name], "layer": lay, "y": (len(names) - 1) / 2 - i})
    nodes = pd.DataFrame(rows).sort_values(["layer", "y"], ascending=[True, False], ignore_index=True)
    pos = nodes.set_index("node")[["layer", "y"]]
    # an edge that skips a layer must not run through a node there: move such input nodes down
    for hop in task.hops:
        for src in hop.inputs:
            (x0, y0), (x1, y1) = pos.loc[src].tolist(), pos.loc[hop.output].tolist()
            for lay in range(int(x0) + 1, int(x1)):
                y_at = y0 + (y1 - y0) * (lay - x0) / (x1 - x0)
                clash = (pos["layer"] == lay) & ((pos["y"] - y_at).abs() < 0.45) & pos.index.isin(task.input_names)
                pos.loc[clash, "y"] = y_at - 0.6
    nodes["y"] = nodes["node"].map(pos["y"])
    edges = pd.DataFrame(
        [
            {"source": src, "target": hop.output, "primitive": hop.primitive,
             "x": pos.at[src, "layer"], "y": pos.at[src, "y"],
             "x2": pos.at[hop.output, "layer"], "y2": pos.at[hop.output, "y"]}
            for hop in task.hops
            for src in hop.inputs
        ]
    )
    return nodes, edges


def task_graph_chart(task: Task, unit: float = 95.0) -> alt.LayerChart:
    """One task's graph: nodes x.. (inputs), b.. (bridges), t (output); edges labelled by primitive."""
    nodes, edges = task_graph_frames(task)
    n_layers = int(nodes["layer"].max()) + 1
    half = max(1.0, float(nodes["y"].abs().max())) + 0.5
    width, height = unit * n_layers, unit * 0.62 * 2 * half
    px, py = width / n_layers, height / (2 * half)
    edges = edges.copy()
    # arrow heads sit 68% along each edge; vega-lite angles turn clockwise on screen
    edges["ax"] = edges["x"] + 0.68 * (edges["x2"] - edges["x"])
    edges["ay"] = edges["y"] + 0.68 * (edges["y2"] - edges["y"])
    edges["angle"] = -np.degrees(np.arctan2((edges["y2"] - edges["y"]) * py, (edges["x2"] - edges["x"]) * px))
    edges["mx"] = (edges["x"] + edges["x2"]) / 2
    edges["my"] = (edges["y"] + edges["y2"]) / 2
    x_scale = alt.Scale(domain=[-0.5, n_layers - 0.5])
    y_scale = alt.Scale(domain=[-half, half])
    x_enc = alt.X("x:Q", scale=x_scale, axis=None)
    y_enc = alt.Y("y:Q", scale=y_scale, axis=None)
    prim_color = alt.Color("primitive:N", title="primitive", scale=alt.Scale(scheme="dark2"))
    base_e = alt.Chart(edges)
    rules = base_e.mark_rule(strokeWidth=2).encode(x_enc, y_enc, x2="x2:Q", y2="y2:Q", color=prim_color)
    heads = base_e.mark_point(shape="triangle-right", filled=True, size=90, opacity=1).encode(
        alt.X("ax:Q", scale=x_scale, axis=None), alt.Y("ay:Q", scale=y_scale, axis=None),
        angle=alt.Angle("angle:Q", scale=None), color=prim_color,
    )
    labels = base_e.mark_text(fontSize=12, fontWeight="bold", dy=-9).encode(
        alt.X("mx:Q", scale=x_scale, axis=None), alt.Y("my:Q", scale=y_scale, axis=None),
        text="primitive:N", color=prim_color,
    )
    base_n = alt.Chart(nodes)
    node_enc = {"x": alt.X("layer:Q", scale=x_scale, axis=None), "y": alt.Y("y:Q", scale=y_scale, axis=None)}
    circles = base_n.mark_circle(size=900, opacity=1, stroke="#333", strokeWidth=1.2).encode(
        **node_enc,
        fill=alt.Fill("kind:N", title="node", scale=alt.Scale(domain=NODE_KINDS, range=NODE_COLORS), sort=NODE_KINDS),
    )
    texts = base_n.mark_text(fontSize=14).encode(**node_enc, text="node:N")
    return alt.layer(rules, heads, labels, circles, texts).properties(
        width=width, height=height, title=alt.TitleParams(task.name, subtitle=task.graph, anchor="start")
    )


def task_graphs_chart(tasks: Sequence[Task], per_row: int = 3) -> alt.VConcatChart:
    """Every task's computation graph, a few per row."""
    charts = [task_graph_chart(task) for task in tasks]
    rows = [alt.hconcat(*charts[i : i + per_row], spacing=30) for i in range(0, len(charts), per_row)]
    return alt.vconcat(*rows, spacing=25).configure_view(stroke=None).resolve_scale(color="shared", fill="shared")


def preimage_frame(table: np.ndarray) -> pd.DataFrame:
    """Pre-image size of every output value of a random table X^a -> X, largest first.

    Columns: value, preimage_size (inputs mapping to it), rank (0 = largest), and balanced,
    the size N^(a-1) every value would have if the table were a balanced (permutation-like) map.
    """
    table = np.asarray(table)
    n_tok = table.shape[0]
    sizes = np.bincount(table.reshape(-1), minlength=n_tok)
    order = np.argsort(-sizes, kind="stable")
    return pd.DataFrame({"value": order, "preimage_size": sizes[order], "rank": np.arange(n_tok),
                         "balanced": n_tok ** (table.ndim - 1)})


def preimage_chart(frame: pd.DataFrame, primitive: str = "f1") -> alt.LayerChart:
    """One bar per output value of a primitive (sorted), its height the pre-image size; the dashed
    rule is the size a balanced table would give every value."""
    balanced = int(frame["balanced"].iloc[0])
    n_tok = len(frame)
    bars = alt.Chart(frame).mark_bar(color="#4c78a8").encode(
        alt.X("rank:O", title=f"{primitive} output values, sorted by pre-image size",
              axis=alt.Axis(labels=False, ticks=False)),
        alt.Y("preimage_size:Q", title="pre-image size"),
        tooltip=["value", "preimage_size"],
    )
    rule = alt.Chart(pd.DataFrame({"balanced": [balanced]})).mark_rule(strokeDash=[6, 4], color="#c62828",
                                                                      strokeWidth=2).encode(y="balanced:Q")
    lo, hi = int(frame["preimage_size"].min()), int(frame["preimage_size"].max())
    return alt.layer(bars, rule).properties(
        width=min(560, 6 * n_tok + 60), height=230,
        title=alt.TitleParams(
            f"{primitive} is a random function, not a permutation",
            subtitle=[f"its {n_tok} values have between {lo} and {hi} pre-images;",
                      f"dashed: {balanced} each, as a balanced table would give"],
            anchor="start"),
    )


FACT_STATUS = ["held out (unseen split)", "seen split, used by training", "seen split, never used"]


FACT_COLORS = ["#d9d9d9", "#2e7d32", "#f4a259"]


def fact_status_frame(seen_split: np.ndarray, seen_used: np.ndarray, limit: int = 30) -> pd.DataFrame:
    """Status of every fact (a1, a2) of a 2-argument primitive: held out, seen and used, seen but unused.

    Only the first ``limit`` values of each argument are kept (a readable block of the table).
    """
    seen_split, seen_used = np.asarray(seen_split), np.asarray(seen_used)
    if seen_split.ndim != 2:
        raise CovlibError(f"fact_status_frame draws 2-argument primitives; this one has {seen_split.ndim} arguments")
    n = min(limit, seen_split.shape[0])
    a1, a2 = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    split, used = seen_split[:n, :n].reshape(-1), seen_used[:n, :n].reshape(-1)
    status = np.where(~split, FACT_STATUS[0], np.where(used, FACT_STATUS[1], FACT_STATUS[2]))
    return pd.DataFrame({"a1": a1.reshape(-1), "a2": a2.reshape(-1), "status": status})


def fact_status_chart(frame: pd.DataFrame, primitive: str = "f1", n_tokens: int | None = None) -> alt.Chart:
    """Heatmap of a primitive's facts coloured by split status (see ``fact_status_frame``)."""
    n = int(frame["a1"].max()) + 1
    shown = "" if n_tokens is None or n_tokens == n else f" (first {n} of {n_tokens} values per argument)"
    return alt.Chart(frame).mark_rect(stroke="white", strokeWidth=0.3).encode(
        alt.X("a2:O", title=f"second argument{shown}", axis=alt.Axis(labelAngle=0, values=list(range(0, n, 5)))),
        alt.Y("a1:O", title="first argument", axis=alt.Axis(values=list(range(0, n, 5)))),
        alt.Color("status:N", title="fact", scale=alt.Scale(domain=FACT_STATUS, range=FACT_COLORS), sort=FACT_STATUS),
        tooltip=["a1", "a2", "status"],
    ).properties(width=min(420, 14 * n), height=min(420, 14 * n),
                 title=alt.TitleParams(f"facts of {primitive}: which may, and which do, appear in training", anchor="start"))


def type_share_frame(population: dict[str, int], n_train: int, test_types: Sequence[str]) -> pd.DataFrame:
    """Share of each type among all inputs (training set + population per type) and in the test set.

    ``population`` maps type -> number of non-training inputs of that type (Dataset.population);
    test items of type train_inferred are counted under the training-set category.
    """
    order = [TRAIN_LABEL] + sorted(population, key=lambda t: int(t.split("_")[1]))
    all_counts = {TRAIN_LABEL: n_train, **population}
    test_counts = pd.Series(list(test_types)).replace("train_inferred", TRAIN_LABEL).value_counts().to_dict()
    rows = []
    for group, counts in (("all inputs", all_counts), ("test set", test_counts)):
        total = sum(counts.values())
        for rank, cat in enumerate(order):
            c = int(counts.get(cat, 0))
            rows.append({"group": group, "category": cat, "order": rank, "count": c, "share": c / total if total else 0.0})
    return pd.DataFrame(rows)


def type_share_chart(frame: pd.DataFrame) -> alt.LayerChart:
    """Two stacked bars: how all N^m inputs split into types, and what the test set is made of."""
    order = frame.sort_values("order")["category"].drop_duplicates().tolist()
    base = alt.Chart(frame).encode(
        alt.Y("group:N", title=None, sort=["all inputs", "test set"], axis=alt.Axis(labelFontSize=13)),
        alt.X("share:Q", stack="zero", title="share", axis=alt.Axis(format="%")),
        alt.Order("order:Q"),
    )
    bars = base.mark_bar(height=38).encode(
        alt.Color("category:N", title="type", sort=order, scale=_type_scale(order)),
        tooltip=["group", "category", "count", alt.Tooltip("share:Q", format=".1%")],
    )
    text = (
        base.transform_window(cum="sum(share)", groupby=["group"], sort=[alt.SortField("order")])
        .transform_calculate(mid="datum.cum - datum.share / 2")
        .transform_filter("datum.share >= 0.04")
        .mark_text(color="white", fontWeight="bold", fontSize=12)
        .encode(alt.X("mid:Q"), text=alt.Text("share:Q", format=".0%"))
    )
    return alt.layer(bars, text).properties(
        width=560, height=130,
        title=alt.TitleParams("Test types: their share of all inputs, and of the test set", anchor="start"),
    )
