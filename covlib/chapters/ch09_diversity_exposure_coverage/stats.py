"""The audit's statistics: dose-response, ANOVA, mixtures, contrasts."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy import optimize, stats

from covlib.base.errors import CovlibError

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
    equivalence test (two one-sided t-tests, statsmodels) against +-``margin``, the smallest difference the
    design would detect (80% power, two-sided 5%, from the pooled spread), and the 90% interval of the
    difference with ``bound``, the narrowest margin within which the data show equivalence."""
    from statsmodels.stats.weightstats import ttost_ind

    high, low = np.asarray(high, float), np.asarray(low, float)
    if len(high) < 2 or len(low) < 2:
        raise CovlibError("a contrast needs two runs per arm or more")
    diff = float(high.mean() - low.mean())
    perm = stats.permutation_test((high, low), lambda a, b: a.mean() - b.mean(), permutation_type="independent",
                                  n_resamples=resamples, alternative="two-sided", random_state=seed)
    p_equiv = float(ttost_ind(high, low, -margin, margin)[0])
    pooled = float(np.sqrt(((len(high) - 1) * high.var(ddof=1) + (len(low) - 1) * low.var(ddof=1))
                           / (len(high) + len(low) - 2)))
    mde = float((stats.norm.ppf(0.975) + stats.norm.ppf(0.8)) * pooled * np.sqrt(1 / len(high) + 1 / len(low)))
    # the 90% interval of the difference (Welch): the margin the equivalence test would accept is its larger end
    interval = stats.ttest_ind(high, low, equal_var=False).confidence_interval(0.90)
    return {"diff": diff, "p": float(perm.pvalue), "p_equivalence": p_equiv, "margin": margin,
            "detectable": mde, "ci90_low": float(interval.low), "ci90_high": float(interval.high),
            "bound": float(max(abs(interval.low), abs(interval.high))), "n_high": len(high), "n_low": len(low)}
