# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 9. Diversity, exposure, coverage
#
# A companion study of compositional generalisation on real benchmarks (COGS, SCAN, ReCOGS,
# gSCAN, CFQ; "Diversity Drives, Coverage Follows") asks what a fixed budget of training should be
# spent on: many distinct examples (**diversity**), many passes over fewer examples
# (**exposure**), or examples chosen so that the test's combinations appear in training (**pair
# coverage**). Its answer on COGS: diversity drives generalisation; exposure only changes the odds
# that a run escapes a floor; pair coverage has no effect of its own once diversity and typicality
# are held fixed. It ends by asking for a measure of compositional coverage that is not a surface
# count of pairs, because on its benchmarks the pair counts measured different things.
#
# This book has such a measure: the **exact k-coverage** of SPEC §2, computed on tasks whose
# structure is known. This chapter runs the study's audit on `twohop` with it:
#
# 1. a **dose-response** of accuracy in the number of distinct examples at a fixed budget;
# 2. a **diversity x exposure factorial**, with effect sizes, a floor-or-escape mixture per run, and a
#    logistic regression of escape;
# 3. **coverage at fixed diversity**: among many random training sets of one size, train on those
#    with the lowest and the highest exact coverage (matched on typicality) and compare; then the
#    same with a surface measure of pair coverage;
# 4. the answer, with its numbers.
#
# Every run trains the book's default model (4 layers, width 128) on a subset of one pool of
# ID-eligible inputs and is scored on one fixed set of ID test items that no training set
# contains, so that only the training set changes between runs (`covlib.chapters.ch09_diversity_exposure_coverage.audit`).

# %% tags=["parameters"]
preset = "default"  # "smoke" (tests: a miniature audit trained live), "default" (reads data/diversity/), "paper"
recompute = False  # True: train every run of the plan that the table lacks (hours at default; see COMMANDS.txt)
jobs = 2  # one-thread worker processes when training
out_dir = ""  # where a live audit writes its table and runs; "" means build/diversity/<preset>
figures_dir = ""  # where figures are saved; "" means papers_figures/ (the book runner passes its own)

# %%
# ruff: noqa: E402, B018  (notebook style: imports after the parameters cell, charts as last expressions)
import time
from pathlib import Path

import pandas as pd
from IPython.display import Markdown, display

from covlib.base.paths import default_root, repository_path
from covlib.book.sweep import record_metrics
from covlib.chapters.ch09_diversity_exposure_coverage.audit import (
    BOOK_PLAN,
    EXPERIMENTS,
    SMOKE_PLAN,
    coverage_profile,
    draw_subset,
    ensure_candidates,
    pool_of,
    read_runs,
    run_audit,
    select_extremes,
    spread_by_threshold,
    surface_profile,
)
from covlib.chapters.ch09_diversity_exposure_coverage.figures import (
    candidates_chart,
    contrast_chart,
    dose_chart,
    factorial_chart,
    spread_chart,
)
from covlib.chapters.ch09_diversity_exposure_coverage.stats import (
    ACC,
    cell_bimodality,
    contrast,
    dose_response,
    escape_logit,
    escape_mixture,
    exposure_effect,
    factorial_anova,
)
from covlib.figures.style import enable_png_renderer, pending_chart, save_figure

enable_png_renderer()
started = time.perf_counter()
PRESETS = {
    # smoke: twohop N=10, a one-layer width-32 model, every run live in seconds
    "smoke": {"plan": SMOKE_PLAN, "table": "", "train": True},
    # default: the book's plan (twohop N=25); reads the shipped table and trains only when asked
    "default": {"plan": BOOK_PLAN, "table": "data/diversity/runs.csv", "train": False},
    # paper scale does not apply (the companion study's runs are T5 on COGS); the book's plan, retrained
    "paper": {"plan": BOOK_PLAN, "table": "", "train": True},
}
if preset not in PRESETS:
    raise ValueError(f"preset={preset!r}: choose one of {', '.join(PRESETS)}")
plan = PRESETS[preset]["plan"]
setup = plan.setup
work = Path(out_dir) if out_dir else default_root().parent / "diversity" / preset
table_path = repository_path(PRESETS[preset]["table"]) if PRESETS[preset]["table"] else work / "runs.csv"
if PRESETS[preset]["train"] or recompute:
    run_audit(plan, EXPERIMENTS, table_path, work, jobs=jobs, progress=True)
runs = read_runs(table_path)
candidates = ensure_candidates(plan, table_path)
minutes = runs["minutes"].sum()
print(f"{setup.task}, N={setup.N}, data seed {setup.data_seed}; model {setup.model}, batch {setup.batch_size}, "
      f"weight decay {setup.weight_decay}; {len(runs)} runs in {table_path} ({minutes:.0f} CPU-minutes of training)")

# %% [markdown]
# ## 9.1 What is held fixed, and how a budget is spent
#
# The pool holds every ID-eligible input of one `twohop` dataset except a fixed set of ID test
# items. A training set is a uniformly random subset of the pool (a *draw*); a run trains the
# model on it for a number of optimiser steps, each a batch of the training set in shuffled
# order. A run's **budget** is its number of forward passes, steps x batch; its **exposure** is
# the budget divided by the number of distinct examples: how often each is seen.
#
# Two measures of how well a training set covers the test items:
#
# * **exact k-coverage**: the share of the ID test items connected to a training input in the
#   substitution graph at evidence threshold $k$ (SPEC §2). It uses the task's structure: which
#   fragments behave identically in the training data;
# * the **surface measure**, the study's pair coverage carried over: for each hop, the share of test
#   items whose pair of hop inputs, $(x_1,x_2)$ for the first and $(b,x_3)$ for the second, occurs
#   in at least $m$ training items, averaged over the hops. With $m=1$ it is plain pair coverage.
#
# How both grow with the number of distinct examples (one draw per size, computed here):

# %%
pool = pool_of(setup)
sizes = sorted({*plan.dose_levels, *plan.diversity, plan.contrast_n})
profile_rows = []
for n in sizes:
    train_set = pool.pool[draw_subset(pool, n, 0)]
    cov = coverage_profile(pool, train_set, sorted({3, plan.contrast_k}))
    surf = surface_profile(pool, train_set, sorted({1, plan.surface_min}))
    profile_rows.append({"n_unique": n, "coverage k=3": cov[3], f"coverage k={plan.contrast_k}": cov[plan.contrast_k],
                         "pairs m=1": surf[1], f"pairs m={plan.surface_min}": surf[plan.surface_min]})
profile = pd.DataFrame(profile_rows)
print(f"pool: {pool.size:,} ID-eligible inputs; fixed ID test: {len(pool.test):,} items")
display(profile.round(3))

# %% [markdown]
# ## 9.2 Dose-response at a fixed budget
#
# Every run gets the same budget; the number of distinct examples varies, so exposure falls as
# diversity rises. The study fitted a logistic in $\log n_{unique}$; so does
# `st.dose_response` (four parameters: floor, top, midpoint, slope; least squares on every run;
# $R^2$ reported on the runs and on the level means).

# %%
dose = runs[runs["experiment"] == "dose"]
dose_budget = plan.dose_steps * setup.batch_size
dose_fit = dose_response(dose) if dose["n_unique"].nunique() >= 4 else None
if dose_fit:
    display(dose.groupby("n_unique").agg(runs=("seed", "size"), exposure=("exposure", "first"),
                                         accuracy=(ACC, "mean"), sd=(ACC, "std"),
                                         coverage_k3=("coverage", "mean")).round(3))
    print(f"logistic in log n: floor {dose_fit['floor']:.3f}, top {dose_fit['top']:.3f}, midpoint "
          f"{dose_fit['midpoint_n']:,.0f} examples; R^2 {dose_fit['r2_means']:.3f} on the level means, "
          f"{dose_fit['r2_runs']:.3f} on the runs; Spearman rho of the means {dose_fit['spearman_means']:.2f}")
else:
    print(f"the dose-response needs four levels in {table_path}; it holds {dose['n_unique'].nunique()}. Fill it with: "
          "covlib diversity run --experiments dose --table data/diversity/runs.csv")
dose_r2 = dose_fit["r2_means"] if dose_fit else float("nan")

# %%
FILL = "covlib diversity run --experiments {} --table data/diversity/runs.csv"  # the command that fills a figure
PENDING_LEAD = "not run yet; fill the table with"  # the pending figures name the table, not the cache
dose_figure = (dose_chart(dose, dose_fit, dose_budget) if len(dose)
              else pending_chart("Dose-response", FILL.format("dose"), PENDING_LEAD))
save_figure(dose_figure, "09_dose_response", figures_dir or None)
dose_figure

# %% [markdown]
# ## 9.3 Diversity against exposure
#
# At one fixed budget, diversity and exposure are one axis (exposure = budget / diversity). To
# separate them the study crossed them, and so does this grid: each cell's budget is its diversity
# times its exposure, and runs with the same seed share their training set across exposures (a
# paired design). Three analyses, each with a maintained library:
#
# * a two-way ANOVA of accuracy (statsmodels, type II) and each factor's partial $\eta^2$;
# * a Gaussian mixture of one against two components over every run's accuracy, chosen by BIC
#   (scikit-learn): is there a floor mode and an escaped mode, and which runs escaped?
# * a logistic regression of escape on $\log n_{unique}$ and $\log$ exposure (statsmodels).

# %%
fact = runs[runs["experiment"] == "factorial"]
cells_expected = len(plan.diversity) * len(plan.exposure)
seeds_per_cell = int(fact.groupby(["n_unique", "exposure"]).size().min()) if len(fact) else 0
anova = mix = logit = bimodal = exposure_role = None
if fact["n_unique"].nunique() >= 2 and fact["exposure"].nunique() >= 2 and len(fact) > cells_expected:
    anova = factorial_anova(fact)
    display(anova.round(4))
    mix = escape_mixture(fact[ACC].to_numpy())
    bimodal = cell_bimodality(fact)
    display(bimodal.round(3))
    logit = escape_logit(fact, mix["escaped"])
    print(f"mixture over all {len(fact)} runs: BIC one component {mix['bic_1']:.1f}, two {mix['bic_2']:.1f} -> "
          f"{'two modes' if mix['bimodal'] else 'one mode'} (means {', '.join(f'{m:.2f}' for m in mix['means'])}); "
          f"{int(mix['escaped'].sum())} runs escaped the floor")
    print("logistic regression of escape: " + (logit.get("note") or
          f"log n {logit['coef_log_n']:+.2f}, log exposure {logit['coef_log_exposure']:+.2f}"
          + (f" (L2-penalised: escape is separated perfectly by {logit['separated_by'] or 'the two factors'}, "
             "so these are not effect sizes)" if logit["penalised"] else "")))
    exposure_role = exposure_effect(fact, mix["escaped"])
    display(exposure_role.round(3))
else:
    print(f"the factorial holds {len(fact)} of {cells_expected * len(plan.factorial_seeds)} runs; fill it with: "
          "covlib diversity run --experiments factorial --table data/diversity/runs.csv")
eta2_diversity = float(anova.loc["diversity", "partial_eta2"]) if anova is not None else float("nan")
eta2_exposure = float(anova.loc["exposure", "partial_eta2"]) if anova is not None else float("nan")

# %%
fact_chart = (factorial_chart(fact, mix["escaped"] if mix else None) if len(fact)
              else pending_chart("Diversity x exposure", FILL.format("factorial"), PENDING_LEAD))
save_figure(fact_chart, "09_factorial", figures_dir or None)
fact_chart

# %% [markdown]
# ## 9.4 Coverage at fixed diversity
#
# The study's decisive experiment: hold the number of distinct examples fixed, draw many random
# training sets, and train on those at the extremes of coverage, matched on typicality so that the
# arms differ in coverage and not in how skewed they are. Here the candidates are random sets of
# `contrast_n` examples; typicality is the entropy of their answers and of their bridges, and a
# candidate is *typical* when both lie in the central half of their distributions.
#
# First, which threshold can tell sets of one size apart? A measure that is the same for every
# candidate cannot be contrasted. The spread of each measure across the candidates, by threshold:

# %%
spread = spread_by_threshold(candidates)
chosen = {"coverage": plan.contrast_k, "surface": plan.surface_min}
most_variable = spread.loc[spread.groupby("measure")["sd"].idxmax()].set_index("measure")["threshold"].to_dict()
cov3 = spread[(spread.measure == "coverage") & (spread.threshold == 3)].iloc[0]
surf1 = spread[(spread.measure == "surface") & (spread.threshold == 1)].iloc[0]
print(f"{len(candidates)} candidate sets of {plan.contrast_n:,}: exact 3-coverage {cov3['mean']:.4f} +- {cov3['sd']:.4f}, "
      f"plain pair coverage {surf1['mean']:.4f} +- {surf1['sd']:.4f}; the most variable thresholds: coverage k = "
      f"{most_variable['coverage']}, surface m = {most_variable['surface']}; the plan selects on k = {plan.contrast_k} "
      f"and m = {plan.surface_min}")
spread_fig = spread_chart(spread, chosen)
save_figure(spread_fig, "09_measure_spread", figures_dir or None)
spread_fig

# %% [markdown]
# So the contrasts select on exact coverage at the evidence threshold where it still varies, and
# on pairs seen at least $m$ times where that varies (both thresholds printed above). The
# selected sets, and how coverage and the surface measure relate across all candidates:

# %%
arms = {m: select_extremes(candidates, plan.selection_column(m), plan.per_arm) for m in ("coverage", "surface")}
cov_col, surf_col = plan.selection_column("coverage"), plan.selection_column("surface")
rho_measures = float(candidates[[cov_col, surf_col]].corr(method="spearman").iloc[0, 1])
balance_rows = []
for measure, sides in arms.items():
    for side, draws in sides.items():
        chosen_sets = candidates[candidates["draw"].isin(draws)]
        balance_rows.append({"selected on": measure, "arm": side, "sets": len(draws), cov_col: chosen_sets[cov_col].mean(),
                             surf_col: chosen_sets[surf_col].mean(), "entropy_t": chosen_sets["entropy_t"].mean(),
                             "entropy_b": chosen_sets["entropy_b"].mean()})
balance = pd.DataFrame(balance_rows)
display(balance.round(4))
print(f"Spearman correlation of the two measures across candidates: {rho_measures:.2f}")
cand_fig = candidates_chart(candidates, cov_col, surf_col, arms)
save_figure(cand_fig, "09_candidates", figures_dir or None)
cand_fig

# %% [markdown]
# Each arm trains one model per selected set, with model seeds paired across arms, for the same
# budget. The contrast is the mean accuracy of the high arm minus the low arm: a two-sided
# permutation test (scipy) of the difference, and an equivalence test (two one-sided t-tests,
# statsmodels) against a margin of 3 percentage points, as in the study. The design's smallest
# detectable difference (80% power at 5%) is printed beside each, so that "no difference" is read
# against what the design could have seen.

# %%
contrasts = {}
for measure in ("coverage", "surface"):
    arm_runs = runs[runs["experiment"] == measure]
    high, low = (arm_runs.loc[arm_runs["selection"] == s, ACC].to_numpy() for s in ("high", "low"))
    if len(high) >= 2 and len(low) >= 2:
        contrasts[measure] = contrast(high, low)
        c = contrasts[measure]
        print(f"{measure}: high {high.mean():.3f} ({len(high)} runs) vs low {low.mean():.3f} ({len(low)}): difference "
              f"{100 * c['diff']:+.1f} pp, permutation p = {c['p']:.3f}, equivalence within +-3 pp p = "
              f"{c['p_equivalence']:.3f}; detectable difference {100 * c['detectable']:.1f} pp; 90% interval "
              f"{100 * c['ci90_low']:+.1f} to {100 * c['ci90_high']:+.1f} pp")
    else:
        contrasts[measure] = None
        print(f"{measure}: {len(high) + len(low)} of {2 * plan.per_arm} runs in the table; fill it with: covlib diversity run "
              f"--experiments {measure} --table data/diversity/runs.csv")
contrast_runs = runs[runs["experiment"].isin(["coverage", "surface"])]
contrast_fig = (contrast_chart(contrast_runs) if len(contrast_runs)
                else pending_chart("Coverage at fixed diversity", FILL.format("coverage surface"), PENDING_LEAD))
save_figure(contrast_fig, "09_contrasts", figures_dir or None)
contrast_fig


# %%
def pp(c: dict | None, key: str) -> float:
    return float("nan") if c is None else (100 * c[key] if key == "diff" else c[key])


coverage_contrast_pp, coverage_contrast_p = pp(contrasts["coverage"], "diff"), pp(contrasts["coverage"], "p")
surface_contrast_pp, surface_contrast_p = pp(contrasts["surface"], "diff"), pp(contrasts["surface"], "p")
coverage_contrast_bound_pp, surface_contrast_bound_pp = (float("nan") if c is None else 100 * c["bound"]
                                                         for c in (contrasts["coverage"], contrasts["surface"]))

# %% [markdown]
# ## 9.5 The answer
#
# Beside the companion study's COGS numbers (its Experiments 3 to 5; T5-small, exact match on the
# easy split):

# %%
logit_n = logit["coef_log_n"] if logit else float("nan")
logit_e = logit["coef_log_exposure"] if logit else float("nan")
side_by_side = pd.DataFrame([
    {"quantity": "dose-response R^2 (logistic in log n)", "companion study (COGS)": 0.996, "this book (twohop)": dose_r2},
    {"quantity": "partial eta^2, diversity", "companion study (COGS)": 0.882, "this book (twohop)": eta2_diversity},
    {"quantity": "partial eta^2, exposure", "companion study (COGS)": 0.196, "this book (twohop)": eta2_exposure},
    {"quantity": "escape logit: log n", "companion study (COGS)": 3.73, "this book (twohop)": logit_n},
    {"quantity": "escape logit: log exposure", "companion study (COGS)": 1.06, "this book (twohop)": logit_e},
    {"quantity": "coverage contrast at fixed n (pp)", "companion study (COGS)": 0.37, "this book (twohop)": coverage_contrast_pp},
    {"quantity": "coverage contrast p", "companion study (COGS)": 0.97, "this book (twohop)": coverage_contrast_p},
    {"quantity": "surface contrast at fixed n (pp)", "companion study (COGS)": float("nan"),
     "this book (twohop)": surface_contrast_pp},
    {"quantity": "surface contrast p", "companion study (COGS)": float("nan"), "this book (twohop)": surface_contrast_p},
    {"quantity": "seeds per factorial cell", "companion study (COGS)": 5, "this book (twohop)": seeds_per_cell},
])
display(side_by_side.round(3))


# %%
def verdict(c: dict | None, name: str) -> str:
    """One sentence on a contrast, from its numbers."""
    if c is None:
        return f"The {name} contrast has not been run yet (see COMMANDS.txt)."
    if c["p"] < 0.05:
        return (f"Selecting on {name} changes accuracy at fixed diversity by {100 * c['diff']:+.1f} pp "
                f"(permutation p = {c['p']:.3f}).")
    if c["p_equivalence"] < 0.05:
        return (f"Selecting on {name} does not change accuracy: {100 * c['diff']:+.1f} pp, equivalent to zero within "
                f"+-3 pp (p = {c['p_equivalence']:.3f}).")
    return (f"Selecting on {name} moves accuracy by {100 * c['diff']:+.1f} pp (p = {c['p']:.3f}); this design cannot "
            f"tell that from zero nor bound it within +-3 pp (it detects {100 * c['detectable']:.1f} pp); its 90% "
            f"interval, {100 * c['ci90_low']:+.1f} to {100 * c['ci90_high']:+.1f} pp, rules out effects larger than "
            f"{100 * c['bound']:.0f} pp either way.")


lines = []
if dose_fit:
    lines.append(f"* **Diversity drives, here too.** At a fixed budget of {dose_budget:,} forward passes, ID accuracy "
                 f"rises from {dose_fit['floor']:.2f} to {dose_fit['top']:.2f} along a logistic in log n_unique "
                 f"(R^2 = {dose_r2:.3f} on the level means), with its midpoint at {dose_fit['midpoint_n']:,.0f} "
                 "distinct examples.")
if anova is not None:
    factorial_line = (f"* **Diversity and exposure, crossed.** Partial eta^2 is {eta2_diversity:.2f} for diversity, "
                      f"{eta2_exposure:.2f} for exposure and {anova.loc['diversity x exposure', 'partial_eta2']:.2f} "
                      f"for their interaction ({seeds_per_cell} seeds per cell; the study: 0.882 and 0.196). The "
                      f"mixture finds {'two modes' if mix['bimodal'] else 'one mode'} and "
                      f"{int(mix['escaped'].sum())} of {len(fact)} runs escaped the floor.")
    if logit.get("separated_by") == "n_unique":
        floor_n = exposure_role.loc[exposure_role["escaped_share"] == 0, "n_unique"]
        risen = exposure_role[exposure_role["escaped_share"] == 1]
        factorial_line += (f" Whether a run escapes is decided by diversity alone in this grid: "
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
        factorial_line += (f" Escape against log n and log exposure: coefficients {logit['coef_log_n']:+.2f} and "
                           f"{logit['coef_log_exposure']:+.2f} (the study: +3.73 and +1.06).")
    lines.append(factorial_line)
lines.append(f"* **Coverage at fixed diversity.** {verdict(contrasts['coverage'], f'exact {plan.contrast_k}-coverage')}")
lines.append(f"* **The surface measure.** {verdict(contrasts['surface'], f'pairs seen {plan.surface_min} times')}")
lines.append(f"* **Why 3-coverage cannot be the selector at this size.** Every candidate set of {plan.contrast_n:,} "
             f"3-covers {cov3['mean']:.1%} of the ID test (sd {cov3['sd']:.4f}), and every one shows "
             f"{surf1['mean']:.1%} of the test's pairs. Both measures are saturated long before the model "
             "generalises, so the contrasts select where they still vary.")
if dose_fit and contrasts["coverage"] is not None and contrasts["surface"] is not None:
    detected = [name for name, c in (("exact coverage", contrasts["coverage"]), ("the surface measure", contrasts["surface"]))
                if c["p"] < 0.05]
    lines.append("* **The answer.** On two-hop, the number of distinct examples predicts ID generalisation "
                 f"(R^2 = {dose_r2:.3f}); at a fixed number of them, "
                 + (f"{' and '.join(detected)} still moves accuracy." if detected else
                    f"neither exact coverage nor the surface measure moves accuracy detectably: effects beyond "
                    f"{100 * contrasts['coverage']['bound']:.0f} pp (coverage) and "
                    f"{100 * contrasts['surface']['bound']:.0f} pp (surface) are ruled out, smaller ones are not.")
                 + f" Coverage at the paper's threshold k = 3 is {cov3['mean']:.1%} for every set of "
                 f"{plan.contrast_n:,} while the models trained on them reach {contrast_runs[ACC].mean():.2f} ID accuracy on "
                 "average: it is the condition chapter 3 "
                 "shows items need, met long before the model has learned them, so beyond it what decides is how much "
                 "data and training the model gets, as the study found with surface coverage.")
display(Markdown("\n".join(lines)))

# %%
record_metrics({
    "dose_response_r2": dose_r2, "eta2_diversity": eta2_diversity, "eta2_exposure": eta2_exposure,
    "coverage_contrast_pp": coverage_contrast_pp, "coverage_contrast_p": coverage_contrast_p,
    "surface_contrast_pp": surface_contrast_pp, "surface_contrast_p": surface_contrast_p,
    "coverage_contrast_bound_pp": coverage_contrast_bound_pp, "surface_contrast_bound_pp": surface_contrast_bound_pp,
    "seeds_per_cell": seeds_per_cell, "runs": len(runs), "training_minutes": float(minutes),
    "coverage_k3_mean_at_contrast_n": float(cov3["mean"]), "measures_spearman": rho_measures,
})
print(f"chapter ran in {time.perf_counter() - started:.1f} s")

# %% [markdown]
# ## Exercises
#
# 1. **Where coverage saturates.** Using the table of 9.1, find the smallest number of distinct
#    examples at which exact 3-coverage of the ID test passes 99%. Compare it with the midpoint of
#    the dose-response: is 3-coverage a sufficient condition for this model, or only a necessary one?
# 2. **A selector of your own.** Pick another column of `candidates` (say `cov_10`) and find the two
#    draws with the lowest and the highest value among the typical candidates.

# %%
my_saturation_n = None  # exercise 1: the smallest n_unique in the 9.1 table with coverage k=3 >= 0.99
my_extremes = None  # exercise 2: (lowest draw, highest draw) for cov_10 among typical candidates, with per_arm=1

# %% tags=["solution"]
saturated = profile.loc[profile["coverage k=3"] >= 0.99, "n_unique"]
truth_sat = int(saturated.min()) if len(saturated) else None
if my_saturation_n is None:
    print("Exercise 1: read the first row of the 9.1 table whose 'coverage k=3' is at least 0.99.")
else:
    print("Exercise 1:", "correct" if my_saturation_n == truth_sat else f"not quite: {truth_sat}")
if "cov_10" in candidates:
    pick = select_extremes(candidates, "cov_10", 1)
    truth_ext = (pick["low"][0], pick["high"][0])
    if my_extremes is None:
        print("Exercise 2: dv.select_extremes(candidates, 'cov_10', 1) gives the answer.")
    else:
        print("Exercise 2:", "correct" if tuple(my_extremes) == truth_ext else f"not quite: {truth_ext}")
