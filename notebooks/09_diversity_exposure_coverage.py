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
# This book has such a measure: the **exact k-coverage** of chapter 2 (the paper's definition), computed on tasks whose
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
from typing import Optional  # papermill's parameter reader reads Optional[int], not int | None

preset = "default"  # "smoke" (tests: a miniature audit trained live), "default" (reads data/diversity/), "paper"
recompute = False  # True: train every run of the plan that the table lacks (hours at default; see COMMANDS.txt)
jobs = 2  # one-thread worker processes when training
out_dir = ""  # where a live audit writes its table and runs; "" means build/diversity/<preset>
figures_dir = ""  # where figures go; "" means figures/<preset>/ under out_dir or build/ (make book: papers_figures/)
# your answers to the exercises (the end of the chapter); a check there says whether each is right
my_coverage: Optional[dict[int, float]] = None  # exercise 1: {n_unique: exact exercise_k-coverage of the ID test}
my_extremes: Optional[tuple[int, int]] = None  # exercise 2: (lowest draw, highest draw) of exercise_column

# %%
# ruff: noqa: E402, B018  (notebook style: imports after the parameters cell, charts as last expressions)
import time

import pandas as pd
from IPython.display import Markdown, display

import covlib.chapters.ch09_diversity_exposure_coverage as ch09
from covlib.base.paths import readable_path, repository_path
from covlib.book.setup import setup_chapter
from covlib.book.sweep import record_metrics

chapter = setup_chapter("09", preset, ch09.audit.PRESETS, out_dir=out_dir, figures_dir=figures_dir)
started = time.perf_counter()

# %% [markdown]
# The run table: read from the shipped cache at the default preset, trained here (live) otherwise.

# %%
plan = chapter["plan"]
setup = plan.setup
work = chapter.root if out_dir else chapter.root / "diversity" / preset
table_path = repository_path(chapter["table"]) if chapter["table"] else work / "runs.csv"
if chapter["train"] or recompute:
    ch09.audit.run_audit(plan, ch09.audit.EXPERIMENTS, table_path, work, jobs=jobs, progress=True)
runs = ch09.audit.read_runs(table_path)
candidates = ch09.audit.ensure_candidates(plan, table_path)
minutes = runs["minutes"].sum()
print(ch09.audit.describe_setup(setup, runs, table_path))

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
#   substitution graph at evidence threshold $k$ (chapter 2). It uses the task's structure: which
#   fragments behave identically in the training data;
# * the **surface measure**, the study's pair coverage carried over: for each hop, the share of test
#   items whose pair of hop inputs, $(x_1,x_2)$ for the first and $(b,x_3)$ for the second, occurs
#   in at least $m$ training items, averaged over the hops. With $m=1$ it is plain pair coverage.
#
# How both grow with the number of distinct examples (one draw per size, computed here):

# %%
pool = ch09.audit.pool_of(setup)
profile = ch09.audit.coverage_growth(pool, plan)
print(f"pool: {pool.size:,} ID-eligible inputs; fixed ID test: {len(pool.test):,} items")
display(ch09.figures.growth_table(profile))

# %% [markdown]
# ## 9.2 Dose-response at a fixed budget
#
# Every run gets the same budget; the number of distinct examples varies, so exposure falls as
# diversity rises. The study fitted a logistic in $\log n_{unique}$; so does
# `ch09.stats.dose_response` (four parameters: floor, top, midpoint, slope; least squares on every run;
# $R^2$ reported on the runs and on the level means). In the chart, scroll to zoom and drag to pan;
# a point's tooltip names its run.

# %%
dose = runs[runs["experiment"] == "dose"]
dose_budget = plan.dose_steps * setup.batch_size
dose_fit = ch09.stats.dose_response(dose) if dose["n_unique"].nunique() >= 4 else None
if dose_fit:
    display(ch09.figures.dose_table(ch09.stats.dose_levels(dose)))
    print(ch09.stats.describe_dose_fit(dose_fit))
else:
    print(f"the dose-response needs four levels in {readable_path(table_path)}; it holds {dose['n_unique'].nunique()}. Fill it with: "
          "covlib diversity run --experiments dose --table data/diversity/runs.csv")
dose_r2 = dose_fit["r2_means"] if dose_fit else float("nan")

# %%
chapter.save(ch09.figures.dose_chart(dose, dose_fit, dose_budget) if len(dose)
             else ch09.figures.pending_figure("Dose-response", "dose"), "09_dose_response")

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
#
# The dropdown above the chart of every run picks out the runs of one exposure.

# %%
fact = runs[runs["experiment"] == "factorial"]
cells_expected = len(plan.diversity) * len(plan.exposure)
seeds_per_cell = ch09.stats.seeds_per_cell(fact)
factorial = ch09.stats.factorial_analysis(fact, cells_expected)
if factorial:
    display(ch09.figures.anova_table(factorial["anova"]))
    display(ch09.figures.cells_table(factorial["cells"]))
    print(ch09.stats.describe_mixture(factorial["mixture"], len(fact)))
    print(ch09.stats.describe_logit(factorial["logit"]))
    display(ch09.figures.exposure_table(factorial["exposure"]))
else:
    print(f"the factorial holds {len(fact)} of {cells_expected * len(plan.factorial_seeds)} runs; fill it with: "
          "covlib diversity run --experiments factorial --table data/diversity/runs.csv")
anova = factorial["anova"] if factorial else None
eta2_diversity = ch09.stats.partial_eta2(anova, "diversity")
eta2_exposure = ch09.stats.partial_eta2(anova, "exposure")

# %%
chapter.save(ch09.figures.factorial_chart(fact, factorial["mixture"]["escaped"] if factorial else None) if len(fact)
             else ch09.figures.pending_figure("Diversity x exposure", "factorial"), "09_factorial")

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
spread = ch09.audit.spread_by_threshold(candidates)
cov3, surf1 = ch09.audit.spread_at(spread, "coverage", 3), ch09.audit.spread_at(spread, "surface", 1)
print(ch09.audit.describe_spread(spread, plan, len(candidates)))
chapter.save(ch09.figures.spread_chart(spread, {"coverage": plan.contrast_k, "surface": plan.surface_min}),
             "09_measure_spread")

# %% [markdown]
# So the contrasts select on exact coverage at the evidence threshold where it still varies, and
# on pairs seen at least $m$ times where that varies (both thresholds printed above). The
# selected sets, and how coverage and the surface measure relate across all candidates:

# %%
arms = ch09.audit.contrast_arms(candidates, plan)
cov_col, surf_col = plan.selection_column("coverage"), plan.selection_column("surface")
rho_measures = ch09.audit.measures_correlation(candidates, cov_col, surf_col)
display(ch09.figures.balance_table(ch09.audit.arm_balance(candidates, arms, cov_col, surf_col), cov_col, surf_col))
print(f"Spearman correlation of the two measures across candidates: {rho_measures:.2f}")
chapter.save(ch09.figures.candidates_chart(candidates, cov_col, surf_col, arms), "09_candidates")

# %% [markdown]
# Each arm trains one model per selected set, with model seeds paired across arms, for the same
# budget. The contrast is the mean accuracy of the high arm minus the low arm: a two-sided
# permutation test (scipy) of the difference, and an equivalence test (two one-sided Welch t-tests,
# statsmodels) against a margin of 3 percentage points, as in the study. Welch's test, because the two
# arms need not vary alike; it is the same t as the 90% interval printed with it, so "equivalent within
# 3 points" holds exactly when that interval lies inside ±3 points. The design's smallest
# detectable difference (80% power at 5%) is printed beside each, so that "no difference" is read
# against what the design could have seen.

# %%
# each contrast uses its most extreme sets whose runs are all in the table (the same number in both arms and
# contrasts), so that a table the queue is still filling gives a balanced contrast, not the first arm to finish
runs_per_arm = min(ch09.audit.complete_per_arm(runs, measure, arms[measure]) for measure in ("coverage", "surface"))
contrast_runs = pd.concat([ch09.audit.contrast_runs(runs, measure, arms[measure], runs_per_arm)
                           for measure in ("coverage", "surface")])
print(f"{runs_per_arm} of the plan's {plan.per_arm} training sets per arm are in the table")
contrasts = {}
for measure in ("coverage", "surface"):
    high, low = ch09.stats.arm_accuracies(contrast_runs, measure)
    contrasts[measure] = ch09.stats.contrast(high, low) if len(high) >= 2 and len(low) >= 2 else None
    print(ch09.stats.describe_contrast(measure, high, low, contrasts[measure], plan.per_arm))
contrast_numbers = ch09.stats.contrast_numbers(contrasts)
chapter.save(ch09.figures.contrast_chart(contrast_runs) if len(contrast_runs)
             else ch09.figures.pending_figure("Coverage at fixed diversity", "coverage surface"), "09_contrasts")

# %% [markdown]
# ## 9.5 Did the contrast move coverage?
#
# A contrast tests a variable only as far as its arms differ in it. The arms above were chosen at a
# threshold where coverage still varies between sets of 4,500 examples, but the reader's question
# is about exact coverage at the paper's threshold, k = 3. Per contrast: how far its arms differ in
# exact 3-coverage of the ID test, and the accuracy difference per point of that gap, with the 95%
# interval of the difference divided by the gap (no estimate is given when the gap is under half a
# point: a design that does not move a variable cannot say what that variable does).

# %%
effects = ch09.stats.effect_numbers(contrast_runs)
print(ch09.stats.describe_effect("coverage", effects))
print(ch09.stats.describe_effect("surface", effects, "surface_"))

# %% [markdown]
# How far can selection move exact 3-coverage at a fixed size at all? For three values of N and
# sizes from sparse to saturated, `coverage_range` scores random training sets (the arms the study's
# selection would take: the lowest and highest among sets of typical make-up) and a directed
# selector that draws examples with weights $e^{2z}$ or $e^{-2z}$, $z$ the standardised number of
# test fragments an example shares (its make-up shift, in sd of the two entropies, is printed
# beside it). Coverage only, no training; the default preset reads the table from the cache.

# %%
ranges, range_plan = ch09.coverage_range.range_for(preset, repository_path(""), recompute=recompute)
range_numbers = ch09.coverage_range.range_summary(ranges)
display(ch09.figures.range_table(ranges))
print(ch09.coverage_range.range_finding(range_numbers, range_plan["Ns"]))
chapter.save(ch09.figures.range_chart(ranges), "09_coverage_range")

# %% [markdown]
# Where random sets vary most (N = 20, about half the pool), the extremes of many random training
# sets of typical make-up come near the bar. That contrast (`audit.K3_PLAN`: six sets per arm, chosen
# among a thousand, trained like the others) reads the effect of exact 3-coverage itself per point moved:

# %%
k3_runs = ch09.audit.read_runs(repository_path(ch09.audit.K3_TABLE))
k3_effects = ch09.stats.effect_numbers(k3_runs)
k3_text = (ch09.stats.describe_effect(f"{ch09.audit.K3_PLAN.candidates:,}-set 3-coverage", k3_effects)
           + ch09.stats.contrast_context(k3_runs, k3_effects, ch09.coverage_range.MIN_CONTRAST_GAP))
print(k3_text + ("" if len(k3_runs) else f" Train it with: {ch09.audit.train_command('k3')}"))

# %% [markdown]
# Near the floor, accuracy cannot show an effect of coverage either way. Would the arms' models
# leave it if they trained longer? The contrast's first pair (the same two training sets and model
# seed) trained 6.7 times as long, evaluated 16 times (`audit.K3_LONG_PLAN`):

# %%
k3_longer = ch09.stats.longer_training(k3_runs, ch09.audit.read_runs(repository_path(ch09.audit.K3_LONG_TABLE)))
display(ch09.figures.longer_training_table(k3_longer))
k3_text += " " + ch09.stats.longer_training_note(k3_longer)
print(ch09.stats.longer_training_note(k3_longer))

# %% [markdown]
# The thousand candidates left the contrast short of the 15 points it aimed at. Chosen among ten
# times as many random sets (`audit.K3_WIDE_PLAN`: the same size, typicality band, six sets per arm
# and 1,200 steps), the extremes lie further apart:

# %%
k3_wide_runs = ch09.audit.read_runs(repository_path(ch09.audit.K3_WIDE_TABLE))
k3_wide_effects = ch09.stats.effect_numbers(k3_wide_runs)
k3_wide_text = (ch09.stats.describe_effect(f"{ch09.audit.K3_WIDE_PLAN.candidates:,}-set 3-coverage", k3_wide_effects)
                + ch09.stats.contrast_context(k3_wide_runs, k3_wide_effects, ch09.coverage_range.MIN_CONTRAST_GAP))
k3_text += " " + k3_wide_text
print(k3_wide_text + ("" if len(k3_wide_runs) else f" Train it with: {ch09.audit.train_command('k3_wide')}"))

# %% [markdown]
# ## 9.6 The answer
#
# Beside the companion study's COGS numbers (its Experiments 3 to 5; T5-small, exact match on the
# easy split):

# %%
side_by_side = ch09.stats.side_by_side(dose_r2, eta2_diversity, eta2_exposure, factorial["logit"] if factorial else None,
                                       contrast_numbers, seeds_per_cell)
display(ch09.figures.side_by_side_table(side_by_side))

# %%
display(Markdown(ch09.stats.answer(plan, dose_fit, dose_budget, factorial, fact, contrasts, cov3, surf1, contrast_runs,
                                   effects, ch09.coverage_range.range_finding(range_numbers, range_plan["Ns"]),
                                   range_allows=bool(range_numbers["qualifying"]), k3_text=k3_text)))

# %%
record_metrics({
    "dose_response_r2": dose_r2, "eta2_diversity": eta2_diversity, "eta2_exposure": eta2_exposure,
    **contrast_numbers, "runs_per_arm": runs_per_arm, "seeds_per_cell": seeds_per_cell, "runs": len(runs), "training_minutes": float(minutes),
    "coverage_k3_mean_at_contrast_n": float(cov3["mean"]), "measures_spearman": rho_measures, **effects,
    "max_selection_gap_pts": range_numbers["max_quantile_gap"],
    "max_selection_gap_upper_pts": range_numbers["max_quantile_gap_upper"],
    "max_typical_arms_gap_pts": range_numbers["max_typical_gap"], "max_directed_gap_pts": range_numbers["max_directed_gap"],
    "directed_makeup_shift_sd": range_numbers["directed_shift"], "contrast_sizes_qualifying": range_numbers["qualifying"],
    **{f"k3_{key}": value for key, value in k3_effects.items() if not key.startswith("surface_")},
    **{f"k3_long_best_type0_{r.selection}": float(r.best_long) for r in k3_longer.itertuples()},
    "k3_long_steps": int(k3_longer["steps_long"].max()) if len(k3_longer) else 0,
    "k3_long_off_floor": ch09.stats.leaves_floor(k3_longer), "k3_candidates": ch09.audit.K3_PLAN.candidates,
    **{f"k3_{key}": value for key, value in ch09.stats.arm_summary(k3_runs).items()},
    **{f"k3_wide_{key}": value for key, value in k3_wide_effects.items() if not key.startswith("surface_")},
    **{f"k3_wide_{key}": value for key, value in ch09.stats.arm_summary(k3_wide_runs).items()},
    "k3_wide_candidates": ch09.audit.K3_WIDE_PLAN.candidates,
})
print(f"chapter ran in {time.perf_counter() - started:.1f} s")

# %% [markdown]
# ## Exercises
#
# 1. **Coverage at a threshold of your choice.** The table of 9.1 shows exact coverage at k = 3 and at
#    the contrast's k. Compute the column it lacks: the exact `exercise_k`-coverage of the fixed ID test
#    by the training set of every size in that table (each size's draw 0). `ch09.audit.draw_subset` gives a
#    size's training set as indices into `pool.pool`; `ch09.audit.coverage_profile` gives a training set's
#    coverage at the thresholds you pass. Set `my_coverage = {n_unique: share, ...}` in the parameters
#    cell. Then: at which size (if any) does it pass 99%, and how does that compare with the midpoint of
#    the dose-response (9.2)? Is exact coverage at this threshold a sufficient condition for this model,
#    or only a necessary one?
# 2. **A selector of your own.** The contrasts of 9.4 select on one column of `candidates`. Pick
#    another (`exercise_column`: any `cov_k`, k = 3 to 12, or `surf_m`, m = 1 to 12; the cell starts
#    you one pair count above the plan's surface threshold) and find the sets a contrast of one set per
#    arm would train on: the lowest and the highest value among the typical candidates.
#    `ch09.audit.select_extremes` is how the contrasts choose their arms: change the column it selects on
#    and the number of sets per arm. Set `my_extremes = (lowest draw, highest draw)` in the parameters
#    cell. Are those among the draws of the plan's own arms (the variable `arms` of 9.4 holds them), and
#    why, or why not?

# %%
exercise_k = 5  # exercise 1: an evidence threshold the 9.1 table does not show
exercise_column = f"surf_{plan.surface_min + 1}"  # exercise 2: a column of candidates

# %% tags=["check"]
print("Exercise 1:", ch09.audit.check_coverage(my_coverage, ch09.audit.coverage_column(pool, plan, exercise_k)))
print("Exercise 2:", ch09.audit.check_extremes(my_extremes, ch09.audit.extreme_draws(candidates, exercise_column)))

# %% tags=["solution"]
coverage_k = {}
for n in ch09.audit.growth_sizes(plan):  # each size's draw 0, as indices into the pool
    train = pool.pool[ch09.audit.draw_subset(pool, n, 0)]
    coverage_k[n] = ch09.audit.coverage_profile(pool, train, [exercise_k])[exercise_k]
print(f"Exercise 1: exact {exercise_k}-coverage of the ID test by size:",
      ", ".join(f"{n:,}: {c:.3f}" for n, c in coverage_k.items()))
own_arms = ch09.audit.select_extremes(candidates, exercise_column, 1)
print(f"Exercise 2: lowest {exercise_column}: draw {own_arms['low'][0]}, highest: draw {own_arms['high'][0]}")
