"""A reader's own composition: its coverage as the data grows, the rule's prediction over N, and one probe
trained at the predicted size to check it."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from covlib.coverage.predict import predict_with_rule
from covlib.coverage.requirement import largest_probe, probe_coverage_by_k
from covlib.coverage.rule import Rule
from covlib.search.cells import Cell, Probe, ProbeRules
from covlib.search.recheck import BOOK_FLOOR
from covlib.search.required_data import run_probe
from covlib.tasks.datasets import eligible_count
from covlib.tasks.graphs import get_task


def coverage_growth(formula: str, N: int, seed: int = 0, points: int = 7, max_k: int = 5,
                    test_size_per_type: int = 300) -> pd.DataFrame:
    """Share of the ID test items k-covered (k = 1..max_k) at ``points`` training-set sizes from N to the
    largest the ID pool allows (log-spaced): columns n_train, k, covered."""
    name = get_task(formula).name
    top = largest_probe(eligible_count(name, N, seed))
    sizes = np.unique(np.geomspace(min(N, top), top, points).round().astype(int))
    return pd.concat([probe_coverage_by_k(name, N, int(n), seed, max_k, test_size_per_type).assign(n_train=int(n))
                      for n in sizes], ignore_index=True)[["n_train", "k", "covered"]]


def reader_prediction(formula: str, Ns: Sequence[int], rule: Rule, seeds: Sequence[int] = (0, 1, 2), cot: bool = False
                      ) -> pd.DataFrame:
    """The book's rule applied to the reader's task at each N (covlib.coverage.predict.predict_with_rule: the
    evidence, level, share and factor the rule reads for it), as `covlib predict` applies it."""
    return predict_with_rule(formula, Ns, rule, cot, seeds)


def check_probe(formula: str, N: int, n_train: int, work: Path, model: str, step_cap: int, seed: int = 0,
                give_up_floor: int = BOOK_FLOOR, cot: bool = False) -> dict:
    """Train one probe of the reader's task at ``n_train`` (at most the largest the ID pool allows while keeping a
    test set) under the book's probe rules (type_0 accuracy 0.99, the authors' give-up rule with a floor of
    ``give_up_floor`` steps past the fit, ``step_cap``) and return its row (n_train, eligible, success, best_type0,
    steps, stopped, give_up_floor, minutes)."""
    name = get_task(formula).name
    eligible = eligible_count(name, N, seed, cot)
    n = int(min(n_train, largest_probe(eligible)))
    rules = ProbeRules(step_cap=step_cap, give_up_floor=give_up_floor)
    probe = Probe(Cell(name, N, model, seed, cot), n, eligible, rules, str(work / "probes.csv"), str(work))
    return run_probe(probe)


def probe_size(prediction: pd.DataFrame, N: int) -> tuple[int, float] | None:
    """Where to train the check probe: (N, predicted n_req) at ``N``, else at the predicted N nearest it (None when
    no N has a prediction: coverage never reaches the rule's share below the ID pool)."""
    done = prediction.dropna(subset=["n_pred"])
    if not len(done):
        return None
    row = done.loc[(done["N"] - N).abs().idxmin()]
    return int(row["N"]), float(row["n_pred"])


def no_probe_sentence(prediction: pd.DataFrame) -> str:
    """Why no check probe was trained."""
    return (f"At N = {', '.join(str(int(n)) for n in prediction['N'])} coverage does not reach the rule's share below "
            "the ID pool in every seed: the rule predicts no training set the pool allows is enough. Try larger N.")


def probe_position(n_train: int, predicted: float, eligible: int | None = None) -> str:
    """Where the size probed sits against the prediction, in whole examples: "below", "at" or "above" it, or
    "capped" (below it because the ID pool allows no more while keeping a test set)."""
    target = int(round(predicted))
    if n_train == target:
        return "at"
    if n_train > target:
        return "above"
    if eligible is not None and n_train >= largest_probe(int(eligible)):
        return "capped"
    return "below"


def probe_sentence(row: dict, predicted: float) -> str:
    """What the check probe says about the prediction, in a sentence: its outcome (99% ID accuracy or not) read
    against where its size sits (below, at or above the prediction, or capped by the ID pool)."""
    n = int(row["n_train"])
    where = probe_position(n, predicted, row.get("eligible"))
    size = {"at": f"{n:,} training examples, the rule's prediction,",
            "below": f"{n:,} training examples, below the rule's prediction ({predicted:,.0f}),",
            "above": f"{n:,} training examples, above the rule's prediction ({predicted:,.0f}),",
            "capped": (f"{n:,} training examples, the most the ID pool allows while keeping a test set (the rule "
                       f"predicts {predicted:,.0f}: more than the pool holds),")}[where]
    if row["success"]:
        verdict = {"at": "the prediction is enough here; a probe below it would tell whether it is also necessary.",
                   "below": "fewer examples than predicted were enough, so the rule overestimates this task here.",
                   "capped": "fewer examples than predicted were enough, so the rule overestimates this task here.",
                   "above": "a size above the prediction is enough, which neither confirms nor refutes it."}[where]
        return f"At {size} the probe reached 99% ID accuracy at step {int(row['steps']):,}: {verdict}"
    floor = int(row.get("give_up_floor", 0) or 0)
    why = {"gave_up": f"the give-up rule with its {floor:,}-step floor ended it" if floor else
                      "the authors' give-up rule ended it",
           "steps": "the step cap ended it"}.get(str(row["stopped"]), f"it stopped ({row['stopped']})")
    if row["stopped"] == "gave_up" and not floor:
        # chapter 4: that rule gives a small training set a few hundred steps, too few to tell it cannot generalise
        why += (f" (chapter 4 finds that rule stops small training sets early: `give_up_floor = {BOOK_FLOOR}`, "
                f"with a `step_cap` above it, trains the probe at least {BOOK_FLOOR:,} steps past its fit)")
    head = (f"At {size} the probe did not reach 99%: its best ID accuracy was {row['best_type0']:.1%} when {why} "
            f"after {int(row['steps']):,} steps")
    if where in ("below", "capped"):
        return head + ", as the rule expects of a training set below its prediction."
    cap = ", or longer training than the cap allows" if row["stopped"] == "steps" else ""
    if where == "at":
        return head + f". The task needs more than the rule predicts{cap}."
    return head + f". The task needs more than even this size above the prediction: the rule underestimates it{cap}."


FITTED_MODEL = "L4-d128"  # the model whose cells fitted the rule


def model_note(model: str, architecture: pd.DataFrame) -> str:
    """A caveat when the check probe's model is not the one whose cells fitted the rule: how that model's own
    two-hop cells compared with the rule (the architecture test), where the book has them."""
    if model == FITTED_MODEL:
        return ""
    text = (f"The probe trains the `{model}` model; the rule was fitted on the 4-layer width-128 transformer's "
            "cells, so the probe tests the model as much as the rule.")
    names = {"L2-d64": "two-hop, 2 layers width 64", "L6-d128": "two-hop, 6 layers width 128",
             "mamba-L4-d128": "two-hop, Mamba"}
    own = architecture[architecture["series"] == names.get(model, "")] if len(architecture) else architecture
    if len(own):
        text += (f" On two-hop, that model's measured n_req was {own['ratio'].min():.2f}-{own['ratio'].max():.2f}x "
                 "the rule's prediction (the architecture test in 10.3).")
    return text


def reader_metrics(formula: str, cot: bool, prediction: pd.DataFrame, growth: pd.DataFrame, k: int,
                   where: tuple[int, float] | None, row: dict | None) -> dict:
    """What a sweep over the reader's task records of it: the task, its predictions (as text) and the one at the
    probe's N, its k-coverage by the definition at the largest size the growth reached, and the check probe's size,
    where that size sits against the prediction, its outcome and best ID accuracy."""
    top = growth[growth["n_train"] == growth["n_train"].max()] if len(growth) else growth
    covered = top.loc[top["k"] == k, "covered"] if len(top) else pd.Series(dtype=float)
    out = {"reader_task": get_task(formula).graph, "reader_cot": bool(cot), "reader_k": int(k),
           "reader_predictions": "; ".join(f"N = {int(r.N)}: " + (f"{r.n_pred:.0f}" if r.n_pred == r.n_pred else "none")
                                           for r in prediction.itertuples()),
           "reader_predicted_n_req": round(where[1]) if where is not None else float("nan"),
           "reader_covered_share": round(float(covered.iloc[0]), 4) if len(covered) else float("nan"),
           "reader_covered_at_n_train": int(top["n_train"].max()) if len(top) else None}
    if where is not None and row is not None:
        out |= {"reader_probe_N": int(where[0]), "reader_probe_n_train": int(row["n_train"]),
                "reader_probe_position": probe_position(int(row["n_train"]), where[1], row.get("eligible")),
                "reader_probe_success": bool(row["success"]), "reader_probe_best_type0": round(float(row["best_type0"]), 4)}
    return out


# the reader's part of the chapter at each preset: N of the coverage growth and of the check probe, N values of
# the prediction, seeds, and the probe's model and step cap
# (the default trains the 2-layer width-64 model, about four times faster a step than the book's 4-layer width-128
# one, so that the chapter stays within a couple of minutes; the paper preset trains the book's model)
PRESETS: dict[str, dict] = {
    "smoke": {"my_N": 10, "my_Ns": [8, 10], "seeds": [0], "model": "L2-d64", "step_cap": 100, "predict_N": [12]},
    "default": {"my_N": 14, "my_Ns": [12, 14, 16, 20], "seeds": [0, 1, 2], "model": "L2-d64", "step_cap": 2000,
                "predict_N": [20, 30]},
    "paper": {"my_N": 20, "my_Ns": [10, 14, 20, 25, 30], "seeds": [0, 1, 2], "model": "L4-d128", "step_cap": 6000,
              "predict_N": [20, 30, 50]},
}
