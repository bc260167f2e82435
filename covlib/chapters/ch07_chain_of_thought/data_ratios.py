"""The data ratios of chapter 7: what a plain search needs over what a CoT search needs at the same N and seed,
their lower bounds where the plain search never succeeds, and the placeholder bridge's share of the saving."""
from __future__ import annotations

from collections.abc import Mapping

import altair as alt
import numpy as np
import pandas as pd

from covlib.base.paper import COT_DATA_RATIO
from covlib.chapters.ch07_chain_of_thought.searches import COT_ONLY_TASKS, TASKS
from covlib.figures.style import legend_highlight
from covlib.figures.text import share_of
from covlib.search.summary import geometric_mean
from covlib.search.summary import requirement_ratio as summary_ratio


def cot_ratio(plain: pd.DataFrame, cot: pd.DataFrame) -> pd.DataFrame:
    """n_req without CoT over n_req with CoT for every (N, seed) both searches have finished (search
    summaries of covlib.search). Columns N, seed, n_req_plain, n_req_cot, ratio."""
    return summary_ratio(plain, cot, ("plain", "cot"))


def placeholder_share(plain: pd.DataFrame, cot: pd.DataFrame, placeholder: pd.DataFrame) -> pd.DataFrame:
    """How much of CoT's data saving the placeholder bridge (an extra position, no bridge supervision)
    gets at each (N, seed) all three searches finished: share = log(plain / placeholder) / log(plain / cot),
    0 when the placeholder needs what the plain model needs, 1 when it needs what CoT needs. Columns N,
    seed, n_req_plain, n_req_placeholder, n_req_cot, share."""
    saved = summary_ratio(plain, placeholder, ("plain", "placeholder"))
    both = saved.merge(summary_ratio(plain, cot, ("plain", "cot")).drop(columns="n_req_plain"),
                       on=["N", "seed"], suffixes=("_placeholder", "_cot"))
    share = np.log(both["ratio_placeholder"]) / np.log(both["ratio_cot"])
    return both.assign(share=share)[["N", "seed", "n_req_plain", "n_req_placeholder", "n_req_cot", "share"]]


def ratio_lower_bounds(plain: pd.DataFrame, cot: pd.DataFrame) -> pd.DataFrame:
    """Cells where the plain search fails even at the largest size it may try (status "unreachable") while
    the CoT search has an estimate: the plain requirement is above that size, so the ratio is at least
    largest_n / n_req_cot. Search summaries of covlib.search.status.search_summary (they carry largest_n).
    Columns N, seed, plain_fails_at, n_req_cot, ratio_at_least."""
    cols = ["N", "seed", "plain_fails_at", "n_req_cot", "ratio_at_least"]
    if not len(plain) or not len(cot) or "largest_n" not in plain:
        return pd.DataFrame(columns=cols)
    failed = plain[plain["status"] == "unreachable"][["N", "seed", "largest_n"]]
    done = cot.dropna(subset=["n_req"])[["N", "seed", "n_req"]]
    both = failed.merge(done, on=["N", "seed"]).rename(columns={"largest_n": "plain_fails_at", "n_req": "n_req_cot"})
    both = both.astype({"plain_fails_at": float, "n_req_cot": float})
    return (both.assign(ratio_at_least=both["plain_fails_at"] / both["n_req_cot"])[cols]
            .sort_values(["N", "seed"]).reset_index(drop=True))


def ratio_chart(ratios: pd.DataFrame, title: str, band: tuple[float, float] | None = None,
                bounds: pd.DataFrame | None = None) -> alt.LayerChart:
    """n_req without CoT over n_req with CoT per (N, seed) (cot_ratio rows; coloured by ``task``
    when the rows carry one), with an optional shaded band (the paper's 5-10x) and optional lower bounds
    (ratio_lower_bounds rows, drawn as open up-triangles: the true ratio lies above). Clicking a task in the
    legend picks out its points."""
    ratios = ratios if "task" in ratios else ratios.assign(task="")
    picked, opacity = legend_highlight("task")
    color = alt.Color("task:N", title=None, scale=alt.Scale(domain=["twohop", "threehop"], range=["#1565c0", "#c62828"]))
    x = alt.X("N:Q", title="N (tokens)", scale=alt.Scale(zero=False, nice=False, padding=20))
    cell = [alt.Tooltip("task:N", title="task"), alt.Tooltip("N:Q", title="N"), alt.Tooltip("seed:Q", title="seed")]
    layers = []
    measured, at_least = "measured ratio (one seed, one N)", "at least (no success without CoT)"
    shape = alt.Scale(domain=[measured, at_least], range=["circle", "triangle-up"])
    if band:
        layers.append(alt.Chart(pd.DataFrame({"lo": [band[0]], "hi": [band[1]], "what": [f"paper: {band[0]:.0f}-{band[1]:.0f}x"]}))
                      .mark_rect(opacity=0.15).encode(
                          alt.Y("lo:Q"), alt.Y2("hi:Q"), tooltip=[alt.Tooltip("what:N", title="band")],
                          fill=alt.Fill("what:N", title=None, scale=alt.Scale(range=["#6a1b9a"]),
                                        legend=alt.Legend(orient="bottom"))))
    layers.append(alt.Chart(ratios.assign(what=measured)).mark_point(filled=True, size=70).encode(
        x, alt.Y("ratio:Q", title="n_req without CoT / with CoT", scale=alt.Scale(zero=True)), color,
        alt.Shape("what:N", title=None, scale=shape, legend=alt.Legend(orient="bottom")), opacity=opacity,
        tooltip=[*cell, alt.Tooltip("n_req_plain:Q", title="n_req without CoT", format=",.0f"),
                 alt.Tooltip("n_req_cot:Q", title="n_req with CoT", format=",.0f"),
                 alt.Tooltip("ratio:Q", title="ratio", format=".2f")]).add_params(picked))
    if bounds is not None and len(bounds):
        bounds = bounds if "task" in bounds else bounds.assign(task="")
        layers.append(alt.Chart(bounds.assign(what=at_least)).mark_point(size=90, filled=False, strokeWidth=2).encode(
            x, alt.Y("ratio_at_least:Q"), color, alt.Shape("what:N", title=None, scale=shape), opacity=opacity,
            tooltip=[*cell, alt.Tooltip("plain_fails_at:Q", title="no success without CoT even at", format=",.0f"),
                     alt.Tooltip("n_req_cot:Q", title="n_req with CoT", format=",.0f"),
                     alt.Tooltip("ratio_at_least:Q", title="ratio at least", format=".2f")]))
    return alt.layer(*layers).properties(width=320, height=220, title=alt.TitleParams(title, anchor="start"))


def paired_tasks(summaries: Mapping[str, pd.DataFrame]) -> list[str]:
    """The tasks searched both without and with CoT (five-hop only where a preset searches it both ways)."""
    return [task for task in TASKS + COT_ONLY_TASKS if task in summaries and f"{task}_cot" in summaries]


def ratio_tables(summaries: Mapping[str, pd.DataFrame]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The data ratios without / with CoT of every paired task (cot_ratio) and their lower bounds where the plain
    search fails everywhere (ratio_lower_bounds), each with a ``task`` column."""
    tasks = paired_tasks(summaries)
    ratios = pd.concat([cot_ratio(summaries[task], summaries[f"{task}_cot"]).assign(task=task) for task in tasks],
                       ignore_index=True)
    bounds = pd.concat([ratio_lower_bounds(summaries[task], summaries[f"{task}_cot"]).assign(task=task)
                        for task in tasks], ignore_index=True)
    return ratios, bounds


def ratios_by_task(ratios: pd.DataFrame) -> dict[str, float]:
    """The geometric mean of each task's data ratios (NaN for a task without a pair)."""
    return {task: geometric_mean(ratios[ratios["task"] == task]["ratio"]) for task in TASKS + COT_ONLY_TASKS}


def ratio_at_least(bounds: pd.DataFrame, task: str) -> float:
    """The largest lower bound on a task's data ratio, from cells its plain search never succeeds in (NaN if none)."""
    rows = bounds[bounds["task"] == task] if len(bounds) else bounds
    return float(rows["ratio_at_least"].max()) if len(rows) else float("nan")


def ratio_text(ratios: pd.DataFrame, by_task: Mapping[str, float]) -> str:
    """The data ratio of each task in words, beside the paper's 5-10x ("" without any pair)."""
    if not len(ratios):
        return ""
    parts = []
    for task in TASKS + COT_ONLY_TASKS:
        rows = ratios[ratios["task"] == task]
        if not len(rows):
            continue
        spread = (f"geometric mean of {len(rows)} pairs, range {rows['ratio'].min():.1f} to {rows['ratio'].max():.1f})"
                  if len(rows) > 1 else f"one pair, N = {int(rows['N'].iloc[0])})")
        parts.append(f"{task} without CoT needs {by_task[task]:.1f} times the data it needs with CoT (" + spread)
    return ("At equal N, " + "; ".join(parts)
            + f". The authors' CoT models need {COT_DATA_RATIO[0]:.0f} to {COT_DATA_RATIO[1]:.0f} times less.")


def bounds_text(bounds: pd.DataFrame) -> str:
    """The lower bounds on the data ratio in words, where the search without CoT never succeeds."""
    return "Where the search without CoT fails at every size it may try, only a bound is known: " + "; ".join(
        f"{r.task} N = {r.N} (seed {r.seed}) fails even at {r.plain_fails_at:,.0f} examples without CoT and needs "
        f"about {r.n_req_cot:,.0f} with it, a ratio of **at least {r.ratio_at_least:.1f}**"
        for r in bounds.itertuples()) + ". These cells (open triangles) are not in the geometric mean above."


def mean_share(placeholder: pd.DataFrame) -> float:
    """The placeholder's mean share of CoT's data saving (placeholder_share rows; NaN without any)."""
    return float(placeholder["share"].mean()) if len(placeholder) else float("nan")


def placeholder_data_text(placeholder: pd.DataFrame) -> str:
    """The required data without CoT, with the placeholder and with CoT per N, and where the saving comes from."""
    if not len(placeholder):
        return ""
    share = mean_share(placeholder)
    return ("Required data at the same N and seed: " + "; ".join(
        f"N = {int(r['N'])}: without CoT {r['n_req_plain']:,.0f}, placeholder {r['n_req_placeholder']:,.0f}, "
        f"with CoT {r['n_req_cot']:,.0f} (the placeholder goes {share_of(r['share'], 'the way')}, in log data)"
        for _, r in placeholder.iterrows()) + ". "
        + (f"In data, the saving comes from supervising the bridge: the extra position alone saves "
           f"{'none' if placeholder['share'].max() <= 0 else 'little'}; what it does at a fixed budget (above) is "
           "speed learning up, not lower the data a model needs."
           if share < 0.25 else
           "In data, the extra position alone gets most of the saving." if share > 0.75 else
           f"In data, the extra position alone gets {share_of(share, 'the saving')} and supervising "
           "the bridge the rest."))


def ratio_range(ratios: pd.DataFrame) -> dict[str, float]:
    """Each task's data ratios as recorded metrics: the smallest, the largest and how many (N, seed) pairs."""
    out = {}
    for task in TASKS:
        rows = ratios[ratios["task"] == task] if len(ratios) else ratios
        out |= {f"data_ratio_{task}_cot_min": float(rows["ratio"].min()) if len(rows) else float("nan"),
                f"data_ratio_{task}_cot_max": float(rows["ratio"].max()) if len(rows) else float("nan"),
                f"data_ratio_{task}_cot_pairs": int(len(rows))}
    return out


def seeds_paired(ratios: pd.DataFrame, task: str = "twohop") -> int:
    """How many training seeds a task's data ratios (without / with CoT) come from."""
    return int(ratios.loc[ratios["task"] == task, "seed"].nunique()) if len(ratios) else 0


def fivehop_saving(ratios: pd.DataFrame, bounds: pd.DataFrame) -> str:
    """What CoT saves on five-hop at the one N searched without it, as a sentence ("" before that search ends)."""
    pair = ratios[ratios["task"] == "fivehop"] if len(ratios) else ratios
    if len(pair):
        r = pair.iloc[0]
        return (f" Without CoT, five-hop at N = {int(r['N'])} needs {r['n_req_plain']:,.0f} examples, "
                f"{r['ratio']:.1f} times as many.")
    bound = bounds[bounds["task"] == "fivehop"] if len(bounds) else bounds
    if len(bound):
        r = bound.iloc[0]
        return (f" Without CoT, five-hop at N = {int(r['N'])} fails even at {r['plain_fails_at']:,.0f} examples: "
                f"CoT needs at least {r['ratio_at_least']:.1f} times less.")
    return ""
