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
# # 3. Coverage predicts generalisation
#
# Chapter 2 computed, for every test input, its *k-cutoff*: how much evidence the training data
# offers for reaching it by substitutions. The coverage principle makes a testable prediction
# about any model that learns by matching patterns: **it will get right the inputs that are
# covered, and only those**, and the more evidence an input has, the more easily it is learned.
#
# This chapter trains a small transformer from scratch on the default `twohop` dataset and
# watches its test accuracy during training, per test type and per k-cutoff group. It is the
# paper's central experiment, sized for a laptop CPU: a 4-layer, width-128 model (about 0.8M
# parameters, versus the paper's 8-layer GPT-2) on a vocabulary of just the task's tokens.

# %% tags=["parameters"]
preset = "default"  # "smoke" (tests: seconds), "default" (the book: a few minutes on 2 CPU cores), "paper"
N = None  # tokens |X|; None takes the preset's value
n_train = None  # training examples; None takes the preset's value
data_seed = 0  # dataset seed
seed = 42  # model initialisation and batch order
steps = None  # training steps; None takes the preset's value
eval_every = None  # evaluate on the whole test set every this many steps; None takes the preset's
retrain = False  # True: train from scratch even if a finished run with this config exists
out_dir = ""  # parent of dataset and run folders; "" means build/ of the repository
figures_dir = ""  # where figures are saved; "" means papers_figures/ (the book runner passes its own)

# %%
# ruff: noqa: E402, B018  (notebook style: imports after the parameters cell, charts as last expressions)
from pathlib import Path

import pandas as pd
from IPython.display import display

from covlib import coverage as cov
from covlib import figures
from covlib.data import DatasetConfig, default_root, ensure_dataset
from covlib.errors import CovlibError
from covlib.learning import cutoff_table, first_steps, train_or_load
from covlib.sweep import record_metrics
from covlib.train import make_config, run_name

PRESETS = {
    # model preset, dataset and budget
    "smoke": {"model": "smoke", "N": 10, "n_train": 450, "steps": 300, "eval_every": 50},
    "default": {"model": "default", "N": 30, "n_train": 10_000, "steps": 2000, "eval_every": 50},
    "paper": {"model": "paper", "N": 30, "n_train": 10_000, "steps": 62_500, "eval_every": 25},
}
if preset not in PRESETS:
    raise CovlibError(f"preset={preset!r}: choose one of {', '.join(PRESETS)}")
knobs = PRESETS[preset]
N = N or knobs["N"]
n_train = n_train or knobs["n_train"]
steps = steps or knobs["steps"]
eval_every = eval_every or knobs["eval_every"]
root = Path(out_dir) if out_dir else default_root().parent
fig_dir = figures_dir or None
figures.enable_png_renderer()
pd.set_option("display.width", 120)
overrides = {"steps": steps, "eval_every": eval_every, "seed": seed}
run_config = make_config(knobs["model"], overrides)
print(f"preset={preset}: twohop N={N}, n_train={n_train}; model {run_config.model}; {steps} steps")

# %% [markdown]
# ## 3.1 Data and its coverage
#
# The dataset is generated (or reused, if a folder with this exact configuration exists) and
# annotated with k-cutoffs by the algorithm of chapter 2. The annotation is what lets the
# training loop report accuracy per k-cutoff group: `k<3` (barely or not covered), `k=3`, and
# `k>3` (strong evidence). Only ID test items (`type_0`) are grouped, as in the paper.

# %%
dataset = ensure_dataset(DatasetConfig("twohop", N, n_train, seed=data_seed), root / "datasets")
coverage = cov.annotate_dataset(dataset, max_k=8)
display(cov.wide_table(coverage).round(1))

# %% [markdown]
# ## 3.2 Training
#
# The model sees each training item as its prompt $(x_1, x_2, x_3)$ followed by the answer, and
# the loss is on the answer token only. Optimisation follows the authors' recipe, sized for a
# CPU (AdamW with weight decay 0.1 except on biases and LayerNorms, linear warm-up then a
# constant learning rate, gradient clipping; batch 512, learning rate $10^{-3}$). Every
# `eval_every` steps the whole test set is scored with teacher forcing. The run folder keeps
# the config, every evaluation (`metrics.jsonl`) and checkpoints; a finished run with the same
# configuration is read back instead of retrained, and a killed one resumes where it stopped.

# %%
run_dir = root / "runs" / run_name(dataset.name, run_config)
result = train_or_load(dataset, run_dir, preset=knobs["model"], overrides=overrides, retrain=retrain)
metrics = result.metrics
print(f"run folder: {run_dir}")
print(f"trained {int(metrics['step'].iloc[-1])} steps in {metrics['elapsed'].iloc[-1] / 60:.1f} min "
      f"({metrics['step'].iloc[-1] / metrics['elapsed'].iloc[-1]:.1f} steps/s including evaluation)")

# %% [markdown]
# ## 3.3 What the model learns, per test type
#
# The dashed line is chance, $1/N$. Memorisation of the training items comes first; ID
# generalisation (`type_0`) follows; the OOD types, whose computation needs a fact the model
# never saw, stay near chance throughout. The type that keeps a little above chance is the one
# whose first hop is unseen (`type_2`): the model can still use $x_3$ to narrow the answer down
# (an input's answer is $f_2(b, x_3)$, and for a fixed $x_3$ some answers are more frequent),
# but it cannot compute the bridge.

# %%
type_series = {t: f"acc/{t}" for t in ["train_inferred", "type_0", "type_1", "type_2", "type_3"]}
type_chart = figures.accuracy_curves_chart(metrics, type_series, "Test accuracy during training, per test type",
                                           chance=1 / N)
figures.save_figure(type_chart, "03_accuracy_by_type", fig_dir)
type_chart

# %%
display(first_steps(metrics, type_series).round(3))

# %% [markdown]
# ## 3.4 What the model learns, per k-cutoff
#
# Now split the ID test items by their k-cutoff. If the model generalises by substitution, items
# reachable with strong evidence (`k>3`) should be learned first and best, items at the
# threshold (`k=3`) later, and items that are barely covered (`k<3`) last or never.

# %%
group_series = {g: f"acc/{g}" for g in ["k>3", "k=3", "k<3"]}
group_chart = figures.accuracy_curves_chart(metrics, group_series, "ID (type_0) accuracy by k-cutoff group",
                                            colors=figures.GROUP_COLORS, chance=1 / N)
figures.save_figure(group_chart, "03_accuracy_by_cutoff_group", fig_dir)
groups = first_steps(metrics, group_series)
display(groups.round(3))
group_chart

# %% [markdown]
# The same run, read per individual k-cutoff value: the final accuracy of the ID items at each
# cutoff (bar labels count the items), and the first step at which each group reached 90%.

# %%
per_k = cutoff_table(metrics, dataset, threshold=0.9)
display(per_k.round(3))
cutoff_chart = figures.accuracy_by_cutoff_chart(per_k)
figures.save_figure(cutoff_chart, "03_accuracy_by_cutoff", fig_dir)
cutoff_chart

# %%
final = result.final
central = {
    "N": N, "n_train": n_train, "steps": int(metrics["step"].iloc[-1]),
    "minutes": float(metrics["elapsed"].iloc[-1] / 60),
    "first_step_type0_0.9": result.first_step_above("acc/type_0", 0.9),
    **{f"final_{t}": float(final[f"acc/{t}"]) for t in type_series if f"acc/{t}" in final},
    **{f"final_{g}": float(final[f"acc/{g}"]) for g in group_series if f"acc/{g}" in final},
    **{f"first_step_{g}_0.9": row["first step >= 0.9"] for g, row in zip(groups["group"], groups.to_dict("records"))},
}
record_metrics(central)
pd.Series(central, name="value").to_frame()

# %% [markdown]
# ## Summary
#
# * The model memorises its training items and then generalises to ID inputs, while the OOD
#   types, whose inputs are unreachable by substitutions, stay at chance however long it trains.
# * Within the ID test set, the k-cutoff computed from the data alone orders the items: those
#   with strong evidence are learned first and most reliably; those barely covered are learned
#   last, if at all.
# * Nothing in the model knows about coverage: the ordering comes from the data. This is the
#   sense in which coverage *predicts* generalisation.
#
# To see how this changes with the size of the token set or of the training set, sweep this
# chapter (for example `covlib sweep notebooks/03_coverage_predicts_generalization.py
# -p n_train 6000 10000 -p N 30 --jobs 1 --out build/sweeps/ch03`) and collect the recorded
# numbers with `covlib.sweep.collect_sweep`.
