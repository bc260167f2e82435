"""Does the book reproduce the paper's exponents and its comparative claims? Both give-up rules on the same runs,
both estimators of n_req, and the verdicts of the equivalence rule (covlib.analyses.equivalence).

Every exponent here is fitted on the cells that have an estimate under both rules (so a difference between the
rules is the rule's, not a difference of cells), by the same numerics, with and without the cells whose n_req
nears the ID pool. The book's verdict reads the floor's logistic fit without the pool-limited cells."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from covlib.analyses.equivalence import EQUIVALENCE_MARGIN, Interval, direction_verdict, equivalence_verdict
from covlib.analyses.family import family_levels
from covlib.analyses.fits import exponent_difference, exponent_intervals, power_fit
from covlib.analyses.success_curve import SlopeByGroup
from covlib.base.paper import EXPONENTS_COT, EXPONENTS_WITH_MAMBA
from covlib.search.estimates import cell_table, fit_input, shared_slope, slope_by_series
from covlib.search.replicates import flip_shares, replicate_outcomes, replicate_plan
from covlib.search.same_runs import rule_table, same_run_outcomes

RULES = ("authors", "floor")
ESTIMATORS = ("bracket", "logistic")

# a series of cells: (task, chain of thought, model shape)
SERIES: dict[str, tuple[str, bool, str]] = {
    "twohop": ("twohop", False, "L4-d128"),
    "threehop": ("threehop", False, "L4-d128"),
    "parallel_twohop": ("parallel_twohop", False, "L4-d128"),
    "twohop_mamba": ("twohop", False, "mamba-L4-d128"),
    "twohop_small_model": ("twohop", False, "L2-d64"),
    "twohop_large_model": ("twohop", False, "L6-d128"),
    "twohop_cot": ("twohop", True, "L4-d128"),
    "threehop_cot": ("threehop", True, "L4-d128"),
    "fivehop_cot": ("fivehop", True, "L4-d128"),
}
PAPER = {**EXPONENTS_WITH_MAMBA, **{f"{task}_cot": c for task, c in EXPONENTS_COT.items()}}


@dataclass(frozen=True)
class Claim:
    """A comparative claim of the paper: c(first) - c(second) has ``sign`` (+1 or -1), or is 0 (``sign`` 0: two
    exponents equal). ``third``: with sign +1, a claim that ``first`` lies between ``second`` and ``third``
    (second < first < third), tested as the smaller of its two gaps; with sign 0, a second series equal to
    ``second`` as well (both must be equal to it; the difference shown is the larger of the two)."""

    name: str
    text: str
    first: str
    second: str
    sign: int
    third: str | None = None

    @property
    def paper_gap(self) -> float:
        """The paper's own difference, as the book computes its own (a "between" claim: the smaller gap); 0 for an
        equality claim, which the paper states rather than measures."""
        if not self.sign:
            return 0.0
        gap = PAPER[self.first] - PAPER[self.second]
        return min(gap, PAPER[self.third] - PAPER[self.first]) if self.third is not None else gap

    def runs_against(self, difference: float, verdict: str) -> bool:
        """Whether an undecided test's estimate lies on the other side of zero from the paper's difference (a
        directional claim only): worth saying, though short of a contradiction."""
        return bool(self.sign) and verdict == "inconclusive" and np.isfinite(difference) and \
            np.sign(difference) == -self.sign


CLAIMS = (
    Claim("cot_flattens_twohop", "chain of thought flattens two-hop's law (2.26 to 2.09)", "twohop", "twohop_cot", 1),
    Claim("cot_flattens_threehop", "chain of thought flattens three-hop's law (2.58 to 1.76)", "threehop",
          "threehop_cot", 1),
    Claim("threehop_steeper", "three-hop is steeper than two-hop (2.58 against 2.26)", "threehop", "twohop", 1),
    Claim("parallel_between", "parallel two-hop lies between two-hop and three-hop (2.26 < 2.43 < 2.58)",
          "parallel_twohop", "twohop", 1, third="threehop"),
    Claim("model_size_unchanged", "model size leaves the exponent unchanged (2.13, 2.26, 2.28 over 20x)",
          "twohop_small_model", "twohop", 0, third="twohop_large_model"),
    Claim("mamba_equals_transformer", "a Mamba's exponent equals the transformer's (2.00 against 2.26)",
          "twohop_mamba", "twohop", 0),
)
# the verdicts also read as two families, the published exponents and the claims (covlib.analyses.family): the
# rule's intervals at the levels that hold for every test of a family at once
EXPONENT_FAMILY = family_levels(len(PAPER))
CLAIM_FAMILY = family_levels(len(CLAIMS))
FAMILY_ENDS = tuple(f"{name}_{end}" for name in ("fam_equiv", "fam_excl") for end in ("low", "high"))


def rule_tables(probes: pd.DataFrame, curves: pd.DataFrame, give_up_floor: int) -> dict[str, pd.DataFrame]:
    """Per rule, the outcome of every probe read off the same runs, replicates included (same_runs.rule_table)."""
    outcomes = same_run_outcomes(probes, curves, give_up_floor)
    return {rule: rule_table(outcomes, rule) for rule in RULES}


def rule_cells(probes: pd.DataFrame, curves: pd.DataFrame, give_up_floor: int) -> dict[str, pd.DataFrame]:
    """Per rule, the cell table (covlib.search.estimates.cell_table) read off the same runs, replicates included
    (cell_tables of rule_tables)."""
    return cell_tables(rule_tables(probes, curves, give_up_floor))


def cell_tables(tables: Mapping[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """Per rule, the cell table of its outcome table (rule_tables), each under one slope: the one the replicates
    measure at the floor's bracket ends (the noise of a training run at the boundary, which a give-up rule does not
    change; the replicates were placed on the floor's brackets). Each table carries that slope fit in
    ``attrs["slope"]``."""
    slope = shared_slope(tables["floor"])
    out = {}
    for rule, table in tables.items():
        cells = cell_table(table, slope)
        cells.attrs["slope"] = slope
        out[rule] = cells
    return out


def series_cells(cells: pd.DataFrame, spec: tuple[str, bool, str]) -> pd.DataFrame:
    """The cells of one series (task, chain of thought, model) in a cell table."""
    task, cot, model = spec
    return cells[(cells["task"] == task) & (cells["cot"].astype(bool) == cot) & (cells["model"] == model)]


def common_cells(by_rule: Mapping[str, pd.DataFrame], spec: tuple[str, bool, str]) -> dict[str, pd.DataFrame]:
    """The series' cells that have an estimate under every rule, per rule (the same cells, so that the rules are
    compared on them alone)."""
    keys = ["N", "seed"]
    per_rule = {rule: series_cells(cells, spec).dropna(subset=["n_req_bracket"]) for rule, cells in by_rule.items()}
    shared = None
    for cells in per_rule.values():
        shared = cells[keys] if shared is None else shared.merge(cells[keys], on=keys)
    return {rule: cells.merge(shared, on=keys).sort_values(keys) for rule, cells in per_rule.items()}


def _fit(est: pd.DataFrame, reps: int) -> dict:
    fit = exponent_intervals(est, (0.90, 0.95), reps=reps, named_levels=EXPONENT_FAMILY)
    return {k: fit[k] for k in ("c", "ci90_low", "ci90_high", "ci95_low", "ci95_high", *FAMILY_ENDS, "n_values",
                                "seeds", "N_min", "N_max")} | {"cells": len(est)}


def exponent_table(by_rule: Mapping[str, pd.DataFrame], reps: int = 2000,
                   series: Mapping[str, tuple[str, bool, str]] = SERIES) -> pd.DataFrame:
    """One row per (series, cells, rule, estimator, pool): the exponent with 90% and 95% intervals. ``cells``
    "common": the series' cells with an estimate under both rules (the rules compared on the same cells);
    "own": every cell the rule has finished (the floor's is the book's headline). ``pool`` "all" or "without"
    the pool-limited cells (those whose n_req nears the pool under either rule, listed in ``pool_limited``)."""
    rows = []
    for name, spec in series.items():
        common = common_cells(by_rule, spec)
        own = {rule: series_cells(cells, spec).dropna(subset=["n_req_bracket"]) for rule, cells in by_rule.items()}
        limited = sorted({(int(N), int(s)) for c in own.values() for N, s, p in
                          zip(c["N"], c["seed"], c["pool_limited"]) if p})
        for which, cells in (("common", common), ("own", own)):
            for rule, estimator, pool in ((r, e, p) for r in RULES for e in ESTIMATORS for p in ("all", "without")):
                use = cells[rule]
                if pool == "without" and limited and len(use):
                    use = use[~use[["N", "seed"]].apply(tuple, axis=1).isin(limited)]
                fit = _fit(fit_input(use, estimator), reps)
                rows.append({"series": name, "cells_used": which, "rule": rule, "estimator": estimator, "pool": pool,
                             **fit, "pool_limited": ", ".join(f"N = {N} seed {s}" for N, s in limited),
                             "paper": PAPER.get(name, np.nan)})
    return pd.DataFrame(rows)


def select(exponents: pd.DataFrame, cells_used: str, rule: str, estimator: str, pool: str) -> pd.DataFrame:
    """One fit per series from exponent_table, indexed by series."""
    return exponents[(exponents["cells_used"] == cells_used) & (exponents["rule"] == rule)
                     & (exponents["estimator"] == estimator) & (exponents["pool"] == pool)].set_index("series")


def headline(exponents: pd.DataFrame) -> pd.DataFrame:
    """The fits the verdicts read: the floor's own finished cells, the logistic estimator, without the
    pool-limited cells."""
    return select(exponents, "own", "floor", "logistic", "without")


def exponent_verdicts(exponents: pd.DataFrame, margin: float = EQUIVALENCE_MARGIN) -> pd.DataFrame:
    """The equivalence rule's verdict on every series with a published exponent."""
    rows = []
    for name, r in headline(exponents).iterrows():
        if np.isnan(r["paper"]):
            continue
        rows.append({"series": name, "verdict": fit_verdict(r["c"], r, r["paper"], margin), "c": r["c"],
                     "ci90_low": r["ci90_low"], "ci90_high": r["ci90_high"], "ci95_low": r["ci95_low"],
                     "ci95_high": r["ci95_high"], **{end: r[end] for end in FAMILY_ENDS},
                     "family_verdict": fit_verdict(r["c"], r, r["paper"], margin, family=True),
                     "paper": r["paper"], "n_values": r["n_values"], "seeds": r["seeds"]})
    return pd.DataFrame(rows)


def headline_input(by_rule: Mapping[str, pd.DataFrame], spec: tuple[str, bool, str] | None) -> pd.DataFrame:
    """The cells the headline fit of a series reads (headline); empty for a series the caller does not hold."""
    if spec is None:
        return pd.DataFrame({"N": [], "seed": [], "n_req": [], "log_sd": []})
    cells = series_cells(by_rule["floor"], spec).dropna(subset=["n_req_bracket"])
    return fit_input(cells, "logistic", drop_pool_limited=True)


def claim_table(by_rule: Mapping[str, pd.DataFrame], reps: int = 2000, margin: float = EQUIVALENCE_MARGIN,
                series: Mapping[str, tuple[str, bool, str]] = SERIES) -> pd.DataFrame:
    """Each of the paper's comparative claims (CLAIMS) as a difference of the floor's logistic exponents (without
    pool-limited cells): claim_result on each series' headline cells."""
    inputs = {name: headline_input(by_rule, spec) for name, spec in series.items()}
    return pd.DataFrame([{"claim": claim.name, "text": claim.text, **claim_result(claim, inputs, reps, margin)}
                         for claim in CLAIMS])


def claim_result(claim: Claim, inputs: Mapping[str, pd.DataFrame], reps: int = 2000,
                 margin: float = EQUIVALENCE_MARGIN) -> dict:
    """One claim tested on the headline cells of its series (``inputs``, by series name; a missing one counts as
    empty): the difference paired on the (N, seed) cells both series hold where they share at least 4 values of N,
    else unpaired (said in ``paired``), with its 90% and 95% intervals and its verdict."""
    empty = headline_input({}, None)
    first, second = inputs.get(claim.first, empty), inputs.get(claim.second, empty)
    diff = _difference(first, second, reps)
    third = inputs.get(claim.third, empty) if claim.third else None
    if claim.sign and third is not None:  # between: the smaller of the two gaps, each of which must be positive
        diff = _smaller_gap(diff, _difference(third, first, reps))
    if claim.sign:
        return diff | {"verdict": direction_verdict(Interval(diff["ci95_low"], diff["ci95_high"]), claim.sign),
                       "family_verdict": direction_verdict(Interval(diff["fam_excl_low"], diff["fam_excl_high"]),
                                                           claim.sign)}
    diffs = [diff] + ([_difference(third, second, reps)] if third is not None else [])
    widest = max(diffs, key=lambda d: abs(d["difference"]) if np.isfinite(d["difference"]) else np.inf)
    return widest | {"verdict": _all_equal([fit_verdict(d["difference"], d, 0.0, margin) for d in diffs]),
                     "family_verdict": _all_equal([fit_verdict(d["difference"], d, 0.0, margin, family=True)
                                                   for d in diffs])}


def _all_equal(words: list[str]) -> str:
    """An equality among several series: it differs if one pair differs, is reproduced if every pair is."""
    return "differs" if "differs" in words else "reproduced" if set(words) == {"reproduced"} else "inconclusive"


def fit_verdict(estimate: float, fit: Mapping[str, float], paper: float, margin: float = EQUIVALENCE_MARGIN,
                family: bool = False) -> str:
    """The equivalence rule on an estimate against ``paper``, read off a fit's intervals (ci90 and ci95; with
    ``family``, the family's fam_equiv and fam_excl)."""
    equiv, excl = ("fam_equiv", "fam_excl") if family else ("ci90", "ci95")
    return equivalence_verdict(estimate, Interval(fit[f"{equiv}_low"], fit[f"{equiv}_high"]),
                               Interval(fit[f"{excl}_low"], fit[f"{excl}_high"]), paper, margin)


def _difference(first: pd.DataFrame, second: pd.DataFrame, reps: int) -> dict:
    if not len(first) or not len(second) or first["N"].nunique() < 2 or second["N"].nunique() < 2:
        return {"difference": np.nan, "paired": False, "cells": 0, "n_values": 0, "ci90_low": np.nan,
                "ci90_high": np.nan, "ci95_low": np.nan, "ci95_high": np.nan, **dict.fromkeys(FAMILY_ENDS, np.nan)}
    shared = first[["N", "seed"]].merge(second[["N", "seed"]])["N"].nunique()
    return exponent_difference(first, second, reps=reps, paired=shared >= 4, named_levels=CLAIM_FAMILY)


def _smaller_gap(low_gap: dict, high_gap: dict) -> dict:
    """A claim that a value lies between two others, as the smaller of its two gaps: conservative at each end (the
    lower of the two lower ends, the lower of the two upper ends)."""
    out = {"difference": min(low_gap["difference"], high_gap["difference"]),
           "paired": low_gap["paired"] and high_gap["paired"], "cells": low_gap["cells"] + high_gap["cells"],
           "n_values": min(low_gap["n_values"], high_gap["n_values"])}
    for end in ("ci90_low", "ci90_high", "ci95_low", "ci95_high", *FAMILY_ENDS):
        out[end] = min(low_gap[end], high_gap[end])
    return out


def reproduction_metrics(exponents: pd.DataFrame, verdicts: pd.DataFrame, claims: pd.DataFrame,
                         margin: float = EQUIVALENCE_MARGIN) -> dict[str, float | str]:
    """exponent_<X>_logistic with _ci_low/_ci_high, _n_values and _seeds (floor, without pool-limited cells: the
    verdict's fit),
    exponent_<X>_authors_same_runs and _floor_same_runs (each rule, logistic, on the cells both have), verdict_margin,
    verdict_<X>,
    verdict_<X>_family (the rule at the levels of the family of published exponents, EXPONENT_FAMILY),
    and claim_<name>_difference with _ci_low, _ci_high, _ci_family_low and _ci_family_high (at CLAIM_FAMILY's
    exclusion level), _verdict, _family_verdict and its support (_cells, _n_values, _paired: 1 where the two series are paired on the same N and
    seeds)."""
    out: dict[str, float | str] = {"verdict_margin": margin}
    head = headline(exponents)
    authors = select(exponents, "common", "authors", "logistic", "without")
    floor_same = select(exponents, "common", "floor", "logistic", "without")
    for name, r in head.iterrows():
        out[f"exponent_{name}_logistic"] = float(r["c"])
        out |= {f"exponent_{name}_logistic_n_values": int(r["n_values"]), f"exponent_{name}_logistic_seeds": int(r["seeds"])}
        if not np.isnan(r["ci95_low"]):
            out |= {f"exponent_{name}_logistic_ci_low": float(r["ci95_low"]),
                    f"exponent_{name}_logistic_ci_high": float(r["ci95_high"])}
        out[f"exponent_{name}_authors_same_runs"] = float(authors.loc[name, "c"])
        out[f"exponent_{name}_floor_same_runs"] = float(floor_same.loc[name, "c"])
    for _, r in verdicts.iterrows():
        out[f"verdict_{r['series']}"] = r["verdict"]
        out[f"verdict_{r['series']}_family"] = r["family_verdict"]
    for _, r in claims.iterrows():
        key = f"claim_{r['claim']}"
        out |= {f"{key}_difference": float(r["difference"]), f"{key}_verdict": r["verdict"],
                f"{key}_family_verdict": r["family_verdict"],
                f"{key}_cells": int(r["cells"]), f"{key}_n_values": int(r["n_values"]), f"{key}_paired": int(r["paired"])}
        if np.isfinite(r["ci95_low"]):  # no interval from fewer than 4 values of N
            out |= {f"{key}_ci_low": float(r["ci95_low"]), f"{key}_ci_high": float(r["ci95_high"]),
                    f"{key}_ci_family_low": float(r["fam_excl_low"]),
                    f"{key}_ci_family_high": float(r["fam_excl_high"])}
    return out


HALF_COLUMNS = ["series", "c_lower", "N_lower", "c_upper", "N_upper"]  # half_exponents' table

# the chain-of-thought series chapter 4's experiments do not hold (chapter 7's), which the claims need
COT_SERIES = {name: spec for name, spec in SERIES.items() if spec[1]}

@dataclass
class Reproduction:
    """Everything sections 4.9-4.11 show, computed once."""

    by_rule: dict[str, pd.DataFrame]
    exponents: pd.DataFrame
    verdicts: pd.DataFrame
    claims: pd.DataFrame
    replicates: pd.DataFrame
    flips: pd.DataFrame
    series: dict[str, tuple[str, bool, str]] = field(default_factory=dict)
    halves: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=HALF_COLUMNS))
    slope_by_series: SlopeByGroup | None = None  # does one slope fit every series (section 4.10)


def series_of(experiments: Mapping[str, dict]) -> dict[str, tuple[str, bool, str]]:
    """The chapter's experiments as series (task, CoT, model), with the CoT series the claims need."""
    return {name: (e["task"], bool(e.get("cot", False)), e["model"]) for name, e in experiments.items()} | COT_SERIES


def reproduce(probes: pd.DataFrame, curves: pd.DataFrame, experiments: Mapping[str, dict], floor: int,
              reps: int) -> Reproduction:
    """The replicates' flips, both rules' cells read off the same runs, the exponent table, verdicts and claims.
    ``probes``: the probe table with its replicates (read_probes(..., replicates=True))."""
    series = series_of(experiments)
    tables = rule_tables(probes, curves, floor)
    by_rule = cell_tables(tables)
    exponents = exponent_table(by_rule, reps, series)
    plan = replicate_plan(probes, give_up_floor=floor, strict=False)
    replicates = replicate_outcomes(probes, plan, floor)
    return Reproduction(by_rule, exponents, exponent_verdicts(exponents), claim_table(by_rule, reps, series=series),
                        replicates, flip_shares(replicates), series, half_exponents(by_rule, series),
                        slope_by_series(tables["floor"]))


def half_exponents(by_rule: Mapping[str, pd.DataFrame], series: Mapping[str, tuple[str, bool, str]]) -> pd.DataFrame:
    """Does a series' law bend within the N it measured? Its exponent (the headline's cells, least squares) over
    the smaller and over the larger half of its values of N (the middle one in both when their count is odd);
    series with fewer than 4 values of N are left out."""
    rows = []
    for name, spec in series.items():
        est = headline_input(by_rule, spec)
        Ns = sorted(est["N"].unique()) if len(est) else []
        if len(Ns) < 4:
            continue
        k = (len(Ns) + 1) // 2
        row = {"series": name}
        for part, half in (("lower", Ns[:k]), ("upper", Ns[len(Ns) - k:])):
            cells = est[est["N"].isin(half)]
            row |= {f"c_{part}": power_fit(cells["N"], cells["n_req"])["c"], f"N_{part}": (int(half[0]), int(half[-1]))}
        rows.append(row)
    return pd.DataFrame(rows, columns=HALF_COLUMNS)
