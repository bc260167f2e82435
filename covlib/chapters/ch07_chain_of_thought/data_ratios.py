"""The data ratios of chapter 7: what a plain search needs over what a CoT search needs at the same N and seed,
their lower bounds where the plain search never succeeds, and the placeholder bridge's share of the saving."""
from __future__ import annotations

from collections.abc import Mapping

import altair as alt
import numpy as np
import pandas as pd
from scipy import stats

from covlib.base.paper import COT_DATA_RATIO
from covlib.chapters.ch07_chain_of_thought.searches import COT_ONLY_TASKS, TASKS
from covlib.figures.give_up_rule import reader_name
from covlib.figures.style import legend_highlight
from covlib.figures.text import count_of, share_of
from covlib.search.experiments import cells_for
from covlib.search.status import search_summary
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
    legend picks out its points. Rows under more than one give-up rule (a ``rule`` column, as from
    ratio_tables_by_rule) get a menu that shows one rule at a time, the first by default."""
    ratios = ratios if "task" in ratios else ratios.assign(task="")
    rules = list(dict.fromkeys(ratios["rule"])) if "rule" in ratios and len(ratios) else []
    picked, opacity = legend_highlight("task")
    color = alt.Color("task:N", title=None, scale=alt.Scale(domain=[*TASKS, *COT_ONLY_TASKS],
                                                            range=["#1565c0", "#c62828", "#2e7d32"]))
    x = alt.X("N:Q", title="N (tokens)", scale=alt.Scale(zero=False, nice=False, padding=20))
    cell = [alt.Tooltip("task:N", title="task"), alt.Tooltip("N:Q", title="N"), alt.Tooltip("seed:Q", title="seed")]
    cell += [alt.Tooltip("rule:N", title="give-up rule")] if "rule" in ratios else []
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
    width, height = 320, 220
    if len(rules) > 1:
        # the rule shown, written in the plot's free corner (ratios are well above 0), so that a saved figure says it
        layers.append(alt.Chart(pd.DataFrame({"rule": rules})).mark_text(
            align="right", baseline="bottom", x=width - 4, y=height - 4, fontSize=11, color="#555")
            .encode(text=alt.Text("label:N")).transform_calculate(label="'under ' + datum.rule"))
    chart = alt.layer(*layers).properties(width=width, height=height, title=alt.TitleParams(title, anchor="start"))
    if len(rules) < 2:
        return chart
    rule = alt.param(name="ratio_rule", value=rules[0], bind=alt.binding_select(options=rules, name="give-up rule: "))
    # the band has no rule and stays; the points, the lower bounds and the label show under the chosen rule only
    for layer in chart.layer[1 if band else 0:]:
        kept = layer.transform if isinstance(layer.transform, list) else []
        layer.transform = [alt.FilterTransform(filter="datum.rule == ratio_rule"), *kept]
    return chart.add_params(rule)


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


def ratio_tables_by_rule(summaries_by_rule: Mapping[str, Mapping[str, pd.DataFrame]]
                         ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """ratio_tables under each give-up rule (keyed by the reader's name of the rule: the search summaries of every
    experiment under that rule), stacked with a ``rule`` column in the mapping's order."""
    tables = {rule: ratio_tables(summaries) for rule, summaries in summaries_by_rule.items()}
    ratios, bounds = (pd.concat([pair[i].assign(rule=rule) for rule, pair in tables.items()], ignore_index=True)
                      for i in (0, 1))
    return ratios, bounds


def under_rule(table: pd.DataFrame, rule: str) -> pd.DataFrame:
    """The rows of a ratio_tables_by_rule table under one rule, as ratio_tables gives them (no ``rule`` column)."""
    return table[table["rule"] == rule].drop(columns="rule").reset_index(drop=True)


def ratios_by_task(ratios: pd.DataFrame) -> dict[str, float]:
    """The geometric mean of each task's data ratios (NaN for a task without a pair)."""
    return {task: geometric_mean(ratios[ratios["task"] == task]["ratio"]) for task in TASKS + COT_ONLY_TASKS}


def ratio_at_least(bounds: pd.DataFrame, task: str) -> float:
    """The largest lower bound on a task's data ratio, from cells its plain search never succeeds in (NaN if none)."""
    rows = bounds[bounds["task"] == task] if len(bounds) else bounds
    return float(rows["ratio_at_least"].max()) if len(rows) else float("nan")


def _ratio_parts(ratios: pd.DataFrame, by_task: Mapping[str, float]) -> list[str]:
    """"two-hop without CoT needs 2.4 times the data it needs with CoT (geometric mean of 8 pairs, ...)" per task."""
    parts = []
    for task in TASKS + COT_ONLY_TASKS:
        rows = ratios[ratios["task"] == task]
        if not len(rows):
            continue
        spread = (f"geometric mean of {len(rows)} pairs, range {rows['ratio'].min():.1f} to {rows['ratio'].max():.1f})"
                  if len(rows) > 1 else f"one pair, N = {int(rows['N'].iloc[0])})")
        parts.append(f"{reader_name(task)} without CoT needs {by_task[task]:.1f} times the data it needs with CoT (" + spread)
    return parts


def ratio_text(ratios: pd.DataFrame, by_task: Mapping[str, float], floor_ratios: pd.DataFrame | None = None,
               floor_label: str = "the step floor") -> str:
    """The data ratio of each task in words, beside the paper's 5-10x ("" without any pair); given
    ``floor_ratios`` (ratio_tables under the step floor), the same under the floor, which can move the CoT
    searches most: their training sets are the smallest, and the authors' rule gives those the fewest steps."""
    if not len(ratios):
        return ""
    text = "At equal N, under the authors' rule, " + "; ".join(_ratio_parts(ratios, by_task)) + "."
    if floor_ratios is not None and len(floor_ratios):
        text += (f" Under {floor_label}, on the cells both searches finished under it: "
                 + "; ".join(_ratio_parts(floor_ratios, ratios_by_task(floor_ratios))) + ".")
    return text + f" The authors' CoT models need {COT_DATA_RATIO[0]:.0f} to {COT_DATA_RATIO[1]:.0f} times less."


def floor_ratio_metrics(floor_ratios: pd.DataFrame) -> dict[str, float]:
    """Each task's data ratio under the step floor as recorded metrics: geometric mean and pairs (NaN and 0
    before any cell has finished under the floor both with and without CoT)."""
    by_task, counts = ratios_by_task(floor_ratios), floor_ratios["task"].value_counts()
    return {key: value for task in TASKS + COT_ONLY_TASKS
            for key, value in ((f"data_ratio_{task}_cot_floor", by_task[task]),
                               (f"data_ratio_{task}_cot_floor_pairs", int(counts.get(task, 0))))}


def bounds_text(bounds: pd.DataFrame) -> str:
    """The lower bounds on the data ratio in words, where the search without CoT never succeeds."""
    return "Where the search without CoT fails at every size it may try, only a bound is known: " + "; ".join(
        f"{reader_name(r.task)} N = {r.N} (seed {r.seed}) fails even at {r.plain_fails_at:,.0f} examples without CoT and needs "
        f"about {r.n_req_cot:,.0f} with it, a ratio of **at least {r.ratio_at_least:.1f}**"
        for r in bounds.itertuples()) + ". These cells (open triangles) are not in the geometric mean above."


def mean_share(placeholder: pd.DataFrame) -> float:
    """The placeholder's mean share of CoT's data saving (placeholder_share rows; NaN without any)."""
    return float(placeholder["share"].mean()) if len(placeholder) else float("nan")


def share_interval(placeholder: pd.DataFrame, level: float = 0.95) -> tuple[float, float]:
    """The t interval of the mean share over the cells (each cell one draw of a share that should not depend on N or
    seed: its spread holds the brackets' imprecision and the seeds'); NaNs with fewer than two cells."""
    if len(placeholder) < 2:
        return float("nan"), float("nan")
    low, high = stats.t.interval(level, len(placeholder) - 1, loc=placeholder["share"].mean(),
                                 scale=stats.sem(placeholder["share"]))
    return float(low), float(high)


def placeholder_evidence(probes: pd.DataFrame, fake_probes: pd.DataFrame, authors: Mapping, floored: Mapping
                         ) -> tuple[int, pd.DataFrame]:
    """The give-up rule the placeholder's saving is read under and placeholder_share's cells under it: the cells of
    ``floored`` (an experiment with a ``give_up_floor``) where its plain, CoT and placeholder searches have all
    finished under that floor, if any has; else those of ``authors`` under the authors' rule."""
    for experiment in (floored, authors):
        floor = int(experiment.get("give_up_floor", 0))
        plain, cot, fake = (
            search_summary(cells_for(experiment["task"], experiment["N"], experiment["seeds"], experiment["model"],
                                     cot=style == "cot", fake_bridge=style == "fake"),
                           fake_probes if style == "fake" else probes, floor)
            for style in ("plain", "cot", "fake"))
        share = placeholder_share(plain, cot, fake)
        if len(share) or experiment is authors:
            return floor, share
    raise AssertionError("unreachable")


# what a conclusion on the placeholder's saving rests on: the seed gap alone moves one cell's ratio by ~1.15x
PLACEHOLDER_MIN_N, PLACEHOLDER_MIN_SEEDS = 3, 2


def placeholder_decides(placeholder: pd.DataFrame) -> bool:
    """Whether the cells all three searches finished span enough values of N and seeds for a conclusion."""
    return (len(placeholder) > 0 and placeholder["N"].nunique() >= PLACEHOLDER_MIN_N
            and placeholder["seed"].nunique() >= PLACEHOLDER_MIN_SEEDS)


def placeholder_metrics(placeholder: pd.DataFrame, give_up_floor: int) -> dict[str, float | int]:
    """placeholder_saving_share (the mean share of CoT's data saving) with its _n_values, _seeds, _min, _max and
    the give-up rule of the searches it comes from (_give_up_floor; 0 is the authors')."""
    key = "placeholder_saving_share"
    out = {key: mean_share(placeholder), f"{key}_n_values": int(placeholder["N"].nunique()) if len(placeholder) else 0,
           f"{key}_seeds": int(placeholder["seed"].nunique()) if len(placeholder) else 0,
           f"{key}_give_up_floor": int(give_up_floor)}
    if len(placeholder):
        low, high = share_interval(placeholder)
        out |= {f"{key}_min": float(placeholder["share"].min()), f"{key}_max": float(placeholder["share"].max()),
                f"{key}_ci_low": low, f"{key}_ci_high": high}
    return out


def placeholder_verdict(placeholder: pd.DataFrame) -> str:
    """Where CoT's data saving comes from, by the spread of the shares over every finished cell ("" when the cells
    cannot decide: placeholder_decides)."""
    if not placeholder_decides(placeholder):
        return ""
    low, high = placeholder["share"].min(), placeholder["share"].max()
    if high < 0.25:
        return "the saving comes from supervising the bridge: the extra position alone saves little or none"
    if low > 0.75:
        return "the extra position alone gets most of the saving"
    # signed shares: a negative one is a cell where the placeholder needed more data than the plain model
    ci_low, ci_high = share_interval(placeholder)
    return (f"the extra position alone gets between {low:+.0%} and {high:+.0%} of the saving in a cell (mean "
            f"{mean_share(placeholder):+.0%}, 95% interval {ci_low:+.0%} to {ci_high:+.0%}), and supervising the "
            "bridge the rest")


def placeholder_data_text(placeholder: pd.DataFrame, rule: str, seed_gap: float, command: str = "") -> str:
    """The required data without CoT, with the placeholder and with CoT per cell under ``rule`` (in words), and what
    they can say: a conclusion only from PLACEHOLDER_MIN_N values of N and PLACEHOLDER_MIN_SEEDS seeds, else how far
    the placeholder's requirement lies from the plain model's against the seed gap (``seed_gap``, e.g. 1.15)."""
    if not len(placeholder):
        return ""
    cells = "; ".join(
        f"N = {int(r['N'])}, seed {int(r['seed'])}: without CoT {r['n_req_plain']:,.0f}, placeholder "
        f"{r['n_req_placeholder']:,.0f}, with CoT {r['n_req_cot']:,.0f} (the placeholder goes "
        f"{share_of(r['share'], 'the way')}, in log data)" for _, r in placeholder.iterrows())
    text = f"Required data at the same N and seed, under {rule}: {cells}. "
    verdict = placeholder_verdict(placeholder)
    if verdict:
        return text + (f"Over these {len(placeholder)} cells ({placeholder['N'].nunique()} values of N, "
                       f"{placeholder['seed'].nunique()} seeds), {verdict}.")
    ratio = placeholder["n_req_placeholder"] / placeholder["n_req_plain"]
    low, high = f"{ratio.min():.2f}x", f"{ratio.max():.2f}x"
    spread = low if low == high else f"{low} to {high}"
    within = bool(((ratio <= seed_gap) & (ratio >= 1 / seed_gap)).all()) if seed_gap == seed_gap else False
    return text + (
        f"The placeholder needs {spread} the plain model's data"
        + (f", within the {seed_gap:.2f}x by which two seeds of one cell differ" if within else "")
        + f". {count_of(len(placeholder), 'cell')} on {count_of(placeholder['N'].nunique(), 'value')} of N and "
        f"{count_of(placeholder['seed'].nunique(), 'seed')} cannot say whether the extra position saves data: that "
        f"needs {PLACEHOLDER_MIN_N} values of N and {PLACEHOLDER_MIN_SEEDS} seeds"
        + (f", which the book's queue runs under the step floor (`{command}`)." if command else "."))


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
