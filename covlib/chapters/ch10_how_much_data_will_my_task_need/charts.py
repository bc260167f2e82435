"""Chapter 10's figures: measured over predicted against N per task with the band, and a reader's coverage growth."""
from __future__ import annotations

import altair as alt
import pandas as pd

from covlib.figures.style import legend_highlight


def ratio_chart(cells: pd.DataFrame, bands: tuple[float, float]) -> alt.LayerChart:
    """Every cell's measured n_req over its prediction against N, one colour per task, filled for the tasks predicted
    out of sample (each by the rule fitted without it), hollow for the architecture tests and the preregistered
    tasks; green bands at 1.15x and 1.25x. Click the legend to pick a task; drag and scroll to pan and zoom."""
    data = cells.dropna(subset=["ratio"])[["series", "kind", "N", "seed", "n_req", "predicted", "ratio"]]
    pick, opacity = legend_highlight("series")
    # a label at every measured N (a log axis labels only 6-10 and the tens); Vega leaves out one that would collide
    ticks = sorted({int(n) for n in data["N"]})
    x = alt.X("N:Q", title="N (tokens)", scale=alt.Scale(type="log", nice=False, padding=10),
              axis=alt.Axis(values=ticks, format="d") if len(ticks) >= 2 else alt.Undefined)
    # legends below the plot: beside it, twelve task names made the chart wider than the page
    task_legend = alt.Legend(title="task (click to pick)", orient="bottom", columns=3)
    rects = [alt.Chart(pd.DataFrame({"lo": [1 / b], "hi": [b], "band": [f"within {b:g}x"]})).mark_rect(
        color="#c8e6c9", opacity=0.35).encode(y=alt.Y("lo:Q"), y2="hi:Q", tooltip=[alt.Tooltip("band:N")])
        for b in sorted(bands, reverse=True)]
    one = alt.Chart(pd.DataFrame({"y": [1.0]})).mark_rule(color="#2e7d32").encode(y="y:Q")
    points = alt.Chart(data).mark_point(size=70).encode(
        x, alt.Y("ratio:Q", title="measured / predicted training data",
                 scale=alt.Scale(type="log", nice=False, padding=10)),
        # twelve tasks: the default ten colours would repeat two of them
        alt.Color("series:N", legend=task_legend, scale=alt.Scale(scheme="tableau20")),
        alt.Shape("kind:N", legend=alt.Legend(title="test", orient="bottom", direction="vertical")),
        # fill by task under the colour legend's own settings, so the two share one legend (with legend=None on the
        # fill, Vega-Lite dropped the colour legend too, and the tasks went unnamed)
        alt.Fill("series:N", legend=task_legend, scale=alt.Scale(scheme="tableau20")), alt.FillOpacity("kind:N", legend=None, scale=alt.Scale(
            domain=["task, out of sample", "architecture", "preregistered"], range=[0.9, 0.0, 0.0])),
        opacity=opacity,
        tooltip=[alt.Tooltip("series:N", title="task"), alt.Tooltip("kind:N", title="test"), alt.Tooltip("N:Q"),
                 alt.Tooltip("seed:O"), alt.Tooltip("n_req:Q", title="measured n_req", format=",.0f"),
                 alt.Tooltip("predicted:Q", title="predicted", format=",.0f"),
                 alt.Tooltip("ratio:Q", title="measured / predicted", format=".2f")]).add_params(pick).interactive()
    return alt.layer(*rects, one, points).properties(
        width=540, height=330, title=alt.Title("Measured over predicted training data, each task out of sample",
                                               subtitle=f"green bands: within {bands[0]:g}x and {bands[1]:g}x; "
                                                        "line: measured = predicted"))


def coverage_growth_chart(growth: pd.DataFrame, formula: str) -> alt.Chart:
    """Share of the ID test items k-covered against n_train, one line per k, for the reader's task."""
    pick, opacity = legend_highlight("k")
    return alt.Chart(growth).mark_line(point=True).encode(
        alt.X("n_train:Q", title="training examples", scale=alt.Scale(type="log", nice=False)),
        alt.Y("covered:Q", title="ID test items k-covered", axis=alt.Axis(format="%")),
        alt.Color("k:O", title="k (click to pick)"), opacity=opacity,
        tooltip=[alt.Tooltip("k:O"), alt.Tooltip("n_train:Q", format=","),
                 alt.Tooltip("covered:Q", title="covered", format=".1%")]).add_params(pick).properties(
        width=420, height=260, title=f"How coverage grows: {formula}")
