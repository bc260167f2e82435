"""The two-hop law: coverage's predicted requirement and its exponent, the measured law beside the paper's
and the theory's, and what bounds the measurement (the ID pool, the step cap, unreachable cells)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import altair as alt
import numpy as np
import pandas as pd

from covlib.analyses.fits import describe_exponent, power_fit, summary_exponent
from covlib.base.paper import EXPONENT_TWOHOP_DRAFT, EXPONENTS, REQUIRED_DATA_TWOHOP_AUTHORS, theory_exponent
from covlib.base.paths import repository_path
from covlib.coverage.requirement import coverage_requirement
from covlib.figures.required_data import fit_with_extrapolation, required_data_chart, requirement_frame
from covlib.figures.text import series
from covlib.search.cells import ProbeRules

COVERAGE_TASKS = ("twohop", "threehop", "parallel_twohop")


def coverage_tables(coverage_N: Mapping[str, Sequence[int]] | None) -> dict[str, pd.DataFrame]:
    """The coverage-predicted requirement per task: computed here at ``coverage_N``'s values, or (None)
    read from data/scaling/coverage_<task>.csv where that file exists."""
    if coverage_N is None:
        return {t: pd.read_csv(repository_path(f"data/scaling/coverage_{t}.csv")) for t in COVERAGE_TASKS
                if repository_path(f"data/scaling/coverage_{t}.csv").is_file()}
    return {t: coverage_requirement(t, Ns, seeds=(0,), test_size_per_type=300) for t, Ns in coverage_N.items()}


def coverage_fits(cov: pd.DataFrame, N_max: float | None = None) -> pd.DataFrame:
    """The exponent of the coverage-predicted requirement per (k, target), beside the theory's 2.5 - 0.5/k:
    the growth coverage alone predicts, with no training."""
    rows = []
    for (k, target), g in cov.groupby(["k", "target"]):
        g = g.dropna(subset=["n_train"])
        g = g[g["N"] <= N_max] if N_max else g
        if g["N"].nunique() >= 2:
            f = power_fit(g["N"], g["n_train"])
            rows.append({"k": int(k), "target": target, "c": f["c"], "r2": f["r2"], "N range": f"{g['N'].min()}-{g['N'].max()}",
                         "theory 2.5 - 0.5/k": theory_exponent(k)})
    return pd.DataFrame(rows)


def twohop_chart(twohop: pd.DataFrame, cov2: pd.DataFrame, fit: dict | None) -> alt.LayerChart:
    """Two-hop's measured brackets and estimates beside the fitted law, the coverage-predicted requirement,
    the authors' models and the size of the ID pool (which no training set can exceed)."""
    pool = pd.DataFrame({"N": np.geomspace(15, 200, 20)})
    lines = [pd.DataFrame({"N": pool["N"], "n": 0.49 * pool["N"] ** 3, "series": "ID pool 0.49 N³", "dash": "pool"})]
    for k in (2, 3):
        g = cov2[(cov2["k"] == k) & (cov2["target"] == 0.99)].dropna(subset=["n_train"])
        if len(g):
            lines.append(pd.DataFrame({"N": g["N"], "n": g["n_train"], "series": f"coverage: 99% of ID items {k}-covered",
                                       "dash": "coverage"}))
    if fit:
        lines.append(fit_with_extrapolation(fit, draw_to=200))
    authors = pd.DataFrame({"N": list(REQUIRED_DATA_TWOHOP_AUTHORS), "n": list(REQUIRED_DATA_TWOHOP_AUTHORS.values()),
                            "series": "authors' 2-hop models (GPT-2, GPU)"})
    points = requirement_frame(twohop.assign(model="measured: 4-layer, width 128")) if len(twohop) else \
        pd.DataFrame(columns=["N", "seed", "n_req", "low", "high", "series"])
    return required_data_chart(points, pd.concat(lines, ignore_index=True), authors,
                               title="Two-hop: training examples needed for 99% ID accuracy")


def pool_shares(twohop: pd.DataFrame) -> pd.DataFrame:
    """The two-hop summary with ``share_of_pool``: the required data as a share of the ID-eligible inputs."""
    return twohop.assign(share_of_pool=twohop["n_req"] / twohop["eligible"]) if len(twohop) else twohop


def fit_rule_decided(twohop: pd.DataFrame, fit: dict | None, reps: int = 2000) -> dict | None:
    """The fit without the cells whose bracket the step cap decided rather than the authors' rule (``fit``
    itself when there are none)."""
    capped = twohop[twohop["low_capped"] & twohop["n_req"].notna()] if len(twohop) else twohop
    return summary_exponent(twohop[~twohop["low_capped"]], reps) if len(capped) else fit


def share_of_pool_note(id_pool: pd.DataFrame) -> str:
    """Where the required data comes near the whole ID pool, which may bound it rather than the law."""
    if not len(id_pool):
        return "No finished two-hop cells yet."
    per_N = id_pool.groupby("N")["share_of_pool"].mean()
    biting = per_N[per_N > 0.25]
    if not len(biting):
        return "At every N measured the required data stays below a quarter of the ID pool."
    return (f"At N = {', '.join(str(int(n)) for n in biting.index)} the required data is "
            f"{', '.join(f'{v:.0%}' for v in biting)} of the whole ID pool: the smaller N is, the more of the "
            "pool the model needs. Where no training set the pool allows reaches 99%, the cell drops out of the "
            "fit; such cells lie at the smallest N, above the line, so leaving them out steepens the fit.")


def capped_note(twohop: pd.DataFrame, rules: ProbeRules, rule_decided: dict | None,
                twohop_rows: pd.DataFrame | None = None) -> str:
    """The cells whose bracket's failing probe the step cap stopped (each with its own cap, and whether that probe
    ever fitted its training set, read from ``twohop_rows``), and the fit without them ("" if none)."""
    capped = twohop[twohop["low_capped"] & twohop["n_req"].notna()] if len(twohop) else twohop
    if not len(capped):
        return ""

    def cell(r) -> str:
        low = (twohop_rows[(twohop_rows["N"] == r["N"]) & (twohop_rows["seed"] == r["seed"])
                           & (twohop_rows["n_train"] == r["low"]) & (twohop_rows["stopped"] == "steps")]
               if twohop_rows is not None and len(twohop_rows) else pd.DataFrame())
        if not len(low):
            return f"N = {int(r['N'])} (seed {int(r['seed'])}, the {rules.step_cap:,}-step cap)"
        last = low.sort_values("step_cap").iloc[-1]
        fitted = "" if pd.isna(last["first_fit_step"]) else f", its training set fitted at step {int(last['first_fit_step']):,}"
        return (f"N = {int(r['N'])} (seed {int(r['seed'])}, {int(r['low']):,} examples: {int(last['step_cap']):,} steps"
                + (fitted or f" without fitting its training set ({last['final_train']:.1%} of it at the end)")
                + f", best ID accuracy {last['best_type0']:.1%})")

    return (" At " + "; ".join(cell(r) for _, r in capped.iterrows())
            + " the bracket's failing probe stopped at its step cap before the give-up rule "
            f"({rules.give_up_epochs:.0f} epochs after fitting) could decide: those estimates are the data needed "
            "within the cap, and may sit above what longer training needs. Without them the fit "
            f"gives {describe_exponent(rule_decided)}.")


def raised_cap_note(twohop_rows: pd.DataFrame, rules: ProbeRules) -> str:
    """Where the step cap was raised so that the authors' rule, not the cap, decides ("" if it never was)."""
    caps = twohop_rows.groupby("N")["step_cap"].max().astype(int) if len(twohop_rows) else pd.Series(dtype=int)
    if caps.nunique() <= 1:
        return ""
    raised = caps[caps > caps.min()]
    return (f" The step cap was {caps.min():,} steps except at N = "
            + series([f"{n} ({c:,})" for n, c in raised.items()])
            + f": there the training set is fitted late and {rules.give_up_epochs:.0f} epochs take more than "
            f"{caps.min():,} steps, so the lower cap, not the authors' rule, would have decided. A higher cap "
            "keeps every probe the rule decided and trains again those the lower cap stopped.")


def unreachable_note(twohop: pd.DataFrame, twohop_rows: pd.DataFrame) -> str:
    """The cells where even the largest training set the search may use fails ("" if none)."""
    lost = twohop[twohop["status"] == "unreachable"] if len(twohop) else twohop
    if not len(lost):
        return ""
    at_top = [twohop_rows[(twohop_rows["N"] == r["N"]) & (twohop_rows["seed"] == r["seed"])].nlargest(1, "n_train").iloc[0]
              for _, r in lost.iterrows()]
    return (" At the smallest N the law cannot be measured at all: "
            + "; ".join(f"at N = {int(t['N'])} (seed {int(t['seed'])}) the largest training set the search may use, "
                        f"{int(t['n_train']):,} of {int(t['eligible']):,} ID-eligible inputs, still ends at "
                        f"{t['best_type0']:.1%} ID accuracy" for t in at_top)
            + ": the requirement, if there is one, is more than the pool can give while keeping a test set.")


def pool_note(twohop: pd.DataFrame, twohop_rows: pd.DataFrame, rules: ProbeRules, rule_decided: dict | None) -> str:
    """What bounds the two-hop measurement: the ID pool, the step cap, and cells no training set reaches."""
    return (share_of_pool_note(pool_shares(twohop)) + capped_note(twohop, rules, rule_decided, twohop_rows)
            + raised_cap_note(twohop_rows, rules) + unreachable_note(twohop, twohop_rows))


def coverage_exponent(cov_fit: pd.DataFrame, k: int = 3, target: float = 0.99) -> float:
    """The coverage-predicted exponent at one (k, target), NaN if it was not fitted."""
    c = cov_fit[(cov_fit["k"] == k) & (cov_fit["target"] == target)]["c"]
    return float(c.iloc[0]) if len(c) else float("nan")


def exponent_comparison(fit: dict | None, c3: float) -> pd.DataFrame:
    """The measured exponent beside coverage's, the paper's (and its superseded draft's) and the theory's."""
    def point(what: str, c: float, source: str) -> dict:
        return {"what": what, "c": c, "c_low": c, "c_high": c, "source": source}

    return pd.DataFrame([
        {"what": "measured here (4-layer, width 128, CPU)", "c": fit["c"] if fit else np.nan,
         "c_low": fit["c_low"] if fit else np.nan, "c_high": fit["c_high"] if fit else np.nan, "source": "this book"},
        point("coverage: 99% of ID items 3-covered", c3, "this book"),
        point("paper: 2-hop, GPT-2", EXPONENTS["twohop"], "paper"),
        point("paper draft fit (superseded)", EXPONENT_TWOHOP_DRAFT, "paper"),
        point("theory, k = 2", theory_exponent(2), "theory"),
        point("theory, k = 3", theory_exponent(3), "theory"),
    ])


def interval_text(fit: dict | None) -> str:
    """A fit's interval for a table cell: "1.82 to 2.38", "none (3 N)" below four values of N, or "n/a"."""
    if fit is None:
        return "n/a"
    if np.isnan(fit["c_low"]):
        return f"none ({fit['n_values']} N)"
    return f"{fit['c_low']:.2f} to {fit['c_high']:.2f}"
