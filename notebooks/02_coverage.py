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
# # 2. Coverage: which unseen inputs a pattern matcher can reach
#
# A model that only matches patterns can still answer inputs it never saw, on one condition:
# it must be able to **substitute**. If two pieces of input have always behaved the same way in
# training, a pattern matcher may swap one for the other inside any surrounding context, and
# carry the answer across. The *coverage principle* turns this intuition into a precise
# statement about a training set: join inputs by such substitutions, and the inputs reachable
# from training data are the ones a pattern matcher can be expected to get right. Everything
# else (in particular every input whose computation uses a fact never seen in training) is out
# of reach, however large the model.
#
# This chapter defines the construction on the data of chapter 1, computes it exactly for every
# input with `covlib.coverage`, shows how the result depends on the amount of evidence required
# (the parameter $k$), and compares it with the authors' own script, which differs from the
# paper's definition in three ways.

# %% tags=["parameters"]
from typing import Optional  # papermill's parameter reader reads Optional[int], not int | None

preset = "default"  # "smoke" (tests: seconds), "default" (the book: about a minute), "paper" (the authors' scale)
N: Optional[int] = None  # tokens |X| of the main twohop dataset; None takes the preset's value
n_train: Optional[int] = None  # its training examples; None takes the preset's value
seed = 0  # dataset seed
max_k = 8  # largest evidence level k in tables and figures
example_N: Optional[int] = None  # tokens of the tiny worked example; None takes the preset's value
scaling_N: Optional[list[int]] = None  # token counts for the data-needed-for-coverage survey; None takes the preset's
out_dir = ""  # parent folder of dataset folders; "" means build/datasets/ of the repository
figures_dir = ""  # where figures go; "" means figures/<preset>/ under out_dir or build/ (make book: papers_figures/)
# your answers to the exercises (the end of the chapter); a check there says whether each is right
my_half_k: Optional[int] = None  # exercise 1: smallest k with fewer than half of the type_0 items covered

# %%
# ruff: noqa: E402, B018  (notebook style: imports after the parameters cell, charts as last expressions)
import json

import altair as alt
from IPython.display import display

import covlib.chapters.ch02_coverage as ch02
from covlib.book.setup import setup_chapter
from covlib.book.sweep import record_metrics

chapter = setup_chapter("02", preset, ch02.PRESETS, out_dir=out_dir, figures_dir=figures_dir,
                        N=N, n_train=n_train, example_N=example_N, scaling_N=scaling_N)
N, n_train, example_N, scaling_N = chapter["N"], chapter["n_train"], chapter["example_N"], chapter["scaling_N"]
data_root = chapter.root if out_dir else ch02.default_root()
print(f"preset={preset}: twohop N={N}, n_train={n_train}, seed={seed}, k up to {max_k}")

# %% [markdown]
# ## 2.1 Fragments, contexts and functional equivalence
#
# Pick a proper, non-empty subset $P$ of the input positions. The tokens of an input at the
# positions in $P$ form a **fragment**; the remaining tokens are its **context**. For `twohop`
# ($t = f_2(f_1(x_1, x_2), x_3)$) and $P = \{x_1, x_2\}$, the fragment is the pair $(x_1, x_2)$
# and the context is $x_3$.
#
# Two fragments $a$ and $a'$ are **functionally $k$-equivalent** with respect to the training
# set $D$ when
#
# * at least $k$ contexts $c$ are *shared*: both $(a, c)$ and $(a', c)$ are training inputs, and
# * no shared context separates them: $(a, c)$ and $(a', c)$ always have the same output.
#
# Equivalence is then closed transitively (if $a \sim a'$ and $a' \sim a''$, all three form one
# class), separately for each $P$. Note what the definition does *not* use: the hidden bridge
# $b = f_1(x_1, x_2)$. It sees only input-output pairs, exactly what a learner sees.
#
# A tiny example makes this concrete. Below, a `twohop` dataset with only a handful of tokens;
# we list, for $P = \{x_1, x_2\}$, the fragment pairs with the most shared contexts.

# %%
example = ch02.generate(ch02.DatasetConfig("twohop", example_N, n_train=int(0.3 * example_N**3), seed=seed,
                                           test_size_per_type=20))
ex_answers = example.evaluate(example.train_inputs)["t"]
ex_evidence = ch02.pair_evidence(example.train_inputs, ex_answers, example_N, (0, 1))
bridge_of = example.tables["f1"].reshape(-1)  # hidden: b = f1(x1, x2), indexed by fragment id x1*N + x2
pairs = ch02.fragment_pairs(ex_evidence, bridge_of, example_N)
print(f"twohop with N={example_N}: {len(example.train_inputs)} training inputs, "
      f"{len(ex_evidence)} contradiction-free fragment pairs over P = {{x1, x2}}")
display(ch02.fragment_pairs_view(pairs, rows=8))

# %% [markdown]
# Take the top pair and look at its evidence: every context $x_3$ in which both fragments occur
# in training, with the two outputs side by side. They agree everywhere, as they must when the
# two fragments share a bridge.

# %%
top = pairs.index[0]
a, a2 = int(ex_evidence.left[top]), int(ex_evidence.right[top])
display(ch02.shared_context_view(
    ch02.shared_context_answers(example.train_inputs, ex_answers, example_N, a, a2)))

# %% [markdown]
# Most fragment pairs are not so lucky. A pair that shares a context and disagrees there is
# separated for good, whatever else it agrees on; and a pair that shares only one or two
# contexts may agree by accident: with $N$ possible outputs, two unrelated fragments give the
# same output in a shared context with probability about $1/N$. This is why the definition
# needs the threshold $k$. The next figure measures it on the main dataset: for each $k$, how
# many fragment pairs the classes merge, and which share of them really have the same hidden
# bridge. At $k = 1$ the classes mix unrelated fragments; from $k = 3$ on they are almost pure.

# %%
config = ch02.DatasetConfig("twohop", N, n_train, seed=seed)
folder = ch02.ensure_dataset(config, data_root)
data = ch02.load_dataset(folder)
truth = ch02.generate(config)  # the hidden tables, for checking what the data alone reveals
evidence = ch02.all_pair_evidence(data.train.inputs, data.train.answers, N)
purity = ch02.purity_by_k(data.train.inputs, data.train.answers, N, truth.tables["f1"].reshape(-1),
                          max_k, evidence)
display(ch02.purity_view(purity))
chapter.save(ch02.purity_chart(purity), "02_equivalence_purity")

# %% [markdown]
# ## 2.2 The substitution graph and k-coverage
#
# Now connect inputs. The **substitution graph** has a node for *every* input in $X^m$ (seen
# in training or not) and an edge between two inputs that differ only on some $P$ and whose
# fragments over $P$ are in one class. No output label is used. An input is **$k$-covered**
# when it is connected to some training input; its **$k$-cutoff** is the largest $k$ at which
# it is covered (0 if it is not covered even at $k = 1$). Raising $k$ removes equivalences, so
# covered sets shrink as $k$ grows, and one sweep from high evidence to low gives every input
# its cutoff (`covlib.coverage.exact.coverage_sweep`: evidence is counted once per $P$, classes are
# merged level by level, and the components of the $N^m$-node graph are tracked without ever
# listing its edges).
#
# Around a single input, the graph is small enough to draw. Below, at $k = 3$, two ID test
# inputs: one covered (its fragment $(x_1, x_2)$ is equivalent to fragments that occur with the
# same $x_3$ in training) and one not covered. Among a few candidates of each kind we draw the
# one with the most neighbours (at most four per $P$ are drawn; the printed counts are complete).
# The uncovered input is not isolated: it has equivalent neighbours, but none of them, nor
# their neighbours, is a training input.

# %%
test_cutoffs = ch02.k_cutoffs(data.train.inputs, data.train.answers, N, queries=data.test.inputs, max_k=max_k)
type0 = data.test.types == "type_0"
pools = [data.test.inputs[type0 & (test_cutoffs >= 3)], data.test.inputs[type0 & (test_cutoffs < 3)]]
graphs = ch02.neighbourhood_examples(data.train.inputs, data.train.answers, N, pools, evidence, seed,
                                     k=3, candidates=20, max_per_subset=4)
graph_charts = []
for graph in graphs:
    center = ch02.graph_center(graph)
    print(f"input {center}: neighbours at k=3 per P = {ch02.neighbour_counts(graph)}")
    graph_charts.append(ch02.neighbourhood_chart(
        graph, seed=seed, width=380, height=300, title=f"{center}: {graph.nodes[center]['status']} at k=3"))
chapter.save(alt.vconcat(*graph_charts).resolve_scale(color="independent"), "02_substitution_graph")

# %% [markdown]
# ## 2.3 Coverage by k, per test type
#
# `covlib coverage DATASET_DIR` (here called from Python) writes two files next to the
# dataset: `test_annotated.json`, every test item with its integer `k_cutoff` plus, as the
# authors' tools expect, a copy of each `type_0` item whose type is `covered_{k}`; and
# `coverage.json`, the share covered per test type and $k$, with the command that regenerates
# it. Chapter 3 reads the annotation to group test accuracy by $k$-cutoff.

# %%
table = ch02.annotate_dataset(folder, max_k=max_k)
print(json.loads((folder / "coverage.json").read_text())["command"])
display(ch02.coverage_percent_view({"paper's definition": table}, "test items k-covered (%)"))
reference = ch02.TYPE0_COVERAGE_TWOHOP_30_4000 if (N, n_train) == (30, 4000) else None
chapter.save(ch02.coverage_by_k_chart(table, reference=reference, k_slider=3), "02_coverage_by_k")

# %% [markdown]
# Read the figure from left to right. The dashed line marks $k = 3$, with each type's share covered
# there written beside its point; in the live chart a slider below the figure moves it to another $k$.
# At $k = 1$ everything is covered: chance agreements chain all fragments together, which is why the paper calls $k = 1$ degenerate. From $k = 3$ on, the
# picture the coverage principle predicts appears:
#
# * **training items** are covered at every $k$ (they are the roots of the graph);
# * **ID items (`type_0`)** stay mostly covered at $k = 3$ and then fall steadily as the
#   required evidence grows: their $k$-cutoffs spread over several values, which chapter 3 uses
#   to show that items with more evidence are learned first;
# * **OOD items** (types 1-3, whose computation uses a fact never seen in training) drop to
#   zero. `type_3` (only $f_1$ seen) holds out longest: its fragment $(x_1, x_2)$ has a known
#   bridge, but the fact $f_2(b, x_3)$ it needs is never shown, so no chain of substitutions
#   reaches it once chance agreements are filtered out.
#
# Types 1 and 2 lie on top of each other. Where the dataset is the paper's sanity case
# (`twohop`, $N = 30$, 4,000 examples), black crosses mark the `type_0` curve the paper
# reports. Our exact computation agrees to within a few points up to $k = 4$ and sits 4-5 points higher at $k = 5, 6$ across seeds; the graph over
# all of $X^m$ and the graph over only training and `type_0` inputs give identical numbers here,
# so the gap is not about which nodes are included.

# %% [markdown]
# ### What $k$ counts, and where it misleads
#
# The definition counts shared contexts: $k$ contexts in which two fragments both occur and agree. It does not ask
# whether those agreements are independent. In two-hop the equivalences that matter are over $P = \{x_1, x_2\}$,
# whose context is the single position $x_3$: every shared context is another value of $x_3$, another chance for
# the two fragments to disagree. Where a context has two positions or more, the $k$ contexts can share one
# coincidence. Take a first hop that reads three inputs, $b = f_1(x_1, x_2, x_3)$; $t = f_2(b, x_4)$. Two fragments
# $(x_2, x_3)$ and $(x_2', x_3')$ that happen to give one bridge for a single $x_1$ (a 1-in-$N$ chance) agree in
# every context $(x_1, x_4)$ with that $x_1$, so $k$ such contexts make them $k$-equivalent although they differ for
# every other $x_1$. In a dataset of this task ($N = 10$, 2,000 training examples), per $P$: the 3-equivalent
# fragment pairs, how many are truly equivalent (the same output in every context of $X^m$), and how many rest on
# contexts in which some position takes fewer than 3 values:

# %%
display(ch02.coincidence_pairs_view(ch02.coincidence_pairs(ch02.COINCIDENCE_TASK, 10, 2000, seed)))

# %% [markdown]
# The pairs over $\{x_1, x_2, x_3\}$ share a bridge and are real (all or nearly all of them); every other pair is a
# coincidence, and most of those over two positions rest on contexts that share a value. Chains of such equivalences reach inputs no
# true chain can: items whose facts were never seen come out covered, and so do ID items whose true evidence is
# thin. Counted through true equivalences only, no OOD item is covered here (one could be only where the random
# tables themselves make two fragments interchangeable in every context, which small $N$ allows now and then):

# %%
display(ch02.coincidence_coverage_view(ch02.coincidence_coverage(ch02.COINCIDENCE_TASK, 10, 2000, seed)))

# %% [markdown]
# So $k$-coverage describes the data, not the task: it says which inputs the data's agreements connect,
# coincidences included. In two-hop at the sizes this book trains, the two counts agree on the ID items; in a task
# whose fragments meet in contexts of several positions they can differ by half the ID test set. A predictor of the
# data a task needs must not count the coincidences: chapter 10 reads coverage through true equivalences only, and
# measures how far the definition's count moves on each task.

# %% [markdown]
# ## 2.4 The authors' script, side by side
#
# The authors published a coverage script with their code. It differs from the paper's
# definition in three ways, and the differences matter for the numbers the paper reports:
#
# 1. **Only some inputs are nodes**: its graph holds the training inputs and the `type_0` test
#    inputs, not all of $X^m$.
# 2. **The output label is in the edge condition**: two inputs are joined only if they also
#    have the same true output. That is an oracle no learner has.
# 3. **The class key omits $P$**: the union-find is keyed by the fragment's token values alone,
#    so a fragment $(3, 7)$ at positions $\{x_1, x_2\}$ and a fragment $(3, 7)$ at positions
#    $\{x_2, x_3\}$ are the same key, and classes built for one $P$ leak into another.
#
# (It also crashes once an item is covered at $k \geq 9$; `covlib.coverage.authors` reproduces
# the algorithm without that crash.) The figure applies both algorithms to the same dataset;
# for types other than `type_0` the authors' construction is applied with that type's items in
# place of `type_0`.

# %%
answers_test = data.test.answers
authors = ch02.authors_sweep(data.train.inputs, data.train.answers, N, data.test.inputs, answers_test, data.test.types,
                             max_k=max_k)
authors_table = ch02.coverage_table(authors.cutoffs, data.test.types, max_k, authors.in_train)
modes_chart = chapter.save(ch02.coverage_modes_chart(
    {"paper's definition (covlib)": table, "authors' script": authors_table}), "02_faithful_vs_authors")
display(ch02.coverage_percent_view({"definition": table, "authors' script": authors_table},
                                   "test items k-covered (%), by algorithm"))
modes_chart

# %% [markdown]
# The authors' script covers more at high $k$ and, strikingly, covers OOD items that the
# definition never reaches: colliding keys from different positions create spurious classes,
# and the label condition then keeps exactly the spurious edges that happen to be consistent.
# Coverage that survives at every $k$ for a few percent of items is the signature of the
# collisions. The book uses the paper's definition throughout.

# %% [markdown]
# ## 2.5 How much data covers the ID test set?
#
# Coverage is cheap to compute, so we can ask the question the paper answers with many
# training runs, from the data side alone: how many training examples does it take before
# most ID inputs are covered? For each $N$ we bisect on the number of training examples until
# 90% of `type_0` items are 3-covered, then fit a power law $n \approx c N^a$.

# %%
survey = ch02.coverage_survey(scaling_N, seed)
survey_fit = ch02.power_fit(survey["N"], survey["n_train"])
prefactor, exponent = survey_fit["a"], survey_fit["c"]  # n ≈ prefactor · N^exponent
display(ch02.survey_view(survey))
print(f"fit: n ≈ {prefactor:.2f} · N^{exponent:.2f}  (paper, from training runs: n ≈ 3.48 · N^{ch02.EXPONENTS['twohop']}; "
      "its early draft fit N^2.54 is superseded). Chapter 4 measures the requirement by training.")

# %% [markdown]
# Around each of those sizes, the share of `type_0` items 3-covered, one line per $N$ (in the live
# chart a slider shows $k$ = 2 and 4 too; drag to pan along the data axis, scroll to zoom):

# %%
curve = ch02.coverage_vs_data("twohop", scaling_N, ch02.survey_sizes(survey), ks=(2, 3, 4),
                              seed=seed)
chapter.save(ch02.coverage_vs_data_chart(curve, k=3), "02_coverage_vs_data")

# %% [markdown]
# Two things stand out. Coverage switches on abruptly: below a threshold almost nothing is
# covered, a factor of two above it almost everything is. And the threshold grows faster than
# $N^2$: the amount of data needed to cover the ID test set tracks the amount the paper finds
# is needed to *learn* it (the last column, from the authors' training runs). Chapter 3 trains
# a model and checks the link item by item.

# %%
metrics_file = record_metrics(ch02.coverage_metrics(N, n_train, table, purity, max_k, exponent))

# %% [markdown]
# ## Summary
#
# * Functional $k$-equivalence groups fragments that the training data shows to behave alike in
#   at least $k$ shared contexts; for $k \geq 3$ these groups recover the hidden bridge classes
#   almost perfectly, while $k = 1$ mixes unrelated fragments.
# * The substitution graph over all inputs turns those classes into reachability: an input's
#   $k$-cutoff is the largest $k$ at which it is connected to training data. OOD inputs are
#   never reached at meaningful $k$; ID inputs are reached with varying strength.
# * The authors' script adds an output-label oracle and lets fragments from different positions
#   collide, which inflates coverage and even reaches OOD inputs.
# * The data needed to cover the ID test set grows faster than quadratically in $N$, in line
#   with the data the paper needs to train models to generalise.
#
# Next, chapter 3 trains a transformer on the default dataset and shows that the $k$-cutoffs
# computed here predict which test items it learns, and when.

# %% [markdown]
# ## Exercises
#
# 1. **Evidence threshold.** In the coverage table of this chapter's dataset, at which smallest
#    $k$ does the share of covered ID (`type_0`) items fall below one half? Set `my_half_k` in
#    the parameters cell; the check reads the answer off the table.
# 2. **More data, more coverage.** The cell below covers a training set twice this chapter's
#    `n_train` (or, where that does not fit in the ID pool of this $N$, the largest the pool allows
#    beside a test set): how does the share of ID items 3-covered change? Coverage is cheap, so
#    set `exercise_n_train` to a few other values.

# %% tags=["check"]
print("Exercise 1:", ch02.check_half_k(my_half_k, table))

# %% tags=["solution"]
type0 = table[table["type"] == "type_0"].set_index("k")["covered"]
print("Exercise 1: the share of type_0 items covered, by k:", ", ".join(f"k={k}: {v:.0%}" for k, v in type0.items()))
print(f"the smallest k with fewer than half covered: {ch02.half_covered_k(table)}")

# %%
exercise_n_train = None  # exercise 2: a training-set size to try (None: twice n_train, or the most the ID pool allows)
print("Exercise 2:", ch02.more_data_text(N, n_train, exercise_n_train, seed, table))
