"""The reproduction in words and tables (chapters 4 and 7): how noisy a probe's outcome is, both give-up rules on
the same runs by both estimators, and the verdicts of the equivalence rule on every exponent and on the paper's
comparative claims (the computation is covlib.search.replicates and covlib.search.reproduction)."""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from covlib.analyses.equivalence import EQUIVALENCE_MARGIN, verdict_words
from covlib.analyses.success_curve import SLOPE_BOUNDS
from covlib.figures.give_up_rule import reader_name
from covlib.figures.tables import ReaderTable, reader_table
from covlib.figures.text import p_value
from covlib.search.replicates import LARGEST_N, MIN_AT_LARGEST_N, NoiseBySize, noise_by_size
from covlib.search.reproduction import (
    CLAIM_FAMILY,
    CLAIMS,
    EXPONENT_FAMILY,
    Reproduction,
    reproduction_metrics,
    select,
)

NAMES = {"twohop_small_model": "two-hop, 2-layer width-64", "twohop_large_model": "two-hop, 6-layer width-128",
         "twohop_cot": "two-hop with CoT", "threehop_cot": "three-hop with CoT", "fivehop_cot": "five-hop with CoT"}


def series_name(name: str) -> str:
    return NAMES.get(name, reader_name(name))


def noise_view(rep: Reproduction) -> ReaderTable:
    """How often a replicate's outcome differs from the probe it repeats, by source."""
    names = {"all": "every replicate", "init": "another initialisation", "draw": "another draw of the training set",
             "side below": "of a failing lower end", "side above": "of a succeeding upper end"}
    table = rep.flips.assign(source=rep.flips["source"].map(names))
    return reader_table(table, {"source": "replicates", "replicates": "run", "changed": "outcome changed",
                                "share": "share changed", "ci_low": "95% interval from", "ci_high": "to"},
                        formats={"share": ".0%", "ci_low": ".0%", "ci_high": ".0%"},
                        caption="Replicates of probes near n_req, against the outcome of the probe each repeats")


def noise_by_cell_view(rep: Reproduction) -> ReaderTable:
    """Per replicated cell: its N, the replicates run and how many changed outcome (does the noise grow with N?)."""
    if not len(rep.replicates):
        return reader_table(pd.DataFrame({"cell": []}), {"cell": "cell"})
    r = rep.replicates.assign(series=[series_name(_series_key(t, c)) for t, c in
                                      zip(rep.replicates["task"], rep.replicates["cot"])])
    cells = r.groupby(["series", "N", "seed"], as_index=False).agg(
        run=("changed", "size"), changed=("changed", "sum"), best=("best_type0", "min"))
    return reader_table(cells, {"series": "task", "N": "N", "seed": "seed", "run": "replicates run",
                                "changed": "outcome changed", "best": "lowest best ID accuracy"},
                        formats={"best": ".1%"}, caption="Replicates per cell")


def _series_key(task: str, cot: bool) -> str:
    return f"{task}_cot" if cot else task


def slope_note(rep: Reproduction) -> str:
    """What the logistic model's shared slope rests on, and what it says, in a sentence or two."""
    slope = rep.by_rule["floor"].attrs["slope"]
    if not slope.bounded:
        return ("No replicate has run yet, so nothing measures the slope of success against log n_train: the "
                "logistic estimate is then the limit of exact outcomes, n_req somewhere in the bracket, and the "
                "bracket is its interval.")
    rise = "success rises from 25% to 75% over a factor of {:.2f} in training-set size"  # 2 log 3 / s in log n
    measured = (f"measured by how often {slope.replicates} reruns of bracket ends in {slope.cells} cells came out "
                f"the other way: {slope.flips} did")
    at_bound = slope.low <= SLOPE_BOUNDS[0] * 1.001
    shallow = (f"its 90% interval reaches the bottom of the range searched ({SLOPE_BOUNDS[0]}), so the replicates "
               f"do not yet rule out outcomes close to coin flips" if at_bound
               else f"at the shallow end of its 90% interval ({slope.low:.1f}), "
               + rise.format(np.exp(2 * np.log(3) / slope.low)))
    if not slope.identified:
        return (f"No replicate has flipped ({measured}), so the slope has no finite estimate; {shallow}. Each cell's "
                f"interval is computed at that shallow end, so that it carries what the replicates leave open.")
    return (f"The slope of success against log n_train, shared by every cell, is {slope.slope:.0f} per unit of log n "
            f"(90% interval {slope.low:.1f} to {slope.high:.0f}; {measured}): at that slope "
            f"{rise.format(np.exp(2 * np.log(3) / slope.slope))}; {shallow}. Each cell's n_req is placed at the "
            f"estimate, and its interval is computed at the interval's shallow end, so that it carries the slope's "
            f"own uncertainty. " + slope_by_series_note(rep)).strip()


def slope_by_series_note(rep: Reproduction) -> str:
    """Whether the replicates support one slope for every task (Reproduction.slope_by_series), and what they
    leave open: each task's own slope and interval."""
    test = rep.slope_by_series
    if test is None or np.isnan(test.p):
        return ""
    own = "; ".join(f"{series_name(name)} {_slope_text(fit)}" for name, fit in test.groups.items())
    said = (f"Does one slope fit every task? Fitted to each task's replicates alone: {own}. One slope for all "
            f"against one per task: likelihood ratio {test.statistic:.1f} on {test.df} degrees of freedom, "
            f"{p_value(test.p)} (a parametric bootstrap under the shared slope; a check of the model added after the "
            f"replicates were in). ")
    if test.p < 0.05:
        return said + ("The replicates reject one slope for every task: the cells' intervals, computed at the shared "
                       "slope's shallow end, are too narrow for the tasks whose own slope is shallower.")
    return said + ("The replicates give no reason for a slope per task, and they rule out little: each task's own "
                   "interval is wide, so tasks whose slopes differ severalfold would fit them as well.")


def _slope_text(fit) -> str:
    if not fit.identified:
        return f"no flip (at least {fit.low:.1f})" if fit.bounded else "no flip"
    low = f"the range's bottom, {SLOPE_BOUNDS[0]}" if fit.low <= SLOPE_BOUNDS[0] * 1.001 else f"{fit.low:.1f}"
    high = "unbounded" if not np.isfinite(fit.high) else f"{fit.high:.0f}"
    return f"{fit.slope:.0f} ({low} to {high}; {fit.flips} of {fit.replicates} changed)"


def rules_view(rep: Reproduction) -> ReaderTable:
    """Per series: both rules on the same cells, by both estimators (95% intervals), and the floor on its own
    cells (the headline), each without the pool-limited cells."""
    rows = []
    for name in rep.series:
        row = {"series": series_name(name)}
        for label, (which, rule, est) in {
                "authors', bracket": ("common", "authors", "bracket"), "authors', logistic": ("common", "authors", "logistic"),
                "floor, bracket": ("common", "floor", "bracket"), "floor, logistic": ("common", "floor", "logistic"),
                "floor, logistic, all its cells": ("own", "floor", "logistic")}.items():
            r = select(rep.exponents, which, rule, est, "without").loc[name]
            row[label] = _with_interval(r)
            if label == "floor, logistic":
                row["same cells"] = f"{int(r['cells'])} ({int(r['n_values'])} N)"
        row["pool-limited, left out"] = select(rep.exponents, "own", "floor", "logistic", "without").loc[
            name, "pool_limited"] or "none"
        rows.append(row)
    table = pd.DataFrame(rows)
    return reader_table(table, {c: c for c in table.columns},
                        caption="Exponents: both rules on the same runs and cells, both estimators (95% intervals)")


def _with_interval(r: pd.Series) -> str:
    if np.isnan(r["c"]):
        return ""
    if np.isnan(r["ci95_low"]):
        return f"{r['c']:.2f} (no interval: {int(r['n_values'])} N)"
    return f"{r['c']:.2f} ({r['ci95_low']:.2f}-{r['ci95_high']:.2f})"


def pool_note(rep: Reproduction) -> str:
    """How far the pool-limited cells move each fit that holds them."""
    said = []
    for name in rep.series:
        everything = select(rep.exponents, "own", "floor", "logistic", "all").loc[name]
        without = select(rep.exponents, "own", "floor", "logistic", "without").loc[name]
        if everything["pool_limited"] and not np.isnan(everything["c"]):
            said.append(f"{series_name(name)} {everything['c']:.2f} with them ({everything['pool_limited']}), "
                        f"{without['c']:.2f} without")
    if not said:
        return "No fitted cell's n_req lies above 90% of its pool."
    return ("A cell whose n_req lies above 90% of the largest training set its pool allows is bounded by the pool, "
            "not by the model; the fits above leave such cells out. With them, under the floor: "
            + "; ".join(said) + ".")


def apart_note(rep: Reproduction) -> str:
    """Where the logistic estimate and the bracket's geometric mean differ by more than the bracket's own ratio."""
    cells = rep.by_rule["floor"]
    apart = cells[cells["apart"].fillna(False)]
    if not cells.attrs["slope"].identified:
        return ""
    if not len(apart):
        return ("In every cell the logistic estimate lies within its bracket's own ratio of the bracket's geometric "
                "mean: the two estimators tell the same story cell by cell.")
    listed = "; ".join(f"{series_name(_series_key(r.task, r.cot))} N = {r.N} seed {r.seed} ({r.n_req_logistic:,.0f} "
                       f"against {r.n_req_bracket:,.0f})" for r in apart.itertuples())
    return (f"In {len(apart)} cell(s) the logistic estimate and the bracket's geometric mean differ by more than the "
            f"bracket's own ratio: {listed}. There a replicate, or a probe below the bracket, contradicts one of "
            "the bracket's ends, and the model reads every probe.")


def verdicts_view(rep: Reproduction) -> ReaderTable:
    """Every published exponent: the book's (floor, logistic, without pool-limited cells), its 90% and 95%
    intervals, the paper's, and the verdict."""
    v = rep.verdicts.assign(series=rep.verdicts["series"].map(series_name),
                            ci90=[f"{a:.2f}-{b:.2f}" if np.isfinite(a) else "none" for a, b in
                                  zip(rep.verdicts["ci90_low"], rep.verdicts["ci90_high"])],
                            ci95=[f"{a:.2f}-{b:.2f}" if np.isfinite(a) else "none" for a, b in
                                  zip(rep.verdicts["ci95_low"], rep.verdicts["ci95_high"])])
    family = f"read with the other {len(v) - 1} (Bonferroni)"
    return reader_table(v, {"series": "exponent", "c": "book", "ci90": "90% interval", "ci95": "95% interval",
                            "paper": "paper", "n_values": "values of N", "seeds": "seeds", "verdict": "verdict",
                            "family_verdict": family},
                        formats={"c": ".2f", "paper": ".2f"},
                        caption=f"The verdicts (reproduced: the 90% interval inside the paper's value ± "
                                f"{EQUIVALENCE_MARGIN:.2f}; the last column reads every exponent as one of "
                                f"{len(v)} tested at once)")


def claims_view(rep: Reproduction, only: tuple[str, ...] | None = None) -> ReaderTable:
    """Each comparative claim (or those named in ``only``): the book's difference, its intervals, whether paired,
    and the verdict."""
    claims = rep.claims if only is None else rep.claims[rep.claims["claim"].isin(only)]
    c = claims.assign(verdict=claims["verdict"].map(verdict_words),
                      family_verdict=claims["family_verdict"].map(verdict_words),
                      ci95=[f"{a:+.2f} to {b:+.2f}" if np.isfinite(a) else "none" for a, b in
                            zip(claims["ci95_low"], claims["ci95_high"])],
                      design=np.where(claims["paired"], "paired (same N and seeds)", "unpaired"))
    return reader_table(c, {"text": "the paper's claim", "difference": "book's difference", "ci95": "95% interval",
                            "design": "design", "verdict": "verdict",
                            "family_verdict": f"read with the other {len(CLAIMS) - 1} (Bonferroni)"},
                        formats={"difference": "+.2f"},
                        caption=f"The paper's comparative claims, as differences of the book's exponents (the last "
                                f"column reads every claim as one of {len(CLAIMS)} tested at once)")


def family_clause(row: pd.Series) -> str:
    """A decided claim read as one of the paper's claims tested at once (covlib.analyses.family): its interval at
    the family's level, and its verdict there."""
    kept = (f"which keeps its verdict ({verdict_words(row['family_verdict'])})"
            if row["family_verdict"] == row["verdict"] else
            f"so that, read with the other claims, it is {verdict_words(row['family_verdict'])}")
    return (f"read as one of the {len(CLAIMS)} claims tested at once (Bonferroni: each interval at "
            f"{CLAIM_FAMILY['fam_excl']:.1%}), its interval is {row['fam_excl_low']:+.2f} to "
            f"{row['fam_excl_high']:+.2f}, {kept}")


def exponent_family_sentence(rep: Reproduction) -> str:
    """The decided exponents read as one family of the published exponents (covlib.analyses.family): which keep
    their verdict ("" when none is decided)."""
    decided = rep.verdicts[rep.verdicts["verdict"] != "inconclusive"] if len(rep.verdicts) else rep.verdicts
    if not len(decided):
        return ""
    levels = (f"Bonferroni: a reproduction's interval at {EXPONENT_FAMILY['fam_equiv']:.1%}, an exclusion's at "
              f"{EXPONENT_FAMILY['fam_excl']:.1%}")
    parts = []
    for r in decided.itertuples():
        band = f"{r.fam_equiv_low:.2f} to {r.fam_equiv_high:.2f}" if r.verdict == "reproduced" else \
            f"{r.fam_excl_low:.2f} to {r.fam_excl_high:.2f}"
        outcome = "keeps its verdict" if r.family_verdict == r.verdict else f"is {r.family_verdict}"
        parts.append(f"{series_name(r.series)} ({r.verdict}; {band}) {outcome}")
    return (f"Read as one family of the {len(rep.verdicts)} published exponents tested at once ({levels}): "
            + "; ".join(parts) + ".")


def _bend_clause(rep: Reproduction, name: str) -> str:
    """Whether a series' law bends within the N it measured (Reproduction.halves), as a clause: a gap from the
    paper's exponent that a bend inside the measured range would explain, or not."""
    halves = rep.halves.set_index("series")
    if name not in halves.index:
        return ""
    h = halves.loc[name]
    (a, b), (c, d) = h["N_lower"], h["N_upper"]
    lower, upper = f"N = {a}-{b} (c = {h['c_lower']:.2f})", f"N = {c}-{d} (c = {h['c_upper']:.2f})"
    if abs(h["c_upper"] - h["c_lower"]) <= EQUIVALENCE_MARGIN:
        return (f" (its law is about as steep over {lower} as over {upper}, each half fitted alone: no bend within "
                f"the N measured explains the gap; beyond N = {d} these cells cannot say)")
    way = "steeper" if h["c_upper"] > h["c_lower"] else "flatter"
    return (f" (its law is {way} over {upper} than over {lower}, each half fitted alone: it bends within the N "
            "measured, so its exponent depends on the range of N fitted)")


def pattern_note(rep: Reproduction) -> str:
    """The pattern across verdicts and claims, in plain words, whichever way they fall."""
    counts = rep.verdicts["verdict"].value_counts()
    parts = [f"{counts.get(w, 0)} {w}" for w in ("reproduced", "inconclusive", "differs")]
    said = (f"Of {len(rep.verdicts)} published exponents, {', '.join(parts)} under the rule fixed in section 4.8. ")
    differs = rep.verdicts[rep.verdicts["verdict"] == "differs"]
    if len(differs):
        said += "Differs: " + "; ".join(f"{series_name(r.series)} {r.c:.2f} against the paper's {r.paper:.2f}"
                                        + _bend_clause(rep, r.series) for r in differs.itertuples()) + ". "
    below = (rep.verdicts["c"] < rep.verdicts["paper"]).sum()
    said += f"{below} of {len(rep.verdicts)} book exponents lie below the paper's. "
    said += (exponent_family_sentence(rep) + " ").lstrip()
    said += claims_sentence(rep)
    return said.strip()


def claims_sentence(rep: Reproduction, only: tuple[str, ...] | None = None) -> str:
    """Each comparative claim (or those named in ``only``) as a sentence: its verdict, the difference and its 95%
    interval, and, where an inconclusive estimate runs against the paper, that it does."""
    said = ""
    for claim in CLAIMS:
        if only is not None and claim.name not in only:
            continue
        row = rep.claims.set_index("claim").loc[claim.name]
        said += f"That {claim.text.split(' (')[0]}: {verdict_words(row['verdict'])}"
        said += (f"; difference {row['difference']:+.2f}, 95% interval {row['ci95_low']:+.2f} to "
                 f"{row['ci95_high']:+.2f}" if np.isfinite(row["ci95_low"]) else
                 "; too few shared values of N for an interval")
        if row["verdict"] != "inconclusive" and np.isfinite(row["fam_excl_low"]):
            said += "; " + family_clause(row)
        if claim.runs_against(row["difference"], row["verdict"]):  # the point estimate runs against the paper: say so
            said += (f"; the book's estimate runs the other way ({series_name(claim.first)} "
                     f"{'below' if claim.sign > 0 else 'above'} {series_name(claim.second)}), short of a contradiction")
        said += ". "
    return said.strip()


def claims_bullet(rep: Reproduction, only: tuple[str, ...] | None = None) -> str:
    """A summary's sentence of the paper's comparative claims (claims_sentence), under the verdicts' rule."""
    return f"The paper's comparative claims, judged by the same rule (section 4.11). {claims_sentence(rep, only)}"


def noise_note(rep: Reproduction) -> str:
    """How often an outcome changed, by source, and whether the noise grows with N (the replicated cells at a
    series' largest N against those at small N); says so when no replicate has run."""
    r = rep.replicates
    if not len(r):
        return ("No replicate has run yet: the queue runs them (both ends of eight brackets, four replicates "
                "each), and this section fills as they land.")
    flips = rep.flips.set_index("source")
    said = (f"Of {len(r)} replicates so far, {int(r['changed'].sum())} changed the outcome of the probe they repeat "
            f"({flips.loc['all', 'share']:.0%}, 95% interval {flips.loc['all', 'ci_low']:.0%} to "
            f"{flips.loc['all', 'ci_high']:.0%})")
    parts = [f"{int(flips.loc[k, 'changed'])} of {int(flips.loc[k, 'replicates'])} with {label}"
             for k, label in (("init", "another initialisation"), ("draw", "another draw of the training set"))
             if k in flips.index]
    said += (": " + " and ".join(parts) + ". ") if parts else ". "
    by_size = noise_by_size(r)
    if by_size.replicates_large and by_size.replicates_small:
        said += (f"At three-hop CoT's largest N ({LARGEST_N}) {by_size.changed_large} of {by_size.replicates_large} "
                 f"changed, at the smaller N {by_size.changed_small} of {by_size.replicates_small}: ")
        if not by_size.enough:
            said += f"too few replicates at that N (fewer than {MIN_AT_LARGEST_N}) to say whether the noise grows with N."
        elif by_size.p < 0.05:
            said += (f"the noise is {'larger' if by_size.difference > 0 else 'smaller'} at the largest N (Fisher's "
                     f"exact test, p = {by_size.p:.2g}; {_share_difference(by_size)}).")
        elif by_size.ci_low <= 0 <= by_size.ci_high:
            said += (f"no difference these counts can show (Fisher's exact test, p = {by_size.p:.2g}; "
                     f"{_share_difference(by_size)}): they fit equal noise as well as a rise of "
                     f"{by_size.ci_high * 100:.0f} points.")
        else:  # the interval and the test disagree at the edge of significance: say so rather than pick one
            said += (f"no difference Fisher's exact test can show (p = {by_size.p:.2g}), though the difference's "
                     f"interval excludes zero ({_share_difference(by_size)}): the counts sit at the edge of what "
                     "either can tell.")
    return said.strip()


def _share_difference(by_size: NoiseBySize) -> str:
    """The share of changed outcomes at the largest N minus at smaller N, in points, with its 95% interval."""
    return (f"the share that changed differs by {by_size.difference * 100:+.0f} points, 95% interval "
            f"{by_size.ci_low * 100:+.0f} to {by_size.ci_high * 100:+.0f}")


def metrics(rep: Reproduction) -> dict[str, float | str]:
    """Sections 4.9-4.11 as recorded metrics: the noise, and reproduction_metrics."""
    flips = rep.flips.set_index("source")
    out: dict[str, float | str] = {"outcome_replicates": int(flips.loc["all", "replicates"]) if len(flips) else 0}
    for key, source in (("outcome_flip_share", "all"), ("outcome_flip_share_init", "init"),
                        ("outcome_flip_share_draw", "draw")):
        out[key] = float(flips.loc[source, "share"]) if source in flips.index else float("nan")
    slope = rep.by_rule["floor"].attrs["slope"]  # the noise model: the shared slope the replicates measure
    for key, value in (("outcome_slope", slope.slope), ("outcome_slope_ci_low", slope.low),
                       ("outcome_slope_ci_high", slope.high)):
        out[key] = float(value) if np.isfinite(value) else float("nan")  # no flip yet: no estimate, no upper bound
    by_series = rep.slope_by_series
    if by_series is not None and np.isfinite(by_series.p):  # does one slope fit every task: the test
        out |= {"outcome_slope_by_series_statistic": by_series.statistic, "outcome_slope_by_series_p": by_series.p}
    by_size = noise_by_size(rep.replicates) if len(rep.replicates) else None
    if by_size is not None and by_size.enough:  # does the noise grow with N: the test and what it leaves open
        out |= {"outcome_flip_share_largest_n": by_size.changed_large / by_size.replicates_large,
                "outcome_flip_share_smaller_n": by_size.changed_small / by_size.replicates_small,
                "outcome_noise_by_n_p": by_size.p, "outcome_noise_by_n_ci_low": by_size.ci_low,
                "outcome_noise_by_n_ci_high": by_size.ci_high}
    for r in rep.halves.itertuples():  # does a law bend within the N it measured
        out |= {f"exponent_{r.series}_lower_half": float(r.c_lower), f"exponent_{r.series}_upper_half": float(r.c_upper)}
    return out | reproduction_metrics(rep.exponents, rep.verdicts, rep.claims)


def book_verdicts(rep: Reproduction, names: Mapping[str, float]) -> pd.DataFrame:
    """The verdicts of ``names`` (series) in the columns the summary's sentence reads (exponent, verdict,
    decided_by, c, paper, the 90% interval the rule reads and its margin)."""
    v = rep.verdicts[rep.verdicts["series"].isin(list(names))]
    return pd.DataFrame({"exponent": v["series"], "verdict": v["verdict"], "c": v["c"], "paper": v["paper"],
                         "decided_by": "the step floor's logistic estimate", "ci90_low": v["ci90_low"],
                         "ci90_high": v["ci90_high"], "margin": EQUIVALENCE_MARGIN})
