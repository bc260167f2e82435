"""The explorer of every searched cell and its probes (an interactive altair chart)."""
from __future__ import annotations

from collections.abc import Mapping

import altair as alt
import numpy as np
import pandas as pd

from covlib.chapters.ch04_how_much_data.searches import experiment_probes
from covlib.figures.style import zoom
from covlib.search.summary import bracket_pair

PANEL = 250  # each of the explorer's two panels (px): side by side, with their axes, they fit the page
STATUS_COLORS = {"bracketed": "#1565c0", "searching": "#ef6c00", "unreachable": "#c62828"}


def experiment_label(name: str, experiment: Mapping) -> str:
    """How the explorer's dropdown names an experiment: its name and model, e.g. "twohop (L4-d128)"."""
    return f"{name} ({experiment['model']})"


def explorer_frames(summaries: Mapping[str, pd.DataFrame], experiments: Mapping[str, Mapping],
                    probes: pd.DataFrame, threshold: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The explorer's data: one row per searched cell (with the experiment's label, its estimate or, unfinished,
    the largest n probed) and one row per probe of those cells (its outcome in words)."""
    cells, rows = [], []
    for name, summary in summaries.items():
        if not len(summary):
            continue
        label = experiment_label(name, experiments[name])
        own = experiment_probes(probes, experiments[name]).assign(experiment=label)
        own = own[own.set_index(["N", "seed"]).index.isin(summary.set_index(["N", "seed"]).index)]
        largest = own.groupby(["N", "seed"])["n_train"].max()
        cell = summary.assign(experiment=label)
        cell["shown_n"] = cell["n_req"].astype(float).fillna(
            pd.Series([largest.get((n, s), np.nan) for n, s in zip(cell["N"], cell["seed"])], index=cell.index))
        cells.append(cell[["experiment", "task", "model", "N", "seed", "status", "n_req", "low", "high", "shown_n",
                           "probes"]])
        rows.append(own)
    if not cells:
        return pd.DataFrame(), pd.DataFrame()
    cell_frame = pd.concat(cells, ignore_index=True).astype({"low": float, "high": float, "n_req": float})
    probe_frame = pd.concat(rows, ignore_index=True)
    probe_frame["outcome"] = np.where(probe_frame["success"], f"reached {threshold:.0%}", f"stopped below {threshold:.0%}")
    probe_frame["cell"] = (probe_frame["experiment"] + ", N = " + probe_frame["N"].astype(str) + ", seed "
                           + probe_frame["seed"].astype(str))
    return cell_frame, probe_frame[["experiment", "cell", "N", "seed", "n_train", "eligible", "best_type0",
                                    "final_train", "outcome", "stopped", "steps", "minutes"]]


def explorer_chart(cells: pd.DataFrame, probes: pd.DataFrame, start: pd.Series | None,
                   threshold: float) -> alt.HConcatChart:
    """Every searched cell of one experiment (chosen in a dropdown), its estimate against N; clicking a cell shows
    its probes beside it: the training-set size against the best ID accuracy the run reached, and whether it got
    to the threshold. ``start`` is the cell shown first (and in print)."""
    labels = list(dict.fromkeys(cells["experiment"]))
    first = cells.iloc[0] if start is None else start
    experiment = alt.param(name="experiment", value=first["experiment"],
                           bind=alt.binding_select(options=labels, name="experiment: "))
    picked = alt.selection_point(name="cell", fields=["experiment", "N", "seed"], on="click", clear="dblclick",
                                 value=[{"experiment": first["experiment"], "N": int(first["N"]),
                                         "seed": int(first["seed"])}])
    x = alt.X("N:Q", title="N (tokens)", scale=alt.Scale(type="log", nice=False, padding=12),
              axis=alt.Axis(values=sorted(int(n) for n in cells["N"].unique())))
    # one domain for every experiment: a chosen experiment may have no bracket yet, and an empty layer has no extent
    sizes = cells[["shown_n", "low", "high"]].to_numpy(dtype=float)
    sizes = sizes[np.isfinite(sizes) & (sizes > 0)]
    y = alt.Y("shown_n:Q", title="training examples",
              scale=alt.Scale(type="log", padding=12, domain=[float(sizes.min()), float(sizes.max())]))
    # unfinished cells have no estimate or bracket: their tooltip says so rather than "null"
    # an unreachable cell has no estimate and never will; a searching one has none until its search ends
    missing = {"n_req": ("none: no training set the pool allows reaches it", "unknown until the search ends"),
               "low": ("none", "none yet"), "high": ("none: no probe succeeded", "none yet")}
    shown = {f: f"isValid(datum.{f}) ? format(datum.{f}, ',.0f') : datum.status == 'unreachable' ? '{never}' : '{yet}'"
             for f, (never, yet) in missing.items()}
    base = alt.Chart(cells).transform_filter(alt.datum.experiment == experiment).transform_calculate(
        **{f"{f}_text": expr for f, expr in shown.items()})
    brackets = base.mark_rule(strokeWidth=2, color="#90a4ae").encode(x, alt.Y("low:Q"), alt.Y2("high:Q"))
    dots = base.mark_point(filled=True).encode(
        x, y, alt.Color("status:N", title="cell", scale=alt.Scale(domain=list(STATUS_COLORS),
                                                                  range=list(STATUS_COLORS.values())),
                        legend=alt.Legend(orient="bottom")),
        size=alt.condition(picked, alt.value(160), alt.value(60)),
        tooltip=[alt.Tooltip("experiment:N", title="experiment"), alt.Tooltip("N:Q", title="N (tokens)"),
                 alt.Tooltip("seed:O", title="seed"), alt.Tooltip("status:N", title="search"),
                 alt.Tooltip("n_req_text:N", title="n_req (estimate)"),
                 alt.Tooltip("low_text:N", title="largest failing n"),
                 alt.Tooltip("high_text:N", title="smallest succeeding n"),
                 alt.Tooltip("probes:Q", title="probes")],
    ).add_params(picked, experiment, zoom())
    left = alt.layer(brackets, dots).properties(width=PANEL, height=260, title=alt.TitleParams(
        "The searched cells (choose an experiment below)", anchor="start",
        subtitle=["dots: n_req, or the largest n probed while unfinished; bars: the bracket", "click a dot for its probes"]))
    chosen = alt.Chart(probes).transform_filter(picked)
    outcome_scale = alt.Scale(domain=[f"reached {threshold:.0%}", f"stopped below {threshold:.0%}"],
                              range=["#2e7d32", "#c62828"])
    runs = chosen.mark_point(filled=True, size=90).encode(
        alt.X("n_train:Q", title="training examples of the probe", scale=alt.Scale(type="log", padding=12),
              axis=alt.Axis(format="~s")),
        alt.Y("best_type0:Q", title="best ID (type_0) accuracy", axis=alt.Axis(format="%"), scale=alt.Scale(domain=[0, 1])),
        alt.Color("outcome:N", title="probe", scale=outcome_scale, legend=alt.Legend(orient="bottom")),
        alt.Shape("outcome:N", title="probe", scale=alt.Scale(domain=outcome_scale.domain, range=["circle", "cross"]),
                  legend=alt.Legend(orient="bottom")),
        tooltip=[alt.Tooltip("cell:N", title="cell"), alt.Tooltip("n_train:Q", title="training examples", format=","),
                 alt.Tooltip("eligible:Q", title="ID-eligible inputs", format=","),
                 alt.Tooltip("best_type0:Q", title="best ID accuracy", format=".1%"),
                 alt.Tooltip("final_train:Q", title="final training accuracy", format=".1%"),
                 alt.Tooltip("outcome:N", title="outcome"), alt.Tooltip("stopped:N", title="stopped by"),
                 alt.Tooltip("steps:Q", title="steps", format=","), alt.Tooltip("minutes:Q", title="minutes", format=".1f")]
    ).add_params(zoom(["x"]))
    bar = alt.Chart(pd.DataFrame({"threshold": [threshold]})).mark_rule(strokeDash=[5, 4], color="#555").encode(
        alt.Y("threshold:Q"))
    name = chosen.transform_aggregate(probes="count()", groupby=["cell"]).mark_text(
        align="right", baseline="bottom", x=PANEL - 4, y=256, fontSize=11, fontWeight="bold").encode(text="cell:N")
    right = alt.layer(runs, bar, name).properties(width=PANEL, height=260, title=alt.TitleParams(
        "Its probes", anchor="start", subtitle=f"dashed: the threshold, {threshold:.0%} ID accuracy"))
    return alt.hconcat(left, right).resolve_scale(color="independent", shape="independent")


def probe_explorer(summaries: Mapping[str, pd.DataFrame], experiments: Mapping[str, Mapping], probes: pd.DataFrame,
                   threshold: float) -> alt.HConcatChart | None:
    """The explorer of every searched cell and its probes (``explorer_chart``), starting at two-hop's cell whose
    bracket is tightest (section 4.6's pair); None while no cell has a probe."""
    cells, probe_rows = explorer_frames(summaries, experiments, probes, threshold)
    if not len(cells):
        return None
    pair = bracket_pair(summaries["twohop"]) if len(summaries.get("twohop", [])) else None
    start = None
    if pair is not None:
        label = experiment_label("twohop", experiments["twohop"])
        start = cells[(cells["experiment"] == label) & (cells["N"] == pair["N"]) & (cells["seed"] == pair["seed"])].iloc[0]
    return explorer_chart(cells, probe_rows, start, threshold)
