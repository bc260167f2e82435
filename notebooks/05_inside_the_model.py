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
# # 5. Inside the model
#
# Chapters 3 and 4 watched the model from outside: which test items it gets right, and how
# much data that takes. The coverage principle also makes a claim about what happens *inside*:
# if the model generalises by learning that fragments $(x_1, x_2)$ with the same bridge
# $b = f_1(x_1, x_2)$ behave alike, then somewhere in its residual stream those fragments
# should be represented alike, and the rest of the computation should read $b$ from there.
#
# Three analyses test this, each through TransformerLens hooks on the trained model:
#
# * **IICG** (intra-inter cosine gap): group test items by their bridge $b$, and compare the
#   cosine similarity of residual vectors within a group to that between groups. A positive gap
#   at some layer and position means the model has formed a *cluster per bridge value* there.
# * **Causal tracing** (activation patching): run the model on a clean input and on a corrupted
#   one that changes the bridge, and copy one residual vector from the corrupted run into the
#   clean one. If the prediction flips to the corrupted answer, that vector carried the bridge.
# * **Logit lens**: decode each layer's residual stream as if it were the last; is $b$ itself
#   readable as a token?
#
# The model is chapter 3's run at the edge of coverage (two-hop, $N = 30$, 4,000 examples,
# 10,000 steps), whose ID test items fall in every k-cutoff group. Its weights, at the end and
# at four checkpoints, ship with the book (`data/runs/`); the analyses take seconds.

# %% tags=["parameters"]
from typing import Optional  # papermill's parameter reader reads Optional[int], not int | None

preset = "default"  # "smoke" (tests: trains a tiny model, seconds), "default" (the shipped model), "paper"
run_dir = ""  # a run folder to analyse instead of the shipped one (its dataset is read from config.json)
max_items = 2000  # test items per IICG selection
max_pairs = 1000  # (clean, corrupted) pairs per causal-tracing map
out_dir = ""  # where the smoke preset trains its model; "" means build/ of the repository
figures_dir = ""  # where figures go; "" means figures/<preset>/ under out_dir or build/ (make book: papers_figures/)
# your answers to exercise 1 (the end of the chapter); a check there says whether they are right
my_peak_layer: Optional[int] = None  # the layer where IICG grouped by t peaks (ID test items)
my_peak_position: Optional[str] = None  # its position: "x1", "x2" or "x3"

# %%
# ruff: noqa: E402, B018  (notebook style: imports after the parameters cell, charts as last expressions)
import pandas as pd
from IPython.display import Markdown, display

import covlib.chapters.ch05_inside_the_model as ch05
from covlib.book.setup import setup_chapter
from covlib.book.sweep import record_metrics

chapter = setup_chapter("05", preset, ch05.PRESETS, out_dir=out_dir, figures_dir=figures_dir)

# %%
if chapter["note"] and not run_dir:
    print(chapter["note"])
# the smoke preset trains a tiny model here in seconds, its weights saved the way the shipped ones are
source, dataset_dir, weights = ch05.model_source(chapter["train"], run_dir, chapter.root)
model, ds, tables = ch05.open_run(source, dataset_dir, ch05.final_weights(source))
L, m = model.cfg.n_layers, ds.n_inputs
print(f"{source.name}: {L} layers, width {model.cfg.d_model}; dataset {ds.name}")
print((source / "COMMANDS.txt").read_text() if (source / "COMMANDS.txt").is_file() else "")

# %% [markdown]
# ## 5.1 The residual stream
#
# A transformer keeps one vector per position, the *residual stream*; every block reads it and
# adds its output back. For a two-hop prompt $(x_1, x_2, x_3)$ there are three positions, and
# the answer $t$ is predicted at the last one. We record the stream after the embeddings
# (layer 0) and after each of the $L$ blocks, for every test item, with `run_with_cache`
# restricted to those hooks: an array of items x layers x positions x width.

# %%
id_test = ds.test.inputs[ch05.split_items(ds, "type_0")][:max_items]
resid = ch05.residual_streams(model, id_test)
print(f"residual streams of {len(id_test)} ID test items: array of shape {resid.shape}")

# %% [markdown]
# ## 5.2 Do items with the same bridge cluster? (IICG by b)
#
# For each (layer, position), normalise every item's residual vector, and average the cosine
# similarity over all pairs of items that share the bridge $b$ (*within*) and over all pairs
# that do not (*between*). Their difference is the IICG. Following the authors, a group keeps
# one item per fragment $(x_1, x_2)$, so that items differing only in $x_3$ do not inflate the
# within-group similarity. Three selections of items: training items (ID train), unseen ID items
# (ID test), and OOD items whose first fact $f_1(x_1, x_2)$ was never seen (whose bridge the
# model has no way to know).

# %%
splits = {"ID train": "train_inferred", "ID test": "type_0", "OOD (first hop unseen)": "ood_first_hop"}
iicg_b = ch05.iicg_by_selection(model, ds, tables, splits, max_items)
heat = chapter.save(ch05.layer_position_heatmap(iicg_b, "iicg", "IICG grouped by the bridge b", facet="selection",
                                                domain=(-0.1, max(0.5, float(iicg_b["iicg"].max())))),
                    "05_iicg_by_bridge")
display(heat)

# %%
# the largest gap over every layer, leaving out cells high by construction
peaks = {label: ch05.iicg_peaks(iicg_b[iicg_b["selection"] == label]).iloc[0] for label in splits}
display(ch05.peaks_table(peaks))
id_peak = peaks["ID test"]
display(Markdown(
    f"For unseen ID items the gap peaks at layer {int(id_peak['layer'])}, position {id_peak['position']}: "
    f"IICG {id_peak['iicg']:.2f} (within {id_peak['within']:.2f}, between {id_peak['between']:.2f}). Training items "
    f"peak at layer {int(peaks['ID train']['layer'])}, {peaks['ID train']['position']} ({peaks['ID train']['iicg']:.2f}); "
    f"for OOD items the largest gap anywhere is {peaks['OOD (first hop unseen)']['iicg']:.3f}: there is no bridge "
    "cluster to join, because the model never saw the fact that would put them in one."))

# %% [markdown]
# ## 5.3 Better-covered items form tighter clusters
#
# Chapter 3 found that ID items with a higher k-cutoff are learned sooner. Split the ID test
# items by k-cutoff (k<3, k=3, k>3) and compute the same map for each group.

# %%
iicg_k, skipped = ch05.iicg_by_cutoff(model, ds, tables, max_items)
for note in skipped:  # a group too small to measure (smoke-sized data)
    print(note)
if len(iicg_k):
    at_peak = ch05.at_cell(iicg_k, id_peak)
    display(ch05.cutoff_peak_table(at_peak))
    heat_k = chapter.save(ch05.layer_position_heatmap(iicg_k, "iicg", "IICG by b, ID test items by k-cutoff",
                                                      facet="k_group"), "05_iicg_by_cutoff")
    display(heat_k)
    k_at = at_peak.set_index("k_group")["iicg"]
    display(Markdown(ch05.cutoff_note(k_at)))
else:
    k_at = pd.Series(dtype=float)

# %% [markdown]
# Every map of 5.2 and 5.3 in one chart: choose the items with the dropdown below it, and hover a
# cell for its cosines and counts.

# %%
ch05.iicg_explorer(ch05.explorer_frame(iicg_b, iicg_k), list(dict.fromkeys(iicg_b["position"])))

# %% [markdown]
# ## 5.4 Clusters form as generalisation does
#
# The same map at checkpoints across training, beside ID accuracy at those steps: the model
# first memorises (training accuracy near 100% within a few hundred steps) while ID accuracy
# stays low; the bridge clusters should appear as ID accuracy rises.

# %%
over = ch05.iicg_over_training(source, weights, ds, tables, id_peak, max_items)
display(ch05.over_training_table(over))
over_chart = chapter.save(ch05.over_training_chart(ch05.over_training_frame(over, id_peak),
                                                   "Bridge clusters and ID accuracy over training",
                                                   y_title="IICG at the peak cell, or ID accuracy"), "05_iicg_over_training")
display(over_chart)
corr = ch05.checkpoint_correlation(over)

# %% [markdown]
# ## 5.5 Where the bridge lives: causal tracing
#
# Clean inputs are training items $(x_1, x_2, x_3)$; each corrupted input changes $x_2$ so
# that the bridge and the answer change ($b \to b'$, $t \to t'$), every fact involved seen in
# training. Only pairs the model gets right on both inputs are traced. Patching the corrupted
# residual at (layer, position) into the clean run, the **rank** metric counts how often the
# prediction becomes $t'$, and the **prob** metric measures how much of the way
# $p(t')$ moves from its clean to its corrupted value. A second variant changes $x_1$ instead.

# %%
train_items = ds.test.inputs[ch05.split_items(ds, "train_inferred")]
trace = ch05.trace_table(model, tables, train_items, ["x2", "x1"], max_pairs=max_pairs)
trace_heat = chapter.save(ch05.layer_position_heatmap(trace.assign(panel=trace["variant"] + " changed, " + trace["metric"]),
                                                      "value", "Causal tracing: share of the prediction moved by one patched vector",
                                                      facet="panel", domain=(0, 1), scheme="oranges"), "05_causal_tracing")
display(trace_heat)
rank = ch05.rank_map(trace, "x2")
display(ch05.layer_map_table(rank, "Share of predictions flipped by one patched vector (x2 changed, rank metric)"))
last = f"x{m}"
rank_x1 = ch05.rank_map(trace, "x1")
display(Markdown(ch05.tracing_note(rank, rank_x1, L, last)))

# %% [markdown]
# Does the route differ between well- and barely-covered items? The same tracing with clean
# inputs drawn from ID test items of each k-cutoff group (only pairs the model gets right).

# %%
trace_k, skipped = ch05.tracing_by_cutoff(model, ds, tables, max_pairs)
for note in skipped:
    print(note)
if len(trace_k):
    display(ch05.layer_map_table(trace_k.pivot_table(index=["k_group", "layer"], columns="position",
                                                     values="value"), "Share flipped, by k-cutoff group of the clean item"))
    display(ch05.reader_table(trace_k.groupby("k_group", as_index=False)["pairs"].first(),
                              {"k_group": "k-cutoff group", "pairs": "pairs traced"}))

# %% [markdown]
# ## 5.6 Can the bridge be read out? The logit lens
#
# Pass each layer's residual vector through the final LayerNorm and the unembedding, as if the
# model stopped there, and ask where $b$ (and the answer $t$) rank among the tokens.

# %%
vals = tables.values(id_test)
lens = ch05.logit_lens(model, resid, {"bridge b": vals["b1"], "answer t": vals["t"]})
lens_heat = chapter.save(ch05.layer_position_heatmap(lens, "top1", "Logit lens: share of ID items whose top token is ...",
                                                     facet="target", domain=(0, 1), scheme="greens"), "05_logit_lens")
display(lens_heat)
b_best = ch05.best_cell(lens[lens["target"] == "bridge b"], "top1")
t_last = lens[(lens["target"] == "answer t") & (lens["layer"] == L) & (lens["position"] == last)]["top1"].iloc[0]
display(Markdown(
    f"The answer is readable at the last position from the upper layers (top token for {t_last:.0%} of ID items "
    f"after the last block). The bridge is not: its best cell (layer {int(b_best['layer'])}, {b_best['position']}) "
    f"makes it the top token for {b_best['top1']:.0%} of items, against chance {1 / ds.num_tokens:.0%}. The model "
    "represents $b$ as a cluster (5.2) that later layers use (5.5), not in the output vocabulary's coordinates."))

# %% [markdown]
# ## 5.7 Beside the paper
#
# The authors' draft figures come from an 8-layer GPT-2 (width 768) on the same task; this
# model has 4 layers and width 128, so "layer 3 of 8" corresponds roughly to layer 1-2 here.

# %%
comparison = ch05.paper_comparison(id_peak, k_at, peaks["OOD (first hop unseen)"]["iicg"], rank, L, last)
display(ch05.frame_table(comparison))

# %% [markdown]
# The picture is the paper's: a bridge cluster forms at position $x_2$ in the early-middle
# layers, stronger for better-covered items and absent for OOD items, and the later layers
# read it from there at the last position. The absolute IICG values differ (different width,
# depth and optimiser; no dropout; cosines of raw, uncentred residual vectors), so the
# comparison is of where and in which order, not of the digits.

# %% [markdown]
# ## 5.8 Over training seeds
#
# Everything above reads one trained model. Chapter 3 ships the same run with two more training
# seeds (same data; another initialisation and batch order), final weights only. The same IICG
# and tracing analyses on each (at the default preset; the smoke preset has one tiny model) say
# which of the claims above hold in every seed and which are one run's luck.

# %%
seed_folders = {} if chapter["train"] or run_dir else ch05.shipped_edge_seeds()
if seed_folders:
    by_seed = ch05.seed_analyses(seed_folders, ds, tables, max_items, max_pairs)
    display(ch05.seed_table(by_seed))
    display(Markdown(ch05.seeds_note(by_seed)))
    seed_results = ch05.seed_results(by_seed)
else:
    seed_results = {}
    print("this preset analyses one model; the shipped seeds are read at the default preset")

# %%
results = {
    "iicg_id_peak": float(id_peak["iicg"]), "iicg_id_peak_layer": int(id_peak["layer"]),
    "iicg_id_peak_position": str(id_peak["position"]),
    "iicg_train_peak": float(peaks["ID train"]["iicg"]), "iicg_ood_max": float(peaks["OOD (first hop unseen)"]["iicg"]),
    **{f"iicg_{k}": float(v) for k, v in k_at.items()},
    "iicg_accuracy_correlation": corr,
    "trace_rank_x2_layer1": float(rank.loc[1, "x2"]), "trace_rank_last_before_output": float(rank.loc[L - 1, last]),
    "trace_rank_x1_changed_x2_layer1": float(rank_x1.loc[1, "x2"]),
    "trace_pairs": int(trace["pairs"].iloc[0]),
    "lens_bridge_top1_best": float(b_best["top1"]), "lens_answer_top1_last": float(t_last),
    **seed_results,
}
metrics_file = record_metrics(results)  # the numbers above, for sweeps and the book's snapshot

# %% [markdown]
# ## Exercises
#
# 1. **Group by the answer instead.** Compute the IICG map grouped by `t` for the ID test items
#    (`ch05.iicg_table(model, ds, tables, ["t"], ["type_0"])`). At which layer and position does it
#    peak? Set `my_peak_layer` and `my_peak_position` in the parameters cell; the check tells you
#    whether they are right.
# 2. **Trace the non-bridge input.** In 5.5, patching $x_1$ matters only at layer 0. Why does
#    changing $x_1$ flip the prediction when patched into the $x_2$ position at layer 1? (Hint:
#    attention moves information from $x_1$ to $x_2$ in block 1, where $b$ is computed.)

# %% tags=["check"]
print("Exercise 1:", ch05.check_iicg_peak(my_peak_layer, my_peak_position, model, ds, tables, max_items))

# %% tags=["solution"]
by_t = ch05.iicg_table(model, ds, tables, ["t"], ["type_0"], max_items=max_items)
peak = ch05.iicg_peaks(by_t).iloc[0]  # the largest IICG, leaving out the cells high by construction
print(f"Exercise 1: IICG grouped by t peaks at layer {int(peak['layer'])}, position {peak['position']} "
      f"(IICG {peak['iicg']:.2f})")
