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
# # 6. Path ambiguity: when one input reaches the answer twice
#
# In two-hop composition every input travels one road to the answer: $x_1$ and $x_2$ meet in the
# bridge $b = f_1(x_1, x_2)$, and $b$ meets $x_3$ in $t = f_2(b, x_3)$. The paper's **non-tree**
# task changes one arrow: the second function also reads $x_2$,
#
# $$b = f_1(x_1, x_2), \qquad t = f_2(b, x_2, x_3),$$
#
# so $x_2$ reaches $t$ by two paths, through $b$ and directly. The paper calls this *path
# ambiguity* and reports that it is much harder to learn: non-tree models do not reach perfect
# in-domain generalisation even with nearly all the in-domain data, and their hidden states group
# items by $(b, x_2)$ rather than by $b$.
#
# This chapter measures the three parts of that claim against two-hop at the same $N$ and
# training-set size:
#
# 1. **coverage**, exactly: why the non-tree task is covered less by the same amount of data;
# 2. **learning**: accuracy over training, and the required data $n_\text{req}$ of both tasks;
# 3. **context-dependent states**: IICG by $b$, by $x_2$ and by $(b, x_2)$, the logit lens, and
#    causal tracing with three ways of corrupting the input.
#
# At the default preset the two trained models (4 layers, width 128) ship with the book
# (`data/ambiguity/`, made by `covlib ship ambiguity`) and the required-data searches are rows of
# chapter 4's probe table (`data/scaling/probes.csv`); the commands that fill both are in
# `data/ambiguity/COMMANDS.txt`. What is not in the cache yet is said, with its command.

# %% tags=["parameters"]
from typing import Optional  # papermill's parameter reader reads Optional[float], not float | None

preset = "default"  # "smoke" (tests: tiny models and a miniature search, seconds), "default" (reads the cache), "paper"
recompute = False  # True: train the two default models here (about 30 CPU-minutes) into data/ambiguity/
k = 3  # evidence threshold of coverage (the paper's smallest meaningful value)
max_items = 2000  # test items per IICG selection
max_pairs = 1000  # (clean, corrupted) pairs per causal-tracing variant
table = ""  # the probe table; "" means data/scaling/probes.csv (smoke: a fresh table under out_dir)
out_dir = ""  # where datasets and smoke runs go; "" means build/ of the repository
figures_dir = ""  # where figures go; "" means figures/<preset>/ under out_dir or build/ (make book: papers_figures/)
# your answers to the exercises (the end of the chapter); a check there says whether each is right
my_share_x2_k2: Optional[float] = None  # exercise 1: share of merged non-tree fragment pairs at k 2 that share x2
my_pool_coverage: Optional[float] = None  # exercise 2: non-tree's k-covered share of its whole ID pool at n_big

# %%
# ruff: noqa: E402, B018  (notebook style: imports after the parameters cell, charts as last expressions)
import pandas as pd
from IPython.display import Markdown, display

import covlib.chapters.ch06_path_ambiguity as ch06
from covlib.book.setup import setup_chapter
from covlib.book.sweep import record_metrics

chapter = setup_chapter("06", preset, ch06.searches.PRESETS, out_dir=out_dir, figures_dir=figures_dir)

# %% [markdown]
# The two models: trained here at the smoke preset, read from the cache otherwise.

# %%
if chapter["note"]:
    print(chapter["note"])
runs = ch06.shipped.shipped_runs(preset)
N, n_train = runs["nontree"].dataset["num_tokens"], runs["nontree"].dataset["n_train"]
test_size = runs["nontree"].dataset["test_size_per_type"]
dest, work, ready = ch06.ensure_shipped(runs, chapter["train_here"], ch06.shipped.DATA_DIR, chapter.root,
                                        "ambiguity-smoke", recompute)
print(ch06.shipped.models_status(preset, N, n_train, dest, ready))
if not all(ready.values()):
    display(Markdown(ch06.shipped.missing_models_note(runs, ready)))

# %% [markdown]
# ## 6.1 Why coverage is smaller
#
# Coverage (chapter 2) lets a model carry what it learned about one fragment to another when the
# training data shows the two behave identically: fragments $(x_1, x_2)$ and $(x_1', x_2')$ are
# $k$-equivalent when at least $k$ contexts $x_3$ appear with both and give the same answers.
#
# In two-hop, every fragment with the same bridge $b$ gives the same answers in every context:
# $t = f_2(b, x_3)$ does not care which $(x_1, x_2)$ made $b$. In non-tree it does:
# $t = f_2(b, x_2, x_3)$, and $f_2$ is a random table over all three arguments, so two fragments
# are equivalent only when they share $b$ **and** $x_2$. For a fixed $x_2$, the $x_1$ that share a
# bridge are the collisions of the random column $f_1(\cdot, x_2)$: about one other $x_1$ per
# bridge, against about $N$ fragments per bridge in two-hop. Equivalence classes shrink from
# roughly $N$ fragments to two or three.
#
# First, what the $k$-equivalence classes of first-hop fragments actually group, for both tasks
# on datasets of the same $N$, $n_\text{train}$ and seed (computed exactly from the training sets):

# %%
pair = ch06.coverage.paired_datasets(N, n_train, seed=0, test_size_per_type=test_size)
merged = pd.concat([ch06.coverage.merged_pairs(ds, k) for ds in pair.values()], ignore_index=True)
display(ch06.tables.merged_reader_table(merged))
merged_chart = ch06.charts.merged_pairs_chart(merged, f"What {k}-equivalence classes of (x1, x2) group "
                                              f"(N = {N}, {n_train:,} examples)")
display(chapter.save(merged_chart, "06_equivalence_classes"))
display(Markdown(ch06.coverage.classes_text(merged, N)))

# %% [markdown]
# Smaller classes mean fewer substitutions, and so less coverage. The table below counts, for
# both tasks, the share of inputs connected to a training input at each $k$, over two
# populations:
#
# * the **ID test** items (`type_0`): inputs whose every fact is used by some training item
#   (chapter 1). For non-tree this is a selection: the fact $f_2(b, x_2, x_3)$ of an input is in
#   training only if some training item has the same $x_2$, $x_3$ and another $x_1'$ with the
#   same bridge;
# * the **whole ID pool**: every input whose facts are in the seen split (the inputs training
#   could have drawn), less the training set.
#
# In the chart, a click on a task in the legend picks out its two lines.

# %%
cov = ch06.coverage.coverage_comparison(N, n_train, seed=0, max_k=8, test_size_per_type=test_size)
cov_chart = ch06.charts.coverage_compare_chart(cov, f"k-coverage of two-hop and non-tree (N = {N}, "
                                               f"{n_train:,} examples)")
display(chapter.save(cov_chart, "06_coverage_by_k"))
display(ch06.tables.coverage_reader_table(cov))
type0_share = ch06.coverage.type0_shares(cov)
coverage_k3 = {t: ch06.coverage.cov_at(cov, t, "type_0", k) for t in ch06.shipped.TASKS}
display(Markdown(ch06.coverage.coverage_text(cov, k)))

# %% [markdown]
# How much data does each task need before 99% of its items are covered? For every $N$ the
# cache holds, a log grid of training-set sizes up to the largest the required-data search
# tries (the ID pool less a test set), interpolated where the share first reaches the target.

# %%
need = ch06.data_need.coverage_need_table(chapter["need_N"], k, test_size)
if not len(need):
    display(Markdown(f"**Not in the cache yet:** `{ch06.data_need.COVERAGE_NEED}`. Fill it with the first command "
                     "of `data/ambiguity/COMMANDS.txt` (about 2 CPU-minutes)."))
need_table = ch06.data_need.need_summary(need, k)
if len(need_table):
    display(ch06.tables.need_reader_table(need_table, k))
    display(Markdown(ch06.data_need.need_text(need_table, k)))

# %% [markdown]
# ## 6.2 Learning
#
# The two default models are trained the same way on datasets of the same size: $N$ and
# $n_\text{train}$ are chosen where two-hop generalises (chapter 4 measures its required data at
# this $N$ a little below this size). The curves show ID test accuracy and accuracy on training
# items over the run.

# %%
metrics = {name: ch06.load_metrics(dest / run.folder) for name, run in runs.items() if ready[name]}
if metrics:
    curves, series = ch06.combine_curves(metrics, {"ID test (type_0)": "acc/type_0", "training items": "acc/train_inferred"})
    curve_chart = ch06.accuracy_curves_chart(curves, series, f"Two-hop and non-tree, N = {N}, {n_train:,} examples",
                                             colors=ch06.charts.CURVE_COLORS, chance=1 / N)
else:
    curve_chart = ch06.pending_chart("Two-hop and non-tree learning curves", "covlib ship ambiguity")
display(chapter.save(curve_chart, "06_learning_curves"))
final_type0 = {name: ch06.final_value(metrics.get(name)) for name in runs}
if len(metrics) == 2:
    display(Markdown(ch06.summary.learning_text(metrics, final_type0, coverage_k3, k, N)))
else:
    display(Markdown("The learning curves need both models (see the top of the chapter for the command)."))

# %% [markdown]
# How much data does non-tree need to reach 99% ID accuracy, if it can at all? The searches of
# chapter 4 (same model, same probe rules: success at the first evaluation at 0.99, give up 100
# epochs after fitting the training set) run for both tasks; a search that fails at the largest
# size it may try (the ID pool less a test set of 1,000 inputs) is *unreachable*.

# %%
table_path = ch06.searches.probe_table_path(table, chapter.root, chapter["train_here"])
twohop_cells, nontree_cells = ch06.searches.search_cells(chapter["search_N"], chapter["model"])
if chapter["train_here"]:
    ch06.search(twohop_cells + nontree_cells, table_path, chapter.root / "ambiguity-smoke" / "scaling", chapter["rules"],
                log=None)
probes = ch06.read_probes(table_path)
nontree_summary = ch06.search_summary(nontree_cells, probes)
twohop_summary = ch06.search_summary(twohop_cells, probes)
display(ch06.search_reader_table(pd.concat([twohop_summary, nontree_summary], ignore_index=True),
                                 ch06.searches.SUMMARY_COLUMNS))
display(Markdown("Non-tree: " + ch06.describe_cells(nontree_summary, "non-tree") + " Two-hop at the same N: "
                 + ch06.describe_cells(twohop_summary, "two-hop")))
raised_cap = ch06.searches.raised_cap_result(nontree_cells, probes)
if ch06.searches.raised_cap_note(raised_cap):  # "" where the searches have no N = 40 (the smoke miniature)
    display(Markdown(ch06.searches.raised_cap_note(raised_cap)))
pending_cells = nontree_summary[nontree_summary["status"].isin(["not started", "searching"])]
if len(pending_cells) and not chapter["train_here"]:
    display(Markdown(f"{len(pending_cells)} non-tree cell(s) are not finished; "
                     f"`{ch06.experiment_command(ch06.searches.EXPERIMENTS['nontree'])}` resumes them."))

# %%
points, lines, reference = ch06.searches.required_data_frames(twohop_summary, nontree_summary, need, k)
if len(points) or len(reference) or len(lines):
    need_chart = ch06.required_data_chart(points, lines, reference,
                                          title="Training examples needed: measured, and for 99% coverage of type_0",
                                          triangles="the largest training set tried where non-tree never reached 99%")
else:
    need_chart = ch06.pending_chart("Required data of two-hop and non-tree",
                                    ch06.experiment_command(ch06.searches.EXPERIMENTS["nontree"]))
display(chapter.save(need_chart, "06_required_data"))

# %% [markdown]
# ## 6.3 Context-dependent states
#
# Chapter 5 found two-hop's model building a *cluster per bridge value* in its residual stream at
# position $x_2$. If non-tree's model must treat $(x_1, x_2)$ fragments as alike only when they
# share $(b, x_2)$, its clusters should follow $(b, x_2)$, not $b$. IICG measures this for each
# grouping: the mean cosine of residual vectors within a group minus that between groups, at each
# (layer, position), on the ID test items, one item per fragment $(x_1, x_2)$ as the authors do.
#
# A caution that matters here: grouping by a key that contains an input, such as $x_2$ or
# $(b, x_2)$, makes the vectors at position $x_2$ alike by construction (they start from the same
# token embedding). The **by $x_2$** map is that baseline; $(b, x_2)$ carries bridge information
# only where it rises above it. Peaks are read at layers 1 and up (layer 0 is the embeddings).
#
# The dropdown above the maps keeps the panels of one grouping key, so the two tasks can be read
# side by side; a cell's tooltip gives its value and the items and groups it rests on.

# %%
models = {name: ch06.open_shipped(run, dest, work / "datasets") for name, run in runs.items() if ready[name]}
iicg, too_small = ch06.inside.iicg_by_key(models, max_items)
for problem in too_small:  # a selection too small to group (smoke-sized data)
    print(problem)
if len(iicg):
    id_maps = iicg[iicg["split"] == "type_0"]
    heat = ch06.charts.iicg_by_key_chart(id_maps, "IICG of ID test items, by grouping key")
    peaks = ch06.iicg_peaks(iicg)
    peak_chart = ch06.charts.iicg_keys_chart(peaks[peaks["split"] == "type_0"],
                                             "Largest IICG of ID test items, by grouping key")
    display(ch06.tables.peaks_reader_table(peaks))
else:
    heat = ch06.pending_chart("IICG by grouping key", "covlib ship ambiguity")
    peak_chart = ch06.pending_chart("Largest IICG by grouping key", "covlib ship ambiguity")
    peaks = pd.DataFrame(columns=["task", "split", "group_by", "layer", "position", "iicg"])
display(chapter.save(heat, "06_iicg_by_key"))
display(chapter.save(peak_chart, "06_iicg_peaks"))

# %%
iicg_max = ch06.inside.iicg_maxima(peaks)
x2_same_cell = ch06.inside.x2_at_bridge_peak(iicg, peaks)
if x2_same_cell is not None:
    display(Markdown(ch06.inside.iicg_text(peaks, iicg_max, x2_same_cell)))

# %% [markdown]
# Can the bridge be read out as a token? The logit lens passes each layer's residual through the
# final LayerNorm and the unembedding and asks how often $b$ (or the answer $t$) is the top token.

# %%
lens = ch06.inside.lens_table(models, max_items)
if len(lens):
    lens_chart = ch06.layer_position_heatmap(lens.assign(panel=lens["task"] + ": " + lens["target"]), "top1",
                                             "Logit lens: share of ID items whose top token is ...", facet="panel",
                                             domain=(0, 1), scheme="greens")
    lens_best = ch06.inside.lens_bridge_best(lens)
    display(Markdown(ch06.inside.lens_text(lens_best, N)))
else:
    lens_chart = ch06.pending_chart("Logit lens", "covlib ship ambiguity")
    lens_best = {}
display(chapter.save(lens_chart, "06_logit_lens"))

# %% [markdown]
# Where does each path run? Causal tracing (chapter 5) patches one residual vector of a corrupted
# run into the clean run and counts how often the prediction becomes the corrupted answer. The
# clean inputs are training items (which both models fit); non-tree has three corruptions:
#
# * **change $x_1$**: the bridge changes, $x_2$ does not;
# * **change $x_2$ keeping $b$**: only the direct path from $x_2$ to $t$ carries the change;
# * **change $x_2$ changing $b$**: both paths carry it.
#
# Two-hop has no "keep $b$" variant: there, changing $x_2$ without changing $b$ never changes the answer.

# %%
trace, skipped = ch06.inside.trace_models(models, max_pairs)
for what, why in skipped.items():
    print(f"{what}: {why}")
if len(trace):
    rank = trace[trace["metric"] == "rank"]
    trace_chart = ch06.layer_position_heatmap(rank.assign(panel=rank["task"] + ": " + rank["variant"] + " changed"),
                                              "value", "Causal tracing (rank): share of predictions flipped by one patch",
                                              facet="panel", domain=(0, 1), scheme="oranges", columns=5)
    display(ch06.tables.tracing_reader_table(rank))
else:
    trace_chart = ch06.pending_chart("Causal tracing", "covlib ship ambiguity")
    rank = pd.DataFrame(columns=["task", "variant", "layer", "position", "value", "pairs"])
display(chapter.save(trace_chart, "06_causal_tracing"))
if "nontree" in models and len(rank[rank["task"] == "nontree"]):
    display(Markdown(ch06.inside.tracing_text(rank, models["nontree"][0].cfg.n_layers)))

# %% [markdown]
# ## 6.4 Beside the paper
#
# The paper's numbers come from an 8-layer GPT-2 trained on a GPU at $N = 50$; the book's from a
# 4-layer, width-128 model at $N = 30$ on a CPU. The comparison is of direction and order, not
# of digits.

# %%
finished = ch06.searches.finished_cells(nontree_summary)
verdict = ch06.searches.search_verdict(finished)
comparison = ch06.summary.paper_comparison(N, n_train, verdict, final_type0, iicg_max, x2_same_cell, lens_best, rank)
display(ch06.frame_table(comparison))

# %%
display(Markdown(
    "Where the CPU-scale numbers differ, three reasons apply. The IICG values are cosines of raw, uncentred residual "
    "vectors of a narrower model (chapter 5 finds two-hop's peak higher than the paper's too), so their size is not "
    "comparable, only their order across keys. The book's $N$ is smaller: its non-tree ID pool holds "
    f"{pair['nontree'].eligible_count:,} inputs at N = {N} against about {ch06.NONTREE_FAILS_AT['eligible']:,} at "
    f"N = {ch06.NONTREE_FAILS_AT['N']}, and a search near the pool has few inputs left to test on. And the give-up rule "
    f"({ch06.ProbeRules().give_up_epochs:.0f} epochs after fitting, at most {ch06.ProbeRules().step_cap:,} steps) ends runs "
    "that a GPU budget would let continue."))

# %%
results = {
    "coverage_k3_twohop": coverage_k3["twohop"], "coverage_k3_nontree": coverage_k3["nontree"],
    "pool_coverage_k3_twohop": ch06.coverage.cov_at(cov, "twohop", "id_pool", k),
    "pool_coverage_k3_nontree": ch06.coverage.cov_at(cov, "nontree", "id_pool", k),
    "type0_share_of_pool_nontree": type0_share["nontree"],
    "merged_pairs_share_x2_twohop": ch06.coverage.merged_value(merged, "twohop", "x2"),
    "merged_pairs_share_bx2_nontree": ch06.coverage.merged_value(merged, "nontree", "b and x2"),
    "cover99_ratio_nontree_over_twohop_max": float(need_table["nontree / twohop (type_0)"].max()) if len(need_table)
    else float("nan"),
    "final_type0_twohop": final_type0["twohop"], "final_type0_nontree": final_type0["nontree"],
    "iicg_max_twohop_by_b": iicg_max[("twohop", "b")], "iicg_max_nontree_by_b": iicg_max[("nontree", "b")],
    "iicg_max_nontree_by_bx2": iicg_max[("nontree", "b,x2")], "iicg_max_nontree_by_x2": iicg_max[("nontree", "x2")],
    "iicg_nontree_bx2_gain_over_x2": iicg_max[("nontree", "b,x2")] - x2_same_cell if x2_same_cell is not None
    else float("nan"),
    "lens_bridge_top1_twohop": lens_best.get("twohop", float("nan")),
    "lens_bridge_top1_nontree": lens_best.get("nontree", float("nan")),
    "trace_keep_b_x2_upper_nontree": ch06.inside.trace_cell(rank, "nontree", "x2_keep_b", "x2") if len(rank)
    else float("nan"),
    "nontree_cells_finished": int(len(finished)),
    "nontree_cells_unreachable": int((nontree_summary["status"] == "unreachable").sum()),
    **raised_cap,
}
metrics_file = record_metrics(results)  # the numbers above, for sweeps and the book's snapshot

# %% [markdown]
# ## Summary

# %%
display(Markdown(ch06.summary.summary_text(merged, cov, N, n_train, k, final_type0 if len(metrics) == 2 else None,
                                           verdict if len(finished) else None, iicg_max if len(iicg) else None)))

# %% [markdown]
# ## Exercises
#
# 1. **What do the classes need?** Lower the evidence threshold to $k = 2$: what share of the pairs of non-tree
#    fragments that fall into one 2-equivalence class share $x_2$? Compute it with `ch06.coverage.merged_pairs`
#    on the non-tree dataset of `pair` and set `my_share_x2_k2` in the parameters cell. Is it higher or lower
#    than at $k = 3$ (the chart above), and why does weaker evidence let in pairs that do not share $x_2$?
# 2. **More data, more coverage?** `n_big` below is the largest training set the required-data search would try
#    at this $N$: the smaller of the two ID pools less a test set (twice $n_\text{train}$ does not fit in the pool
#    at the default preset). Compute `ch06.coverage.coverage_comparison` at `n_big` (same `N`, and
#    `test_size_per_type=test_size`) and set `my_pool_coverage` to non-tree's $k$-covered share of its *whole ID
#    pool*. Does it
#    approach 100%? Why not? (Hint: compare it with the pool's `type0_population` over its size `n`.)

# %%
n_big = ch06.coverage.largest_train_size(pair)  # exercise 2's training-set size, computed from the two ID pools
print(f"n_big = {n_big:,}")

# %% tags=["check"]
print("Exercise 1:", ch06.coverage.check_share_x2(my_share_x2_k2, ch06.coverage.merged_share(pair["nontree"], 2)))
print("Exercise 2:", ch06.coverage.check_pool_coverage(
    my_pool_coverage, ch06.coverage.pool_coverage(N, n_big, k, test_size_per_type=test_size), k))

# %% tags=["solution"]
merged_k2 = ch06.coverage.merged_pairs(pair["nontree"], 2).set_index("shared")
print(f"Exercise 1: at k = 2, {merged_k2.loc['x2', 'share']:.3f} of the merged non-tree pairs share x2")
at_big = ch06.coverage.coverage_comparison(N, n_big, max_k=k, test_size_per_type=test_size)
print(f"Exercise 2: at n_big = {n_big:,}, non-tree's {k}-covered share of its whole ID pool is "
      f"{ch06.coverage.cov_at(at_big, 'nontree', 'id_pool', k):.3f}")
