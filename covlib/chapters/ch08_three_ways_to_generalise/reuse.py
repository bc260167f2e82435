"""The role table read as numbers and sentences: accuracy per test type and per role of the unseen fact in the
four conditions, the second-role reuse test against the best control, and its verdict."""
from __future__ import annotations

import numpy as np
import pandas as pd
from statsmodels.stats.proportion import proportions_ztest

from covlib.base.tables import read_table
from covlib.chapters.ch08_three_ways_to_generalise.roles import CONTROLS, ROLE_COLUMNS, TREATED, roles_path
from covlib.figures.text import count_of, p_value

CONDITION_NAMES = {"distinct_atomic": "distinct tables + atomic facts",
                   "distinct_first_role": "distinct tables + first-role items",
                   "shared_atomic": "one table + atomic facts",
                   "shared_first_role": "one table + first-role items"}

ROLE_OF_TYPE = {"type:type_0": "none (ID)", "type:type_2": "first hop", "type:type_3": "second hop",
                "type:type_1": "both hops"}  # which hop's fact is held out of the composed ID items

STATUS_WORDS = {"own": "in its own role", "other_role": "in the other role only", "atomic": "as an atomic item",
                "none": "never"}

TREATED_REUSE = "shared_first_role"  # the pure reuse condition: held-out facts taught only in the first hop's role
ALPHA = 0.01
MIN_SEEDS = 2  # training seeds whose tests must each agree before the chapter claims reuse or its absence


def load_roles(cache_dir) -> pd.DataFrame:
    """roles.csv of a cache folder (empty with its columns when the runs have not been made)."""
    return read_table(roles_path(cache_dir), ROLE_COLUMNS)


def role_accuracy(roles: pd.DataFrame) -> pd.DataFrame:
    """Per condition and test type: inputs (per seed), seeds, mean accuracy over seeds and its range, and how
    training taught the held-out fact (the status of each hop's fact)."""
    rows = roles[roles.group.isin(ROLE_OF_TYPE)]
    out = rows.groupby(["group", "condition"], sort=False).agg(
        n=("n", "first"), seeds=("seed", "nunique"), acc=("acc", "mean"), acc_min=("acc", "min"),
        acc_max=("acc", "max"), covered_share=("covered_share", "mean"), status_1=("status_1", "first"),
        status_2=("status_2", "first")).reset_index()
    out["unseen fact"] = out.group.map(ROLE_OF_TYPE)
    out["model"] = out.condition.map(CONDITION_NAMES).fillna(out.condition)
    return out


def pooled(roles: pd.DataFrame, condition: str, group: str) -> tuple[int, int, list[float]]:
    """Correct answers and inputs of one (condition, group), summed over seeds, and the per-seed accuracies."""
    rows = roles[(roles.condition == condition) & (roles.group == group)]
    return int(rows.correct.sum()), int(rows.n.sum()), rows.sort_values("seed").acc.tolist()


def reuse_test(roles: pd.DataFrame, num_tokens: int, treated: str = TREATED_REUSE) -> dict:
    """The second-role reuse test: the treated model on inputs whose second fact it was taught only in another
    role (reuse_second_role), against the best control on inputs whose second fact is held out (type_3) and
    against chance. One-sided two-proportion z-tests (statsmodels), on the inputs pooled over seeds and per
    seed; ``holds`` when every seed's test and the pooled one have p < ALPHA against the best control."""
    chance = 1 / num_tokens
    x_t, n_t, per_seed_t = pooled(roles, treated, "reuse_second_role")
    controls = {c: pooled(roles, c, "type:type_3") for c in CONTROLS}
    controls = {c: v for c, v in controls.items() if v[1]}
    result = {"treated": treated, "acc": x_t / n_t if n_t else float("nan"), "n": n_t, "seeds": len(per_seed_t),
              "per_seed": per_seed_t, "chance": chance, "control": "", "acc_control": float("nan"), "n_control": 0,
              "control_per_seed": [], "p": float("nan"), "p_per_seed": [], "holds": False,
              "other_treated": {}, "paired_seeds": 0}
    for other in TREATED:
        if other != treated:
            x_o, n_o, _ = pooled(roles, other, "reuse_second_role")
            result["other_treated"][other] = (x_o / n_o if n_o else float("nan"), n_o)
    if not n_t or not controls:
        return result
    best = max(controls, key=lambda c: controls[c][0] / controls[c][1])
    x_c, n_c, per_seed_c = controls[best]
    result |= {"control": best, "acc_control": x_c / n_c, "n_control": n_c, "control_per_seed": per_seed_c}
    result["p"] = float(proportions_ztest([x_t, x_c], [n_t, n_c], alternative="larger")[1])
    seeds = sorted(set(roles.loc[roles.condition == treated, "seed"]) & set(roles.loc[roles.condition == best, "seed"]))
    result["paired_seeds"] = len(seeds)  # the seeds with both the model and its control: what a decision rests on
    for seed in seeds:
        t = roles[(roles.condition == treated) & (roles.group == "reuse_second_role") & (roles.seed == seed)]
        c = roles[(roles.condition == best) & (roles.group == "type:type_3") & (roles.seed == seed)]
        result["p_per_seed"].append(float(proportions_ztest([int(t.correct.iloc[0]), int(c.correct.iloc[0])],
                                                            [int(t.n.iloc[0]), int(c.n.iloc[0])],
                                                            alternative="larger")[1]))
    # a test over inputs counts one training run's luck many times: a finding needs it in MIN_SEEDS seeds
    result["holds"] = bool(result["p"] < ALPHA and len(result["p_per_seed"]) >= MIN_SEEDS
                           and max(result["p_per_seed"]) < ALPHA and result["acc"] > chance)
    return result


def reuse_verdict(test: dict, command: str) -> str:
    """Whether a fact taught in the first hop's role is reused in the second, from the test's numbers."""
    if not test["n"] or not test["control"]:
        partial = (f" So far the shared first-role model gets {test['acc']:.1%} of its {test['n']:,} reuse inputs, with "
                   "no control to read it against." if test["n"] else "")
        return ("**Not measured yet:** the runs that separate reuse across roles from atomic facts used in their own "
                f"role are not all in the cache.{partial} Fill it with `{command}`; until then this chapter does not "
                "claim reuse.")
    seeds = test["seeds"]
    line = (f"Inputs whose second-hop fact the shared table was taught only in the first hop's role: "
            f"{test['acc']:.1%} correct ({test['n']:,} input-runs over {seeds} seed{'s' if seeds != 1 else ''}; per seed "
            f"{', '.join(f'{a:.1%}' for a in test['per_seed'])}), against {test['acc_control']:.1%} for the best "
            f"control ({CONDITION_NAMES[test['control']]}, its inputs with the second fact held out) and chance "
            f"{test['chance']:.1%}; one-sided two-proportion test {p_value(test['p'])}"
            + (f" (per seed: {', '.join(p_value(p) for p in test['p_per_seed'])})" if test["p_per_seed"] else "")
            + ". ")
    if test["paired_seeds"] < MIN_SEEDS:
        return line + (f"With {count_of(test['paired_seeds'], 'training seed')} that has both this model and its "
                       "control, this decides nothing yet: the test counts inputs, and "
                       "every input of a seed shares that one run's luck. The chapter claims reuse, or its absence, "
                       f"once {MIN_SEEDS} seeds agree (the book's queue trains the rest: `{command}`).")
    if test["holds"]:
        return line + "A fact learned in one role is reused in the other: shared-operator generalisation."
    agree = [p for p in test["p_per_seed"] if p < ALPHA]
    if agree:  # some seeds pass and some do not: the seeds disagree, which is itself what the reader should know
        return line + (f"The seeds disagree ({len(agree)} of {len(test['p_per_seed'])} below p = {ALPHA}), so reuse "
                       "across roles is not shown: a finding needs every seed's test to agree. Any effect is small: "
                       f"{(test['acc'] - test['acc_control']) * 100:+.1f} points pooled, near chance.")
    return line + ("No reuse across roles is shown: a fact taught in the first hop's role is not used in the second "
                   "beyond what the control reaches in any seed.")


def own_role_numbers(roles: pd.DataFrame) -> dict[str, float]:
    """Atomic facts in their own role: type_2 (first fact held out, taught as an atomic item) in the shared and
    the distinct atomic models, pooled over seeds."""
    out = {}
    for condition in ("shared_atomic", "distinct_atomic"):
        x, n, _ = pooled(roles, condition, "type:type_2")
        out[condition] = x / n if n else float("nan")
    return out


def reuse_metrics(test: dict) -> dict[str, float]:
    """The recorded numbers of the reuse test (NaN before its runs exist)."""
    return {"acc_reuse_second_role": test["acc"], "acc_reuse_second_role_control": test["acc_control"],
            "n_reuse_second_role": test["n"] // max(test["seeds"], 1), "p_reuse_second_role": test["p"],
            "acc_reuse_second_role_atomic": test["other_treated"].get("shared_atomic", (float("nan"), 0))[0],
            "seeds_reuse_second_role": test["paired_seeds"], "reuse_second_role_shown": int(test["holds"]),
            "p_reuse_second_role_max_seed": max(test["p_per_seed"], default=float("nan"))}


def role_table_frame(roles: pd.DataFrame) -> pd.DataFrame:
    """role_accuracy as the reader's table: one row per test type and model, how its facts were taught."""
    acc = role_accuracy(roles)
    if acc.empty:
        return acc
    acc["first fact taught"] = acc.status_1.map(STATUS_WORDS)
    acc["second fact taught"] = acc.status_2.map(STATUS_WORDS)
    acc["seed range"] = [f"{lo:.1%} to {hi:.1%}" if s > 1 else "one seed"
                         for lo, hi, s in zip(acc.acc_min, acc.acc_max, acc.seeds)]
    order = {g: i for i, g in enumerate(ROLE_OF_TYPE)}
    acc = acc.sort_values(["group", "condition"], key=lambda col: col.map(order) if col.name == "group" else col)
    return acc[["unseen fact", "model", "first fact taught", "second fact taught", "n", "seeds", "acc", "seed range",
                "covered_share"]]


def per_type_reading(table: pd.DataFrame) -> dict[str, float]:
    """From the one-seed cache of three models (groups.csv): where the shared model's correct cross-role answers
    come from, and how it does on the test types whose held-out fact must be reused in the second hop's role
    against the distinct-table control (which had no atomic facts: the comparison is of that bundle)."""
    def row(condition: str, group: str) -> tuple[float, int]:
        r = table[(table.condition == condition) & (table.group == group)]
        return (float(r.acc.iloc[0]), int(r.n.iloc[0])) if len(r) else (float("nan"), 0)

    out = {}
    correct = {t: np.prod(row("shared", f"type:{t}")) for t in ("type_1", "type_2", "type_3")}
    total = sum(correct.values())
    out["type_2_share_of_correct"] = correct["type_2"] / total if total else float("nan")
    for t in ("type_1", "type_2", "type_3"):
        (a_s, n_s), (a_c, n_c) = row("shared", f"type:{t}"), row("distinct", f"type:{t}")
        out[f"shared_{t}"], out[f"control_{t}"], out[f"n_{t}"] = a_s, a_c, n_s
        out[f"p_{t}"] = (float(proportions_ztest([round(a_s * n_s), round(a_c * n_c)], [n_s, n_c],
                                                  alternative="larger")[1]) if n_s and n_c else float("nan"))
    return out


def per_type_sentence(reading: dict[str, float]) -> str:
    """What the one-seed cache shows once its OOD inputs are split by test type (the conclusion follows p)."""
    r = reading
    reuse = r["p_type_3"] < ALPHA and r["shared_type_3"] > r["control_type_3"]
    own = r["p_type_2"] < ALPHA and r["shared_type_2"] > r["control_type_2"]
    return (f"Split by test type, {r['type_2_share_of_correct']:.0%} of the shared model's correct OOD answers are "
            f"type_2 inputs (first fact held out, taught as an atomic item in the first hop's own slots): "
            f"{r['shared_type_2']:.1%} against {r['control_type_2']:.1%} for a control that had no atomic facts. Where "
            f"only the second hop's fact is held out (type_3, {r['n_type_3']:,} inputs), so that the atomic fact "
            f"would have to be reused in the second hop's role, the shared model gets {r['shared_type_3']:.1%} against "
            f"the control's {r['control_type_3']:.1%} (one-sided {p_value(r['p_type_3'])}); type_1, where both facts "
            f"are held out and the first is again taught in its own slots, mixes the two: {r['shared_type_1']:.1%} "
            f"against {r['control_type_1']:.1%} ({p_value(r['p_type_1'])}). So these models show "
            + ("atomic facts used in their own role" if own else "no clear use of atomic facts even in their own role")
            + (", and a sign of second-role reuse against a control that also lacks the atomic "
                                "facts" if reuse else ", and no sign of reuse in the second hop's role")
            + "; the conditions below separate the two at equal data and steps.")
