"""Required-data charts: n_req against N on log axes, with fitted power laws."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import altair as alt
import numpy as np
import pandas as pd

from covlib.figures.style import LOG, zoom
from covlib.figures.tables import ReaderTable, reader_table


def requirement_frame(summary: pd.DataFrame, label_col: str = "model") -> pd.DataFrame:
    """Bracketed cells as points: N, the estimate, the bracket ends and a series label."""
    done = summary[summary["n_req"].notna()].copy()
    done["series"] = done[label_col].astype(str)
    return done[["N", "seed", "n_req", "low", "high", "series"]]


def fit_line_frame(fits: Mapping[str, dict], Ns: Mapping[str, tuple[float, float]]) -> pd.DataFrame:
    """Each fit a * N^c drawn over its own N range: series -> (N min, N max)."""
    rows = []
    for name, fit in fits.items():
        lo, hi = Ns[name]
        for N in np.geomspace(lo, hi, 20):
            rows.append({"N": float(N), "n": fit["a"] * N ** fit["c"], "series": name})
    return pd.DataFrame(rows)


def fit_with_extrapolation(fit: dict, draw_to: float, label: str = "fit") -> pd.DataFrame:
    """A fitted law a N^c as two lines: solid over the measured N range, dashed (its own legend entry) where
    it is drawn beyond the largest measured N, so an extrapolation is never read as a measurement."""
    name = f"{label}: c = {fit['c']:.2f} (measured N = {fit['N_min']:.0f}-{fit['N_max']:.0f})"
    lines = [fit_line_frame({name: fit}, {name: (fit["N_min"], fit["N_max"])}).assign(dash="fit")]
    if draw_to > fit["N_max"]:
        beyond = f"{label} extrapolated beyond N = {fit['N_max']:.0f}"
        lines.append(fit_line_frame({beyond: fit}, {beyond: (fit["N_max"], draw_to)}).assign(dash="extrapolation"))
    return pd.concat(lines, ignore_index=True)


DODGE = 0.012  # log10 units between the series drawn at one N: about 7 pixels on a chart of N = 10-70


def dodged(points: pd.DataFrame) -> pd.DataFrame:
    """``points`` with ``N_drawn``: N moved a little left or right per series wherever several series were measured
    at one N, so that their dots and bars stand side by side instead of on each other (the tooltip keeps N)."""
    names = list(dict.fromkeys(points["series"]))
    shared = points.groupby("N")["series"].transform("nunique") > 1
    slot = points["series"].map({n: i - (len(names) - 1) / 2 for i, n in enumerate(names)})
    return points.assign(N_drawn=points["N"] * 10 ** (DODGE * slot.where(shared, 0.0)))


def required_data_chart(points: pd.DataFrame, lines: pd.DataFrame, reference: pd.DataFrame | None = None,
                        title: str = "Required data against the token-set size", colors: Mapping[str, str] | None = None,
                        triangles: str = "published reference points") -> alt.LayerChart:
    """Log-log required data: measured brackets (error bars) and estimates (points), fitted and predicted
    lines (``lines``: N, n, series, optional dash), and reference points (``reference``: N, n, series) drawn as
    open triangles, which the subtitle says are ``triangles``."""
    names = list(dict.fromkeys([*points["series"], *lines["series"],
                                *(reference["series"] if reference is not None else [])]))
    palette = ["#1565c0", "#c62828", "#2e7d32", "#6a1b9a", "#ef6c00", "#00838f", "#5d4037", "#9e9e9e"]
    rng = [(colors or {}).get(n, palette[i % len(palette)]) for i, n in enumerate(names)]
    color = alt.Color("series:N", title=None, scale=alt.Scale(domain=names, range=rng), sort=names,
                      legend=alt.Legend(labelLimit=400, orient="bottom", direction="vertical"))
    # ticks at the measured N (a log axis would otherwise drop labels that collide, such as 100 beside 90), and a
    # few pixels of room so that a point at either end of the range is not cut in half
    measured = sorted({int(n) for n in [*points["N"], *(reference["N"] if reference is not None else [])]})
    # and the ends of the lines, where they reach past the measured N (a label crowding its neighbour is left out)
    ends = [round(float(e)) for e in (lines["N"].min(), lines["N"].max())] if len(lines) else []
    ticks = sorted(set(measured) | {e for e in ends if all(abs(np.log10(e / m)) > 0.03 for m in measured)})
    axis = alt.Axis(values=ticks, format="d") if len(ticks) >= 2 else alt.Undefined
    x_scale = alt.Scale(type="log", nice=False, padding=10)
    x = alt.X("N:Q", title="N (tokens)", scale=x_scale, axis=axis)
    series_tip, N_tip = alt.Tooltip("series:N", title="series"), alt.Tooltip("N:Q", title="N (tokens)")
    layers = []
    if len(lines):
        dash = "dash:N" if "dash" in lines else alt.value([1, 0])
        enc = {"strokeDash": alt.StrokeDash(dash, legend=None)} if "dash" in lines else {}
        # invisible points carry the tooltip: a line's own tooltip would show its first point wherever it is hovered
        layers.append(alt.Chart(lines).mark_line(strokeWidth=1.8, opacity=0.85,
                                                 point=alt.OverlayMarkDef(opacity=0, size=60)).encode(
            x, alt.Y("n:Q", scale=LOG, title="training examples"), color, detail="series:N",
            tooltip=[series_tip, alt.Tooltip("N:Q", title="N (tokens)", format=".0f"),
                     alt.Tooltip("n:Q", title="training examples", format=",.0f")], **enc))
    if len(points):
        points = dodged(points)
        base, x_drawn = alt.Chart(points), alt.X("N_drawn:Q", title="N (tokens)", scale=x_scale, axis=axis)
        layers.append(base.mark_rule(strokeWidth=2).encode(x_drawn, alt.Y("low:Q", scale=LOG), alt.Y2("high:Q"),
                                                           color))
        layers.append(base.mark_point(filled=True, size=55).encode(
            x_drawn, alt.Y("n_req:Q", scale=LOG, title="training examples"), color,
            tooltip=[series_tip, N_tip, alt.Tooltip("seed:O", title="seed"),
                     alt.Tooltip("n_req:Q", title="n_req (estimate)", format=",.0f"),
                     alt.Tooltip("low:Q", title="largest failing n", format=",.0f"),
                     alt.Tooltip("high:Q", title="smallest succeeding n", format=",.0f")]))
    if reference is not None and len(reference):
        layers.append(alt.Chart(reference).mark_point(shape="triangle-up", size=70, filled=False, strokeWidth=2).encode(
            x, alt.Y("n:Q", scale=LOG), color,
            tooltip=[series_tip, N_tip, alt.Tooltip("n:Q", title="training examples", format=",.0f")]))
    if layers:
        layers[-1] = layers[-1].add_params(zoom())
    subtitle = []
    if len(points):
        subtitle.append("bars: the bracket (largest failing to smallest succeeding training set); dots: its "
                        "geometric mean, the estimate of n_req")
        if (points["N_drawn"] != points["N"]).any():
            subtitle.append("series measured at the same N are drawn side by side, a little apart")
    if reference is not None and len(reference):
        subtitle.append(f"open triangles: {triangles}")
    return alt.layer(*layers).properties(width=460, height=320, title=alt.TitleParams(
        title, subtitle=subtitle or alt.Undefined, anchor="start"))


def estimates_chart(points: list[pd.DataFrame], title: str) -> alt.LayerChart:
    """Measured brackets and estimates of several series (requirement_frame tables), without lines."""
    return required_data_chart(pd.concat(points, ignore_index=True), pd.DataFrame(columns=["N", "n", "series"]),
                               title=title)


SEARCH_HEADERS = {  # covlib.search.status.search_summary columns -> what a reader reads
    "task": "task", "cot": "CoT", "N": "N (tokens)", "seed": "seed", "status": "status",
    "low": "largest failing size (examples)", "high": "smallest succeeding size (examples)",
    "n_req": "n_req (geometric mean, examples)", "eligible": "ID pool (inputs)",
    "largest_n": "largest size probed (examples)", "best_type0_at_largest": "best ID accuracy there",
    "probes": "probes", "minutes": "CPU minutes"}
COUNT = ",.0f"  # numbers of examples or inputs, whole, with thousands separators
SEARCH_FORMATS = {"seed": "{}", "low": COUNT, "high": COUNT, "n_req": COUNT, "eligible": COUNT, "largest_n": COUNT,
                  "best_type0_at_largest": ".1%", "minutes": ",.1f"}


def search_reader_table(summary: pd.DataFrame, columns: Sequence[str], caption: str | None = None) -> ReaderTable:
    """Search summaries (these ``columns`` of covlib.search.status.search_summary) as a reader reads them: sizes in
    examples, empty cells where a search has no value yet."""
    return reader_table(summary, {c: SEARCH_HEADERS[c] for c in columns},
                        {c: f for c, f in SEARCH_FORMATS.items() if c in columns}, caption=caption)
