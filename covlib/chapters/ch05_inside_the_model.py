"""Chapter 5 (inside the model): bridge clusters (IICG), causal tracing and the logit lens on a trained model."""
from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from covlib.analyses.iicg import iicg_peaks, iicg_table
from covlib.analyses.lens import logit_lens
from covlib.analyses.residuals import TaskTables, open_run, residual_streams, split_items
from covlib.analyses.tracing import trace_table
from covlib.base.errors import CovlibError
from covlib.base.paths import repository_path
from covlib.coverage.annotate import annotate_dataset
from covlib.figures.exercises import as_number, read_answer, right, unanswered, unchecked, wrong
from covlib.figures.heatmaps import layer_position_heatmap, over_training_chart
from covlib.figures.tables import ReaderTable, frame_table, reader_table
from covlib.figures.text import series
from covlib.tasks.datasets import DatasetConfig, ensure_dataset
from covlib.tasks.folders import DatasetFolder
from covlib.training.loop import train
from covlib.training.runs import load_metrics, load_weights, save_weights
from covlib.training.shipped import EDGE_RUN, shipped_edge_seeds

# the functions of covlib's layers the chapter's notebook calls through this module (`import covlib.chapters.ch05_inside_the_model
# as ch05`, then `ch05.iicg_peaks(...)`), one import away from where each is defined
__all__ = [
    "PRESETS",
    "frame_table",
    "iicg_peaks",
    "iicg_table",
    "layer_position_heatmap",
    "logit_lens",
    "open_run",
    "over_training_chart",
    "reader_table",
    "residual_streams",
    "shipped_edge_seeds",
    "split_items",
    "trace_table",
]


# the smoke preset's model: a tiny two-hop model trained in seconds, checkpoints kept like the shipped one's
SMOKE_RUN = {"dataset": {"task": "twohop", "num_tokens": 10, "n_train": 450, "seed": 0, "test_size_per_type": 150},
             "name": "mechanisms-smoke", "steps": 400, "checkpoint_every": 100, "checkpoints": (100, 200, 300)}


# train: a model to train here (None: analyse the shipped edge-of-coverage run); note: printed at set-up
PRESETS: dict[str, dict] = {
    "smoke": {"train": SMOKE_RUN, "note": ""},
    "default": {"train": None, "note": ""},
    "paper": {"train": None,
              "note": "The paper's 8-layer GPT-2 is not shipped; this preset analyses the book's model, like the default."},
}


K_GROUPS = ("k<3", "k=3", "k>3")


def train_smoke_model(run: Mapping, root: Path) -> tuple[Path, Path, dict[str, str]]:
    """Train ``run`` (SMOKE_RUN's format) under ``root`` unless already there, and save its weights the way
    the shipped ones are. Returns (run folder, dataset folder, weights name -> file in the run folder)."""
    dataset_dir = ensure_dataset(DatasetConfig(**run["dataset"]), root / "datasets")
    annotate_dataset(dataset_dir, max_k=8)
    source = root / "runs" / run["name"]
    if not (source / "result.json").is_file():
        train(dataset_dir, source, preset="smoke", overrides={"steps": run["steps"], "checkpoint_every": run["checkpoint_every"],
                                                              "keep_checkpoints": True}, progress=False, resume=True)
    weights = {f"step_{s:06d}": f"checkpoints/step_{s:06d}.pt" for s in run["checkpoints"]} | {"final": "model.pt"}
    for name, file in weights.items():
        save_weights(source, source / "weights" / f"{name}.pt", None if file == "model.pt" else file)
    return source, dataset_dir, weights


def shipped_edge_run(root: Path) -> tuple[Path, Path, dict[str, str]]:
    """The shipped edge-of-coverage run (chapter 3's), with its dataset regenerated and annotated under ``root``.
    Returns (run folder, dataset folder, weights name -> file)."""
    cfg = EDGE_RUN["dataset"]
    dataset_dir = ensure_dataset(DatasetConfig(cfg["task"], cfg["num_tokens"], cfg["n_train"], seed=cfg["seed"]),
                                 root / "datasets")
    annotate_dataset(dataset_dir, max_k=8)
    return repository_path(EDGE_RUN["archive"]), dataset_dir, EDGE_RUN["weights"]


def model_source(run: Mapping | None, run_dir: str, root: Path) -> tuple[Path, Path | None, dict[str, str]]:
    """The model to analyse: trained here (``run``), the reader's ``run_dir`` (its dataset read from its
    config.json), or the shipped run. Returns (run folder, dataset folder or None, weights name -> file)."""
    if run:
        return train_smoke_model(run, root)
    if run_dir:
        return Path(run_dir), None, {"final": "model.pt"}
    return shipped_edge_run(root)


def final_weights(source: Path) -> str | None:
    """The weights file open_run should read: the shipped weights/final.pt, or None for a trained run's model."""
    return "weights/final.pt" if (source / "weights").is_dir() else None


def best_cell(table: pd.DataFrame, value: str = "iicg") -> pd.Series:
    """The row (layer, position) of a map where ``value`` is largest, over every layer including the embeddings."""
    return table.loc[table[value].idxmax()]


def iicg_by_selection(model, ds: DatasetFolder, tables: TaskTables, splits: Mapping[str, str],
                      max_items: int = 2000) -> pd.DataFrame:
    """IICG maps grouped by the bridge b, one per selection of items (label -> split), in one table with a
    ``selection`` column."""
    maps = [iicg_table(model, ds, tables, ["b"], [split], max_items=max_items).assign(selection=label)
            for label, split in splits.items()]
    return pd.concat(maps, ignore_index=True)


def iicg_by_cutoff(model, ds: DatasetFolder, tables: TaskTables, max_items: int = 2000
                   ) -> tuple[pd.DataFrame, list[str]]:
    """IICG maps by b for the ID test items of each k-cutoff group, and a note for each group too small to
    measure (smoke-sized data)."""
    maps, skipped = [], []
    for kg in K_GROUPS:
        try:
            maps.append(iicg_table(model, ds, tables, ["b"], ["type_0"], k_groups=[kg], max_items=max_items))
        except CovlibError as exc:
            skipped.append(f"{kg}: {exc}")
    return (pd.concat(maps, ignore_index=True) if maps else pd.DataFrame()), skipped


def at_cell(table: pd.DataFrame, cell: pd.Series) -> pd.DataFrame:
    """The rows of a map at the (layer, position) of ``cell``."""
    return table[(table["layer"] == cell["layer"]) & (table["position"] == cell["position"])]


def cutoff_note(k_at: pd.Series) -> str:
    """IICG at the ID peak per k-cutoff group, saying so when better-covered items cluster more tightly."""
    note = "At the ID peak, IICG by k-cutoff group: " + ", ".join(f"{k} {v:.2f}" for k, v in k_at.items())
    return note + (". Better-covered items sit in tighter bridge clusters." if k_at.is_monotonic_increasing else ".")


def checkpoint_step(name: str, metrics: pd.DataFrame) -> int:
    """The training step of a weights name: step_001000 -> 1000, final -> the last evaluated step."""
    return int(metrics["step"].iloc[-1]) if name == "final" else int(re.sub(r"\D", "", name))


def iicg_over_training(source: Path, weights: Mapping[str, str], ds: DatasetFolder, tables: TaskTables,
                       peak: pd.Series, max_items: int = 2000) -> pd.DataFrame:
    """Per checkpoint (by step): IICG by b at the final model's peak cell, the largest IICG anywhere, and ID
    test accuracy at that step: whether the clusters form as the model generalises."""
    metrics = load_metrics(source)
    rows = []
    for name in weights:
        checkpoint = load_weights(source, f"weights/{name}.pt", ds)
        t = iicg_table(checkpoint, ds, tables, ["b"], ["type_0"], max_items=max_items)
        step = checkpoint_step(name, metrics)
        cell = at_cell(t, peak)["iicg"].iloc[0]
        acc = float(metrics.loc[metrics["step"] == step, "acc/type_0"].iloc[0])
        rows.append({"checkpoint": name, "step": step, "iicg_at_peak": cell, "iicg_max": t["iicg"].max(),
                     "acc_type0": acc})
    return pd.DataFrame(rows).sort_values("step")


def over_training_frame(over: pd.DataFrame, peak: pd.Series) -> pd.DataFrame:
    """IICG at the peak and ID accuracy over training as long rows (step, value, series) for the chart."""
    return pd.concat([over.assign(series=f"IICG by b at layer {int(peak['layer'])}, {peak['position']}",
                                  value=over["iicg_at_peak"]),
                      over.assign(series="ID test accuracy", value=over["acc_type0"])])[["step", "value", "series"]]


def checkpoint_correlation(over: pd.DataFrame) -> float:
    """Pearson correlation of IICG at the peak with ID accuracy across checkpoints (NaN below three)."""
    return float(np.corrcoef(over["iicg_at_peak"], over["acc_type0"])[0, 1]) if len(over) > 2 else float("nan")


def rank_map(trace: pd.DataFrame, variant: str = "x2") -> pd.DataFrame:
    """The rank metric of one tracing variant as a layer x position table."""
    return trace[(trace["variant"] == variant) & (trace["metric"] == "rank")].pivot(index="layer", columns="position",
                                                                                     values="value")


def tracing_note(rank: pd.DataFrame, rank_x1: pd.DataFrame, n_layers: int, last: str) -> str:
    """Where patching flips the prediction (x2 changed: x2 in the early layers, then the last position), read
    only from cells that are not fixed by construction, and where x1's information goes when x1 is changed."""
    L = n_layers
    x2_layers = [int(lay) for lay in rank.index if lay > 0 and rank.loc[lay, "x2"] >= 0.5]
    last_layers = [int(lay) for lay in rank.index if 0 < lay < L and rank.loc[lay, last] >= 0.5]
    at_x2 = f"layer{'s' if len(x2_layers) > 1 else ''} {series([str(lay) for lay in x2_layers])}"
    route = (f"The bridge sits at $x_2$ in {at_x2}, then moves to the last position." if x2_layers and last_layers else
             f"The bridge sits at $x_2$ in {at_x2}; no layer of position {last} before the output carries it on for "
             "half of the items." if x2_layers else
             f"No layer at $x_2$ flips half of the predictions; position {last} does from layer {last_layers[0]}."
             if last_layers else "No cell flips half of the predictions: this model shows no clear route of the bridge.")
    return (
        f"Changing $x_2$: patching position $x_2$ flips {rank.loc[1, 'x2']:.0%} of predictions at layer 1 and "
        f"{rank.loc[min(2, L), 'x2']:.0%} at layer {min(2, L)}; position {last} flips {rank.loc[L - 1, last]:.0%} at "
        f"layer {L - 1}" + (f", and from layer {last_layers[0]} on at least half. " if last_layers else ". ")
        + route + " Two kinds "
        f"of cell are greyed and read nowhere here: position $x_1$, which comes before the changed token, so under the "
        f"causal mask its corrupted residual is the clean one (every patch there is an identity and moves nothing), "
        f"and position {last} after the last block, which is the output itself (it moves everything). The paper's "
        f"'x1 never matters' is such a cell. Changing $x_1$ instead asks the question: patching position $x_1$ flips "
        f"{rank_x1.loc[1, 'x1']:.0%} of predictions at layer 1 and position $x_2$ {rank_x1.loc[1, 'x2']:.0%}: the "
        f"information of $x_1$ leaves its own position for the bridge's, as $b = f_1(x_1, x_2)$ requires.")


def tracing_by_cutoff(model, ds: DatasetFolder, tables: TaskTables, max_pairs: int = 1000
                      ) -> tuple[pd.DataFrame, list[str]]:
    """Causal tracing (x2 changed, rank metric) from the ID test items of each k-cutoff group, and a note for
    each group that could not be traced."""
    traces, skipped = [], []
    for kg in K_GROUPS:
        try:
            idx = split_items(ds, "type_0", kg)
            t = trace_table(model, tables, ds.test.inputs[idx], ["x2"], max_pairs=max_pairs)
            traces.append(t[t["metric"] == "rank"].assign(k_group=kg))
        except CovlibError as exc:
            skipped.append(f"{kg}: {exc}")
    return (pd.concat(traces, ignore_index=True) if traces else pd.DataFrame()), skipped


def paper_comparison(id_peak: pd.Series, k_at: pd.Series, ood_max: float, rank: pd.DataFrame, n_layers: int,
                     last: str) -> pd.DataFrame:
    """This model's IICG and tracing numbers beside the authors' draft figures (8-layer GPT-2)."""
    L = n_layers
    x2_rank_l12 = rank.loc[1:min(2, L), "x2"].mean()
    last_rank_upper = rank.loc[L - 1, last]  # after the last block the last position is the output itself
    nan = float("nan")
    rows = [  # (quantity, the authors' draft figure, this model)
        ("IICG by b, peak (layer, position)", "layer 3, x2", f"layer {int(id_peak['layer'])}, {id_peak['position']}"),
        ("IICG by b at the peak, k>=3", "0.44", f"{k_at.get('k>3', nan):.2f} (k>3), {k_at.get('k=3', nan):.2f} (k=3)"),
        ("IICG by b at the peak, k<3", "0.28", f"{k_at.get('k<3', nan):.2f}"),
        ("IICG by b, OOD", "0.004", f"{ood_max:.3f} (largest cell)"),
        ("tracing (rank): x2 in early layers", "95-97% (layers 1-2)", f"{x2_rank_l12:.0%} (layers 1-{min(2, L)})"),
        ("tracing (rank): last position, upper layers", "91-97% (from layer 3)",
         f"{last_rank_upper:.0%} (layer {L - 1}; layer {L} is the output itself)"),
        ("tracing: x1 after the embeddings", "never matters", "fixed by construction (x2 corrupted): not evidence"),
    ]
    return pd.DataFrame(rows, columns=["quantity", "paper (draft, 8 layers)", "this book (4 layers)"])


# --- the same analyses over training seeds (5.8) ---

def seed_analyses(folders: Mapping[int, Path], ds: DatasetFolder, tables: TaskTables, max_items: int = 2000,
                  max_pairs: int = 1000) -> pd.DataFrame:
    """Per training seed of the edge run (seed -> archived folder with weights/final.pt): where the bridge
    cluster peaks and how strong it is, IICG at that peak per k-cutoff group, and the tracing route (rank
    metric, x2 changed): position x2 at layer 1 and the last position before the output."""
    train_items = ds.test.inputs[split_items(ds, "train_inferred")]
    last = f"x{ds.n_inputs}"
    rows = []
    for seed, folder in folders.items():
        model = load_weights(folder, "weights/final.pt", ds)
        peak = iicg_peaks(iicg_table(model, ds, tables, ["b"], ["type_0"], max_items=max_items)).iloc[0]
        by_k, _ = iicg_by_cutoff(model, ds, tables, max_items)
        k_at = at_cell(by_k, peak).set_index("k_group")["iicg"] if len(by_k) else pd.Series(dtype=float)
        rank = rank_map(trace_table(model, tables, train_items, ["x2"], max_pairs=max_pairs), "x2")
        n_layers = model.cfg.n_layers
        rows.append({"seed": seed, "peak_layer": int(peak["layer"]), "peak_position": str(peak["position"]),
                     "iicg_peak": float(peak["iicg"]), **{f"iicg_{k}": float(k_at.get(k, np.nan)) for k in K_GROUPS},
                     "rank_x2_layer1": float(rank.loc[1, "x2"]),
                     "rank_last_before_output": float(rank.loc[n_layers - 1, last])})
    table = pd.DataFrame(rows)
    k_cols = [f"iicg_{k}" for k in K_GROUPS]
    table["cluster order holds"] = table[k_cols].apply(lambda r: bool(r.notna().all() and r.is_monotonic_increasing),
                                                      axis=1)
    table["route holds"] = (table["rank_x2_layer1"] >= 0.5) & (table["rank_last_before_output"] >= 0.5)
    return table


def seed_results(table: pd.DataFrame) -> dict[str, float | int]:
    """What 5.8 records: the seeds, the IICG peak's mean and sd (n-1) over them, and whether the peak's cell,
    the order by k-cutoff and the tracing route held in every seed (1) or not (0)."""
    cells = set(zip(table["peak_layer"], table["peak_position"]))
    return {"iicg_seeds": int(len(table)), "iicg_peak_mean": float(table["iicg_peak"].mean()),
            "iicg_peak_sd": float(table["iicg_peak"].std()) if len(table) > 1 else float("nan"),
            "iicg_peak_same_cell_all_seeds": int(len(cells) == 1),
            "iicg_order_all_seeds": int(table["cluster order holds"].all()),
            "trace_route_all_seeds": int(table["route holds"].all()),
            "trace_rank_x2_layer1_min": float(table["rank_x2_layer1"].min())}


def seeds_note(table: pd.DataFrame) -> str:
    """The claims of 5.2-5.5 read over seeds: in how many each holds, with the peak's mean ± sd."""
    n = len(table)
    cells = ", ".join(f"layer {lay} {pos}" for lay, pos in dict.fromkeys(zip(table["peak_layer"], table["peak_position"])))
    sd = table["iicg_peak"].std() if n > 1 else float("nan")
    return (f"Over {n} training seeds the ID bridge cluster peaks at {cells}, with IICG {table['iicg_peak'].mean():.2f} "
            f"± {sd:.2f} (mean ± sd; range {table['iicg_peak'].min():.2f}-{table['iicg_peak'].max():.2f}). The order "
            f"k<3 < k=3 < k>3 at the peak holds in {int(table['cluster order holds'].sum())} of {n} seeds; the route "
            f"(x2 flips at least half the predictions at layer 1, and the last position at the layer before the output) "
            f"in {int(table['route holds'].sum())} of {n}.")


def explorer_frame(iicg_b: pd.DataFrame, iicg_k: pd.DataFrame) -> pd.DataFrame:
    """Every IICG map of 5.2 and 5.3 in one table with a ``map`` column (the selection or the k-cutoff group)."""
    parts = [iicg_b.assign(map=iicg_b["selection"])]
    if len(iicg_k):
        parts.append(iicg_k.assign(map="ID test, " + iicg_k["k_group"]))
    cols = ["map", "layer", "position", "iicg", "within", "between", "items", "groups", "by_construction"]
    return pd.concat(parts, ignore_index=True)[cols]


def iicg_explorer(frame: pd.DataFrame, positions: list[str]) -> alt.LayerChart:
    """One IICG map at a time, chosen with a dropdown (the selection of 5.2 or a k-cutoff group of 5.3); cells
    fixed by construction are drawn grey."""
    maps = list(dict.fromkeys(frame["map"]))
    choice = alt.param(name="iicg_map", value=maps[min(1, len(maps) - 1)],
                       bind=alt.binding_select(options=maps, name="items: "))
    tooltip = [alt.Tooltip("map:N", title="items"), alt.Tooltip("layer:O", title="layer"),
               alt.Tooltip("position:N", title="position"), alt.Tooltip("iicg:Q", title="IICG", format=".3f"),
               alt.Tooltip("within:Q", title="cosine within groups", format=".3f"),
               alt.Tooltip("between:Q", title="cosine between groups", format=".3f"),
               alt.Tooltip("items:Q", title="items (n)"), alt.Tooltip("groups:Q", title="bridge groups"),
               alt.Tooltip("fixed:N", title="fixed by construction")]
    frame = frame.assign(fixed=frame["by_construction"].astype(bool).map({True: "yes", False: "no"}))  # not "true" in a tooltip
    base = alt.Chart(frame).transform_filter(alt.datum.map == choice).encode(
        alt.X("position:N", sort=positions, axis=alt.Axis(labelAngle=0)), alt.Y("layer:O", sort="descending"))
    cells = base.mark_rect().encode(
        color=alt.condition("datum.by_construction", alt.value("#d9d9d9"),
                            alt.Color("iicg:Q", title="IICG", scale=alt.Scale(scheme="blues", domain=[-0.1, 0.6]))),
        tooltip=tooltip)
    numbers = base.mark_text(fontSize=12).encode(  # white on the dark cells (the top 40% of the scale)
        alt.Text("iicg:Q", format=".2f"),
        color=alt.when("!datum.by_construction && datum.iicg > 0.32").then(alt.value("white")).otherwise(
            alt.value("black")))
    return alt.layer(cells, numbers).add_params(choice).properties(
        width=240, height=200, title=alt.TitleParams("Explore the IICG maps: choose the items below",
                                                     subtitle="grey: fixed by construction", anchor="start"))


def seed_table(table: pd.DataFrame) -> ReaderTable:
    """5.8's table for readers: one row per training seed, the peak, IICG by k-cutoff group there, the route."""
    shown = table.assign(peak=[f"layer {lay}, {pos}" for lay, pos in zip(table["peak_layer"], table["peak_position"])])
    columns = {"seed": "training seed", "peak": "IICG peak (layer, position)", "iicg_peak": "IICG at the peak",
               **{f"iicg_{k}": f"IICG of {k} items at the peak" for k in K_GROUPS},
               "rank_x2_layer1": "patching x2 at layer 1 flips", "rank_last_before_output":
               "patching the last position before the output flips", "cluster order holds": "order by k holds",
               "route holds": "route holds"}
    formats = {"seed": "{}", "iicg_peak": ".2f", **{f"iicg_{k}": ".2f" for k in K_GROUPS},
               "rank_x2_layer1": ".0%", "rank_last_before_output": ".0%"}
    return reader_table(shown, columns, formats)


# --- the chapter's other tables, for readers ---

CELL_COLUMNS = {"layer": "layer", "position": "position", "iicg": "IICG", "within": "cosine within groups",
                "between": "cosine between groups", "items": "items", "groups": "bridge groups"}
CELL_FORMATS = {"layer": "{}", "iicg": ".3f", "within": ".3f", "between": ".3f"}


def peaks_table(peaks: Mapping[str, pd.Series]) -> ReaderTable:
    """5.2's peaks: per selection of items, the cell with the largest IICG (cells fixed by construction left out)."""
    frame = pd.DataFrame(peaks).T.drop(columns="selection", errors="ignore").rename_axis("selection").reset_index()
    return reader_table(frame, {"selection": "which items"} | CELL_COLUMNS, CELL_FORMATS)


def cutoff_peak_table(at_peak: pd.DataFrame) -> ReaderTable:
    """5.3's table: IICG by b at the ID peak for each k-cutoff group."""
    return reader_table(at_peak, {"k_group": "k-cutoff group"} | {k: v for k, v in CELL_COLUMNS.items()
                                                                 if k not in ("layer", "position")}, CELL_FORMATS)


def over_training_table(over: pd.DataFrame) -> ReaderTable:
    """5.4's table: per checkpoint, IICG at the peak cell, the largest IICG anywhere, ID accuracy."""
    return reader_table(over, {"checkpoint": "weights", "step": "training step", "iicg_at_peak": "IICG at the peak cell",
                               "iicg_max": "largest IICG", "acc_type0": "ID test accuracy"},
                        {"iicg_at_peak": ".3f", "iicg_max": ".3f", "acc_type0": ".1%"})


def layer_map_table(pivot: pd.DataFrame, what: str, fmt: str = ".0%") -> ReaderTable:
    """A layer x position map (rows: layers, or (group, layer) pairs) as a table of ``what`` per position."""
    frame = pivot.reset_index()
    frame.columns = [str(c) for c in frame.columns]
    keys = [c for c in frame.columns if c in ("k_group", "layer")]
    columns = {"k_group": "k-cutoff group", "layer": "layer"}
    columns = {k: columns[k] for k in keys} | {c: f"position {c}" for c in frame.columns if c not in keys}
    return reader_table(frame, columns, {"layer": "{}"} | {c: fmt for c in frame.columns if c not in keys},
                        max_rows=20, caption=what)


# --- the exercises: the quantity each asks for, and its check (the solution cells show how to compute it) ---------


def iicg_peak_by_answer(model, dataset, tables: TaskTables, max_items: int | None = None) -> pd.Series:
    """Exercise 1: the cell (layer, position, iicg) where the IICG of the ID test items grouped by their answer t
    peaks, leaving out cells high by construction (covlib.analyses.iicg.iicg_peaks)."""
    return iicg_peaks(iicg_table(model, dataset, tables, ["t"], ["type_0"], max_items=max_items)).iloc[0]


def check_iicg_peak(layer: Any, position: Any, model, dataset, tables: TaskTables, max_items: int | None = None,
                    names: tuple[str, str] = ("my_peak_layer", "my_peak_position")) -> str:
    """Exercise 1: a reader's (layer, position) of the peak of IICG grouped by t on the ID test items (the peak is
    computed first, so that a check that cannot be made says so, answer or not)."""
    try:
        peak = iicg_peak_by_answer(model, dataset, tables, max_items)
    except CovlibError as exc:
        return unchecked(str(exc))
    return check_peak(layer, position, peak, names)


def check_peak(layer: Any, position: Any, peak: pd.Series | None,
               names: tuple[str, str] = ("my_peak_layer", "my_peak_position")) -> str:
    """Exercise 1's verdict on a reader's (layer, position) against the peak (a row of iicg_peaks: layer,
    position, iicg). A wrong answer learns which of the two is wrong and, for the layer, whether it is too early or
    too late; never the peak."""
    how = ("compute iicg_table(model, ds, tables, [\"t\"], [\"type_0\"]) and find its row with the largest iicg "
           "(leave out the cells marked by_construction)")
    if layer is None or position is None:
        return unanswered(" and ".join(names), how)
    value = as_number(layer)
    if value is None or not value.is_integer():
        return wrong(f"{names[0]} is a layer, a whole number, not {layer!r}.")
    where = str(read_answer(position)).strip()
    layer_right, position_right = int(value) == int(peak["layer"]), where == str(peak["position"])
    if layer_right and position_right:
        return right(f"IICG grouped by t peaks at layer {int(peak['layer'])}, position {peak['position']} "
                     f"(IICG {peak['iicg']:.2f}).")
    parts = ["the layer is right" if layer_right else
             f"layer {int(value)} is too {'late' if value > peak['layer'] else 'early'}",
             "the position is right" if position_right else f"the position is not {where}"]
    return wrong("; ".join(parts) + ". Hint: draw the IICG by t over layers and positions as a heatmap, as 5.2 "
                 "does for b.")
