"""Chapter 6's own charts: k-coverage of both tasks, what the equivalence classes merge, the IICG maps and
peaks by grouping key, and the colours of the learning curves."""
from __future__ import annotations

import altair as alt
import pandas as pd

from covlib.chapters.ch06_path_ambiguity.coverage import POPULATION_LABELS
from covlib.figures.charts import hidden_line_notes
from covlib.figures.heatmaps import layer_position_heatmap
from covlib.figures.style import TASK_COLORS, legend_highlight


def _task_scale(tasks) -> alt.Scale:
    domain = list(dict.fromkeys(tasks))
    return alt.Scale(domain=domain, range=[TASK_COLORS.get(t, "#6a1b9a") for t in domain])


def coverage_compare_chart(table: pd.DataFrame, title: str) -> alt.Chart:
    """k-coverage (percent) against k for each task (colour) and population (dash): ambiguity.coverage_comparison.
    Clicking a task in the legend picks out its two lines."""
    data = table.assign(percent=table["covered"] * 100, population=table["population"].map(POPULATION_LABELS))
    # two-hop's lines sit at 100% at every k, where non-tree's ID line also starts: say which lines hide which
    lines = data.assign(line=data["task"] + " " + data["population"].str.split(" (", regex=False).str[0])
    notes = hidden_line_notes(lines, "line", "percent")
    picked, opacity = legend_highlight("task")
    return alt.Chart(data).mark_line(point=True, strokeWidth=2).encode(
        alt.X("k:O", title="k (shared contexts required for equivalence)", axis=alt.Axis(labelAngle=0)),
        alt.Y("percent:Q", title="covered (%)", scale=alt.Scale(domain=[0, 100])),
        alt.Color("task:N", title="task", scale=_task_scale(data["task"])),
        alt.StrokeDash("population:N", title=None, sort=list(POPULATION_LABELS.values())),
        opacity=opacity,
        tooltip=[alt.Tooltip("task:N", title="task"), alt.Tooltip("population:N", title="items"),
                 alt.Tooltip("k:O", title="k"), alt.Tooltip("percent:Q", title="k-covered (%)", format=".1f"),
                 alt.Tooltip("n:Q", title="items in the population", format=",d")],
    ).add_params(picked).properties(width=420, height=260, title=alt.TitleParams(
        title, subtitle=notes or alt.Undefined, anchor="start"))


def merged_pairs_chart(table: pd.DataFrame, title: str) -> alt.Chart:
    """Share of merged first-hop fragment pairs that share b, x2, or both, per task: ambiguity.merged_pairs."""
    return alt.Chart(table).mark_bar().encode(
        alt.X("shared:N", title="the two fragments share", sort=["b", "x2", "b and x2"], axis=alt.Axis(labelAngle=0)),
        alt.XOffset("task:N", sort=list(TASK_COLORS)),
        alt.Y("share:Q", title="share of merged pairs", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")),
        alt.Color("task:N", title="task", scale=_task_scale(table["task"])),
        tooltip=[alt.Tooltip("task:N", title="task"), alt.Tooltip("shared:N", title="the two fragments share"),
                 alt.Tooltip("share:Q", title="share of merged pairs", format=".1%"),
                 alt.Tooltip("merged_pairs:Q", title="merged pairs", format=",d"),
                 alt.Tooltip("fragments:Q", title="training fragments", format=",d"),
                 alt.Tooltip("classes:Q", title=f"classes (k = {int(table['k'].iloc[0])})" if len(table) else "classes",
                             format=",d"),
                 alt.Tooltip("largest_class:Q", title="largest class (fragments)", format=",d")],
    ).properties(width=320, height=220, title=alt.TitleParams(title, anchor="start"))


CURVE_COLORS = {"twohop, ID test (type_0)": "#1565c0", "twohop, training items": "#90caf9",
                "nontree, ID test (type_0)": "#c62828", "nontree, training items": "#ef9a9a"}


def iicg_keys_chart(peaks: pd.DataFrame, title: str) -> alt.Chart:
    """Peak IICG per grouping key (cells high by construction left out), one bar per task and key:
    covlib.analyses.iicg.iicg_peaks rows with a task column."""
    data = peaks.assign(where=peaks["layer"].astype(str).radd("layer ") + ", " + peaks["position"])
    keys = list(dict.fromkeys(data["group_by"]))
    counts = [alt.Tooltip(f"{c}:Q", title=label, format=",d") for c, label in
              (("items", "items (one per fragment)"), ("groups", "groups")) if c in data]
    bars = alt.Chart(data).mark_bar().encode(
        alt.X("group_by:N", title="items grouped by", sort=keys, axis=alt.Axis(labelAngle=0)),
        alt.XOffset("task:N", sort=list(TASK_COLORS)),
        alt.Y("iicg:Q", title="largest IICG (no cell high by construction)"),
        alt.Color("task:N", title="task", scale=_task_scale(data["task"])),
        tooltip=[alt.Tooltip("task:N", title="task"), alt.Tooltip("group_by:N", title="grouped by"),
                 alt.Tooltip("where:N", title="where (layer, position)"),
                 alt.Tooltip("iicg:Q", title="largest IICG", format=".3f"), *counts])
    # a key measured for some tasks only leaves a gap in its group of bars: say so, or a reader looks for a zero
    tasks = list(dict.fromkeys(data["task"]))
    only = [f"{key}: {', '.join(t for t in tasks if t in have)} only" for key in keys
            if len(have := set(data.loc[data["group_by"] == key, "task"])) < len(tasks)]
    note = "no bar where a task was not grouped by that key (" + "; ".join(only) + ")" if only else alt.Undefined
    return bars.properties(width=360, height=240, title=alt.TitleParams(title, subtitle=note, anchor="start"))


ALL_KEYS = "every key"


def iicg_by_key_chart(id_maps: pd.DataFrame, title: str) -> alt.TopLevelMixin:
    """IICG maps of the ID test items (iicg_by_key rows of split type_0), one panel per task and grouping key,
    with a dropdown that keeps the panels of one key, so that the two tasks can be read side by side."""
    keys = list(dict.fromkeys(id_maps["group_by"]))
    key = alt.param(name="grouping_key", value=ALL_KEYS,
                    bind=alt.binding_select(options=[ALL_KEYS, *keys], name="grouping key: "))
    heat = layer_position_heatmap(id_maps.assign(panel=id_maps["task"] + ": by " + id_maps["group_by"]), "iicg",
                                  title, facet="panel", domain=(-0.1, max(0.5, float(id_maps["iicg"].max()))))
    return heat.add_params(key).transform_filter(f"grouping_key == '{ALL_KEYS}' || datum.group_by == grouping_key")
