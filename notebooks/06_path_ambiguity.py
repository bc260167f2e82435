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
preset = "default"  # "smoke" (tests: tiny models and a miniature search, seconds), "default" (reads the cache), "paper"
recompute = False  # True: train the two default models here (about 30 CPU-minutes) into data/ambiguity/
k = 3  # evidence threshold of coverage (the paper's smallest meaningful value)
max_items = 2000  # test items per IICG selection
max_pairs = 1000  # (clean, corrupted) pairs per causal-tracing variant
table = ""  # the probe table; "" means data/scaling/probes.csv (smoke: a fresh table under out_dir)
out_dir = ""  # where datasets and smoke runs go; "" means build/ of the repository
figures_dir = ""  # where figures are saved; "" means papers_figures/ (the book runner passes its own)

# %%
# ruff: noqa: E402, B018  (notebook style: imports after the parameters cell, charts as last expressions)
from pathlib import Path

import numpy as np
import pandas as pd
from IPython.display import Markdown, display

from covlib.analyses.curves import combine_curves
from covlib.analyses.iicg import iicg_at, iicg_peaks, iicg_table
from covlib.analyses.lens import logit_lens
from covlib.analyses.residuals import open_shipped, residual_streams, split_items
from covlib.base.errors import CovlibError
from covlib.base.paper import IICG_NONTREE_DRAFT, NONTREE_FAILS_AT
from covlib.base.paths import repository_path
from covlib.book.sweep import record_metrics
from covlib.chapters.ch06_path_ambiguity import (
    COVERAGE_NEED,
    DATA_DIR,
    EXPERIMENTS,
    TASKS,
    coverage_compare_chart,
    coverage_comparison,
    coverage_need,
    describe_cells,
    iicg_keys_chart,
    merged_pairs,
    merged_pairs_chart,
    need_lines,
    paired_datasets,
    search_summary,
    shipped_runs,
    trace_variants,
)
from covlib.figures.charts import accuracy_curves_chart
from covlib.figures.heatmaps import layer_position_heatmap
from covlib.figures.required_data import required_data_chart, requirement_frame
from covlib.figures.style import enable_png_renderer, pending_chart, save_figure
from covlib.search.cells import ProbeRules
from covlib.search.experiments import BOOK_TABLE, cells_for, experiment_cells, experiment_command
from covlib.search.probes import read_probes
from covlib.search.required_data import search
from covlib.training.runs import first_step_above, load_metrics
from covlib.training.shipped import ensure_shipped

enable_png_renderer()
pd.set_option("display.width", 140)
fig_dir = figures_dir or None
root = Path(out_dir) if out_dir else repository_path("build")
commands_file = repository_path("data/ambiguity/COMMANDS.txt")

PRESETS = {
    # tiny models trained here, a miniature search with a one-layer model, coverage at small N (seconds)
    "smoke": {"need_N": [8, 12], "search_N": [6, 8], "model": "smoke",
              "rules": ProbeRules(step_cap=200, give_up_epochs=10, eval_every=25, batch_size=128,
                                     test_size_per_type=100)},
    # the shipped models and tables
    "default": {"need_N": None, "search_N": None, "model": "L4-d128", "rules": ProbeRules()},
}
knobs = PRESETS["smoke" if preset == "smoke" else "default"]
if preset == "paper":
    print("The paper's scale (8-layer GPT-2, N = 50 and more) needs a GPU; this preset reads the default cache.")
runs = shipped_runs(preset)
N, n_train = runs["nontree"].dataset["num_tokens"], runs["nontree"].dataset["n_train"]
test_size = runs["nontree"].dataset["test_size_per_type"]
dest, work, ready = ensure_shipped(runs, preset == "smoke", DATA_DIR, root, "ambiguity-smoke", recompute)
missing = [name for name, ok in ready.items() if not ok]
print(f"preset={preset}: twohop and nontree at N = {N}, n_train = {n_train:,}; models in {dest}: "
      + ", ".join(f"{name} {'found' if ok else 'MISSING'}" for name, ok in ready.items()))
if missing:
    display(Markdown(f"**Not in the cache yet:** the model(s) {', '.join(missing)}. Sections 6.2-6.3 show what "
                     f"they can without them. Fill the cache with `{'`, `'.join(runs[m].command for m in missing)}` "
                     f"(about 15 CPU-minutes each; `data/ambiguity/COMMANDS.txt`)."))

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
pair = paired_datasets(N, n_train, seed=0, test_size_per_type=test_size)
merged = pd.concat([merged_pairs(ds, k) for ds in pair.values()], ignore_index=True)
display(merged.round(3))
merged_chart = merged_pairs_chart(merged, f"What {k}-equivalence classes of (x1, x2) group (N = {N}, "
                                             f"{n_train:,} examples)")
save_figure(merged_chart, "06_equivalence_classes", fig_dir)
display(merged_chart)


def merged_value(task: str, shared: str, col: str = "share") -> float:
    return float(merged[(merged["task"] == task) & (merged["shared"] == shared)][col].iloc[0])


display(Markdown(
    f"Two-hop: {merged_value('twohop', 'b', 'fragments'):.0f} training fragments fall into "
    f"{merged_value('twohop', 'b', 'classes'):.0f} classes (the largest holds "
    f"{merged_value('twohop', 'b', 'largest_class'):.0f}); {merged_value('twohop', 'b'):.1%} of the "
    f"{merged_value('twohop', 'b', 'merged_pairs'):,.0f} merged pairs share the bridge, and only "
    f"{merged_value('twohop', 'x2'):.1%} share $x_2$ (chance: 1/N = {1 / N:.1%}). Non-tree: the same number of "
    f"fragments falls into {merged_value('nontree', 'b', 'classes'):.0f} classes (the largest holds "
    f"{merged_value('nontree', 'b', 'largest_class'):.0f}); {merged_value('nontree', 'b', 'merged_pairs'):,.0f} "
    f"pairs merge, and {merged_value('nontree', 'b and x2'):.1%} of them share both $b$ and $x_2$."))

# %% [markdown]
# Smaller classes mean fewer substitutions, and so less coverage. The table below counts, for
# both tasks, the share of inputs connected to a training input at each $k$, over two
# populations:
#
# * the **ID test** items (`type_0`): inputs whose every fact is used by some training item
#   (SPEC §1). For non-tree this is a selection: the fact $f_2(b, x_2, x_3)$ of an input is in
#   training only if some training item has the same $x_2$, $x_3$ and another $x_1'$ with the
#   same bridge;
# * the **whole ID pool**: every input whose facts are in the seen split (the inputs training
#   could have drawn), less the training set.

# %%
cov = coverage_comparison(N, n_train, seed=0, max_k=8, test_size_per_type=test_size)
cov_chart = coverage_compare_chart(cov, f"k-coverage of two-hop and non-tree (N = {N}, {n_train:,} examples)")
save_figure(cov_chart, "06_coverage_by_k", fig_dir)
display(cov_chart)
wide = cov.pivot_table(index=["task", "population"], columns="k", values="covered").mul(100).round(1)
display(wide)


def cov_at(task: str, population: str, kk: int = k) -> float:
    return float(cov[(cov["task"] == task) & (cov["population"] == population) & (cov["k"] == kk)]["covered"].iloc[0])


def pool_count(task: str, population: str) -> int:
    return int(cov[(cov["task"] == task) & (cov["population"] == population)]["n"].iloc[0])


type0_share = {t: float(cov[cov["task"] == t]["type0_population"].iloc[0]) / pool_count(t, "id_pool") for t in TASKS}
coverage_k3 = {t: cov_at(t, "type_0") for t in TASKS}
display(Markdown(
    f"At $k = {k}$: **{coverage_k3['twohop']:.1%}** of two-hop's ID test items are covered, against "
    f"**{coverage_k3['nontree']:.1%}** of non-tree's. Over the whole ID pool the gap is wider: "
    f"{cov_at('twohop', 'id_pool'):.1%} against {cov_at('nontree', 'id_pool'):.1%}. Two effects add up. "
    f"First, {type0_share['twohop']:.0%} of two-hop's remaining pool has every fact in training, against "
    f"{type0_share['nontree']:.0%} of non-tree's: non-tree's second function has $N^3$ facts, not $N^2$, so most "
    f"are seen by at most one training item, and an input whose $f_2$ fact no item shows cannot be answered by any "
    f"learner (those inputs are not even ID test items). Second, among the ID test items, coverage needs pairs of "
    f"training items that share $x_2$, $x_3$ and a bridge: the small $(b, x_2)$ classes above."))

# %% [markdown]
# How much data does each task need before 99% of its items are covered? For every $N$ the
# cache holds, a log grid of training-set sizes up to the largest the required-data search
# tries (the ID pool less a test set), interpolated where the share first reaches the target.

# %%
need_file = repository_path(COVERAGE_NEED)
if knobs["need_N"] is not None:
    need = pd.concat([coverage_need(t, knobs["need_N"], ks=(k,), test_size_per_type=test_size, points=6)
                      for t in TASKS], ignore_index=True)
elif need_file.is_file():
    need = pd.read_csv(need_file)
else:
    need = pd.DataFrame(columns=["task", "N", "population", "k", "target", "eligible", "n_train", "max_covered",
                                 "largest_n"])
    display(Markdown(f"**Not in the cache yet:** `{COVERAGE_NEED}`. Fill it with the first command of "
                     "`data/ambiguity/COMMANDS.txt` (about 2 CPU-minutes)."))
sel = need[(need["k"] == k) & (need["target"] == 0.99)] if len(need) else need
if len(sel):
    by_N = sel.pivot_table(index="N", columns=["population", "task"], values="n_train")
    need_table = pd.DataFrame({
        "ID pool": sel[(sel["task"] == "nontree") & (sel["population"] == "type_0")].set_index("N")["eligible"],
        "twohop: 99% of type_0": by_N.get(("type_0", "twohop")),
        "nontree: 99% of type_0": by_N.get(("type_0", "nontree")),
        "nontree: 99% of the ID pool": by_N.get(("id_pool", "nontree")),
        "nontree: most of the ID pool covered": sel[(sel["task"] == "nontree") & (sel["population"] == "id_pool")]
        .set_index("N")["max_covered"],
    })
    need_table["nontree / twohop (type_0)"] = need_table["nontree: 99% of type_0"] / need_table["twohop: 99% of type_0"]
    display(need_table.round(2))
    ratios = need_table["nontree / twohop (type_0)"].dropna()
    pool_max = need_table["nontree: most of the ID pool covered"].dropna()
    never = need_table["nontree: 99% of the ID pool"].isna().sum()
    display(Markdown(
        f"To {k}-cover 99% of the ID test items, non-tree needs {ratios.min():.1f} to {ratios.max():.1f} times "
        f"the data two-hop needs (N = {', '.join(str(int(n)) for n in ratios.index)}). Over the whole ID pool the "
        f"target is out of reach at {never} of {len(need_table)} values of N: even the largest training set the "
        f"search allows {k}-covers at most {pool_max.max():.0%} of the rest of the pool (at least "
        f"{pool_max.min():.0%})."))
else:
    need_table = pd.DataFrame()

# %% [markdown]
# ## 6.2 Learning
#
# The two default models are trained the same way on datasets of the same size: $N$ and
# $n_\text{train}$ are chosen where two-hop generalises (chapter 4 measures its required data at
# this $N$ a little below this size). The curves show ID test accuracy and accuracy on training
# items over the run.

# %%
metrics = {name: load_metrics(dest / run.folder) for name, run in runs.items() if ready[name]}
colors = {"twohop, ID test (type_0)": "#1565c0", "twohop, training items": "#90caf9",
          "nontree, ID test (type_0)": "#c62828", "nontree, training items": "#ef9a9a"}
if metrics:
    curves, series = combine_curves(metrics, {"ID test (type_0)": "acc/type_0", "training items": "acc/train_inferred"})
    curve_chart = accuracy_curves_chart(curves, series, f"Two-hop and non-tree, N = {N}, {n_train:,} examples",
                                                colors=colors, chance=1 / N)
else:
    curve_chart = pending_chart("Two-hop and non-tree learning curves", "covlib ship ambiguity")
save_figure(curve_chart, "06_learning_curves", fig_dir)
display(curve_chart)


def final(name: str, col: str = "acc/type_0") -> float:
    return float(metrics[name][col].iloc[-1]) if name in metrics else float("nan")


def steps_to(name: str, value: float = 0.99, col: str = "acc/type_0") -> str:
    if name not in metrics:
        return "n/a"
    step = first_step_above(metrics[name], col, value)
    return f"step {step:,}" if step is not None else "never"


final_type0 = {name: final(name) for name in runs}
if len(metrics) == 2:
    display(Markdown(
        f"After {int(metrics['nontree']['step'].iloc[-1]):,} steps two-hop reaches **{final_type0['twohop']:.1%}** ID "
        f"accuracy (99% at {steps_to('twohop')}), non-tree **{final_type0['nontree']:.1%}** (best "
        f"{metrics['nontree']['acc/type_0'].max():.1%}; 99% {steps_to('nontree')}). Both fit their training items "
        f"(99% at {steps_to('twohop', col='acc/train_inferred')} and {steps_to('nontree', col='acc/train_inferred')}). "
        f"Non-tree's ID items have every fact in training and {coverage_k3['nontree']:.0%} of them are {k}-covered; "
        + ("yet the model does not carry what it memorised over to them as two-hop's does. "
           if final_type0["nontree"] < final_type0["twohop"] - 0.01 else "and here the model reaches them as well. ")
        + f"Its OOD items (a fact unseen) end at {np.nanmean([final('nontree', f'acc/type_{i}') for i in (1, 2, 3)]):.1%} "
        f"on average (chance {1 / N:.1%})."))
else:
    display(Markdown("The learning curves need both models (see the top of the chapter for the command)."))

# %% [markdown]
# How much data does non-tree need to reach 99% ID accuracy, if it can at all? The searches of
# chapter 4 (same model, same probe rules: success at the first evaluation at 0.99, give up 100
# epochs after fitting the training set) run for both tasks; a search that fails at the largest
# size it may try (the ID pool less a test set of 1,000 inputs) is *unreachable*.

# %%
table_path = Path(table) if table else (root / "ambiguity-smoke" / "probes.csv" if preset == "smoke"
                                        else repository_path(BOOK_TABLE))
if preset == "smoke":
    nontree_cells = cells_for("nontree", knobs["search_N"], [0], knobs["model"])
    twohop_cells = cells_for("twohop", knobs["search_N"], [0], knobs["model"])
    search(twohop_cells + nontree_cells, table_path, root / "ambiguity-smoke" / "scaling", knobs["rules"], log=None)
else:
    nontree_cells = experiment_cells(EXPERIMENTS["nontree"])
    twohop_cells = [c for c in experiment_cells("twohop") if c.N in EXPERIMENTS["nontree"]["N"]]
probes = read_probes(table_path)
nontree_summary = search_summary(nontree_cells, probes)
twohop_summary = search_summary(twohop_cells, probes)
cols = ["task", "N", "seed", "status", "low", "high", "n_req", "eligible", "largest_n", "best_type0_at_largest",
        "probes", "minutes"]
display(pd.concat([twohop_summary, nontree_summary], ignore_index=True)[cols].round(3))
display(Markdown("Non-tree: " + describe_cells(nontree_summary, "non-tree") + " Two-hop at the same N: "
                 + describe_cells(twohop_summary, "two-hop")))
pending_cells = nontree_summary[nontree_summary["status"].isin(["not started", "searching"])]
if len(pending_cells) and preset != "smoke":
    display(Markdown(f"{len(pending_cells)} non-tree cell(s) are not finished; "
                     f"`{experiment_command(EXPERIMENTS['nontree'])}` resumes them."))

# %%
points = pd.concat([requirement_frame(s.assign(model=f"{task}: measured n_req")) for task, s in
                    (("twohop", twohop_summary), ("nontree", nontree_summary)) if s["n_req"].notna().any()]
                   or [pd.DataFrame(columns=["N", "seed", "n_req", "low", "high", "series"])], ignore_index=True)
lost = nontree_summary[nontree_summary["status"] == "unreachable"]
reference = pd.DataFrame({"N": lost["N"], "n": lost["largest_n"], "series": "nontree: no success at this size"})
lines = need_lines(need, k) if len(need) else pd.DataFrame(columns=["N", "n", "dash", "series"])
if len(points) or len(reference) or len(lines):
    need_chart = required_data_chart(points, lines, reference,
                                        title="Training examples needed: measured, and for 99% coverage of type_0")
else:
    need_chart = pending_chart("Required data of two-hop and non-tree", experiment_command(EXPERIMENTS["nontree"]))
save_figure(need_chart, "06_required_data", fig_dir)
display(need_chart)

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

# %%
models = {}
for name, run in runs.items():
    if ready[name]:
        models[name] = open_shipped(run, dest, work / "datasets")
keys = {"twohop": ["b", "x2", "b,x2"], "nontree": ["b", "x2", "b,x2", "b,x1"]}
iicg_parts = []
for name, (model, ds, tables, _) in models.items():
    for split in ("type_0", "train_inferred"):
        for key in keys[name]:
            try:
                part = iicg_table(model, ds, tables, [key], [split], max_items=max_items)
                iicg_parts.append(part.assign(task=name))
            except CovlibError as exc:  # a selection too small to group (smoke-sized data)
                print(f"{name}, {split}, by {key}: {exc}")
iicg = pd.concat(iicg_parts, ignore_index=True) if iicg_parts else pd.DataFrame()
if len(iicg):
    id_maps = iicg[iicg["split"] == "type_0"]
    heat = layer_position_heatmap(id_maps.assign(panel=id_maps["task"] + ": by " + id_maps["group_by"]), "iicg",
                                     "IICG of ID test items, by grouping key", facet="panel",
                                     domain=(-0.1, max(0.5, float(id_maps["iicg"].max()))))
    peaks = iicg_peaks(iicg)
    peak_chart = iicg_keys_chart(peaks[peaks["split"] == "type_0"], "Largest IICG of ID test items, by grouping key")
    display(peaks[["task", "split", "group_by", "layer", "position", "iicg", "within", "between", "items", "groups"]]
            .round(3))
else:
    heat = pending_chart("IICG by grouping key", "covlib ship ambiguity")
    peak_chart = pending_chart("Largest IICG by grouping key", "covlib ship ambiguity")
    peaks = pd.DataFrame(columns=["task", "split", "group_by", "layer", "position", "iicg"])
save_figure(heat, "06_iicg_by_key", fig_dir)
save_figure(peak_chart, "06_iicg_peaks", fig_dir)
display(heat)
display(peak_chart)


def peak_of(task: str, key: str, split: str = "type_0") -> pd.Series | None:
    sel = peaks[(peaks["task"] == task) & (peaks["group_by"] == key) & (peaks["split"] == split)]
    return sel.iloc[0] if len(sel) else None


def peak_value(task: str, key: str, split: str = "type_0") -> float:
    p = peak_of(task, key, split)
    return float(p["iicg"]) if p is not None else float("nan")


iicg_max = {(t, key): peak_value(t, key) for t in TASKS for key in ("b", "x2", "b,x2", "b,x1")}
bx2 = peak_of("nontree", "b,x2")
if bx2 is not None:
    x2_same_cell = iicg_at(iicg[(iicg["task"] == "nontree") & (iicg["split"] == "type_0")], int(bx2["layer"]),
                              bx2["position"], "x2")
    tw = peak_of("twohop", "b")
    weaker = iicg_max[("nontree", "b")] < 0.5 * iicg_max[("twohop", "b")]
    display(Markdown(
        f"Two-hop's ID items cluster by the bridge: IICG by $b$ peaks at **{iicg_max[('twohop', 'b')]:.2f}**"
        + (f" (layer {int(tw['layer'])}, {tw['position']})" if tw is not None else "") + ". "
        + ("Non-tree's barely do" if weaker else "Non-tree's do too") + ": "
        f"the largest IICG by $b$ anywhere is **{iicg_max[('nontree', 'b')]:.2f}**. Grouped by $(b, x_2)$ it peaks "
        f"at **{iicg_max[('nontree', 'b,x2')]:.2f}** (layer {int(bx2['layer'])}, {bx2['position']}), where grouping "
        f"by $x_2$ alone gives {x2_same_cell:.2f}: the bridge adds {iicg_max[('nontree', 'b,x2')] - x2_same_cell:+.2f} "
        f"once $x_2$ is fixed. Grouped by $(b, x_1)$: {iicg_max[('nontree', 'b,x1')]:.2f}."))

# %% [markdown]
# Can the bridge be read out as a token? The logit lens passes each layer's residual through the
# final LayerNorm and the unembedding and asks how often $b$ (or the answer $t$) is the top token.

# %%
lens_parts = []
for name, (model, ds, tables, _) in models.items():
    inputs = ds.test.inputs[split_items(ds, "type_0")][:max_items]
    values = tables.values(inputs)
    lens_parts.append(logit_lens(model, residual_streams(model, inputs),
                                    {"bridge b": values["b1"], "answer t": values["t"]}).assign(task=name))
lens = pd.concat(lens_parts, ignore_index=True) if lens_parts else pd.DataFrame()
if len(lens):
    lens_chart = layer_position_heatmap(lens.assign(panel=lens["task"] + ": " + lens["target"]), "top1",
                                           "Logit lens: share of ID items whose top token is ...", facet="panel",
                                           domain=(0, 1), scheme="greens")
    lens_best = {t: float(lens[(lens["task"] == t) & (lens["target"] == "bridge b") & (lens["layer"] >= 1)]["top1"].max())
                 for t in models}
    display(Markdown("The bridge as the top token, best cell at layers 1 and up: " + ", ".join(
        f"{t} {v:.0%}" for t, v in lens_best.items()) + f" of ID items (chance {1 / N:.0%})."))
else:
    lens_chart = pending_chart("Logit lens", "covlib ship ambiguity")
    lens_best = {}
save_figure(lens_chart, "06_logit_lens", fig_dir)
display(lens_chart)

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
variants = {"twohop": ["x1", "x2"], "nontree": ["x1", "x2_keep_b", "x2_change_b"]}
trace_parts, skipped = [], {}
for name, (model, ds, tables, _) in models.items():
    train_items = ds.test.inputs[split_items(ds, "train_inferred")]
    t, skip = trace_variants(model, tables, train_items, variants[name], max_pairs=max_pairs)
    if len(t):
        trace_parts.append(t.assign(task=name))
    skipped |= {f"{name} {v}": why for v, why in skip.items()}
trace = pd.concat(trace_parts, ignore_index=True) if trace_parts else pd.DataFrame()
for what, why in skipped.items():
    print(f"{what}: {why}")
if len(trace):
    rank = trace[trace["metric"] == "rank"]
    trace_chart = layer_position_heatmap(rank.assign(panel=rank["task"] + ": " + rank["variant"] + " changed"),
                                            "value", "Causal tracing (rank): share of predictions flipped by one patch",
                                            facet="panel", domain=(0, 1), scheme="oranges", columns=5)
    display(rank.pivot_table(index=["task", "variant", "layer"], columns="position", values="value").round(2))
else:
    trace_chart = pending_chart("Causal tracing", "covlib ship ambiguity")
    rank = pd.DataFrame(columns=["task", "variant", "layer", "position", "value", "pairs"])
save_figure(trace_chart, "06_causal_tracing", fig_dir)
display(trace_chart)


def trace_cell(task: str, variant: str, position: str, layers: str = "upper") -> float:
    sel = rank[(rank["task"] == task) & (rank["variant"] == variant) & (rank["position"] == position)]
    if not len(sel):
        return float("nan")
    L = int(sel["layer"].max())
    sel = sel[sel["layer"] >= (max(2, L - 1) if layers == "upper" else 1)]
    return float(sel["value"].max())


if "nontree" in models and len(rank[rank["task"] == "nontree"]):
    L = models["nontree"][0].cfg.n_layers
    kb = rank[(rank["task"] == "nontree") & (rank["variant"] == "x2_keep_b")]
    display(Markdown(
        f"Changing $x_2$ but keeping $b$ ({int(kb['pairs'].iloc[0]) if len(kb) else 0} pairs): patching position $x_2$ "
        f"in the upper layers (from layer {max(2, L - 1)}) still flips up to {trace_cell('nontree', 'x2_keep_b', 'x2'):.0%} "
        f"of predictions, against {trace_cell('nontree', 'x2_change_b', 'x2'):.0%} when $b$ changes too and "
        f"{trace_cell('nontree', 'x1', 'x2'):.0%} when $x_1$ changes; two-hop's $x_2$ position matters in the upper "
        f"layers for at most {trace_cell('twohop', 'x2', 'x2'):.0%} of its pairs. "
        + ("The direct $x_2$ path is a route of its own to the answer, which the model keeps open into the upper layers."
           if trace_cell("nontree", "x2_keep_b", "x2") > max(0.5, trace_cell("twohop", "x2", "x2"))
           else "Here the direct path has handed its information on to the last position by the upper layers.")))

# %% [markdown]
# ## 6.4 Beside the paper
#
# The paper's numbers come from an 8-layer GPT-2 trained on a GPU at $N = 50$; the book's from a
# 4-layer, width-128 model at $N = 30$ on a CPU. The comparison is of direction and order, not
# of digits.

# %%
def fmt(x: float, spec: str = ".2f") -> str:
    return "n/a (not in the cache)" if x is None or (isinstance(x, float) and np.isnan(x)) else format(x, spec)


finished = nontree_summary[nontree_summary["status"].isin(["bracketed", "unreachable"])]
verdict = (", ".join(f"N = {int(r['N'])}: " + ("reached at about " + f"{r['n_req']:,.0f}" if r["status"] == "bracketed"
                     else f"never, up to {int(r['largest_n']):,} of {int(r['eligible']):,}"
                     + (" (within the step cap)" if r["low_capped"] else "")) for _, r in finished.iterrows())
           or "no finished search yet")
comparison = pd.DataFrame([
    {"quantity": "non-tree reaches 99% ID accuracy", "paper (8-layer GPT-2, GPU)":
        f"no, even with about {NONTREE_FAILS_AT['n_train']:,} of {NONTREE_FAILS_AT['eligible']:,} eligible "
        f"inputs at N = {NONTREE_FAILS_AT['N']}", "this book (4 layers, CPU)": verdict},
    {"quantity": f"ID accuracy at N = {N}, {n_train:,} examples", "paper (8-layer GPT-2, GPU)": "not reported",
     "this book (4 layers, CPU)": f"two-hop {fmt(final_type0['twohop'], '.1%')}, non-tree {fmt(final_type0['nontree'], '.1%')}"},
    {"quantity": "IICG by b (non-tree)", "paper (8-layer GPT-2, GPU)": f"about {IICG_NONTREE_DRAFT['b']} (draft)",
     "this book (4 layers, CPU)": fmt(iicg_max[("nontree", "b")])},
    {"quantity": "IICG by (b, x2) (non-tree)", "paper (8-layer GPT-2, GPU)": f"about {IICG_NONTREE_DRAFT['b,x2']} (draft)",
     "this book (4 layers, CPU)": fmt(iicg_max[("nontree", "b,x2")]) + " (peak; by x2 alone at that cell: "
     + (fmt(x2_same_cell) if bx2 is not None else "n/a") + ")"},
    {"quantity": "logit lens reads b (non-tree)", "paper (8-layer GPT-2, GPU)": "no",
     "this book (4 layers, CPU)": fmt(lens_best.get("nontree", float("nan")), ".0%") + f" top-1 at best (chance {1 / N:.0%})"},
    {"quantity": "the direct x2 path matters", "paper (8-layer GPT-2, GPU)": "yes",
     "this book (4 layers, CPU)": "patching x2 with b kept flips up to "
     + fmt(trace_cell("nontree", "x2_keep_b", "x2"), ".0%") + " in the upper layers"},
])
display(comparison)

# %%
display(Markdown(
    "Where the CPU-scale numbers differ, three reasons apply. The IICG values are cosines of raw, uncentred residual "
    "vectors of a narrower model (chapter 5 finds two-hop's peak higher than the paper's too), so their size is not "
    "comparable, only their order across keys. The book's $N$ is smaller: its non-tree ID pool holds "
    f"{pair['nontree'].eligible_count:,} inputs at N = {N} against about {NONTREE_FAILS_AT['eligible']:,} at "
    f"N = {NONTREE_FAILS_AT['N']}, and a search near the pool has few inputs left to test on. And the give-up rule "
    f"({ProbeRules().give_up_epochs:.0f} epochs after fitting, at most {ProbeRules().step_cap:,} steps) ends runs "
    "that a GPU budget would let continue."))

# %%
results = {
    "coverage_k3_twohop": coverage_k3["twohop"], "coverage_k3_nontree": coverage_k3["nontree"],
    "pool_coverage_k3_twohop": cov_at("twohop", "id_pool"), "pool_coverage_k3_nontree": cov_at("nontree", "id_pool"),
    "type0_share_of_pool_nontree": type0_share["nontree"],
    "merged_pairs_share_x2_twohop": merged_value("twohop", "x2"),
    "merged_pairs_share_bx2_nontree": merged_value("nontree", "b and x2"),
    "cover99_ratio_nontree_over_twohop_max": float(need_table["nontree / twohop (type_0)"].max()) if len(need_table)
    else float("nan"),
    "final_type0_twohop": final_type0["twohop"], "final_type0_nontree": final_type0["nontree"],
    "iicg_max_twohop_by_b": iicg_max[("twohop", "b")], "iicg_max_nontree_by_b": iicg_max[("nontree", "b")],
    "iicg_max_nontree_by_bx2": iicg_max[("nontree", "b,x2")], "iicg_max_nontree_by_x2": iicg_max[("nontree", "x2")],
    "lens_bridge_top1_twohop": lens_best.get("twohop", float("nan")),
    "lens_bridge_top1_nontree": lens_best.get("nontree", float("nan")),
    "trace_keep_b_x2_upper_nontree": trace_cell("nontree", "x2_keep_b", "x2") if len(rank) else float("nan"),
    "nontree_cells_finished": int(len(finished)),
    "nontree_cells_unreachable": int((nontree_summary["status"] == "unreachable").sum()),
}
record_metrics(results)
pd.Series(results, name="value").to_frame()

# %% [markdown]
# ## Summary

# %%
summary = [
    "Reading $x_2$ twice shrinks functional equivalence from \"same bridge\" to \"same bridge and same $x_2$\": at "
    f"N = {N} the largest class of first-hop fragments holds {merged_value('nontree', 'b', 'largest_class'):.0f} "
    f"fragments instead of {merged_value('twohop', 'b', 'largest_class'):.0f}, and the same {n_train:,} examples "
    f"{k}-cover {coverage_k3['nontree']:.0%} of non-tree's ID test items against {coverage_k3['twohop']:.0%} of two-hop's "
    f"({cov_at('nontree', 'id_pool'):.0%} of its whole ID pool, where {1 - type0_share['nontree']:.0%} of the inputs "
    "have a second fact no training item shows)."]
if len(metrics) == 2:
    summary.append(f"Trained the same way on that data, two-hop reaches {final_type0['twohop']:.1%} ID accuracy and "
                   f"non-tree {final_type0['nontree']:.1%}.")
if len(finished):
    summary.append("The required-data searches of non-tree: " + verdict + ".")
if len(iicg) and not np.isnan(iicg_max[("nontree", "b")]):
    summary.append(f"Inside the models, IICG by $b$ peaks at {iicg_max[('twohop', 'b')]:.2f} for two-hop and "
                   f"{iicg_max[('nontree', 'b')]:.2f} for non-tree, whose largest clusters follow $(b, x_2)$ "
                   f"({iicg_max[('nontree', 'b,x2')]:.2f}).")
display(Markdown("\n".join(f"* {line}" for line in summary)))

# %% [markdown]
# ## Exercises
#
# 1. **What do the classes need?** Compute `am.merged_pairs(pair["nontree"], k=2)`. What share of
#    the merged pairs share $x_2$ at $k = 2$? Write it below; the check tells you whether it is right.
# 2. **More data, more coverage?** Compute `am.coverage_comparison(N, 2 * n_train)` (if that is still
#    below the ID pool) or at a smaller $n_\text{train}$. Does non-tree's coverage of the *whole ID
#    pool* at $k = 3$ approach 100%? Why not? (Hint: `type0_population` against the pool's size.)

# %%
my_share_x2_k2 = None  # exercise 1: share of merged non-tree fragment pairs (k = 2) that share x2, e.g. 0.97

# %% tags=["solution"]
truth = merged_pairs(pair["nontree"], k=2).set_index("shared").loc["x2", "share"]
if my_share_x2_k2 is None:
    print("Exercise 1: run am.merged_pairs(pair['nontree'], k=2) and read the 'share' of the row 'x2'.")
else:
    print("Exercise 1:", "correct" if abs(float(my_share_x2_k2) - truth) < 0.01 else f"not quite: it is {truth:.3f}")
