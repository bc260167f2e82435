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
# # 4. How much data? The scaling law of required data
#
# Chapter 3 showed a model generalising to the inputs that its training data covers. If
# coverage is what the model needs, then the amount of data it needs is set by how fast
# coverage grows with data, and that can be worked out from the task alone. The paper's
# headline result is exactly such a law: the training data needed for perfect in-domain
# generalisation grows as a power of the token-set size, $n_\text{req} \propto N^c$, with
# $c \approx 2.26$ for two-hop composition, steeper for longer chains, and, strikingly,
# **the same exponent for models twenty times larger**.
#
# This chapter measures that law by training, on a laptop CPU:
#
# * **the required data** $n_\text{req}$ of one (task, $N$, model, seed): the smallest number
#   of training examples at which the ID test accuracy (`type_0`) reaches 0.99, found by a
#   search over training-set sizes in which every point is a full training run;
# * **its exponent** $c$, fitted over $N$ with a bootstrap interval over seeds and $N$ values;
# * what **coverage predicts** for the same exponent, with no training at all, beside the
#   paper's theory $c = 2.5 - 0.5/k$;
# * whether **bigger models** need less data, and how **longer chains** scale.
#
# Every training run here is minutes of CPU, and the whole experiment is hours, so the chapter
# reads its results from a cache shipped with the book (`data/scaling/`), produced by the
# commands in `data/scaling/COMMANDS.txt`. The cache may be partly filled: the chapter says
# what is missing, and `covlib scaling search` resumes from it.

# %% tags=["parameters"]
preset = "default"  # "smoke" (tests: a miniature search, seconds), "default" (reads the cache), "paper"
recompute = False  # True: run the searches here (hours at the default preset; resumes from the table)
table = ""  # the probe table; "" means data/scaling/probes.csv (smoke: a fresh table under out_dir)
jobs = 2  # one-thread worker processes for recomputation
threshold = 0.99  # type_0 accuracy that counts as generalising (the paper's)
bootstrap_reps = 2000  # resamples for the exponent's interval
out_dir = ""  # where a recomputation keeps datasets and runs; "" means build/ of the repository
figures_dir = ""  # where figures are saved; "" means papers_figures/ (the book runner passes its own)

# %%
# ruff: noqa: E402, B018  (notebook style: imports after the parameters cell, charts as last expressions)
from pathlib import Path

import altair as alt
import numpy as np
import pandas as pd
from IPython.display import Markdown, display

from covlib.analyses.fits import bootstrap_exponent, power_fit
from covlib.base.paper import (
    EXPONENT_TWOHOP_DRAFT,
    EXPONENTS,
    EXPONENTS_BY_SIZE_TWOHOP,
    REQUIRED_DATA_TWOHOP_AUTHORS,
    theory_exponent,
)
from covlib.base.paths import repository_path
from covlib.book.sweep import record_metrics
from covlib.coverage.requirement import coverage_requirement, probe_coverage_by_k
from covlib.figures.charts import accuracy_curves_chart, coverage_by_k_chart
from covlib.figures.required_data import estimates_chart, fit_line_frame, required_data_chart, requirement_frame
from covlib.figures.style import enable_png_renderer, save_figure
from covlib.search.cells import ProbeRules
from covlib.search.experiments import BOOK_EXPERIMENTS, BOOK_TABLE, experiment_cells, experiment_command
from covlib.search.probes import read_curve, read_probes
from covlib.search.required_data import search, search_states
from covlib.search.summary import bracket_pair, requirement_ratio, seed_spread, summarise
from covlib.training.shapes import MODEL_SHAPES, model_params

enable_png_renderer()
pd.set_option("display.width", 140)
fig_dir = figures_dir or None
root = Path(out_dir) if out_dir else repository_path("build")

if preset == "smoke":
    # a miniature of every experiment: tiny N, a one-layer model, short budgets (seconds)
    experiments = {
        "twohop": {"task": "twohop", "N": [6, 7, 8], "seeds": [0, 1], "model": "smoke"},
        "twohop_small_model": {"task": "twohop", "N": [6, 7, 8], "seeds": [0], "model": "smoke"},
        "threehop": {"task": "threehop", "N": [4, 5], "seeds": [0], "model": "smoke"},
        "parallel_twohop": {"task": "parallel_twohop", "N": [4, 5], "seeds": [0], "model": "smoke"},
    }
    rules = ProbeRules(threshold=threshold, step_cap=300, give_up_epochs=20, eval_every=25, batch_size=128,
                          test_size_per_type=200)
    coverage_N = {"twohop": [8, 12, 16], "threehop": [5, 6], "parallel_twohop": [5, 6]}
    table_path = Path(table) if table else root / "scaling" / "probes_smoke.csv"
    recompute = True
else:
    experiments = BOOK_EXPERIMENTS
    rules = ProbeRules(threshold=threshold)
    coverage_N = None  # read from data/scaling/coverage_<task>.csv
    table_path = Path(table) if table else repository_path(BOOK_TABLE)
if preset == "paper":
    print("The paper's scale (8-layer GPT-2, N up to 200, batch 16,384) needs a GPU for days; this preset "
          "reads the same cache as the default one. Run `covlib scaling search --model ...` on a GPU to extend it.")

cells_of = {name: experiment_cells(e) for name, e in experiments.items()}
print(f"preset={preset}: probe table {table_path}; rules {rules}")

# %% [markdown]
# ## 4.1 One probe, and the search
#
# A *probe* trains the book's default model (4 layers, width 128; chapter 3) on a dataset of
# `n_train` examples and asks one question: does `type_0` accuracy reach 0.99? The authors'
# rule decides when to stop, and the book makes it explicit:
#
# * **success** at the first evaluation (every 50 steps) where `type_0` accuracy is at least
#   0.99;
# * **give up** once the training set has been *fitted* (accuracy on training items at least
#   0.99) for 100 epochs without success, or at a cap of 6,000 steps (raised where the rule needs
#   more: section 4.2 says where).
#
# The search walks `n_train` on a log scale. It starts from the data that 3-covers 99% of the
# ID test items (chapter 2: coverage is cheap to compute, and close to what training needs;
# the cells at $N$ = 20 to 30 started from 90% and took a probe more),
# steps up by a factor 1.6 after a failure and down after a success until it holds a *bracket*
# [largest failing n, smallest succeeding n], then bisects until the bracket's ratio is at most
# 1.3. The estimate of $n_\text{req}$ is the bracket's geometric mean. Every probe is an
# ordinary run folder and a row of the probe table; the search state is a function of that
# table, so it resumes where it stopped.

# %%
if recompute:
    for name, cells in cells_of.items():
        print(f"== {name}")
        search(cells, table_path, root / "scaling", rules, jobs=jobs if preset != "smoke" else 1,
                  log=print if preset != "smoke" else None)
probes = read_probes(table_path)
states = {name: search_states(cells, probes) if len(probes) else [] for name, cells in cells_of.items()}
summaries = {name: summarise(s) if s else pd.DataFrame() for name, s in states.items()}
commands = repository_path("data/scaling/COMMANDS.txt")
chapter_cells = pd.concat([s for s in summaries.values() if len(s)] or [pd.DataFrame(columns=["probes", "minutes"])])
own_probes, own_hours = int(chapter_cells["probes"].sum()), float(chapter_cells["minutes"].sum() / 60)
print(f"{len(probes)} probes in {table_path.name} (chapters 4, 6 and 7 share it); this chapter's experiments: "
      f"{own_probes} probes, {own_hours:.1f} run-hours of training (each one-thread run's wall time, summed; "
      f"two or more ran at once on the two cores, so where more than two did this overstates the CPU time)")
if preset != "smoke":
    print("\nregenerate with:\n" + commands.read_text())
display(probes.tail(8))


# %% [markdown]
# What the cache holds, per experiment. `bracketed` cells are finished; `searching` cells have a
# next size to probe (`next_n`) and are what a resumed search would train next; `unreachable`
# means the model failed even at the largest size the search tries: the whole ID pool less the
# 1,000 inputs (or a quarter of the pool, if less) kept out of training so that an ID test set
# remains. Near the whole pool there is nothing left to test on.

# %%
def coverage_of_cache(summary: pd.DataFrame) -> str:
    if summary.empty:
        return "no probes yet"
    counts = summary["status"].value_counts().to_dict()
    return ", ".join(f"{v} {k}" for k, v in counts.items()) + f" of {len(summary)} cells"


status = pd.DataFrame({"experiment": list(summaries), "cells": [coverage_of_cache(s) for s in summaries.values()]})
display(status)
twohop = summaries["twohop"]
display(twohop)

# %% [markdown]
# ## 4.2 Two-hop: the required data grows as a power of N
#
# Each finished cell gives an estimate; the exponent is the slope of $\log n_\text{req}$
# against $\log N$ (least squares), and its 95% interval comes from resampling the values of
# $N$, and the seeds within each $N$, with replacement. The chart sets beside the measured
# brackets (bars) and estimates (dots): the fitted law, the authors' own 2-hop models at the
# required data (triangles; an 8-layer GPT-2 with about 100 times our parameters, trained on
# a GPU), and the size of the ID pool ($\approx 0.49 N^3$, dashed), which no training set can
# exceed.

# %%
def fit_or_none(summary: pd.DataFrame) -> dict | None:
    est = summary.dropna(subset=["n_req"]) if len(summary) else summary
    if len(est) == 0 or est["N"].nunique() < 2:
        return None
    return bootstrap_exponent(est[["N", "n_req"]], reps=bootstrap_reps)


def describe_fit(fit: dict | None) -> str:
    if fit is None:
        return "not enough finished cells to fit"
    return (f"c = {fit['c']:.2f} (95% interval {fit['c_low']:.2f} to {fit['c_high']:.2f}; R² = {fit['r2']:.3f}, "
            f"{fit['points']} estimates)")


fit_twohop = fit_or_none(twohop)
print("two-hop, default model:", describe_fit(fit_twohop))

# the coverage-predicted requirement (no training): smallest n whose ID items are k-covered
if coverage_N is None:
    cov_tables = {t: pd.read_csv(repository_path(f"data/scaling/coverage_{t}.csv"))
                  for t in ("twohop", "threehop", "parallel_twohop")
                  if repository_path(f"data/scaling/coverage_{t}.csv").is_file()}
else:
    cov_tables = {t: coverage_requirement(t, Ns, points=8, test_size_per_type=300) for t, Ns in coverage_N.items()}
cov2 = cov_tables.get("twohop", pd.DataFrame(columns=["N", "k", "target", "n_train", "eligible"]))


def coverage_fits(cov: pd.DataFrame, N_max: float | None = None) -> pd.DataFrame:
    rows = []
    for (k, target), g in cov.groupby(["k", "target"]):
        g = g.dropna(subset=["n_train"])
        g = g[g["N"] <= N_max] if N_max else g
        if g["N"].nunique() >= 2:
            f = power_fit(g["N"], g["n_train"])
            rows.append({"k": int(k), "target": target, "c": f["c"], "r2": f["r2"], "N range": f"{g['N'].min()}-{g['N'].max()}",
                         "theory 2.5 - 0.5/k": theory_exponent(k)})
    return pd.DataFrame(rows)


cov_fit2 = coverage_fits(cov2)
display(cov_fit2.round(3))

# %%
pool = pd.DataFrame({"N": np.geomspace(15, 200, 20)})
lines = [pd.DataFrame({"N": pool["N"], "n": 0.49 * pool["N"] ** 3, "series": "ID pool 0.49 N³", "dash": "pool"})]
for k in (2, 3):
    g = cov2[(cov2["k"] == k) & (cov2["target"] == 0.99)].dropna(subset=["n_train"])
    if len(g):
        lines.append(pd.DataFrame({"N": g["N"], "n": g["n_train"], "series": f"coverage: 99% of ID items {k}-covered",
                                   "dash": "coverage"}))
if fit_twohop:
    Nmin, Nmax = twohop["N"].min(), 200
    fl = fit_line_frame({f"fit: c = {fit_twohop['c']:.2f}": fit_twohop}, {f"fit: c = {fit_twohop['c']:.2f}": (Nmin, Nmax)})
    lines.append(fl.assign(dash="fit"))
authors = pd.DataFrame({"N": list(REQUIRED_DATA_TWOHOP_AUTHORS), "n": list(REQUIRED_DATA_TWOHOP_AUTHORS.values()),
                        "series": "authors' 2-hop models (GPT-2, GPU)"})
points = requirement_frame(twohop.assign(model="measured: 4-layer, width 128")) if len(twohop) else \
    pd.DataFrame(columns=["N", "seed", "n_req", "low", "high", "series"])
scaling_chart = required_data_chart(points, pd.concat(lines, ignore_index=True), authors,
                                       title="Two-hop: training examples needed for 99% ID accuracy")
save_figure(scaling_chart, "04_required_data_twohop", fig_dir)
scaling_chart

# %%
id_pool = twohop.assign(share_of_pool=twohop["n_req"] / twohop["eligible"]) if len(twohop) else twohop
if len(id_pool):
    display(id_pool[["N", "seed", "low", "high", "n_req", "eligible", "share_of_pool", "low_capped", "probes",
                     "minutes"]].round(3))
    per_N = id_pool.groupby("N")["share_of_pool"].mean()
    biting = per_N[per_N > 0.25]
    pool_note = (f"At N = {', '.join(str(int(n)) for n in biting.index)} the required data is "
                 f"{', '.join(f'{v:.0%}' for v in biting)} of the whole ID pool: the smaller N is, the more of the "
                 "pool the model needs, and near the pool its size rather than the law may bound the requirement, "
                 "which would flatten the low end of the fit." if len(biting) else
                 "At every N measured the required data stays below a quarter of the ID pool.")
else:
    pool_note = "No finished two-hop cells yet."
# a bracket whose failing probe ran out of steps was decided by the budget, not by the authors' rule
capped = twohop[twohop["low_capped"] & twohop["n_req"].notna()] if len(twohop) else twohop
fit_rule_decided = fit_or_none(twohop[~twohop["low_capped"]]) if len(capped) else fit_twohop
if len(capped):
    pool_note += (" At " + ", ".join(f"N = {int(r['N'])} (seed {int(r['seed'])})" for _, r in capped.iterrows())
                  + f" the bracket's failing probe stopped at the {rules.step_cap:,}-step cap before the give-up rule "
                  f"({rules.give_up_epochs:.0f} epochs after fitting) could decide: those estimates are the data needed "
                  f"within {rules.step_cap:,} steps, and may sit above what longer training needs. Without them the fit "
                  f"gives {describe_fit(fit_rule_decided)}.")
twohop_rows = probes[(probes["task"] == experiments["twohop"]["task"]) & ~probes["cot"].astype(bool)
                     & (probes["model"] == experiments["twohop"]["model"])] if len(probes) else probes
caps = twohop_rows.groupby("N")["step_cap"].max().astype(int) if len(twohop_rows) else pd.Series(dtype=int)
if caps.nunique() > 1:  # the cap was raised where 100 epochs after fitting would not fit under it
    raised = caps[caps > caps.min()]
    pool_note += (f" The step cap was {caps.min():,} steps except at N = "
                  + ", ".join(f"{n} ({c:,})" for n, c in raised.items())
                  + f": there the training set is fitted late and {rules.give_up_epochs:.0f} epochs take more than "
                  f"{caps.min():,} steps, so the lower cap, not the authors' rule, would have decided. A higher cap "
                  "keeps every probe the rule decided and trains again those the lower cap stopped.")
lost = twohop[twohop["status"] == "unreachable"] if len(twohop) else twohop
if len(lost):
    at_top = [twohop_rows[(twohop_rows["N"] == r["N"]) & (twohop_rows["seed"] == r["seed"])].nlargest(1, "n_train").iloc[0]
              for _, r in lost.iterrows()]
    pool_note += (" At the smallest N the law cannot be measured at all: "
                  + "; ".join(f"at N = {int(t['N'])} (seed {int(t['seed'])}) the largest training set the search may use, "
                              f"{int(t['n_train']):,} of {int(t['eligible']):,} ID-eligible inputs, still ends at "
                              f"{t['best_type0']:.1%} ID accuracy" for t in at_top)
                  + ": the requirement, if there is one, is more than the pool can give while keeping a test set.")

# %% [markdown]
# How the measured exponent compares:

# %%
def fmt(x, spec=".2f"):
    return "n/a" if x is None or (isinstance(x, float) and np.isnan(x)) else format(x, spec)


c3 = cov_fit2[(cov_fit2["k"] == 3) & (cov_fit2["target"] == 0.99)]["c"]
c3 = float(c3.iloc[0]) if len(c3) else float("nan")
compare = pd.DataFrame([
    {"what": "measured here (4-layer, width 128, CPU)", "c": fit_twohop["c"] if fit_twohop else np.nan,
     "c_low": fit_twohop["c_low"] if fit_twohop else np.nan, "c_high": fit_twohop["c_high"] if fit_twohop else np.nan,
     "source": "this book"},
    {"what": "coverage: 99% of ID items 3-covered", "c": c3, "c_low": c3, "c_high": c3, "source": "this book"},
    {"what": "paper: 2-hop, GPT-2", "c": EXPONENTS["twohop"], "c_low": EXPONENTS["twohop"],
     "c_high": EXPONENTS["twohop"], "source": "paper"},
    {"what": "paper draft fit (superseded)", "c": EXPONENT_TWOHOP_DRAFT, "c_low": EXPONENT_TWOHOP_DRAFT,
     "c_high": EXPONENT_TWOHOP_DRAFT, "source": "paper"},
    {"what": "theory, k = 2", "c": theory_exponent(2), "c_low": theory_exponent(2),
     "c_high": theory_exponent(2), "source": "theory"},
    {"what": "theory, k = 3", "c": theory_exponent(3), "c_low": theory_exponent(3),
     "c_high": theory_exponent(3), "source": "theory"},
])
display(compare.round(3))
display(Markdown(
    f"Measured on this CPU: **{describe_fit(fit_twohop)}**, against the paper's 2.26 (its superseded "
    f"draft fit: 2.54) and the theory's {theory_exponent(2):.2f} (k = 2) and {theory_exponent(3):.2f} "
    f"(k = 3). Coverage alone, with no training, predicts {fmt(c3)} for 99% of the ID items 3-covered. "
    + pool_note))

# %% [markdown]
# ## 4.3 Do bigger models need less data?
#
# The paper trains GPT-2 models from 68M to 1.5B parameters and finds exponents 2.13, 2.26 and
# 2.28: twenty times the parameters, no reduction in the data needed. Here the same search runs
# for a 2-layer, width-64 model and a 6-layer, width-128 one beside the default (4 layers, width
# 128), at the smaller values of $N$ and on one seed (the small model, whose probes are cheap, also
# at $N$ = 40). Each size is set against the default model on the cells (N and seed) both have
# finished, and the gap is judged against how far apart two seeds of the same cell lie: a size
# searched on one seed cannot claim a difference smaller than that.

# %%
size_names = [n for n in ("twohop_small_model", "twohop", "twohop_large_model") if n in summaries]
size_rows, size_points = [], []
for name in size_names:
    s = summaries[name]
    model = experiments[name]["model"]
    shared = experiments.get("twohop_small_model", experiments[name])  # the cells every size is searched on
    params = model_params(model, 30, 4) if model in MODEL_SHAPES else None
    if len(s):
        common = s[s["N"].isin(shared["N"]) & s["seed"].isin(shared["seeds"])]
        f = fit_or_none(common)
        size_points.append(requirement_frame(common.assign(model=f"{model} ({params / 1e6:.2f}M)")))
        size_rows.append({"model": model, "parameters": params, "cells finished": int(common["n_req"].notna().sum()),
                          "cells": len(common), "exponent": f["c"] if f else np.nan,
                          # with two values of N every resample draws the same line: no interval to give
                          "interval": f"{f['c_low']:.2f} to {f['c_high']:.2f}" if f and common.dropna(subset=["n_req"])["N"].nunique() > 2
                          else "n/a",
                          "mean n_req": common["n_req"].mean(),
                          "unreachable at N": ", ".join(str(int(n)) for n in common.loc[common["status"] == "unreachable", "N"]),
                          "capped at N": ", ".join(str(int(n)) for n in common.loc[common["low_capped"], "N"])})
sizes = pd.DataFrame(size_rows)
display(sizes.round(3))
if size_points:
    size_chart = estimates_chart(size_points, "Required data by model size (two-hop)")
    save_figure(size_chart, "04_required_data_by_size", fig_dir)
    display(size_chart)
measured_sizes = sizes[sizes["cells finished"] > 0] if len(sizes) else sizes
param_ratio = (float(measured_sizes["parameters"].max() / measured_sizes["parameters"].min())
               if len(measured_sizes) > 1 else float("nan"))
size_parts = []
for _, r in sizes.iterrows():
    part = f"{r['model']} ({r['parameters'] / 1e6:.2f}M parameters): {r['cells finished']} of {r['cells']} cells finished"
    if not np.isnan(r["exponent"]):
        part += f", c = {r['exponent']:.2f} ({r['interval']}), mean n_req {r['mean n_req']:,.0f}"
    if r["unreachable at N"]:
        part += f"; no success at N = {r['unreachable at N']} with any training set the pool allows"
    if r["capped at N"]:
        part += f" (at N = {r['capped at N']} the failing probe the result rests on stopped at the step cap)"
    size_parts.append(part)
missing_sizes = [name for name in size_names if name != "twohop" and not summaries[name]["n_req"].notna().any()]
size_note = "; ".join(size_parts) + "."
if len(measured_sizes) > 1:
    size_note += (f" The finished sizes span {param_ratio:.1f} times in parameters (the paper: about 20 times, "
                  f"exponents {', '.join(f'{c:.2f}' for c in EXPONENTS_BY_SIZE_TWOHOP.values())}).")
# does a bigger model need less data? each size against the default model, on the cells both finished,
# judged against how far two seeds of the same cell lie apart (the sizes are searched on one seed)
reference = experiments["twohop"]["model"]
spread = seed_spread(summaries["twohop"])
size_ratios = {experiments[name]["model"]: requirement_ratio(summaries[name], summaries["twohop"], ("size", "default"))
               for name in size_names if name != "twohop" and len(summaries[name])}
size_ratio_of = {}
for model, r in size_ratios.items():
    if not len(r):
        continue
    size_ratio_of[model] = float(np.exp(np.log(r["ratio"]).mean()))
    g = size_ratio_of[model]
    verdict = ("less" if g < 1 / spread else "more" if g > spread else "about the same") if not np.isnan(spread) else "?"
    size_note += (f" {model} needs {g:.2f} times the data of {reference} on the {len(r)} cells both finished "
                  f"(per cell: {', '.join(f'N = {int(n)} {x:.2f}' for n, x in zip(r['N'], r['ratio']))}): "
                  + (f"**{verdict}**, against a typical {spread:.2f}-fold gap between two seeds of the same cell."
                     if verdict != "?" else "no second seed to judge the gap against."))
if missing_sizes and preset != "smoke":
    size_note += (" **Not measured yet:** " + ", ".join(f"{experiments[n]['model']} (`{experiment_command(n)}`)"
                                                         for n in missing_sizes)
                  + ". Until they are, this chapter makes no claim about model size.")
searching = {experiments[n]["model"]: sorted(set(summaries[n].loc[summaries[n]["status"] == "searching", "N"]))
             for n in size_names if n not in missing_sizes and len(summaries[n])}
searching = {m: Ns for m, Ns in searching.items() if Ns}
if searching and preset != "smoke":  # a partly filled cache: say what a resumed search would add
    size_note += (" **Still searching** (the cache is partly filled; the commands in `data/scaling/COMMANDS.txt` "
                  "resume): " + "; ".join(f"{m} at N = {', '.join(map(str, Ns))}" for m, Ns in searching.items())
                  + ". The comparisons above use the finished cells only.")
display(Markdown(size_note))

# %% [markdown]
# ## 4.4 Longer chains: three-hop and parallel two-hop
#
# Three-hop composition has one more bridge, and its ID pool is $0.343 N^4$; parallel two-hop
# joins two independent bridges. Both are four-input tasks, so a CPU can only reach small $N$
# (the values below, one seed each). The paper finds steeper laws for both (2.58 and 2.43
# against 2.26).

# %%
chain_rows, chain_points = [], []
chain_fits = {}
for name in ("twohop", "parallel_twohop", "threehop"):
    s = summaries.get(name, pd.DataFrame())
    f = fit_or_none(s) if len(s) else None
    chain_fits[name] = f
    chain_rows.append({"task": name, "N values": ", ".join(map(str, experiments.get(name, {}).get("N", []))),
                       "exponent": f["c"] if f else np.nan,
                       "interval": f"{f['c_low']:.2f} to {f['c_high']:.2f}" if f else "n/a",
                       "paper": EXPONENTS.get(name), "finished cells": int(s["n_req"].notna().sum()) if len(s) else 0})
    if len(s):
        chain_points.append(requirement_frame(s.assign(model=name)))
chains = pd.DataFrame(chain_rows)
display(chains.round(3))
if chain_points:
    chain_chart = estimates_chart(chain_points, "Required data by task")
    save_figure(chain_chart, "04_required_data_by_task", fig_dir)
    display(chain_chart)
chain_parts = []
for name in ("threehop", "parallel_twohop"):
    s, f = summaries.get(name, pd.DataFrame()), chain_fits.get(name)
    if not len(s):
        continue
    done = s.dropna(subset=["n_req"]).sort_values("N")
    text = f"{name}: " + (describe_fit(f) + f" against the paper's {EXPONENTS[name]:.2f}" if f else "no fit yet")
    if len(done):
        text += " (n_req " + ", ".join(f"{v:,.0f} at N = {int(n)}" for n, v in zip(done["N"], done["n_req"])) + ")"
    lost = s[s["status"] == "unreachable"]
    if len(lost):
        text += (f"; at N = {', '.join(str(int(n)) for n in lost['N'])} no training set the pool allows reaches "
                 f"{threshold:.0%}")
    chain_parts.append(text)
if chain_parts and fit_twohop:
    display(Markdown("; ".join(chain_parts) + f". Two-hop, for comparison: c = {fit_twohop['c']:.2f}. With one seed "
                     "and four or fewer values of N per task, the intervals are wide: they say whether the measured "
                     "exponents are compatible with the paper's, not which task is steeper."))

# %% [markdown]
# ## 4.5 What failure looks like
#
# Just below the required data a run does not fail by learning nothing. It fits its training
# set first; its ID accuracy then rises more slowly than with a little more data, and the
# give-up rule ends the run before it reaches the threshold. The
# pair below is the two-hop cell whose failing and succeeding probes are closest: the same task,
# $N$ and seed, trained the same way, on two training sets whose sizes differ by the bracket's
# ratio. Their learning curves come from the probe table's companion file
# (`probes_curves.csv`); the coverage of their ID test items is recomputed here (the datasets
# are deterministic).

# %%
pair = bracket_pair(twohop) if len(twohop) else None
if pair is not None:
    key = {"task": pair["task"], "N": int(pair["N"]), "model": pair["model"], "seed": int(pair["seed"])}
    curves = []
    for label, n in (("fails", int(pair["low"])), ("succeeds", int(pair["high"]))):
        c = read_curve(table_path, **key, n_train=n)
        curves.append(c.assign(run=f"n = {n:,} ({label})"))
    curve_frame = pd.concat(curves, ignore_index=True)
    wide = curve_frame.pivot_table(index="step", columns="run", values=["acc/train_inferred", "acc/type_0"])
    wide.columns = [f"{'train' if m == 'acc/train_inferred' else 'ID test'}, {r}" for m, r in wide.columns]
    wide = wide.reset_index()
    palette = ["#90caf9", "#1565c0", "#ef9a9a", "#c62828"]
    series = {c: c for c in wide.columns if c != "step"}
    failure_curve = accuracy_curves_chart(wide, series, f"Two-hop N={key['N']}, seed {key['seed']}: "
                                                  "just below and just above the required data",
                                                  colors=dict(zip(series, palette)), chance=1 / key["N"])
    covs = pd.concat([probe_coverage_by_k(key["task"], key["N"], int(pair[end]), key["seed"]).assign(
        type=f"n = {int(pair[end]):,}") for end in ("low", "high")], ignore_index=True)
    cov_chart = coverage_by_k_chart(covs, title="ID test items k-covered")
    failure_chart = alt.hconcat(failure_curve, cov_chart).resolve_scale(color="independent")
    save_figure(failure_chart, "04_failure_below_required_data", fig_dir)
    display(failure_chart)
    fail_row = probes[(probes["task"] == key["task"]) & (probes["N"] == key["N"]) & (probes["model"] == key["model"])
                      & (probes["seed"] == key["seed"]) & (probes["n_train"] == int(pair["low"]))].iloc[0]
    cov3 = covs[covs["k"] == 3].set_index("type")["covered"]
    pair_rows = probes[(probes["task"] == key["task"]) & (probes["N"] == key["N"]) & (probes["model"] == key["model"])
                       & (probes["seed"] == key["seed"]) & (probes["n_train"] == int(pair["high"]))].iloc[0]
    failure_note = (
        f"With {int(pair['low']):,} examples the model fitted its training set "
        f"(step {int(fail_row['first_fit_step']) if pd.notna(fail_row['first_fit_step']) else 'never'}; final training "
        f"accuracy {fail_row['final_train']:.1%}); its ID accuracy reached {fail_row['best_type0']:.1%} by step "
        f"{int(fail_row['steps'])}, where the give-up rule ended it ({fail_row['stopped']}). With {int(pair['high']):,} examples "
        f"({pair['high'] / pair['low']:.2f} times as many) it reached {threshold:.0%} at step {int(pair_rows['steps'])}. ")
    if abs(cov3.iloc[0] - cov3.iloc[1]) < 0.005:
        failure_note += (f"Coverage does not separate the two: {cov3.iloc[0]:.1%} and {cov3.iloc[1]:.1%} of the ID test "
                         "items are 3-covered. Here every ID item is reachable and the difference is how fast the model "
                         "gets there, which the give-up rule turns into a requirement: the measured n_req depends on "
                         "the rule as well as on coverage (try `give_up_epochs` in the search).")
    else:
        failure_note += (f"Coverage moves with the data: {cov3.iloc[0]:.1%} of the ID test items are 3-covered at the "
                         f"smaller size, {cov3.iloc[1]:.1%} at the larger.")
else:
    failure_note = "No two-hop cell is bracketed yet: the cache holds no pair of probes to compare."
fails = probes[~probes["success"]] if len(probes) else probes
fitted_fails = fails[fails["final_train"] >= 0.99] if len(fails) else fails
if len(fails):
    failure_note += (f" Across the whole table, {len(fitted_fails)} of {len(fails)} failing probes fitted their "
                     "training set (at least 99%) and still stayed below the threshold on the ID test.")
display(Markdown(failure_note))

# %%
metrics = {
    "exponent_twohop": fit_twohop["c"] if fit_twohop else float("nan"),
    "exponent_twohop_ci_low": fit_twohop["c_low"] if fit_twohop else float("nan"),
    "exponent_twohop_ci_high": fit_twohop["c_high"] if fit_twohop else float("nan"),
    "r2_twohop": fit_twohop["r2"] if fit_twohop else float("nan"),
    "n_values_twohop": int(twohop.dropna(subset=["n_req"])["N"].nunique()) if len(twohop) else 0,
    "exponent_threehop": chain_fits["threehop"]["c"] if chain_fits.get("threehop") else float("nan"),
    "exponent_parallel_twohop": chain_fits["parallel_twohop"]["c"] if chain_fits.get("parallel_twohop") else float("nan"),
    "exponent_twohop_rule_decided": fit_rule_decided["c"] if fit_rule_decided else float("nan"),
    "param_ratio": param_ratio,
    **{f"n_req_ratio_{m.replace('-', '_')}_to_default": g for m, g in size_ratio_of.items()},
    "seed_spread_twohop": spread,
    "exponent_coverage_k3": c3,
    "probes": own_probes,
    "cpu_hours": own_hours,
}
record_metrics(metrics)
pd.Series(metrics, name="value").to_frame()

# %% [markdown]
# ## Summary

# %%
bullets = []
if fit_twohop:
    inside = fit_twohop["c_low"] <= EXPONENTS["twohop"] <= fit_twohop["c_high"]
    bullets.append(f"The data a 4-layer transformer needs to reach {threshold:.0%} ID accuracy on two-hop grows as "
                   f"N^{fit_twohop['c']:.2f} (95% interval {fit_twohop['c_low']:.2f} to {fit_twohop['c_high']:.2f}, "
                   f"{metrics['n_values_twohop']} values of N), measured by training on a CPU; the paper's "
                   f"{EXPONENTS['twohop']:.2f} is {'inside' if inside else 'outside'} that interval.")
if not np.isnan(c3) and fit_twohop:
    bullets.append(f"Coverage predicts the growth without training a model: the data that 3-covers 99% of the ID "
                   f"items grows as N^{c3:.2f}, "
                   + ("inside the measured interval" if fit_twohop["c_low"] <= c3 <= fit_twohop["c_high"]
                      else "outside the measured interval")
                   + f"; the theory gives {theory_exponent(2):.2f} (k = 2) and {theory_exponent(3):.2f} (k = 3).")
measured_chains = [n for n in ("threehop", "parallel_twohop") if chain_fits.get(n)]
if measured_chains:
    bullets.append("Longer chains at small N: " + ", ".join(
        f"{n} c = {chain_fits[n]['c']:.2f} ({chain_fits[n]['c_low']:.2f} to {chain_fits[n]['c_high']:.2f}; paper "
        f"{EXPONENTS[n]:.2f})" for n in measured_chains) + ".")
bullets.append(size_note if len(measured_sizes) > 1 else
               "Model size: not measured yet at this cache (section 4.3 names the commands), so no claim is made.")
bullets.append(f"Compute: this chapter's searches took {own_probes} probes and {own_hours:.1f} run-hours of "
               "training on this machine (one-thread runs, two or more at a time on two cores; the wall time of each "
               "run, summed).")
display(Markdown("\n".join(f"* {b}" for b in bullets)))

# %% [markdown]
# ## Exercises
#
# 1. **Read the law off the data.** Using `twohop` (the table of finished cells above), what is
#    the ratio of the required data at the largest $N$ to that at the smallest? What ratio does
#    the fitted exponent predict? Put your two numbers in the cell below.
# 2. **Coverage without training.** Change `k` in the second exercise cell to 2 and to 4: how
#    does the coverage-predicted exponent move, and which theory value $2.5 - 0.5/k$ is closest?

# %%
my_ratio_measured = None  # your answer to exercise 1: n_req at the largest N / n_req at the smallest
my_ratio_predicted = None  # (largest N / smallest N) ** c

# %% tags=["solution"]
finished = twohop.dropna(subset=["n_req"]) if len(twohop) else twohop
if len(finished) and finished["N"].nunique() >= 2 and fit_twohop:
    by_N = finished.groupby("N")["n_req"].mean()
    truth_measured = by_N.iloc[-1] / by_N.iloc[0]
    truth_predicted = (by_N.index[-1] / by_N.index[0]) ** fit_twohop["c"]
    if my_ratio_measured is None:
        print("Exercise 1: divide the mean n_req at the largest N by that at the smallest; then raise the ratio "
              "of the N values to the fitted exponent.")
    else:
        ok = abs(my_ratio_measured / truth_measured - 1) < 0.05 and abs(my_ratio_predicted / truth_predicted - 1) < 0.05
        print("Exercise 1:", "correct" if ok else f"not quite: measured {truth_measured:.2f}, predicted {truth_predicted:.2f}")
else:
    print("Exercise 1 needs at least two finished values of N in the cache.")

# %%
k = 3  # exercise 2: try 2 and 4
g = cov2[(cov2["k"] == k) & (cov2["target"] == 0.99)].dropna(subset=["n_train"])
if g["N"].nunique() >= 2:
    c_k = power_fit(g["N"], g["n_train"])["c"]
    closest = min((1, 2, 3, 4, 8), key=lambda kk: abs(theory_exponent(kk) - c_k))
    print(f"k={k}: coverage-predicted exponent {c_k:.2f}; theory for k={k}: {theory_exponent(k):.2f}; "
          f"the theory value closest to it is k={closest} ({theory_exponent(closest):.2f})")
