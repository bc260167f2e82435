"""Chapter 10's numbers: its metrics, the predictions written before the training beside their measurements, the
exercise's check, and the closing findings."""
from __future__ import annotations

import numpy as np
import pandas as pd

from covlib.base.paths import repository_path
from covlib.chapters.ch10_how_much_data_will_my_task_need.rule import (
    BANDS,
    ESTIMATOR,
    METRIC_KEYS,
    PREREGISTER_NAMES,
    PREREGISTERED_BOTH,
    cells_text,
    goal_text,
)
from covlib.coverage.rule import Rule, within
from covlib.figures.exercises import check_share
from covlib.search.probes import read_curves, read_probes
from covlib.search.recheck import BOOK_FLOOR
from covlib.search.reproduction import rule_cells
from covlib.tasks.graphs import get_task

PREREGISTERED = "data/predict/preregistered.csv"  # predictions committed before any probe of their tasks ran
PREREGISTERED_PROBES = "data/predict/probes_preregistered.csv"  # the searches that measure them (under the floor)
PREREGISTERED_MODEL = "L4-d128"
ARCHITECTURE_KEYS = {"two-hop, Mamba": "twohop_mamba", "two-hop, 2 layers width 64": "twohop_l2_d64",
                     "two-hop, 6 layers width 128": "twohop_l6_d128"}


def read_preregistered() -> pd.DataFrame:
    """The predictions written before the training (one row per task and N; empty when there are none)."""
    path = repository_path(PREREGISTERED)
    return pd.read_csv(path) if path.is_file() else pd.DataFrame(
        columns=["task", "N", "n_pred", "n_low", "n_high", "eligible"])


def measured_preregistered(predictions: pd.DataFrame, table: str = PREREGISTERED_PROBES) -> pd.DataFrame:
    """Each preregistered (task, N, seed) beside its measured n_req under the floor (bracket estimate) where the search
    has bracketed it: columns task, N, seed, predicted (that seed's own prediction), n_req, ratio. Empty until the
    searches have run."""
    path = repository_path(table)
    if not len(predictions) or not path.is_file():
        return pd.DataFrame(columns=["task", "N", "seed", "predicted", "n_req", "ratio"])
    cells = rule_cells(read_probes(path, replicates=True), read_curves(path), BOOK_FLOOR)["floor"]
    cells = cells[(cells["model"] == PREREGISTERED_MODEL) & ~cells["cot"].astype(bool)].dropna(subset=[ESTIMATOR])
    rows = []
    for _, p in predictions.iterrows():
        name = get_task(p["task"]).name
        for _, c in cells[(cells["task"] == name) & (cells["N"] == p["N"])].iterrows():
            own = p.get(f"seed_{int(c['seed'])}", np.nan)
            predicted = float(own) if own == own else float(p["n_pred"])
            rows.append({"task": p["task"], "N": int(p["N"]), "seed": int(c["seed"]), "predicted": predicted,
                         "n_req": float(c[ESTIMATOR]), "ratio": float(c[ESTIMATOR]) / predicted})
    return pd.DataFrame(rows, columns=["task", "N", "seed", "predicted", "n_req", "ratio"])


def read_preregistered_both() -> pd.DataFrame:
    """The amended rule's predictions (rule.PREREGISTERED_BOTH; empty when not written), with ``in_sample`` per
    (task, N): the pairs whose search had started when the amendment was written."""
    path = repository_path(PREREGISTERED_BOTH)
    return pd.read_csv(path) if path.is_file() else pd.DataFrame(
        columns=["task", "N", "n_pred", "n_low", "n_high", "eligible", "larger", "in_sample", "why_in_sample"])


def measured_both(amended: pd.DataFrame, table: str = PREREGISTERED_PROBES) -> pd.DataFrame:
    """Each measured preregistered cell against the amended rule's prediction for its seed (measured_preregistered
    read with the amended predictions), with ``in_sample`` from the amendment: only the other cells score it."""
    measured = measured_preregistered(amended, table)
    flags = amended[["task", "N", "in_sample"]].astype({"in_sample": bool})
    return measured.merge(flags, on=["task", "N"], how="left")


def both_sentence(amended: pd.DataFrame, measured: pd.DataFrame) -> str:
    """Where the amended rule stands: its out-of-sample cells only, with the in-sample ones named apart."""
    if not len(amended):
        return "No amended rule has been written down."
    ahead = amended[~amended["in_sample"].astype(bool)]
    moved = ahead[ahead["larger"].str.contains("hop facts")]
    head = (f"The amended rule changes the prediction of {moved[['task', 'N']].drop_duplicates().shape[0]} of the "
            f"{len(ahead)} (task, N) pairs it was written before; elsewhere it predicts what the shipped rule does")
    inside = measured[measured["in_sample"].astype(bool)] if len(measured) else measured
    outside = measured[~measured["in_sample"].astype(bool)] if len(measured) else measured
    told = (f" In sample for it (measured, or searched, when it was written): {len(inside)} cell"
            f"{'s' if len(inside) != 1 else ''}, measured / amended prediction "
            f"{inside['ratio'].min():.2f}-{inside['ratio'].max():.2f}." if len(inside) else "")
    if not len(outside):
        return head + "." + told + " No cell it was written before has been measured yet."
    return (head + "." + told + f" Out of sample: {len(outside)} cell{'s' if len(outside) != 1 else ''}, "
            f"{outside['ratio'].min():.2f}-{outside['ratio'].max():.2f}, {within(outside['ratio'], BANDS[1]):.0%} "
            f"within {BANDS[1]:g}x.")


def preregistered_table(predictions: pd.DataFrame, measured: pd.DataFrame) -> pd.DataFrame:
    """The predictions with the measurement beside them (median over the seeds measured so far; empty cells until
    then)."""
    if not len(predictions):
        return predictions.assign(measured=[], ratio=[])
    if len(measured):
        by = measured.groupby(["task", "N"], as_index=False).agg(measured=("n_req", "median"),
                                                                 ratio=("ratio", "median"), seeds=("seed", "size"))
        return predictions.merge(by, on=["task", "N"], how="left")
    return predictions.assign(measured=np.nan, ratio=np.nan, seeds=0)


def ratio_trend(cells: pd.DataFrame) -> str:
    """A clause on how one task's measured / predicted moves with N, when its median over seeds moves one way
    across three or more N by more than the band (else nothing): a drift that a constant factor cannot absorb."""
    medians = cells.groupby("N")["ratio"].median().sort_index()
    steps = np.diff(medians.to_numpy())
    if len(medians) < 3 or not ((steps > 0).all() or (steps < 0).all()):
        return ""
    first, last = medians.iloc[0], medians.iloc[-1]
    if max(first, last) / min(first, last) <= BANDS[1]:
        return ""
    way = "rising" if last > first else "falling"
    meaning = ("the data it needs grows faster with N than the coverage that predicts it" if way == "rising" else
               "the data it needs grows slower with N than the coverage that predicts it")
    return (f", {way} with N (median {first:.2f} at N = {medians.index[0]}, {last:.2f} at N = {medians.index[-1]}): "
            f"{meaning}")


def preregistered_sentence(predictions: pd.DataFrame, measured: pd.DataFrame) -> str:
    """Where the preregistered predictions stand: not written, written and not yet measured, or measured."""
    if not len(predictions):
        return "No prediction has been written down before a training run yet."
    tasks = predictions["task"].nunique()
    head = (f"{len(predictions)} predictions for {tasks} tasks the book had never trained, written down with the rule "
            f"that made them and committed before any probe of those tasks ran")
    if not len(measured):
        return (head + ". None is measured yet: the searches that measure them (under the floor, two seeds each) "
                "have not run, so the columns of measurements are empty. The chapter fills them when they have.")
    inside = within(measured["ratio"], BANDS[1])
    pairs = measured[["task", "N"]].drop_duplicates().shape[0]
    per_task = []
    for task, g in measured.groupby("task", sort=False):
        Ns = ", ".join(str(n) for n in sorted(g["N"].unique()))
        side = ("more than predicted in every cell" if (g["ratio"] > BANDS[1]).all() else
                "less than predicted in every cell" if (g["ratio"] < 1 / BANDS[1]).all() else
                f"{within(g['ratio'], BANDS[1]):.0%} of its cells within {BANDS[1]:g}x")
        per_task.append(f"{PREREGISTER_NAMES.get(task, task)} ({len(g)} cell{'s' if len(g) != 1 else ''} at "
                        f"N = {Ns}): {g['ratio'].min():.2f}-{g['ratio'].max():.2f}, {side}{ratio_trend(g)}")
    return (head + f". Measured so far: {len(measured)} cell{'s' if len(measured) != 1 else ''} at {pairs} of the "
            f"{len(predictions)} (task, N) pairs; measured / predicted {measured['ratio'].min():.2f}-"
            f"{measured['ratio'].max():.2f}, {inside:.0%} within {BANDS[1]:g}x. By task: " + "; ".join(per_task)
            + ".")


def chapter_metrics(rule: Rule | None, oos: pd.DataFrame, in_sample: pd.DataFrame, architecture: pd.DataFrame,
                    authors: pd.DataFrame, predictions: pd.DataFrame, measured: pd.DataFrame,
                    both: pd.DataFrame | None = None) -> dict:
    """What the chapter records (covlib.book.sweep.record_metrics); ``both``: measured_both, the amended rule's
    scores (its out-of-sample cells recorded)."""
    nan = float("nan")
    out: dict = {"predict_rule": rule.describe() if rule else "no rule", "predict_rule_floor": 1,
                 "predict_cot_rule": (f"every hop fact used by at least {rule.cot_level} training "
                                      f"example{'s' if rule.cot_level != 1 else ''} in "
                                      f"{rule.cot_share:.0%} of the ID test items" if rule else "no rule"),
                 "predict_oos_cells": int(len(oos)),
                 "predict_oos_within_115_share": round(within(oos["ratio"], BANDS[0]), 3) if len(oos) else nan,
                 "predict_oos_within_125_share": round(within(oos["ratio"], BANDS[1]), 3) if len(oos) else nan,
                 "predict_insample_within_125_share": (round(within(in_sample["ratio"], BANDS[1]), 3)
                                                       if len(in_sample) else nan)}
    for label, key in METRIC_KEYS.items():
        part = oos[oos["series"] == label]["ratio"] if len(oos) else pd.Series(dtype=float)
        out[f"predict_oos_median_ratio_{key}"] = round(float(np.nanmedian(part)), 3) if part.notna().any() else nan
    if len(architecture):
        out["predict_architecture_within_125_share"] = round(within(architecture["ratio"], BANDS[1]), 3)
        for label, g in architecture.groupby("series"):
            key = ARCHITECTURE_KEYS.get(label, label)
            out[f"predict_ratio_{key}_min"] = round(float(g["ratio"].min()), 3)
            out[f"predict_ratio_{key}_max"] = round(float(g["ratio"].max()), 3)
    if len(authors):
        out["predict_ratio_authors_min"] = round(float(authors["ratio"].min()), 3)
        out["predict_ratio_authors_max"] = round(float(authors["ratio"].max()), 3)
    out["predict_preregistered_tasks"] = int(predictions["task"].nunique()) if len(predictions) else 0
    out["predict_preregistered_cells_measured"] = int(len(measured))
    out["predict_preregistered_tasks_measured"] = int(measured["task"].nunique()) if len(measured) else 0
    out["predict_preregistered_ratio_min"] = round(float(measured["ratio"].min()), 3) if len(measured) else nan
    out["predict_preregistered_ratio_max"] = round(float(measured["ratio"].max()), 3) if len(measured) else nan
    out["predict_preregistered_within_125_share"] = (round(within(measured["ratio"], BANDS[1]), 3) if len(measured)
                                                     else nan)
    if both is not None:
        outside = both[~both["in_sample"].astype(bool)] if len(both) else both
        out["predict_preregistered_both_oos_cells"] = int(len(outside))
        out["predict_preregistered_both_ratio_min"] = round(float(outside["ratio"].min()), 3) if len(outside) else nan
        out["predict_preregistered_both_ratio_max"] = round(float(outside["ratio"].max()), 3) if len(outside) else nan
    return out


def raw_within_share(oos: pd.DataFrame, band: float = BANDS[1]) -> float:
    """The exercise's truth: the share of the out-of-sample cells within the band of the raw crossing (factor 1)."""
    return within(oos["ratio"] * oos["factor"], band) if len(oos) else float("nan")


def check_raw_within(answer, truth: float, band: float = BANDS[1]) -> str:
    """The exercise's check: the share of the out-of-sample cells within the band of the raw crossing (factor 1)."""
    return check_share(answer, truth, f"the share of out-of-sample cells within {band:g}x of the raw crossing",
                       "multiply each out-of-sample cell's ratio by the factor of the rule that predicted it (in `oos`) "
                       f"and count the products between 1/{band:g} and {band:g}", tol=0.005, name="my_raw_within",
                       hint="the raw ratio is n_req / crossing = ratio x factor; a missing prediction counts as "
                            "outside, and a ratio inside the band counts in either direction.")


def findings(rule: Rule | None, summary: pd.DataFrame, oos: pd.DataFrame, in_sample: pd.DataFrame,
             architecture: pd.DataFrame, prereg: str, amended: str = "") -> str:
    """The closing summary, one finding per line: the rule, its out-of-sample score against the goal set before it,
    each task, the architecture test, and the predictions written down before the training (``prereg``; and
    ``amended``, the amended rule's, where one was written)."""
    if rule is None:
        return "No rule: no task has measured cells with crossings yet."
    lines = [f"The rule, fitted on the cells of {len(rule.fitted_on)} tasks under the give-up floor: n_req = "
             f"{rule.describe()}.",
             f"Out of sample (each task predicted by the rule fitted without any of its cells): "
             f"{within(oos['ratio'], BANDS[1]):.0%} of {len(oos)} cells within {BANDS[1]:g}x, "
             f"{within(oos['ratio'], BANDS[0]):.0%} within {BANDS[0]:g}x. In sample (the same cells, the rule fitted on "
             f"all of them, counted apart): {within(in_sample['ratio'], BANDS[1]):.0%} within {BANDS[1]:g}x. "
             + goal_text(oos)]
    for _, r in summary.iterrows():
        spread = (f" ({r['ratio_min']:.2f}-{r['ratio_max']:.2f})" if r["cells"] > 1 else "")
        lines.append(f"{r['series']}: {cells_text(r['cells'], r['N'])}, median measured / predicted {r['median']:.2f}"
                     f"{spread}, {r['within_125']} within {BANDS[1]:g}x.")
    if len(architecture):
        lines.append(f"Architecture test (two-hop's other models, by the rule fitted without two-hop): "
                     f"{within(architecture['ratio'], BANDS[1]):.0%} of {len(architecture)} cells within "
                     f"{BANDS[1]:g}x.")
    lines.append(prereg)
    if amended:
        lines.append(amended)
    return "\n".join(lines)

