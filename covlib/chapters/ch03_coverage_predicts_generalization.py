"""Chapter 3 (coverage predicts generalisation): the live run, the run at the edge of coverage, what they record."""
from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import altair as alt
import pandas as pd

from covlib.analyses import curves
from covlib.analyses.curves import cutoff_table
from covlib.base.paths import readable_path, repository_path
from covlib.coverage.annotate import annotate_dataset, wide_table
from covlib.figures.charts import accuracy_by_cutoff_chart, accuracy_curves_chart
from covlib.figures.exercises import check_choice, read_answer, right, unanswered, unchecked, wrong
from covlib.figures.style import GROUP_COLORS, TYPE_COLORS
from covlib.figures.tables import ReaderTable, reader_table
from covlib.tasks.datasets import DatasetConfig, ensure_dataset
from covlib.training.config import RunConfig, TrainConfig, make_config, run_name
from covlib.training.loop import TrainResult
from covlib.training.runs import RESULT, first_step_above, load_metrics, load_run_config
from covlib.training.shipped import EDGE_RUN, EDGE_SEEDS_COMMAND, archive_run, shipped_edge_seeds, train_or_load

# the functions of covlib's layers the chapter's notebook calls through this module (`import covlib.chapters.ch03_coverage_predicts_generalization
# as ch03`, then `ch03.ensure_dataset(...)`), one import away from where each is defined
__all__ = [
    "DatasetConfig",
    "EDGE_SEEDS_COMMAND",
    "GROUP_COLORS",
    "TYPE_COLORS",
    "accuracy_by_cutoff_chart",
    "accuracy_curves_chart",
    "annotate_dataset",
    "curves",
    "ensure_dataset",
    "first_step_above",
    "load_metrics",
    "load_run_config",
    "make_config",
    "readable_path",
    "run_name",
    "shipped_edge_seeds",
    "wide_table",
]


PRESETS = {
    # model preset, live dataset and budget
    "smoke": {"model": "smoke", "N": 10, "n_train": 450, "steps": 300, "eval_every": 50},
    "default": {"model": "default", "N": 30, "n_train": 10_000, "steps": 2000, "eval_every": 50},
    "paper": {"model": "paper", "N": 30, "n_train": 10_000, "steps": 62_500, "eval_every": 25},
}


# The live run of 3.2-3.4 as the default preset trains it, shipped (config, metrics, result; no weights) so that
# the book draws the same curves on every machine. The chapter trains it again when asked (recompute_live_run).
LIVE_RUN = {
    "archive": "data/runs/twohop.30.10000.seed-0_wd-0.1",
    "commands": ["python -c \"from covlib.chapters.ch03_coverage_predicts_generalization import ship_live_run; "
                 "ship_live_run()\"  # trains in build/runs/live (minutes), then archives"],
}


def live_config() -> tuple[DatasetConfig, str, dict[str, Any]]:
    """The live run of the default preset: its dataset, model preset and training overrides (as the notebook
    makes them from its parameters)."""
    knobs = PRESETS["default"]
    overrides = {"steps": knobs["steps"], "eval_every": knobs["eval_every"], "seed": 42}
    return DatasetConfig("twohop", knobs["N"], knobs["n_train"], seed=0), knobs["model"], overrides


def ship_live_run(work: str | os.PathLike = "build") -> Path:
    """Train the default preset's live run under ``work`` (resuming a killed one) and archive its config,
    metrics and result (no weights) where the chapter reads them."""
    dataset_config, model_preset, overrides = live_config()
    dataset = ensure_dataset(dataset_config, Path(work) / "datasets")
    annotate_dataset(dataset)
    train_or_load(dataset, Path(work) / "runs" / "live", preset=model_preset, overrides=overrides)
    return archive_run(Path(work) / "runs" / "live", repository_path(LIVE_RUN["archive"]), LIVE_RUN["commands"])


def shipped_result(archive: str | os.PathLike, config: RunConfig, dataset_name: str) -> TrainResult | None:
    """The archived run read back as a TrainResult when it was trained with exactly ``config`` on the dataset
    named ``dataset_name``; None when it is missing or differs (then the chapter trains)."""
    archive = Path(archive)
    if not (archive / RESULT).is_file():
        return None
    stored = load_run_config(archive)
    wanted = json.loads(json.dumps(config.to_dict()))
    # a knob added after the run was archived (e.g. give_up_floor) has the value it was trained under: the default
    stored_train = {**json.loads(json.dumps(dataclasses.asdict(TrainConfig()))), **stored["train"]}
    if (stored["dataset"]["name"] != dataset_name or stored["model"] != wanted["model"]
            or stored_train != wanted["train"]):
        return None
    result = json.loads((archive / RESULT).read_text(encoding="utf-8"))
    metrics = load_metrics(archive)
    first = first_step_above(metrics, "acc/type_0", config.train.threshold)
    return TrainResult(archive, config, metrics, result["final"], first, result["stopped"])


def live_run(dataset: str | os.PathLike, run_dir: Path, config: RunConfig, model_preset: str,
             overrides: Mapping[str, Any], recompute: bool, retrain: bool) -> TrainResult:
    """The run of 3.2-3.4: the shipped one when it has this config (the default preset's), else trained (or
    resumed) in ``run_dir``; ``recompute`` or ``retrain`` always train."""
    if not (recompute or retrain):
        shipped = shipped_result(repository_path(LIVE_RUN["archive"]), config, Path(dataset).name)
        if shipped is not None:
            return shipped
    return train_or_load(dataset, run_dir, preset=model_preset, overrides=dict(overrides), retrain=retrain)


def training_speed(metrics: pd.DataFrame) -> str:
    """How long a run's training took: steps, minutes and steps per second (evaluation included)."""
    step, elapsed = metrics["step"].iloc[-1], metrics["elapsed"].iloc[-1]
    return (f"trained {int(step)} steps in {elapsed / 60:.1f} min "
            f"({step / elapsed:.1f} steps/s including evaluation)")


def edge_shares_text(shares: Mapping[str, float]) -> str:
    """One sentence on how the ID test items of the edge dataset split by k-cutoff (below, at, above 3)."""
    return (f"ID test items of the edge dataset by k-cutoff: {shares['k<3']:.0%} below 3, "
            f"{shares['k=3']:.0%} exactly 3, {shares['k>3']:.0%} above.")


def edge_run_folder(edge_dataset: str | os.PathLike, root: Path, recompute: bool, edge_run: str | os.PathLike,
                    retrain: bool) -> Path:
    """The run at the edge of coverage: retrained under ``root``/runs/edge when ``recompute``, else the folder
    ``edge_run``, else the one shipped under data/runs/ (it takes about 20 CPU-minutes to train)."""
    if recompute:
        result = train_or_load(edge_dataset, root / "runs" / "edge", preset="default",
                               overrides=EDGE_RUN["overrides"], retrain=retrain)
        return result.run_dir
    return Path(edge_run) if edge_run else repository_path(EDGE_RUN["archive"])


def describe_run(run_dir: str | os.PathLike, metrics: pd.DataFrame, config: Mapping[str, Any]) -> str:
    """A run folder in one line: its dataset, steps trained and weight decay."""
    return (f"{readable_path(run_dir)}: {config['dataset']['name']}, {int(metrics['step'].iloc[-1])} steps, "
            f"weight decay {config['train']['weight_decay']}")


def run_commands(run_dir: str | os.PathLike) -> str:
    """The commands that regenerate a shipped run (its COMMANDS.txt), or "" when it has none."""
    commands = Path(run_dir) / "COMMANDS.txt"
    return commands.read_text() if commands.is_file() else ""


def central_metrics(num_tokens: int, n_train: int, result: TrainResult, edge: pd.DataFrame,
                    edge_shares: Mapping[str, float], type_series: Mapping[str, str],
                    group_series: Mapping[str, str]) -> dict[str, Any]:
    """What the chapter records: the live run's size, time, ID threshold step and final accuracy per type,
    and the edge run's final accuracy and item share per k-cutoff group."""
    metrics, final, edge_final = result.metrics, result.final, edge.iloc[-1]
    return {
        "N": num_tokens, "n_train": n_train, "steps": int(metrics["step"].iloc[-1]),
        "minutes": float(metrics["elapsed"].iloc[-1] / 60),
        "first_step_type0_0.9": result.first_step_above("acc/type_0", 0.9),
        **{f"final_{t}": float(final[f"acc/{t}"]) for t in type_series if f"acc/{t}" in final},
        **{f"edge_final_{g}": float(edge_final[f"acc/{g}"]) for g in group_series if f"acc/{g}" in edge},
        **{f"edge_share_{g}": share for g, share in edge_shares.items()},
    }


# --- the edge run over training seeds (3.6) ---

K_GROUPS = ("k<3", "k=3", "k>3")  # worst covered first
SEED_LABEL = "mean over seeds"


def edge_seed_metrics(analysed: Path, analysed_metrics: pd.DataFrame, shipped: Mapping[int, Path]
                      ) -> dict[int, pd.DataFrame]:
    """Learning curves of the edge run per training seed: the run this chapter analyses (its seed read from
    its config) and every other seed shipped under data/runs/ (``shipped``: seed -> folder)."""
    own_seed = int(load_run_config(analysed)["train"]["seed"])
    runs = {own_seed: analysed_metrics}
    for seed, folder in shipped.items():
        runs.setdefault(seed, load_metrics(folder))
    return dict(sorted(runs.items()))


def seed_group_table(runs: Mapping[int, pd.DataFrame], threshold: float = 0.5) -> pd.DataFrame:
    """Per training seed and k-cutoff group: final ID accuracy and the first step at which it reached
    ``threshold`` (<NA> if never)."""
    rows = []
    for seed, metrics in runs.items():
        for group in K_GROUPS:
            col = f"acc/{group}"
            rows.append({"seed": seed, "group": group, "final": float(metrics[col].iloc[-1]),
                         "first_step": first_step_above(metrics, col, threshold)})
    table = pd.DataFrame(rows)
    table["first_step"] = table["first_step"].astype("Int64")
    return table


def seed_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Mean, standard deviation (n-1) and range over seeds of each group's final accuracy (rows: groups)."""
    stats = table.groupby("group")["final"].agg(["mean", "std", "min", "max", "count"])
    return stats.loc[[g for g in K_GROUPS if g in stats.index]]


def ordering_by_seed(table: pd.DataFrame) -> pd.DataFrame:
    """Per seed, whether the coverage principle's order holds: final accuracy rises from k<3 to k=3 to k>3,
    and the first step at 50% falls (a group that never gets there counts as last)."""
    rows = []
    for seed, part in table.groupby("seed"):
        part = part.set_index("group").loc[list(K_GROUPS)]
        steps = part["first_step"].astype("Float64").fillna(float("inf")).to_numpy(dtype=float)
        rows.append({"seed": seed, "final accuracy rises with k": bool(part["final"].is_monotonic_increasing),
                     "learned in order of k": bool((steps[:-1] >= steps[1:]).all())})
    return pd.DataFrame(rows)


def seed_metrics(table: pd.DataFrame, order: pd.DataFrame) -> dict[str, Any]:
    """What 3.6 records: the seeds, each group's mean and sd of final accuracy, and whether the order held
    in every seed (1) or not (0)."""
    names = {"k<3": "k_lt3", "k=3": "k3", "k>3": "k_gt3"}
    summary = seed_summary(table)
    out: dict[str, Any] = {"edge_seeds": int(table["seed"].nunique())}
    for group, row in summary.iterrows():
        out[f"edge_acc_{names[group]}_mean"] = float(row["mean"])
        out[f"edge_acc_{names[group]}_sd"] = float(row["std"]) if row["count"] > 1 else float("nan")
    out["edge_order_final_all_seeds"] = int(order["final accuracy rises with k"].all())
    out["edge_order_learned_all_seeds"] = int(order["learned in order of k"].all())
    return out


def seeds_text(table: pd.DataFrame, order: pd.DataFrame) -> str:
    """The seed spread in words: each group's final accuracy as mean ± sd (range), and where the order holds."""
    summary = seed_summary(table)
    n = int(table["seed"].nunique())
    parts = [f"{group} {row['mean']:.1%} ± {row['std']:.1%} ({row['min']:.1%}-{row['max']:.1%})"
             for group, row in summary.iterrows()]
    final_ok, learned_ok = order["final accuracy rises with k"], order["learned in order of k"]
    return (f"Over {n} training seeds (mean ± sd, range): " + "; ".join(parts) + ". The final accuracy rises "
            f"from k<3 to k=3 to k>3 in {int(final_ok.sum())} of {n} seeds, and the groups reach 50% in the order "
            f"of their evidence in {int(learned_ok.sum())} of {n}.")


def seed_curves(runs: Mapping[int, pd.DataFrame], every: int = 100) -> pd.DataFrame:
    """Long rows (step, seed, group, accuracy) of each group's curve per seed, one evaluation per ``every``
    steps (the chart embeds them), plus the mean over seeds with its range (seed = SEED_LABEL)."""
    parts = []
    for seed, metrics in runs.items():
        kept = metrics[metrics["step"] % every == 0]
        cols = {f"acc/{g}": g for g in K_GROUPS} | {"acc/type_1": "type_1 (OOD)"}
        long = kept[["step", *cols]].rename(columns=cols).melt("step", var_name="group", value_name="accuracy")
        parts.append(long.assign(seed=str(seed)))
    per_seed = pd.concat(parts, ignore_index=True)
    stats = per_seed.groupby(["step", "group"])["accuracy"].agg(["mean", "min", "max"]).reset_index()
    mean = stats.rename(columns={"mean": "accuracy", "min": "low", "max": "high"}).assign(seed=SEED_LABEL)
    return pd.concat([per_seed, mean], ignore_index=True)


def cutoff_over_seeds(runs: Mapping[int, pd.DataFrame], dataset: str | os.PathLike) -> pd.DataFrame:
    """Final accuracy of the ID items of each k-cutoff value per seed (k_cutoff, n, seed, accuracy)."""
    return pd.concat([cutoff_table(metrics, dataset, threshold=0.5).assign(seed=str(seed))
                      for seed, metrics in runs.items()], ignore_index=True)


def edge_seeds_chart(curves: pd.DataFrame, per_k: pd.DataFrame, colors: Mapping[str, str],
                     chance: float) -> alt.VConcatChart:
    """The edge run over seeds. Top: each group's accuracy over training, the mean over seeds (line) and their
    range (band); a dropdown adds one seed's own curves. Below: final accuracy per k-cutoff, the mean over seeds
    (bar), their range (whisker) and each seed (dots; the chosen seed larger)."""
    seeds = sorted(set(curves["seed"]) - {SEED_LABEL}, key=int)
    pick = alt.param(name="seed_shown", value=SEED_LABEL,
                     bind=alt.binding_select(options=[SEED_LABEL, *seeds], name="training seed: "))
    groups = list(dict.fromkeys(curves["group"]))
    scale = alt.Scale(domain=groups, range=[colors[g] for g in groups])
    # one legend for the lines and bands, its symbols opaque (from the band, they took its faint fill)
    color = alt.Color("group:N", title="ID items / OOD", sort=groups, scale=scale, legend=alt.Legend(symbolOpacity=1))
    # the domain is set: the chosen seed's layer starts empty, and an empty layer has no extent of its own
    x = alt.X("step:Q", title="training step", scale=alt.Scale(domain=[int(curves["step"].min()),
                                                                       int(curves["step"].max())]))
    y = alt.Y("accuracy:Q", title="test accuracy", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%"))
    mean = alt.Chart(curves).transform_filter(alt.datum.seed == SEED_LABEL)
    summary = [alt.Tooltip("group:N", title="group"), alt.Tooltip("step:Q", title="step"),
               alt.Tooltip("accuracy:Q", title="mean accuracy", format=".1%"),
               alt.Tooltip("low:Q", title="lowest seed", format=".1%"),
               alt.Tooltip("high:Q", title="highest seed", format=".1%")]
    band = mean.mark_area(opacity=0.18).encode(x, alt.Y("low:Q"), alt.Y2("high:Q"), color, tooltip=summary)
    lines = mean.mark_line(strokeWidth=2.2).encode(x, y, color, tooltip=summary)
    one_seed = alt.Chart(curves).transform_filter(
        (alt.datum.seed == pick) & (alt.datum.seed != SEED_LABEL)).mark_line(strokeWidth=1.2, strokeDash=[4, 2]).encode(
        x, y, color, detail="seed:N", tooltip=[alt.Tooltip("seed:N", title="training seed"), "group:N",
                                               "step:Q", alt.Tooltip("accuracy:Q", format=".1%")])
    rule = alt.Chart(pd.DataFrame({"accuracy": [chance]})).mark_rule(color="black", strokeDash=[5, 4]).encode(
        alt.Y("accuracy:Q"))
    plural = "s" if len(seeds) > 1 else ""
    left = alt.layer(band, lines, one_seed, rule).add_params(pick).properties(width=400, height=250, title=alt.TitleParams(
        f"ID accuracy by k-cutoff group, {len(seeds)} training seed{plural}", anchor="start",
        subtitle="line: mean over seeds; band: their range; thin dashed: the seed chosen below; black dashed: chance 1/N"))
    right = cutoff_seeds_chart(per_k, pick)
    return alt.vconcat(left, right).resolve_scale(color="independent")  # stacked: side by side is wider than a page


def cutoff_seeds_chart(per_k: pd.DataFrame, pick: alt.Parameter) -> alt.LayerChart:
    """Final accuracy per k-cutoff over seeds: mean bar, range whisker, one dot per seed, item counts on top."""
    stats = (per_k.groupby("k_cutoff").agg(n=("n", "first"), mean=("accuracy", "mean"), sd=("accuracy", "std"),
                                              low=("accuracy", "min"), high=("accuracy", "max")).reset_index())
    x = alt.X("k_cutoff:O", title="k-cutoff of the ID test item", axis=alt.Axis(labelAngle=0))
    base = alt.Chart(stats).encode(x)
    bars = base.mark_bar(color="#2e7d32", opacity=0.75).encode(
        alt.Y("mean:Q", title="final accuracy", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")),
        tooltip=[alt.Tooltip("k_cutoff:O", title="k-cutoff"), alt.Tooltip("n:Q", title="test items", format=","),
                 alt.Tooltip("mean:Q", title="mean over seeds", format=".1%"),
                 alt.Tooltip("sd:Q", title="sd over seeds", format=".1%"),
                 alt.Tooltip("low:Q", title="lowest seed", format=".1%"),
                 alt.Tooltip("high:Q", title="highest seed", format=".1%")])
    whiskers = base.mark_rule(color="black").encode(alt.Y("low:Q"), alt.Y2("high:Q"))
    dots = alt.Chart(per_k).mark_point(filled=True, color="black").encode(
        x, alt.Y("accuracy:Q"),
        size=alt.condition(alt.datum.seed == pick, alt.value(70), alt.value(14)),
        tooltip=[alt.Tooltip("seed:N", title="training seed"), alt.Tooltip("k_cutoff:O", title="k-cutoff"),
                 alt.Tooltip("accuracy:Q", title="final accuracy", format=".1%")])
    counts = base.mark_text(dy=-8, fontSize=10).encode(alt.Y("high:Q"), text=alt.Text("n:Q", format=",d"))
    return alt.layer(bars, whiskers, dots, counts).properties(width=360, height=250, title=alt.TitleParams(
        "Final accuracy by k-cutoff", anchor="start",
        subtitle="bar: mean over seeds; whisker: range; dots: each seed (the chosen one larger); numbers: test items"))


def seed_table(table: pd.DataFrame, order: pd.DataFrame) -> ReaderTable:
    """One row per training seed: each group's final accuracy and first step at 50%, and whether the order held."""
    wide = table.pivot(index="seed", columns="group", values=["final", "first_step"])
    out = pd.DataFrame({"seed": wide.index})
    for group in K_GROUPS:
        out[f"final {group}"] = wide[("final", group)].to_numpy()
    for group in K_GROUPS:
        out[f"step {group}"] = wide[("first_step", group)].to_numpy()
    out = out.merge(order, on="seed")
    columns = {"seed": "training seed", **{f"final {g}": f"final accuracy, {g}" for g in K_GROUPS},
               **{f"step {g}": f"first step at 50%, {g} (empty: never)" for g in K_GROUPS},
               "final accuracy rises with k": "final accuracy rises with k", "learned in order of k":
               "reaches 50% in the order of k"}
    formats = {"seed": "{}", **{f"final {g}": ".1%" for g in K_GROUPS}}
    return reader_table(out, columns, formats)


# --- the chapter's other tables, for readers ---

def coverage_table(wide: pd.DataFrame, max_k: int = 12) -> ReaderTable:
    """covlib.coverage.annotate.wide_table as a reader reads it: per test type, the percent of items k-covered
    for k = 1..max_k."""
    shown = wide.loc[:, [k for k in wide.columns if int(k) <= max_k]].reset_index()
    shown.columns = ["type", *[f"k={k}" for k in shown.columns[1:]]]
    columns = {"type": "test type"} | {c: f"{c} (% covered)" if c == "k=1" else c for c in shown.columns[1:]}
    return reader_table(shown, columns, dict.fromkeys(shown.columns[1:], "{:.1f}"),
                        caption="Share of test items k-covered (%), per test type")


def steps_table(frame: pd.DataFrame, what: str = "series") -> ReaderTable:
    """curves.first_steps for readers: final accuracy and the first step at each threshold (empty: never)."""
    steps = [c for c in frame.columns if c.startswith("first step")]
    columns = {"group": what, "final accuracy": "final accuracy"} | {
        c: c.replace("first step >= ", "first step at ") + (" (empty: never)" if i == 0 else "")
        for i, c in enumerate(steps)}
    return reader_table(frame, columns, {"final accuracy": ".1%"})


def cutoff_reader_table(per_k: pd.DataFrame) -> ReaderTable:
    """curves.cutoff_table for readers: items, final accuracy and first step at the threshold, per k-cutoff."""
    step = next(c for c in per_k.columns if c.startswith("first_step"))
    threshold = step.rsplit("_", 1)[-1]
    return reader_table(per_k, {"k_cutoff": "k-cutoff", "n": "ID test items", "accuracy": "final accuracy",
                                step: f"first step at {threshold}% (empty: never)"},
                        {"k_cutoff": "{}", "accuracy": ".1%"})


# --- the exercises: the quantity each asks for, and its check (the solution cells show how to compute it) ---------

CUTOFF_GROUPS = ("k<3", "k=3", "k>3")


def first_groups(metrics: pd.DataFrame, value: float = 0.5) -> list[str]:
    """Exercise 1: the k-cutoff group(s) whose accuracy is the first to reach ``value`` in a run's metrics (more
    than one when they reach it at the same evaluated step); empty when none does."""
    firsts = {g: first_step_above(metrics, f"acc/{g}", value) for g in CUTOFF_GROUPS}
    reached = {g: step for g, step in firsts.items() if step is not None}
    return [g for g, step in reached.items() if step == min(reached.values())] if reached else []


def check_first_group(answer: Any, metrics: pd.DataFrame, name: str = "my_first_group") -> str:
    """Exercise 1: a reader's group ("k<3", "k=3" or "k>3") that reaches 50% accuracy first in the edge run. A wrong
    answer learns whether its group reaches 50% at all; never which group is first."""
    how = ("for each k-cutoff group, find the first evaluated step at which its accuracy reaches 0.5 in the run at "
           "the edge of coverage (`edge`, the metrics of 3.5)")
    truth = first_groups(metrics)
    if not truth:
        return unchecked("no k-cutoff group reaches 50% accuracy in this run")
    if answer is None:
        return unanswered(name, how)
    value = read_answer(answer)
    if value in truth:
        return right_group(value, truth)
    if value not in CUTOFF_GROUPS:
        return check_choice(value, truth[0], CUTOFF_GROUPS, name, how)
    if first_step_above(metrics, f"acc/{value}", 0.5) is None:
        return wrong(f"{value} never reaches 50% accuracy in this run.")
    return wrong(f"{value} reaches 50%, but another group gets there earlier. Hint: which items does the "
                 "coverage principle say are learned first?")


def right_group(value: str, truth: list[str]) -> str:
    tied = f" (tied with {', '.join(g for g in truth if g != value)})" if len(truth) > 1 else ""
    return right(f"{value} is the first group to reach 50% accuracy{tied}.")
