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
# # 8. Three ways to generalise
#
# Every chapter so far measured one kind of generalisation: a model that matches patterns
# reaches an unseen input when substitutions that behave identically in the training data lead
# to it from a training input. The paper calls this **structure-based** generalisation and its
# limit is coverage. The paper ends with a taxonomy that names two more ways a model *could*
# reach an input that coverage leaves out:
#
# * **property-based**: the task has an algebraic invariance, such as commutativity
#   $f(a,b) = f(b,a)$. An input whose fact $f_1(x_1,x_2)$ was never seen is still determined by
#   the mirrored fact $f_1(x_2,x_1)$ if that one was seen;
# * **shared-operator**: one function serves several hops. A fact never seen in the second hop's
#   role may have been seen in the first hop's role (or taught on its own as an atomic fact).
#
# The paper describes these two; this chapter measures them. For each, covlib finds exactly which
# inputs are outside coverage but reachable through the property or the sharing
# (`covlib.chapters.ch08_three_ways_to_generalise`), and a trained model is tested on them, beside a control model trained on
# the same task without the property.

# %% tags=["parameters"]
from typing import Optional  # papermill's parameter reader reads Optional[int], not int | None

preset = "default"  # "smoke" (tests: seconds), "default" (the book: reads data/taxonomy/), "paper"
N: Optional[int] = None  # tokens |X|; None takes the preset's value
n_train: Optional[int] = None  # composed training examples per condition; None takes the preset's value
steps: Optional[int] = None  # training steps per model; None takes the preset's value
data_seed = 0  # dataset seed (the same for every condition)
k = 3  # evidence threshold of coverage
recompute = False  # True: retrain the three models and the four of 8.4 per seed (hours on one core at default)
out_dir = ""  # parent of dataset and run folders; "" means build/ of the repository
figures_dir = ""  # where figures go; "" means figures/<preset>/ under out_dir or build/ (make book: papers_figures/)
# your answers to the exercises (the end of the chapter); a check there says whether each is right
my_reachable: Optional[tuple[int, int]] = None  # exercise 1: (count at k, count at exercise_k)
my_agreement: Optional[float] = None  # exercise 2: a share between 0 and 1
my_cross_role: Optional[tuple[int, int]] = None  # exercise 3: (without atomic facts, with them)

# %%
# ruff: noqa: E402, B018  (notebook style: imports after the parameters cell, charts as last expressions)
import time

from IPython.display import Markdown, display

import covlib.chapters.ch08_three_ways_to_generalise as ch08
from covlib.base.paths import repository_path
from covlib.book.setup import setup_chapter
from covlib.book.sweep import record_metrics
from covlib.tasks.datasets import DatasetConfig, generate

chapter = setup_chapter("08", preset, ch08.model_runs.PRESETS, out_dir=out_dir, figures_dir=figures_dir,
                        N=N, n_train=n_train, steps=steps)
started = time.perf_counter()

# %% [markdown]
# The three models (commutative $f_1$, distinct tables, one shared table) and every input's group: read
# from the shipped tables at the default preset, trained here otherwise.

# %%
table, meta, source = ch08.model_runs.taxonomy_tables(chapter.values, chapter.root, preset, data_seed=data_seed, k=k,
                                                      recompute=recompute)
if source:
    print(source)
N, n_train, steps, k = meta["num_tokens"], meta["n_train"], meta["steps"], meta["k"]
print(ch08.model_runs.run_description(meta))

# %% [markdown]
# ## 8.1 The commutative option
#
# `DatasetConfig(..., commutative=("f1",))` (command line: `covlib generate twohop ... --commutative f1`)
# draws $f_1$ as a symmetric table: the upper triangle is drawn as usual and mirrored below the
# diagonal. The seen split stays *per fact*: $f_1(a,b)$ and $f_1(b,a)$ are seen or held out
# independently. That is what makes the experiment interesting: an input $(x_1,x_2,x_3)$ whose
# fact $f_1(x_1,x_2)$ is unseen is OOD by the type rules (chapter 1), yet its mirror
# $(x_2,x_1,x_3)$ has the same answer and may be an ordinary covered input. The folder name gets
# the suffix `.comm-f1`; with the option off every name and byte stays as before.

# %%
small = generate(DatasetConfig("twohop", 6, 60, seed=1, test_size_per_type=5, commutative=("f1",)))
print("f1 of a 6-token commutative task (symmetric):")
print(small.tables["f1"])
print("its seen split (not symmetric: a fact and its mirror are held out independently):")
print(small.seen_split["f1"].astype(int))

# %% [markdown]
# ## 8.2 Property-based generalisation: reachable through the symmetry
#
# For every input that is not a training input, covlib computes its k-cutoff and its mirror's
# (`reach.symmetry_reach`, exact coverage, chapter 2, on both). An input is **reachable through the
# symmetry** when it is outside k-coverage, its mirror is inside, and both have the same answer.
# Coverage is blind to the symmetry: it treats $(a,b)$ and $(b,a)$ as unrelated fragments.
#
# The control model is trained on the same task with a non-symmetric $f_1$ (same seed, same
# recipe, and as many steps: the step counts of the cache read here are printed at the top, and a
# control trained for fewer steps than its treated model is said there). There, the "same items" are
# the inputs outside coverage whose mirror is covered; the mirror has the same answer only by chance
# (about $1/N$), so nothing makes them reachable.
#
# In the charts, a click on a model in the legend picks out its bars; a bar's tooltip gives the
# group's size, the model's accuracy and how much of the group is $k$-covered.

# %%
prop = ch08.readings.property_numbers(table)
display(ch08.tables.property_reader_table(table))
print(ch08.readings.property_sentence(prop, N))

# %%
chapter.save(ch08.charts.reach_accuracy_chart(table, ch08.readings.property_groups(table), "Property-based: commutative f1",
                                              chance=1 / meta["num_tokens"]),
             "08_property_reach")

# %% [markdown]
# ## 8.3 Shared-operator generalisation: one table, several roles
#
# With `same_functions`, both hops of `twohop` read one table $f$: $b = f(x_1,x_2)$,
# $t = f(b,x_3)$. In covlib the seen split and the test types already count a fact as seen
# when *any* hop used it (`type_ids` reads the shared table through `table_of_hop`), so an input
# whose second-hop fact was used only in the first hop's role is `type_0`. With
# `include_atomic`, every fact of the table is also a 2-token training item, so every fact is
# seen somewhere. `reach.role_reach` records, per input and hop, whether its fact was used in the
# hop's *own* role by composed training items, and whether it was used in *any* role (or taught
# as an atomic fact): **cross-role** inputs have every fact seen somewhere and some fact never seen
# in its own role. With 10,000 composed items every seen fact is used in both roles, so here
# "cross-role" means "held out of the composed items and taught only as an atomic item". An
# atomic item $(a,b) \to f(a,b)$ sits in the same slots as the first hop: an input whose *first*
# fact was held out (type_2) needs the atomic fact in its own role, and only an input whose
# *second* fact was held out (type_3) needs it in another role. The table splits them.
#
# The control is the distinct-table model of 8.2, where a fact "seen in another role" is only
# a coincidence of indices in a different table. It was trained without atomic facts, so beside
# this model it differs in two things: the sharing and the extra facts.

# %%
shared = ch08.readings.shared_numbers(table, meta["num_tokens"])
display(ch08.tables.shared_reader_table(table))
print(ch08.readings.shared_sentence(shared, k))

# %%
per_type = ch08.reuse.per_type_reading(table)
display(Markdown(ch08.reuse.per_type_sentence(per_type)))
chapter.save(ch08.charts.reach_accuracy_chart(table, ch08.readings.shared_groups(table),
                                              "Shared operator: one table for both hops", chance=shared["chance"]),
             "08_shared_reach")

# %% [markdown]
# ## 8.4 Reuse across roles, at equal data and steps
#
# To tell a fact used in its own role from a fact reused in another, four models are trained on
# the same 10,000 composed items plus $N^2$ extra items each, for the same steps, over two training
# seeds (`roles.role_conditions`):
#
# * **distinct tables + atomic facts** and **one table + atomic facts**: every fact of the first
#   table as an atomic item;
# * **one table + first-role items**: $N^2$ composed items whose *first* fact is one of the held-out
#   facts and whose second fact is seen (`DatasetConfig(..., first_role_items=...)`). A held-out
#   fact is then taught only in the first hop's role, and an input that needs it as its *second*
#   fact (type_3) can be answered only by reusing it in the other role;
# * **distinct tables + first-role items**: the same extra items with a table per hop; there the
#   held-out second-hop facts belong to another table and are never taught.
#
# `roles.fact_status` marks, per input and hop, how training taught the fact: in its own role, in
# the other role only, as an atomic item, or never. The test types are counted from the composed ID
# items alone, so a type holds the same inputs in every condition of one data seed (less the
# extra items themselves). The test is one-sided: the treated model's accuracy on inputs whose
# second fact it was taught only in the first hop's role, against the best control on inputs with
# the second fact held out, pooled over seeds and per seed (a two-proportion z-test).

# %%
roles = ch08.reuse.load_roles(repository_path(chapter.values["cache"])) if chapter.values["cache"] and not recompute \
    else ch08.roles.run_roles(chapter.root / "taxonomy" / f"{preset}-roles", chapter.root / "taxonomy" / preset,
                              num_tokens=N, n_train=n_train, preset=chapter.values["model"], steps=steps,
                              seeds=chapter.values["role_seeds"])
if len(roles):
    display(ch08.tables.role_reader_table(roles))
reuse_result = ch08.reuse.reuse_test(roles, N)
display(Markdown(ch08.reuse.reuse_verdict(reuse_result, ch08.model_runs.ROLES_COMMAND)))

# %% [markdown]
# ## 8.5 The taxonomy, measured

# %%
own = ch08.readings.own_role(per_type, ch08.reuse.own_role_numbers(roles))
display(ch08.tables.taxonomy_reader_table(prop, own, reuse_result))
metrics_file = record_metrics(ch08.readings.taxonomy_metrics(prop, shared, meta, own, reuse_result, per_type))

# %% [markdown]
# ## What the paper says, and what we found
#
# The paper names property-based and shared-operator generalisation as ways *beyond* coverage
# that a pattern-matching model would need extra machinery for; it gives no numbers for them.
# The closing cell prints every number this chapter measured.

# %%
print(ch08.readings.findings(prop, shared, meta, time.perf_counter() - started, ch08.reuse.per_type_sentence(per_type),
                             ch08.reuse.reuse_verdict(reuse_result, ch08.model_runs.ROLES_COMMAND)))

# %% [markdown]
# ## Exercises
#
# The next cell builds the three conditions' datasets (commutative $f_1$, distinct tables, one shared
# table) at a size small enough to enumerate every input: `exercise_N` tokens and `exercise_n_train`
# training inputs, below every condition's ID pool. Change `exercise_N`, `exercise_k` or
# `exercise_n_train` and run the cells again; the checks recompute the truth for whatever you set. Your
# answers go in the parameters cell at the top of the chapter (`my_reachable`, `my_agreement`, `my_cross_role`).
#
# 1. **The symmetry-reachable set, counted.** On the commutative dataset, count the inputs outside
#    training that are reachable only through the symmetry, at the chapter's `k` and at `exercise_k`
#    (`ch08.reach.symmetry_reach` marks them; call it once per threshold). Set
#    `my_reachable = (count at k, count at exercise_k)`. Does a higher threshold make the set grow or
#    shrink? It tightens two conditions at once: the input must be outside coverage (easier) and its
#    mirror inside it (harder); which one wins here, and why?
# 2. **What "by chance" means for the control.** On the distinct-table dataset, what share of the
#    inputs outside training with $x_1 \ne x_2$ have a mirror with the same answer? `symmetry_reach`
#    reports it per input (`same_output`); the control has no commutative primitive, so name the
#    positions to swap yourself. Set `my_agreement` to the share and compare it with $1/N$: why is it
#    nearer $2/N$? (Count the ways $f_2(f_1(a,b),c)$ and $f_2(f_1(b,a),c)$ can agree.)
# 3. **What the atomic facts add.** On the shared-table dataset, count the cross-role inputs outside
#    training when atomic facts are not counted and when they are (`ch08.reach.role_reach`, its
#    `include_atomic` argument). Set `my_cross_role = (without, with)`. Which of the two conditions
#    of "cross-role" does teaching every fact as an atomic item change, and what does the difference
#    say about where the shared model's cross-role inputs of 8.3 come from?

# %%
exercise_N = min(N, ch08.exercises.EXERCISE_N)  # tokens of the exercises' datasets
exercise_n_train = min(n_train, ch08.exercises.id_pool(exercise_N, data_seed) // 2)  # below every condition's ID pool
exercise_k = k + 1  # exercise 1: a second evidence threshold
small_sets = ch08.exercises.exercise_datasets(exercise_N, exercise_n_train, data_seed)  # condition -> Dataset
outside = {name: ch08.exercises.outside_training(ds) for name, ds in small_sets.items()}  # inputs that are not training
print(f"exercise datasets: twohop, N={exercise_N}, n_train={exercise_n_train}, seed {data_seed}; inputs outside "
      "training: " + ", ".join(f"{name} {len(q):,}" for name, q in outside.items()))

# %% tags=["check"]
print("Exercise 1:", ch08.exercises.check_reachable(
    my_reachable, ch08.exercises.reachable_counts(small_sets["commutative"], (k, exercise_k))))
print("Exercise 2:", ch08.exercises.check_agreement(
    my_agreement, ch08.exercises.mirror_agreement(small_sets["distinct"]), exercise_N))
print("Exercise 3:", ch08.exercises.check_cross_role(
    my_cross_role, ch08.exercises.cross_role_counts(small_sets["shared"])))

# %% tags=["solution"]
reachable = tuple(int(ch08.reach.symmetry_reach(small_sets["commutative"], outside["commutative"], kk).reachable.sum())
                  for kk in (k, exercise_k))
print(f"Exercise 1: reachable only through the symmetry: {reachable[0]:,} at k = {k}, {reachable[1]:,} at "
      f"k = {exercise_k}")
distinct = outside["distinct"][outside["distinct"][:, 0] != outside["distinct"][:, 1]]
agreement = ch08.reach.symmetry_reach(small_sets["distinct"], distinct, k, swap=(0, 1)).same_output.mean()
print(f"Exercise 2: {agreement:.3f} of the mirrors agree (1/N = {1 / exercise_N:.3f}, 2/N = {2 / exercise_N:.3f})")
cross_role = tuple(int(ch08.reach.role_reach(small_sets["shared"], outside["shared"], include_atomic=atomic)
                       .cross_role.sum()) for atomic in (False, True))
print(f"Exercise 3: cross-role inputs outside training: {cross_role[0]:,} without atomic facts, {cross_role[1]:,} "
      "with them")
