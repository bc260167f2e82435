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
# # 1. Tasks and data: compositional tasks built from random tables
#
# *The Coverage Principle* (Chang, Park, Cho et al., 2025) asks a sharp question about
# transformers trained on compositional tasks: **which unseen inputs can a model answer
# correctly, if all it can do is match patterns in its training data?** Its answer, the
# *coverage principle*, says: exactly those inputs that can be reached from training inputs
# by swapping pieces of the input that the training data shows to behave identically.
# Before we can state that precisely (chapter 2) or train models on it (chapter 3), we need the
# data the paper studies. This chapter builds it, one ingredient at a time, with `covlib`.
#
# Every number and figure below is computed here by `covlib`; nothing is typed in.

# %% tags=["parameters"]
from typing import Optional  # papermill's parameter reader reads Optional[int], not int | None

preset = "default"  # "smoke" (tests: seconds), "default" (the book), "paper" (the authors' scale)
N: Optional[int] = None  # number of tokens |X|; None takes the preset's value
n_train: Optional[int] = None  # training examples to sample; None takes the preset's value
seed = 42  # one seed fixes the tables, the split, the training sample and the test set
test_size_per_type: Optional[int] = None  # test items per type; None takes the preset's value
out_dir = ""  # parent folder of the dataset folder; "" means build/datasets/ of the repository
figures_dir = ""  # where figures go; "" means figures/<preset>/ under out_dir or build/ (make book: papers_figures/)
# your answers to the exercises (the end of the chapter); a check there says whether each is right
my_eligible_share: Optional[float] = None  # exercise 1: your expected share of ID-eligible two-hop inputs, e.g. 0.5
my_threehop_share: Optional[float] = None  # exercise 2: the same share for threehop

# %%
# ruff: noqa: E402, B018  (notebook style: imports after the parameters cell, charts as last expressions)
import json

from IPython.display import display

import covlib.chapters.ch01_tasks_and_data as ch01
from covlib.book.setup import setup_chapter
from covlib.book.sweep import record_metrics

chapter = setup_chapter("01", preset, ch01.PRESETS, out_dir=out_dir, figures_dir=figures_dir,
                        N=N, n_train=n_train, test_size_per_type=test_size_per_type)
N, n_train, test_size_per_type = chapter["N"], chapter["n_train"], chapter["test_size_per_type"]
data_root = chapter.root if out_dir else ch01.default_root()
print(f"preset={preset}: N={N}, n_train={n_train}, test_size_per_type={test_size_per_type}, seed={seed}")

# %% [markdown]
# ## 1.1 Tasks are small computation graphs
#
# Every task in the paper maps a short tuple of input tokens $x = (x_1, \dots, x_m)$ to one output
# token $t$. All tokens, inputs, hidden intermediate values and outputs alike, come from a
# single set $X$ of $N$ tokens. The map is a **composition of primitive functions**. In the
# simplest task, `twohop`, a first function combines $x_1$ and $x_2$ into a hidden *bridge*
# token $b = f_1(x_1, x_2)$, and a second combines the bridge with $x_3$: $t = f_2(b, x_3)$.
# The model only ever sees $(x_1, x_2, x_3)$ and must produce $t$; the bridge is never shown
# (except in chain-of-thought variants, which write it out before the answer).
#
# The other families vary the shape of the graph: `threehop` and `fivehop` make longer chains,
# `parallel_twohop` computes two bridges side by side and merges them, and `nontree` lets
# $x_2$ reach the output by two paths (through $b$ and directly), so that what the output
# depends on cannot be summarised by the bridge alone: the paper calls this *path ambiguity*.
# In `covlib` each task is plain data, a list of hops, and the table and drawing below are
# generated from that data.

# %%
display(ch01.task_table_view(ch01.TASKS.values()))

# %%
chapter.save(ch01.task_graphs_chart(list(ch01.TASKS.values())), "01_task_graphs")

# %% [markdown]
# Read each graph left to right: blue circles are the input tokens the model sees, orange
# circles the hidden bridges, green the answer. Each arrow is labelled by the primitive that
# consumes it; the two arrows entering a node carry the same label because they are the two
# arguments of one primitive. In `nontree` the extra arrow from $x_2$ straight to $t$ makes
# $f_2$ a function of three arguments.
#
# ## 1.2 Primitives are random tables
#
# A primitive of arity $a$ is a table $X^a \to X$ filled with **independent uniform draws**.
# Nothing about it is learnable except by looking entries up: there is no arithmetic, no
# symmetry, no structure to exploit. That is deliberate. It means the only way to answer an
# input correctly is to have seen (enough of) the facts it is built from, which is what lets the
# paper measure generalisation against the data alone.
#
# We generate the main dataset of this chapter: `twohop` with the preset's $N$ and `n_train`.

# %%
config = ch01.DatasetConfig("twohop", num_tokens=N, n_train=n_train, seed=seed, test_size_per_type=test_size_per_type)
dataset = ch01.generate(config)
f1 = dataset.tables["f1"]
print(f"{config.folder_name}: tables {ch01.table_shapes(dataset.tables)}")
ch01.table_corner_view(f1, 6)

# %% [markdown]
# Above is the top-left corner of $f_1$: the entry in row $x_1$, column $x_2$ is the bridge
# $b = f_1(x_1, x_2)$. Because each entry is drawn independently, $f_1$ is a **random function,
# not a permutation**: some bridge values are produced by many argument pairs, some by few,
# and a value can even be produced by none. The figure counts, for every bridge value, how
# many of the $N^2$ argument pairs map to it (its *pre-image*).

# %%
pre = ch01.preimage_frame(f1)
print(ch01.preimage_summary(pre, N))
chapter.save(ch01.preimage_chart(pre, "f1"), "01_preimages")

# %% [markdown]
# The spread matters later. A bridge value with a large pre-image is reached by many
# $(x_1, x_2)$ pairs, so training data shows many inputs that share it, and the evidence that
# those pairs "behave the same" accumulates quickly. A bridge with a small pre-image gets little
# such evidence. Coverage, the subject of chapter 2, is built from exactly this kind of evidence.
#
# ## 1.3 The seen split: which facts may ever be trained on
#
# To test generalisation to *new combinations of known facts* and to *unknown facts*, the
# paper holds part of each primitive out. Each table's entries (its *facts*, such as
# $f_1(3, 7) = 12$) are shuffled and the first `seen_ratio` of them (70% by default) form the
# **seen split**: only these may appear inside a training example. The rest are never used in
# training.
#
# A training input must be **ID-eligible**: every primitive application along its graph must be
# a seen fact. For `twohop` that is two conditions: $(x_1, x_2)$ seen for $f_1$, and
# $(b, x_3)$ seen for $f_2$. Since $b$ is a random table entry and $x_3$ is free, the two
# conditions are close to independent, so about $0.7 \times 0.7 = 0.49$ of all $N^3$ inputs are
# eligible; a task with three hops keeps about $0.7^3 = 0.343$ of its inputs. The table checks
# this by generating datasets at several $N$ and counting.

# %%
ch01.eligible_survey_view(ch01.eligible_survey(ch01.TASKS.values(), chapter["survey_N"],
                                               chapter["survey_cap"], seed))

# %% [markdown]
# The shares sit within about a percentage point of $0.7^{\text{hops}}$ at every $N$. They are
# not exactly equal because the conditions are not exactly independent: whether $(b, x_3)$ is
# seen depends on which bridge values $f_1$ happens to produce from the seen pairs, so each
# draw of the tables lands a little above or below the product.
#
# ## 1.4 Sampling the training set, and the facts it actually uses
#
# The training set is `n_train` inputs drawn uniformly, without replacement, from the eligible
# ones. After sampling, a fact counts as **seen only if some training example uses it**. A seen-split
# fact that no sampled example happens to contain is, as far as the model can know, unseen; the
# test types below are defined with these *used* facts. The heatmap shows $f_1$'s facts (at most
# a 30 x 30 block of them): grey ones were held out, green ones appear in training, orange ones
# were allowed but never sampled.

# %%
status = ch01.fact_status_frame(dataset.seen_split["f1"], dataset.seen_used["f1"], limit=30)
status_chart = chapter.save(ch01.fact_status_chart(status, "f1", n_tokens=N), "01_seen_split")
display(ch01.fact_usage_view(ch01.fact_usage(dataset.seen_split, dataset.seen_used)))
status_chart

# %% [markdown]
# How many seen facts go unused depends on `n_train`. A seen $f_1$ fact $(x_1, x_2)$ sits in
# about $0.7N$ eligible inputs (one per $x_3$ whose $f_2$ fact is seen), so a small training
# set misses many of them; an $f_2$ fact $(b, x_3)$ sits in one eligible input per seen $f_1$
# pair that produces $b$, so its chances also depend on the pre-image of $b$. The next table
# regenerates the dataset at several training sizes (same seed, so the same tables and split)
# and counts the used facts.

# %%
ch01.usage_by_training_size_view(ch01.usage_by_training_size(N, n_train, seed))

# %% [markdown]
# ## 1.5 Test types: which facts an input needs
#
# The test set mixes several kinds of input, `test_size_per_type` of each; apart from the first
# kind, no test input is a training input:
#
# - `train_inferred`: a sample of training inputs themselves (does the model fit its data?);
# - `type_0`: unseen inputs whose facts were all used in training: new *combinations* of known
#   facts. This is the in-distribution (ID) generalisation test, and the one coverage explains;
# - `type_1`, `type_2`, ...: out-of-distribution (OOD) inputs, which need at least one fact
#   training never used.
#
# The OOD type is a bit pattern. With $s_1, s_2$ the used-seen flags of an input's $f_1$ and
# $f_2$ facts, let bits $= 2 s_1 + s_2$; the type is `type_0` when bits $= 3$ (both used) and
# `type_{bits+1}` otherwise. So `type_1` needs two unknown facts, `type_2` only an unknown
# $f_1$ fact, `type_3` only an unknown $f_2$ fact. Three-hop tasks use three bits the same way.
# The cross-table recomputes the flags of every test item from the tables and checks the rule.

# %%
flags = ch01.fact_flags(dataset)
display(ch01.type_bits_view(flags))
ood = flags[flags["type"] != "train_inferred"]
assert (ch01.types_from_bits(ood) == ood["type"].to_numpy()).all(), "test types disagree with the bit rule"
print(f"bit rule holds for all {len(ood)} non-training test items")

# %% [markdown]
# How common is each type among *all* $N^3$ inputs, and how does that compare with the test set?
# The upper bar splits every possible input by type (the training set itself in grey); the lower
# bar is the test set, which draws the same number from each type, so rare kinds of input get
# as much weight as common ones.

# %%
shares = ch01.type_share_frame(dataset.population, len(dataset.train_inputs), dataset.test_types)
share_chart = chapter.save(ch01.type_share_chart(shares), "01_type_proportions")
display(ch01.type_counts_view(shares))
share_chart

# %% [markdown]
# `type_2` and `type_3` (one unknown fact) are each about $0.7 \times 0.3 = 21\%$ of the input
# space, `type_1` (two unknown facts) about $0.3^2 = 9\%$, and the ID inputs about 49%, of which
# the training set takes `n_train`. When a type has fewer inputs than `test_size_per_type` (at
# small $N$), the test set simply takes all of them.
#
# ## 1.6 On disk: the authors' format
#
# `covlib` writes a dataset as a folder in the authors' own format, so that datasets made by
# their scripts and by `covlib` are interchangeable. The folder name describes the dataset
# (task, $N$, `n_train`, whether hops use different tables, plain answers vs chain of thought).
# `ensure_dataset` writes it once and reuses it on later runs with the same config.

# %%
folder = ch01.ensure_dataset(config, data_root)
print(ch01.readable_path(folder))
display(ch01.files_view(folder))
print((folder / "covlib.json").read_text())

# %% [markdown]
# Each item is a pair of strings: the prompt `input_text` (the input tokens, no separators), and
# the `target_text` the model should produce, which repeats the prompt, then gives the answer
# (after the bridges, in chain-of-thought data) and the end token `</a>`. Test items carry their
# `type`. Here are the first training items and one test item of each type:

# %%
train_items = json.loads((folder / "train.json").read_text())
test_items = json.loads((folder / "test.json").read_text())
display(ch01.items_view(train_items[:3]))
display(ch01.items_view(ch01.first_of_each_type(test_items)))

# %% [markdown]
# Reading the folder back with `covlib.tasks.folders.load_dataset` gives token-id arrays, and they match the
# dataset we generated in memory, item for item:

# %%
same = ch01.matches_generated(ch01.load_dataset(folder), dataset)
print("; ".join(f"{check}: {equal}" for check, equal in same.items()))
assert all(same.values())

# %% [markdown]
# ## 1.7 Summary
#
# The numbers that define this chapter's dataset, all computed above:

# %%
display(ch01.summary_view(ch01.dataset_summary(dataset)))
metrics_file = record_metrics(ch01.dataset_metrics(dataset))

# %% [markdown]
# **What to carry forward.** A task is a graph of random tables; training sees 70% of each table's
# facts, and only through complete examples; the ID test (`type_0`) asks for new combinations
# of facts that training used, while the OOD types ask for facts it never used. A model that
# only matches patterns cannot know an unused fact, so OOD accuracy should stay at chance. The
# interesting question is which `type_0` inputs it *can* answer. Chapter 2 gives the paper's
# answer: those connected to the training data through enough evidence, its *coverage*.

# %% [markdown]
# ## Exercises
#
# 1. **How many inputs are ID-eligible?** Every primitive keeps 70% of its facts in the seen
#    split, and an input is ID-eligible when both of its facts are seen. Before running anything,
#    what share of the $N^3$ two-hop inputs do you expect to be eligible? Set `my_eligible_share`
#    in the parameters cell; the check compares it with the exact count of a fresh dataset at $N = 20$.
# 2. **Three hops.** What share of the $N^4$ `threehop` inputs do you expect to be eligible
#    (`my_threehop_share`), and why does it shrink with every hop?

# %% tags=["check"]
print("Exercise 1:", ch01.check_eligible_share(my_eligible_share, "twohop", seed, "my_eligible_share"))
print("Exercise 2:", ch01.check_eligible_share(my_threehop_share, "threehop", seed, "my_threehop_share"))

# %% tags=["solution"]
for exercise_task in ("twohop", "threehop"):
    fresh = ch01.generate(ch01.DatasetConfig(exercise_task, 20, 1, seed=seed, test_size_per_type=0))
    inputs = 20 ** fresh.task.n_inputs
    print(f"{exercise_task} at N=20: {fresh.eligible_count:,} of {inputs:,} inputs are ID-eligible "
          f"({fresh.eligible_count / inputs:.3f}); one factor 0.7 per hop predicts {0.7 ** len(fresh.task.hops):.3f}")
print("Each hop needs its own fact to be seen, independently of the others with probability 0.7: every hop "
      "multiplies the share by 0.7.")
