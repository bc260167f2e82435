"""Chapter 8 (the taxonomy): symmetry and shared-operator reach, and their models."""
from __future__ import annotations

import json
import os
from pathlib import Path

import altair as alt
import numpy as np
import pandas as pd
from scipy import stats

from covlib.base.errors import CovlibError
from covlib.base.paths import repository_path
from covlib.coverage.exact import coverage_sweep
from covlib.figures.style import legend_highlight
from covlib.figures.tables import ReaderTable, reader_table
from covlib.tasks.datasets import Dataset, DatasetConfig, decode, encode, ensure_dataset, generate, target_tokens
from covlib.training.evaluation import predict
from covlib.training.runs import load_model
from covlib.training.shipped import train_or_load

K_DEFAULT = 3  # the paper's smallest meaningful evidence threshold

PRESETS = {
    # smoke trains three tiny models in seconds; default reads the shipped tables (data/taxonomy/)
    "smoke": {"model": "smoke", "N": 8, "n_train": 200, "steps": 300, "cache": "", "steps_of": {}},
    # every model gets the same 2,000 steps, so that no control is weaker for being trained less
    "default": {"model": "default", "N": 30, "n_train": 10_000, "steps": 2000, "cache": "data/taxonomy",
                "steps_of": {}},
    "paper": {"model": "paper", "N": 30, "n_train": 10_000, "steps": 62_500, "cache": "", "steps_of": {}},
}


def all_inputs(num_tokens: int, n_inputs: int) -> np.ndarray:
    """Every input tuple of X^m, in code order."""
    return decode(np.arange(num_tokens**n_inputs, dtype=np.int64), num_tokens, n_inputs)


def commutative_swap(dataset: Dataset) -> tuple[int, int]:
    """Input positions whose exchange leaves the output unchanged: the arguments of the first commutative hop."""
    task = dataset.task
    for hop in task.hops:
        if hop.primitive in dataset.config.commutative and all(a in task.input_names for a in hop.inputs):
            i, j = (task.input_names.index(a) for a in hop.inputs)
            return i, j
    raise CovlibError(
        f"{dataset.config.folder_name} has no commutative primitive applied to two raw inputs; pass swap=(i, j) "
        "explicitly or generate the dataset with commutative=('f1',)"
    )


def symmetry_reach(dataset: Dataset, queries: np.ndarray, k: int = K_DEFAULT,
                   swap: tuple[int, int] | None = None) -> pd.DataFrame:
    """Per query: its k-cutoff, its mirror's (positions ``swap`` exchanged), whether outputs agree, and
    ``reachable`` = outside k-coverage, mirror inside it, same output (reachable only through the symmetry)."""
    if k < 1:
        raise CovlibError(f"k={k} must be at least 1")
    queries = np.asarray(queries)
    i, j = swap if swap is not None else commutative_swap(dataset)
    mirror = queries.copy()
    mirror[:, [i, j]] = queries[:, [j, i]]
    n_tok = dataset.config.num_tokens
    answers = dataset.evaluate(dataset.train_inputs)["t"]
    both = np.concatenate([queries, mirror])
    cut = coverage_sweep(dataset.train_inputs, answers, n_tok, both).cutoffs
    n = len(queries)
    same = dataset.evaluate(queries)["t"] == dataset.evaluate(mirror)["t"]
    frame = pd.DataFrame({"cutoff": cut[:n], "mirror_cutoff": cut[n:], "same_output": same})
    frame["mirror_covered"] = (frame.cutoff < k) & (frame.mirror_cutoff >= k)
    frame["reachable"] = frame.mirror_covered & frame.same_output
    return frame


def role_reach(dataset: Dataset, queries: np.ndarray, include_atomic: bool | None = None) -> pd.DataFrame:
    """Per query and hop: was the fact it needs used by training in that hop's own role, in any role?

    Facts are compared by flat index, so with distinct tables "another role" is a coincidence of
    indices (the control); with ``same_functions`` it is the same fact. Atomic facts (include_atomic)
    count as seen in the role ``atomic`` for the first hop's table. ``cross_role`` marks queries
    with every fact seen in some role and some fact unseen in its own role: reachable only by reuse.
    """
    task, cfg = dataset.task, dataset.config
    include_atomic = cfg.include_atomic if include_atomic is None else include_atomic
    _, train_facts = task.evaluate(dataset.train_inputs, dataset.tables, cfg.same_functions)
    _, facts = task.evaluate(np.asarray(queries), dataset.tables, cfg.same_functions)
    sizes = [dataset.tables[t].size for t in task.table_of_hop(cfg.same_functions)]
    if len(set(sizes)) != 1:
        raise CovlibError(f"task {task.name} has tables of different sizes; role reuse needs one binary table shape")
    own = [np.zeros(sizes[0], dtype=bool) for _ in facts]
    for h, flat in enumerate(train_facts):
        own[h][flat] = True
    anywhere = np.logical_or.reduce(own)
    if include_atomic:
        anywhere = np.ones_like(anywhere)  # every fact of the first table is a training item
    frame = pd.DataFrame({f"own_{h + 1}": own[h][f] for h, f in enumerate(facts)})
    for h, f in enumerate(facts):
        frame[f"any_{h + 1}"] = anywhere[f]
    own_all = frame[[f"own_{h + 1}" for h in range(len(facts))]].all(axis=1)
    any_all = frame[[f"any_{h + 1}" for h in range(len(facts))]].all(axis=1)
    frame["cross_role"] = any_all & ~own_all
    return frame


def item_correct(run_dir: str | os.PathLike, dataset: Dataset, queries: np.ndarray) -> np.ndarray:
    """Whether the trained model of ``run_dir`` gets each query's full target right (teacher-forced)."""
    import torch


    model = load_model(run_dir)
    prompts = torch.from_numpy(np.asarray(queries, dtype=np.int64))
    targets = torch.from_numpy(target_tokens(dataset, queries).astype(np.int64))
    return predict(model, prompts, targets)["correct"].numpy()


def not_training(dataset: Dataset, queries: np.ndarray) -> np.ndarray:
    """Mask of queries that are not training inputs."""
    n_tok = dataset.config.num_tokens
    return ~np.isin(encode(queries, n_tok), encode(dataset.train_inputs, n_tok))


CONDITIONS = {
    # condition -> (experiment, the DatasetConfig options that differ from the base)
    "commutative": ("property", {"commutative": ("f1",)}),
    "distinct": ("control", {}),
    "shared": ("shared", {"same_functions": True, "include_atomic": True}),
}


def run_taxonomy(out_dir: str | os.PathLike, work_dir: str | os.PathLike, task: str = "twohop", num_tokens: int = 30,
                 n_train: int = 10_000, data_seed: int = 0, preset: str = "default", steps: int = 2000,
                 k: int = K_DEFAULT, conditions: tuple[str, ...] = tuple(CONDITIONS),
                 retrain: bool = False, progress: bool = False,
                 steps_of: dict[str, int] | None = None) -> pd.DataFrame:
    """Train one model per condition (one at a time), classify every input, write ``groups.csv`` and ``meta.json``.

    ``steps_of`` overrides the step budget of single conditions (e.g. ``{"shared": 1250}``)."""

    unknown = set(conditions) - set(CONDITIONS)
    if unknown:
        raise CovlibError(f"unknown conditions {sorted(unknown)}; choose among {', '.join(CONDITIONS)}")
    out_dir, work_dir = Path(out_dir), Path(work_dir)
    rows, minutes = [], {}
    for name in conditions:
        cfg = DatasetConfig(task, num_tokens, n_train, seed=data_seed, **CONDITIONS[name][1])
        folder = ensure_dataset(cfg, work_dir / "datasets")
        result = train_or_load(folder, work_dir / "runs" / name, preset=preset, overrides={"steps": (steps_of or {}).get(name, steps)},
                               retrain=retrain, progress=progress)
        minutes[name] = round(float(result.metrics["elapsed"].max()) / 60, 2) if "elapsed" in result.metrics else None
        dataset = generate(cfg)
        queries = all_inputs(num_tokens, dataset.task.n_inputs)
        keep = not_training(dataset, queries)
        queries = queries[keep]
        correct = item_correct(work_dir / "runs" / name, dataset, queries)
        types = dataset.type_names(queries)
        sym = symmetry_reach(dataset, queries, k, swap=(0, 1))
        roles = role_reach(dataset, queries)
        groups = {
            "covered": sym.cutoff >= k,
            "uncovered": sym.cutoff < k,
            "mirror_covered": sym.mirror_covered,
            "symmetry_reachable": sym.reachable,
            "uncovered_mirror_uncovered": (sym.cutoff < k) & (sym.mirror_cutoff < k),
            # covered inputs apart by whether every fact they need was seen: coverage can reach an input one
            # of whose facts training never showed, and such items are not the structure-based kind
            "covered_all_facts_seen": (sym.cutoff >= k) & (types == "type_0"),
            "covered_a_fact_unseen": (sym.cutoff >= k) & (types != "type_0"),
            "cross_role": roles.cross_role,
            # the shared-operator test proper: cross-role inputs that coverage does not reach
            "cross_role_uncovered": np.asarray(roles.cross_role) & (sym.cutoff < k),
            "cross_role_covered": np.asarray(roles.cross_role) & (sym.cutoff >= k),
            **{f"type:{t}": types == t for t in sorted(set(types))},
        }
        for group, mask in groups.items():
            mask = np.asarray(mask)
            rows.append({"condition": name, "group": group, "n": int(mask.sum()),
                         "acc": float(correct[mask].mean()) if mask.any() else float("nan"),
                         "covered_share": float((sym.cutoff[mask] >= k).mean()) if mask.any() else float("nan")})
    table = pd.DataFrame(rows)
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = out_dir / "groups.csv.tmp"
    table.to_csv(tmp, index=False)
    tmp.replace(out_dir / "groups.csv")
    meta = {"task": task, "num_tokens": num_tokens, "n_train": n_train, "data_seed": data_seed, "preset": preset,
            "steps": steps, "steps_of": steps_of or {}, "k": k, "conditions": list(conditions), "training_minutes": minutes}
    tmp = out_dir / "meta.json.tmp"
    tmp.write_text(json.dumps(meta, indent=2))
    tmp.replace(out_dir / "meta.json")
    return table


def load_taxonomy(out_dir: str | os.PathLike) -> tuple[pd.DataFrame, dict]:
    """The cached group table and its meta (written by ``run_taxonomy``)."""
    out_dir = Path(out_dir)
    if not (out_dir / "groups.csv").is_file():
        raise CovlibError(f"{out_dir} holds no groups.csv; run covlib.chapters.ch08_three_ways_to_generalise.run_taxonomy (see COMMANDS.txt) or set recompute = True")
    return pd.read_csv(out_dir / "groups.csv"), json.loads((out_dir / "meta.json").read_text())


def acc_of(table: pd.DataFrame, condition: str, group: str) -> tuple[float, int]:
    """Accuracy and item count of one (condition, group) row."""
    row = table[(table.condition == condition) & (table.group == group)]
    if row.empty:
        raise CovlibError(f"no row for condition {condition!r}, group {group!r}")
    return float(row.acc.iloc[0]), int(row.n.iloc[0])


CONDITION_LABELS = {"commutative": "f1 commutative", "distinct": "distinct tables (control)",
                    "shared": "one shared table + atomic facts"}


GROUP_LABELS = {  # a reader's name for each group of inputs (run_taxonomy's keys)
    "covered": "covered", "uncovered": "uncovered", "mirror_covered": "mirror covered",
    "symmetry_reachable": "reachable through the symmetry", "uncovered_mirror_uncovered": "uncovered, mirror uncovered",
    "covered_all_facts_seen": "covered, all facts seen", "covered_a_fact_unseen": "covered, a fact unseen",
    "cross_role": "cross-role", "cross_role_uncovered": "cross-role, uncovered", "cross_role_covered": "cross-role, covered",
    "type:type_0": "ID (type_0)", "type:type_1": "OOD: both facts unseen (type_1)",
    "type:type_2": "OOD: first-hop fact unseen (type_2)", "type:type_3": "OOD: second-hop fact unseen (type_3)",
}


def group_label(group: str) -> str:
    """A reader's name for a group of inputs (the key itself when GROUP_LABELS has none)."""
    return GROUP_LABELS.get(group, group)


def reach_accuracy_chart(table: pd.DataFrame, groups: list[str], title: str, chance: float | None = None
                         ) -> alt.LayerChart:
    """Grouped bars: accuracy of each condition's model on each group of inputs, the number of inputs written
    on every bar, and chance (1/N) as a dashed rule with its own legend entry. Clicking a model in the legend
    picks out its bars."""
    data = table[table.group.isin(groups)].copy()
    data["model"] = data.condition.map(CONDITION_LABELS).fillna(data.condition)
    data["inputs"] = data.group.map(group_label)
    picked, opacity = legend_highlight("model")
    base = alt.Chart(data).encode(
        x=alt.X("inputs:N", sort=[group_label(g) for g in groups], title=None,
                axis=alt.Axis(labelAngle=-20, labelLimit=300)),
        xOffset=alt.XOffset("model:N"),
        y=alt.Y("acc:Q", title="accuracy", scale=alt.Scale(domain=[0, 1])))
    bars = base.mark_bar().encode(
        color=alt.Color("model:N", title="model", legend=alt.Legend(orient="bottom", labelLimit=400)),
        opacity=opacity,
        tooltip=[alt.Tooltip("model:N", title="model"), alt.Tooltip("inputs:N", title="inputs"),
                 alt.Tooltip("n:Q", title="inputs in the group", format=",d"),
                 alt.Tooltip("acc:Q", title="accuracy", format=".1%"),
                 alt.Tooltip("covered_share:Q", title="k-covered share of the group", format=".1%")]).add_params(picked)
    counts = base.mark_text(dy=-4, fontSize=8, angle=270, align="left").encode(
        text=alt.Text("n:Q", format=","), opacity=opacity)
    layers = [bars, counts]
    if chance is not None:
        rule = alt.Chart(pd.DataFrame({"acc": [chance], "line": [f"chance 1/N = {chance:.3f}"]})).mark_rule(
            strokeDash=[4, 3], color="black").encode(
            y="acc:Q", strokeDash=alt.StrokeDash("line:N", title=None, scale=alt.Scale(range=[[4, 3]]),
                                                 legend=alt.Legend(orient="bottom")),
            tooltip=[alt.Tooltip("line:N", title="line")])
        layers.append(rule)
    return alt.layer(*layers).properties(width=420, height=240, title=alt.TitleParams(
        title, subtitle="numbers on the bars: inputs in the group", anchor="start"))


def taxonomy_tables(values: dict, root: Path, preset: str, data_seed: int, k: int,
                    recompute: bool) -> tuple[pd.DataFrame, dict, str | None]:
    """The chapter's group table and its meta: read from the preset's cache, or trained under ``root``.

    ``values`` are the chapter's resolved knobs (model, N, n_train, steps, cache, steps_of); the third
    item says where the shipped tables came from (None when the models were trained here)."""
    cache = values["cache"]
    if cache and not recompute:
        table, meta = load_taxonomy(repository_path(cache))
        note = f"read the shipped tables ({repository_path(cache)}); made by the commands in COMMANDS.txt there"
        return table, meta, note
    results = repository_path(cache) if cache else root / "taxonomy" / f"{preset}-tables"
    table = run_taxonomy(results, root / "taxonomy" / preset, num_tokens=values["N"], n_train=values["n_train"],
                         data_seed=data_seed, preset=values["model"], steps=values["steps"], k=k, retrain=recompute,
                         steps_of=values["steps_of"])
    return table, load_taxonomy(results)[1], None


def steps_text(meta: dict) -> str:
    """The step budget in words, naming the conditions that got a budget of their own."""
    steps_note = ", ".join(f"{c}: {s}" for c, s in meta.get("steps_of", {}).items())
    fewer = [c for c, s in meta.get("steps_of", {}).items() if s < meta["steps"]]
    warning = (f"; the {' and '.join(fewer)} model(s) trained for fewer steps than the others, so a control among "
               "them is weaker than its treated model for that reason alone") if fewer else ""
    return f"{meta['steps']} steps per model" + (f" ({steps_note})" if steps_note else "") + warning


def training_minutes(meta: dict) -> float:
    """CPU-minutes of training of every condition's model (those recorded)."""
    return sum(v for v in meta["training_minutes"].values() if v is not None)


def run_description(meta: dict) -> str:
    """One line on the task, the data, the step budgets and each model's training time."""
    return (f"{meta['task']}, N={meta['num_tokens']}, n_train={meta['n_train']}, {steps_text(meta)}, k={meta['k']}; "
            "training: " + ", ".join(f"{c} {m:.1f} min" for c, m in meta["training_minutes"].items()))


def covered_share(table: pd.DataFrame, condition: str, group: str) -> float:
    """Share of one (condition, group) row's inputs that are inside k-coverage."""
    row = table[(table.condition == condition) & (table.group == group)]
    if row.empty:
        raise CovlibError(f"no row for condition {condition!r}, group {group!r}")
    return float(row.covered_share.iloc[0])


PROPERTY_GROUPS = ["covered_all_facts_seen", "covered_a_fact_unseen", "symmetry_reachable", "mirror_covered",
                   "uncovered_mirror_uncovered"]
OLD_PROPERTY_GROUPS = ["covered", "symmetry_reachable", "mirror_covered", "uncovered_mirror_uncovered"]  # older caches


def property_groups(table: pd.DataFrame) -> list[str]:
    """The groups of the property-based figure: covered inputs kept apart by whether all their facts were seen
    (caches written before that split have one "covered" group)."""
    return PROPERTY_GROUPS if "covered_all_facts_seen" in set(table.group) else OLD_PROPERTY_GROUPS


def property_numbers(table: pd.DataFrame) -> dict[str, float]:
    """The numbers of section 8.2: accuracies and counts of the commutative model and its control."""
    acc_reachable, n_reachable = acc_of(table, "commutative", "symmetry_reachable")
    acc_control, n_control = acc_of(table, "distinct", "mirror_covered")
    acc_covered, n_covered = acc_of(table, "commutative", "covered")
    acc_dead, _ = acc_of(table, "commutative", "uncovered_mirror_uncovered")
    return {"acc_reachable": acc_reachable, "n_reachable": n_reachable, "acc_control": acc_control,
            "n_control": n_control, "acc_comm_covered": acc_covered, "n_comm_covered": n_covered,
            "acc_comm_dead": acc_dead, "acc_ctrl_covered": acc_of(table, "distinct", "covered")[0],
            "acc_ctrl_id": acc_of(table, "distinct", "type:type_0")[0],
            "id_cov": covered_share(table, "distinct", "type:type_0")}


def group_pivot(table: pd.DataFrame, conditions: list[str], groups: pd.Series, values: list[str]) -> pd.DataFrame:
    """One row per group of inputs (``groups``: a mask over the table's rows), one column per (value,
    condition): the tables of 8.2 and 8.3."""
    rows = table[table.condition.isin(conditions) & groups]
    return rows.pivot(index="group", columns="condition", values=values)


def property_table(table: pd.DataFrame) -> pd.DataFrame:
    """Counts and accuracies of the commutative and the control model on the groups of 8.2."""
    return group_pivot(table, ["commutative", "distinct"], table.group.isin(property_groups(table)), ["n", "acc"])


def property_sentence(numbers: dict[str, float], num_tokens: int) -> str:
    """What the commutative model gets right, beside its control and chance."""
    p = numbers
    return (f"commutative model: covered inputs {p['acc_comm_covered']:.3f} ({p['n_comm_covered']}), reachable only "
            f"through the symmetry {p['acc_reachable']:.3f} ({p['n_reachable']}), uncovered with an uncovered mirror "
            f"{p['acc_comm_dead']:.3f}; control on the same category: {p['acc_control']:.3f} ({p['n_control']}); "
            f"chance {1 / num_tokens:.3f}")


def shared_numbers(table: pd.DataFrame, num_tokens: int) -> dict[str, float]:
    """The numbers of section 8.3: the shared-table model and its control on cross-role inputs, and on the
    cross-role inputs coverage does not reach (NaN where the cache predates that group)."""
    acc_ood, n_ood = acc_of(table, "shared", "cross_role")
    acc_control, n_control = acc_of(table, "distinct", "cross_role")
    numbers = {"acc_ood": acc_ood, "n_ood": n_ood, "acc_control": acc_control, "n_control": n_control,
               "covered_share": covered_share(table, "shared", "cross_role"), "chance": 1 / num_tokens}
    if "cross_role_uncovered" in set(table.group):
        acc_unc, n_unc = acc_of(table, "shared", "cross_role_uncovered")
        acc_unc_control, n_unc_control = acc_of(table, "distinct", "cross_role_uncovered")
    else:
        acc_unc, n_unc, acc_unc_control, n_unc_control = float("nan"), 0, float("nan"), 0
    return numbers | {"acc_uncovered": acc_unc, "n_uncovered": n_unc, "acc_uncovered_control": acc_unc_control,
                      "n_uncovered_control": n_unc_control}


def shared_verdict(numbers: dict[str, float]) -> str:
    """Whether the shared table reaches cross-role inputs that coverage does not: its accuracy on them against
    the larger of chance and the control's, by a one-sided binomial test (the conclusion follows the numbers)."""
    n, acc = int(numbers["n_uncovered"]), numbers["acc_uncovered"]
    if not n or acc != acc:
        return ("Not measured yet: the cache predates the uncovered cross-role group; regenerate it with the command "
                "in data/taxonomy/COMMANDS.txt.")
    baseline = max(numbers["chance"], numbers["acc_uncovered_control"])
    p = stats.binomtest(round(acc * n), n, baseline, alternative="greater").pvalue
    if p < 0.01 and acc > 2 * baseline:
        return (f"On the {n:,} cross-role inputs that coverage does not reach, the shared-table model gets {acc:.1%}, "
                f"against {baseline:.1%} for the better of chance and the control (one-sided binomial p = {p:.1g}): "
                "reusing a fact in another role generalises beyond coverage.")
    return (f"On the {n:,} cross-role inputs that coverage does not reach, the shared-table model gets {acc:.1%}, "
            f"against {baseline:.1%} for the better of chance and the control (one-sided binomial p = {p:.2g}): the "
            "shared operator is not demonstrated here; what it gets right on cross-role inputs is what coverage "
            "already reaches.")


def shared_table(table: pd.DataFrame) -> pd.DataFrame:
    """Counts, accuracies and covered shares of the shared-table and the control model by test type and role."""
    return group_pivot(table, ["shared", "distinct"], table.group.str.startswith(("type:", "cross")),
                       ["n", "acc", "covered_share"])


def shared_sentence(numbers: dict[str, float], k: int) -> str:
    """What the shared-table model gets right on cross-role inputs, beside its control."""
    s = numbers
    return (f"shared-table model on cross-role inputs: {s['acc_ood']:.3f} ({s['n_ood']} inputs, "
            f"{s['covered_share']:.1%} of them {k}-covered); distinct-table model on its cross-role-by-index "
            f"inputs: {s['acc_control']:.3f} ({s['n_control']})")


def shared_groups(table: pd.DataFrame) -> list[str]:
    """The groups of the shared-operator figure: covered, cross-role (apart by coverage where the cache has it),
    and every OOD test type."""
    cross = ["cross_role_covered", "cross_role_uncovered"] if "cross_role_uncovered" in set(table.group) else ["cross_role"]
    return ["covered", *cross] + sorted(g for g in table.group.unique() if g.startswith("type:type_") and g != "type:type_0")


def taxonomy_summary(prop: dict[str, float], shared: dict[str, float]) -> pd.DataFrame:
    """The taxonomy as measured: each mechanism, what makes an item reachable, coverage's verdict, accuracy."""
    return pd.DataFrame([
        {"mechanism": "structure-based (ID test inputs)",
         "what makes an item reachable": "substitutions equivalent in training data",
         "coverage's verdict": f"{prop['id_cov']:.0%} covered", "measured accuracy": prop["acc_ctrl_id"]},
        {"mechanism": "property-based (commutative f1)", "what makes an item reachable": "its mirror (x2,x1,x3) is covered",
         "coverage's verdict": "outside", "measured accuracy": prop["acc_reachable"]},
        {"mechanism": "(control: no symmetry)", "what makes an item reachable": "nothing",
         "coverage's verdict": "outside", "measured accuracy": prop["acc_control"]},
        {"mechanism": "shared-operator (one table)", "what makes an item reachable": "its facts seen in another role",
         "coverage's verdict": f"{shared['covered_share']:.0%} covered", "measured accuracy": shared["acc_ood"]},
        {"mechanism": "(control: distinct tables)", "what makes an item reachable": "nothing (index coincidence)",
         "coverage's verdict": "outside", "measured accuracy": shared["acc_control"]},
    ])


def taxonomy_metrics(prop: dict[str, float], shared: dict[str, float], meta: dict) -> dict[str, float]:
    """The numbers the chapter records for sweeps (record_metrics), under their metric keys."""
    return {
        "acc_property_reachable": prop["acc_reachable"], "acc_property_control": prop["acc_control"],
        "acc_shared_ood": shared["acc_ood"], "acc_shared_control": shared["acc_control"],
        "acc_covered": prop["acc_ctrl_covered"], "acc_id": prop["acc_ctrl_id"],
        "n_property_reachable": prop["n_reachable"], "n_shared_ood": shared["n_ood"],
        "shared_ood_covered_share": shared["covered_share"], "training_minutes": training_minutes(meta),
        "acc_shared_uncovered": shared["acc_uncovered"], "acc_shared_uncovered_control": shared["acc_uncovered_control"],
        "n_shared_uncovered": shared["n_uncovered"], "chance_shared": shared["chance"],
        "N": meta["num_tokens"], "n_train": meta["n_train"],
    }


def findings(prop: dict[str, float], shared: dict[str, float], meta: dict, seconds: float) -> str:
    """The closing lines: every number the chapter measured, in sentences."""
    k, n_tok = meta["k"], meta["num_tokens"]
    return "\n".join([
        f"Task {meta['task']}, N={n_tok}, n_train={meta['n_train']}, {steps_text(meta)}, k={k}.",
        f"Structure-based: ID test inputs ({prop['id_cov']:.0%} {k}-covered), control model: {prop['acc_ctrl_id']:.3f}; "
        f"all {k}-covered non-training inputs (some of them OOD by type): {prop['acc_ctrl_covered']:.3f}.",
        f"Property-based: {prop['n_reachable']} inputs lie outside {k}-coverage but are reachable through the symmetry; "
        f"the commutative model gets {prop['acc_reachable']:.3f} of them, the control {prop['acc_control']:.3f} "
        f"of its {prop['n_control']} inputs of the same kind (chance {1 / n_tok:.3f}).",
        f"Shared operator: {shared['n_ood']} cross-role inputs ({shared['covered_share']:.1%} of them {k}-covered); "
        f"shared-table model {shared['acc_ood']:.3f}, distinct-table control {shared['acc_control']:.3f}. "
        + shared_verdict(shared),
        f"Compute: {training_minutes(meta):.1f} minutes of training for the three models; this chapter ran in "
        f"{seconds:.0f} s.",
    ])


# ----------------------------------------------------------------------------- the tables, as a reader reads them

VALUE_HEADERS = {"n": ("inputs", ",.0f"), "acc": ("accuracy", ".1%"), "covered_share": ("k-covered", ".1%")}


def pivot_reader_table(pivot: pd.DataFrame, caption: str, order: list[str] | None = None) -> ReaderTable:
    """A ``group_pivot`` (rows: groups, in ``order`` where given; columns: (value, condition)) with one column per
    value and model, headed "<value>, <model>", and a reader's name for each group."""
    if order:
        pivot = pivot.reindex([g for g in order if g in pivot.index])
    flat = pd.DataFrame({"group": [group_label(g) for g in pivot.index]})
    columns, formats = {"group": "inputs"}, {}
    for value, condition in pivot.columns:
        name = f"{value} {condition}"
        header, spec = VALUE_HEADERS[value]
        flat[name] = pivot[(value, condition)].to_numpy()
        columns[name] = f"{header}, {CONDITION_LABELS.get(condition, condition)}"
        formats[name] = spec
    return reader_table(flat, columns, formats, caption=caption)


def property_reader_table(table: pd.DataFrame) -> ReaderTable:
    """``property_table`` for the reader: inputs and accuracy of the commutative model and its control per group."""
    return pivot_reader_table(property_table(table), "Commutative model and control, per group of inputs",
                              property_groups(table))


def shared_reader_table(table: pd.DataFrame) -> ReaderTable:
    """``shared_table`` for the reader: inputs, accuracy and covered share of the shared-table model and its control."""
    return pivot_reader_table(shared_table(table), "Shared-table model and control, per test type and role")


def taxonomy_reader_table(prop: dict[str, float], shared: dict[str, float]) -> ReaderTable:
    """``taxonomy_summary`` for the reader: accuracy as a percentage."""
    summary = taxonomy_summary(prop, shared)
    return reader_table(summary, {c: c for c in summary.columns}, {"measured accuracy": ".1%"})


# ----------------------------------------------------------------------------- exercises

EXERCISE_N = 12  # the most tokens the exercises use: every input is enumerated and covered exactly in a second


def id_pool(num_tokens: int, seed: int) -> int:
    """The smallest ID-eligible pool among the three conditions' twohop datasets at ``num_tokens``: a training
    set of the exercises must be smaller than this."""
    return min(generate(DatasetConfig("twohop", num_tokens, 1, seed=seed, test_size_per_type=0, **options)).eligible_count
               for _, options in CONDITIONS.values())


def exercise_datasets(num_tokens: int, n_train: int, seed: int) -> dict[str, Dataset]:
    """The three conditions' datasets (CONDITIONS: commutative, distinct, shared) at a size small enough to
    enumerate every input: the exercises' material."""
    pool = id_pool(num_tokens, seed)
    if not 1 <= n_train < pool:
        raise CovlibError(f"n_train={n_train} must lie in 1..{pool - 1} (the smallest ID pool of the three conditions "
                          f"at N={num_tokens}); lower it")
    return {name: generate(DatasetConfig("twohop", num_tokens, n_train, seed=seed, test_size_per_type=10, **options))
            for name, (_, options) in CONDITIONS.items()}


def outside_training(dataset: Dataset) -> np.ndarray:
    """Every input of the dataset's task that is not a training input, in code order."""
    queries = all_inputs(dataset.config.num_tokens, dataset.task.n_inputs)
    return queries[not_training(dataset, queries)]


def reachable_counts(dataset: Dataset, ks: tuple[int, ...]) -> dict[int, int]:
    """Per evidence threshold k: how many inputs outside training are reachable only through the symmetry
    (exercise 1; ``dataset`` has a commutative f1)."""
    queries = outside_training(dataset)
    return {k: int(symmetry_reach(dataset, queries, k).reachable.sum()) for k in ks}


def mirror_agreement(dataset: Dataset) -> float:
    """Share of the inputs outside training with x1 != x2 whose mirror (x2, x1, x3) has the same answer
    (exercise 2: how often the control's mirror agrees by chance)."""
    queries = outside_training(dataset)
    queries = queries[queries[:, 0] != queries[:, 1]]
    mirror = queries[:, [1, 0, *range(2, queries.shape[1])]]
    return float((dataset.evaluate(queries)["t"] == dataset.evaluate(mirror)["t"]).mean())


def cross_role_counts(dataset: Dataset) -> tuple[int, int]:
    """Cross-role inputs outside training when atomic facts are not counted, and when they are (exercise 3)."""
    queries = outside_training(dataset)
    return tuple(int(role_reach(dataset, queries, include_atomic=atomic).cross_role.sum()) for atomic in (False, True))


def _as_counts(answer, keys: list) -> dict | None:
    """A reader's answer as {key: int}: a mapping, or a sequence in the order of ``keys`` (None if neither)."""
    if isinstance(answer, str):
        return None
    try:
        if isinstance(answer, dict):
            return {int(key): int(value) for key, value in answer.items()}
        values = [int(v) for v in answer]
    except (TypeError, ValueError):
        return None
    if len(keys) == 1 and len(set(values)) == 1:  # the same threshold asked twice
        values = values[:1]
    return dict(zip(keys, values)) if len(values) == len(keys) else None


def check_reachable(answer, truth: dict[int, int]) -> str:
    """Exercise 1: the counts of inputs reachable only through the symmetry, per k (``truth``: reachable_counts)."""
    if answer is None:
        return ("no answer yet: set my_reachable to (count at k, count at exercise_k); run three_ways.symmetry_reach "
                "on the commutative dataset's inputs outside training at each threshold and count its 'reachable'")
    shown = ", ".join(f"{n} at k={k}" for k, n in truth.items())
    if _as_counts(answer, list(truth)) == truth:
        return f"correct: {shown}"
    return f"not quite: the inputs reachable only through the symmetry are {shown} (you gave {answer!r})"


def check_agreement(answer, truth: float, num_tokens: int, tolerance: float = 1e-3) -> str:
    """Exercise 2: the share of the control's off-diagonal inputs whose mirror has the same answer."""
    if answer is None:
        return ("no answer yet: set my_agreement to a share; run three_ways.symmetry_reach on the distinct-table "
                "dataset's inputs outside training with x1 != x2 (pass swap, it has no commutative primitive) and "
                "average its 'same_output'")
    scale = f"1/N = {1 / num_tokens:.3f}, 2/N = {2 / num_tokens:.3f}"
    try:
        right = abs(float(answer) - truth) <= tolerance
    except (TypeError, ValueError):
        right = False
    if right:
        return f"correct: {truth:.3f} of them agree ({scale})"
    return f"not quite: {truth:.3f} of them agree, you gave {answer!r} ({scale})"


def check_cross_role(answer, truth: tuple[int, int]) -> str:
    """Exercise 3: cross-role inputs outside training without and with atomic facts (``truth``: cross_role_counts)."""
    if answer is None:
        return ("no answer yet: set my_cross_role to (without atomic facts, with them); run three_ways.role_reach on "
                "the shared-table dataset's inputs outside training, once with each include_atomic, and count its "
                "'cross_role'")
    shown = f"{truth[0]} without atomic facts, {truth[1]} with them"
    if _as_counts(answer, [0, 1]) == dict(enumerate(truth)):
        return f"correct: {shown}"
    return f"not quite: the cross-role inputs are {shown} (you gave {answer!r})"
