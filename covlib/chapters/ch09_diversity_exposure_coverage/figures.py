"""The audit's figures."""
from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from covlib.chapters.ch09_diversity_exposure_coverage.stats import ACC, dose_curve
from covlib.figures.style import pending_chart

FILL = "covlib diversity run --experiments {} --table data/diversity/runs.csv"  # the command that fills a figure
PENDING_LEAD = "not run yet; fill the table with"  # the pending figures name the table, not the cache


def pending_figure(title: str, experiments: str) -> alt.Chart:
    """Stands in for a figure whose runs are not in the table yet, naming the command that trains them."""
    return pending_chart(title, FILL.format(experiments), PENDING_LEAD)


def dose_chart(runs: pd.DataFrame, fit: dict | None, budget: int) -> alt.LayerChart:
    """Accuracy of every run against n_unique (log axis), the level means, and the fitted logistic."""
    x = alt.X("n_unique:Q", scale=alt.Scale(type="log"), title="distinct training examples (n_unique)")
    y = alt.Y(f"{ACC}:Q", title="ID test accuracy (end of budget)", scale=alt.Scale(domain=[0, 1]))
    points = alt.Chart(runs).mark_circle(size=45, opacity=0.6).encode(
        x=x, y=y, tooltip=["n_unique", "seed", alt.Tooltip(f"{ACC}:Q", format=".3f"), alt.Tooltip("exposure:Q", format=".0f")])
    means = runs.groupby("n_unique", as_index=False)[ACC].mean()
    layers = [points, alt.Chart(means).mark_point(shape="diamond", size=90, filled=True, color="black").encode(x=x, y=y)]
    if fit is not None:
        grid = np.geomspace(runs["n_unique"].min(), runs["n_unique"].max(), 80)
        curve = pd.DataFrame({"n_unique": grid, ACC: dose_curve(fit, grid)})
        layers.append(alt.Chart(curve).mark_line(color="firebrick").encode(x=x, y=y))
    title = alt.TitleParams(f"Dose-response at a fixed budget of {budget:,} forward passes", anchor="start",
                            subtitle="dots: runs; black diamonds: the mean of each level; red line: the fitted logistic")
    return alt.layer(*layers, title=title).properties(width=420, height=260)


def factorial_chart(runs: pd.DataFrame, escaped: np.ndarray | None = None) -> alt.Chart:
    """Every run of the factorial: accuracy by diversity (columns) and exposure (colour); filled
    points are runs the mixture calls escaped."""
    data = runs.assign(escaped=escaped if escaped is not None else False,
                       exposure_label=runs["exposure"].map(lambda e: f"{e:g} passes"))
    return (
        alt.Chart(data, title="Diversity x exposure: every run (filled: escaped the floor)")
        .mark_point(size=55)
        .encode(
            x=alt.X("exposure_label:N", title=None, sort=alt.SortField("exposure"), axis=alt.Axis(labelAngle=-30)),
            y=alt.Y(f"{ACC}:Q", title="ID test accuracy", scale=alt.Scale(domain=[0, 1])),
            color=alt.Color("exposure_label:N", title="exposure per example", sort=alt.SortField("exposure")),
            fill=alt.condition("datum.escaped", alt.Color("exposure_label:N", sort=alt.SortField("exposure")),
                               alt.value("transparent")),
            xOffset=alt.XOffset("seed:N"),
            column=alt.Column("n_unique:O", title="distinct training examples"),
            tooltip=["n_unique", "exposure", "seed", "steps", alt.Tooltip(f"{ACC}:Q", format=".3f")],
        )
        .properties(width=110, height=240)
    )


def spread_chart(spread: pd.DataFrame, chosen: dict[str, int]) -> alt.LayerChart:
    """How much each measure varies between candidate training sets of one size, by threshold; the
    thresholds the contrasts select on are marked."""
    base = alt.Chart(spread).encode(
        x=alt.X("threshold:O", title="threshold (coverage: k; surface: pair count m)"),
        y=alt.Y("sd:Q", title="sd across candidate sets"), color=alt.Color("measure:N"))
    marks = spread.assign(chosen=[chosen.get(m) == t for m, t in zip(spread["measure"], spread["threshold"])])
    ring = alt.Chart(marks[marks["chosen"]]).mark_point(size=220, shape="circle", filled=False, color="black").encode(
        x="threshold:O", y="sd:Q")
    title = alt.TitleParams("Where the measures tell sets of one size apart", anchor="start",
                            subtitle="open black circles: the threshold each contrast selects on")
    return alt.layer(base.mark_line(point=True), ring, title=title).properties(
        width=420, height=220)


def candidates_chart(candidates: pd.DataFrame, cov_col: str, surf_col: str, arms: dict[str, dict[str, list[int]]]
                     ) -> alt.Chart:
    """Every candidate set: its exact coverage against its surface measure; the sets each contrast
    trains on are coloured by arm."""
    label = pd.Series("not selected", index=candidates.index)
    for measure, sides in arms.items():
        for side, draws in sides.items():
            label[candidates["draw"].isin(draws)] = f"{measure}: {side}"
    data = candidates.assign(selected=label.to_numpy())
    return (
        alt.Chart(data, title=f"Candidate training sets of {int(candidates['n_unique'].iloc[0]):,}")
        .mark_circle(size=40)
        .encode(
            x=alt.X(f"{cov_col}:Q", title=f"exact coverage of the ID test ({cov_col.replace('cov_', 'k = ')})",
                    scale=alt.Scale(zero=False)),
            y=alt.Y(f"{surf_col}:Q", title=f"surface pair measure ({surf_col.replace('surf_', 'm = ')})",
                    scale=alt.Scale(zero=False)),
            color=alt.Color("selected:N", title=None, scale=alt.Scale(
                domain=["not selected", "coverage: low", "coverage: high", "surface: low", "surface: high"],
                range=["#d0d0d0", "#9ecae1", "#08519c", "#fdae6b", "#a63603"])),
            tooltip=["draw", alt.Tooltip(f"{cov_col}:Q", format=".3f"), alt.Tooltip(f"{surf_col}:Q", format=".3f"),
                     alt.Tooltip("entropy_t:Q", format=".3f")],
        )
        .properties(width=380, height=260)
    )


def contrast_chart(runs: pd.DataFrame) -> alt.Chart:
    """The two contrasts at fixed diversity: accuracy of every run per arm, lines joining runs with the
    same model seed."""
    data = runs.assign(arm=runs["selection"].map({"low": "lowest", "high": "highest"}))
    base = alt.Chart(data).encode(
        x=alt.X("arm:N", sort=["lowest", "highest"], title="selected for the measure"),
        y=alt.Y(f"{ACC}:Q", title="ID test accuracy", scale=alt.Scale(zero=False)),
        detail="seed:N")
    return (
        alt.layer(base.mark_line(opacity=0.35, color="gray"), base.mark_circle(size=60).encode(color=alt.Color("arm:N", legend=None)))
        .properties(width=160, height=240)
        .facet(column=alt.Column("experiment:N", title="selected on"))
        .properties(title=alt.TitleParams("Same number of distinct examples, extreme coverage", anchor="start",
                                          subtitle="dots: runs; grey lines join the two runs of one model seed"))
    )
