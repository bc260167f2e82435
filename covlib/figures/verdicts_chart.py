"""The verdicts at a glance (chapters 4 and 7, and the README): every exponent against the paper's value and its
equivalence band, and every comparative claim against zero, each with its 90% and 95% intervals, coloured by the
verdict the rule of chapter 4 gave it (the tables beside it: covlib.figures.reproduction)."""
from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from covlib.analyses.equivalence import EQUIVALENCE_MARGIN, verdict_words
from covlib.figures.reproduction import series_name
from covlib.figures.style import pending_chart
from covlib.search.reproduction import CLAIMS, Reproduction

# one colour per outcome, whatever the rule calls it: borne out, open, against the paper
VERDICT_COLORS = {"reproduced": "#2e7d32", "holds (same sign)": "#2e7d32", "inconclusive": "#757575",
                  "differs": "#c62828", "contradicted (opposite sign)": "#c62828"}
PANEL_WIDTH = 400
LABEL_WIDTH = 290  # both panels' row labels take this width, so that their plots line up
ROW_HEIGHT = 26
COLUMNS = ["label", "estimate", "ci90_low", "ci90_high", "ci95_low", "ci95_high", "paper", "band_low", "band_high",
           "verdict"]


def exponent_rows(rep: Reproduction, only: tuple[str, ...] | None = None,
                  margin: float = EQUIVALENCE_MARGIN) -> pd.DataFrame:
    """One row per published exponent (or those named in ``only``): the book's estimate, its intervals, the
    paper's value and the band a reproduction must fall in."""
    if not len(rep.verdicts):  # no published exponent in the table yet
        return pd.DataFrame(columns=COLUMNS).astype({"estimate": float})
    v = rep.verdicts if only is None else rep.verdicts[rep.verdicts["series"].isin(only)]
    return pd.DataFrame({
        "label": v["series"].map(series_name), "estimate": v["c"], "ci90_low": v["ci90_low"],
        "ci90_high": v["ci90_high"], "ci95_low": v["ci95_low"], "ci95_high": v["ci95_high"], "paper": v["paper"],
        "band_low": v["paper"] - margin, "band_high": v["paper"] + margin, "verdict": v["verdict"].map(verdict_words),
    }).reset_index(drop=True)


def claim_rows(rep: Reproduction, only: tuple[str, ...] | None = None,
               margin: float = EQUIVALENCE_MARGIN) -> pd.DataFrame:
    """One row per comparative claim (or those named in ``only``): the book's difference, its intervals, the
    paper's difference (0 for an equality claim) and, for an equality claim, its band."""
    claims = rep.claims.set_index("claim") if len(rep.claims) else pd.DataFrame()
    rows = []
    for claim in CLAIMS:
        if (only is not None and claim.name not in only) or claim.name not in claims.index:
            continue
        r = claims.loc[claim.name]
        equal = not claim.sign
        rows.append({"label": claim.text.split(" (")[0], "estimate": r["difference"], "ci90_low": r["ci90_low"],
                     "ci90_high": r["ci90_high"], "ci95_low": r["ci95_low"], "ci95_high": r["ci95_high"],
                     "paper": 0.0 if equal else claim.paper_gap,
                     "band_low": -margin if equal else np.nan, "band_high": margin if equal else np.nan,
                     "verdict": verdict_words(r["verdict"])})
    return pd.DataFrame(rows, columns=COLUMNS).astype({"estimate": float})


def _panel(rows: pd.DataFrame, title: str, subtitle: str, axis_title: str, zero_line: bool,
           shown: list[str]) -> alt.LayerChart:
    missing = list(rows.loc[~np.isfinite(rows["estimate"]), "label"])
    if missing:
        subtitle += f". No estimate yet, not drawn: {', '.join(missing)}"
    rows = rows[np.isfinite(rows["estimate"])]
    order = list(rows["label"])
    y = alt.Y("label:N", sort=order, title=None,
              axis=alt.Axis(labelLimit=LABEL_WIDTH, minExtent=LABEL_WIDTH, labelFontSize=12))
    color = alt.Color("verdict:N", title="verdict",
                      scale=alt.Scale(domain=list(VERDICT_COLORS), range=list(VERDICT_COLORS.values())),
                      legend=alt.Legend(orient="bottom", values=shown))
    tooltip = [alt.Tooltip("label:N", title="what"), alt.Tooltip("estimate:Q", title="book", format=".2f"),
               alt.Tooltip("ci90_low:Q", title="90% from", format=".2f"),
               alt.Tooltip("ci90_high:Q", title="90% to", format=".2f"),
               alt.Tooltip("ci95_low:Q", title="95% from", format=".2f"),
               alt.Tooltip("ci95_high:Q", title="95% to", format=".2f"),
               alt.Tooltip("paper:Q", title="paper", format=".2f"), alt.Tooltip("verdict:N")]
    lows = rows[["ci95_low", "estimate", "paper", "band_low"]].min(axis=1, skipna=True)
    highs = rows[["ci95_high", "estimate", "paper", "band_high"]].max(axis=1, skipna=True)
    span = (float(np.nanmin(lows)) - 0.1, float(np.nanmax(highs)) + 0.1)
    scale = alt.Scale(domain=span, nice=False, zero=False)
    x = alt.X("ci95_low:Q", title=axis_title, scale=scale)
    base = alt.Chart(rows)
    band = base.transform_filter("isValid(datum.band_low)").mark_bar(
        color="#bdbdbd", opacity=0.45, height=ROW_HEIGHT - 6).encode(
        x=alt.X("band_low:Q", scale=scale, title=axis_title), x2="band_high:Q", y=y)
    wide = base.transform_filter("isValid(datum.ci95_low)").mark_rule(strokeWidth=1.5).encode(
        x=x, x2="ci95_high:Q", y=y, color=color, tooltip=tooltip)
    narrow = base.transform_filter("isValid(datum.ci90_low)").mark_rule(strokeWidth=6, opacity=0.8).encode(
        x=alt.X("ci90_low:Q"), x2="ci90_high:Q", y=y, color=color, tooltip=tooltip)
    dot = base.mark_point(filled=True, size=70, stroke="white", strokeWidth=1, opacity=1).encode(
        x=alt.X("estimate:Q"), y=y, color=color, tooltip=tooltip)
    paper = base.transform_filter("isValid(datum.paper)").mark_tick(
        color="black", thickness=2, size=ROW_HEIGHT - 4).encode(x=alt.X("paper:Q"), y=y, tooltip=tooltip)
    layers = [band, wide, narrow, paper, dot]
    if zero_line:
        zero = alt.Chart(pd.DataFrame({"zero": [0.0]})).mark_rule(strokeDash=[4, 3], color="#424242").encode(
            x="zero:Q")
        layers.insert(1, zero)
    title_params = alt.TitleParams(title, anchor="start", subtitle=[subtitle])
    return alt.layer(*layers, title=title_params).properties(width=PANEL_WIDTH, height=ROW_HEIGHT * len(rows))


def verdicts_chart(rep: Reproduction, series: tuple[str, ...] | None = None, claims: tuple[str, ...] | None = None,
                   margin: float = EQUIVALENCE_MARGIN) -> alt.TopLevelMixin:
    """The exponents (the series named, or every published one) and the comparative claims (those named, or all),
    each as its estimate with a thick 90% and a thin 95% interval, beside the paper's value (a black tick) and,
    where the rule reads one, the band of ± ``margin`` a reproduction must fall in. What has no estimate yet is
    named under its panel's title, not drawn."""
    exponent_table, claim_table = exponent_rows(rep, series, margin), claim_rows(rep, claims, margin)
    if not np.isfinite(exponent_table["estimate"]).any():
        return pending_chart("The verdicts at a glance", "covlib scaling search (data/scaling/COMMANDS.txt)",
                             lead="no exponent has an estimate yet; the book's searches give them with")
    given = set(exponent_table["verdict"]) | set(claim_table["verdict"])
    shown = [v for v in VERDICT_COLORS if v in given]  # the legend names the verdicts drawn, in one order
    panels = [_panel(
        exponent_table, "The exponents against the paper's",
        "dot: the book's c; thick bar: its 90% interval, thin bar: 95%; black tick: the paper's c; grey band: the "
        f"paper's ± {margin:.2f}. Reproduced: the thick bar inside the band; differs: the thin bar clear of the tick "
        "and the dot outside the band", "exponent c (required data grows as N^c)", zero_line=False, shown=shown)]
    if np.isfinite(claim_table["estimate"]).any():
        panels.append(_panel(
            claim_table, "The paper's comparative claims, as differences of the book's exponents",
            "black tick: the paper's difference. A directional claim holds when its thin bar (95%) lies on the "
            f"tick's side of 0; an equality claim (grey band: 0 ± {margin:.2f}) is judged as an exponent is",
            "difference of exponents", zero_line=True, shown=shown))
    return alt.vconcat(*panels, spacing=28).resolve_scale(color="shared", x="independent")
