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
# (against $N^{2.58}$), $N^{1.80}$ for five-hop (trained with CoT only), and its CoT models need
# 5-10 times less data at equal $N$. It also
# reports that CoT does not rescue **path ambiguity**: non-tree with CoT still fails where two-hop
# with CoT succeeds. This chapter measures, on a CPU:
#
# 1. the required data with and without CoT (two-hop, three-hop; five-hop with CoT, and without
#    it at one $N$), its exponents and their ratio;
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
from typing import Optional  # papermill's parameter reader reads Optional[float], not float | None

preset = "default"  # "smoke" (tests: tiny models and a miniature search, seconds), "default" (reads the cache), "paper"
recompute = False  # True: train the four default models again here (about 10 CPU-minutes each) into data/cot/
max_items = 2000  # test items per IICG selection and per decoding summary
bootstrap_reps = 2000  # resamples for the exponents' intervals
table = ""  # the probe table; "" means data/scaling/probes.csv (smoke: a fresh table under out_dir)
out_dir = ""  # where datasets and smoke runs go; "" means build/ of the repository
figures_dir = ""  # where figures go; "" means figures/<preset>/ under out_dir or build/ (make book: papers_figures/)
# your answers to the exercises (the end of the chapter); a check there says whether each is right
my_bridge_wrong: Optional[float] = None  # exercise 1: share of type_2 items with a wrong bridge under greedy decoding
my_follows_bridge: Optional[float] = None  # exercise 2: share of the wrong-bridge type_2 items answering f2(b', x3)

# %%
# ruff: noqa: E402, B018  (notebook style: imports after the parameters cell, charts as last expressions)
from IPython.display import Markdown, display

import covlib.chapters.ch07_chain_of_thought as ch07
from covlib.book.setup import setup_chapter
from covlib.book.sweep import record_metrics

chapter = setup_chapter("07", preset, ch07.searches.PRESETS, out_dir=out_dir, figures_dir=figures_dir)

# %% [markdown]
# The four models of section 7.2: found in the cache, or trained here (smoke, or `recompute = True`).

# %%
if chapter["note"]:
    print(chapter["note"])
runs = ch07.shipped.shipped_runs(preset)
N, n_train = runs["twohop_cot"].dataset["num_tokens"], runs["twohop_cot"].dataset["n_train"]
dest, work, ready = ch07.ensure_shipped(runs, chapter["miniature"], ch07.shipped.DATA_DIR, chapter.root, "cot-smoke",
                                        recompute)
print(ch07.shipped.cache_line(preset, N, n_train, dest, ready))
missing_note = ch07.shipped.missing_models_note(runs, ready)
if missing_note:
    display(Markdown(missing_note))

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
table_path, fake_table = ch07.searches.probe_tables(table, chapter.root, chapter["miniature"])
experiments = chapter["experiments"]
cells = {name: ch07.experiment_cells(e) for name, e in experiments.items()}
fake_cells, nontree_cells = ch07.experiment_cells(chapter["fake"]), ch07.experiment_cells(chapter["nontree"])
if chapter["miniature"]:
    smoke_work = chapter.root / "cot-smoke" / "scaling"
    ch07.search([c for cs in cells.values() for c in cs] + nontree_cells, table_path, smoke_work, chapter["rules"], log=None)
    ch07.search(fake_cells, fake_table, smoke_work, chapter["rules"], log=None)
probes = ch07.read_probes(table_path)
summaries = {name: ch07.search_summary(ch07.authors_rule_cells(e), probes) for name, e in experiments.items()}
floor_steps, floor_quantile, floor_successes = ch07.chosen_floor(probes)
floor_only = {name: ch07.search_summary(ch07.floor_only_cells(e), probes, floor_steps) for name, e in experiments.items()
              if ch07.floor_only_N(e)}  # cells added to decide an exponent under the floor (section 7.1's second table)
fake_probes = ch07.read_probes(fake_table) if fake_table.is_file() else probes.iloc[:0]
nontree_summary = ch07.search_summary(nontree_cells, probes)
display(ch07.search_reader_table(ch07.searches.search_table(summaries), ch07.searches.SEARCH_COLUMNS))
cot_minutes = ch07.searches.cot_search_minutes(summaries)
pending_note = ch07.searches.pending_note(summaries, experiments, floor_only, floor_steps)
if pending_note and not chapter["miniature"]:
    display(Markdown(pending_note))

# %% [markdown]
# The exponent $c$ of $n_\text{req} \propto N^c$ with and without CoT, with 95% intervals (the
# table says how each was made: resampling cells where there are seeds, a slope's t-interval where
# there is one run per $N$). Five-hop has a CoT row only: the authors train it with CoT targets
# alone, and its six inputs make the ID pool grow as $N^6$. The authors'-rule searches here stop at
# $N = 10$; under the step floor the search goes on to $N = 12$, $14$ and $16$ (they join the floor's fit
# in the table of both rules below; the note above lists them while they are unfinished).
# Five-hop without CoT is searched at $N = 6$ alone, to its end or to the pool: the ratio below says
# what writing the four bridges out saves there.

# %%
fits = {name: ch07.summary_exponent(s, reps=bootstrap_reps) for name, s in summaries.items()}
display(ch07.tables.exponent_reader_table(ch07.searches.exponent_table(fits, summaries)))
need_chart = ch07.searches.required_data_chart(
    summaries, "the smoke search" if chapter["miniature"] else ch07.experiment_command(experiments["twohop_cot"]))
display(chapter.save(need_chart, "07_required_data"))
display(Markdown(ch07.searches.exponent_text(fits)
                 + ch07.searches.give_up_note(probes, summaries, chapter["rules"].give_up_epochs)))

# %% [markdown]
# Chapter 4 (section 4.7) tests the give-up rule itself: the authors' rule gives a small training
# set only a few hundred steps after the fit, and CoT probes are the smallest of all (some gave up
# after 150 steps). Here are the CoT exponents under that rule and under the step floor, side by
# side, with their local slopes and a verdict by the rule chapter 4 states.

# %%
recheck = ch07.floor_recheck(probes, floor_steps)
cot_rule = ch07.exponents_by_rule({n: cells[n] for n in ch07.searches.COT_RULE_EXPONENTS if n in cells}, probes,
                                  [0, floor_steps], ch07.searches.COT_RULE_EXPONENTS, bootstrap_reps,
                                  floor_only={n: ch07.floor_only_cells(e) for n, e in experiments.items()})
plain_rule = ch07.exponents_by_rule({n: cells[n] for n in ch07.searches.PLAIN_RULE_EXPONENTS if n in cells}, probes, [0, floor_steps],
                                    ch07.searches.PLAIN_RULE_EXPONENTS, bootstrap_reps)  # for the summary's comparison
floor_fits = ch07.searches.floor_fits(cot_rule, plain_rule)
cot_verdicts = ch07.verdict_table(cot_rule)
display(ch07.exponents_view(cot_rule))
display(ch07.slopes_view(ch07.slopes_table(cot_rule, with_paper=False)))
cot_recheck = recheck[recheck["cot"]]
rerun_hours = ch07.rerun_minutes(probes, cot_recheck, floor_steps) / 60
display(Markdown(ch07.pattern_note(cot_rule, cot_verdicts, cot_recheck, floor_steps, floor_quantile, floor_successes, rerun_hours)
                 + "\n\n" + ch07.lower_end_note(ch07.lower_ends(cot_rule, probes, ch07.read_curves(table_path), floor_steps, ch07.reader_name))))

# %% [markdown]
# The verdicts follow the rule fixed in chapter 4 (section 4.8): the floor's exponent, with each cell's
# $n_\text{req}$ estimated from every probe of it (replicates included), is **reproduced** when its 90%
# interval lies within 0.25 of the paper's, **differs** when its 95% interval excludes the paper's value and
# the estimate lies outside that margin, and is **inconclusive** otherwise. The paper's claim that chain of
# thought flattens the law is tested as a paired difference of exponents on the same N and seeds. The last
# column of each table reads the verdict as one of its family, all seven published exponents or all six claims
# tested at once (chapter 4, section 4.11); the figure draws the same intervals against the paper's values.

# %%
rep = ch07.reproduce(ch07.read_probes(table_path, replicates=True), ch07.read_curves(table_path), experiments,
                     floor_steps, bootstrap_reps)
cot_book_verdicts = ch07.reproduction.book_verdicts(rep, ch07.searches.COT_RULE_EXPONENTS)
display(ch07.reproduction.verdicts_view(rep))
display(ch07.reproduction.claims_view(rep, only=ch07.searches.COT_CLAIMS))
display(chapter.save(ch07.verdicts_chart(rep, series=tuple(ch07.searches.COT_RULE_EXPONENTS),
                                         claims=ch07.searches.COT_CLAIMS), "07_verdicts_at_a_glance"))

# %% [markdown]
# How much less data does CoT need at the same $N$? The ratio pairs the plain and CoT estimates
# of each finished $(N, \text{seed})$, under each give-up rule: the floor can move the CoT searches
# most, since theirs are the smallest training sets. The menu under the chart picks the rule; a
# click on a task in the legend picks out its points.

# %%
floor_summaries = {name: ch07.search_summary(ch07.experiment_cells(e), probes, floor_steps) for name, e in experiments.items()}
ratios_by_rule, bounds_by_rule = ch07.data_ratios.ratio_tables_by_rule(
    {ch07.rule_label(0): summaries, ch07.rule_label(floor_steps): floor_summaries})
ratios, bounds = (ch07.data_ratios.under_rule(t, ch07.rule_label(0)) for t in (ratios_by_rule, bounds_by_rule))
floor_ratios = ch07.data_ratios.under_rule(ratios_by_rule, ch07.rule_label(floor_steps))
floor_ratio_by_task = ch07.data_ratios.ratios_by_task(floor_ratios)
display(ch07.tables.ratio_reader_table(ratios_by_rule))
if len(ratios_by_rule) or len(bounds_by_rule):
    ratio_figure = ch07.data_ratios.ratio_chart(ratios_by_rule, "Data without CoT over data with CoT, at equal N",
                                                band=ch07.COT_DATA_RATIO, bounds=bounds_by_rule)
else:
    ratio_figure = ch07.pending_chart("Data ratio without / with CoT", "the searches of both targets at a shared N")
display(chapter.save(ratio_figure, "07_data_ratio"))
ratio_by_task = ch07.data_ratios.ratios_by_task(ratios)
if len(ratios):
    display(Markdown(ch07.data_ratios.ratio_text(ratios, ratio_by_task, floor_ratios, ch07.rule_label(floor_steps))))
if len(bounds):
    display(ch07.tables.bounds_reader_table(bounds))
    display(Markdown(ch07.data_ratios.bounds_text(bounds)))

# %% [markdown]
# ## 7.2 The four models at one $N$ and $n_\text{train}$
#
# Four models trained the same way on datasets of the same $N$ and size, chosen below two-hop's
# plain requirement (chapter 4), where the paper's 5-10x would let CoT succeed: two-hop without
# CoT, with CoT, with the placeholder bridge, and non-tree with CoT. The curves are ID test
# accuracy as training measures it: teacher-forced, every target token right.

# %%
metrics = {name: ch07.load_metrics(dest / run.folder) for name, run in runs.items() if ready[name]}
display(chapter.save(ch07.curves.learning_curves_chart(metrics, N, n_train), "07_learning_curves"))
final_type0 = ch07.curves.final_accuracies(metrics)
final_answer = ch07.curves.final_accuracies(metrics, "answer_acc/type_0")
display(Markdown(ch07.curves.curves_text(metrics, final_type0, final_answer, n_train)))

# %% [markdown]
# Path ambiguity under CoT: the paper finds non-tree with CoT failing at $N = 50$, $n = 10\text{k}$,
# where two-hop with CoT succeeds. The same comparison here, at the shipped models' $N$ and
# $n_\text{train}$, and the non-tree CoT required-data searches where the cache has them.

# %%
shortfall_note = ch07.curves.shortfall_text(final_type0, N, n_train)
if shortfall_note:
    display(Markdown(shortfall_note))
display(ch07.search_reader_table(nontree_summary, ch07.tables.NONTREE_SEARCH_COLUMNS))
nontree_command = ch07.searches.unfinished_command(nontree_summary, chapter["nontree"], chapter["miniature"])
display(Markdown("Non-tree with CoT, required data: " + ch07.describe_cells(nontree_summary, "non-tree with CoT")
                 + ch07.searches.reachable_text(nontree_summary, chapter["rules"].threshold)
                 + (f" Command: `{nontree_command}`." if nontree_command else "")))

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
# difference plain: first fact unseen but second seen ($f_1$ unseen), and the reverse. The buttons
# above the chart keep one kind of test item; a bar's tooltip gives its share and its item count.

# %%
models = {name: ch07.open_shipped(run, dest, work / "datasets") for name, run in runs.items() if ready[name]}
decoding = ch07.greedy.decoding_table(models, max_items)
if len(decoding):
    display(ch07.tables.decoding_reader_table(decoding))
    decoding_figure = ch07.greedy.decoding_chart(
        decoding, f"Greedy decoding against teacher forcing (N = {N}, {n_train:,} examples)", row="items")
else:
    decoding_figure = ch07.pending_chart("Greedy decoding against teacher forcing", "covlib ship cot")
display(chapter.save(decoding_figure, "07_decoding"))
decoding_note = ch07.greedy.decoding_text(decoding, models, N)
if decoding_note:
    display(Markdown(decoding_note))

# %% [markdown]
# ## 7.4 Supervision or an extra position?
#
# A CoT sequence is one token longer than a plain one, and a transformer may use the extra
# position as room to compute. The placeholder control keeps the length and takes the
# information away: the target is `</b>` then $t$, so the model gets the extra position but is
# never told the bridge.

# %%
display(ch07.tables.control_reader_table(ch07.curves.control_table(metrics, final_type0, final_answer)))
# read under the step floor once its plain, CoT and placeholder cells have finished, else under the authors' rule
placeholder_floor, placeholder = ch07.data_ratios.placeholder_evidence(probes, fake_probes, chapter["fake"],
                                                                        chapter["fake_floor"])
# the placeholder's searches shown are those of the design and rule its evidence is read under
fake_design = chapter["fake_floor"] if placeholder_floor else chapter["fake"]
fake_summary = ch07.search_summary(ch07.experiment_cells(fake_design), fake_probes, placeholder_floor)
if len(fake_summary):
    display(ch07.search_reader_table(fake_summary, ch07.tables.PLACEHOLDER_SEARCH_COLUMNS,
                                     caption=f"Required-data searches with the placeholder bridge, under "
                                        f"{ch07.rule_label(placeholder_floor)}"))
placeholder_command = "" if chapter["miniature"] else ch07.experiment_command(chapter["fake_floor"])
control_text = [
    ch07.curves.gain_text(final_answer, N, n_train),
    ch07.curves.still_rising_text(metrics),
    ch07.searches.placeholder_search_text(fake_summary, ch07.describe_cells(fake_summary, "placeholder two-hop"),
                                          fake_design, chapter["miniature"]),
    ch07.data_ratios.placeholder_data_text(placeholder, ch07.rule_label(placeholder_floor), ch07.seed_spread(summaries["twohop"]),
                                           placeholder_command),
]
display(Markdown(" ".join(text for text in control_text if text)))

# %% [markdown]
# ## 7.5 What CoT changes inside
#
# Without CoT, chapter 5 found the bridge as a cluster in the residual stream at position $x_2$.
# With CoT the bridge is also a token the model writes, and the answer is computed at the bridge
# position from it. IICG over every position of the teacher-forced sequence (the prompt and the
# bridge position; the placeholder model holds `</b>` there) shows where each model groups items
# by their bridge $b$, by $(b, x_2)$ and by the answer $t$: two-hop with CoT, the placeholder
# model, and non-tree with CoT, whose second hop also needs $x_2$. The dropdown above the maps
# keeps one model's row of panels.

# %%
iicg, too_small = ch07.inside.iicg_table(models, max_items)
for line in too_small:  # a selection too small to group (smoke-sized data)
    print(line)
display(chapter.save(ch07.inside.iicg_chart(iicg), "07_iicg_bridge_position"))

# %%
where_b = ch07.inside.iicg_peaks_by(iicg, "b")
at_bridge = ch07.inside.bridge_position_peaks(iicg)
if len(at_bridge):
    display(ch07.tables.peaks_reader_table(where_b, "Where items group by b most (any position past the "
                                           "embeddings, no cell high by construction)"),
            ch07.tables.peaks_reader_table(at_bridge, "At the bridge position, per model and grouping key"))
where_t = ch07.inside.iicg_peaks_by(iicg, "t")
context_gap = ch07.inside.context_gaps(at_bridge)
n_inputs = {name: ds.n_inputs for name, (_, ds, _, _) in models.items()}
inside_note = ch07.inside.inside_text(where_b, at_bridge, where_t, n_inputs)
if inside_note:
    display(Markdown(inside_note))

# %% [markdown]
# ## 7.6 Beside the paper
#
# The paper's numbers come from an 8-layer GPT-2 on a GPU at $N = 50$ to $200$; the book's from a
# 4-layer, width-128 model on a CPU at the small $N$ a CPU reaches. The comparison is of
# direction and order. Each exponent is given under the authors' give-up rule and under the step
# floor (defined in section 4.7; the CoT exponents under it are in section 7.1), with 95% intervals in brackets.

# %%
display(ch07.frame_table(
    ch07.summary.comparison_table(fits, ratio_by_task, final_type0, context_gap, N, n_train,
                                  floor_fits, floor_ratio_by_task["twohop"])))

# %%
results = ch07.summary.recorded_metrics(fits, ratio_by_task, final_type0, decoding, at_bridge, cot_minutes,
                                        placeholder, ratios, nontree_summary, bounds, placeholder_floor)
results |= ch07.rule_counts_metrics(recheck, floor_steps, list(ch07.searches.COT_RULE_EXPONENTS))
results |= ch07.rule_metrics(cot_rule, cot_verdicts)
results |= ch07.reproduction.metrics(rep)  # the verdicts of chapter 4's rule (they replace the earlier rule's)
results |= ch07.data_ratios.floor_ratio_metrics(floor_ratios)
metrics_file = record_metrics(results)  # the numbers above, for sweeps and the book's snapshot

# %% [markdown]
# ## Summary

# %%
display(Markdown(ch07.summary.summary_text(
    fits=fits, ratios=ratios, by_task=ratio_by_task, metrics=metrics, final_type0=final_type0, placeholder=placeholder,
    decoding=decoding, available=models, at_bridge=at_bridge, N=N, n_train=n_train, bounds=bounds,
    placeholder_floor=placeholder_floor, floor_fits=floor_fits, floor_ratio=floor_ratio_by_task["twohop"],
    verdicts=ch07.verdicts_bullet(cot_book_verdicts, recheck, "chapter 4, section 4.8",
                                  tasks=list(ch07.searches.COT_RULE_EXPONENTS)),
    claims=ch07.reproduction.claims_bullet(rep, only=ch07.searches.COT_CLAIMS))))

# %% [markdown]
# ## Exercises
#
# 1. **Where does decoding fail?** For the CoT two-hop model, what share of the OOD items with an
#    unseen first fact (type_2) does greedy decoding get wrong *at the bridge*, whatever answer follows? Compute it
#    from `decoding` (its outcome columns) and set `my_bridge_wrong` in the parameters cell. Why is the answer
#    after a wrong bridge
#    sometimes right?
# 2. **Does the answer follow the bridge the model wrote?** On those type_2 items where the CoT two-hop model
#    writes a wrong bridge $b'$, is its answer $f_2(b', x_3)$, the answer its own bridge leads to, or something
#    else? `ch07.greedy.written_chains` decodes a split of a CoT model (use the model, dataset and tables of
#    `models["twohop_cot"]`, and `max_items` so that the items are those of `decoding`) and gives, per item, the
#    true and the written bridge and answer and `t_of_written`, the answer the written bridge leads to. Keep
#    the items whose written bridge is wrong and set `my_follows_bridge` to the share whose written answer equals
#    `t_of_written`. Why is it not 1? (Hint: split those items by `last_fact_seen`, whether the model ever saw
#    the fact $f_2(b', x_3)$.)

# %% tags=["check"]
print("Exercise 1:", ch07.greedy.check_bridge_wrong(my_bridge_wrong, ch07.greedy.bridge_wrong_share(decoding)))
print("Exercise 2:", ch07.greedy.check_follows_written_bridge(my_follows_bridge, ch07.greedy.follows_written_bridge(
    ch07.greedy.written_chains(*models["twohop_cot"][:3], split="type_2", max_items=max_items))
    if "twohop_cot" in models else float("nan")))

# %% tags=["solution"]
row = decoding[(decoding["model"] == "twohop_cot") & (decoding["split"] == "type_2")]
if len(row):
    wrong_bridge = row["bridge wrong, answer right"].iloc[0] + row["bridge wrong, answer wrong"].iloc[0]
    print(f"Exercise 1: greedy decoding writes a wrong bridge on {wrong_bridge:.3f} of the type_2 items")
if "twohop_cot" in models:
    chains = ch07.greedy.written_chains(*models["twohop_cot"][:3], split="type_2", max_items=max_items)
    wrong_chains = chains[chains["b_written"] != chains["b"]]
    follows = wrong_chains["t_written"] == wrong_chains["t_of_written"]
    print(f"Exercise 2: {follows.mean():.3f} of the {len(wrong_chains):,} wrong-bridge items answer f2(b', x3); by "
          "whether the model saw that fact:", follows.groupby(wrong_chains["last_fact_seen"]).mean().round(3).to_dict())
