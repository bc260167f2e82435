"""Chapter 10's figures: measured over predicted against N per task with the band, and a reader's coverage growth."""
from __future__ import annotations

import altair as alt
import pandas as pd

from covlib.figures.style import legend_highlight


def ratio_chart(tested: pd.DataFrame, band: float, factor: float) -> alt.LayerChart:
    """Every cell's measured n_req over the rule's prediction against N, one colour per set, with the band of
    ``band``x around 1. A slider rescales the rule's factor (at ``factor`` the points are the rule's own); the
    legend picks out a set."""
    data = tested.assign(raw=tested["n_req"] / (tested["predicted"] / factor))[
        ["set", "N", "seed", "n_req", "predicted", "raw", "rule"]]
    scale = alt.param(name="factor", value=round(factor, 2),
                      bind=alt.binding_range(min=0.5, max=4.0, step=0.01, name="factor on coverage's crossing: "))
    pick, opacity = legend_highlight("set")
    x = alt.X("N:Q", title="N (tokens)", scale=alt.Scale(type="log", nice=False, padding=10))
    band_rect = alt.Chart(pd.DataFrame({"lo": [1 / band], "hi": [band]})).mark_rect(color="#c8e6c9", opacity=0.5).encode(
        y=alt.Y("lo:Q"), y2="hi:Q", tooltip=[alt.Tooltip("lo:Q", title="band from", format=".3f"),
                                             alt.Tooltip("hi:Q", title="band to", format=".3f")])
    one = alt.Chart(pd.DataFrame({"y": [1.0]})).mark_rule(color="#2e7d32").encode(y="y:Q")
    points = alt.Chart(data).transform_calculate(ratio="datum.raw / factor", shown_pred="datum.predicted / "
                                                 f"{factor} * factor").mark_point(filled=True, size=70).encode(
        x, alt.Y("ratio:Q", title="measured n_req / predicted", scale=alt.Scale(type="log")),
        alt.Color("set:N", title="task (click to pick)"), alt.Shape("set:N", title="task (click to pick)"), opacity=opacity,
        tooltip=[alt.Tooltip("set:N", title="task"), alt.Tooltip("N:Q"), alt.Tooltip("seed:O"),
                 alt.Tooltip("n_req:Q", title="measured n_req", format=",.0f"),
                 alt.Tooltip("shown_pred:Q", title="predicted", format=",.0f"),
                 alt.Tooltip("ratio:Q", title="measured / predicted", format=".2f"),
                 alt.Tooltip("rule:N", title="give-up rule")]).add_params(pick, scale)
    return alt.layer(band_rect, one, points).properties(
        width=520, height=320, title=alt.Title("Measured over predicted training data, per task",
                                               subtitle=f"green band: within {band:g}x; line: measured = predicted"))


def coverage_growth_chart(growth: pd.DataFrame, formula: str) -> alt.Chart:
    """Share of the ID test items k-covered against n_train, one line per k, for the reader's task."""
    pick, opacity = legend_highlight("k")
    return alt.Chart(growth).mark_line(point=True).encode(
        alt.X("n_train:Q", title="training examples", scale=alt.Scale(type="log")),
        alt.Y("covered:Q", title="ID test items k-covered", axis=alt.Axis(format="%")),
        alt.Color("k:O", title="k (click to pick)"), opacity=opacity,
        tooltip=[alt.Tooltip("k:O"), alt.Tooltip("n_train:Q", format=","),
                 alt.Tooltip("covered:Q", title="covered", format=".1%")]).add_params(pick).properties(
        width=420, height=260, title=f"How coverage grows: {formula}")
