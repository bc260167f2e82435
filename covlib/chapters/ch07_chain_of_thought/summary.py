"""Chapter 7's results gathered: the paper's numbers beside the book's, the metrics it records, and its summary."""
from __future__ import annotations

from collections.abc import Collection, Mapping

import numpy as np
import pandas as pd

from covlib.analyses.fits import describe_exponent, exponent_metrics
from covlib.base.paper import COT_DATA_RATIO, EXPONENTS, EXPONENTS_COT, NONTREE_COT_FAILS_AT
from covlib.chapters.ch07_chain_of_thought.data_ratios import (
    fivehop_saving,
    mean_share,
    placeholder_decides,
    placeholder_metrics,
    placeholder_verdict,
    ratio_at_least,
    ratio_range,
    seeds_paired,
)
from covlib.chapters.ch07_chain_of_thought.greedy import decoded
from covlib.chapters.ch07_chain_of_thought.inside import context_gaps, peak_at_bridge, two_decimals
from covlib.chapters.ch07_chain_of_thought.searches import TASKS, reachable
from covlib.chapters.ch07_chain_of_thought.shipped import MODELS
from covlib.figures.give_up_rule import reader_name
from covlib.figures.text import count_of, fmt, share_of
from covlib.search.verdicts import rule_label

MISSING = "n/a (not in the cache)"  # what the chapter writes for a result the cache does not hold yet


def fit_text(fit: dict | None) -> str:
    """An exponent for the comparison table: value and interval, provisional, or not in the cache."""
    if not fit:
        return MISSING
    if np.isnan(fit["c_low"]):
        return f"{fit['c']:.2f} (from {fit['n_values']} N values: provisional)"
    return f"{fit['c']:.2f} ({fit['c_low']:.2f} to {fit['c_high']:.2f})"


def comparison_table(fits: Mapping[str, dict | None], by_task: Mapping[str, float], final_type0: Mapping[str, float],
                     gap: Mapping[str, float], N: int, n_train: int,
                     floor_fits: Mapping[str, dict | None] | None = None,
                     floor_ratio: float | None = None) -> pd.DataFrame:
    """The paper's numbers beside this book's: exponents (under the authors' rule and, given ``floor_fits``, under
    the step floor), two-hop's data ratio (and, given ``floor_ratio``, under the floor), non-tree with CoT, its
    representations."""
    paper, book = "paper (GPT-2, GPU)", "this book (4 layers, CPU)"

    def exponent(name: str) -> str:
        if floor_fits is None:
            return fit_text(fits.get(name))
        under_floor = fit_text(floor_fits[name]) if floor_fits.get(name) else "waiting for its cells"
        return f"authors' rule {fit_text(fits.get(name))}; floor {under_floor}"

    rows = [{"quantity": f"exponent, {reader_name(task)} {style} CoT", paper: f"{table[task]:.2f}",
             book: exponent(f"{task}_cot" if style == "with" else task)}
            for task in ("twohop", "threehop")
            for style, table in (("with", EXPONENTS_COT), ("without", EXPONENTS))]
    rows += [{"quantity": "exponent, five-hop with CoT", paper: f"{EXPONENTS_COT['fivehop']:.2f}",
              book: exponent("fivehop_cot")}]
    ratio = fmt(by_task["twohop"], ".1f", MISSING) + ("" if np.isnan(by_task["twohop"]) else "x")
    rows += [
        {"quantity": "data without CoT / with CoT, two-hop", paper: f"{COT_DATA_RATIO[0]:.0f}-{COT_DATA_RATIO[1]:.0f}x",
         book: ratio if floor_ratio is None else
         f"authors' rule {ratio}; floor " + fmt(floor_ratio, ".1f", "waiting for its cells")
         + ("" if np.isnan(floor_ratio) else "x")},
        {"quantity": "non-tree with CoT where two-hop with CoT succeeds",
         paper: f"fails (N = {NONTREE_COT_FAILS_AT['N']}, n = {NONTREE_COT_FAILS_AT['n_train']:,})",
         book: f"two-hop CoT {fmt(final_type0['twohop_cot'], '.1%', MISSING)}, non-tree CoT "
               f"{fmt(final_type0['nontree_cot'], '.1%', MISSING)} (N = {N}, n = {n_train:,})"},
        {"quantity": "non-tree with CoT: representations at the bridge", paper: "stay context-dependent",
         book: f"IICG by (b, x2) minus by b: {fmt(np.round(gap['nontree_cot'], 2) + 0.0, missing=MISSING)} "
               f"(two-hop CoT {fmt(np.round(gap['twohop_cot'], 2) + 0.0, missing=MISSING)})"},
    ]
    return pd.DataFrame(rows)


def recorded_metrics(fits: Mapping[str, dict | None], by_task: Mapping[str, float], final_type0: Mapping[str, float],
                     decoding: pd.DataFrame, at_bridge: pd.DataFrame, cot_minutes: float,
                     placeholder: pd.DataFrame, ratios: pd.DataFrame, nontree: pd.DataFrame,
                     bounds: pd.DataFrame, placeholder_floor: int = 0) -> dict[str, float]:
    """The chapter's results as record_metrics keys (NaN for what the cache does not hold)."""
    gap = context_gaps(at_bridge)
    return {
        **ratio_range(ratios),
        **exponent_metrics("twohop_cot", fits["twohop_cot"]),
        **exponent_metrics("threehop_cot", fits["threehop_cot"]),
        **exponent_metrics("fivehop_cot", fits.get("fivehop_cot")),
        "cot_twohop_seeds": seeds_paired(ratios),
        "nontree_cot_reachable": reachable(nontree),
        "data_ratio_twohop_cot": by_task["twohop"],
        "data_ratio_threehop_cot": by_task["threehop"],
        # five-hop without CoT is searched at one N: a ratio where it succeeds, else only a lower bound
        "data_ratio_fivehop_cot": by_task["fivehop"],
        "data_ratio_fivehop_cot_at_least": ratio_at_least(bounds, "fivehop"),
        "final_type0_twohop_plain": final_type0["twohop"],
        "final_type0_twohop_cot": final_type0["twohop_cot"],
        "final_type0_twohop_fakebridge": final_type0["twohop_fakebridge"],
        "final_type0_nontree_cot": final_type0["nontree_cot"],
        "greedy_exact_twohop_cot": decoded(decoding, "twohop_cot", "greedy_exact"),
        "tf_answer_twohop_cot": decoded(decoding, "twohop_cot", "tf_answer"),
        "greedy_exact_type2_twohop_cot": decoded(decoding, "twohop_cot", "greedy_exact", "type_2"),
        "tf_answer_type2_twohop_cot": decoded(decoding, "twohop_cot", "tf_answer", "type_2"),
        "iicg_bridge_position_twohop_cot": peak_at_bridge(at_bridge, "twohop_cot", "b"),
        "iicg_bridge_position_nontree_cot": peak_at_bridge(at_bridge, "nontree_cot", "b"),
        "iicg_context_gap_bridge_position_twohop_cot": gap["twohop_cot"],
        "iicg_context_gap_bridge_position_nontree_cot": gap["nontree_cot"],
        "cot_search_cpu_minutes": cot_minutes,
        **placeholder_metrics(placeholder, placeholder_floor),
    }


def _under_floor(floor_fits: Mapping[str, dict | None]) -> str:
    """" Under the step floor: two-hop N^2.36 against N^2.29 without; ..." for each task with both fits ("" if none)."""
    pairs = [f"{reader_name(task)} N^{floor_fits[f'{task}_cot']['c']:.2f} against N^{floor_fits[task]['c']:.2f} without"
             for task in TASKS if floor_fits.get(task) and floor_fits.get(f"{task}_cot")]
    return f" Under the step floor (section 7.1): {'; '.join(pairs)}." if pairs else ""


def summary_text(*, fits: Mapping[str, dict | None], ratios: pd.DataFrame, by_task: Mapping[str, float],
                 metrics: Mapping[str, pd.DataFrame], final_type0: Mapping[str, float], placeholder: pd.DataFrame,
                 decoding: pd.DataFrame, available: Collection[str], at_bridge: pd.DataFrame, N: int,
                 n_train: int, bounds: pd.DataFrame, placeholder_floor: int = 0, verdicts: str = "",
                 claims: str = "", floor_fits: Mapping[str, dict | None] | None = None,
                 floor_ratio: float = float("nan")) -> str:
    """The chapter's findings as a bullet list, each only where the cache holds what it rests on; first what it
    concludes against the paper: ``verdicts``, the sentence of the exponents' verdicts, and ``claims``, that of the
    paper's claims about chain of thought (none if empty); ``floor_fits`` the exponents under
    the step floor (searches.floor_fits), set beside each other where a task has both; ``floor_ratio`` two-hop's
    data ratio under the floor."""
    def value(name: str, col: str, split: str = "type_0") -> float:
        return decoded(decoding, name, col, split)

    summary = [b for b in (verdicts, claims) if b]
    if fits["twohop_cot"] or fits["threehop_cot"]:
        summary.append("With the bridge written out, the required data (under the authors' rule) grows as " + "; ".join(
            f"{reader_name(task)}: N^{fits[f'{task}_cot']['c']:.2f} against N^{fits[task]['c']:.2f} without"
            + (f" (the CoT fit rests on {fits[f'{task}_cot']['n_values']} N values: provisional)"
               if np.isnan(fits[f"{task}_cot"]["c_low"]) else "")
            for task in TASKS if fits[f"{task}_cot"] and fits[task]) + "." + _under_floor(floor_fits or {}))
    if fits.get("fivehop_cot"):
        floored = (floor_fits or {}).get("fivehop_cot")
        summary.append(f"Five-hop with CoT, under the authors' rule: {describe_exponent(fits['fivehop_cot'])}"
                       + (f"; under the step floor {describe_exponent(floored)}" if floored else "")
                       + f"; the paper's {EXPONENTS_COT['fivehop']:.2f}." + fivehop_saving(ratios, bounds))
    if len(ratios):
        summary.append(f"At equal N, two-hop without CoT needs {fmt(by_task['twohop'], '.1f', MISSING)} times the "
                       "data it needs with CoT" + ("." if np.isnan(floor_ratio) else
                                                   f" under the authors' rule, {floor_ratio:.1f} times under the floor."))
    if set(MODELS) <= set(metrics):
        summary.append(f"At N = {N} and {n_train:,} examples, two-hop reaches {final_type0['twohop']:.1%} ID accuracy "
                       f"without CoT, {final_type0['twohop_cot']:.1%} with it and "
                       f"{final_type0['twohop_fakebridge']:.1%} with a placeholder; non-tree with CoT "
                       f"{final_type0['nontree_cot']:.1%}.")
    if len(placeholder):
        share, saving = mean_share(placeholder), "CoT's data saving"
        verdict = placeholder_verdict(placeholder)
        summary.append(f"The placeholder bridge (an extra position, no bridge supervision) gets "
                       f"{share_of(share, saving)} on average (log scale, {count_of(placeholder['N'].nunique(), 'value')} "
                       f"of N, {count_of(placeholder['seed'].nunique(), 'seed')}, {rule_label(placeholder_floor)}): "
                       + (verdict + "." if placeholder_decides(placeholder) else
                          "too few cells to say where the saving comes from."))
    if "twohop_cot" in available:
        summary.append(f"Greedy decoding's exact match ({value('twohop_cot', 'greedy_exact'):.1%} for two-hop with CoT) "
                       "is what a user sees; teacher-forced answer accuracy "
                       f"({value('twohop_cot', 'tf_answer'):.1%}) hands the model the true bridge and can only be "
                       "higher" + (f" (non-tree with CoT: {value('nontree_cot', 'greedy_exact'):.1%} against "
                                   f"{value('nontree_cot', 'tf_answer'):.1%})." if "nontree_cot" in available else ".")
                       + " On OOD items with an unseen first fact the two part: "
                       f"{value('twohop_cot', 'tf_answer', 'type_2'):.1%} teacher-forced against "
                       f"{value('twohop_cot', 'greedy_exact', 'type_2'):.1%} exact.")
    if not np.isnan(final_type0["twohop_cot"] - final_type0["nontree_cot"]):
        errors = 1 - value("nontree_cot", "greedy_exact")
        summary.append(f"Non-tree with CoT reaches {final_type0['nontree_cot']:.1%} where two-hop with CoT reaches "
                       f"{final_type0['twohop_cot']:.1%} at the same N and data"
                       + ("." if not errors > 0.01 else
                          "; most of its errors come in the second hop, after a right bridge."
                          if value("nontree_cot", "bridge right, answer wrong") > 0.5 * errors
                          else "; most of its errors start at the bridge."))
    gap = context_gaps(at_bridge)
    if not np.isnan(gap["nontree_cot"]):
        more = "more than" if gap["nontree_cot"] - gap["twohop_cot"] > 0.05 else "about as much as"
        summary.append(f"Inside, non-tree's bridge position groups by (b, x2) {more} by b (IICG by (b, x2) minus by "
                       f"b: {two_decimals(gap['nontree_cot'])}; two-hop with CoT {two_decimals(gap['twohop_cot'])}).")
    return "\n".join(f"* {line}" for line in summary) or "The cache holds no results yet."
