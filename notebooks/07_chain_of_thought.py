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
# # 7. Chain of thought: writing the bridge out
#
# Every model so far answered in one step: it read $(x_1, x_2, x_3)$ and had to produce
# $t = f_2(f_1(x_1, x_2), x_3)$ without ever being shown the bridge $b = f_1(x_1, x_2)$. With
# **chain of thought (CoT)** the training target spells the bridge out first: the model reads
# $(x_1, x_2, x_3)$ and writes $b$, then $t$. Each hop becomes a lookup the model is supervised
# on, and the second hop reads $b$ from its own output instead of building it inside.
#
# The paper reports that CoT changes the scaling law itself: the data needed grows as
# $N^{2.09}$ for two-hop with CoT (against $N^{2.26}$ without) and $N^{1.76}$ for three-hop
# (against $N^{2.58}$), and its CoT models need 5-10 times less data at equal $N$. It also
# reports that CoT does not rescue **path ambiguity**: non-tree with CoT still fails where two-hop
# with CoT succeeds. This chapter measures, on a CPU:
#
# 1. the required data with and without CoT (two-hop, three-hop), its exponents and their ratio;
# 2. non-tree with CoT against two-hop with CoT at the same $N$ and $n_\text{train}$;
# 3. accuracy the way a user checks it: greedy decoding's exact match beside the teacher-forced
#    accuracy that training reports, on ID items and on OOD items with one fact unseen;
# 4. a control with a **placeholder** bridge (`</b>` where CoT writes $b$): the same sequence
#    length without the bridge's information;
# 5. what CoT changes inside: where items group by $b$, by $(b, x_2)$ and by $t$ (IICG) over the
#    prompt and the bridge position.
#
# At the default preset the four trained models (4 layers, width 128, one $N$ and training-set
# size) ship with the book (`data/cot/`, made by `covlib ship cot`), and the searches are rows of chapter 4's probe
# table (CoT rows are marked `cot`); the placeholder searches have a table of their own. The
# commands are in `data/cot/COMMANDS.txt`; what is not in the cache yet is said, with its command.

# %% tags=["parameters"]
preset = "default"  # "smoke" (tests: tiny models and a miniature search, seconds), "default" (reads the cache), "paper"
recompute = False  # True: train the four default models again here (about 10 CPU-minutes each) into data/cot/
max_items = 2000  # test items per IICG selection and per decoding summary
bootstrap_reps = 2000  # resamples for the exponents' intervals
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
from covlib.analyses.fits import fit_exponent
from covlib.analyses.residuals import open_shipped
from covlib.base.errors import CovlibError
from covlib.base.paper import COT_DATA_RATIO, EXPONENTS, EXPONENTS_COT, NONTREE_COT_FAILS_AT
from covlib.base.paths import repository_path
from covlib.book.sweep import record_metrics
from covlib.chapters.ch06_path_ambiguity import describe_cells, search_summary
from covlib.chapters.ch07_chain_of_thought import (
    DATA_DIR,
    EXPERIMENTS,
    FAKE_BRIDGE_TABLE,
    cot_ratio,
    decoding_chart,
    decoding_summary,
    geometric_mean,
    iicg_peak_table,
    iicg_sequence_table,
    placeholder_share,
    ratio_chart,
    ratio_lower_bounds,
    shipped_runs,
    split_label,
)
from covlib.figures.charts import accuracy_curves_chart
from covlib.figures.heatmaps import layer_position_heatmap
from covlib.figures.required_data import estimates_chart, requirement_frame
from covlib.figures.style import enable_png_renderer, pending_chart, save_figure
from covlib.search.cells import ProbeRules
from covlib.search.experiments import BOOK_EXPERIMENTS, BOOK_TABLE, experiment_cells, experiment_command
from covlib.search.probes import read_probes
from covlib.search.required_data import search
from covlib.training.runs import first_step_above, load_metrics
from covlib.training.shipped import ensure_shipped

enable_png_renderer()
pd.set_option("display.width", 140)
fig_dir = figures_dir or None
root = Path(out_dir) if out_dir else repository_path("build")

PRESETS = {
    # a miniature of every search: tiny N, a one-layer model, short budgets (seconds)
    "smoke": {
        "experiments": {
            "twohop": {"task": "twohop", "N": [6, 8], "seeds": [0], "model": "smoke"},
            "twohop_cot": {"task": "twohop", "N": [6, 8], "seeds": [0], "model": "smoke", "cot": True},
            "threehop": {"task": "threehop", "N": [4], "seeds": [0], "model": "smoke"},
            "threehop_cot": {"task": "threehop", "N": [4], "seeds": [0], "model": "smoke", "cot": True},
        },
        "fake": {"task": "twohop", "N": [6], "seeds": [0], "model": "smoke", "fake_bridge": True},
        "nontree": {"task": "nontree", "N": [6], "seeds": [0], "model": "smoke", "cot": True},
        "rules": ProbeRules(step_cap=200, give_up_epochs=10, eval_every=25, batch_size=128, test_size_per_type=100),
    },
    # the searches whose rows the cache holds (chapter 4's plain ones, this chapter's CoT and placeholder ones)
    "default": {
        "experiments": {"twohop": BOOK_EXPERIMENTS["twohop"], "threehop": BOOK_EXPERIMENTS["threehop"],
                        "twohop_cot": EXPERIMENTS["twohop_cot"], "threehop_cot": EXPERIMENTS["threehop_cot"]},
        "fake": EXPERIMENTS["twohop_fakebridge"],
        "nontree": EXPERIMENTS["nontree_cot"],
        "rules": ProbeRules(),
    },
}
knobs = PRESETS["smoke" if preset == "smoke" else "default"]
experiments, fake_experiment, nontree_experiment = knobs["experiments"], knobs["fake"], knobs["nontree"]
rules = knobs["rules"]
if preset == "paper":
    print("The paper's scale (8-layer GPT-2, N = 50 to 200) needs a GPU; this preset reads the default cache.")

runs = shipped_runs(preset)
N, n_train = runs["twohop_cot"].dataset["num_tokens"], runs["twohop_cot"].dataset["n_train"]
dest, work, ready = ensure_shipped(runs, preset == "smoke", DATA_DIR, root, "cot-smoke", recompute)
missing = [name for name, ok in ready.items() if not ok]
print(f"preset={preset}: four models at N = {N}, n_train = {n_train:,}; in {dest}: "
      + ", ".join(f"{name} {'found' if ok else 'MISSING'}" for name, ok in ready.items()))
if missing:
    display(Markdown(f"**Not in the cache yet:** the model(s) {', '.join(missing)}. Fill the cache with "
                     f"`{'`, `'.join(runs[m].command for m in missing)}` (about 10 CPU-minutes each; "
                     "`data/cot/COMMANDS.txt`), or rerun this chapter with `recompute = True`. The sections below say "
                     "what each one needs."))

# %% [markdown]
# ## 7.1 How much data, with the bridge written out
#
# The search is chapter 4's, unchanged but for the target: a CoT probe succeeds when the
# teacher-forced accuracy over **every** target token (bridge and answer) of the ID test items
# reaches 0.99, which is exactly the exact match of greedy decoding (section 7.3 shows why). The
# give-up rule, the model and the optimiser are the same. A CoT search starts a fifth below the
# same model's plain requirement (the paper's CoT models need 5 to 10 times less); the start
# changes the number of probes, not the bracket.

# %%
table_path = Path(table) if table else (root / "cot-smoke" / "probes.csv" if preset == "smoke"
                                        else repository_path(BOOK_TABLE))
fake_table = root / "cot-smoke" / "probes_fakebridge.csv" if preset == "smoke" else repository_path(FAKE_BRIDGE_TABLE)
cells = {name: experiment_cells(e) for name, e in experiments.items()}
fake_cells = experiment_cells(fake_experiment)
nontree_cells = experiment_cells(nontree_experiment)
if preset == "smoke":
    search([c for cs in cells.values() for c in cs] + nontree_cells, table_path, root / "cot-smoke" / "scaling",
              rules, log=None)
    search(fake_cells, fake_table, root / "cot-smoke" / "scaling", rules, log=None)
probes = read_probes(table_path)
summaries = {name: search_summary(cs, probes) for name, cs in cells.items()}
fake_probes = read_probes(fake_table) if Path(fake_table).is_file() else probes.iloc[:0]
fake_summary = search_summary(fake_cells, fake_probes)
nontree_summary = search_summary(nontree_cells, probes)
cols = ["task", "cot", "N", "seed", "status", "low", "high", "n_req", "eligible", "probes", "minutes"]
display(pd.concat(summaries.values(), ignore_index=True)[cols].round(1))
cot_minutes = sum(float(summaries[n]["minutes"].sum()) for n in ("twohop_cot", "threehop_cot"))
pending = {name: s for name, s in summaries.items() if s["status"].isin(["not started", "searching"]).any()}
if pending and preset != "smoke":
    display(Markdown("**Not finished in the cache:** " + "; ".join(
        f"{name}: {int(s['status'].isin(['not started', 'searching']).sum())} of {len(s)} cells "
        f"(`{experiment_command(experiments[name]) if name.endswith('_cot') else experiment_command(name)}`)"
        for name, s in pending.items()) + ". The search resumes from the table."))


# %%
fits = {name: fit_exponent(s, reps=bootstrap_reps) for name, s in summaries.items()}
exponent_rows = []
for task in ("twohop", "threehop"):
    for style, name in (("without CoT", task), ("with CoT", f"{task}_cot")):
        f = fits[name]
        exponent_rows.append({"task": task, "target": style, "c": f["c"] if f else np.nan,
                              "c_low": f["c_low"] if f else np.nan, "c_high": f["c_high"] if f else np.nan,
                              "N values": int(summaries[name]["n_req"].notna().groupby(summaries[name]["N"]).any().sum()),
                              "paper": (EXPONENTS_COT if style == "with CoT" else EXPONENTS)[task]})
exponents = pd.DataFrame(exponent_rows)
display(exponents.round(2))

points = [requirement_frame(s.assign(model=name.replace("_cot", " with CoT")))
          for name, s in summaries.items() if s["n_req"].notna().any()]
if points:
    need_chart = estimates_chart(points, "Required data with and without the bridge written out")
else:
    need_chart = pending_chart("Required data with and without CoT", experiment_command(experiments["twohop_cot"])
                                  if preset != "smoke" else "the smoke search")
save_figure(need_chart, "07_required_data", fig_dir)
display(need_chart)


def describe(f: dict | None) -> str:
    if f is None:
        return "not enough finished cells to fit"
    if np.isnan(f["c_low"]):
        return f"c = {f['c']:.2f} from {f['n_values']} N values only (too few for an interval: provisional)"
    return f"c = {f['c']:.2f} (95% interval {f['c_low']:.2f} to {f['c_high']:.2f}, {f['points']} estimates)"


def compare_fits(task: str) -> str:
    """Whether this cache separates the two exponents of a task: do their bootstrap intervals overlap?"""
    with_cot, plain = fits[f"{task}_cot"], fits[task]
    if not (with_cot and plain) or np.isnan(with_cot["c_low"]) or np.isnan(plain["c_low"]):
        return ""
    if with_cot["c_high"] < plain["c_low"]:
        return f" The {task} intervals do not overlap: CoT lowers the exponent here, as the paper reports."
    if with_cot["c_low"] > plain["c_high"]:
        return f" The {task} intervals do not overlap, and CoT's exponent is the higher one, against the paper."
    return (f" The {task} intervals overlap, so this cache does not separate the two exponents (the CoT fit rests on "
            f"{with_cot['points']} estimates); the data ratio below is the sharper comparison.")


parts = [f"{task}: with CoT {describe(fits[f'{task}_cot'])} against the paper's {EXPONENTS_COT[task]:.2f}; "
         f"without, {describe(fits[task])} (paper {EXPONENTS[task]:.2f})" for task in ("twohop", "threehop")]
display(Markdown("Measured on this CPU: " + ". ".join(parts) + "." + "".join(compare_fits(t) for t in ("twohop", "threehop"))))

# %% [markdown]
# How much less data does CoT need at the same $N$? The ratio pairs the plain and CoT estimates
# of each finished $(N, \text{seed})$.

# %%
ratios = pd.concat([cot_ratio(summaries[task], summaries[f"{task}_cot"]).assign(task=task)
                    for task in ("twohop", "threehop")], ignore_index=True)
bounds = pd.concat([ratio_lower_bounds(summaries[task], summaries[f"{task}_cot"]).assign(task=task)
                    for task in ("twohop", "threehop")], ignore_index=True)
display(ratios.round(2))
if len(ratios) or len(bounds):
    ratio_figure = ratio_chart(ratios, "Data without CoT over data with CoT, at equal N", band=COT_DATA_RATIO,
                                 bounds=bounds)
else:
    ratio_figure = pending_chart("Data ratio without / with CoT", "the searches of both targets at a shared N")
save_figure(ratio_figure, "07_data_ratio", fig_dir)
display(ratio_figure)
ratio_by_task = {task: geometric_mean(ratios[ratios["task"] == task]["ratio"]) for task in ("twohop", "threehop")}
if len(ratios):
    display(Markdown("At equal N, " + "; ".join(
        f"{task} without CoT needs {ratio_by_task[task]:.1f} times the data it needs with CoT ("
        + (f"geometric mean of {int((ratios['task'] == task).sum())} pairs, range "
           f"{ratios[ratios['task'] == task]['ratio'].min():.1f} to {ratios[ratios['task'] == task]['ratio'].max():.1f})"
           if (ratios["task"] == task).sum() > 1 else f"one pair, N = {int(ratios[ratios['task'] == task]['N'].iloc[0])})")
        for task in ("twohop", "threehop")
        if (ratios["task"] == task).any())
        + f". The authors' CoT models need {COT_DATA_RATIO[0]:.0f} to {COT_DATA_RATIO[1]:.0f} times less."))
if len(bounds):
    display(bounds.round(2))
    display(Markdown("Where the search without CoT fails at every size it may try, only a bound is known: " + "; ".join(
        f"{r.task} N = {r.N} (seed {r.seed}) fails even at {r.plain_fails_at:,.0f} examples without CoT and needs "
        f"about {r.n_req_cot:,.0f} with it, a ratio of **at least {r.ratio_at_least:.1f}**"
        for r in bounds.itertuples()) + ". These cells (open triangles) are not in the geometric mean above."))

# %% [markdown]
# ## 7.2 The four models at one $N$ and $n_\text{train}$
#
# Four models trained the same way on datasets of the same $N$ and size, chosen below two-hop's
# plain requirement (chapter 4), where the paper's 5-10x would let CoT succeed: two-hop without
# CoT, with CoT, with the placeholder bridge, and non-tree with CoT. The curves are ID test
# accuracy as training measures it: teacher-forced, every target token right.

# %%
metrics = {name: load_metrics(dest / run.folder) for name, run in runs.items() if ready[name]}
colors = {"twohop": "#9e9e9e", "twohop_cot": "#1565c0", "twohop_fakebridge": "#f9a825", "nontree_cot": "#c62828"}
if metrics:
    curves, series = combine_curves(metrics, {"ID test": "acc/type_0"})
    curve_chart = accuracy_curves_chart(
        curves, series, f"ID test accuracy, N = {N}, {n_train:,} examples (teacher-forced, all target tokens)",
        colors={f"{name}, ID test": c for name, c in colors.items()}, chance=1 / N)
else:
    curve_chart = pending_chart("Learning curves of the four models", "covlib ship cot")
save_figure(curve_chart, "07_learning_curves", fig_dir)
display(curve_chart)


def final(name: str, col: str = "acc/type_0") -> float:
    return float(metrics[name][col].iloc[-1]) if name in metrics else float("nan")


def steps_to(name: str, value: float = 0.99, col: str = "acc/type_0") -> str:
    if name not in metrics:
        return "n/a"
    step = first_step_above(metrics[name], col, value)
    return f"step {step:,}" if step is not None else "never"


final_type0 = {name: final(name) for name in runs}
final_answer = {name: final(name, "answer_acc/type_0") for name in runs}
if len(metrics) == len(runs):
    display(Markdown(
        f"After {int(metrics['twohop_cot']['step'].iloc[-1]):,} steps on {n_train:,} examples: two-hop without CoT "
        f"**{final_type0['twohop']:.1%}** ID accuracy (99% {steps_to('twohop')}), with CoT "
        f"**{final_type0['twohop_cot']:.1%}** (99% {steps_to('twohop_cot')}), with the placeholder bridge "
        f"**{final_type0['twohop_fakebridge']:.1%}** (answer token {final_answer['twohop_fakebridge']:.1%}), and "
        f"non-tree with CoT **{final_type0['nontree_cot']:.1%}** (answer token {final_answer['nontree_cot']:.1%}; 99% "
        f"{steps_to('nontree_cot')})."))
else:
    display(Markdown("The comparison needs all four models (see the top of the chapter for the commands)."))

# %% [markdown]
# Path ambiguity under CoT: the paper finds non-tree with CoT failing at $N = 50$, $n = 10\text{k}$,
# where two-hop with CoT succeeds. The same comparison here, at the shipped models' $N$ and
# $n_\text{train}$, and the non-tree CoT required-data searches where the cache has them.

# %%
shortfall = final_type0["twohop_cot"] - final_type0["nontree_cot"]
if not np.isnan(shortfall):
    verdict = ("still falls short of two-hop with CoT" if shortfall > 0.01 else "matches two-hop with CoT")
    display(Markdown(
        f"At N = {N} and {n_train:,} examples, non-tree with CoT **{verdict}**: {final_type0['nontree_cot']:.1%} ID "
        f"exact match against {final_type0['twohop_cot']:.1%} ({shortfall * 100:+.1f} points for two-hop), though both "
        f"write their bridge out (the paper: non-tree with CoT fails at N = {NONTREE_COT_FAILS_AT['N']}, "
        f"n = {NONTREE_COT_FAILS_AT['n_train']:,}, where two-hop with CoT succeeds). Section 7.3 shows where its "
        "errors sit: bridge or answer."))
display(nontree_summary[["task", "cot", "N", "seed", "status", "low", "high", "n_req", "eligible", "probes"]])
display(Markdown("Non-tree with CoT, required data: " + describe_cells(nontree_summary, "non-tree with CoT")
                 + (f" Command: `{experiment_command(nontree_experiment)}`."
                    if preset != "smoke" and nontree_summary["status"].isin(["not started", "searching"]).any() else "")))

# %% [markdown]
# ## 7.3 Accuracy the way a user checks it
#
# Training reports *teacher-forced* accuracy: to score the answer, the model is handed the true
# bridge. A user instead lets the model write its own bridge and reads the answer that follows:
# **greedy decoding**. The two agree on the exact match of every target token (while the model's
# tokens are right its inputs are the teacher's), but teacher-forced *answer* accuracy can only
# be higher: it rescues items whose bridge the model gets wrong but whose answer it would give
# from the true bridge. The bars split the test items by what greedy decoding writes; the black
# tick is teacher-forced answer accuracy. Besides the ID test items, two OOD types make the
# difference plain: first fact unseen but second seen ($f_1$ unseen), and the reverse.

# %%
DECODING_SPLITS = ("type_0", "type_2", "type_3")  # ID; f1 unseen, f2 seen; f1 seen, f2 unseen
models = {name: open_shipped(run, dest, work / "datasets") for name, run in runs.items() if ready[name]}
decoding = pd.concat([decoding_summary(model, ds, splits=DECODING_SPLITS, max_items=max_items).assign(model=name)
                      for name, (model, ds, tables, _) in models.items() if name != "twohop"] or [pd.DataFrame()],
                     ignore_index=True)
if len(decoding):
    decoding["items"] = decoding["model"] + " · " + decoding["split"].map(split_label)
    display(decoding.drop(columns=["items"]).round(3))
    decoding_figure = decoding_chart(decoding, f"Greedy decoding against teacher forcing (N = {N}, {n_train:,} examples)",
                                       row="items")
else:
    decoding_figure = pending_chart("Greedy decoding against teacher forcing", "covlib ship cot")
save_figure(decoding_figure, "07_decoding", fig_dir)
display(decoding_figure)


def decoded(name: str, col: str, split: str = "type_0") -> float:
    sel = decoding[(decoding["model"] == name) & (decoding["split"] == split)] if len(decoding) else decoding
    return float(sel[col].iloc[0]) if len(sel) else float("nan")


def outcome_text(name: str) -> str:
    bridge_wrong = decoded(name, "bridge wrong, answer right") + decoded(name, "bridge wrong, answer wrong")
    answer_wrong = decoded(name, "bridge right, answer wrong")
    gap = decoded(name, "tf_answer") - decoded(name, "greedy_exact")
    where = ("" if max(bridge_wrong, answer_wrong) < 0.01 else
             ": most errors come after a right bridge, in the second hop" if answer_wrong > bridge_wrong else
             ": most errors start at the bridge")
    return (f"greedy exact match **{decoded(name, 'greedy_exact'):.1%}** (teacher-forced, all tokens: "
            f"{decoded(name, 'tf_all'):.1%}: the same quantity), teacher-forced answer accuracy "
            f"{decoded(name, 'tf_answer'):.1%} (a gap of {gap * 100:+.1f} points). Greedy decoding writes a wrong bridge "
            f"for {bridge_wrong:.1%} of the items ({decoded(name, 'bridge wrong, answer wrong'):.1%} with a wrong answer "
            f"after it) and a right bridge followed by a wrong answer for {answer_wrong:.1%}{where}")


def ood_text(name: str) -> str:
    return (f"On the OOD items whose first fact is unseen and second seen ({split_label('type_2')}), teacher-forced "
            f"answer accuracy is **{decoded(name, 'tf_answer', 'type_2'):.1%}**: handed the true bridge, the model only "
            f"has to apply a seen second fact. Greedy decoding must write the bridge itself from an unseen fact: "
            f"{decoded(name, 'greedy_bridges', 'type_2'):.1%} of its bridges are right (chance is {1 / N:.1%}) and its "
            f"exact match is **{decoded(name, 'greedy_exact', 'type_2'):.1%}**. With the second fact unseen instead "
            f"(type_3) the bridge is right for {decoded(name, 'greedy_bridges', 'type_3'):.1%} and the answer for "
            f"{decoded(name, 'greedy_answer', 'type_3'):.1%}"
            + (": each hop generalises as far as its own facts were seen, and teacher-forced answer accuracy credits "
               "the model with a first hop it never learned." if hops_follow_facts(name) else "."))


def hops_follow_facts(name: str, high: float = 0.9, low: float = 0.2) -> bool:
    """Does each hop succeed exactly where its own fact was seen (type_3's bridge right, type_2's wrong)?"""
    return (decoded(name, "greedy_bridges", "type_3") >= high and decoded(name, "greedy_answer", "type_3") <= low
            and decoded(name, "greedy_bridges", "type_2") <= low and decoded(name, "tf_answer", "type_2") >= high)


decoding_text = []
if "twohop_cot" in models:
    decoding_text.append("Two-hop with CoT, ID test: " + outcome_text("twohop_cot") + ". " + ood_text("twohop_cot"))
if "nontree_cot" in models:
    decoding_text.append("Non-tree with CoT, ID test: " + outcome_text("nontree_cot") + ".")
if "twohop_fakebridge" in models:
    decoding_text.append("With the placeholder the 'bridge' is always `</b>`, so teacher forcing hands over nothing: "
                         "its answer accuracy on the OOD items with an unseen first fact is "
                         f"{decoded('twohop_fakebridge', 'tf_answer', 'type_2'):.1%} either way.")
if decoding_text:
    display(Markdown(" ".join(decoding_text)))

# %% [markdown]
# ## 7.4 Supervision or an extra position?
#
# A CoT sequence is one token longer than a plain one, and a transformer may use the extra
# position as room to compute. The placeholder control keeps the length and takes the
# information away: the target is `</b>` then $t$, so the model gets the extra position but is
# never told the bridge.

# %%
control = pd.DataFrame([
    {"model": name, "target": {"twohop": "t", "twohop_cot": "b, t", "twohop_fakebridge": "</b>, t",
                               "nontree_cot": "b, t"}[name],
     "ID answer accuracy (teacher-forced)": final_answer[name], "ID exact match": final_type0[name],
     "steps to 99%": steps_to(name)} for name in runs])
display(control.round(3))
if len(fake_summary):
    display(fake_summary[["N", "seed", "status", "low", "high", "n_req", "probes"]])


def late_rise(name: str, window: int = 500) -> float:
    """Answer accuracy gained over the last ``window`` steps of a run (is it still learning?)."""
    if name not in metrics:
        return float("nan")
    m = metrics[name]
    before = m[m["step"] <= m["step"].iloc[-1] - window]["answer_acc/type_0"]
    return float(m["answer_acc/type_0"].iloc[-1] - before.iloc[-1]) if len(before) else float("nan")


rising = {name: late_rise(name) for name in ("twohop", "twohop_fakebridge")}
still_rising_note = ""
if all(not np.isnan(v) for v in rising.values()) and max(rising.values()) > 0.02:
    still_rising_note = (f"Both runs without the bridge were still learning when training stopped (answer accuracy "
                         f"{rising['twohop'] * 100:+.1f} and {rising['twohop_fakebridge'] * 100:+.1f} points over the "
                         "last 500 steps): at this fixed budget the placeholder makes learning faster, and whether it "
                         "also lowers the data needed is the question of the placeholder's required-data search.")
gain = final_answer["twohop_cot"] - final_answer["twohop"]
extra_position = final_answer["twohop_fakebridge"] - final_answer["twohop"]
control_text = []
if not np.isnan(gain):
    control_text.append(
        f"At N = {N} and {n_train:,} examples, writing the bridge out raises ID answer accuracy from "
        f"{final_answer['twohop']:.1%} to {final_answer['twohop_cot']:.1%} ({gain * 100:+.1f} points)"
        + ("; the placeholder model is not in the cache yet." if np.isnan(extra_position) else
           f"; the placeholder position alone gives {final_answer['twohop_fakebridge']:.1%} "
           f"({extra_position * 100:+.1f} points).")
        + ("" if np.isnan(extra_position) else
           " The gain comes from supervising the bridge, not from the extra position."
           if abs(extra_position) < 0.25 * abs(gain) else
           f" The extra position alone brings {extra_position / gain:.0%} of the gain: at this size much of what CoT "
           "buys is room to compute, and the supervised bridge adds the rest."))
if still_rising_note:
    control_text.append(still_rising_note)
fake_unfinished = fake_summary["status"].isin(["not started", "searching"]).any()
if (fake_summary["status"] == "not started").all():
    control_text.append("The placeholder's required-data search is not in the cache yet"
                        + (f" (`{experiment_command(fake_experiment)}`)." if preset != "smoke" else "."))
else:
    control_text.append("The placeholder searches: " + describe_cells(fake_summary, "placeholder two-hop")
                        + (f" To finish them: `{experiment_command(fake_experiment)}`."
                           if fake_unfinished and preset != "smoke" else ""))
placeholder = placeholder_share(summaries["twohop"], summaries["twohop_cot"], fake_summary)
placeholder_data_share = float(placeholder["share"].mean()) if len(placeholder) else float("nan")
if len(placeholder):
    control_text.append(
        "Required data at the same N and seed: " + "; ".join(
            f"N = {int(r['N'])}: without CoT {r['n_req_plain']:,.0f}, placeholder {r['n_req_placeholder']:,.0f}, "
            f"with CoT {r['n_req_cot']:,.0f} (the placeholder goes {r['share']:.0%} of the way, in log data)"
            for _, r in placeholder.iterrows()) + ". "
        + (f"In data, the saving comes from supervising the bridge: the extra position alone saves "
           f"{'none' if placeholder['share'].max() <= 0 else 'little'}; what it does at a fixed budget (above) is "
           "speed learning up, not lower the data a model needs."
           if placeholder_data_share < 0.25 else
           "In data, the extra position alone gets most of the saving." if placeholder_data_share > 0.75 else
           f"In data, the extra position alone gets {placeholder_data_share:.0%} of the saving and supervising "
           "the bridge the rest."))
display(Markdown(" ".join(control_text)))

# %% [markdown]
# ## 7.5 What CoT changes inside
#
# Without CoT, chapter 5 found the bridge as a cluster in the residual stream at position $x_2$.
# With CoT the bridge is also a token the model writes, and the answer is computed at the bridge
# position from it. IICG over every position of the teacher-forced sequence (the prompt and the
# bridge position; the placeholder model holds `</b>` there) shows where each model groups items
# by their bridge $b$, by $(b, x_2)$ and by the answer $t$: two-hop with CoT, the placeholder
# model, and non-tree with CoT, whose second hop also needs $x_2$.

# %%
IICG_MODELS, IICG_KEYS = ("twohop_cot", "twohop_fakebridge", "nontree_cot"), ("b", "b,x2", "t")
iicg_parts = []
for name in IICG_MODELS:
    if name in models:
        model, ds, tables, _ = models[name]
        for key in IICG_KEYS:
            try:
                iicg_parts.append(iicg_sequence_table(model, ds, tables, [key], max_items=max_items)
                                  .assign(model=name))
            except CovlibError as exc:  # a selection too small to group (smoke-sized data)
                print(f"{name}, by {key}: {exc}")
iicg = pd.concat(iicg_parts, ignore_index=True) if iicg_parts else pd.DataFrame()
if len(iicg):
    heat = layer_position_heatmap(iicg.assign(panel=iicg["model"] + ": by " + iicg["group_by"]), "iicg",
                                     "IICG over the CoT sequence (ID test items)", facet="panel", columns=len(IICG_KEYS),
                                     domain=(-0.1, max(0.5, float(iicg["iicg"].max()))),
                                     positions=list(dict.fromkeys(iicg["position"])))
else:
    heat = pending_chart("IICG over the CoT sequence", "covlib ship cot")
save_figure(heat, "07_iicg_bridge_position", fig_dir)
display(heat)

# %%
has_b = len(iicg) and (iicg["group_by"] == "b").any()
where_b = iicg_peak_table(iicg[iicg["group_by"] == "b"]) if has_b else pd.DataFrame()
at_bridge = iicg_peak_table(iicg, position="b") if len(iicg) else pd.DataFrame()
if len(at_bridge):
    display(where_b.round(3), at_bridge.round(3))


def peak_at_bridge(name: str, key: str) -> float:
    return float(at_bridge.loc[(name, key), "iicg"]) if (name, key) in at_bridge.index else float("nan")


def formed_text(name: str) -> str:
    r = where_b.loc[(name, "b")]
    last_input = f"x{models[name][1].n_inputs}"
    why = (", the position whose output is the bridge token: the first hop is computed where it is written out"
           if r["position"] == last_input and name != "twohop_fakebridge" else
           ", where chapter 5 found the bridge of the model without CoT" if r["position"] == "x2" else "")
    return f"{name} at {r['position']}, layer {int(r['layer'])} ({r['iicg']:.2f}){why}"


def two(x: float) -> str:
    """Two decimals without a negative zero."""
    return f"{np.round(x, 2) + 0.0:.2f}"


context_gap = {name: peak_at_bridge(name, "b,x2") - peak_at_bridge(name, "b") for name in IICG_MODELS}
lines = []
if len(where_b):
    lines.append("Where the bridge forms (the largest IICG by $b$ past the embeddings): "
                 + "; ".join(formed_text(name) for name in IICG_MODELS if (name, "b") in where_b.index) + ".")
answer_at_bridge = {name: peak_at_bridge(name, "t") for name in IICG_MODELS}
if not np.isnan(answer_at_bridge["twohop_cot"]) and not np.isnan(peak_at_bridge("twohop_cot", "b")):
    leader = max(IICG_KEYS, key=lambda k: -np.inf if np.isnan(peak_at_bridge("twohop_cot", k)) else peak_at_bridge("twohop_cot", k))
    lines.append(f"At the bridge position two-hop with CoT groups items by $t$ up to {answer_at_bridge['twohop_cot']:.2f} "
                 f"(by $b$: {peak_at_bridge('twohop_cot', 'b'):.2f} past the embeddings)"
                 + (": the position that reads the bridge computes the answer." if leader == "t" else "."))
if not np.isnan(context_gap["nontree_cot"]) and not np.isnan(context_gap["twohop_cot"]):
    separated = context_gap["nontree_cot"] - context_gap["twohop_cot"] > 0.05
    lines.append(f"At the bridge position, grouping by $(b, x_2)$ beats grouping by $b$ by **{two(context_gap['nontree_cot'])}** "
                 f"for non-tree with CoT against {two(context_gap['twohop_cot'])} for two-hop with CoT"
                 + (": non-tree's bridge position carries $x_2$ along with the bridge, which its second hop needs. Its "
                    "representation stays context-dependent even with the bridge written out, as the paper reports."
                    if separated else ": this cache shows no context dependence peculiar to non-tree."))
where_t = iicg_peak_table(iicg[iicg["group_by"] == "t"]) if len(iicg) and (iicg["group_by"] == "t").any() \
    else pd.DataFrame()
if ("twohop_fakebridge", "t") in where_t.index:
    r = where_t.loc[("twohop_fakebridge", "t")]
    bridge_at_x2 = ("twohop_fakebridge", "b") in where_b.index and where_b.loc[("twohop_fakebridge", "b"), "position"] == "x2"
    lines.append(f"The placeholder model groups items by $t$ most at {'the placeholder' if r['position'] == 'b' else r['position']} "
                 f"position (layer {int(r['layer'])}, {r['iicg']:.2f})"
                 + ((": it computes the bridge at $x_2$ as a model without CoT does, and" if bridge_at_x2 else ": it")
                    + " uses the extra position for the second hop: the room to compute of section 7.4."
                    if r["position"] == "b" else "."))
if lines:
    display(Markdown(" ".join(lines)))

# %% [markdown]
# ## 7.6 Beside the paper
#
# The paper's numbers come from an 8-layer GPT-2 on a GPU at $N = 50$ to $200$; the book's from a
# 4-layer, width-128 model on a CPU at the small $N$ a CPU reaches. The comparison is of
# direction and order.

# %%
def fmt(x, spec: str = ".2f") -> str:
    return "n/a (not in the cache)" if x is None or (isinstance(x, float) and np.isnan(x)) else format(x, spec)


def fit_text(name: str) -> str:
    f = fits[name]
    if not f:
        return "n/a (not in the cache)"
    if np.isnan(f["c_low"]):
        return f"{f['c']:.2f} (from {f['n_values']} N values: provisional)"
    return f"{f['c']:.2f} ({f['c_low']:.2f} to {f['c_high']:.2f})"


comparison = pd.DataFrame([
    {"quantity": "exponent, two-hop with CoT", "paper (GPT-2, GPU)": f"{EXPONENTS_COT['twohop']:.2f}",
     "this book (4 layers, CPU)": fit_text("twohop_cot")},
    {"quantity": "exponent, two-hop without CoT", "paper (GPT-2, GPU)": f"{EXPONENTS['twohop']:.2f}",
     "this book (4 layers, CPU)": fit_text("twohop")},
    {"quantity": "exponent, three-hop with CoT", "paper (GPT-2, GPU)": f"{EXPONENTS_COT['threehop']:.2f}",
     "this book (4 layers, CPU)": fit_text("threehop_cot")},
    {"quantity": "exponent, three-hop without CoT", "paper (GPT-2, GPU)": f"{EXPONENTS['threehop']:.2f}",
     "this book (4 layers, CPU)": fit_text("threehop")},
    {"quantity": "data without CoT / with CoT, two-hop", "paper (GPT-2, GPU)":
        f"{COT_DATA_RATIO[0]:.0f}-{COT_DATA_RATIO[1]:.0f}x", "this book (4 layers, CPU)":
        fmt(ratio_by_task["twohop"], ".1f") + ("" if np.isnan(ratio_by_task["twohop"]) else "x")},
    {"quantity": "non-tree with CoT where two-hop with CoT succeeds", "paper (GPT-2, GPU)":
        f"fails (N = {NONTREE_COT_FAILS_AT['N']}, n = {NONTREE_COT_FAILS_AT['n_train']:,})",
     "this book (4 layers, CPU)": f"two-hop CoT {fmt(final_type0['twohop_cot'], '.1%')}, non-tree CoT "
                                  f"{fmt(final_type0['nontree_cot'], '.1%')} (N = {N}, n = {n_train:,})"},
    {"quantity": "non-tree with CoT: representations at the bridge", "paper (GPT-2, GPU)": "stay context-dependent",
     "this book (4 layers, CPU)": f"IICG by (b, x2) minus by b: {fmt(np.round(context_gap['nontree_cot'], 2) + 0.0)} "
                                  f"(two-hop CoT {fmt(np.round(context_gap['twohop_cot'], 2) + 0.0)})"},
])
display(comparison)

# %%
results = {
    "exponent_twohop_cot": fits["twohop_cot"]["c"] if fits["twohop_cot"] else float("nan"),
    "exponent_twohop_cot_ci_low": fits["twohop_cot"]["c_low"] if fits["twohop_cot"] else float("nan"),
    "exponent_twohop_cot_ci_high": fits["twohop_cot"]["c_high"] if fits["twohop_cot"] else float("nan"),
    "exponent_threehop_cot": fits["threehop_cot"]["c"] if fits["threehop_cot"] else float("nan"),
    "data_ratio_twohop_cot": ratio_by_task["twohop"],
    "data_ratio_threehop_cot": ratio_by_task["threehop"],
    "final_type0_twohop_plain": final_type0["twohop"],
    "final_type0_twohop_cot": final_type0["twohop_cot"],
    "final_type0_twohop_fakebridge": final_type0["twohop_fakebridge"],
    "final_type0_nontree_cot": final_type0["nontree_cot"],
    "greedy_exact_twohop_cot": decoded("twohop_cot", "greedy_exact"),
    "tf_answer_twohop_cot": decoded("twohop_cot", "tf_answer"),
    "greedy_exact_type2_twohop_cot": decoded("twohop_cot", "greedy_exact", "type_2"),
    "tf_answer_type2_twohop_cot": decoded("twohop_cot", "tf_answer", "type_2"),
    "iicg_bridge_position_twohop_cot": peak_at_bridge("twohop_cot", "b"),
    "iicg_bridge_position_nontree_cot": peak_at_bridge("nontree_cot", "b"),
    "iicg_context_gap_bridge_position_twohop_cot": context_gap["twohop_cot"],
    "iicg_context_gap_bridge_position_nontree_cot": context_gap["nontree_cot"],
    "cot_search_cpu_minutes": cot_minutes,
    "placeholder_data_share": placeholder_data_share,
}
record_metrics(results)
pd.Series(results, name="value").to_frame()

# %% [markdown]
# ## Summary

# %%
summary = []
if fits["twohop_cot"] or fits["threehop_cot"]:
    summary.append("With the bridge written out, the required data grows as " + "; ".join(
        f"{task}: N^{fits[f'{task}_cot']['c']:.2f} against N^{fits[task]['c']:.2f} without"
        + (f" (the CoT fit rests on {fits[f'{task}_cot']['n_values']} N values: provisional)"
           if np.isnan(fits[f"{task}_cot"]["c_low"]) else "")
        for task in ("twohop", "threehop") if fits[f"{task}_cot"] and fits[task]) + ".")
if len(ratios):
    summary.append(f"At equal N, two-hop without CoT needs {fmt(ratio_by_task['twohop'], '.1f')} times the data it "
                   "needs with CoT.")
if len(metrics) == len(runs):
    summary.append(f"At N = {N} and {n_train:,} examples, two-hop reaches {final_type0['twohop']:.1%} ID accuracy "
                   f"without CoT, {final_type0['twohop_cot']:.1%} with it and {final_type0['twohop_fakebridge']:.1%} "
                   f"with a placeholder; non-tree with CoT {final_type0['nontree_cot']:.1%}.")
if len(placeholder):
    summary.append(f"The placeholder bridge (an extra position, no bridge supervision) gets {placeholder_data_share:.0%} "
                   f"of CoT's data saving (log scale, {len(placeholder)} values of N): the saving comes from "
                   + ("supervising the bridge." if placeholder_data_share < 0.5 else "the extra position."))
if "twohop_cot" in models:
    summary.append(f"Greedy decoding's exact match ({decoded('twohop_cot', 'greedy_exact'):.1%} for two-hop with CoT) "
                   "is what a user sees; teacher-forced answer accuracy "
                   f"({decoded('twohop_cot', 'tf_answer'):.1%}) hands the model the true bridge and can only be "
                   "higher" + (f" (non-tree with CoT: {decoded('nontree_cot', 'greedy_exact'):.1%} against "
                               f"{decoded('nontree_cot', 'tf_answer'):.1%})." if "nontree_cot" in models else ".")
                   + f" On OOD items with an unseen first fact the two part: {decoded('twohop_cot', 'tf_answer', 'type_2'):.1%} "
                   f"teacher-forced against {decoded('twohop_cot', 'greedy_exact', 'type_2'):.1%} exact.")
if not np.isnan(shortfall):
    summary.append(f"Non-tree with CoT reaches {final_type0['nontree_cot']:.1%} where two-hop with CoT reaches "
                   f"{final_type0['twohop_cot']:.1%} at the same N and data"
                   + ("." if not 1 - decoded("nontree_cot", "greedy_exact") > 0.01 else
                      "; most of its errors come in the second hop, after a right bridge."
                      if decoded("nontree_cot", "bridge right, answer wrong") > 0.5 * (1 - decoded("nontree_cot", "greedy_exact"))
                      else "; most of its errors start at the bridge."))
if not np.isnan(context_gap["nontree_cot"]):
    more = "more than" if context_gap["nontree_cot"] - context_gap["twohop_cot"] > 0.05 else "about as much as"
    summary.append(f"Inside, non-tree's bridge position groups by (b, x2) {more} by b (a gap of "
                   f"{two(context_gap['nontree_cot'])}, two-hop with CoT {two(context_gap['twohop_cot'])}).")
display(Markdown("\n".join(f"* {line}" for line in summary) or "The cache holds no results yet."))

# %% [markdown]
# ## Exercises
#
# 1. **Where does decoding fail?** For the CoT two-hop model, what share of the OOD items with an
#    unseen first fact (type_2) does greedy decoding get wrong *at the bridge*? Read it from
#    `decoding` (columns "bridge wrong, answer right" and "bridge wrong, answer wrong") and write it
#    below. Why is the answer after a wrong bridge sometimes right?
# 2. **A longer chain.** `cot.shipped_runs()` builds its datasets from plain dictionaries. Make a
#    three-hop CoT run of your own (`ShippedRun("threehop_cot", {...})`), train it with
#    `ship_run` at a small $N$, and compare its greedy exact match with its teacher-forced answer
#    accuracy: with two bridges, which gap do you expect?

# %%
my_bridge_wrong = None  # exercise 1: share of type_2 items with a wrong bridge under greedy decoding, e.g. 0.05

# %% tags=["solution"]
truth = (decoded("twohop_cot", "bridge wrong, answer right", "type_2")
         + decoded("twohop_cot", "bridge wrong, answer wrong", "type_2") if "twohop_cot" in models else float("nan"))
if my_bridge_wrong is None:
    print("Exercise 1: add the two 'bridge wrong' columns of the twohop_cot, type_2 row of `decoding`. A wrong "
          f"bridge can still lead to the right answer by chance (about 1/N = {1 / N:.3f}) or when f2(b', x3) = f2(b, x3).")
else:
    print("Exercise 1:", "correct" if abs(float(my_bridge_wrong) - truth) < 0.005 else f"not quite: it is {truth:.3f}")
