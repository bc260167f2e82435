"""Layer x position heatmaps (IICG, tracing) and values over training."""
from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from covlib.figures.style import MAX_CHART_WIDTH, zoom

BY_CONSTRUCTION = "high or fixed by construction: not evidence"

# what a cell's value rests on, in its tooltip
COUNT_TITLES = {"items": "items (n)", "pairs": "vector pairs", "groups": "groups"}
TOOLTIP_DECIMALS = 3  # a cell's value in its tooltip, and in the saved figure


# what a legend and a tooltip call the value a map shows, by its column (a column not here is called by its name)
VALUE_TITLES = {"iicg": "IICG (within - between)", "top1": "share of items", "value": "effect of the patch"}
PANEL_WIDTH = 150  # one map's plotting area (px); with its axis and the spacing a panel takes about 220 px


def layer_position_heatmap(table: pd.DataFrame, value: str, title: str, facet: str | None = None,
                           domain: tuple[float, float] | None = None, scheme: str = "blues", fmt: str = ".2f",
                           columns: int = 4, positions: list[str] | None = None) -> alt.TopLevelMixin:
    """A layers (rows, 0 = embeddings at the bottom) x positions (columns) heatmap of ``value``, with the
    numbers written in the cells; one panel per value of ``facet``, at most ``columns`` (and as many as fit the
    page, MAX_CHART_WIDTH) side by side. ``positions`` orders the columns (default: as they first appear in the
    table, e.g. x1, x2, x3, b). Cells whose ``by_construction`` column is true are greyed, with a legend entry:
    their value is fixed whatever the model learned."""
    scale = alt.Scale(scheme=scheme, domain=list(domain)) if domain else alt.Scale(scheme=scheme)
    # to the tooltip's precision: beyond it, float noise (e.g. a near-zero IICG) differs between machines
    table = table.assign(**{value: table[value].round(TOOLTIP_DECIMALS) + 0.0})  # + 0.0: no "-0.000"
    table = table.assign(by_construction=table["by_construction"].astype(bool)) if "by_construction" in table \
        else table.assign(by_construction=False)
    table = table.assign(fixed=np.where(table["by_construction"], "yes", "no"))  # a tooltip says yes/no, not true
    named = VALUE_TITLES.get(value, value)
    tooltip = [alt.Tooltip(f"{facet}:N", title="panel")] if facet else []
    tooltip += [alt.Tooltip("layer:O", title="layer"), alt.Tooltip("position:N", title="position"),
                alt.Tooltip(f"{value}:Q", title=named, format=f".{TOOLTIP_DECIMALS}f"),
                alt.Tooltip("fixed:N", title="fixed by construction")]
    tooltip += [alt.Tooltip(f"{c}:Q", title=COUNT_TITLES[c], format=",d") for c in COUNT_TITLES if c in table]
    base = alt.Chart(table).encode(
        alt.X("position:N", title="position", axis=alt.Axis(labelAngle=0),
              sort=positions or list(dict.fromkeys(table["position"]))),
        alt.Y("layer:O", title="layer", sort="descending"))
    rect = base.mark_rect().encode(
        alt.Color(f"{value}:Q", title=named, scale=scale, legend=alt.Legend(orient="bottom", gradientLength=180)),
        tooltip=tooltip)
    layers = [rect]
    if table["by_construction"].any():  # a fill of its own, so that one legend serves every panel
        marked = base.transform_filter("datum.by_construction").transform_calculate(cell=f"'{BY_CONSTRUCTION}'")
        layers.append(marked.mark_rect(stroke="white", strokeWidth=1).encode(
            alt.Fill("cell:N", title=None, scale=alt.Scale(domain=[BY_CONSTRUCTION], range=["#d9d9d9"]),
                     legend=alt.Legend(orient="bottom", labelLimit=400)), tooltip=tooltip))
    text = base.mark_text(fontSize=11).encode(  # the numbers cover the cells' centres: they carry the tooltip too
        alt.Text(f"{value}:Q", format=fmt), tooltip=tooltip,
        color=alt.when("datum.by_construction").then(alt.value("#8a8a8a"))
        .when(f"datum['{value}'] > {_dark_from(table[value], domain)}").then(alt.value("white"))
        .otherwise(alt.value("black")))
    chart = alt.layer(*layers, text).properties(width=PANEL_WIDTH, height=150)
    if facet:
        fit = max(1, int((MAX_CHART_WIDTH + 20) // (PANEL_WIDTH + 70)))
        panels = table[facet].nunique()
        rows = -(-panels // min(columns, fit))
        # as few columns as fill those rows: 4 panels in 3 columns left two empty slots that still drew bare axes
        chart = chart.facet(alt.Facet(f"{facet}:N", title=None, sort=list(dict.fromkeys(table[facet]))),
                            columns=-(-panels // rows))
    return chart.properties(title=alt.TitleParams(title, anchor="start"))


def _dark_from(values: pd.Series, domain: tuple[float, float] | None) -> float:
    """The value above which a sequential scheme's cells are dark enough for white numbers (60% up its range)."""
    low, high = domain if domain else (float(values.min()), float(values.max()))
    return round(low + 0.6 * (high - low), TOOLTIP_DECIMALS) if high > low else high + 1.0


def over_training_chart(frame: pd.DataFrame, title: str, y_title: str = "value") -> alt.LayerChart:
    """Lines over training steps (columns step, value, series) with points at the analysed checkpoints (said in
    the subtitle)."""
    frame = frame.assign(value=frame["value"].round(TOOLTIP_DECIMALS))  # the precision the tooltip shows
    base = alt.Chart(frame).encode(alt.X("step:Q", title="training step"),
                                   alt.Y("value:Q", title=y_title), alt.Color("series:N", title=None),
                                   tooltip=[alt.Tooltip("series:N", title="series"),
                                            alt.Tooltip("step:Q", title="training step", format=","),
                                            alt.Tooltip("value:Q", title=y_title, format=f".{TOOLTIP_DECIMALS}f")])
    return alt.layer(base.mark_line(strokeWidth=2).add_params(zoom(["x"])),
                     base.mark_point(filled=True, size=50)).properties(
        width=440, height=240, title=alt.TitleParams(title, anchor="start", subtitle="points: the checkpoints analysed"))
