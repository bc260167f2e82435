"""Charts several chapters share: accuracy curves, accuracy by k-cutoff, coverage by k, sweeps."""
from __future__ import annotations

import altair as alt
import pandas as pd

from covlib.base.errors import CovlibError
from covlib.figures.style import TYPE_COLORS, _type_scale


def coverage_by_k_chart(table: pd.DataFrame, title: str = "Share of test items k-covered, per test type",
                        reference: dict[int, float] | None = None, legend_title: str = "test type") -> alt.LayerChart:
    """Coverage (percent) against k, one line per test type; ``reference`` adds the paper's type_0 curve."""
    data = table.assign(percent=table["covered"] * 100)
    types = data["type"].drop_duplicates().tolist()
    lines = alt.Chart(data).mark_line(point=True, strokeWidth=2).encode(
        alt.X("k:O", title="k (shared contexts required for equivalence)", axis=alt.Axis(labelAngle=0)),
        alt.Y("percent:Q", title="covered (%)", scale=alt.Scale(domain=[0, 100])),
        alt.Color("type:N", title=legend_title, scale=_type_scale(types), sort=types),
        tooltip=["type", "k", alt.Tooltip("percent:Q", format=".1f"), "n"],
    )
    layers = [lines]
    if reference:
        ref = pd.DataFrame({"k": list(reference), "percent": list(reference.values()), "source": "paper (type_0)"})
        layers.append(alt.Chart(ref).mark_point(shape="cross", size=90, color="black").encode(
            alt.X("k:O"), alt.Y("percent:Q"), alt.Shape("source:N", title=None), tooltip=["k", "percent"]))
    return alt.layer(*layers).properties(width=420, height=260, title=alt.TitleParams(title, anchor="start"))


def accuracy_curves_chart(metrics: pd.DataFrame, series: dict[str, str], title: str,
                          colors: dict[str, str] | None = None, chance: float | None = None) -> alt.LayerChart:
    """Accuracy over training steps, one line per ``series`` (label -> metric column of load_metrics).

    ``chance`` draws a dashed line at the accuracy of guessing (1/N).
    """
    present = {label: col for label, col in series.items() if col in metrics}
    long = metrics[["step", *present.values()]].rename(columns={v: k for k, v in present.items()}).melt(
        id_vars="step", var_name="series", value_name="accuracy").dropna()
    labels = list(present)
    palette = colors or TYPE_COLORS
    scale = alt.Scale(domain=labels, range=[palette.get(lab, "#1565c0") for lab in labels])
    lines = alt.Chart(long).mark_line(strokeWidth=2.2).encode(
        alt.X("step:Q", title="training step"),
        alt.Y("accuracy:Q", title="test accuracy", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")),
        alt.Color("series:N", title=None, scale=scale, sort=labels),
        tooltip=["series", "step", alt.Tooltip("accuracy:Q", format=".3f")],
    )
    layers = [lines]
    if chance is not None:
        rule = pd.DataFrame({"accuracy": [chance], "label": [f"chance (1/N = {chance:.3f})"]})
        layers.append(alt.Chart(rule).mark_rule(color="black").encode(
            alt.Y("accuracy:Q"), tooltip=["label"],
            strokeDash=alt.StrokeDash("label:N", title=None, scale=alt.Scale(range=[[5, 4]]),
                                      legend=alt.Legend(orient="bottom"))))
    return alt.layer(*layers).properties(width=440, height=260, title=alt.TitleParams(title, anchor="start"))


def accuracy_by_cutoff_chart(frame: pd.DataFrame, title: str = "Accuracy rises with the k-cutoff (numbers: test items)",
                             y_title: str = "final accuracy") -> alt.LayerChart:
    """Accuracy of type_0 items against their k-cutoff (bars), with item counts as labels."""
    base = alt.Chart(frame).encode(alt.X("k_cutoff:O", title="k-cutoff of the type_0 test item",
                                         axis=alt.Axis(labelAngle=0)))
    extra = [c for c in frame.columns if c.startswith("first_step")]
    bars = base.mark_bar(color="#2e7d32").encode(
        alt.Y("accuracy:Q", title=y_title, scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")),
        tooltip=["k_cutoff", "n", alt.Tooltip("accuracy:Q", format=".3f"), *extra])
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
