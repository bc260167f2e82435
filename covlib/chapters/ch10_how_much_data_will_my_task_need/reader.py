"""A reader's own composition: its coverage as the data grows, the rule's prediction over N, and one probe
trained at the predicted size to check it."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from covlib.coverage.predict import predict_requirement
from covlib.coverage.requirement import largest_probe, probe_coverage_by_k
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


def reader_prediction(formula: str, Ns: Sequence[int], rule: dict, seeds: Sequence[int] = (0, 1, 2)) -> pd.DataFrame:
    """The rule's prediction for the reader's task at each N (covlib.coverage.predict with the rule's k, share
    and factor)."""
    return predict_requirement(formula, Ns, rule["k"], rule["target"], seeds, rule["factor"])


def check_probe(formula: str, N: int, n_train: int, work: Path, model: str, step_cap: int, seed: int = 0,
                give_up_floor: int = 0) -> dict:
    """Train one probe of the reader's task at ``n_train`` under the book's probe rules (type_0 accuracy 0.99,
    the authors' give-up rule with a floor of ``give_up_floor`` steps past the fit, ``step_cap``) and return its
    row (success, best_type0, steps, stopped, give_up_floor, minutes)."""
    name = get_task(formula).name
    eligible = eligible_count(name, N, seed)
    n = int(min(n_train, largest_probe(eligible)))
    rules = ProbeRules(step_cap=step_cap, give_up_floor=give_up_floor)
    probe = Probe(Cell(name, N, model, seed), n, eligible, rules, str(work / "probes.csv"), str(work))
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


def probe_sentence(row: dict, predicted: float) -> str:
    """What the check probe says about the prediction, in a sentence (success or not, and how far it got)."""
    size = f"{int(row['n_train']):,} training examples (the rule predicts {predicted:,.0f})"
    if predicted > int(row["n_train"]):
        size = (f"{int(row['n_train']):,} training examples, the most the ID pool allows while keeping a test set "
                f"(the rule predicts {predicted:,.0f}: more than the pool holds),")
    if row["success"] and predicted > int(row["n_train"]):
        return (f"At {size} the probe reached 99% ID accuracy at step {int(row['steps']):,}: fewer examples than "
                "predicted were enough, so the rule overestimates this task here.")
    if row["success"]:
        return (f"At {size} the probe reached 99% ID accuracy at step {int(row['steps']):,}: the prediction is "
                "enough here. A probe below it would tell whether it is also necessary.")
    floor = int(row.get("give_up_floor", 0) or 0)
    why = {"gave_up": f"the give-up rule with its {floor:,}-step floor ended it" if floor else
                      "the authors' give-up rule ended it",
           "steps": "the step cap ended it"}.get(str(row["stopped"]), f"it stopped ({row['stopped']})")
    if row["stopped"] == "gave_up" and not floor:
        # chapter 4: that rule gives a small training set a few hundred steps, too few to tell it cannot generalise
        why += (f" (chapter 4 finds that rule stops small training sets early: `give_up_floor = {BOOK_FLOOR}`, "
                f"with a `step_cap` above it, trains the probe at least {BOOK_FLOOR:,} steps past its fit)")
    if predicted > int(row["n_train"]):
        return (f"At {size} the probe did not reach 99%: its best ID accuracy was {row['best_type0']:.1%} when {why} "
                f"after {int(row['steps']):,} steps, as the rule expects of a training set below its prediction.")
    return (f"At {size} the probe did not reach 99%: its best ID accuracy was {row['best_type0']:.1%} when {why} "
            f"after {int(row['steps']):,} steps. The task needs more than the rule predicts"
            + (", or longer training than the cap allows." if row["stopped"] == "steps" else "."))


# the reader's part of the chapter at each preset: N of the coverage growth and of the check probe, N values of
# the prediction, seeds, and the probe's model and step cap
PRESETS: dict[str, dict] = {
    "smoke": {"my_N": 10, "my_Ns": [8, 10], "seeds": [0], "model": "L2-d64", "step_cap": 100, "predict_N": [12]},
    "default": {"my_N": 12, "my_Ns": [8, 10, 12, 14], "seeds": [0, 1, 2], "model": "L4-d128", "step_cap": 2000,
                "predict_N": [20, 30]},
    "paper": {"my_N": 20, "my_Ns": [10, 14, 20, 25, 30], "seeds": [0, 1, 2], "model": "L4-d128", "step_cap": 6000,
              "predict_N": [20, 30, 50]},
}
