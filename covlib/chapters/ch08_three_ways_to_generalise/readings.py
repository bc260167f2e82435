"""The group table read as numbers and sentences: accuracy where only symmetry or a shared operator
reaches, against the covered and uncovered groups, the chapter's metrics and findings."""
from __future__ import annotations

import pandas as pd

from covlib.base.errors import CovlibError
from covlib.chapters.ch08_three_ways_to_generalise.model_runs import steps_text, training_minutes
from covlib.chapters.ch08_three_ways_to_generalise.reuse import reuse_metrics


def acc_of(table: pd.DataFrame, condition: str, group: str) -> tuple[float, int]:
    """Accuracy and item count of one (condition, group) row."""
    row = table[(table.condition == condition) & (table.group == group)]
    if row.empty:
        raise CovlibError(f"no row for condition {condition!r}, group {group!r}")
    return float(row.acc.iloc[0]), int(row.n.iloc[0])


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


def taxonomy_summary(prop: dict[str, float], own: dict, reuse: dict) -> pd.DataFrame:
    """The taxonomy as measured: each mechanism, what makes an item reachable, coverage's verdict, accuracy.
    ``own``: atomic facts in their own role (keys acc, acc_control, control); ``reuse``: reuse_test's result."""
    measured = bool(reuse["n"]) and bool(reuse["control"])
    return pd.DataFrame([
        {"mechanism": "structure-based (ID test inputs)",
         "what makes an item reachable": "substitutions equivalent in training data",
         "coverage's verdict": f"{prop['id_cov']:.0%} covered", "measured accuracy": prop["acc_ctrl_id"]},
        {"mechanism": "property-based (commutative f1)", "what makes an item reachable": "its mirror (x2,x1,x3) is covered",
         "coverage's verdict": "outside", "measured accuracy": prop["acc_reachable"]},
        {"mechanism": "(control: no symmetry)", "what makes an item reachable": "nothing",
         "coverage's verdict": "outside", "measured accuracy": prop["acc_control"]},
        {"mechanism": "atomic fact in its own role (first fact held out)",
         "what makes an item reachable": "the fact taught as an atomic item in the first hop's slots",
         "coverage's verdict": "outside (atomic items are not composed data)", "measured accuracy": own["acc"]},
        {"mechanism": f"(control: {own['control']})", "what makes an item reachable": own["control_reach"],
         "coverage's verdict": "outside", "measured accuracy": own["acc_control"]},
        {"mechanism": "shared-operator (reuse in the second hop's role)",
         "what makes an item reachable": "its second fact taught only in the first hop's role",
         "coverage's verdict": "measured per input" if measured else "not measured yet",
         "measured accuracy": reuse["acc"]},
        {"mechanism": "(control: distinct tables, same extra data)", "what makes an item reachable": "nothing",
         "coverage's verdict": "outside" if measured else "not measured yet", "measured accuracy": reuse["acc_control"]},
    ])


def own_role(per_type: dict[str, float], roles_own: dict[str, float]) -> dict:
    """Atomic facts in their own role (type_2): from the equal-data conditions where they have run, else from the
    one-seed cache, whose control had no atomic facts (then the comparison is of that bundle, and says so)."""
    if roles_own.get("shared_atomic") == roles_own.get("shared_atomic"):  # not NaN
        return {"acc": roles_own["shared_atomic"], "acc_control": roles_own["distinct_atomic"],
                "control": "distinct tables, the same atomic facts", "control_reach": "the same atomic fact"}
    return {"acc": per_type["shared_type_2"], "acc_control": per_type["control_type_2"],
            "control": "distinct tables, no atomic facts", "control_reach": "nothing (it lacks the atomic facts too)"}


def taxonomy_metrics(prop: dict[str, float], shared: dict[str, float], meta: dict, own: dict, reuse: dict,
                     per_type: dict[str, float] | None = None) -> dict[str, float]:
    """The numbers the chapter records for sweeps (record_metrics), under their metric keys."""
    return {
        "acc_property_reachable": prop["acc_reachable"], "acc_property_control": prop["acc_control"],
        "acc_shared_ood": shared["acc_ood"], "acc_shared_control": shared["acc_control"],
        "acc_covered": prop["acc_ctrl_covered"], "acc_id": prop["acc_ctrl_id"],
        "n_property_reachable": prop["n_reachable"], "n_shared_ood": shared["n_ood"],
        "shared_ood_covered_share": shared["covered_share"], "training_minutes": training_minutes(meta),
        "acc_shared_uncovered": shared["acc_uncovered"], "acc_shared_uncovered_control": shared["acc_uncovered_control"],
        "n_shared_uncovered": shared["n_uncovered"], "chance_shared": shared["chance"],
        "N": meta["num_tokens"], "n_train": meta["n_train"], **reuse_metrics(reuse),
        "acc_own_role_atomic": own["acc"], "acc_own_role_atomic_control": own["acc_control"],
        "own_role_control_has_atomic": int("same atomic" in own["control"]),
        **({"acc_shared_type_3": per_type["shared_type_3"], "acc_shared_type_3_control": per_type["control_type_3"],
            "p_shared_type_3": per_type["p_type_3"]} if per_type else {}),
    }


def findings(prop: dict[str, float], shared: dict[str, float], meta: dict, seconds: float, per_type: str,
             reuse: str) -> str:
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
        f"shared-table model {shared['acc_ood']:.3f}, distinct-table control {shared['acc_control']:.3f}. " + per_type,
        "Reuse across roles, at equal data and steps: " + reuse,
        f"Compute: {training_minutes(meta):.1f} minutes of training for the three models; this chapter ran in "
        f"{seconds:.0f} s.",
    ])
