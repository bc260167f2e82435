"""Charts several chapters share: accuracy curves, accuracy by k-cutoff, coverage by k, sweeps."""
from __future__ import annotations

import altair as alt
import pandas as pd

from covlib.base.errors import CovlibError
from covlib.figures.style import TYPE_COLORS, _type_scale, zoom


def coverage_by_k_chart(table: pd.DataFrame, title: str = "Share of test items k-covered, per test type",
                        reference: dict[int, float] | None = None, legend_title: str = "test type",
                        k_slider: int | None = None, note: str | None = None, y_from: float = 0) -> alt.LayerChart:
    """Coverage (percent) against k, one line per test type; ``reference`` adds the paper's type_0 curve, and
    ``note`` a subtitle (say, that two lines coincide, so that a reader does not look for the hidden one).
    ``y_from`` starts the axis above 0 (its title says so), for lines that all lie near 100%.

    ``k_slider`` (a k, e.g. 3) adds a slider over k that starts there: a vertical line marks the chosen k and each
    type's share covered at it is written beside its point."""
    data = table.assign(percent=table["covered"] * 100)
    types = data["type"].drop_duplicates().tolist()
    x = alt.X("k:O", title="k (shared contexts required for equivalence)", axis=alt.Axis(labelAngle=0))
    color = alt.Color("type:N", title=legend_title, scale=_type_scale(types), sort=types)
    lines = alt.Chart(data).mark_line(point=alt.OverlayMarkDef(size=50), strokeWidth=2).encode(
        x, alt.Y("percent:Q", title="covered (%)" if not y_from else f"covered (%), axis from {y_from:g}%",
                 scale=alt.Scale(domain=[y_from, 100])), color,
        tooltip=[alt.Tooltip("type:N", title=legend_title), alt.Tooltip("k:O", title="k"),
                 alt.Tooltip("percent:Q", title="covered (%)", format=".1f"),
                 alt.Tooltip("n:Q", title="test items", format=",d")],
    )
    layers = [lines]
    if reference:
        ref = pd.DataFrame({"k": list(reference), "percent": list(reference.values()), "source": "paper (type_0)"})
        layers.append(alt.Chart(ref).mark_point(shape="cross", size=90, color="black").encode(
            alt.X("k:O"), alt.Y("percent:Q"), alt.Shape("source:N", title=None),
            tooltip=[alt.Tooltip("source:N", title="series"), alt.Tooltip("k:O", title="k"),
                     alt.Tooltip("percent:Q", title="covered (%)", format=".1f")]))
    # a caller's note says it; without one, the chart names any lines it hides (closer than a line is wide: about
    # a hundredth of the axis)
    lines = [note] if note else hidden_line_notes(data, "type", "percent", within=(100 - y_from) / 100)
    if k_slider is not None:  # drawn first, so that they never cover a point's tooltip
        layers = _chosen_k_layers(data, x, color, k_slider) + layers
        lines.append("vertical line: the k chosen with the slider below the live chart, each type's share written "
                     "there")
    subtitle = lines[0] if len(lines) == 1 else lines or alt.Undefined
    return alt.layer(*layers).properties(width=420, height=260,
                                         title=alt.TitleParams(title, subtitle=subtitle, anchor="start"))


def coinciding_note(data: pd.DataFrame, series: str, value: str, x: str = "k", within: float = 1.0) -> str | None:
    """A subtitle line naming the series drawn on top of each other (``value``, in percentage points, within
    ``within`` of each other at every ``x``: on a 0-100 axis, closer than a line is wide), so that a reader does not
    look for a line the chart hides; None when every series shows."""
    curves = data.pivot_table(index=series, columns=x, values=value, sort=False)
    hidden = [[str(n) for n in g] for g in _coinciding_groups(curves, within) if len(g) > 1]
    if not hidden:
        return None
    return "; ".join(f"{', '.join(g[:-1])} and {g[-1]}" for g in hidden) + \
        f" lie within {within:g} point of each other at every {x}: one line hides the other"


def _coinciding_groups(curves: pd.DataFrame, within: float) -> list[list]:
    """Series (rows of ``curves``) grouped with the first earlier one they lie within ``within`` of at every x."""
    groups: list[list] = []
    for name, curve in curves.iterrows():
        same = next((g for g in groups if ((curves.loc[g[0]] - curve).abs() <= within).all()), None)
        if same is None:
            groups.append([name])
        else:
            same.append(name)
    return groups


def hidden_line_notes(data: pd.DataFrame, series: str, value: str, x: str = "k", within: float = 1.0) -> list[str]:
    """The subtitle lines that name every line a chart hides: under another everywhere (coinciding_note), or from
    the first ``x`` until they part (overlapping_start_note); empty when every line shows."""
    return [n for n in (coinciding_note(data, series, value, x, within),
                        overlapping_start_note(data, series, value, x, within)) if n]


def overlapping_start_note(data: pd.DataFrame, series: str, value: str, x: str = "k", within: float = 1.0) -> str | None:
    """A subtitle line naming pairs of series that lie on each other from the first ``x`` on and part later (one
    line hides the other up to that ``x``); pairs that coincide everywhere are coinciding_note's. None if none."""
    curves = data.pivot_table(index=series, columns=x, values=value, sort=False)
    # one name per group of lines that coincide everywhere: the others are hidden under it all along
    names, pairs = [g[0] for g in _coinciding_groups(curves, within)], []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            close = ((curves.loc[a] - curves.loc[b]).abs() <= within).tolist()
            shared = close.index(False) if False in close else len(close)
            if 2 <= shared < len(close):  # one shared point is a crossing, not a hidden line
                pairs.append(f"{a} and {b} up to {x} = {curves.columns[shared - 1]}")
    if not pairs:
        return None
    return "; ".join(pairs) + f" lie within {within:g} point of each other: one line hides the other there"


def _chosen_k_layers(data: pd.DataFrame, x: alt.X, color: alt.Color, start: int) -> list[alt.Chart]:
    """A slider over k (starting at ``start``), a rule at the chosen k, and each series' value written there."""
    ks = sorted(data["k"].unique().tolist())
    k = alt.param(name="chosen_k", value=int(min(max(start, ks[0]), ks[-1])),
                  bind=alt.binding_range(min=int(ks[0]), max=int(ks[-1]), step=1, name="k: "))
    at_k = alt.Chart(data).transform_filter(alt.datum.k == k)
    rule = at_k.transform_aggregate(groupby=["k"], n_series="count()").mark_rule(
        color="#555", strokeDash=[4, 3]).encode(x).add_params(k)
    labels = at_k.mark_text(align="left", dx=7, fontSize=11, fontWeight="bold").encode(
        x, alt.Y("percent:Q"), color, text=alt.Text("percent:Q", format=".0f"))
    return [rule, labels]


def accuracy_curves_chart(metrics: pd.DataFrame, series: dict[str, str], title: str,
                          colors: dict[str, str] | None = None, chance: float | None = None,
                          width: int = 440) -> alt.LayerChart:
    """Accuracy over training steps, one line per ``series`` (label -> metric column of load_metrics).

    ``chance`` draws a dashed line at the accuracy of guessing (1/N).
    """
    present = {label: col for label, col in series.items() if col in metrics}
    long = metrics[["step", *present.values()]].rename(columns={v: k for k, v in present.items()}).melt(
        id_vars="step", var_name="series", value_name="accuracy").dropna()
    labels = list(present)
    palette = colors or TYPE_COLORS
    scale = alt.Scale(domain=labels, range=[palette.get(lab, "#1565c0") for lab in labels])
    base = alt.Chart(long).encode(
        alt.X("step:Q", title="training step"),
        alt.Y("accuracy:Q", title="test accuracy", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")),
        alt.Color("series:N", title=None, scale=scale, sort=labels,
                  legend=alt.Legend(symbolType="stroke", orient="bottom", columns=2, labelLimit=300)))
    # invisible points carry the tooltip: a line's own tooltip would show its first point wherever it is hovered.
    # They are a layer of their own, not the line's point overlay: JupyterLab's Vega-Lite 5 gives the zoom
    # parameter to both parts of such a line and fails ("Duplicate signal name"; see covlib.figures.live).
    lines = base.mark_line(strokeWidth=2.2).encode(tooltip=[alt.Tooltip("series:N", title="curve")]).add_params(
        zoom(["x"]))
    points = base.mark_point(opacity=0, size=60).encode(
        tooltip=[alt.Tooltip("series:N", title="curve"), alt.Tooltip("step:Q", title="training step", format=","),
                 alt.Tooltip("accuracy:Q", title="accuracy", format=".1%")])
    layers = [lines, points]
    if chance is not None:  # on top, so that a curve at chance does not hide it (it has a tooltip of its own)
        rule = pd.DataFrame({"accuracy": [chance], "label": [f"chance (1/N = {chance:.3f})"]})
        layers.append(alt.Chart(rule).mark_rule(color="black").encode(
            alt.Y("accuracy:Q"), tooltip=[alt.Tooltip("label:N", title="line")],
            strokeDash=alt.StrokeDash("label:N", title=None, scale=alt.Scale(range=[[5, 4]]),
                                      legend=alt.Legend(orient="bottom"))))
    return alt.layer(*layers).properties(width=width, height=260, title=alt.TitleParams(title, anchor="start"))


def accuracy_by_cutoff_chart(frame: pd.DataFrame, title: str = "Accuracy rises with the k-cutoff (numbers: test items)",
                             y_title: str = "final accuracy") -> alt.LayerChart:
    """Accuracy of type_0 items against their k-cutoff (bars), with item counts as labels."""
    base = alt.Chart(frame).encode(alt.X("k_cutoff:O", title="k-cutoff of the type_0 test item",
                                         axis=alt.Axis(labelAngle=0)))
    extra = [c for c in frame.columns if c.startswith("first_step")]
    bars = base.mark_bar(color="#2e7d32").encode(
        alt.Y("accuracy:Q", title=y_title, scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")),
        tooltip=[alt.Tooltip("k_cutoff:O", title="k-cutoff"), alt.Tooltip("n:Q", title="test items", format=",d"),
                 alt.Tooltip("accuracy:Q", title=y_title, format=".1%"),
                 *[alt.Tooltip(f"{c}:Q", title=c.replace("_", " ")) for c in extra]])
    text = base.mark_text(dy=-6, fontSize=11).encode(alt.Y("accuracy:Q"), text=alt.Text("n:Q", format=",d"))
    return alt.layer(bars, text).properties(width=420, height=240, title=alt.TitleParams(title, anchor="start"))


def sweep_chart(frame: pd.DataFrame, x: str, y: str, color: str | None = None) -> alt.Chart:
    """A metric of a sweep against one parameter (one line per value of ``color``), done runs only."""
    data = frame[frame["status"] == "done"] if "status" in frame else frame
    missing = [c for c in (x, y, color) if c and c not in data.columns]
    if missing:
        raise CovlibError(f"sweep table has no column {missing[0]!r}; columns are: {', '.join(map(str, data.columns))}")
    cols = [c for c in (x, y, color) if c]
    enc = {"x": alt.X(f"{x}:Q"), "y": alt.Y(f"{y}:Q"), "tooltip": cols}
    if color:
        enc["color"] = alt.Color(f"{color}:N")
    return alt.Chart(data[cols]).mark_line(point=True).encode(**enc).properties(width=420, height=260)
