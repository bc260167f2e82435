"""Chapter 1 (tasks and data): task graphs, primitive tables, the seen split, test types."""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from covlib.base.errors import CovlibError
from covlib.base.paths import default_root, readable_path
from covlib.figures.exercises import check_share
from covlib.figures.style import MAX_CHART_WIDTH, TRAIN_LABEL, _type_scale, legend_highlight
from covlib.figures.tables import ReaderTable, readable, reader_table
from covlib.tasks.datasets import Dataset, DatasetConfig, ensure_dataset, generate
from covlib.tasks.folders import DatasetFolder, load_dataset
from covlib.tasks.graphs import TASKS, Task

# the functions of covlib's layers the chapter's notebook calls through this module (`import covlib.chapters.ch01_tasks_and_data
# as ch01`, then `ch01.generate(...)`), one import away from where each is defined
__all__ = [
    "DatasetConfig",
    "TASKS",
    "default_root",
    "ensure_dataset",
    "generate",
    "load_dataset",
    "readable_path",
]


PRESETS = {
    # N and n_train of the main example, and the token counts of the eligible-input survey
    "smoke": {"N": 10, "n_train": 200, "test_size_per_type": 50, "survey_N": [6, 10], "survey_cap": 10**5},
    "default": {"N": 30, "n_train": 4000, "test_size_per_type": 2000, "survey_N": [10, 20, 30, 50],
                "survey_cap": 2 * 10**6},
    "paper": {"N": 200, "n_train": 500_000, "test_size_per_type": 2000, "survey_N": [10, 30, 50, 100, 200],
              "survey_cap": 3 * 10**7},
}

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


def task_graph_chart(task: Task, unit: float = 85.0) -> alt.LayerChart:
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
        tooltip=[alt.Tooltip("primitive:N", title="primitive"), alt.Tooltip("source:N", title="argument"),
                 alt.Tooltip("target:N", title="result")],
    )
    labels = base_e.mark_text(fontSize=12, fontWeight="bold", dy=-9).encode(
        alt.X("mx:Q", scale=x_scale, axis=None), alt.Y("my:Q", scale=y_scale, axis=None),
        text="primitive:N", color=prim_color,
    )
    made_by = {hop.output: f"{hop.primitive}({', '.join(hop.inputs)})" for hop in task.hops}
    node_tooltip = [alt.Tooltip("node:N", title="token"), alt.Tooltip("kind:N", title="kind"),
                    alt.Tooltip("computed_by:N", title="computed by")]
    base_n = alt.Chart(nodes.assign(computed_by=nodes["node"].map(made_by).fillna("given (an input)")))
    node_enc = {"x": alt.X("layer:Q", scale=x_scale, axis=None), "y": alt.Y("y:Q", scale=y_scale, axis=None)}
    circles = base_n.mark_circle(size=900, opacity=1, stroke="#333", strokeWidth=1.2).encode(
        **node_enc,
        fill=alt.Fill("kind:N", title="node", scale=alt.Scale(domain=NODE_KINDS, range=NODE_COLORS), sort=NODE_KINDS),
        tooltip=node_tooltip,
    )
    texts = base_n.mark_text(fontSize=14).encode(**node_enc, text="node:N", tooltip=node_tooltip)  # covers the circle
    return alt.layer(rules, heads, labels, circles, texts).properties(
        width=width, height=height, title=alt.TitleParams(task.name, subtitle=task.graph, anchor="start")
    )


def task_graphs_chart(tasks: Sequence[Task], width: float = MAX_CHART_WIDTH - 90) -> alt.VConcatChart:
    """Every task's computation graph, in order, as many per row as fit in ``width`` px (the legends beside them
    take the rest of the page)."""
    charts = [task_graph_chart(task) for task in tasks]
    spacing = 30
    rows: list[list[alt.LayerChart]] = []
    used = 0.0
    for chart in charts:
        if rows and used + spacing + chart.width <= width:
            rows[-1].append(chart)
            used += spacing + chart.width
        else:
            rows.append([chart])
            used = chart.width
    return alt.vconcat(*[alt.hconcat(*row, spacing=spacing) for row in rows], spacing=25).configure_view(
        stroke=None).resolve_scale(color="shared", fill="shared")


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
        tooltip=[alt.Tooltip("value:O", title=f"{primitive} output value"),
                 alt.Tooltip("preimage_size:Q", title="pre-image size (argument pairs)"),
                 alt.Tooltip("rank:O", title="rank (0 = largest)")],
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
    chosen, opacity = legend_highlight("status")  # click a status in the legend to see where its facts lie
    return alt.Chart(frame).mark_rect(stroke="white", strokeWidth=0.3).encode(
        alt.X("a2:O", title=f"second argument{shown}", axis=alt.Axis(labelAngle=0, values=list(range(0, n, 5)))),
        alt.Y("a1:O", title="first argument", axis=alt.Axis(values=list(range(0, n, 5)))),
        alt.Color("status:N", title="fact (click to highlight)", scale=alt.Scale(domain=FACT_STATUS, range=FACT_COLORS),
                  sort=FACT_STATUS),
        opacity=opacity,
        tooltip=[alt.Tooltip("a1:O", title="first argument"), alt.Tooltip("a2:O", title="second argument"),
                 alt.Tooltip("status:N", title="fact")],
    ).add_params(chosen).properties(width=min(420, 14 * n), height=min(420, 14 * n),
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
    chosen, opacity = legend_highlight("category")  # click a type in the legend to find it in both bars
    tooltip = [alt.Tooltip("group:N", title="bar"), alt.Tooltip("category:N", title="type"),
               alt.Tooltip("count:Q", title="inputs", format=","), alt.Tooltip("share:Q", title="share", format=".1%")]
    bars = base.mark_bar(height=38).encode(
        alt.Color("category:N", title="type (click to highlight)", sort=order, scale=_type_scale(order)),
        opacity=opacity, tooltip=tooltip,
    ).add_params(chosen)
    text = (
        base.transform_window(cum="sum(share)", groupby=["group"], sort=[alt.SortField("order")])
        .transform_calculate(mid="datum.cum - datum.share / 2")
        .transform_filter("datum.share >= 0.04")
        .mark_text(color="white", fontWeight="bold", fontSize=12)
        .encode(alt.X("mid:Q"), text=alt.Text("share:Q", format=".0%"), tooltip=tooltip)  # covers the bar's middle
    )
    return alt.layer(bars, text).properties(
        width=480, height=130,
        title=alt.TitleParams("Test types: their share of all inputs, and of the test set", anchor="start"),
    )


def task_table(tasks: Iterable[Task]) -> pd.DataFrame:
    """One row per task family: its inputs, primitives with their arities, bridges and graph, to compare them."""
    return pd.DataFrame(
        [
            {"task": t.name, "authors' name": t.authors_name, "inputs": t.n_inputs,
             "primitives": ", ".join(f"{p}: X^{a}->X" for p, a in t.primitives.items()),
             "bridges": ", ".join(t.bridges), "graph": t.graph}
            for t in tasks
        ]
    )


def table_shapes(tables: Mapping[str, np.ndarray]) -> str:
    """The primitive tables of a dataset and their shapes, e.g. "f1 (30, 30), f2 (30, 30)"."""
    return ", ".join(f"{name} {table.shape}" for name, table in tables.items())


def table_corner(table: np.ndarray, size: int = 6) -> pd.DataFrame:
    """The top-left ``size`` x ``size`` block of a 2-argument table, to show its entries: a column x1 (the row's
    first argument), then one column "x2=j" per second argument."""
    corner = pd.DataFrame(table[:size, :size], columns=[f"x2={j}" for j in range(min(size, table.shape[1]))])
    return corner.assign(x1=range(len(corner)))[["x1", *corner.columns]]


def preimage_summary(frame: pd.DataFrame, n_tokens: int) -> str:
    """One sentence on the spread of pre-image sizes (``preimage_frame``): how far from balanced a table is."""
    sizes = frame["preimage_size"]
    return (f"pre-image sizes of f1: min {sizes.min()}, max {sizes.max()}, mean {sizes.mean():.1f} "
            f"(= N^2 / N = {n_tokens}), standard deviation {sizes.std(ddof=0):.1f}; "
            f"values never produced: {(sizes == 0).sum()}")


def eligible_survey(tasks: Iterable[Task], token_counts: Sequence[int], max_inputs: int, seed: int) -> pd.DataFrame:
    """Share of ID-eligible inputs per task and N (input spaces above ``max_inputs`` skipped), next to 0.7^hops.

    Checks that eligibility is close to one independent factor 0.7 per hop."""
    rows = []
    for task in tasks:
        for n_tok in token_counts:
            space = n_tok**task.n_inputs
            if space > max_inputs:
                continue
            probe = generate(DatasetConfig(task.name, n_tok, n_train=1, seed=seed, test_size_per_type=0))
            rows.append({"task": task.name, "N": n_tok, "inputs N^m": space, "ID-eligible": probe.eligible_count,
                         "eligible share": probe.eligible_count / space, "0.7^hops": 0.7 ** len(task.hops)})
    return pd.DataFrame(rows).round({"eligible share": 4, "0.7^hops": 4})


def fact_usage(seen_split: Mapping[str, np.ndarray], seen_used: Mapping[str, np.ndarray]) -> pd.DataFrame:
    """Per primitive: how many facts exist, are in the seen split, are used by training, and are seen but unused."""
    return pd.DataFrame(
        [{"primitive": name, "facts": split.size, "seen split": int(split.sum()),
          "used by training": int(seen_used[name].sum()),
          "seen but unused": int((split & ~seen_used[name]).sum())}
         for name, split in seen_split.items()]
    )


def training_sizes(n_train: int) -> list[int]:
    """The training sizes the usage table tries: an eighth, a quarter, a half and all of ``n_train``."""
    return sorted({max(1, n_train // 8), max(1, n_train // 4), max(1, n_train // 2), n_train})


def usage_by_training_size(num_tokens: int, n_train: int, seed: int) -> pd.DataFrame:
    """Used / seen-split fact counts of twohop at several training sizes (same seed: same tables and split),
    to show how many seen facts a smaller training set leaves unused."""
    rows = []
    for size in training_sizes(n_train):
        d = generate(DatasetConfig("twohop", num_tokens, n_train=size, seed=seed, test_size_per_type=0))
        rows.append({"n_train": size, **{f"{p} used / seen split": f"{int(d.seen_used[p].sum())} / "
                                                                      f"{int(d.seen_split[p].sum())}"
                                         for p in d.seen_split}})
    return pd.DataFrame(rows)


def fact_flags(dataset: Dataset) -> pd.DataFrame:
    """Each test item of a twohop dataset: its type and whether its f1 and f2 facts were used by training,
    recomputed from the tables so the type rule can be checked."""
    _, fact_ids = dataset.task.evaluate(dataset.test_inputs, dataset.tables)
    return pd.DataFrame({
        "type": dataset.test_types,
        "f1 fact used (s1)": dataset.seen_used["f1"].reshape(-1)[fact_ids[0]].astype(int),
        "f2 fact used (s2)": dataset.seen_used["f2"].reshape(-1)[fact_ids[1]].astype(int),
    })


def types_from_bits(flags: pd.DataFrame) -> np.ndarray:
    """The test type the bit rule gives each row of ``fact_flags``: bits = 2 s1 + s2; type_0 if 3, else type_{bits+1}."""
    bits = 2 * flags["f1 fact used (s1)"] + flags["f2 fact used (s2)"]
    return np.where(bits == 3, "type_0", "type_" + (bits + 1).astype(str))


def files_table(folder: Path) -> pd.DataFrame:
    """The files of a dataset folder and their sizes in bytes, to show what is on disk."""
    return pd.DataFrame([{"file": p.name, "bytes": p.stat().st_size} for p in sorted(folder.iterdir()) if p.is_file()])


def matches_generated(loaded: DatasetFolder, dataset: Dataset) -> dict[str, bool]:
    """Whether a dataset read back from its folder equals the one generated in memory: train inputs,
    train answers, and test items with their types."""
    return {
        "train inputs equal": np.array_equal(loaded.train.inputs, dataset.train_inputs),
        "train answers equal": np.array_equal(loaded.train.answers, dataset.evaluate(dataset.train_inputs)["t"]),
        "test items and types equal": np.array_equal(loaded.test.inputs, dataset.test_inputs)
        and list(loaded.test.types) == list(dataset.test_types),
    }


def _used_of_split(dataset: Dataset, primitive: str) -> str:
    return f"{int(dataset.seen_used[primitive].sum())} / {int(dataset.seen_split[primitive].sum())}"


def dataset_summary(dataset: Dataset) -> dict[str, Any]:
    """The numbers that define a twohop dataset (size, eligibility, fact use, test items per type), for the summary."""
    n_tok = dataset.config.num_tokens
    return {
        "task": dataset.config.task,
        "N": n_tok,
        "inputs N^3": n_tok**3,
        "ID-eligible inputs": dataset.eligible_count,
        "eligible share": round(dataset.eligible_count / n_tok**3, 4),
        "n_train": len(dataset.train_inputs),
        "f1 facts used / seen split": _used_of_split(dataset, "f1"),
        "f2 facts used / seen split": _used_of_split(dataset, "f2"),
        **{f"test items {t}": int(c) for t, c in pd.Series(dataset.test_types).value_counts().sort_index().items()},
    }


def dataset_metrics(dataset: Dataset) -> dict[str, Any]:
    """What the chapter records for sweeps: eligibility, the share of seen facts training uses, the population."""
    return {
        "eligible_count": dataset.eligible_count,
        "eligible_share": dataset.eligible_count / dataset.config.num_tokens**3,
        "f1_used_share": float(dataset.seen_used["f1"].sum() / dataset.seen_split["f1"].sum()),
        "f2_used_share": float(dataset.seen_used["f2"].sum() / dataset.seen_split["f2"].sum()),
        **{f"population_{t}": int(c) for t, c in dataset.population.items()},
    }



# What the reader sees: each table the chapter shows, with headers that say what a column is.

def task_table_view(tasks: Iterable[Task]) -> ReaderTable:
    """``task_table`` for the reader."""
    return reader_table(task_table(tasks), {"task": "task", "authors' name": "authors' name", "inputs": "input tokens",
                                            "primitives": "primitives (arguments -> value)", "bridges": "bridges",
                                            "graph": "computation"})


def table_corner_view(table: np.ndarray, size: int = 6) -> ReaderTable:
    """``table_corner`` for the reader: the entry in row x1, column x2 is b = f1(x1, x2)."""
    corner = table_corner(table, size)
    headers = {"x1": "x1 \\ x2", **{c: c.removeprefix("x2=") for c in corner.columns if c != "x1"}}
    return reader_table(corner, headers, caption=f"f1, its first {len(corner)} rows and columns: b = f1(x1, x2)")


def eligible_survey_view(survey: pd.DataFrame) -> ReaderTable:
    """``eligible_survey`` for the reader (shares as percentages)."""
    return reader_table(survey, {"task": "task", "N": "N (tokens)", "inputs N^m": "inputs (N^m)",
                                 "ID-eligible": "ID-eligible inputs", "eligible share": "eligible share",
                                 "0.7^hops": "0.7^hops (independent hops)"},
                        formats={"eligible share": ".1%", "0.7^hops": ".1%"})


def fact_usage_view(usage: pd.DataFrame) -> ReaderTable:
    """``fact_usage`` for the reader."""
    return reader_table(usage, {"primitive": "primitive", "facts": "facts", "seen split": "in the seen split",
                                "used by training": "used by training", "seen but unused": "seen split, never used"})


def usage_by_training_size_view(usage: pd.DataFrame) -> ReaderTable:
    """``usage_by_training_size`` for the reader."""
    return reader_table(usage, {"n_train": "training examples",
                                **{c: c.replace(" used / seen split", " facts: used / in the seen split")
                                   for c in usage.columns if c != "n_train"}})


BIT_COLUMNS = {(0, 0): "s1=0, s2=0 (neither used)", (0, 1): "s1=0, s2=1 (only f2 used)",
               (1, 0): "s1=1, s2=0 (only f1 used)", (1, 1): "s1=1, s2=1 (both used)"}


def type_bits_table(flags: pd.DataFrame) -> pd.DataFrame:
    """Test items per type (rows) and per pair of used-fact flags (s1, s2) (columns), from ``fact_flags``:
    each type should fill exactly one column (train_inferred: both used)."""
    counts = flags.groupby(["type", "f1 fact used (s1)", "f2 fact used (s2)"]).size()
    wide = pd.DataFrame({label: [int(counts.get((t, *bits), 0)) for t in sorted(flags["type"].unique())]
                         for bits, label in BIT_COLUMNS.items()})
    return wide.assign(type=sorted(flags["type"].unique()))[["type", *BIT_COLUMNS.values()]]


def type_bits_view(flags: pd.DataFrame) -> ReaderTable:
    """``type_bits_table`` for the reader."""
    return reader_table(type_bits_table(flags), {"type": "test type", **{c: c for c in BIT_COLUMNS.values()}},
                        caption="test items per type and used-fact flags")


def type_counts_view(shares: pd.DataFrame) -> ReaderTable:
    """How many inputs of each type there are, and how many the test set holds (from ``type_share_frame``)."""
    wide = shares.pivot(index="category", columns="group", values="count").reindex(
        shares.sort_values("order")["category"].drop_duplicates()).reset_index()
    return reader_table(wide, {"category": "type", "all inputs": "all inputs", "test set": "test set"})


def files_view(folder: Path) -> ReaderTable:
    """``files_table`` for the reader."""
    return reader_table(files_table(folder), {"file": "file", "bytes": "size (bytes)"})


def items_view(items: Sequence[Mapping[str, Any]]) -> ReaderTable:
    """Dataset items as stored (``train.json`` / ``test.json``): the prompt, the target, and the type if any."""
    frame = pd.DataFrame(list(items))
    columns = {"type": "type", "input_text": "input_text (the prompt)", "target_text": "target_text (what to produce)"}
    return reader_table(frame, {c: h for c, h in columns.items() if c in frame})


def first_of_each_type(items: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The first test item of each type, types in order."""
    first: dict[str, Mapping[str, Any]] = {}
    for item in items:
        first.setdefault(item["type"], item)
    return [first[t] for t in sorted(first)]


def summary_view(summary: Mapping[str, Any]) -> ReaderTable:
    """``dataset_summary`` for the reader: one row per number."""
    frame = pd.DataFrame({"quantity": list(summary), "value": list(summary.values())})
    return reader_table(frame, {"quantity": "quantity", "value": "value"}, formats={"value": readable}, max_rows=30)


# --- the exercises: the quantity each asks for, and its check (the solution cells show how to compute it) ---------

EXERCISE_N = 20  # tokens of the exercises' fresh datasets: 8,000 two-hop inputs, 160,000 three-hop ones, counted exactly


def eligible_share(task: str, seed: int, num_tokens: int = EXERCISE_N) -> float:
    """Exercises 1 and 2: the share of a task's N^m inputs that are ID-eligible (every fact they use is in the seen
    split), counted on a fresh dataset; the seen split does not depend on the training-set size."""
    dataset = generate(DatasetConfig(task, num_tokens, 1, seed=seed, test_size_per_type=0))
    return dataset.eligible_count / num_tokens ** dataset.task.n_inputs


def check_eligible_share(answer: Any, task: str, seed: int, name: str, num_tokens: int = EXERCISE_N) -> str:
    """Exercises 1 and 2: a reader's expected share of ID-eligible ``task`` inputs, within 0.02 of the count."""
    return check_share(answer, eligible_share(task, seed, num_tokens),
                       f"the share of ID-eligible {task} inputs at N = {num_tokens}",
                       "work it out from how the seen split is drawn (1.3), before running anything", tol=0.02,
                       name=name, hint="an input is ID-eligible when every fact it uses is seen; how many facts does "
                                       f"one {task} input use, and how likely is each of them to be seen?")
