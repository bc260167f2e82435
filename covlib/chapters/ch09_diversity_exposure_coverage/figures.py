"""The audit's figures (every run and candidate set with a tooltip, zoom on the log axis, a dropdown that picks
out one exposure of the factorial) and its tables as a reader reads them."""
from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from covlib.chapters.ch09_diversity_exposure_coverage.stats import ACC, dose_curve
from covlib.figures.style import pending_chart, zoom
from covlib.figures.tables import ReaderTable, reader_table

FILL = "covlib diversity run --experiments {} --table data/diversity/runs.csv"  # the command that fills a figure
PENDING_LEAD = "not run yet; fill the table with"  # the pending figures name the table, not the cache
ALL_EXPOSURES = "every exposure"

# what a reader sees for the columns of the run table (audit.RUN_COLUMNS)
RUN_TOOLTIP = {"n_unique": ("distinct training examples", ",d"), "exposure": ("passes per example", ",.1f"),
               "steps": ("optimiser steps", ",d"), "seed": ("model seed", "d"), "draw": ("training-set draw", "d"),
               ACC: ("ID test accuracy", ".1%")}


def run_tooltip(*columns: str) -> list[alt.Tooltip]:
    """Tooltips of run-table columns, with a reader's titles and formats."""
    return [alt.Tooltip(f"{c}:Q", title=RUN_TOOLTIP[c][0], format=RUN_TOOLTIP[c][1]) for c in columns]


def pending_figure(title: str, experiments: str) -> alt.Chart:
    """Stands in for a figure whose runs are not in the table yet, naming the command that trains them."""
    return pending_chart(title, FILL.format(experiments), PENDING_LEAD)


def dose_chart(runs: pd.DataFrame, fit: dict | None, budget: int) -> alt.LayerChart:
    """Accuracy of every run against n_unique (log axis, zoom and pan), the level means, and the fitted
    logistic."""
    # padded, not niced: zooming clips marks at the plot's edge, so none may sit on it
    x = alt.X("n_unique:Q", scale=alt.Scale(type="log", nice=False, padding=14),
              title="distinct training examples (n_unique)")
    y = alt.Y(f"{ACC}:Q", title="ID test accuracy (end of budget)", scale=alt.Scale(domain=[0, 1], padding=8),
              axis=alt.Axis(format="%"))
    points = alt.Chart(runs).mark_circle(size=45, opacity=0.6).encode(
        x=x, y=y, tooltip=run_tooltip("n_unique", "seed", ACC, "exposure"))
    means = runs.groupby("n_unique", as_index=False).agg(**{ACC: (ACC, "mean"), "runs": (ACC, "size")})
    layers = [points, alt.Chart(means).mark_point(shape="diamond", size=90, filled=True, color="black").encode(
        x=x, y=y, tooltip=[*run_tooltip("n_unique"), alt.Tooltip(f"{ACC}:Q", title="mean ID test accuracy", format=".1%"),
                           alt.Tooltip("runs:Q", title="runs")])]
    if fit is not None:
        grid = np.geomspace(runs["n_unique"].min(), runs["n_unique"].max(), 80)
        curve = pd.DataFrame({"n_unique": grid, ACC: dose_curve(fit, grid)})
        layers.append(alt.Chart(curve).mark_line(color="firebrick").encode(
            x=x, y=y, tooltip=[alt.Tooltip("n_unique:Q", title="distinct training examples", format=",.0f"),
                               alt.Tooltip(f"{ACC}:Q", title="fitted accuracy", format=".1%")]))
    title = alt.TitleParams(f"Dose-response at a fixed budget of {budget:,} forward passes", anchor="start",
                            subtitle="dots: runs; black diamonds: the mean of each level; red line: the fitted logistic")
    layers[0] = layers[0].add_params(zoom())
    return alt.layer(*layers, title=title).properties(width=420, height=260)


def factorial_chart(runs: pd.DataFrame, escaped: np.ndarray | None = None) -> alt.Chart:
    """Every run of the factorial: accuracy by diversity (columns) and exposure (colour); filled
    points are runs the mixture calls escaped. A dropdown picks out the runs of one exposure."""
    flags = pd.Series(np.asarray(escaped, dtype=bool) if escaped is not None else False, index=runs.index)
    data = runs.assign(escaped=flags, escaped_text=flags.map({True: "yes", False: "no"}),  # not "true" in a tooltip
                       exposure_label=runs["exposure"].map(lambda e: f"{e:g} passes"))
    labels = data.sort_values("exposure")["exposure_label"].drop_duplicates().tolist()
    shown = alt.param(name="exposure_shown", value=ALL_EXPOSURES,
                      bind=alt.binding_select(options=[ALL_EXPOSURES, *labels], name="exposure per example: "))
    return (
        alt.Chart(data, title="Diversity x exposure: every run (filled: escaped the floor)")
        .mark_point(size=55)
        .encode(
            x=alt.X("exposure_label:N", title=None, sort=alt.SortField("exposure"), axis=alt.Axis(labelAngle=-30)),
            y=alt.Y(f"{ACC}:Q", title="ID test accuracy", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")),
            color=alt.Color("exposure_label:N", title="exposure per example", sort=alt.SortField("exposure")),
            fill=alt.condition("datum.escaped", alt.Color("exposure_label:N", sort=alt.SortField("exposure")),
                               alt.value("transparent")),
            opacity=alt.condition(f"exposure_shown == '{ALL_EXPOSURES}' || datum.exposure_label == exposure_shown",
                                  alt.value(1.0), alt.value(0.12)),
            xOffset=alt.XOffset("seed:N"),
            column=alt.Column("n_unique:O", title="distinct training examples"),
            tooltip=[*run_tooltip("n_unique", "exposure", "seed", "steps", ACC),
                     alt.Tooltip("escaped_text:N", title="escaped the floor")],
        )
        .add_params(shown)
        .properties(width=110, height=240)
    )


def spread_chart(spread: pd.DataFrame, chosen: dict[str, int]) -> alt.LayerChart:
    """How much each measure varies between candidate training sets of one size, by threshold; the
    thresholds the contrasts select on are marked."""
    tooltip = [alt.Tooltip("measure:N", title="measure"), alt.Tooltip("threshold:O", title="threshold"),
               alt.Tooltip("mean:Q", title="mean across candidate sets", format=".3f"),
               alt.Tooltip("sd:Q", title="sd across candidate sets", format=".4f")]
    base = alt.Chart(spread).encode(
        x=alt.X("threshold:O", title="threshold (coverage: k; surface: pair count m)"),
        y=alt.Y("sd:Q", title="sd across candidate sets"), color=alt.Color("measure:N"))
    picked = [chosen.get(m) == t for m, t in zip(spread["measure"], spread["threshold"])]
    marks = spread[picked].assign(selects=[f"the {m} contrast selects here" for m in spread[picked]["measure"]])
    ring = alt.Chart(marks).mark_point(size=220, shape="circle", filled=False, color="black").encode(
        x="threshold:O", y="sd:Q", tooltip=[*tooltip[:2], alt.Tooltip("selects:N", title="marked")])
    title = alt.TitleParams("Where the measures tell sets of one size apart", anchor="start",
                            subtitle="open black circles: the threshold each contrast selects on")
    return alt.layer(base.mark_line(point=True).encode(tooltip=tooltip), ring, title=title).properties(
        width=420, height=220)


def candidates_chart(candidates: pd.DataFrame, cov_col: str, surf_col: str, arms: dict[str, dict[str, list[int]]]
                     ) -> alt.Chart:
    """Every candidate set: its exact coverage against its surface measure (zoom and pan); the sets each
    contrast trains on are coloured by arm."""
    label = pd.Series("not selected", index=candidates.index)
    for measure, sides in arms.items():
        for side, draws in sides.items():
            label[candidates["draw"].isin(draws)] = f"{measure}: {side}"
    cov_title = f"exact coverage of the ID test ({cov_col.replace('cov_', 'k = ')})"
    surf_title = f"surface pair measure ({surf_col.replace('surf_', 'm = ')})"
    data = candidates[["draw", cov_col, surf_col, "entropy_t", "entropy_b"]].assign(selected=label.to_numpy())
    return (
        alt.Chart(data, title=f"Candidate training sets of {int(candidates['n_unique'].iloc[0]):,} distinct examples")
        .mark_circle(size=40)
        .encode(
            # padding keeps the extreme sets, the ones the contrasts select, off the plot's edges (a nice domain
            # can end at them)
            x=alt.X(f"{cov_col}:Q", title=cov_title, scale=alt.Scale(zero=False, padding=10)),
            y=alt.Y(f"{surf_col}:Q", title=surf_title, scale=alt.Scale(zero=False, padding=10)),
            color=alt.Color("selected:N", title=None, scale=alt.Scale(
                domain=["not selected", "coverage: low", "coverage: high", "surface: low", "surface: high"],
                range=["#d0d0d0", "#9ecae1", "#08519c", "#fdae6b", "#a63603"])),
            tooltip=[alt.Tooltip("draw:Q", title="training-set draw"), alt.Tooltip("selected:N", title="arm"),
                     alt.Tooltip(f"{cov_col}:Q", title=cov_title, format=".3f"),
                     alt.Tooltip(f"{surf_col}:Q", title=surf_title, format=".3f"),
                     alt.Tooltip("entropy_t:Q", title="entropy of the answers (nats)", format=".3f"),
                     alt.Tooltip("entropy_b:Q", title="entropy of the bridges (nats)", format=".3f")],
        )
        .add_params(zoom())
        .properties(width=380, height=260)
    )


def contrast_chart(runs: pd.DataFrame) -> alt.Chart:
    """The two contrasts at fixed diversity: accuracy of every run per arm, lines joining runs with the
    same model seed."""
    data = runs.assign(arm=runs["selection"].map({"low": "lowest", "high": "highest"}))
    base = alt.Chart(data).encode(
        x=alt.X("arm:N", sort=["lowest", "highest"], title="selected for the measure", axis=alt.Axis(labelAngle=0)),
        # padding keeps the highest and lowest runs off the plot's edges (a nice domain ends at them)
        y=alt.Y(f"{ACC}:Q", title="ID test accuracy", scale=alt.Scale(zero=False, padding=10),
                axis=alt.Axis(format="%")),
        detail="seed:N")
    dots = base.mark_circle(size=60).encode(
        color=alt.Color("arm:N", legend=None),
        tooltip=[alt.Tooltip("experiment:N", title="selected on"), alt.Tooltip("arm:N", title="arm"),
                 *run_tooltip("seed", "draw", "n_unique", ACC),
                 alt.Tooltip("coverage_sel:Q", title="coverage at the selection threshold", format=".3f"),
                 alt.Tooltip("surface_sel:Q", title="surface measure at the selection threshold", format=".3f")])
    return (
        alt.layer(base.mark_line(opacity=0.35, color="gray").encode(tooltip=run_tooltip("seed")), dots)
        .properties(width=160, height=240)
        .facet(column=alt.Column("experiment:N", title="selected on"))
        .properties(title=alt.TitleParams("Same number of distinct examples, chosen at the extremes of one measure", anchor="start",
                                          subtitle="dots: runs; grey lines join the two runs of one model seed"))
    )


# ----------------------------------------------------------------------------- the tables, as a reader reads them

def _threshold_header(column: str) -> str:
    """A coverage_growth column ("coverage k=3", "pairs m=2") as a reader reads it."""
    measure, threshold = column.split(" ")
    if measure == "coverage":
        return f"exact coverage, {threshold.replace('=', ' = ')}"
    return f"surface measure, {threshold.replace('=', ' = ')}"


def growth_table(profile: pd.DataFrame) -> ReaderTable:
    """audit.coverage_growth: both measures of the ID test by one training set of every size."""
    shares = [c for c in profile.columns if c != "n_unique"]
    return reader_table(profile, {"n_unique": "distinct training examples"} | {c: _threshold_header(c) for c in shares},
                        dict.fromkeys(shares, ".1%"), caption="Coverage of the fixed ID test (one draw per size)")


def dose_table(levels: pd.DataFrame) -> ReaderTable:
    """stats.dose_levels: per number of distinct examples, the runs, their exposure and mean accuracy."""
    return reader_table(levels.reset_index(), {
        "n_unique": "distinct training examples", "runs": "runs", "exposure": "passes per example",
        "accuracy": "mean ID test accuracy", "sd": "sd across runs", "coverage_k3": "mean exact 3-coverage"},
        {"exposure": ",.1f", "accuracy": ".1%", "sd": ".1%", "coverage_k3": ".1%"})


def anova_table(anova: pd.DataFrame) -> ReaderTable:
    """stats.factorial_anova: one row per effect, with its partial eta^2 (none for the residual)."""
    return reader_table(anova.reset_index(names="effect"), {
        "effect": "effect", "sum_sq": "sum of squares", "df": "df", "F": "F", "p": "p",
        "partial_eta2": "partial eta^2"},
        {"sum_sq": ".4f", "df": ",.0f", "F": ",.1f", "p": _p_value, "partial_eta2": ".3f"},
        caption="Two-way ANOVA of ID test accuracy (type II)")


def cells_table(cells: pd.DataFrame) -> ReaderTable:
    """stats.cell_bimodality: per factorial cell, its runs, their accuracy and how many escaped the floor."""
    return reader_table(cells, {
        "n_unique": "distinct training examples", "exposure": "passes per example", "runs": "runs",
        "mean": "mean ID test accuracy", "sd": "sd across runs", "escaped": "runs escaped",
        "bimodal": "the cell's runs prefer two modes"},
        {"exposure": "{:g}", "mean": ".1%", "sd": ".1%"})


def exposure_table(effect: pd.DataFrame) -> ReaderTable:
    """stats.exposure_effect: per diversity level, how exposure moves escape and accuracy."""
    shares = ["escaped_share", "escaped_share_low_exposure", "escaped_share_high_exposure", "acc_low_exposure",
              "acc_high_exposure"]
    return reader_table(effect, {
        "n_unique": "distinct training examples", "escaped_share": "runs escaped (every exposure)",
        "escaped_share_low_exposure": "escaped, lowest exposure", "escaped_share_high_exposure": "escaped, highest exposure",
        "acc_low_exposure": "mean accuracy, lowest exposure", "acc_high_exposure": "mean accuracy, highest exposure"},
        dict.fromkeys(shares, ".0%"))


def balance_table(balance: pd.DataFrame, cov_col: str, surf_col: str) -> ReaderTable:
    """audit.arm_balance: the arms differ in the measure they were selected on, not in their make-up."""
    return reader_table(balance, {
        "selected on": "selected on", "arm": "arm", "sets": "sets",
        cov_col: f"mean exact coverage ({cov_col.replace('cov_', 'k = ')})",
        surf_col: f"mean surface measure ({surf_col.replace('surf_', 'm = ')})",
        "entropy_t": "entropy of the answers (nats)", "entropy_b": "entropy of the bridges (nats)"},
        {cov_col: ".2%", surf_col: ".2%", "entropy_t": ".4f", "entropy_b": ".4f"})


def longer_training_table(table: pd.DataFrame) -> ReaderTable:
    """stats.longer_training: a contrast's training sets at the contrast's length and trained longer."""
    return reader_table(table, {
        "selection": "arm", "draw": "training set", "coverage": "exact 3-coverage of the ID test",
        "steps_short": "steps (contrast)", "acc_short": "ID accuracy", "steps_long": "steps (longer)",
        "acc_long": "ID accuracy at the end", "best_long": "best during the longer run",
        "train_long": "training items at the end"},
        {"coverage": ".1%", "steps_short": ",.0f", "acc_short": ".1%", "steps_long": ",.0f", "acc_long": ".1%",
         "best_long": ".1%", "train_long": ".1%"})


def side_by_side_table(frame: pd.DataFrame) -> ReaderTable:
    """stats.side_by_side: the companion study's numbers beside this audit's, each to three significant digits."""
    return reader_table(frame, {c: c for c in frame.columns},
                        dict.fromkeys(["companion study (COGS)", "this book (twohop)"], _three_digits))


def _p_value(p: float) -> str:
    return f"{p:.2g}"


def _three_digits(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:.3g}"


def range_chart(table: pd.DataFrame) -> alt.HConcatChart:
    """Per N: the spread of exact 3-coverage over random training sets of each size (band: 1st to 99th
    percentile, line: mean), the arms the study's selection takes and the directed selector's (points)."""
    data = table.sort_values(["N", "n_unique"]).assign(
        typical_gap=100 * (table.typical_high - table.typical_low),
        directed_gap=100 * (table.directed_high - table.directed_low))
    tips = [alt.Tooltip("N:Q", title="N"), alt.Tooltip("n_unique:Q", title="distinct examples", format=",d"),
            alt.Tooltip("mean:Q", title="mean over random sets", format=".1%"),
            alt.Tooltip("q01:Q", title="1st percentile", format=".1%"),
            alt.Tooltip("q99:Q", title="99th percentile", format=".1%"),
            alt.Tooltip("typical_gap:Q", title="typical arms' gap (points)", format=".1f"),
            alt.Tooltip("directed_gap:Q", title="directed arms' gap (points)", format=".1f"),
            alt.Tooltip("directed_entropy_shift:Q", title="directed sets' make-up shift (sd)", format=".1f")]
    long = data.melt(id_vars=["N", "n_unique"], value_vars=["typical_low", "typical_high", "directed_low",
                                                            "directed_high"], var_name="arm", value_name="coverage")
    long = long.dropna(subset=["coverage"])
    long["selector"] = np.where(long.arm.str.startswith("typical"), "random sets of typical make-up (the study's)",
                                "directed by shared test fragments")
    y = alt.Y("coverage:Q", title="exact 3-coverage of the ID test", axis=alt.Axis(format="%"),
              scale=alt.Scale(domain=[0, 1]))
    charts = []
    for N in sorted(data.N.unique()):
        cell, arms_n = data[data.N == N], long[long.N == N]
        x = alt.X("n_unique:Q", title="distinct training examples", scale=alt.Scale(padding=10))  # whole end points
        band = alt.Chart(cell).mark_area(opacity=0.3, color="steelblue").encode(
            x=x, y=alt.Y("q01:Q", title="exact 3-coverage of the ID test", axis=alt.Axis(format="%"),
                         scale=alt.Scale(domain=[0, 1])), y2="q99:Q", tooltip=tips)
        mean = alt.Chart(cell).mark_line(color="steelblue", point=True).encode(x=x, y="mean:Q", tooltip=tips)
        arms = alt.Chart(arms_n).mark_point(filled=True, size=45, opacity=0.8).encode(
            x=x, y=y, shape=alt.Shape("selector:N", title="arms (low and high)",
                                      legend=alt.Legend(orient="bottom", labelLimit=400)),
            color=alt.Color("selector:N", title="arms (low and high)", scale=alt.Scale(range=["darkorange", "black"])),
            tooltip=[alt.Tooltip("selector:N", title="selector"), alt.Tooltip("arm:N", title="arm"),
                     alt.Tooltip("n_unique:Q", title="distinct examples", format=",d"),
                     alt.Tooltip("coverage:Q", title="mean 3-coverage of the arm", format=".1%")])
        charts.append(alt.layer(band, mean, arms).properties(width=160, height=200, title=f"N = {N}"))  # three fit the page
    return alt.hconcat(*charts).properties(title=alt.TitleParams(
        "How far selection at a fixed size moves exact 3-coverage", anchor="start",
        subtitle="band: 1st to 99th percentile of random sets; line: their mean; points: the arms of two selectors"))


def range_table(table: pd.DataFrame) -> ReaderTable:
    """The range table for the reader: per N and size, random sets' coverage and the two selectors' gaps."""
    data = table.assign(typical_gap=100 * (table.typical_high - table.typical_low),
                        directed_gap=100 * (table.directed_high - table.directed_low))
    columns = {"N": "N", "n_unique": "distinct examples", "candidates": "random sets", "mean": "mean 3-coverage",
               "sd": "sd", "q01": "1st percentile", "q99": "99th percentile",
               "typical_gap": "typical arms' gap (points)", "directed_gap": "directed arms' gap (points)",
               "directed_entropy_shift": "directed make-up shift (sd)"}
    return reader_table(data, columns, {"n_unique": ",.0f", "mean": ".1%", "sd": ".3f", "q01": ".1%", "q99": ".1%",
                                        "typical_gap": ".1f", "directed_gap": ".1f", "directed_entropy_shift": ".1f"},
                        max_rows=20, caption="Exact 3-coverage of the ID test by training sets of one size")
