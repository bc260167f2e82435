"""The audit's statistics: dose-response, ANOVA, mixtures, contrasts, and the sentences that report them."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy import optimize, stats

from covlib.base.errors import CovlibError
from covlib.chapters.ch09_diversity_exposure_coverage.audit import AuditPlan, train_command
from covlib.figures.text import p_value

ACC = "final_type0"


def _logistic(log_n: np.ndarray, floor: float, top: float, mid: float, slope: float) -> np.ndarray:
    return floor + (top - floor) / (1.0 + np.exp(-slope * (log_n - mid)))


def dose_response(runs: pd.DataFrame, y: str = ACC) -> dict:
    """A four-parameter logistic of accuracy in log(n_unique), fitted to every run; R^2 on the runs and
    on the per-level means, and Spearman's rho of the means (monotone?)."""
    runs = runs.dropna(subset=[y])
    levels = runs.groupby("n_unique")[y].mean()
    if len(levels) < 4:
        raise CovlibError(f"a dose-response fit needs four levels of n_unique or more, got {len(levels)}")
    x, acc = np.log(runs["n_unique"].to_numpy(float)), runs[y].to_numpy(float)
    start = [acc.min(), acc.max(), float(np.median(x)), 2.0]
    bounds = ([0.0, 0.0, x.min() - 3, 0.01], [1.0, 1.0, x.max() + 3, 100.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optimize.OptimizeWarning)
        params, _ = optimize.curve_fit(_logistic, x, acc, p0=start, bounds=bounds, maxfev=20000)

    def r2(xs: np.ndarray, ys: np.ndarray) -> float:
        ss = float(((ys - ys.mean()) ** 2).sum())
        return 1.0 - float(((ys - _logistic(xs, *params)) ** 2).sum()) / ss if ss > 0 else float("nan")

    floor, top, mid, slope = (float(p) for p in params)
    return {"floor": floor, "top": top, "midpoint_n": float(np.exp(mid)), "slope": slope,
            "r2_runs": r2(x, acc), "r2_means": r2(np.log(levels.index.to_numpy(float)), levels.to_numpy(float)),
            "spearman_means": float(stats.spearmanr(levels.index, levels.to_numpy()).statistic), "levels": int(len(levels))}


def dose_curve(fit: dict, n: np.ndarray) -> np.ndarray:
    """The fitted logistic at the sizes ``n`` (for the figure)."""
    return _logistic(np.log(np.asarray(n, float)), fit["floor"], fit["top"], np.log(fit["midpoint_n"]), fit["slope"])


def factorial_anova(runs: pd.DataFrame, y: str = ACC) -> pd.DataFrame:
    """Two-way ANOVA (type II) of accuracy on diversity (n_unique) and exposure as factors, with their
    interaction, and each effect's partial eta^2 = SS_effect / (SS_effect + SS_residual)."""
    import statsmodels.formula.api as smf
    from statsmodels.stats.anova import anova_lm

    df = runs.dropna(subset=[y]).assign(diversity=lambda d: d["n_unique"].astype(str),
                                        exposure_=lambda d: d["exposure"].round(3).astype(str))
    if df["diversity"].nunique() < 2 or df["exposure_"].nunique() < 2:
        raise CovlibError("the factorial needs two levels of diversity and of exposure or more")
    model = smf.ols(f"{y} ~ C(diversity) * C(exposure_)", data=df).fit()
    table = anova_lm(model, typ=2)
    resid = float(table.loc["Residual", "sum_sq"])
    table["partial_eta2"] = table["sum_sq"] / (table["sum_sq"] + resid)
    table.loc["Residual", "partial_eta2"] = np.nan
    table.index = ["diversity", "exposure", "diversity x exposure", "residual"]
    return table.rename(columns={"PR(>F)": "p"})


def escape_mixture(acc: np.ndarray, seed: int = 0) -> dict:
    """Floor against escaped runs: Gaussian mixtures of one and two components fitted to the runs'
    accuracies, compared by BIC; with two, a run has escaped when the upper component is more likely."""
    from sklearn.mixture import GaussianMixture

    x = np.asarray(acc, float).reshape(-1, 1)
    if len(x) < 4:
        raise CovlibError(f"a mixture needs four runs or more, got {len(x)}")
    fits = {c: GaussianMixture(c, random_state=seed, reg_covar=1e-4).fit(x) for c in (1, 2)}
    bic = {c: float(f.bic(x)) for c, f in fits.items()}
    two = fits[2]
    upper = int(np.argmax(two.means_.ravel()))
    escaped = two.predict(x) == upper if bic[2] < bic[1] else np.zeros(len(x), dtype=bool)
    return {"bic_1": bic[1], "bic_2": bic[2], "bimodal": bic[2] < bic[1], "means": np.sort(two.means_.ravel()).tolist(),
            "escaped": escaped}


def cell_bimodality(runs: pd.DataFrame, y: str = ACC) -> pd.DataFrame:
    """Per factorial cell: runs, mean, spread, escaped runs (by the mixture of all runs) and whether the
    cell's own runs prefer two components (BIC; needs four runs or more and some spread)."""
    mix = escape_mixture(runs[y].to_numpy())
    runs = runs.assign(escaped=mix["escaped"])
    rows = []
    for (n, e), g in runs.groupby(["n_unique", "exposure"]):
        own = escape_mixture(g[y].to_numpy()) if len(g) >= 4 and g[y].std() > 1e-3 else None
        rows.append({"n_unique": n, "exposure": e, "runs": len(g), "mean": g[y].mean(), "sd": g[y].std(),
                     "escaped": int(g["escaped"].sum()), "bimodal": bool(own and own["bimodal"])})
    return pd.DataFrame(rows)


def escape_logit(runs: pd.DataFrame, escaped: np.ndarray) -> dict:
    """Logistic regression of escape on log n_unique and log exposure (statsmodels). When one variable
    separates the outcome perfectly, maximum likelihood has no finite answer: the fit is then
    L2-penalised (alpha 1) and flagged."""
    import statsmodels.api as sm

    X = sm.add_constant(np.column_stack([np.log(runs["n_unique"].to_numpy(float)),
                                         np.log(runs["exposure"].to_numpy(float))]))
    yv = np.asarray(escaped, float)
    if yv.min() == yv.max():
        return {"coef_log_n": float("nan"), "coef_log_exposure": float("nan"), "penalised": False,
                "note": "every run on the same side: nothing to regress"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fit = sm.Logit(yv, X).fit(disp=0, maxiter=200)
            if not fit.mle_retvals.get("converged", True) or np.abs(fit.params).max() > 50:
                raise np.linalg.LinAlgError("separation")
            return {"coef_log_n": float(fit.params[1]), "coef_log_exposure": float(fit.params[2]),
                    "p_log_n": float(fit.pvalues[1]), "p_log_exposure": float(fit.pvalues[2]), "penalised": False}
        except (np.linalg.LinAlgError, Exception):  # noqa: BLE001  (perfect separation in any of its guises)
            fit = sm.Logit(yv, X).fit_regularized(alpha=np.array([0.0, 1.0, 1.0]), disp=0)  # the intercept is free
            return {"coef_log_n": float(fit.params[1]), "coef_log_exposure": float(fit.params[2]), "penalised": True,
                    "separated_by": separating_factor(runs, yv.astype(bool))}


def separating_factor(runs: pd.DataFrame, escaped: np.ndarray) -> str | None:
    """The factor ("n_unique" or "exposure") one threshold of which splits escaped from floor runs exactly,
    if any: then escape is decided by that factor alone in this grid and a logistic fit has no finite answer."""
    escaped = np.asarray(escaped, bool)
    for factor in ("n_unique", "exposure"):
        x = runs[factor].to_numpy(float)
        if escaped.any() and (~escaped).any() and (x[escaped].min() > x[~escaped].max()
                                                   or x[escaped].max() < x[~escaped].min()):
            return factor
    return None


def exposure_effect(runs: pd.DataFrame, escaped: np.ndarray, y: str = ACC) -> pd.DataFrame:
    """Per diversity level: the share of runs that escaped, and the mean accuracy at the lowest and the
    highest exposure: does exposure move escape, or how far runs get?"""
    runs = runs.assign(escaped=np.asarray(escaped, bool))
    low_e, high_e = runs["exposure"].min(), runs["exposure"].max()
    rows = []
    for n, g in runs.groupby("n_unique"):
        at_low, at_high = g[g["exposure"] == low_e], g[g["exposure"] == high_e]
        rows.append({"n_unique": n, "escaped_share": g["escaped"].mean(),
                     "escaped_share_low_exposure": at_low["escaped"].mean(),
                     "escaped_share_high_exposure": at_high["escaped"].mean(),
                     "acc_low_exposure": at_low[y].mean(), "acc_high_exposure": at_high[y].mean()})
    return pd.DataFrame(rows)


def contrast(high: np.ndarray, low: np.ndarray, margin: float = 0.03, resamples: int = 20000, seed: int = 0) -> dict:
    """High-arm minus low-arm accuracy: a two-sided permutation test of the mean difference (scipy), an
    equivalence test (two one-sided Welch t-tests, statsmodels) against +-``margin``, the smallest difference the
    design would detect (80% power, two-sided 5%, from the pooled spread), and the 90% interval of the
    difference with ``bound``, the narrowest margin within which the data show equivalence."""
    from statsmodels.stats.weightstats import ttost_ind

    high, low = np.asarray(high, float), np.asarray(low, float)
    if len(high) < 2 or len(low) < 2:
        raise CovlibError("a contrast needs two runs per arm or more")
    diff = float(high.mean() - low.mean())
    perm = stats.permutation_test((high, low), lambda a, b: a.mean() - b.mean(), permutation_type="independent",
                                  n_resamples=resamples, alternative="two-sided", random_state=seed)
    # Welch's equivalence test, the same unequal-variance t as the interval below: the data show equivalence within
    # +-margin (p < 0.05) exactly when the 90% Welch interval lies inside it (a pooled test would disagree with it)
    p_equiv = float(ttost_ind(high, low, -margin, margin, usevar="unequal")[0])
    pooled = float(np.sqrt(((len(high) - 1) * high.var(ddof=1) + (len(low) - 1) * low.var(ddof=1))
                           / (len(high) + len(low) - 2)))
    mde = float((stats.norm.ppf(0.975) + stats.norm.ppf(0.8)) * pooled * np.sqrt(1 / len(high) + 1 / len(low)))
    # the 90% interval of the difference (Welch): the margin the equivalence test would accept is its larger end
    interval = stats.ttest_ind(high, low, equal_var=False).confidence_interval(0.90)
    return {"diff": diff, "p": float(perm.pvalue), "p_equivalence": p_equiv, "margin": margin,
            "detectable": mde, "ci90_low": float(interval.low), "ci90_high": float(interval.high),
            "bound": float(max(abs(interval.low), abs(interval.high))), "n_high": len(high), "n_low": len(low),
            "pooled_sd": pooled}


def runs_to_bound(c: dict, target: float = 0.05) -> float:
    """About how many runs per arm would bound the contrast within +-``target`` (its 90% interval inside it), if
    the difference and the spread stayed as observed (normal approximation); inf when the observed difference
    is itself beyond the target."""
    room = target - abs(c["diff"])
    if room <= 0:
        return float("inf")
    return float(np.ceil(2 * (stats.norm.ppf(0.95) * c["pooled_sd"] / room) ** 2))


def bound_need(c: dict, target: float = 0.05) -> str:
    """What bounding the contrast within +-``target`` would take, in words ("" when it is already bounded)."""
    if c["bound"] <= target:
        return ""
    n = runs_to_bound(c, target)
    if np.isinf(n):
        return f" No number of runs would bound it within +-{100 * target:.0f} pp: the observed difference is larger."
    return (f" Bounding it within +-{100 * target:.0f} pp would take about {n:,.0f} runs per arm at the observed "
            f"spread ({c['n_high']} now).")


def dose_levels(dose: pd.DataFrame) -> pd.DataFrame:
    """Per level of n_unique of the dose-response: runs, exposure, mean and sd of accuracy, mean 3-coverage."""
    return dose.groupby("n_unique").agg(runs=("seed", "size"), exposure=("exposure", "first"), accuracy=(ACC, "mean"),
                                        sd=(ACC, "std"), coverage_k3=("coverage", "mean"))


def describe_dose_fit(fit: dict) -> str:
    """The fitted logistic of the dose-response in one line."""
    return (f"logistic in log n: floor {fit['floor']:.3f}, top {fit['top']:.3f}, midpoint "
            f"{fit['midpoint_n']:,.0f} examples; R^2 {fit['r2_means']:.3f} on the level means, "
            f"{fit['r2_runs']:.3f} on the runs; Spearman rho of the means {fit['spearman_means']:.2f}")


def seeds_per_cell(factorial_runs: pd.DataFrame) -> int:
    """The fewest runs in any cell of the factorial (0 when it holds none)."""
    if not len(factorial_runs):
        return 0
    return int(factorial_runs.groupby(["n_unique", "exposure"]).size().min())


def factorial_analysis(factorial_runs: pd.DataFrame, cells_expected: int) -> dict | None:
    """The three analyses of the diversity x exposure grid: the ANOVA (``anova``), the floor-or-escape
    mixture over every run (``mixture``) and per cell (``cells``), the logistic regression of escape
    (``logit``) and exposure's role per diversity level (``exposure``). None until the grid has two
    levels of each factor and more runs than cells."""
    fact = factorial_runs
    if not (fact["n_unique"].nunique() >= 2 and fact["exposure"].nunique() >= 2 and len(fact) > cells_expected):
        return None
    mix = escape_mixture(fact[ACC].to_numpy())
    return {"anova": factorial_anova(fact), "mixture": mix, "cells": cell_bimodality(fact),
            "logit": escape_logit(fact, mix["escaped"]), "exposure": exposure_effect(fact, mix["escaped"])}


def partial_eta2(anova: pd.DataFrame | None, effect: str) -> float:
    """One effect's partial eta^2 from the factorial's ANOVA (NaN before the factorial has run)."""
    return float(anova.loc[effect, "partial_eta2"]) if anova is not None else float("nan")


def describe_mixture(mix: dict, n_runs: int) -> str:
    """The mixture's verdict in one line: one mode or two, their means, and how many runs escaped."""
    return (f"mixture over all {n_runs} runs: BIC one component {mix['bic_1']:.1f}, two {mix['bic_2']:.1f} -> "
            f"{'two modes' if mix['bimodal'] else 'one mode'} (means {', '.join(f'{m:.2f}' for m in mix['means'])}); "
            f"{int(mix['escaped'].sum())} runs escaped the floor")


def describe_logit(logit: dict) -> str:
    """The logistic regression of escape in one line, saying when its coefficients are not effect sizes."""
    return "logistic regression of escape: " + (logit.get("note") or (
        f"log n {logit['coef_log_n']:+.2f}, log exposure {logit['coef_log_exposure']:+.2f}"
        + (f" (L2-penalised: escape is separated perfectly by {logit['separated_by'] or 'the two factors'}, "
           "so these are not effect sizes)" if logit["penalised"] else "")))


def arm_accuracies(runs: pd.DataFrame, measure: str) -> tuple[np.ndarray, np.ndarray]:
    """Accuracies of the high and the low arm of one contrast (coverage or surface)."""
    arm_runs = runs[runs["experiment"] == measure]
    high, low = (arm_runs.loc[arm_runs["selection"] == s, ACC].to_numpy() for s in ("high", "low"))
    return high, low


def describe_contrast(measure: str, high: np.ndarray, low: np.ndarray, result: dict | None, per_arm: int) -> str:
    """One contrast in one line (its arms, difference, tests and interval), or how many of its runs are missing."""
    c = result
    if c is None:
        return (f"{measure}: {len(high) + len(low)} of {2 * per_arm} runs in the table; fill it with: covlib diversity "
                f"run --experiments {measure} --table data/diversity/runs.csv")
    return (f"{measure}: high {high.mean():.3f} ({len(high)} runs) vs low {low.mean():.3f} ({len(low)}): difference "
            f"{100 * c['diff']:+.1f} pp, permutation {p_value(c['p'], decimals=3)}, equivalence within +-3 pp "
            f"{p_value(c['p_equivalence'], decimals=3)}; detectable difference {100 * c['detectable']:.1f} pp; 90% interval "
            f"{100 * c['ci90_low']:+.1f} to {100 * c['ci90_high']:+.1f} pp")


def contrast_number(result: dict | None, key: str) -> float:
    """One number of a contrast, differences and bounds in percentage points (NaN when it has not run)."""
    if result is None:
        return float("nan")
    return 100 * result[key] if key in ("diff", "bound") else result[key]


def contrast_numbers(contrasts: dict[str, dict | None]) -> dict[str, float]:
    """The contrasts' recorded numbers: difference (pp) and p of each, then each one's bound (pp)."""
    numbers = {}
    for measure in ("coverage", "surface"):
        numbers[f"{measure}_contrast_pp"] = contrast_number(contrasts[measure], "diff")
        numbers[f"{measure}_contrast_p"] = contrast_number(contrasts[measure], "p")
    for measure in ("coverage", "surface"):
        numbers[f"{measure}_contrast_bound_pp"] = contrast_number(contrasts[measure], "bound")
    return numbers


COMPANION_STUDY = {  # the companion study's COGS numbers (its Experiments 3 to 5; T5-small, exact match, easy split)
    "dose-response R^2 (logistic in log n)": 0.996, "partial eta^2, diversity": 0.882,
    "partial eta^2, exposure": 0.196, "escape logit: log n": 3.73, "escape logit: log exposure": 1.06,
    "coverage contrast at fixed n (pp)": 0.37, "coverage contrast p": 0.97,
    "surface contrast at fixed n (pp)": float("nan"), "surface contrast p": float("nan"),
    "seeds per factorial cell": 5,
}


def side_by_side(dose_r2: float, eta2_diversity: float, eta2_exposure: float, logit: dict | None,
                 contrasts: dict[str, float], seeds: int) -> pd.DataFrame:
    """The companion study's numbers beside this audit's (``contrasts``: from contrast_numbers)."""
    ours = [dose_r2, eta2_diversity, eta2_exposure,
            logit["coef_log_n"] if logit else float("nan"), logit["coef_log_exposure"] if logit else float("nan"),
            contrasts["coverage_contrast_pp"], contrasts["coverage_contrast_p"],
            contrasts["surface_contrast_pp"], contrasts["surface_contrast_p"], seeds]
    return pd.DataFrame([{"quantity": q, "companion study (COGS)": theirs, "this book (twohop)": mine}
                         for (q, theirs), mine in zip(COMPANION_STUDY.items(), ours)])


def verdict(c: dict | None, name: str) -> str:
    """One sentence on a contrast, from its numbers."""
    if c is None:
        return f"The {name} contrast has not been run yet (see COMMANDS.txt)."
    if c["p"] < 0.05:
        return (f"Selecting on {name} changes accuracy at fixed diversity by {100 * c['diff']:+.1f} pp "
                f"(permutation {p_value(c['p'], decimals=3)}).")
    if c["p_equivalence"] < 0.05:
        return (f"Selecting on {name} does not change accuracy: {100 * c['diff']:+.1f} pp, equivalent to zero within "
                f"+-3 pp ({p_value(c['p_equivalence'], decimals=3)}).")
    return (f"Selecting on {name} moves accuracy by {100 * c['diff']:+.1f} pp ({p_value(c['p'], decimals=3)}); this design cannot "
            f"tell that from zero nor bound it within +-3 pp (it detects {100 * c['detectable']:.1f} pp); its 90% "
            f"interval, {100 * c['ci90_low']:+.1f} to {100 * c['ci90_high']:+.1f} pp, rules out effects larger than "
            f"{100 * c['bound']:.0f} pp either way." + bound_need(c))


def dose_answer(fit: dict, budget: int) -> str:
    """The answer's line on the dose-response."""
    return (f"* **Diversity drives, here too.** At a fixed budget of {budget:,} forward passes, ID accuracy "
            f"rises from {fit['floor']:.2f} to {fit['top']:.2f} along a logistic in log n_unique "
            f"(R^2 = {fit['r2_means']:.3f} on the level means), with its midpoint at {fit['midpoint_n']:,.0f} "
            "distinct examples.")


def factorial_answer(factorial: dict, fact: pd.DataFrame) -> str:
    """The answer's line on the diversity x exposure grid: effect sizes, modes, and what decides escape."""
    anova, mix, logit, exposure_role = factorial["anova"], factorial["mixture"], factorial["logit"], factorial["exposure"]
    line = (f"* **Diversity and exposure, crossed.** Partial eta^2 is {partial_eta2(anova, 'diversity'):.2f} for "
            f"diversity, {partial_eta2(anova, 'exposure'):.2f} for exposure and "
            f"{anova.loc['diversity x exposure', 'partial_eta2']:.2f} for their interaction ({seeds_per_cell(fact)} "
            f"seeds per cell; the study: 0.882 and 0.196). The mixture finds "
            f"{'two modes' if mix['bimodal'] else 'one mode'} and {int(mix['escaped'].sum())} of {len(fact)} runs "
            "escaped the floor.")
    if logit.get("separated_by") == "n_unique":
        floor_n = exposure_role.loc[exposure_role["escaped_share"] == 0, "n_unique"]
        risen = exposure_role[exposure_role["escaped_share"] == 1]
        line += (f" Whether a run escapes is decided by diversity alone in this grid: "
                 f"{'no run at ' + ', '.join(f'{int(n):,}' for n in floor_n) + ' examples escapes' if len(floor_n) else ''}"
                 f"{' and ' if len(floor_n) and len(risen) else ''}"
                 f"{'every run at ' + ', '.join(f'{int(n):,}' for n in risen['n_unique']) + ' does' if len(risen) else ''}"
                 f", at every exposure, so the logistic regression of escape has no finite estimate. "
                 "Exposure works on the escaped runs instead: "
                 + "; ".join(f"at {int(r['n_unique']):,} examples, {fact['exposure'].min():.0f} to "
                             f"{fact['exposure'].max():.0f} passes per example lift ID accuracy from "
                             f"{r['acc_low_exposure']:.2f} to {r['acc_high_exposure']:.2f}"
                             for _, r in risen.iterrows())
                 + ". In the study exposure raised the chance of escaping, not the level reached; here, "
                 f"where exposure is also the length of training ({int(fact['steps'].min()):,} to "
                 f"{int(fact['steps'].max()):,} steps), it raises the level.")
    elif not logit.get("note"):
        line += (f" Escape against log n and log exposure: coefficients {logit['coef_log_n']:+.2f} and "
                 f"{logit['coef_log_exposure']:+.2f} (the study: +3.73 and +1.06).")
    return line


def answer(plan: AuditPlan, dose_fit: dict | None, dose_budget: int, factorial: dict | None, fact: pd.DataFrame,
           contrasts: dict[str, dict | None], cov3: pd.Series, surf1: pd.Series, contrast_runs: pd.DataFrame,
           effects: dict[str, float], range_text: str, range_allows: bool = False, k3_text: str = "") -> str:
    """The chapter's answer as Markdown bullets, each from the numbers of its section (those that have run)."""
    lines = [dose_answer(dose_fit, dose_budget)] if dose_fit else []
    if factorial is not None:
        lines.append(factorial_answer(factorial, fact))
    lines.append(f"* **Selection on exact {plan.contrast_k}-coverage.** "
                 f"{verdict(contrasts['coverage'], f'exact {plan.contrast_k}-coverage')}")
    lines.append(f"* **The surface measure.** {verdict(contrasts['surface'], f'pairs seen {plan.surface_min} times')}")
    lines.append(f"* **Read as contrasts of exact 3-coverage.** {describe_effect('coverage', effects)} "
                 f"{describe_effect('surface', effects, 'surface_')} Every candidate set of {plan.contrast_n:,} "
                 f"3-covers {cov3['mean']:.1%} of the ID test (sd {cov3['sd']:.4f}) and shows {surf1['mean']:.1%} of "
                 "its pairs" + (", so neither result bounds an effect of coverage. " if all(
                     not abs(effects[f"{p}coverage_gap_between_arms"]) >= MIN_GAP for p in ("", "surface_")) else
                     "; each is read above per point of the coverage its arms differ by. ")
                 + "The companion study's coverage "
                 f"contrast on COGS (1st against 99th percentile of pair coverage) moved accuracy by "
                 f"{COMPANION_STUDY['coverage contrast at fixed n (pp)']:.2f} points (p = "
                 f"{COMPANION_STUDY['coverage contrast p']:.2f}); it too is an effect per point of whatever its arms "
                 "differed by.")
    lines.append(f"* **How far selection can move exact coverage.** {range_text}")
    if dose_fit and contrasts["coverage"] is not None and contrasts["surface"] is not None:
        lines.append("* **The answer.** On two-hop, the number of distinct examples predicts ID generalisation "
                     f"(R^2 = {dose_fit['r2_means']:.3f}). Exact 3-coverage rises with it and, at one size, varies "
                     "little between training sets of typical make-up"
                     + ("; only where it varies most, and choosing among many random sets, can selection come near "
                        f"or reach a contrast of 15 points, and those contrasts are the ones that test it. {k3_text} "
                        if range_allows else
                        ", so on this task it cannot be separated from diversity by selection. ")
                     + f"What the contrasts at {plan.contrast_n:,} examples measured is selection on higher "
                     "thresholds and pair counts. "
                     f"Coverage at k = 3 is {cov3['mean']:.1%} for every set of {plan.contrast_n:,} while the models "
                     f"trained on them reach {contrast_runs[ACC].mean():.2f} ID accuracy on average: it is the "
                     "condition chapter 3 shows items need, met before the model has learned them.")
    return "\n".join(lines)


def coverage_gap(runs: pd.DataFrame, measure: str, column: str = "coverage") -> float:
    """How far one contrast's arms differ in ``column`` (default: exact 3-coverage of the ID test), in points:
    mean of the high arm minus mean of the low arm over its runs (NaN when an arm has none)."""
    arm_runs = runs[runs["experiment"] == measure]
    high, low = (arm_runs.loc[arm_runs["selection"] == s, column] for s in ("high", "low"))
    return float(100 * (high.mean() - low.mean())) if len(high) and len(low) else float("nan")


MIN_GAP = 0.5  # points of coverage below which a contrast did not move coverage (its per-point interval is vast)


def effect_per_point(high: np.ndarray, low: np.ndarray, gap: float, level: float = 0.95) -> dict:
    """The contrast's accuracy difference (pp) per point of coverage its arms differ by (``gap``), with the Welch
    ``level`` interval of the difference divided by the gap (the gap is exact: coverage is computed, not
    sampled). NaN when the arms do not differ in coverage at all (or an arm has fewer than two runs)."""
    high, low = np.asarray(high, float), np.asarray(low, float)
    nan = {"effect": float("nan"), "ci_low": float("nan"), "ci_high": float("nan"), "gap": gap}
    if len(high) < 2 or len(low) < 2 or not abs(gap) > 0:
        return nan
    diff = 100 * float(high.mean() - low.mean())
    ci = stats.ttest_ind(high, low, equal_var=False).confidence_interval(level)
    ends = sorted([100 * float(ci.low) / gap, 100 * float(ci.high) / gap])
    return {"effect": diff / gap, "ci_low": ends[0], "ci_high": ends[1], "gap": gap}


def effect_numbers(runs: pd.DataFrame) -> dict[str, float]:
    """The recorded numbers of both contrasts as contrasts of exact 3-coverage: the arms' gap in it (points) and
    the effect per point with its 95% interval (NaN where the gap is too small to give one)."""
    numbers = {}
    for measure, prefix in (("coverage", ""), ("surface", "surface_")):
        high, low = arm_accuracies(runs, measure)
        gap = coverage_gap(runs, measure)
        e = effect_per_point(high, low, gap)
        numbers |= {f"{prefix}coverage_gap_between_arms": gap, f"{prefix}effect_per_coverage_point": e["effect"],
                    f"{prefix}effect_per_coverage_point_ci_low": e["ci_low"],
                    f"{prefix}effect_per_coverage_point_ci_high": e["ci_high"]}
    return numbers


def describe_effect(name: str, numbers: dict[str, float], prefix: str = "") -> str:
    """One contrast read as a contrast of exact 3-coverage: how far its arms differ in it, and the accuracy difference
    in all with the effect per point beside it. Under MIN_GAP points the selection did not move 3-coverage, and no
    effect per point is given (divided by so small a gap it is noise)."""
    gap = numbers[f"{prefix}coverage_gap_between_arms"]
    if gap != gap:
        return f"The {name} contrast has no runs in both arms yet."
    effect = numbers[f"{prefix}effect_per_coverage_point"]
    head = f"The {name} contrast's arms differ by {gap:+.2f} points of exact 3-coverage of the ID test"
    if effect != effect:
        return f"{head}: the selection did not move 3-coverage, so this contrast says nothing about its effect."
    if abs(gap) < MIN_GAP:
        return (f"{head}, under {MIN_GAP} points: the selection did not move 3-coverage, so this contrast says "
                f"nothing about its effect (accuracy differs by {effect * gap:+.2f} pp in all).")
    return (f"{head}; accuracy differs by {effect * gap:+.2f} pp in all, {effect:+.2f} pp per point of 3-coverage "
            f"(95% interval {numbers[f'{prefix}effect_per_coverage_point_ci_low']:+.2f} to "
            f"{numbers[f'{prefix}effect_per_coverage_point_ci_high']:+.2f} per point).")


FLOOR_ACCURACY = 0.5  # mean ID accuracy of both arms below this: the runs have not learned the task at this budget


def contrast_context(runs: pd.DataFrame, numbers: dict[str, float], bar: float, measure: str = "coverage") -> str:
    """What a per-point effect can mean, given the contrast's design: whether its arms moved coverage by the ``bar``
    points it aimed at, and whether they learned the task at all (near the floor, accuracy cannot show an effect of
    coverage whichever way it goes). "" before both arms have runs."""
    high, low = arm_accuracies(runs, measure)
    gap = numbers.get("coverage_gap_between_arms", float("nan"))
    if not len(high) or not len(low) or gap != gap:
        return ""
    arm_runs = runs[runs["experiment"] == measure]
    steps, n = int(arm_runs["steps"].max()), int(arm_runs["n_unique"].max())
    text = (f" The arms reach {high.mean():.1%} and {low.mean():.1%} ID accuracy ({len(high)} and {len(low)} runs, "
            f"{n:,} examples, {steps:,} steps)")
    text += (f"; they moved 3-coverage by {abs(gap):.1f} points, {'past' if abs(gap) >= bar else 'short of'} the "
             f"{bar:.0f} the design aimed at.")
    if arm_summary(runs, measure)["at_floor"]:
        text += (" Neither arm has learned the task at this budget, so the interval bounds the effect of 3-coverage "
                 "where accuracy sits near its floor, not where a model generalises.")
    return text


def arm_summary(runs: pd.DataFrame, measure: str = "coverage") -> dict[str, float | int | bool]:
    """A contrast's arms in the numbers the README states beside its effect: each arm's mean ID accuracy, the runs in
    the smaller arm, and whether both arms sit below FLOOR_ACCURACY (NaN and False before both arms have runs)."""
    high, low = arm_accuracies(runs, measure)
    if not len(high) or not len(low):
        return {"acc_high": float("nan"), "acc_low": float("nan"), "runs_per_arm": 0, "at_floor": False}
    return {"acc_high": float(high.mean()), "acc_low": float(low.mean()), "runs_per_arm": min(len(high), len(low)),
            "at_floor": bool(max(high.mean(), low.mean()) < FLOOR_ACCURACY)}


def leaves_floor(table: pd.DataFrame) -> bool:
    """Whether any set that a contrast trained longer (``longer_training``) reaches FLOOR_ACCURACY at its best."""
    return bool(len(table) and table["best_long"].max() >= FLOOR_ACCURACY)


def longer_training(short: pd.DataFrame, long: pd.DataFrame, measure: str = "coverage") -> pd.DataFrame:
    """Per training set that a contrast trained both at its own length (``short``) and longer (``long``): its arm,
    3-coverage, and ID accuracy at the short length, at the end of the long run, and its best over the long run's
    evaluations, and its accuracy on training items at the end (matched on experiment, arm, model seed and draw)."""
    key = ["experiment", "selection", "seed", "draw"]
    long_runs = long[long["experiment"] == measure] if len(long) else long
    if not len(long_runs):
        return pd.DataFrame(columns=["selection", "draw", "coverage", "steps_short", "acc_short", "steps_long",
                                     "acc_long", "best_long", "train_long"])
    both = long_runs.merge(short[key + ["steps", ACC]], on=key, how="left", suffixes=("", "_short"))
    return pd.DataFrame({"selection": both["selection"], "draw": both["draw"], "coverage": both["coverage"],
                         "steps_short": both["steps_short"], "acc_short": both[f"{ACC}_short"],
                         "steps_long": both["steps"], "acc_long": both[ACC], "best_long": both["best_type0"],
                         "train_long": both["final_train"]})


def longer_training_note(table: pd.DataFrame) -> str:
    """Whether more steps lift a contrast's training sets off the accuracy floor (FLOOR_ACCURACY), in prose."""
    if not len(table):
        return f"The longer runs are not in the cache yet: {train_command('k3_long')}"
    sets = "; ".join(
        f"the {r.selection} arm's set ({r.coverage:.1%} 3-covered): {r.acc_short:.1%} at {r.steps_short:,.0f} steps, "
        f"{r.acc_long:.1%} at {r.steps_long:,.0f} (best {r.best_long:.1%})" for r in table.itertuples())
    none = {1: "The set does not leave", 2: "Neither set leaves"}.get(len(table), "No set leaves")
    if leaves_floor(table):
        return (f"Trained longer: {sets}. At least one set leaves the floor with more steps: the contrast trained at "
                "that length could show an effect of coverage.")
    if table["train_long"].min() < 0.99:
        return (f"Trained longer: {sets}. {none} the floor, but not every one has fitted its training "
                "set yet: longer training still might.")
    return (f"Trained longer: {sets}. {none} the floor: each fits its training set and still does not "
            "generalise, whatever its 3-coverage. At this size more training does not make the contrast able to show "
            "an effect of coverage; where selection moves exact coverage most, the models have not learned the task, "
            "and where they learn it, coverage no longer varies between sets: on this task exact coverage follows "
            "diversity.")
