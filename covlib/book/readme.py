"""The README's generated parts: its findings (a table of the paper's claims against the book's verdicts, and a
sentence or two per chapter), written from the book's snapshot of recorded metrics, so that no number in it can
drift from what the chapters compute; its chapter table, written from the experiments' own definitions (N, seeds,
models), so that it cannot go stale; its timings, written from benchmarks/timings.json (one place to update after
measuring); its repository, licence and citation, from covlib.base.project. tests/test_readme.py fails when the
README and these sources differ. The site's landing page opens with the same findings (covlib.book.site).

``covlib book --snapshot`` rewrites the findings; ``python -m covlib.book.readme`` rewrites the findings from the
committed snapshot, the chapter table, the timings and the citation block. Nothing else in the README is touched."""
from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from covlib.analyses.equivalence import EQUIVALENCE_MARGIN, verdict_words
from covlib.base.errors import CovlibError
from covlib.base.files import write_text_atomic
from covlib.base.paper import (
    COT_DATA_RATIO,
    EXPONENTS,
    NONTREE_COT_FAILS_AT,
    NONTREE_FAILS_AT,
    TYPE0_COVERAGE_TWOHOP_30_4000,
)
from covlib.base.paths import REPO
from covlib.base.project import about_markdown
from covlib.book.runner import discover_chapters
from covlib.book.snapshot import read_snapshot
from covlib.chapters.ch06_path_ambiguity.searches import EXPERIMENTS as NONTREE_EXPERIMENTS
from covlib.chapters.ch06_path_ambiguity.searches import RAISED_CAP
from covlib.chapters.ch07_chain_of_thought.searches import EXPERIMENTS as COT_EXPERIMENTS
from covlib.chapters.ch09_diversity_exposure_coverage.audit import BOOK_PLAN, K3_PLAN, K3_WIDE_PLAN
from covlib.chapters.ch09_diversity_exposure_coverage.stats import MIN_GAP
from covlib.figures.reproduction import series_name
from covlib.figures.text import count_of, fmt, is_missing, p_value, run_time, sentence_start, series, share_of
from covlib.search.experiments import BOOK_EXPERIMENTS, floor_only_N, floor_only_seeds
from covlib.search.reproduction import CLAIMS, PAPER, Claim
from covlib.tasks.graphs import TASKS
from covlib.training.shapes import MODEL_SHAPES
from covlib.training.shipped import EDGE_SEED_ARCHIVES

START = "<!-- findings: written by `covlib book --snapshot` from tests/snapshots/metrics_default.json; do not edit -->"
END = "<!-- end of findings -->"
SNAPSHOT = REPO / "tests" / "snapshots" / "metrics_default.json"
TIMINGS = REPO / "benchmarks" / "timings.json"
# (start, end) markers of the blocks `python -m covlib.book.readme` writes
ABOUT_BLOCK = ("<!-- about: written from covlib/base/project.py by `python -m covlib.book.readme`; do not edit -->",
               "<!-- end of about -->")
TIMINGS_BLOCK = ("<!-- timings: written from benchmarks/timings.json by `python -m covlib.book.readme`; do not edit -->",
                 "<!-- end of timings -->")
CHAPTERS_BLOCK = ("<!-- chapters: written from the experiments' definitions by `python -m covlib.book.readme`; do not "
                  "edit -->", "<!-- end of chapters -->")
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

NOT_MEASURED = "not measured yet"
NO_PAPER_FIGURE = "no figure in the paper to compare"
NO_PAPER_PREDICTOR = "no predictor of n_req; its theory gives the exponent, c = 2.5 - 0.5/k"


def readme_link(stem: str) -> str:
    """Where the README links a chapter: its source in the repository."""
    return f"notebooks/{stem}.py"


def site_link(stem: str) -> str:
    """Where the site's landing page links a chapter: its page (myst-nb resolves the notebook's name)."""
    return f"{stem}.ipynb"


def _pct(value: Any, digits: int = 0) -> str:
    return fmt(value * 100 if isinstance(value, (int, float)) else value, f".{digits}f") + "%"


def _number(m: Mapping[str, Any], key: str) -> float:
    """A recorded number, NaN where it is missing (or not a number)."""
    value = m.get(key)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else math.nan


def _count(m: Mapping[str, Any], key: str) -> int:
    """A recorded count, 0 where it is missing."""
    value = _number(m, key)
    return 0 if math.isnan(value) else int(value)


def _in_every_seed(flag: Any) -> str:
    return "in every seed" if flag == 1 else "not in every seed"


# ----------------------------------------------------------------------------- the table of claims


@dataclass(frozen=True)
class ClaimRow:
    """One row of the findings table: a claim of the paper, its figure, the book's, the verdict, and the chapter
    ("04") whose metrics decide it."""

    claim: str
    paper: str
    book: str
    verdict: str
    chapter: str


# every task and model the findings name, in the findings' words (the chapters' metric keys on the left)
TASK_WORDS = {"twohop": "two-hop", "threehop": "three-hop", "fivehop": "five-hop", "parallel_twohop": "parallel two-hop",
              "twohop_mamba": "two-hop on a Mamba", "twohop_cot": "two-hop with CoT",
              "threehop_cot": "three-hop with CoT", "fivehop_cot": "five-hop with CoT"}


def task_words(*keys: str) -> dict[str, str]:
    """The findings' names of ``keys``, in that order."""
    return {key: TASK_WORDS[key] for key in keys}


# each exponent the paper publishes: the chapter that records its verdict, and its name in the findings
EXPONENT_ROWS: dict[str, tuple[str, str]] = {
    key: ("07" if key.endswith("_cot") else "04", name) for key, name in task_words(
        "twohop", "threehop", "parallel_twohop", "twohop_mamba", "twohop_cot", "threehop_cot", "fivehop_cot").items()}
EXPONENT_LABELS = {key: label for key, (_, label) in EXPONENT_ROWS.items()}
VERDICT_RULE = (
    f"*Verdicts.* An exponent is *reproduced* when its 90% interval lies within the paper's value ± "
    f"{EQUIVALENCE_MARGIN:.2f}, *differs* when its 95% interval excludes the paper's value and the estimate lies "
    "further from it than that margin, and is *inconclusive* otherwise; a comparative claim *holds* or is "
    "*contradicted* when the 95% interval of the paired difference lies on the paper's side of zero or on the "
    "other, and is *inconclusive* when it holds zero; an equality claim is judged as an exponent is, against zero "
    "(the rule, fixed before the data it decides, is chapter 4's section 4.8). The exponents are those of the step "
    "floor's logistic fit, without the cells whose required data nears the ID pool.")


def _support(m: Mapping[str, Any], key: str) -> str:
    """ "7 values of N, 2 seeds" where the chapter records them for ``key``, else that it does not."""
    n, seeds = m.get(f"{key}_n_values"), m.get(f"{key}_seeds")
    if is_missing(n) or is_missing(seeds):
        return "n not recorded"
    return f"{count_of(int(n), 'value')} of N, {count_of(int(seeds), 'seed')}"


def _interval(low: float, high: float, spec: str = ".2f") -> str:
    if is_missing(low) or is_missing(high):
        return "no interval"
    return f"95% interval {format(low, spec)} to {format(high, spec)}"  # "to": a bound may be negative


def exponent_row(m: Mapping[str, Any], key: str) -> ClaimRow:
    """An exponent's row: the paper's c, the book's (the verdict's fit) with its interval and n, the verdict."""
    chapter, label = EXPONENT_ROWS[key]
    fit = f"exponent_{key}_logistic"
    c = _number(m, fit)
    book = (NOT_MEASURED if math.isnan(c) else
            f"c = {c:.2f} ({_interval(_number(m, f'{fit}_ci_low'), _number(m, f'{fit}_ci_high'))}; "
            f"{_support(m, fit)})")
    verdict = m.get(f"verdict_{key}")
    return ClaimRow(f"{label}: required data ∝ N^c", f"c = {PAPER[key]:.2f}", book,
                    verdict_words(verdict) if isinstance(verdict, str) else NOT_MEASURED, chapter)


MODEL_SIZE_LABELS = {"twohop_small_model": "two-hop on a 2-layer width-64 model",
                     "twohop_large_model": "two-hop on a 6-layer width-128 model"}


def _series_label(key: str) -> str:
    return {**EXPONENT_LABELS, **MODEL_SIZE_LABELS}.get(key, series_name(key))


def claim_difference(claim: Claim) -> str:
    """What a claim's difference is, in words: the exponents it subtracts (covlib.search.reproduction.claim_table)."""
    first, second = _series_label(claim.first), _series_label(claim.second)
    if claim.third is None:
        return f"{first} minus {second}"
    third = _series_label(claim.third)
    if claim.sign:
        return f"the smaller of {first} minus {second} and {third} minus {first}"
    return f"the larger of {first} minus {second} and {third} minus {second}"


def _paper_difference(claim: Claim) -> str:
    return f"difference {claim.paper_gap:+.2f}" if claim.sign else "equal"


def claim_row(m: Mapping[str, Any], claim: Claim, chapter: str) -> ClaimRow:
    """A comparative claim's row: the paper's figures, the book's paired difference with its interval, the verdict."""
    text, figures = claim.text.split(" (", 1)
    key = f"claim_{claim.name}"
    d = _number(m, f"{key}_difference")
    cells = _count(m, f"{key}_cells")
    n = (f"; {cells} {'paired ' if m.get(f'{key}_paired') else ''}{'cell' if cells == 1 else 'cells'} at "
         f"{_count(m, f'{key}_n_values')} values of N" if f"{key}_cells" in m else "")
    book = (NOT_MEASURED if math.isnan(d) else
            f"{d:+.2f} ({_interval(_number(m, f'{key}_ci_low'), _number(m, f'{key}_ci_high'), '+.2f')}{n}), "
            f"{claim_difference(claim)}")
    verdict = m.get(f"{key}_verdict")
    return ClaimRow(text, f"{figures.removesuffix(')')}: {_paper_difference(claim)}", book,
                    verdict_words(verdict) if isinstance(verdict, str) else NOT_MEASURED, chapter)


def _n_range(Ns: Sequence[int]) -> str:
    Ns = sorted(int(n) for n in Ns)
    return f"N = {Ns[0]}" if len(Ns) == 1 or Ns[0] == Ns[-1] else f"N = {Ns[0]}-{Ns[-1]}"


def _nontree_row(m: Mapping[str, Any]) -> ClaimRow:
    e = NONTREE_EXPERIMENTS["nontree"]
    finished, unreachable = _count(m, "nontree_cells_finished"), _number(m, "nontree_cells_unreachable")
    paper = (f"fails at N = {NONTREE_FAILS_AT['N']} with {NONTREE_FAILS_AT['n_train']:,} of its "
             f"{NONTREE_FAILS_AT['eligible']:,} ID examples")
    if not finished or math.isnan(unreachable):
        return ClaimRow("non-tree composition (x2 read twice) is not learned, even from nearly all ID data", paper,
                        NOT_MEASURED, NOT_MEASURED, "06")
    cells = len(e["N"]) * len(e["seeds"])
    book = (f"{int(unreachable)} of {count_of(finished, 'finished search', 'finished searches')} never reach 99% ID "
            f"accuracy ({count_of(cells, 'cell')}, {_n_range(e['N'])}, {count_of(len(e['seeds']), 'seed')})")
    verdict = "agrees" if unreachable == finished else "disagrees: some search reaches 99%"
    return ClaimRow("non-tree composition (x2 read twice) is not learned, even from nearly all ID data", paper,
                    book, verdict, "06")


def _nontree_cot_row(m: Mapping[str, Any]) -> ClaimRow:
    e = COT_EXPERIMENTS["nontree_cot"]
    paper = (f"fails at N = {NONTREE_COT_FAILS_AT['N']} with {NONTREE_COT_FAILS_AT['n_train']:,} examples, where "
             "two-hop with CoT succeeds")
    reachable = _number(m, "nontree_cot_reachable")
    if math.isnan(reachable):
        return ClaimRow("chain of thought does not rescue non-tree", paper, NOT_MEASURED, NOT_MEASURED, "07")
    book = (f"{'a' if reachable else 'no'} probe of its search reaches 99% ID accuracy ({_n_range(e['N'])}, "
            f"{count_of(len(e['seeds']), 'seed')})")
    return ClaimRow("chain of thought does not rescue non-tree", paper, book,
                    "disagrees: CoT rescues it here" if reachable else "agrees", "07")


def _ratio(m: Mapping[str, Any], task: str) -> str:
    """One task's data saving by CoT: "2.4x (8 pairs, 1.7-2.9)", with the step floor's where recorded."""
    key = f"data_ratio_{task}_cot"
    ratio, pairs = _number(m, key), _count(m, f"{key}_pairs")
    if math.isnan(ratio):
        bound = _number(m, f"{key}_at_least")
        return "" if math.isnan(bound) else f"at least {bound:.1f}x (no success without CoT up to its pool)"
    low, high = _number(m, f"{key}_min"), _number(m, f"{key}_max")
    text = (f"{ratio:.1f}x ({count_of(pairs, 'pair')}, {low:.1f}-{high:.1f})" if pairs > 1 and not math.isnan(low)
            else f"{ratio:.1f}x (one pair)")
    floor, floor_pairs = _number(m, f"{key}_floor"), _count(m, f"{key}_floor_pairs")
    if floor_pairs > 1 and not math.isnan(floor):
        text = text[:-1] + f"; {floor:.1f}x under the step floor, {count_of(floor_pairs, 'pair')})"
    return text


def _saving_verdict(m: Mapping[str, Any]) -> str:
    """Two-hop's saving against the paper's 5-10x, from every ratio recorded (authors' rule and step floor)."""
    key = "data_ratio_twohop_cot"
    values = [v for v in (_number(m, key), _number(m, f"{key}_min"), _number(m, f"{key}_max"),
                          _number(m, f"{key}_floor")) if not math.isnan(v)]
    if not values:
        return NOT_MEASURED
    low, high = COT_DATA_RATIO
    if max(values) < low:
        return f"smaller for two-hop: every pair under {low:.0f}x"
    if min(values) > high:
        return f"larger for two-hop: every pair over {high:.0f}x"
    if low <= min(values) and max(values) <= high:
        return "within the paper's range for two-hop"
    return "overlaps the paper's range for two-hop"


def _saving_row(m: Mapping[str, Any]) -> ClaimRow:
    parts = [f"{name} {text}" for task, name in task_words("twohop", "threehop", "fivehop").items()
             if (text := _ratio(m, task))]
    return ClaimRow("chain of thought saves data: required data without CoT over with it, at equal N",
                    f"{COT_DATA_RATIO[0]:.0f}-{COT_DATA_RATIO[1]:.0f}x (two-hop)",
                    "; ".join(parts) if parts else NOT_MEASURED, _saving_verdict(m), "07")


def _taxonomy_rows(m: Mapping[str, Any]) -> list[ClaimRow]:
    named = "named, no numbers"
    acc, control, n = (_number(m, k) for k in ("acc_property_reachable", "acc_property_control",
                                               "n_property_reachable"))
    prop = (NOT_MEASURED if math.isnan(acc) else
            f"{_pct(acc, 1)} of the {n:,.0f} inputs outside coverage whose mirror is covered, against "
            f"{_pct(control, 1)} for a control without the symmetry")
    rows = [ClaimRow("property-based generalisation: a symmetry (commutative f1) reaches inputs outside coverage",
                     named, prop, NOT_MEASURED if prop == NOT_MEASURED else NO_PAPER_FIGURE, "08")]
    acc, control, n = (_number(m, k) for k in ("acc_reuse_second_role", "acc_reuse_second_role_control",
                                               "n_reuse_second_role"))
    if math.isnan(acc) or math.isnan(control):
        reuse = NOT_MEASURED
    else:
        seeds, p, worst = (_count(m, "seeds_reuse_second_role"), _number(m, "p_reuse_second_role"),
                           _number(m, "p_reuse_second_role_max_seed"))
        shown = ("not decided with one seed" if seeds < 2 else "shown" if m.get("reuse_second_role_shown") else
                 "not shown, the seeds disagree" if p < 0.01 else "not shown")
        reuse = (f"{_pct(acc, 1)} on {n:,.0f} inputs against {_pct(control, 1)} for the best control "
                 f"({count_of(seeds, 'seed')}, one-sided {p_value(p)} pooled"
                 + (f", {p_value(worst)} in the weakest seed" if seeds >= 2 and not math.isnan(worst) else "")
                 + f"): reuse {shown}")
    rows.append(ClaimRow("shared-operator generalisation: a fact taught in one hop's role is reused in another",
                         named, reuse, NOT_MEASURED if reuse == NOT_MEASURED else NO_PAPER_FIGURE, "08"))
    return rows


BAND = 1.15  # chapter 10's band: a prediction within this factor of the measurement (its *_within_115 metrics)
PREDICT_SET_NAMES = task_words("twohop", "threehop", "parallel_twohop", "twohop_cot", "threehop_cot", "twohop_mamba") | {
    "authors": "the authors' two-hop models"}


# chapter 10's tasks scored out of sample (its predict_oos_median_ratio_<key> metrics)
OOS_TASK_NAMES = task_words("twohop", "threehop", "parallel_twohop", "fivehop", "twohop_cot", "threehop_cot",
                            "fivehop_cot")


def _within(low: float, high: float, band: float = BAND) -> bool:
    return 1 / band <= low and high <= band


def predicted_ranges(m: Mapping[str, Any]) -> dict[str, tuple[float, float]]:
    """Chapter 10's measured / predicted range per set of cells, in the order of PREDICT_SET_NAMES."""
    return {key: (_number(m, f"predict_ratio_{key}_min"), _number(m, f"predict_ratio_{key}_max"))
            for key in PREDICT_SET_NAMES if not math.isnan(_number(m, f"predict_ratio_{key}_min"))}


def _out_of_sample_row(m: Mapping[str, Any]) -> ClaimRow:
    """Chapter 10's rule scored out of sample, each task's cells by the rule fitted without them (its predict_oos_*
    metrics, where recorded): the shares of those cells within 1.15x and 1.25x of their prediction."""
    claim = "coverage predicts the required data, each task by the rule fitted without it"
    share, cells = _number(m, "predict_oos_within_115_share"), _count(m, "predict_oos_cells")
    if math.isnan(share) or not cells:
        return ClaimRow(claim, NO_PAPER_PREDICTOR, NOT_MEASURED, NOT_MEASURED, "10")
    wider = _number(m, "predict_oos_within_125_share")
    book = (f"{_pct(share)} of {count_of(cells, 'cell')} within {BAND:g}x of their prediction"
            + ("" if math.isnan(wider) else f", {_pct(wider)} within 1.25x"))
    medians = {name: _number(m, f"predict_oos_median_ratio_{key}") for key, name in OOS_TASK_NAMES.items()}
    medians = {name: v for name, v in medians.items() if not math.isnan(v)}
    if not medians or math.isnan(wider):
        return ClaimRow(claim, NO_PAPER_PREDICTOR, book, NO_PAPER_FIGURE, "10")
    outside = {name: v for name, v in medians.items() if not 1 / 1.25 <= v <= 1.25}
    if outside:
        book += "; the task medians outside 1.25x: " + ", ".join(f"{n} {v:.2f}" for n, v in outside.items())
    met = wider >= 0.75 and not outside
    verdict = ("the goal (75% of cells and every task's median within 1.25x) met" if met else
               "the goal (75% of cells and every task's median within 1.25x) not met")
    return ClaimRow(claim, NO_PAPER_PREDICTOR, book, verdict, "10")


def _preregistered_row(m: Mapping[str, Any]) -> ClaimRow:
    """Chapter 10's predictions committed before their cells were measured (its predict_preregistered_* metrics)."""
    claim = "coverage predicts the required data of tasks never trained, committed before they are measured"
    tasks, measured = _count(m, "predict_preregistered_tasks"), _count(m, "predict_preregistered_cells_measured")
    if not measured:
        book = (NOT_MEASURED if not tasks else
                f"predictions for {count_of(tasks, 'task')} committed; {NOT_MEASURED}")
        return ClaimRow(claim, NO_PAPER_PREDICTOR, book, NOT_MEASURED, "10")
    low, high = _number(m, "predict_preregistered_ratio_min"), _number(m, "predict_preregistered_ratio_max")
    share = _number(m, "predict_preregistered_within_125_share")
    verdict = (NO_PAPER_FIGURE if share != share else
               f"{share:.0%} of the cells measured so far within 1.25x of their prediction")
    amended = _count(m, "predict_preregistered_both_oos_cells") if "predict_preregistered_both_oos_cells" in m else None
    both_low = _number(m, "predict_preregistered_both_ratio_min")
    both_high = _number(m, "predict_preregistered_both_ratio_max")
    later = ("" if amended is None else
             "; the amended rule written after the first cells (the larger of its two evidences): "
             + (f"{count_of(amended, 'cell')} measured since, {both_low:.2f}-{both_high:.2f}" if amended else
                "no cell measured since"))
    of_tasks = (f"{count_of(tasks, 'task')} preregistered" if "predict_preregistered_tasks_measured" not in m else
                f"{_count(m, 'predict_preregistered_tasks_measured')} of the {count_of(tasks, 'task')} preregistered")
    return ClaimRow(claim, NO_PAPER_PREDICTOR,
                    f"{count_of(measured, 'cell')} measured ({of_tasks}): measured / predicted "
                    f"{low:.2f}-{high:.2f}{later}", verdict, "10")


def _fitted_on_one_row(m: Mapping[str, Any]) -> ClaimRow | None:
    """Chapter 10's rule fitted on one task's cells and applied unchanged to every other set (where it records
    which task it was fitted on, and each set's measured / predicted range)."""
    ranges, rule, fitted = predicted_ranges(m), m.get("predict_rule"), m.get("predict_rule_fitted_on")
    if not ranges or not isinstance(rule, str) or not isinstance(fitted, str):
        return None
    book = (f"n_req = {rule}; measured / predicted: "
            + "; ".join(f"{PREDICT_SET_NAMES[k]} {lo:.2f}-{hi:.2f}" + (" (in sample)" if k == fitted else "")
                        for k, (lo, hi) in ranges.items())
            + f"; {_pct(_number(m, 'predict_within_115_share'))} of all cells within {BAND:g}x")
    inside = [PREDICT_SET_NAMES[k] for k, (lo, hi) in ranges.items() if _within(lo, hi) and k != fitted]
    outside = [PREDICT_SET_NAMES[k] for k, (lo, hi) in ranges.items() if not _within(lo, hi)]
    verdict = (f"within {BAND:g}x on {series(inside) if inside else 'no set but its own'}"
               + (f"; not on {series(outside)}" if outside else ""))
    return ClaimRow("coverage predicts the required data before training: one rule, fitted on "
                    f"{PREDICT_SET_NAMES.get(fitted, fitted)} alone", NO_PAPER_PREDICTOR, book, verdict, "10")


def _prediction_rows(m: Mapping[str, Any]) -> list[ClaimRow]:
    """Chapter 10's rule: fitted on one task and applied to the others (where recorded), each task predicted by the
    rule fitted without it, and predictions committed before measuring ("not measured yet" until recorded)."""
    first = _fitted_on_one_row(m)
    return [*([first] if first else []), _out_of_sample_row(m), _preregistered_row(m)]


def claim_rows(chapters: Mapping[str, Mapping[str, Any]]) -> list[ClaimRow]:
    """The findings table: every exponent the paper publishes, its comparative claims, non-tree's failure (with and
    without CoT), CoT's saving, the taxonomy and coverage's prediction of the required data."""
    ch = {name[:2]: values for name, values in chapters.items()}
    rows = [exponent_row(ch.get(chapter, {}), key) for key, (chapter, _) in EXPONENT_ROWS.items()]
    for claim in CLAIMS:
        chapter = _claim_chapter(ch, claim)
        rows.append(claim_row(ch.get(chapter, {}), claim, chapter))
    rows += [_nontree_row(ch.get("06", {})), _nontree_cot_row(ch.get("07", {})), _saving_row(ch.get("07", {})),
             *_taxonomy_rows(ch.get("08", {})), *_prediction_rows(ch.get("10", {}))]
    return rows


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def claims_table(rows: Sequence[ClaimRow], link: Callable[[str], str], stems: Mapping[str, str]) -> str:
    """The rows as a markdown table; each claim links to the chapter that measures it."""
    lines = ["| the paper's claim | the paper | this book | verdict |", "|---|---|---|---|"]
    for r in rows:
        where = f" ([ch. {int(r.chapter)}]({link(stems[r.chapter])}))" if r.chapter in stems else ""
        lines.append(f"| {_cell(r.claim)}{where} | {_cell(r.paper)} | {_cell(r.book)} | {_cell(r.verdict)} |")
    return "\n".join(lines)


# a claim's verdict as the pattern counts it: the paper's claim borne out, contradicted, or left open
CLAIM_OUTCOMES = {"same_sign": "borne out", "reproduced": "borne out", "opposite_sign": "contradicted",
                  "differs": "contradicted"}


def _claim_chapter(ch: Mapping[str, Mapping[str, Any]], claim: Claim) -> str:
    """The chapter whose metrics record ``claim``: chapter 4, which records every claim, else chapter 7 (the two
    about chain of thought)."""
    return "04" if f"claim_{claim.name}_verdict" in ch.get("04", {}) else "07"


def pattern(ch: Mapping[str, Mapping[str, Any]]) -> str:
    """The pattern across the verdicts, in plain words: the exponents grouped by verdict, how wide the intervals of
    the undecided ones still are against the band a reproduction needs, and which of the paper's comparative claims
    the data bear out, contradict or leave open ("" before any verdict is recorded)."""
    verdicts = {f"verdict_{key}": ch.get(chapter, {}).get(f"verdict_{key}")
                for key, (chapter, _) in EXPONENT_ROWS.items()}
    clause = _verdict_clause(verdicts, list(EXPONENT_ROWS))
    if not clause:
        return ""
    said = f"*The pattern.* Against the paper's {len(EXPONENT_ROWS)} exponents: {clause}"
    widths = []
    for key, (chapter, _) in EXPONENT_ROWS.items():
        if verdicts[f"verdict_{key}"] == "inconclusive":
            m = ch.get(chapter, {})
            fit = f"exponent_{key}_logistic"
            widths.append(_number(m, f"{fit}_ci_high") - _number(m, f"{fit}_ci_low"))
    widths = [w for w in widths if not math.isnan(w)]
    if widths:
        said += (f". The 95% intervals of the undecided ones are {min(widths):.2f} to {max(widths):.2f} wide in c, "
                 f"where a reproduction needs a 90% interval inside a band {2 * EQUIVALENCE_MARGIN:.2f} wide: more "
                 "cells and replicates narrow them (data/QUEUE.sh runs them)")
    said += _bend_clause(ch, verdicts)
    outcomes: dict[str, list[str]] = {}
    against = []
    for claim in CLAIMS:
        m = ch.get(_claim_chapter(ch, claim), {})
        verdict = m.get(f"claim_{claim.name}_verdict")
        if not isinstance(verdict, str):
            continue
        text = claim.text.split(" (")[0]
        outcomes.setdefault(CLAIM_OUTCOMES.get(verdict, "left open"), []).append(text)
        if claim.runs_against(_number(m, f"claim_{claim.name}_difference"), verdict):
            against.append(text)
    if outcomes:
        told = [f"{len(outcomes[o])} {'is' if len(outcomes[o]) == 1 else 'are'} {o}"
                + (f" ({'; '.join(outcomes[o])})" if o != "left open" else "")
                for o in ("borne out", "contradicted", "left open") if o in outcomes]
        said += f". Of the paper's {sum(map(len, outcomes.values()))} comparative claims, {series(told)}"
        if against:
            said += (f"; in {'one' if len(against) == 1 else len(against)} ({'; '.join(against)}) the book's estimate "
                     "runs against the paper, short of a contradiction")
    return said + _family_clause(ch) + "."


def _bend_clause(ch: Mapping[str, Mapping[str, Any]], verdicts: Mapping[str, Any]) -> str:
    """For each exponent that differs from the paper's: whether its law bends within the N it measured (its
    exponent over the smaller and the larger half of its N), which would explain the gap ("" where none differs)."""
    said = []
    for key, (chapter, _) in EXPONENT_ROWS.items():
        m = ch.get(chapter, {})
        low, high = _number(m, f"exponent_{key}_lower_half"), _number(m, f"exponent_{key}_upper_half")
        if verdicts[f"verdict_{key}"] != "differs" or math.isnan(low) or math.isnan(high):
            continue
        if abs(high - low) <= EQUIVALENCE_MARGIN:
            said.append(f"the law of {EXPONENT_LABELS[key]} is about as steep over the smaller half of its N "
                        f"(c = {low:.2f}) as over the larger ({high:.2f}): no bend within the N measured explains "
                        "its gap from the paper")
        else:
            said.append(f"{EXPONENT_LABELS[key]} differs, but its law bends within the N it measured (c = {low:.2f} "
                        f"over the smaller half of its N, {high:.2f} over the larger): its exponent depends on the "
                        "range fitted")
    return "".join(f". {sentence_start(s)}" for s in said)


def _family_clause(ch: Mapping[str, Mapping[str, Any]]) -> str:
    """The decided verdicts read as two families, the published exponents and the claims (covlib.analyses.family):
    which keep their verdict and which do not ("" when none is decided, or the metrics predate the family
    reading)."""
    exponents = [(EXPONENT_LABELS[key], ch.get(chapter, {}), f"verdict_{key}", f"verdict_{key}_family")
                 for key, (chapter, _) in EXPONENT_ROWS.items()]
    claims = [(f"that {c.text.split(' (')[0]}", ch.get(_claim_chapter(ch, c), {}), f"claim_{c.name}_verdict",
               f"claim_{c.name}_family_verdict") for c in CLAIMS]
    kept, lost = [], []
    for name, m, key, family in exponents + claims:
        verdict = m.get(key)
        if verdict in (None, "inconclusive") or not isinstance(m.get(family), str):
            continue
        said = f"{name} ({CLAIM_OUTCOMES.get(verdict, verdict) if key.startswith('claim_') else verdict})"
        (kept if m[family] == verdict else lost).append(said)
    if not kept and not lost:
        return ""
    lead = (". Read as two families tested at once (Bonferroni: each exponent judged at the level that holds for "
            f"all {len(exponents)} together, each claim for all {len(claims)}), ")
    if not kept:
        return lead + f"no decided verdict stands: {series(lost)} become{'s' if len(lost) == 1 else ''} inconclusive"
    said = f"{series(kept)} keep{'s' if len(kept) == 1 else ''} {'its verdict' if len(kept) == 1 else 'their verdicts'}"
    return lead + said + (f", and {series(lost)} become{'s' if len(lost) == 1 else ''} inconclusive" if lost else "")


# ----------------------------------------------------------------------------- a sentence or two per chapter


def _verdict_clause(m: Mapping[str, Any], keys: Sequence[str]) -> str:
    """ "parallel two-hop reproduced; two-hop, three-hop and two-hop on a Mamba inconclusive": the exponents grouped
    by verdict, each group named before its verdict ("" when none has one)."""
    groups: dict[str, list[str]] = {}
    for key in keys:
        verdict = m.get(f"verdict_{key}")
        if isinstance(verdict, str):
            groups.setdefault(verdict_words(verdict), []).append(EXPONENT_LABELS[key])
    return "; ".join(f"{series(labels)} {verdict}" for verdict, labels in groups.items())


def _effect(m: Mapping[str, Any], prefix: str) -> str:
    """A contrast's effect on accuracy: the total with the per-point effect beside it, worded per point; none where
    its arms moved 3-coverage by less than chapter 9's MIN_GAP (a design that did not move it says nothing of it)."""
    gap, e = _number(m, f"{prefix}coverage_gap_between_arms"), _number(m, f"{prefix}effect_per_coverage_point")
    if math.isnan(gap) or math.isnan(e):
        return "no effect estimable"
    if abs(gap) < MIN_GAP:
        return f"under {MIN_GAP} points: too little to read an effect of 3-coverage"
    lo, hi = (_number(m, f"{prefix}effect_per_coverage_point_ci_{end}") for end in ("low", "high"))
    return (f"accuracy moved by {e * gap:+.2f} pp in all, {e:+.2f} pp per point of 3-coverage (95% interval "
            f"{lo:+.2f} to {hi:+.2f} per point)")


class _Recorded(dict):
    """A chapter's metrics where a number it did not record reads as NaN (written "nan": a test of the README fails
    on it, and a miniature book's site still builds)."""

    def __missing__(self, key: str) -> float:
        return math.nan


def _chapter_sentences(ch: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """chapter number -> its sentence(s), from its metrics (chapter 1 measures nothing)."""
    ch = {number: _Recorded(m) for number, m in ch.items()}
    out = {"01": ("builds the paper's tasks (" + series([series_name(t) for t in TASKS]) + ") as computation "
                  "graphs of random primitive tables, with their datasets in the authors' format.")}
    if m := ch.get("02"):
        covered = ", ".join(fmt(_number(m, f"type0_covered_k{k}") * 100, ".0f") for k in range(1, 9))
        paper = ", ".join(f"{v:g}" for v in TYPE0_COVERAGE_TWOHOP_30_4000.values())
        out["02"] = (f"computes exact k-coverage: of two-hop's ID test items (N = {m['N']}, {m['n_train']:,} examples) "
                     f"{covered}% are k-covered for k = 1..8, against the paper's {paper}%. The data that 3-covers 90% "
                     f"of them grows as N^{m['coverage_exponent']:.2f} (the paper's required data: "
                     f"N^{EXPONENTS['twohop']:.2f}).")
    if m := ch.get("03"):
        groups = ", ".join(f"{_pct(m[f'edge_acc_{key}_mean'])} for {label}"
                           for label, key in (("k<3", "k_lt3"), ("k=3", "k3"), ("k>3", "k_gt3")))
        out["03"] = (f"trains a transformer at the edge of coverage: its final ID accuracy is {groups} (the mean of "
                     f"{m['edge_seeds']} training seeds), rising with the k-cutoff "
                     f"{_in_every_seed(m['edge_order_final_all_seeds'])}.")
    if m := ch.get("04"):
        said = _verdict_clause(m, ["twohop", "threehop", "parallel_twohop", "twohop_mamba"])
        out["04"] = ("searches the required data by training (" + f"{m['probes']} probes, {run_time(m['cpu_hours'])})"
                     + (f". Its exponents against the paper's: {said}." if said else ".")
                     + f" Model size: a 2-layer width-64 model needs "
                     f"{_number(m, 'n_req_ratio_L2_d64_to_default_floor'):.2f}x the default's data and a 6-layer "
                     f"width-128 one {_number(m, 'n_req_ratio_L6_d128_to_default_floor'):.2f}x (the step floor), "
                     f"against {_number(m, 'seed_spread_twohop_floor'):.2f}x between two seeds of one cell.")
    if m := ch.get("05"):
        out["05"] = (f"looks inside the model: ID items that share the bridge cluster at layer "
                     f"{m['iicg_id_peak_layer']}, position {m['iicg_id_peak_position']} (IICG "
                     f"{m['iicg_id_peak']:.2f}; {m['iicg_k<3']:.2f}, {m['iicg_k=3']:.2f} and {m['iicg_k>3']:.2f} for "
                     f"k<3, k=3 and k>3), and causal tracing flips "
                     f"{_pct(m['trace_rank_x2_layer1'])} of predictions at x2, layer 1"
                     + (f"; over {m['iicg_seeds']} training seeds the order by k-cutoff holds "
                        f"{_in_every_seed(m['iicg_order_all_seeds'])}" if m.get("iicg_seeds", 0) >= 2 else "") + ".")
    if m := ch.get("06"):
        out["06"] = (f"reads x2 twice (non-tree): its whole ID pool is {_pct(m['pool_coverage_k3_nontree'])} "
                     f"3-covered against two-hop's {_pct(m['pool_coverage_k3_twohop'])}, and a model reaches "
                     f"{_pct(m['final_type0_nontree'], 1)} ID accuracy on it where one on two-hop, at the same N and "
                     f"data, reaches {_pct(m['final_type0_twohop'], 1)}; its representations group by the bridge "
                     f"with IICG {m['iicg_max_nontree_by_b']:.2f}, two-hop's with {m['iicg_max_twohop_by_b']:.2f}.")
    if m := ch.get("07"):
        said = _verdict_clause(m, ["twohop_cot", "threehop_cot", "fivehop_cot"])
        ratios = [f"{name} {r:.1f}x" for task, name in task_words("twohop", "threehop", "fivehop").items()
                  if not math.isnan(r := _number(m, f"data_ratio_{task}_cot"))]
        share = _number(m, "placeholder_saving_share")
        low, high = _number(m, "placeholder_saving_share_ci_low"), _number(m, "placeholder_saving_share_ci_high")
        out["07"] = ("writes the bridge out (chain of thought)"
                     + (f": the exponents against the paper's: {said}" if said else "")
                     + (f". Chain of thought saves data at equal N ({', '.join(ratios)})" if ratios else "")
                     + ("" if math.isnan(share) else
                        f", and a placeholder bridge of the same length gets {share_of(share, 'that saving')}"
                        + ("" if math.isnan(low) else f" (95% interval {low:+.0%} to {high:+.0%})"))
                     + ".")
    if m := ch.get("08"):
        out["08"] = (f"measures the paper's taxonomy: with f1 commutative the model answers "
                     f"{_pct(m['acc_property_reachable'], 1)} of the inputs outside coverage whose mirror is covered "
                     f"(control {_pct(m['acc_property_control'], 1)}); a fact taught in one hop's role, reused in the "
                     f"other: {_taxonomy_rows(m)[1].book}.")
    if m := ch.get("09"):
        out["09"] = (f"audits a companion study on two-hop ({m['runs']} runs): accuracy follows the number of distinct "
                     f"examples, as a logistic in its log (R² {m['dose_response_r2']:.3f}). At a fixed number "
                     f"({BOOK_PLAN.contrast_n:,} examples, N = {BOOK_PLAN.setup.N}), training sets selected for "
                     f"extreme coverage differ in exact 3-coverage by {m['coverage_gap_between_arms']:+.2f} points, "
                     f"those selected on the surface measure by {m['surface_coverage_gap_between_arms']:+.2f}"
                     + (f": under {MIN_GAP} points each, too little to read an effect of 3-coverage from either."
                        if all(abs(_number(m, f"{p}coverage_gap_between_arms")) < MIN_GAP for p in ("", "surface_"))
                        else f" ({_effect(m, '')}; {_effect(m, 'surface_')}).") + _k3_sentence(m))
    if m := ch.get("10"):
        first, oos, ahead = _fitted_on_one_row(m), _out_of_sample_row(m), _preregistered_row(m)
        out["10"] = ("predicts the required data from coverage alone, before training"
                     + (f": one rule fitted on {PREDICT_SET_NAMES.get(m['predict_rule_fitted_on'])}'s cells is "
                        f"{first.verdict}" if first else "")
                     + f". Each task predicted by the rule fitted without it: {oos.book}; predictions committed "
                     f"before their measurement: {ahead.book}.")
    return out


def _k3_sentence(m: Mapping[str, Any]) -> str:
    """Chapter 9's contrasts of 3-coverage where random sets vary most (N = 20)."""
    parts = []
    for prefix, plan in (("k3_", K3_PLAN), ("k3_wide_", K3_WIDE_PLAN)):
        gap = _number(m, f"{prefix}coverage_gap_between_arms")
        if math.isnan(gap):
            continue
        parts.append(f"chosen among {plan.candidates:,} random sets, the arms moved 3-coverage by {gap:+.1f} points "
                     f"and {_effect(m, prefix)}")
    if not parts:
        return ""
    floor = m.get("k3_wide_at_floor") or m.get("k3_at_floor")
    return (f" Where random sets vary most (N = {K3_PLAN.setup.N}), " + "; ".join(parts)
            + (": both at the accuracy floor, where the models do not generalise." if floor else "."))


def chapter_stems(chapters: Mapping[str, Any] = ()) -> dict[str, str]:
    """chapter number -> its file stem ("04" -> "04_how_much_data"): the book's chapters, and any other the
    metrics name."""
    stems = {p.stem[:2]: p.stem for p in discover_chapters()}
    return {**{name[:2]: name for name in chapters}, **stems}


def findings(chapters: Mapping[str, Mapping[str, Any]], link: Callable[[str], str] = readme_link,
             stems: Mapping[str, str] | None = None) -> str:
    """The findings as markdown: the table of the paper's claims against the book's verdicts, the verdict rule, the
    pattern across the verdicts, and a sentence or two per chapter, each linking to it (``link``: a chapter's stem
    -> its address; ``stems``: the chapters to link, number -> stem, by default every chapter of the book)."""
    ch = {name[:2]: values for name, values in chapters.items()}
    stems = chapter_stems(chapters) if stems is None else stems
    sentences = _chapter_sentences(ch)
    bullets = [f"* [Chapter {int(number)}]({link(stems[number])}) {text}"
               for number, text in sorted(sentences.items()) if number in stems]
    said = pattern(ch)
    return "\n".join([claims_table(claim_rows(chapters), link, stems), "", VERDICT_RULE, "",
                      *([said, ""] if said else []), *bullets])
# ----------------------------------------------------------------------------- the chapter table


def model_words(shape: str) -> str:
    """A model shape as a reader reads it: "mamba-L4-d128" -> "4-layer width-128 Mamba"."""
    cfg = MODEL_SHAPES[shape]
    family = "Mamba" if cfg.get("family") == "mamba" else "transformer"
    return f"{cfg['n_layers']}-layer width-{cfg['d_model']} {family}"


def experiment_span(e: Mapping[str, Any]) -> str:
    """The cells of an experiment as the chapter table states them: "N = 10-24 over 7 values and 2 seeds (N = 24
    under the step floor alone)"."""
    Ns, seeds = sorted(int(n) for n in e["N"]), e["seeds"]
    counts = (f"over {count_of(len(Ns), 'value')} and {count_of(len(seeds), 'seed')}" if len(Ns) > 1 else
              f"with {count_of(len(seeds), 'seed')}")
    alone = ([f"N = {', '.join(map(str, floor_only_N(e)))}"] if floor_only_N(e) else []) + (
        [f"seed {', '.join(map(str, floor_only_seeds(e)))}"] if floor_only_seeds(e) else [])
    return f"{_n_range(Ns)} {counts}" + (f" ({' and '.join(alone)} under the step floor alone)" if alone else "")


def chapter_rows() -> dict[str, str]:
    """chapter stem -> what it shows, with its experiments' N, seeds and models read from their definitions (chapter
    4's BOOK_EXPERIMENTS, chapters 6 and 7's EXPERIMENTS, chapter 9's plans)."""
    e4, e7, seeds = BOOK_EXPERIMENTS, COT_EXPERIMENTS, count_of(len(EDGE_SEED_ARCHIVES), "training seed")
    span = experiment_span
    rows = {
        "01": "the task families as computation graphs, random primitive tables, the seen split, ID-eligible inputs, "
              "test types",
        "02": "functional k-equivalence on a worked example, what equivalence classes recover, the substitution "
              "graph, k-coverage per test type, the paper's definition beside the authors' script, the data needed "
              "for coverage as N grows",
        "03": "a 4-layer transformer trained on a CPU (shipped runs; `recompute_*` retrains): accuracy over training "
              "per test type and per k-cutoff group, and the run at the edge of coverage over "
              f"{seeds} (mean, range, whether the order holds in every seed)",
        "04": "the required data n_req (smallest training set reaching 99% ID accuracy) searched by training, its "
              "power law in N with a bootstrap interval, beside coverage's prediction, the paper and its theory, and "
              "the verdicts against the paper's exponents and comparative claims: two-hop "
              f"({span(e4['twohop'])}, a {model_words(e4['twohop']['model'])}); model sizes (a "
              f"{model_words(e4['twohop_small_model']['model'])}, {span(e4['twohop_small_model'])}, and a "
              f"{model_words(e4['twohop_large_model']['model'])}, {span(e4['twohop_large_model'])}); another "
              f"architecture (a {model_words(e4['twohop_mamba']['model'])}, `--model {e4['twohop_mamba']['model']}`, "
              f"{span(e4['twohop_mamba'])}: its exponent beside the transformer's and its n_req ratio judged "
              f"against the seed gap); longer chains (three-hop {span(e4['threehop'])}, parallel two-hop "
              f"{span(e4['parallel_twohop'])}); every cell's probes explorable (click a cell)",
        "05": "IICG (bridge clusters in the residual stream) per split, per k-cutoff group and over training; causal "
              "tracing with TransformerLens hooks; the logit lens; beside the paper's draft numbers; the peak, the "
              f"order by k-cutoff and the tracing route repeated on {seeds}",
        "06": "non-tree composition (x2 read twice): why its equivalence classes and coverage shrink, learning against "
              "two-hop at the same N and data, its required-data searches "
              f"({span(NONTREE_EXPERIMENTS['nontree'])}; its N = {RAISED_CAP['N']} cell rerun under a "
              f"{RAISED_CAP['step_cap']:,}-step cap, so that the authors' give-up rule ends it), IICG by b, x2 and "
              "(b, x2), the logit lens and three causal-tracing variants",
        "07": "the bridge written out: required data and exponents with and without CoT (two-hop "
              f"{span(e7['twohop_cot'])}, three-hop {span(e7['threehop_cot'])}; five-hop with CoT "
              f"{span(e7['fivehop_cot'])}, and without CoT at {span(e7['fivehop'])}, what the bridges save there), the "
              "data ratio (a lower bound where the plain search fails), whether CoT rescues non-tree (its "
              f"required-data search, {span(e7['nontree_cot'])}), four models at one N (plain, CoT, placeholder "
              f"bridge, non-tree with CoT), the placeholder bridge's own searches ({span(e7['twohop_fakebridge'])}, "
              f"and {span(e7['twohop_fakebridge_floor'])} under the step floor), greedy decoding against teacher "
              "forcing on ID and OOD items, IICG by b, (b, x2) and t over the CoT sequence",
        "08": "the paper's taxonomy measured: a commutative primitive (inputs outside coverage reachable through the "
              "symmetry) and a shared operator (facts seen in another hop's role), each against a control model; a "
              "summary table",
        "09": "a companion study's audit (diversity vs exposure vs pair coverage at a fixed budget) run with exact "
              "coverage: dose-response, a diversity x exposure factorial with effect sizes and a floor-or-escape "
              f"mixture, training sets of one size ({BOOK_PLAN.contrast_n:,} examples, N = {BOOK_PLAN.setup.N}) "
              f"selected for extreme exact coverage or surface pair coverage (up to {BOOK_PLAN.per_arm} per arm), "
              "tested with permutation and equivalence tests, and contrasts of exact 3-coverage where random sets "
              f"vary most (N = {K3_PLAN.setup.N}, {K3_PLAN.per_arm} sets per arm chosen among "
              f"{K3_PLAN.candidates:,} and among {K3_WIDE_PLAN.candidates:,} random sets), each read per point of "
              "the coverage its arms differ by",
        "10": "coverage predicts the data a task needs before any training: evidence that follows the task's "
              "structure (k-coverage through true equivalences at k = depth + 1; with chain of thought, how often "
              "training uses each hop fact), one rule (shares, a fact count, one factor) fitted on the cells chapters 4 "
              "and 7 measured under the give-up floor and scored task by task by the rule fitted without it, the "
              "architecture tests and the authors' models beside, coincidences measured per task, predictions for "
              "three tasks never trained committed before their measurement (`covlib predict` applies the same rule), "
              "then a task the reader writes as a formula (`--graph`), its coverage, its predicted data over N and "
              "one probe trained at that size",
    }
    stems = chapter_stems()
    return {stems.get(number, number): text for number, text in rows.items()}


def chapter_table() -> str:
    """The README's table of chapters: which chapter shows what, with N ranges, seeds and models."""
    return "\n".join(["| chapter | what it shows |", "|---|---|",
                      *(f"| `{stem}` | {_cell(text)} |" for stem, text in chapter_rows().items())])


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
    """Rewrite the README's timings (from ``timings``), its repository, licence and citation block and its chapter
    table (from the experiments' definitions); True when the text changed."""
    path = Path(readme)
    text = path.read_text(encoding="utf-8")
    new = _replace_block(text, ABOUT_BLOCK, about_markdown("##"))
    new = _replace_block(new, TIMINGS_BLOCK, timings_text(json.loads(Path(timings).read_text(encoding="utf-8"))))
    if CHAPTERS_BLOCK[0] in new:  # test_readme checks that the README has it
        new = _replace_block(new, CHAPTERS_BLOCK, chapter_table())
    if new == text:
        return False
    write_text_atomic(path, new)
    return True


def refresh_readme(readme: str | os.PathLike, chapters: Mapping[str, Mapping[str, Any]]) -> bool:
    """Rewrite the README's findings from ``chapters`` (snapshot metrics); True when the text changed."""
    path = Path(readme)
    text = path.read_text(encoding="utf-8")
    old = findings_block(text)
    if not any(name[:2].isdigit() for name in chapters):  # e.g. the whole snapshot passed instead of its "chapters":
        raise CovlibError(f"no chapter's metrics to write into the README (got keys {sorted(chapters)[:5]}); pass "
                          "a snapshot's 'chapters' mapping, e.g. read_snapshot(path)['chapters']")
    new = findings(chapters)  # never a findings table of nothing but "not measured yet"
    if old == new:
        return False
    before, rest = text.split(START, 1)
    after = rest.split(END, 1)[1]
    write_text_atomic(path, f"{before}{START}\n{new}\n{END}{after}")
    return True


if __name__ == "__main__":  # python -m covlib.book.readme [README]: refresh every generated block of the README
    target = sys.argv[1] if len(sys.argv) > 1 else REPO / "README.md"
    changed = [refresh_blocks(target), refresh_readme(target, read_snapshot(SNAPSHOT)["chapters"])]
    print("README updated" if any(changed) else "README already current")
