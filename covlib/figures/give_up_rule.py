"""What a reader sees of a give-up rule's test, shared by chapters 4 and 7: the floor's reruns and flips, each
exponent under both rules, local slopes beside the paper's, the pattern across exponents and the verdicts."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from covlib.base.paper import REQUIRED_DATA_TWOHOP_AUTHORS
from covlib.figures.tables import ReaderTable, reader_table
from covlib.figures.text import count_of, sentence_start, series
from covlib.search.cells import Cell, ProbeRules
from covlib.search.probes import one_rule_rows
from covlib.search.recheck import BOOK_FLOOR, flip_counts, floor_from_probes, row_cells
from covlib.search.verdicts import (
    VERDICT_WORDS,
    exponents_for_reader,
    local_slopes,
    paper_local_slopes,
)

READER_NAMES = {"twohop": "two-hop", "threehop": "three-hop", "parallel_twohop": "parallel two-hop",
                "twohop_mamba": "two-hop, Mamba", "fivehop": "five-hop", "twohop_cot": "two-hop, CoT",
                "threehop_cot": "three-hop, CoT", "fivehop_cot": "five-hop, CoT", "nontree": "non-tree"}


# the "rule" of the paper's own local slopes in slopes_table (its published points, no give-up rule of ours)
PAPER_RULE = "the paper's"


def reader_name(key: str) -> str:
    """A task or exponent key as the book names it to readers ("nontree_cot": "non-tree, CoT"); an unknown key as is."""
    if key in READER_NAMES:
        return READER_NAMES[key]
    base = key.removesuffix("_cot")
    return f"{READER_NAMES[base]}, CoT" if base != key and base in READER_NAMES else key


def chosen_floor(probes: pd.DataFrame) -> tuple[int, float, int]:
    """floor_from_probes over the authors'-rule probes; the book's floor (quantile NaN, 0 successes) where the
    table holds no success to choose it from (a miniature search)."""
    try:
        return floor_from_probes(probes[probes["give_up_floor"] == 0])
    except ValueError:
        return BOOK_FLOOR, float("nan"), 0


def flips_view(recheck: pd.DataFrame) -> ReaderTable:
    """Per task: the finished brackets, the cells no training set the pool allows reached, the lower ends (of
    either) the floor reopens, those rerun so far and those that flipped."""
    counts = flip_counts(recheck)
    counts = counts.assign(task=counts["task"].map(reader_name))
    return reader_table(counts, {"task": "task (every model)", "brackets": "finished brackets",
                                 "unreachable": "cells no training set reached",
                                 "reopened": "lower ends the floor reopens", "reruns": "rerun so far",
                                 "flips": "flipped to success"})

def exponents_view(exponents: pd.DataFrame) -> ReaderTable:
    """Each exponent under both rules: c, interval, N span, values of N, seeds, cells, the paper's."""
    shown = exponents_for_reader(exponents)
    shown = shown.assign(exponent=shown["exponent"].map(reader_name))
    return reader_table(shown, {"exponent": "exponent", "rule": "give-up rule", "c": "c", "interval": "95% interval",
                                "N_span": "N", "n_values": "values of N", "seeds": "seeds", "cells": "cells",
                                "paper": "paper"}, formats={"c": ".2f", "paper": ".2f"}, max_rows=20)

def slopes_table(exponents: pd.DataFrame, with_paper: bool = True) -> pd.DataFrame:
    """The local slope between each pair of adjacent N, per exponent and rule (where the rule has finished cells
    at both), and (``with_paper``) the paper's own from its published two-hop n_req."""
    parts = []
    for _, r in exponents.iterrows():
        slopes = local_slopes(r["summary"]) if len(r["summary"]) else local_slopes(pd.DataFrame(columns=["N", "n_req"]))
        if len(slopes):
            parts.append(slopes.assign(exponent=reader_name(r["exponent"]), rule=r["rule"]))
    if with_paper:
        parts.append(paper_local_slopes().assign(exponent="two-hop, the paper (GPU)", rule=PAPER_RULE))
    if not parts:  # no exponent has finished cells at two adjacent N yet (a miniature search)
        return pd.DataFrame(columns=["exponent", "rule", "N_low", "N_high", "slope", "slope_min", "slope_max",
                                     "bracket_min", "bracket_max", "pairs", "N", "seed_range", "bracket_range"])
    table = pd.concat(parts, ignore_index=True)
    return table.assign(N=table["N_low"].astype(str) + "-" + table["N_high"].astype(str),
                        seed_range=[f"{a:.2f} to {b:.2f}" if p > 1 else "one estimate per N"
                                    for a, b, p in zip(table["slope_min"], table["slope_max"], table["pairs"])],
                        bracket_range=[f"{a:.2f} to {b:.2f}" if b > a else "published points, no brackets"
                                       for a, b in zip(table["bracket_min"], table["bracket_max"])])

def paper_span_note(slopes: pd.DataFrame, exponent: str = "two-hop") -> str:
    """Where the book's ``exponent`` and the paper's published points share a span of N (slopes_table's rows),
    the two local slopes side by side, in a sentence ("" while no span is shared)."""
    paper = slopes[slopes["rule"] == PAPER_RULE][["N_low", "N_high", "slope"]]
    book = slopes[(slopes["exponent"] == exponent) & (slopes["rule"] != PAPER_RULE)]
    shared = book.merge(paper, on=["N_low", "N_high"], suffixes=("", "_paper"))
    if not len(shared):
        return ""
    # where the rules ran the same probes (at large n they are one rule), one clause names them all
    values = ["slope", "bracket_min", "bracket_max", "slope_paper"]
    shared = (shared.assign(_key=shared[values].round(2).astype(str).agg("|".join, axis=1))
              .groupby(["N_low", "N_high", "_key"], sort=False)
              .agg(rule=("rule", lambda rules: " and under ".join(rules)), **{v: (v, "first") for v in values})
              .reset_index())
    spans = [f"between N = {r['N_low']:.0f} and {r['N_high']:.0f}, {exponent}'s local slope under {r['rule']} is "
             f"{r['slope']:.2f} ({r['bracket_min']:.2f} to {r['bracket_max']:.2f} within the brackets), the paper's "
             f"{r['slope_paper']:.2f}" for _, r in shared.iterrows()]
    return f"Where the book's cells reach the paper's published points: {'; '.join(spans)}."


def slopes_view(slopes: pd.DataFrame) -> ReaderTable:
    return reader_table(slopes, {"exponent": "exponent", "rule": "give-up rule", "N": "between N",
                                 "slope": "local slope", "seed_range": "over pairings of seeds",
                                 "bracket_range": "within the brackets"},
                        formats={"slope": ".2f"}, max_rows=40)

def pattern_note(exponents: pd.DataFrame, verdicts: pd.DataFrame, recheck: pd.DataFrame, floor: int,
                 quantile: float, successes: int, rerun_hours: float) -> str:
    """The pattern across exponents and what explains it, in prose, for whatever the floor's reruns have shown."""
    authors = exponents[exponents["give_up_floor"] == 0].dropna(subset=["c"])
    below = authors[authors["c"].round(2) < authors["paper"]]
    counts = flip_counts(recheck)
    reopened, reruns, flips = (int(counts[k].sum()) for k in ("reopened", "reruns", "flips"))
    cut_off = int((recheck["reopened"] & (recheck["authors_status"] == "unreachable")).sum())
    chosen = (f"{floor:,} is the step by which 95% of the {successes} succeeding probes of up to 10,000 examples "
              f"had first reached 99%, {quantile:,.0f}, rounded up" if successes else
              "the book's floor; this table holds no success to choose one from")
    text = (f"**The pattern.** Under the authors' rule {_below_sentence(authors, below)} "
            "The rule counts its patience in epochs, so it gives a small training set only a few hundred steps after "
            "the fit; a probe given up before it generalises counts as a failure, raises n_req most where n is "
            "small, and so flattens the fit. The ID pool acts the other way: the cells it cuts off (no training set "
            "it allows reaches 99%) lie at the smallest N, above the line, and leaving them out steepens the fit. "
            + _paper_patience() +
            f"\n\n**The test.** Under a floor of {floor:,} steps (give up only after max(100 epochs, {floor:,} steps) "
            f"past the fit; {chosen}) the floor reopens {count_of(reopened, 'lower end', 'lower ends')}"
            + (f", {cut_off} of them the largest probe of a cell the authors' rule found unreachable (if one flips, "
               "the pool did not cut that cell off: the rule did)" if cut_off else "") + ". ")
    if reruns == 0:
        return text + ("None has been rerun yet: the verdicts below are the authors' rule's, and the floor's rows "
                       f"fill as the book's queue reruns them (about {rerun_hours:.0f} CPU-hours, at the pace of "
                       "each cell's earlier probes).")
    text += (f"{count_of(reruns, 'has', 'have')} been rerun so far and {flips} of them flipped to success"
             + (": the authors' rule had stopped those probes before they generalised, and their cells are "
                "searched downward again under the floor. " if flips else
                ": so far the authors' rule decided them as the floor does. "))
    text += _rescued(recheck)
    pending = reopened - reruns
    walking = int((recheck["flipped"] & (recheck["floor_status"] == "searching")).sum())
    if walking:
        text += f"{count_of(walking, 'cell that flipped is', 'cells that flipped are')} still being searched downward. "
    if pending:
        text += (f"{count_of(pending, 'lower end is', 'lower ends are')} still to be rerun (about {rerun_hours:.0f} "
                 "CPU-hours for the reruns alone; each that flips then costs a downward search of a few probes more); "
                 "an exponent is fitted under the floor only once every one of its cells is finished under it, and "
                 "until then its verdict stays with the authors' rule.")
    return text + _floor_outcome(exponents)

def _below_sentence(authors: pd.DataFrame, below: pd.DataFrame) -> str:
    """"2 of the 3 exponents here lie below the paper's (a 1.45 against 1.76; ...); b 2.09 against 2.09 does not.":
    the exponents below the paper's value (as shown, to two decimals) named apart from the others."""
    def listed(rows: pd.DataFrame) -> str:
        return "; ".join(f"{reader_name(r['exponent'])} {r['c']:.2f} against {r['paper']:.2f}" for _, r in rows.iterrows())

    rest = authors.drop(below.index)
    if not len(below):
        which = "the one exponent here does" if len(authors) == 1 else f"none of the {len(authors)} exponents here does"
        return f"{which} not lie below the paper's ({listed(rest)})."
    text = f"{len(below)} of the {len(authors)} exponents here lie below the paper's ({listed(below)})"
    return text + (f"; {listed(rest)} {'does' if len(rest) == 1 else 'do'} not." if len(rest) else ".")


def _paper_patience(rules: ProbeRules = ProbeRules()) -> str:
    """Why the paper's own exponents, fitted under the same rule, are less exposed to it: at its smallest two-hop
    N its training sets are large, and 100 epochs are thousands of steps."""
    N, n = min(REQUIRED_DATA_TWOHOP_AUTHORS.items())
    steps = rules.give_up_epochs * n / rules.batch_size
    return (f"The paper's fits come from the same rule, but at its smallest two-hop N ({N}, about {n:,} examples) "
            f"{rules.give_up_epochs:g} epochs are about {steps:,.0f} steps at batch {rules.batch_size}: its "
            "published points get far more patience than this book's small-N cells, so a floor should move the "
            "book's exponents and not the paper's.")


def floor_shift(label: str, authors: tuple[float, float, float], floor: tuple[float, float, float],
                paper: float) -> str:
    """One exponent's move from the authors' rule to the floor, as its numbers fall: each c with its interval
    (``(c, ci_low, ci_high)``, NaN bounds where there is none), and the change: to, toward or away from the paper's."""
    (c_a, lo_a, hi_a), (c_f, lo_f, hi_f) = authors, floor
    def shown(c: float, lo: float, hi: float) -> str:
        return f"{c:.2f}" + (f" (95% interval {lo:.2f} to {hi:.2f})" if lo == lo else "")
    change = round(c_f - c_a, 2)
    def side(c: float) -> str:
        gap = round(c - paper, 2)
        return f"{abs(gap):.2f} {'above' if gap > 0 else 'below'}"

    if round(c_f - paper, 2) == 0:  # landed on it, as far as two decimals show
        where = f"to the paper's {paper:.2f}"
    elif round(c_a - paper, 2) * round(c_f - paper, 2) < 0:  # from one side of the paper's value to the other
        where = f"from {side(c_a)} the paper's {paper:.2f} to {side(c_f)} it"
    else:
        where = f"{'toward' if abs(c_f - paper) < abs(c_a - paper) else 'away from'} the paper's {paper:.2f}"
    moved = "unchanged" if change == 0 else f"{'up' if change > 0 else 'down'} {abs(change):.2f}, {where}"
    return f"{label} {shown(c_a, lo_a, hi_a)} under the authors' rule, {shown(c_f, lo_f, hi_f)} under the floor: {moved}"


def floor_verdict(moves: Sequence[tuple[tuple[float, float, float], float]]) -> str:
    """What the exponents finished under the floor say of the explanation. Each move is an exponent's authors'-rule
    fit ``(c, ci_low, ci_high)`` (NaN bounds where there is none) and its c under the floor."""
    if not moves:
        return ""
    rose, many = sum(round(floor - c, 2) > 0 for (c, _, _), floor in moves), len(moves) > 1
    if rose < len(moves):
        return (f"{rose} of the {len(moves)} exponents finished under the floor rose: the give-up rule does not "
                "explain the whole gap to the paper")
    all_within = all(lo <= floor <= hi for (_, lo, hi), floor in moves)  # False where a bound is NaN
    return (("every exponent" if many else "the one exponent") + " finished under the floor rose, as a rule that "
            "stops small training sets too early predicts"
            + (f"; but {'each' if many else 'its'} shift lies inside the authors' rule's own interval, so "
               f"{'they agree' if many else 'it agrees'} with the explanation without proving it" if all_within else ""))


def _floor_outcome(exponents: pd.DataFrame) -> str:
    """The exponents finished under the floor beside their authors'-rule fits, and what they say ("" if none)."""
    by_rule = {(r["exponent"], r["give_up_floor"] > 0): r for _, r in exponents.iterrows()}
    said, moves = [], []
    for (name, floored), r in by_rule.items():
        authors = by_rule.get((name, False))
        if not floored or authors is None or r["c"] != r["c"] or authors["c"] != authors["c"]:
            continue
        fit = (authors["c"], authors["ci_low"], authors["ci_high"])
        said.append(floor_shift(reader_name(name), fit, (r["c"], r["ci_low"], r["ci_high"]), r["paper"]))
        moves.append((fit, r["c"]))
    if not said:
        return ""
    verdict = floor_verdict(moves)
    said_all = "; ".join(said)
    return (f"\n\n**What the floor has shown so far.** {sentence_start(said_all)}. {sentence_start(verdict)}. Each "
            "fit rests on the cells its own rule finished, and the two sets differ; chapter 4, section 4.10, sets the "
            "rules side by side on the same runs and cells.")


def _rescued(recheck: pd.DataFrame) -> str:
    """The cells the authors' rule found unreachable that reached the threshold under the floor, named ("" if none)."""
    rescued = recheck[recheck["flipped"] & (recheck["authors_status"] == "unreachable")]
    if not len(rescued):
        return ""
    names = [f"{reader_name(r.task + ('_cot' if r.cot else ''))} N = {r.N} ({r.model}, seed {r.seed})"
             for r in rescued.itertuples(index=False)]
    one = len(names) == 1
    return (f"Among them, {series(names)}, which the authors' rule had found unreachable, "
            f"{'reaches' if one else 'reach'} 99% under the floor: the give-up rule, not the ID pool, had cut "
            f"{'it' if one else 'them'} off, and {'it rejoins' if one else 'they rejoin'} the fit at "
            f"{'its' if one else 'their'} N under the floor. ")


def one_rule_note(probes: pd.DataFrame, floor: int, floor_only: Sequence[Cell] = ()) -> str:
    """Which probes run under the floor count under the authors' rule too (one_rule_rows), in a sentence; the
    cells the floor alone searches (``floor_only``) are left out, as the authors' rule never reads them."""
    shared = one_rule_rows(probes, floor)
    alone = {c.key() for c in floor_only}
    if alone and len(shared):
        shared = shared[[c.key() not in alone for c in row_cells(shared)]]
    if not len(shared):
        return (f"No probe under the floor has yet trained on a set whose 100 epochs outlast its {floor:,} steps, "
                "so no probe counts under both rules.")
    where = series([f"{reader_name(task + ('_cot' if cot else ''))}"
                    + (f" ({model})" if model != "L4-d128" else "")
                    + f" at N = {series([str(N) for N in sorted(set(group['N'].astype(int)))])}"
                    for (task, cot, model), group in shared.groupby(["task", "cot", "model"], sort=True)])
    smallest = int(np.ceil(ProbeRules(give_up_epochs=shared["give_up_epochs"].astype(float).max()).one_rule_size(floor)))
    return (f"{sentence_start(count_of(len(shared), 'probe'))} run under the floor trained on sets of at least "
            f"{smallest:,} examples, where 100 epochs at batch {ProbeRules.batch_size} outlast its {floor:,} steps: the floor "
            f"cannot act on them, so each ran exactly as under the authors' rule and counts under both ({where}).")


def verdicts_bullet(verdicts: pd.DataFrame, recheck: pd.DataFrame, section: str, tasks: Sequence[str]) -> str:
    """A summary's sentence of every verdict (with the exponent and the rule it rests on) and of where the step
    floor's reruns of ``tasks`` (flip_counts' task keys, every model of each) stand; ``section`` names where the
    verdict rule is stated. "" if there are no verdicts."""
    if not len(verdicts):
        return ""
    shared = verdicts["decided_by"].nunique() == 1  # said once, in the lead, when every verdict reads the same

    def evidence(r: pd.Series) -> str:
        where = "" if shared else f" under {r['decided_by']}"
        if not np.isfinite(r["c"]):  # too few finished cells for an exponent
            return f"no exponent yet{where}; paper {r['paper']:.2f}"
        if np.isfinite(r.get("ci90_low", np.nan)):  # the interval and margin the rule compares
            return (f"{r['c']:.2f}{where}, 90% interval {r['ci90_low']:.2f}-{r['ci90_high']:.2f}; "
                    f"paper {r['paper']:.2f} ± {r['margin']:.2f}")
        return f"{r['c']:.2f}{where}; paper {r['paper']:.2f}"
    said = "; ".join(f"{reader_name(r['exponent'])} **{VERDICT_WORDS[r['verdict']]}** ({evidence(r)})"
                     for _, r in verdicts.iterrows())
    lead = f"the rule of {section}" + (f", on {verdicts['decided_by'].iloc[0]}" if shared else "")
    counts = flip_counts(recheck)
    counts = counts[counts["task"].isin(tasks)]
    reruns, flips = int(counts["reruns"].sum()), int(counts["flips"].sum())
    waiting = int(counts["reopened"].sum()) - reruns  # as pattern_note counts the lower ends still to rerun
    floor = (f"Under the step floor, {flips} of these tasks' {count_of(reruns, 'lower end')} rerun so far flipped to "
             "success" if reruns else "None of these tasks' lower ends the step floor reopens has been rerun yet")
    pending = (f", {waiting} still to rerun; an exponent keeps the authors' rule's verdict until every cell of it "
               "has finished under the floor" if waiting else "")
    return f"Against the paper, by {lead}: {said}. {floor}{pending}."


def rule_counts_metrics(recheck: pd.DataFrame, floor: int, tasks: Sequence[str]) -> dict[str, int]:
    """give_up_floor_steps and, per task key (e.g. twohop, threehop_cot), give_up_reruns_<task> and give_up_flips_<task>."""
    counts = flip_counts(recheck).set_index("task")
    out = {"give_up_floor_steps": floor}
    for task in tasks:
        row = counts.loc[task] if task in counts.index else None
        out[f"give_up_reruns_{task}"] = int(row["reruns"]) if row is not None else 0
        out[f"give_up_flips_{task}"] = int(row["flips"]) if row is not None else 0
    return out

