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
# This chapter trains a small transformer from scratch on `twohop` and watches its test
# accuracy during training, per test type and per k-cutoff. It is the paper's central
# experiment, sized for a laptop CPU: a 4-layer, width-128 model (about 0.8M parameters, versus
# the paper's 8-layer GPT-2) on a vocabulary of just the task's tokens. Two datasets play a
# role: one with plenty of data (10,000 examples at $N = 30$), which the model learns in a few
# minutes, and one at the edge of coverage (4,000 examples), where a tenth of the ID items are
# barely covered. The second takes a long run; the book ships its metrics (`data/runs/`) and
# recomputes them on request.

# %% tags=["parameters"]
from typing import Optional  # papermill's parameter reader reads Optional[int], not int | None

preset = "default"  # "smoke" (tests: seconds), "default" (the book: a few minutes on 2 CPU cores), "paper"
N: Optional[int] = None  # tokens |X|; None takes the preset's value
n_train: Optional[int] = None  # training examples of the live run; None takes the preset's value
data_seed = 0  # dataset seed
seed = 42  # model initialisation and batch order
steps: Optional[int] = None  # training steps of the live run; None takes the preset's value
eval_every: Optional[int] = None  # evaluate on the whole test set every this many steps; None takes the preset's
retrain = False  # True: train from scratch even if a finished run with this config exists
edge_run = ""  # folder of the run at the edge of coverage; "" means the one shipped under data/runs/
recompute_edge_run = False  # True: retrain that run here (about 20 minutes on 2 CPU cores)
recompute_live_run = False  # True: train the run of 3.2-3.4 here (minutes) instead of reading the shipped one
out_dir = ""  # parent of dataset and run folders; "" means build/ of the repository
figures_dir = ""  # where figures go; "" means figures/<preset>/ under out_dir or build/ (make book: papers_figures/)
# your answer to exercise 1 (the end of the chapter); a check there says whether it is right
my_first_group: Optional[str] = None  # exercise 1: the name of a k-cutoff group of 3.5, such as "k<3"

# %%
# ruff: noqa: E402, B018  (notebook style: imports after the parameters cell, charts as last expressions)
import altair as alt
from IPython.display import Markdown, display

import covlib.chapters.ch03_coverage_predicts_generalization as ch03
from covlib.book.setup import setup_chapter
from covlib.book.sweep import record_metrics

chapter = setup_chapter("03", preset, ch03.PRESETS, out_dir=out_dir, figures_dir=figures_dir,
                        N=N, n_train=n_train, steps=steps, eval_every=eval_every)
N, n_train, steps, eval_every = chapter["N"], chapter["n_train"], chapter["steps"], chapter["eval_every"]
root = chapter.root
overrides = {"steps": steps, "eval_every": eval_every, "seed": seed}
run_config = ch03.make_config(chapter["model"], overrides)
print(f"preset={preset}: twohop N={N}, n_train={n_train}; {run_config.model.describe()}; {steps} steps")

# %% [markdown]
# ## 3.1 Data and its coverage
#
# The dataset is generated (or reused, if a folder with this exact configuration exists) and
# annotated with k-cutoffs by the algorithm of chapter 2, over the full range of $k$. The
# annotation is what lets the training loop report accuracy per k-cutoff of the ID test items
# (`type_0`), as in the paper. With 10,000 examples at $N = 30$ every ID item is covered, and
# with plenty of evidence: its k-cutoff is well above 3.

# %%
dataset = ch03.ensure_dataset(ch03.DatasetConfig("twohop", N, n_train, seed=data_seed), root / "datasets")
coverage = ch03.annotate_dataset(dataset)
display(ch03.coverage_table(ch03.wide_table(coverage)))

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
# The run of the default preset ships with the book (`data/runs/`, its metrics only), so that every
# reader sees the same curves; any other configuration, or `recompute_live_run = True`, trains here.

# %%
run_dir = root / "runs" / ch03.run_name(dataset.name, run_config)
result = ch03.live_run(dataset, run_dir, run_config, chapter["model"], overrides,
                       recompute_live_run, retrain)
metrics = result.metrics
print(f"run folder: {ch03.readable_path(result.run_dir)}")
print(ch03.training_speed(metrics))

# %% [markdown]
# ## 3.3 What the model learns, per test type
#
# The dashed line is chance, $1/N$. Memorisation of the training items comes first; ID
# generalisation (`type_0`) follows; the OOD types, whose computation needs a fact the model
# never saw, stay near chance throughout. The one that keeps a little above chance is `type_2`,
# whose first hop is unseen: the model cannot compute the bridge, but $x_3$ alone still narrows
# the answer $f_2(b, x_3)$ down, because for a fixed $x_3$ some outputs are more frequent than
# others (the tables are random functions, chapter 1).

# %%
type_series = {t: f"acc/{t}" for t in ["train_inferred", "type_0", "type_1", "type_2", "type_3"]}
type_chart = chapter.save(ch03.accuracy_curves_chart(metrics, type_series, "Test accuracy during training, per test type",
                                                     chance=1 / N), "03_accuracy_by_type")
display(ch03.steps_table(ch03.curves.first_steps(metrics, type_series), "test type"))
type_chart

# %% [markdown]
# ## 3.4 More evidence, learned sooner
#
# Every ID item here is covered, but not equally well: its k-cutoff counts how much evidence
# the training data offers for the substitutions that reach it. Group the ID items into three
# bins of k-cutoffs holding about the same number of items: the bins are learned in order of
# evidence, though with this much data the gaps are small (tens of steps). The bars freeze the
# picture per single k-cutoff at the step where the ID test set as a whole first passes 50%
# accuracy: with a few hundred items per value they are noisy, but on average the items with
# k-cutoffs above 16 are ahead of those below 13. The effect is much stronger where evidence is
# scarce, which is the next section.

# %%
per_k = ch03.curves.cutoff_table(metrics, dataset, threshold=0.9)
display(ch03.cutoff_reader_table(per_k))
bins = ch03.curves.cutoff_bins(per_k, n_bins=3)
binned = ch03.curves.binned_accuracy(metrics, per_k, bins)
bin_colors = dict(zip(bins, ["#c62828", "#f9a825", "#2e7d32"]))
curves_chart = ch03.accuracy_curves_chart(binned, {label: label for label in bins},
                                          "ID accuracy during training, by k-cutoff", colors=bin_colors)
halfway = result.first_step_above("acc/type_0", 0.5) or int(metrics["step"].iloc[-1])
snapshot = ch03.curves.cutoff_snapshot(metrics, per_k[per_k["n"] >= 20], halfway)  # bars of 20 items or more
panels = [curves_chart] + ([ch03.accuracy_by_cutoff_chart(
    snapshot, title=f"At step {halfway} (numbers: test items)", y_title=f"accuracy at step {halfway}")]
    if len(snapshot) else [])
evidence_chart = chapter.save(alt.vconcat(*panels).resolve_scale(color="independent"), "03_learned_sooner")
if snapshot.empty:
    display(Markdown(f"No single k-cutoff holds 20 ID test items in this run ({int(per_k['n'].sum()):,} in all), "
                     "so the bars per k-cutoff are left out; the default preset's test set draws them."))
bin_steps = ch03.curves.first_steps(binned, {label: label for label in bins}, thresholds=(0.25, 0.5, 0.9))
display(ch03.steps_table(bin_steps, "k-cutoff bin"))
evidence_chart

# %% [markdown]
# ## 3.5 At the edge of coverage
#
# The paper's sharpest test needs a dataset where some ID items are barely covered. With 4,000
# examples at $N = 30$ (a third of the ID-eligible inputs), a good share of the ID test items have
# a k-cutoff below 3 (the shares are computed below). Learning is much slower here: the model first
# memorises its training set and only slowly starts to generalise, so this run (10,000 steps,
# weight decay 1.0, about 20 minutes on two CPU cores) is shipped with the book under
# `data/runs/`, with the commands that regenerate it; set `recompute_edge_run = True` to
# retrain it here.

# %%
edge_dataset = ch03.ensure_dataset(ch03.DatasetConfig("twohop", 30, 4000, seed=0), root / "datasets")
edge_coverage = ch03.annotate_dataset(edge_dataset, max_k=8)
edge_shares = ch03.curves.cutoff_shares(edge_dataset)
display(Markdown(ch03.edge_shares_text(edge_shares)))

# %% [markdown]
# The run itself: the shipped one, the folder `edge_run`, or a fresh one when `recompute_edge_run` is set.

# %%
edge_dir = ch03.edge_run_folder(edge_dataset, root, recompute_edge_run, edge_run, retrain)
edge = ch03.load_metrics(edge_dir)
edge_config = ch03.load_run_config(edge_dir)
print(ch03.describe_run(edge_dir, edge, edge_config))
print(ch03.run_commands(edge_dir))

# %% [markdown]
# One run is one draw: the model's initialisation and the order of its batches are random, and a
# second run of the same configuration can end several points higher or lower. The book ships the
# same run with three training seeds (the dataset is the same; seed 42 is the one analysed in
# chapter 5), and every number below is read over them: the line is the mean over seeds, the band
# their range. The dropdown under the chart adds one seed's own curves and marks its dots.

# %%
group_series = {g: f"acc/{g}" for g in ["k>3", "k=3", "k<3"]}
seed_runs = ch03.edge_seed_metrics(edge_dir, edge, ch03.shipped_edge_seeds())
if len(seed_runs) < 3:
    print(f"only seeds {sorted(seed_runs)} are shipped; the others come from {ch03.EDGE_SEEDS_COMMAND}")
by_seed = ch03.seed_group_table(seed_runs)
order = ch03.ordering_by_seed(by_seed)
edge_chart = chapter.save(ch03.edge_seeds_chart(
    ch03.seed_curves(seed_runs), ch03.cutoff_over_seeds(seed_runs, edge_dataset),
    ch03.GROUP_COLORS | {"type_1 (OOD)": ch03.TYPE_COLORS["type_3"]}, chance=1 / 30), "03_edge_of_coverage")
display(ch03.seed_table(by_seed, order))
display(Markdown(ch03.seeds_text(by_seed, order)))
edge_chart

# %% [markdown]
# The order is the one the coverage principle predicts, and the sentence above says in how many
# seeds it holds: items reachable with strong evidence (`k>3`) are learned first and best, items
# at the threshold (`k=3`) follow, and the barely covered items (`k<3`) trail by thousands of
# steps, while OOD items (purple, on the chance line) never move. Per k-cutoff value the bars
# rise with the evidence; the values 1, 7 and 8 hold a few dozen items or fewer, so their bars
# swing most between seeds.

# %%
central = ch03.central_metrics(N, n_train, result, edge, edge_shares, type_series, group_series)
central |= ch03.seed_metrics(by_seed, order)
metrics_file = record_metrics(central)  # the numbers above, for sweeps and the book's snapshot

# %% [markdown]
# ## Summary
#
# * The model memorises its training items and then generalises to ID inputs, while the OOD
#   types, whose inputs are unreachable by substitutions, stay at chance however long it trains.
# * Within the ID test set, the k-cutoff computed from the data alone orders the items: those
#   with more evidence are learned sooner; at the edge of coverage, the barely covered items
#   lag far behind.
# * Nothing in the model knows about coverage: the ordering comes from the data. This is the
#   sense in which coverage *predicts* generalisation.
#
# To see how this changes with the size of the token set or of the training set, sweep this
# chapter (for example `covlib sweep notebooks/03_coverage_predicts_generalization.py
# -p n_train 6000 10000 --jobs 1 --out build/sweeps/ch03`) and collect the recorded numbers
# with `covlib.book.sweep.collect_sweep`.

# %% [markdown]
# ## Exercises
#
# 1. **Which group is learned first?** In the run at the edge of coverage (3.5), which k-cutoff
#    group (`k<3`, `k=3` or `k>3`) is the first to reach 50% accuracy? Set `my_first_group` in the
#    parameters cell; the check reads the run's metrics.
# 2. **Where does OOD stand?** Set `exercise_type` below to `type_1`, `type_2` or `type_3` and compare
#    its final accuracy with chance $1/N$. Which one sits above chance, and why (hint: 3.3)?

# %% tags=["check"]
print("Exercise 1:", ch03.check_first_group(my_first_group, edge))

# %% tags=["solution"]
firsts = {g: ch03.first_step_above(edge, f"acc/{g}", 0.5) for g in ch03.CUTOFF_GROUPS}
print("Exercise 1: the first evaluated step at which each group reaches 50% accuracy:",
      ", ".join(f"{g}: {'never' if s is None else f'step {s:,}'}" for g, s in firsts.items()))
print("first to get there:", " and ".join(ch03.first_groups(edge)))

# %%
exercise_type = "type_2"  # exercise 2: type_1, type_2 or type_3
col = f"acc/{exercise_type}"
if col in edge:
    print(f"Exercise 2: {exercise_type} ends at {edge[col].iloc[-1]:.3f} in the edge run; chance is {1 / 30:.3f}")
