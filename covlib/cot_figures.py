"""Figures of chapter 7 (chain of thought): greedy decoding's outcomes beside teacher-forced accuracy, and
requirement ratios. One function per figure; required-data and exponent charts come from
covlib.scaling_figures, heatmaps from covlib.mechanism_figures, curves from covlib.figures."""
from __future__ import annotations

import altair as alt
import pandas as pd

from covlib.cot import OUTCOMES

OUTCOME_COLORS = ["#2e7d32", "#f9a825", "#90caf9", "#c62828"]  # in OUTCOMES order


def decoding_chart(summary: pd.DataFrame, title: str, row: str = "model") -> alt.LayerChart:
    """One bar per row of cot.decoding_summary (labelled by the column ``row``, e.g. a model, or a model and
    a test split): the four greedy outcomes (bridge right or wrong, answer right or wrong) stacked, and a
    black tick at teacher-forced answer accuracy."""
    labels = list(OUTCOMES.values())
    long = summary.melt(id_vars=[row], value_vars=labels, var_name="outcome", value_name="share")
    long["order"] = long["outcome"].map({lab: i for i, lab in enumerate(labels)})
    rows = list(dict.fromkeys(summary[row]))
    y = alt.Y(f"{row}:N", title=None, sort=rows, axis=alt.Axis(labelLimit=400))
    bars = alt.Chart(long).mark_bar().encode(
        alt.X("share:Q", title="share of test items (greedy decoding)", axis=alt.Axis(format="%"),
              scale=alt.Scale(domain=[0, 1])),
        y, alt.Color("outcome:N", title=None, sort=labels, scale=alt.Scale(domain=labels, range=OUTCOME_COLORS),
                     legend=alt.Legend(orient="bottom", columns=2, labelLimit=300)),
        alt.Order("order:Q"), tooltip=[row, "outcome", alt.Tooltip("share:Q", format=".3f")])
    ticks = alt.Chart(summary.assign(what="teacher-forced answer accuracy")).mark_tick(
        color="black", thickness=3, size=22).encode(alt.X("tf_answer:Q"), y,
                                                   tooltip=[row, "what", alt.Tooltip("tf_answer:Q", format=".3f")])
    return alt.layer(bars, ticks).properties(width=420, height=30 * len(rows) + 20,
                                             title=alt.TitleParams(title, anchor="start"))


def ratio_chart(ratios: pd.DataFrame, title: str, band: tuple[float, float] | None = None,
                bounds: pd.DataFrame | None = None) -> alt.LayerChart:
    """n_req without CoT over n_req with CoT per (N, seed) (cot.requirement_ratio rows; coloured by ``task``
    when the rows carry one), with an optional shaded band (the paper's 5-10x) and optional lower bounds
    (cot.ratio_lower_bounds rows, drawn as open up-triangles: the true ratio lies above)."""
    ratios = ratios if "task" in ratios else ratios.assign(task="")
    color = alt.Color("task:N", title=None, scale=alt.Scale(domain=["twohop", "threehop"], range=["#1565c0", "#c62828"]))
    x = alt.X("N:Q", title="N (tokens)", scale=alt.Scale(zero=False, nice=False, padding=20))
    layers = []
    if band:
        layers.append(alt.Chart(pd.DataFrame({"lo": [band[0]], "hi": [band[1]], "what": ["paper: 5-10x"]}))
                      .mark_rect(opacity=0.15, color="#6a1b9a").encode(alt.Y("lo:Q"), alt.Y2("hi:Q"), tooltip=["what"]))
    layers.append(alt.Chart(ratios).mark_point(filled=True, size=70).encode(
        x, alt.Y("ratio:Q", title="n_req without CoT / with CoT", scale=alt.Scale(zero=True)), color,
        tooltip=["task", "N", "seed", alt.Tooltip("n_req_plain:Q", format=",.0f"),
                 alt.Tooltip("n_req_cot:Q", format=",.0f"), alt.Tooltip("ratio:Q", format=".2f")]))
    if bounds is not None and len(bounds):
        bounds = bounds if "task" in bounds else bounds.assign(task="")
        layers.append(alt.Chart(bounds.assign(what="at least (no success without CoT)")).mark_point(
            shape="triangle-up", size=90, filled=False, strokeWidth=2).encode(
            x, alt.Y("ratio_at_least:Q"), color,
            tooltip=["task", "N", "seed", "what", alt.Tooltip("plain_fails_at:Q", format=",.0f"),
                     alt.Tooltip("n_req_cot:Q", format=",.0f"), alt.Tooltip("ratio_at_least:Q", format=".2f")]))
    return alt.layer(*layers).properties(width=320, height=220, title=alt.TitleParams(title, anchor="start"))
