"""Layer x position heatmaps (IICG, tracing) and values over training."""
from __future__ import annotations

import altair as alt
import pandas as pd

from covlib.figures.style import zoom

BY_CONSTRUCTION = "high or fixed by construction: not evidence"

# what a cell's value rests on, in its tooltip
COUNT_TITLES = {"items": "items (n)", "pairs": "vector pairs", "groups": "groups"}
TOOLTIP_DECIMALS = 3  # a cell's value in its tooltip, and in the saved figure


def layer_position_heatmap(table: pd.DataFrame, value: str, title: str, facet: str | None = None,
                           domain: tuple[float, float] | None = None, scheme: str = "blues", fmt: str = ".2f",
                           columns: int = 4, positions: list[str] | None = None) -> alt.TopLevelMixin:
    """A layers (rows, 0 = embeddings at the bottom) x positions (columns) heatmap of ``value``, with the
    numbers written in the cells; one panel per value of ``facet``. ``positions`` orders the columns
    (default: as they first appear in the table, e.g. x1, x2, x3, b). Cells whose ``by_construction`` column
    is true are greyed, with a legend entry: their value is fixed whatever the model learned."""
    scale = alt.Scale(scheme=scheme, domain=list(domain)) if domain else alt.Scale(scheme=scheme)
    # to the tooltip's precision: beyond it, float noise (e.g. a near-zero IICG) differs between machines
    table = table.assign(**{value: table[value].round(TOOLTIP_DECIMALS) + 0.0})  # + 0.0: no "-0.000"
    table = table.assign(by_construction=table["by_construction"].astype(bool)) if "by_construction" in table \
        else table.assign(by_construction=False)
    tooltip = [alt.Tooltip(f"{facet}:N", title="panel")] if facet else []
    tooltip += [alt.Tooltip("layer:O", title="layer"), alt.Tooltip("position:N", title="position"),
                alt.Tooltip(f"{value}:Q", title=value, format=f".{TOOLTIP_DECIMALS}f"),
                alt.Tooltip("by_construction:N", title="fixed by construction")]
    tooltip += [alt.Tooltip(f"{c}:Q", title=COUNT_TITLES[c], format=",d") for c in COUNT_TITLES if c in table]
    base = alt.Chart(table).encode(
        alt.X("position:N", title="position", axis=alt.Axis(labelAngle=0),
              sort=positions or list(dict.fromkeys(table["position"]))),
        alt.Y("layer:O", title="layer", sort="descending"))
    rect = base.mark_rect().encode(alt.Color(f"{value}:Q", title=value, scale=scale), tooltip=tooltip)
    layers = [rect]
    if table["by_construction"].any():
        marked = base.transform_filter("datum.by_construction").transform_calculate(cell=f"'{BY_CONSTRUCTION}'")
        layers.append(marked.mark_rect(stroke="white", strokeWidth=1).encode(
            alt.Color("cell:N", title=None, scale=alt.Scale(domain=[BY_CONSTRUCTION], range=["#d9d9d9"]),
                      legend=alt.Legend(orient="bottom", labelLimit=400)), tooltip=tooltip))
    text = base.mark_text(fontSize=11).encode(  # the numbers cover the cells' centres: they carry the tooltip too
        alt.Text(f"{value}:Q", format=fmt), tooltip=tooltip,
        color=alt.condition("datum.by_construction", alt.value("#8a8a8a"), alt.value("black")))
    chart = alt.layer(*layers, text).resolve_scale(color="independent").properties(width=150, height=150)
    if facet:
        chart = chart.facet(alt.Facet(f"{facet}:N", title=None, sort=list(dict.fromkeys(table[facet]))), columns=columns)
    return chart.properties(title=alt.TitleParams(title, anchor="start"))


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
