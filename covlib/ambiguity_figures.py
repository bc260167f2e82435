"""Figures of chapter 6 (path ambiguity): coverage of two-hop against non-tree, what their equivalence
classes group, the data each needs, and a bar chart of IICG peaks per grouping key. One function per
figure, each returning an altair chart; heatmaps come from covlib.mechanism_figures."""
from __future__ import annotations

import altair as alt
import pandas as pd

TASK_COLORS = {"twohop": "#1565c0", "nontree": "#c62828"}
POPULATION_LABELS = {"type_0": "ID test (type_0)", "id_pool": "whole ID pool (not in training)"}


def _task_scale(tasks) -> alt.Scale:
    domain = list(dict.fromkeys(tasks))
    return alt.Scale(domain=domain, range=[TASK_COLORS.get(t, "#6a1b9a") for t in domain])


def coverage_compare_chart(table: pd.DataFrame, title: str) -> alt.Chart:
    """k-coverage (percent) against k for each task (colour) and population (dash): ambiguity.coverage_comparison."""
    data = table.assign(percent=table["covered"] * 100, population=table["population"].map(POPULATION_LABELS))
    return alt.Chart(data).mark_line(point=True, strokeWidth=2).encode(
        alt.X("k:O", title="k (shared contexts required for equivalence)", axis=alt.Axis(labelAngle=0)),
        alt.Y("percent:Q", title="covered (%)", scale=alt.Scale(domain=[0, 100])),
        alt.Color("task:N", title="task", scale=_task_scale(data["task"])),
        alt.StrokeDash("population:N", title=None, sort=list(POPULATION_LABELS.values())),
        tooltip=["task", "population", "k", alt.Tooltip("percent:Q", format=".1f"), "n"],
    ).properties(width=420, height=260, title=alt.TitleParams(title, anchor="start"))


def merged_pairs_chart(table: pd.DataFrame, title: str) -> alt.Chart:
    """Share of merged first-hop fragment pairs that share b, x2, or both, per task: ambiguity.merged_pairs."""
    return alt.Chart(table).mark_bar().encode(
        alt.X("shared:N", title="the two fragments share", sort=["b", "x2", "b and x2"], axis=alt.Axis(labelAngle=0)),
        alt.XOffset("task:N", sort=list(TASK_COLORS)),
        alt.Y("share:Q", title="share of merged pairs", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")),
        alt.Color("task:N", title="task", scale=_task_scale(table["task"])),
        tooltip=["task", "shared", alt.Tooltip("share:Q", format=".3f"), "merged_pairs", "classes", "largest_class"],
    ).properties(width=320, height=220, title=alt.TitleParams(title, anchor="start"))


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
                                       "series": f"{task}: {target:.0%} of {population} {k}-covered"}))
        lines.append(pd.DataFrame({"N": g["N"], "n": g["eligible"], "dash": "pool", "series": f"{task}: ID pool"}))
    return pd.concat(lines, ignore_index=True) if lines else pd.DataFrame(columns=["N", "n", "dash", "series"])


def iicg_keys_chart(peaks: pd.DataFrame, title: str) -> alt.Chart:
    """Peak IICG (layers >= 1) per grouping key, one bar per task and key: ambiguity.iicg_peaks rows with a
    task column."""
    data = peaks.assign(where=peaks["layer"].astype(str).radd("layer ") + ", " + peaks["position"])
    keys = list(dict.fromkeys(data["group_by"]))
    bars = alt.Chart(data).mark_bar().encode(
        alt.X("group_by:N", title="items grouped by", sort=keys, axis=alt.Axis(labelAngle=0)),
        alt.XOffset("task:N", sort=list(TASK_COLORS)),
        alt.Y("iicg:Q", title="largest IICG (layers 1..L)"),
        alt.Color("task:N", title="task", scale=_task_scale(data["task"])),
        tooltip=["task", "group_by", "where", alt.Tooltip("iicg:Q", format=".3f")])
    return bars.properties(width=360, height=240, title=alt.TitleParams(title, anchor="start"))
