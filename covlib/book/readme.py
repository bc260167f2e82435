"""The README's generated parts: its findings, written from the book's snapshot of recorded metrics, so that no
number in it can drift from what the chapters compute; its timings, written from benchmarks/timings.json (one
place to update after measuring); its repository, licence and citation, from covlib.base.project.
tests/test_readme.py fails when the README and these sources differ.

``covlib book --snapshot`` rewrites the findings; ``python -m covlib.book.readme`` rewrites the timings and the
citation block. Nothing else in the README is touched."""
from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from covlib.base.errors import CovlibError
from covlib.base.files import write_text_atomic
from covlib.base.paper import (
    EXPONENT_MAMBA_TWOHOP,
    EXPONENTS,
    EXPONENTS_COT,
    EXPONENTS_WITH_MAMBA,
    REQUIRED_DATA_TWOHOP_AUTHORS,
)
from covlib.base.paths import REPO
from covlib.base.project import about_markdown
from covlib.figures.give_up_rule import floor_shift, floor_verdict, reader_name
from covlib.figures.text import count_of, fmt, is_missing, p_value, share_of
from covlib.search.verdicts import VERDICT_WORDS

START = "<!-- findings: written by `covlib book --snapshot` from tests/snapshots/metrics_default.json; do not edit -->"
END = "<!-- end of findings -->"
TIMINGS = REPO / "benchmarks" / "timings.json"
# (start, end) markers of the blocks `python -m covlib.book.readme` writes
ABOUT_BLOCK = ("<!-- about: written from covlib/base/project.py by `python -m covlib.book.readme`; do not edit -->",
               "<!-- end of about -->")
TIMINGS_BLOCK = ("<!-- timings: written from benchmarks/timings.json by `python -m covlib.book.readme`; do not edit -->",
                 "<!-- end of timings -->")
# what a chapter's default run does beside reading its shipped results, for the timings sentence
CHAPTER_NOTES = {
    "02_coverage": "exact coverage, computed",
    "03_coverage_predicts_generalization": "its shipped runs; `recompute_edge_run = True` retrains the "
                                           "edge-of-coverage run, about 20 minutes",
    "05_inside_the_model": "its analyses computed on the shipped model",
    "06_path_ambiguity": "analyses computed on its two shipped models",
    "10_how_much_data_will_my_task_need": "coverage's predictions computed, and one probe of the reader's task "
                                          "trained at its predicted size",
}


COT_SAVING = "CoT's data saving"


def _pct(value: Any, digits: int = 0) -> str:
    return fmt(value * 100 if isinstance(value, (int, float)) else value, f".{digits}f") + "%"


def _exponent(m: Mapping[str, Any], name: str, without_interval: str = "too few for an interval") -> str:
    """An exponent with its interval (or ``without_interval``: why there is none), values of N and seeds."""
    c, lo, hi = m.get(f"exponent_{name}"), m.get(f"exponent_{name}_ci_low"), m.get(f"exponent_{name}_ci_high")
    n, seeds = m.get(f"exponent_{name}_n_values", 0), m.get(f"exponent_{name}_seeds", 0)
    support = f"{n} values of N, {seeds} seed{'s' if seeds != 1 else ''}"
    if c is None or (isinstance(c, float) and math.isnan(c)):
        return "not measured yet"
    if lo is None:
        return f"N^{c:.2f} ({support}: {without_interval})"
    return f"N^{c:.2f} (95% interval {lo:.2f} to {hi:.2f}; {support})"  # "to": a bound may be negative


def _range(m: Mapping[str, Any], name: str) -> str:
    low, high, pairs = m.get(f"{name}_min"), m.get(f"{name}_max"), m.get(f"{name}_pairs", 0)
    if not pairs:
        return "not measured yet"
    if pairs == 1:
        return f"{low:.1f}x (one pair)"
    return f"{m[name]:.1f}x (geometric mean of {pairs} pairs, range {low:.1f}-{high:.1f})"


def _in_every_seed(flag: Any) -> str:
    return "in every seed" if flag == 1 else "not in every seed"


def _iicg_seeds(m: Mapping[str, Any]) -> str:
    """Chapter 5's claims over training seeds, when the chapter read more than one."""
    if m.get("iicg_seeds", 0) < 2:
        return ""
    return (f" Over {m['iicg_seeds']} training seeds the IICG peak is {m['iicg_peak_mean']:.2f} ± {m['iicg_peak_sd']:.2f}, "
            f"the order by k-cutoff holds {_in_every_seed(m['iicg_order_all_seeds'])} and the tracing route "
            f"{_in_every_seed(m['trace_route_all_seeds'])}.")


def _seeds_of(m: Mapping[str, Any], key: str) -> str:
    seeds = m.get(key, 0)
    return f" over {seeds} seeds" if seeds and seeds > 1 else ""


def _nontree_cot(m: Mapping[str, Any]) -> str:
    """Chapter 7's required-data search for non-tree with CoT: does any probe reach the threshold?"""
    reachable = m.get("nontree_cot_reachable", float("nan"))
    if isinstance(reachable, float) and math.isnan(reachable):
        return "The non-tree CoT search is not in the cache yet."
    if reachable:
        return "Some probe of the non-tree CoT search reaches 99%: with enough data, CoT rescues it here."
    return "No probe of the non-tree CoT search reaches 99%: CoT does not rescue non-tree, as the paper finds."


def _fivehop_saving(m: Mapping[str, Any]) -> str:
    """Chapter 7's five-hop at its one N searched without CoT: the data ratio, or its lower bound ("" before)."""
    ratio, at_least = m.get("data_ratio_fivehop_cot", math.nan), m.get("data_ratio_fivehop_cot_at_least", math.nan)
    if not math.isnan(ratio):
        return f", five-hop at its smallest N {ratio:.1f}x"
    if not math.isnan(at_least):
        return f", five-hop at its smallest N at least {at_least:.1f}x (no success without CoT up to its pool)"
    return ""


def _floor_ratios(m: Mapping[str, Any]) -> str:
    """Chapter 7's data ratios under the step floor, where any pair has finished under it ("" before)."""
    parts = [f"{reader_name(task)} {m[f'data_ratio_{task}_cot_floor']:.1f}x ({count_of(pairs, 'pair')})"
             for task in ("twohop", "threehop", "fivehop") if (pairs := m.get(f"data_ratio_{task}_cot_floor_pairs", 0))]
    return f"; under the step floor {', '.join(parts)}" if parts else ""


def _both_rules(m: Mapping[str, Any], key: str) -> str:
    """A chapter-4 ratio under the authors' rule, and under the step floor where that is recorded: "1.06x (1.00x
    under the floor)"."""
    text = f"{m.get(key, float('nan')):.2f}x"
    floor = m.get(f"{key}_floor")
    if isinstance(floor, (int, float)) and not math.isnan(floor):
        text += f" ({floor:.2f}x under the floor)"
    return text


def _largest_n(m: Mapping[str, Any]) -> str:
    """Chapter 4's two-hop requirement at the N the paper publishes (50, and 70 once measured) beside the paper's."""
    parts = [f"the authors' models need {REQUIRED_DATA_TWOHOP_AUTHORS[50]:,} examples at N = 50"]
    ratio = m.get("n_req_ratio_to_paper_N50", math.nan)
    if isinstance(ratio, (int, float)) and not math.isnan(ratio):
        parts[0] += (f", this book's {ratio * REQUIRED_DATA_TWOHOP_AUTHORS[50]:,.0f} ({ratio:.2f} of theirs, "
                     "under the authors' rule)")
    at_70 = m.get("n_req_twohop_N70", math.nan)
    if isinstance(at_70, (int, float)) and not math.isnan(at_70):
        seeds = m.get("n_req_twohop_N70_seeds", 0)
        parts.append(f"{REQUIRED_DATA_TWOHOP_AUTHORS[70]:,} at N = 70, this book's {at_70:,.0f}"
                     + (f" ({seeds} seed{'' if seeds == 1 else 's'})" if seeds else ""))
    return "; ".join(parts)


def _mamba(m: Mapping[str, Any]) -> str:
    """Chapter 4's architecture check: the Mamba's exponent and its data against the default transformer's."""
    if not m.get("params_mamba"):
        return ""
    ratio = m.get("n_req_ratio_mamba_to_default", float("nan"))
    if isinstance(ratio, float) and math.isnan(ratio):
        return (f"A Mamba ({m['params_mamba']:,} parameters against {m['params_default']:,}) is queued on two-hop's "
                "cells, not measured yet.")
    # a slope through so few, close N is not yet a finding
    exponent = _exponent(m, "twohop_mamba", "too few for an interval or to set against the transformer's; chapter 4: "
                                            "how far the seed gap alone moves it")
    if exponent == "not measured yet":
        exponent = "its exponent not measured yet (it needs two values of N finished)"
    floor = _exponent(m, "twohop_mamba_floor", "too few for an interval")
    if floor != "not measured yet":  # its verdict below is decided under the floor: give that exponent too
        exponent += f" under the authors' rule, {floor} under the floor"
    return (f"A Mamba ({m['params_mamba']:,} parameters against {m['params_default']:,}): "
            f"{exponent}, {_both_rules(m, 'n_req_ratio_mamba_to_default')} the transformer's data on the cells both "
            "finished "
            f"(the paper's Mamba: N^{EXPONENT_MAMBA_TWOHOP:.2f}).")


def _verdicts(m: Mapping[str, Any], names: Mapping[str, str]) -> str:
    """The verdict of each exponent against the paper's, and where the step floor's reruns stand."""
    said = [f"{label} {VERDICT_WORDS[m[f'verdict_{key}']]}" for key, label in names.items() if f"verdict_{key}" in m]
    if not said:
        return ""
    reruns = sum(m.get(f"give_up_reruns_{key}", 0) for key in names)
    flips = sum(m.get(f"give_up_flips_{key}", 0) for key in names)
    floor = m.get("give_up_floor_steps", 0)
    rule = ("" if not floor else
            f"; under a step floor ({floor:,} steps past the fit before giving up) none of the lower ends it reopens "
            "has been rerun yet" if not reruns else
            f"; under a step floor ({floor:,} steps past the fit before giving up) {reruns} of the lower ends it "
            f"reopens (of brackets, or of cells the authors' rule found unreachable) rerun so far, {flips} of them "
            "flipped to success")
    return f" Against the paper, by the rule chapter 4 states: {', '.join(said)}{rule}."


def _placeholder(m: Mapping[str, Any]) -> str:
    """Chapter 7's placeholder sentence: its share of CoT's saving, on how many N and seeds, and whether that decides."""
    key = "placeholder_saving_share"
    if key not in m:
        return ""
    n_values, seeds = m[f"{key}_n_values"], m[f"{key}_seeds"]
    rule = "the authors' give-up rule" if not m.get(f"{key}_give_up_floor") else "the step floor"
    decided = n_values >= 3 and seeds >= 2
    return (f"the placeholder's own searches get {share_of(m[key], COT_SAVING)} ({n_values} "
            f"{'value' if n_values == 1 else 'values'} of N, "
            f"{seeds} {'seed' if seeds == 1 else 'seeds'}, {rule}"
            + (f"; cells from {m[f'{key}_min']:+.0%} to {m[f'{key}_max']:+.0%}" if f"{key}_min" in m else "")
            + (f", mean's 95% interval {m[f'{key}_ci_low']:+.0%} to {m[f'{key}_ci_high']:+.0%})"
               if not is_missing(m.get(f"{key}_ci_low")) else ")")
            + ("" if decided else ": too few cells to say where the saving comes from; the queue reruns it under "
               "the step floor on 3 values of N and 2 seeds") + ". ")


def _floor_patience(m: Mapping[str, Any]) -> str:
    """Whether the step floor still cut probes off as it ended ("" before any probe ran under it)."""
    hazard = m.get("floor_hazard_last_window")
    if not isinstance(hazard, float) or hazard != hazard:
        return ""
    climbing = m.get("floor_failures_climbing", 0)
    return (f" The floor itself still ends: of the probes short of 99% in its last 250 steps, {_pct(hazard)} reached "
            f"it there; {m['floor_near_misses']} failures under it ended within a point of the threshold"
            + (f" and {climbing} were still climbing when they gave up, so n_req is the data needed within that "
               "patience, and a longer floor would likely lower it" if climbing else
               ", so a longer floor would likely flip a few more") + ".")


def _longer_floor(m: Mapping[str, Any]) -> str:
    """The longer floor's control on two-hop, once every cell is finished under it ("" before): the n_req ratio and
    the tilt of the fit, with its interval."""
    pairs, tilt = m.get("longer_floor_pairs_twohop", 0), m.get("longer_floor_tilt_twohop", math.nan)
    if not pairs or m.get("longer_floor_pending_twohop", 1) or tilt != tilt:
        return ""
    low, high = m.get("longer_floor_tilt_twohop_ci_low", math.nan), m.get("longer_floor_tilt_twohop_ci_high", math.nan)
    interval = f" (95% interval {low:+.2f} to {high:+.2f})" if low == low else " (no interval)"
    return (f" A floor twice as long ({m['longer_floor_steps']:,} steps) gives two-hop {m['longer_floor_nreq_ratio_twohop']:.2f}"
            f" times the n_req ({count_of(pairs, 'cell')}) and moves its exponent by {tilt:+.2f}{interval}.")


def _below_paper(m: Mapping[str, Any], paper: Mapping[str, float], suffix: str = "") -> str:
    """How many exponents lie below the paper's under the authors' rule, the suspected cause, and what the step
    floor has shown of it where an exponent is finished under the floor ("" if none is below)."""
    def value(key: str) -> float:
        v = m.get(key)
        return v if isinstance(v, float) else math.nan
    pairs = [(task, value(f"exponent_{task}{suffix}"), c) for task, c in paper.items()]
    pairs = [(task, here, c) for task, here, c in pairs if here == here]
    below = sum(round(here, 2) < c for _, here, c in pairs)
    if not below:
        return ""
    cause = (f" {below} of these {len(pairs)} exponents lie below the paper's under the authors' rule, which gives "
             "a small training set only a few hundred steps after the fit: that can raise n_req most where n is "
             "small and flatten a fit")
    said, moves = [], []
    for task, here, c in pairs:
        key = f"exponent_{task}{suffix}"
        floor = value(f"{key}_floor")
        if floor != floor:
            continue
        authors = (here, value(f"{key}_ci_low"), value(f"{key}_ci_high"))
        said.append(floor_shift(reader_name(task + suffix), authors,
                                (floor, value(f"{key}_floor_ci_low"), value(f"{key}_floor_ci_high")), c))
        moves.append((authors, floor))
    if not said:
        return cause + "; chapter 4 tests it under a step floor, and no exponent has finished under it yet."
    pending = len(pairs) - len(said)
    return (cause + ". Under the step floor: " + "; ".join(said) + "; " + floor_verdict(moves)
            + (f" ({pending} more still searching under the floor)." if pending else "."))


def _shared_operator(m: Mapping[str, Any]) -> str:
    """Chapter 8's shared-operator sentence: atomic facts in their own role, and reuse across roles where its
    runs exist (the numbers decide the words)."""
    own = (f"With one shared table and every fact taught as an atomic item, the held-out first-hop facts are used in "
           f"their own role ({_pct(m.get('acc_own_role_atomic', float('nan')), 1)} against "
           f"{_pct(m.get('acc_own_role_atomic_control', float('nan')), 1)} for distinct tables "
           f"{'with the same atomic facts' if m.get('own_role_control_has_atomic') else 'without atomic facts'}). ")
    acc, n = m.get("acc_reuse_second_role", float("nan")), m.get("n_reuse_second_role", 0)
    control = m.get("acc_reuse_second_role_control", float("nan"))
    if not n or acc != acc or control != control:
        t3, c3, p3 = (m.get(k, float("nan")) for k in ("acc_shared_type_3", "acc_shared_type_3_control",
                                                         "p_shared_type_3"))
        return own + (f"Where the held-out fact would have to be reused in the second hop's role (type_3), "
                      f"{_pct(t3, 1)} against {_pct(c3, 1)} (one-sided {p_value(p3)}, one seed): no sign of reuse "
                      "across roles" if not p3 < 0.01 else f"Where the held-out fact would have to be reused in the "
                      f"second hop's role (type_3), {_pct(t3, 1)} against {_pct(c3, 1)} (one-sided {p_value(p3)}, "
                      "one seed, against a control without atomic facts)") + (
            "; the controls at equal data and steps are not measured yet.")
    p, seeds = m.get("p_reuse_second_role", float("nan")), m.get("seeds_reuse_second_role", 0)
    worst = m.get("p_reuse_second_role_max_seed", float("nan"))
    # the chapter's rule (reuse.reuse_test): every paired seed's test and the pooled one below 0.01
    shown = ("not decided with one seed" if seeds < 2 else "shown" if m.get("reuse_second_role_shown") else
             "not shown: the seeds disagree" if p < 0.01 else "not shown")
    return own + (f"Reuse of a fact taught only in the first hop's role, in the second: {_pct(acc, 1)} on {n:,} "
                  f"inputs against {_pct(m.get('acc_reuse_second_role_control', float('nan')), 1)} for the best "
                  f"control ({seeds} seed{'s' if seeds != 1 else ''}, one-sided {p_value(p)} pooled"
                  + (f", {p_value(worst)} in the weakest seed" if seeds >= 2 and worst == worst else "")
                  + f"): reuse {shown}.")


def _k3(m: Mapping[str, Any]) -> str:
    """Chapter 9's closing clause: what the range allows, and the contrasts of 3-coverage where they ran (among 1,000
    random sets, its first pair trained longer, and among 10,000 sets)."""
    if not m.get("contrast_sizes_qualifying", 0):
        return "so exact coverage follows diversity and no contrast at fixed diversity can test it here."
    gap = m.get("k3_coverage_gap_between_arms", float("nan"))
    if gap != gap:
        return ("a contrast of about 15 points at fixed make-up may be possible where coverage varies most; it has "
                "not been trained yet.")
    said = (f"the contrast of 3-coverage at N = 20{_among(m, 'k3_')} moved it by {gap:+.1f} points, and accuracy by "
            f"{_per_point(m, 'k3_')} per point")
    high, low = m.get("k3_long_best_type0_high"), m.get("k3_long_best_type0_low")
    if high is not None and low is not None:
        said += (f"; trained {m['k3_long_steps']:,} steps, its first pair reaches at best {_pct(high, 1)} (high arm) "
                 f"and {_pct(low, 1)} (low arm)" + (": with more steps the models leave the floor"
                                                    if m.get("k3_long_off_floor") else
                                                    ": more steps do not lift the models off the floor, where "
                                                    "coverage could show"))
    wide = m.get("k3_wide_coverage_gap_between_arms", float("nan"))
    if wide != wide:
        return said + "."
    return (said + f". Chosen{_among(m, 'k3_wide_')}, the arms moved 3-coverage by {wide:+.1f} points and accuracy "
            f"by {_per_point(m, 'k3_wide_')} per point ({m['k3_wide_runs_per_arm']} runs per arm, at "
            f"{_pct(m['k3_wide_acc_high'], 1)} and {_pct(m['k3_wide_acc_low'], 1)} ID accuracy)"
            + (": at the floor, so the interval bounds an effect of coverage where the models do not generalise."
               if m.get("k3_wide_at_floor") else "."))


def _among(m: Mapping[str, Any], prefix: str) -> str:
    """ "among 1,000 random sets" when the snapshot records how many candidates the contrast chose from."""
    count = m.get(f"{prefix}candidates")
    return f" among {count:,} random sets" if count else ""


def _per_point(m: Mapping[str, Any], prefix: str) -> str:
    e = m.get(f"{prefix}effect_per_coverage_point", float("nan"))
    lo, hi = m.get(f"{prefix}effect_per_coverage_point_ci_low"), m.get(f"{prefix}effect_per_coverage_point_ci_high")
    if e is None or e != e:
        return "not estimable"
    wide = max(abs(lo), abs(hi)) >= 10  # a wide interval in whole points, a narrow one to two decimals
    return (f"{e:+.1f} pp, 95% interval {lo:+.0f} to {hi:+.0f}" if wide else
            f"{e:+.2f} pp, 95% interval {lo:+.2f} to {hi:+.2f}")


def findings(chapters: Mapping[str, Mapping[str, Any]]) -> str:
    """The findings as markdown bullets, one or two per chapter the snapshot holds."""
    ch = {name[:2]: values for name, values in chapters.items()}
    bullets = []
    if "02" in ch:
        m = ch["02"]
        covered = ", ".join(fmt(m.get(f"type0_covered_k{k}", float("nan")) * 100, ".0f") for k in range(1, 9))
        bullets.append(
            f"Coverage (chapter 2; two-hop, N = {m['N']}, {m['n_train']:,} examples): ID test items k-covered for "
            f"k = 1..8: {covered}%. Fragment classes at k = 3 group only fragments that share the hidden bridge "
            f"({_pct(m['purity_k3'])} of merged pairs, against {_pct(m['purity_k1'])} at k = 1). The data that "
            f"3-covers 90% of the ID items grows as N^{m['coverage_exponent']:.2f} (the paper's required data: "
            f"N^{EXPONENTS['twohop']:.2f}).")
    if "03" in ch:
        m = ch["03"]
        seeds = m["edge_seeds"]
        groups = "; ".join(f"{label} {_pct(m[f'edge_acc_{key}_mean'], 1)} ± {_pct(m[f'edge_acc_{key}_sd'], 1)}"
                           for label, key in (("k<3", "k_lt3"), ("k=3", "k3"), ("k>3", "k_gt3")))
        bullets.append(
            f"Coverage predicts generalisation (chapter 3; two-hop N = 30, 4,000 examples, {seeds} training seeds): "
            f"final ID accuracy by k-cutoff group, mean ± sd over seeds: {groups}. Accuracy rises with the k-cutoff "
            f"{_in_every_seed(m['edge_order_final_all_seeds'])}, and the groups reach 50% in the order of their "
            f"evidence {_in_every_seed(m['edge_order_learned_all_seeds'])}.")
    if "04" in ch:
        m = ch["04"]
        bullets.append(
            f"How much data (chapter 4): two-hop's required data (99% ID accuracy, the authors' give-up rule) grows "
            f"as {_exponent(m, 'twohop')}; paper {EXPONENTS['twohop']:.2f}, coverage's prediction "
            f"{m['exponent_coverage_k3']:.2f}; {_largest_n(m)}. Three-hop {_exponent(m, 'threehop')} (paper {EXPONENTS['threehop']:.2f}); parallel two-hop "
            f"{_exponent(m, 'parallel_twohop')} (paper {EXPONENTS['parallel_twohop']:.2f}). Over "
            f"{m['param_ratio']:.1f}x in parameters, a 2-layer width-64 model needs "
            f"{_both_rules(m, 'n_req_ratio_L2_d64_to_default')} the default's data and a 6-layer "
            f"width-128 one {_both_rules(m, 'n_req_ratio_L6_d128_to_default')}, against a "
            f"{_both_rules(m, 'seed_spread_twohop')} gap between two seeds of one cell. " + _mamba(m)
            + _verdicts(m, {"twohop": "two-hop", "threehop": "three-hop", "parallel_twohop": "parallel two-hop",
                            "twohop_mamba": "the Mamba"})
            + _below_paper(m, EXPONENTS_WITH_MAMBA) + _floor_patience(m) + _longer_floor(m) + f" {m['probes']} probes, {m['cpu_hours']:.1f} run-hours.")
    if "05" in ch:
        m = ch["05"]
        bullets.append(
            f"Inside the model (chapter 5): ID items that share the bridge cluster at layer {m['iicg_id_peak_layer']}, "
            f"position {m['iicg_id_peak_position']} (IICG {m['iicg_id_peak']:.2f}; training items "
            f"{m['iicg_train_peak']:.2f}; OOD items with the first fact unseen at most {m['iicg_ood_max']:.2f}), "
            f"tighter for better-covered items ({m['iicg_k<3']:.2f}, {m['iicg_k=3']:.2f}, {m['iicg_k>3']:.2f} "
            f"for k<3, k=3, k>3). Causal tracing (x2 changed) flips {_pct(m['trace_rank_x2_layer1'])} of predictions "
            f"at x2, layer 1, and {_pct(m['trace_rank_last_before_output'])} at the last position one layer "
            f"before the output; with x1 changed, patching x2 at layer 1 flips "
            f"{_pct(m['trace_rank_x1_changed_x2_layer1'])}. The logit lens reads b for "
            f"{_pct(m['lens_bridge_top1_best'])} of items at best." + _iicg_seeds(m))
    if "06" in ch:
        m = ch["06"]
        bullets.append(
            f"Path ambiguity (chapter 6; N = 30, 10,000 examples): non-tree's whole ID pool is "
            f"{_pct(m['pool_coverage_k3_nontree'])} 3-covered (two-hop {_pct(m['pool_coverage_k3_twohop'])}); its "
            f"ID test items, a different population, {_pct(m['coverage_k3_nontree'])}. Two-hop reaches "
            f"{_pct(m['final_type0_twohop'], 1)} ID accuracy, non-tree {_pct(m['final_type0_nontree'], 1)}; "
            f"{m['nontree_cells_unreachable']} of {m['nontree_cells_finished']} finished non-tree searches never "
            f"reach 99%. IICG by b: {m['iicg_max_twohop_by_b']:.2f} (two-hop) against "
            f"{m['iicg_max_nontree_by_b']:.2f} (non-tree); by (b, x2) {m['iicg_max_nontree_by_bx2']:.2f}, which is "
            f"{m['iicg_nontree_bx2_gain_over_x2']:+.2f} over x2 alone at the same cell.")
    if "07" in ch:
        m = ch["07"]
        bullets.append(
            "Chain of thought (chapter 7): with the bridge written out, two-hop's required data (the authors' give-up "
            "rule) grows as "
            f"{_exponent(m, 'twohop_cot')} (paper {EXPONENTS_COT['twohop']:.2f}), three-hop's as "
            f"{_exponent(m, 'threehop_cot')} (paper {EXPONENTS_COT['threehop']:.2f}), five-hop's "
            f"{_exponent(m, 'fivehop_cot')} (paper {EXPONENTS_COT['fivehop']:.2f}). Data without over data with "
            f"CoT at equal N: two-hop {_range(m, 'data_ratio_twohop_cot')}{_seeds_of(m, 'cot_twohop_seeds')}, three-hop "
            f"{_range(m, 'data_ratio_threehop_cot')}{_fivehop_saving(m)}{_floor_ratios(m)} (the paper: 5-10x). At N = 30 and 6,000 examples: plain "
            f"{_pct(m['final_type0_twohop_plain'], 1)}, CoT {_pct(m['final_type0_twohop_cot'], 1)}, placeholder "
            f"bridge {_pct(m['final_type0_twohop_fakebridge'], 1)}, non-tree with CoT "
            f"{_pct(m['final_type0_nontree_cot'], 1)}; " + _placeholder(m) + _nontree_cot(m)
            + _verdicts(m, {"twohop_cot": "two-hop CoT", "threehop_cot": "three-hop CoT", "fivehop_cot": "five-hop CoT"})
            + _below_paper(m, EXPONENTS_COT, "_cot"))
    if "08" in ch:
        m = ch["08"]
        bullets.append(
            f"The taxonomy (chapter 8; two-hop N = {m['N']}, {m['n_train']:,} examples): with f1 commutative, "
            f"{m['n_property_reachable']:,} inputs outside coverage have a covered mirror and the model gets "
            f"{_pct(m['acc_property_reachable'], 1)} of them (control {_pct(m['acc_property_control'], 1)}). "
            + _shared_operator(m))
    if "09" in ch:
        m = ch["09"]
        bullets.append(
            f"Diversity audit (chapter 9; two-hop N = 25, {m['runs']} runs): at a fixed budget, accuracy follows a "
            f"logistic in log n_unique (R² {m['dose_response_r2']:.3f}); in the diversity x exposure factorial "
            f"({m['seeds_per_cell']} seeds a cell) partial eta² is {m['eta2_diversity']:.2f} for diversity and "
            f"{m['eta2_exposure']:.2f} for exposure. At fixed diversity ({m.get('runs_per_arm', 0)} training sets "
            f"per arm), training sets chosen for extreme coverage at a higher threshold differ by "
            f"{m['coverage_contrast_pp']:+.1f} points of ID accuracy ({p_value(m['coverage_contrast_p'])}), but their "
            f"arms differ by only {m.get('coverage_gap_between_arms', float('nan')):+.2f} points of exact 3-coverage "
            f"(per point: {_per_point(m, '')}); the surface contrast's by "
            f"{m.get('surface_coverage_gap_between_arms', float('nan')):+.2f} (per point: {_per_point(m, 'surface_')})"
            f". Random training sets of one size differ in 3-coverage by at most "
            f"{m.get('max_selection_gap_pts', float('nan')):.1f} points (1st to 99th percentile, N = 20-30, below "
            f"saturation); " + _k3(m))
    return "\n".join(f"* {b}" for b in bullets)


def findings_block(readme_text: str) -> str:
    """The text between the README's findings markers."""
    return block(readme_text, (START, END))


def block(readme_text: str, markers: tuple[str, str]) -> str:
    """The text between a pair of the README's markers."""
    start, end = markers
    if start not in readme_text or end not in readme_text:
        raise CovlibError(f"the README lacks the markers {start!r} and {end!r}; put them where the block goes")
    return readme_text.split(start, 1)[1].split(end, 1)[0].strip("\n")


def _replace_block(text: str, markers: tuple[str, str], new: str) -> str:
    block(text, markers)  # both markers present
    start, end = markers
    before, rest = text.split(start, 1)
    return f"{before}{start}\n{new}\n{end}{rest.split(end, 1)[1]}"


def _seconds(value: float) -> str:
    return f"{value:.0f} s" if value < 600 else f"{value / 60:.1f} minutes"


def timings_text(t: Mapping[str, Any]) -> str:
    """The README's timing sentences from benchmarks/timings.json; a figure not measured says so."""
    chapters = t.get("book_default_seconds") or {}
    parts = [f"`{name}` {_seconds(sec)}" + (f" ({CHAPTER_NOTES[name]})" if name in CHAPTER_NOTES else "")
             for name, sec in chapters.items()]
    wall = t.get("book_default_wall_seconds")
    book = (f"`make book` (default preset, every chapter reading its shipped results, two chapters at a time): "
            f"{_seconds(wall)} of wall-clock time; one by one (`make book JOBS=1`) about "
            f"{_seconds(sum(chapters.values()))}, the sum of the chapters' own times: {', '.join(parts)}."
            if chapters and wall else
            f"`make book` (default preset, every chapter reading its shipped results): "
            f"{_seconds(sum(chapters.values()))} in all: {', '.join(parts)}." if chapters else
            "`make book`: not measured at this commit.")
    smoke = t.get("book_smoke_seconds")
    site, ci = t.get("site_seconds"), t.get("ci_minutes")
    lines = [f"Measured at commit {t.get('commit', 'unknown')}, on {t.get('conditions', 'an unnamed machine')}.", "",
             book,
             f"`make book PRESET=smoke`: {_seconds(smoke) if smoke else 'not measured at this commit'}. "
             f"`make site` on top of `make book`: {_seconds(site) if site else 'not measured at this commit'}.",
             ("`bash .ci/run` on a fresh clone (installs, then `make test` with the smoke book, the default chapters "
              f"against the snapshot, the browser and SLURM tests): {ci:.1f} minutes, of which pytest "
              f"{t['ci_pytest_minutes']:.1f} ({t['ci_tests']} tests)." if ci else
              "`bash .ci/run` on a fresh clone: not measured at this commit.")]
    return "\n".join(lines)


def refresh_blocks(readme: str | os.PathLike, timings: str | os.PathLike = TIMINGS) -> bool:
    """Rewrite the README's timings (from ``timings``) and its repository, licence and citation block;
    True when the text changed."""
    path = Path(readme)
    text = path.read_text(encoding="utf-8")
    new = _replace_block(text, ABOUT_BLOCK, about_markdown("##"))
    new = _replace_block(new, TIMINGS_BLOCK, timings_text(json.loads(Path(timings).read_text(encoding="utf-8"))))
    if new == text:
        return False
    write_text_atomic(path, new)
    return True


def refresh_readme(readme: str | os.PathLike, chapters: Mapping[str, Mapping[str, Any]]) -> bool:
    """Rewrite the README's findings from ``chapters`` (snapshot metrics); True when the text changed."""
    path = Path(readme)
    text = path.read_text(encoding="utf-8")
    old = findings_block(text)
    new = findings(chapters)
    if not new:  # e.g. the whole snapshot passed instead of its "chapters": never blank the README's findings
        raise CovlibError(f"no chapter's metrics to write into the README (got keys {sorted(chapters)[:5]}); pass "
                          "a snapshot's 'chapters' mapping, e.g. read_snapshot(path)['chapters']")
    if old == new:
        return False
    before, rest = text.split(START, 1)
    after = rest.split(END, 1)[1]
    write_text_atomic(path, f"{before}{START}\n{new}\n{END}{after}")
    return True


if __name__ == "__main__":  # python -m covlib.book.readme [README]: refresh the timings and the citation block
    target = sys.argv[1] if len(sys.argv) > 1 else REPO / "README.md"
    print("README updated" if refresh_blocks(target) else "README already current")
