"""Chapter 7 (chain of thought): required data with the bridge written out, decoding, IICG over the sequence."""
from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

import altair as alt
import numpy as np
import pandas as pd
import torch

from covlib.analyses.curves import combine_curves, final_value, step_reached
from covlib.analyses.fits import describe_exponent, exponent_metrics
from covlib.analyses.iicg import GROUP_KEYS, by_construction, fixed_positions, iicg_map, iicg_peaks, item_groups
from covlib.analyses.residuals import residual_streams, split_items
from covlib.base.errors import CovlibError
from covlib.base.paper import COT_DATA_RATIO, EXPONENTS, EXPONENTS_COT, NONTREE_COT_FAILS_AT
from covlib.base.paths import repository_path
from covlib.figures.charts import accuracy_curves_chart
from covlib.figures.exercises import check_share
from covlib.figures.heatmaps import layer_position_heatmap
from covlib.figures.required_data import COUNT, estimates_chart, requirement_frame
from covlib.figures.style import legend_highlight, pending_chart
from covlib.figures.tables import ReaderTable, reader_table
from covlib.figures.text import fmt
from covlib.search.cells import ProbeRules
from covlib.search.experiments import BOOK_EXPERIMENTS, experiment_command, probe_table
from covlib.search.summary import geometric_mean
from covlib.search.summary import requirement_ratio as summary_ratio
from covlib.training.evaluation import greedy_decode
from covlib.training.shipped import ShippedRun, archive_status, missing_archive_note

DATA_DIR = "data/cot"


FAKE_BRIDGE_TABLE = "data/cot/probes_fakebridge.csv"  # relative to the repository


# chapter 7's required-data searches (covlib.search.experiments.experiment_cells / experiment_command): CoT rows go to
# chapter 4's probe table; placeholder-bridge rows to a table of their own (the book's has no column for them)
EXPERIMENTS: dict[str, dict] = {
    # two seeds over five N each (two-hop's seed 1 fills from the queue, data/QUEUE.sh; CoT probes cost 1-2
    # CPU-minutes each here, a tenth of a plain three-hop probe)
    "twohop_cot": {"task": "twohop", "N": [20, 25, 30, 40, 50], "seeds": [0, 1], "model": "L4-d128", "cot": True},
    "threehop_cot": {"task": "threehop", "N": [10, 12, 14, 16, 20], "seeds": [0, 1], "model": "L4-d128", "cot": True},
    # five-hop is trained with CoT (the authors' setting), two seeds; its ID pool caps N at about 10 on this CPU
    "fivehop_cot": {"task": "fivehop", "N": [6, 7, 8, 9, 10], "seeds": [0, 1], "model": "L4-d128", "cot": True},
    # ... and without CoT at the smallest N only, searched to its end or to the pool: what the bridges save there
    "fivehop": {"task": "fivehop", "N": [6], "seeds": [0], "model": "L4-d128"},
    # the paper: CoT does not rescue non-tree; searched where a plain non-tree search already fails (chapter 6)
    "nontree_cot": {"task": "nontree", "N": [20, 25, 30], "seeds": [0], "model": "L4-d128", "cot": True},
    # one seed, two N: each failing probe costs as much as a plain one
    "twohop_fakebridge": {"task": "twohop", "N": [25, 30], "seeds": [0], "model": "L4-d128", "fake_bridge": True,
                          "table": FAKE_BRIDGE_TABLE},
}


_DEFAULT_KNOBS = {
    # the searches whose rows the cache holds (chapter 4's plain ones, this chapter's CoT and placeholder ones)
    "experiments": {"twohop": BOOK_EXPERIMENTS["twohop"], "threehop": BOOK_EXPERIMENTS["threehop"],
                    "twohop_cot": EXPERIMENTS["twohop_cot"], "threehop_cot": EXPERIMENTS["threehop_cot"],
                    "fivehop": EXPERIMENTS["fivehop"], "fivehop_cot": EXPERIMENTS["fivehop_cot"]},
    "fake": EXPERIMENTS["twohop_fakebridge"],
    "nontree": EXPERIMENTS["nontree_cot"],
    "rules": ProbeRules(),
    "miniature": False,  # read the cache (data/cot/, the probe tables) rather than train and search here
    "note": "",
}


# the chapter's knobs per preset (covlib.book.setup.setup_chapter): the searches, their rules, and whether the
# models and searches are miniatures made here under out_dir (smoke) or read from the cache
PRESETS: dict[str, dict] = {
    # a miniature of every search: tiny N, a one-layer model, short budgets (seconds)
    "smoke": {
        "experiments": {
            "twohop": {"task": "twohop", "N": [6, 8], "seeds": [0], "model": "smoke"},
            "twohop_cot": {"task": "twohop", "N": [6, 8], "seeds": [0], "model": "smoke", "cot": True},
            "threehop": {"task": "threehop", "N": [4], "seeds": [0], "model": "smoke"},
            "threehop_cot": {"task": "threehop", "N": [4], "seeds": [0], "model": "smoke", "cot": True},
            "fivehop": {"task": "fivehop", "N": [3], "seeds": [0], "model": "smoke"},
            "fivehop_cot": {"task": "fivehop", "N": [3], "seeds": [0], "model": "smoke", "cot": True},
        },
        "fake": {"task": "twohop", "N": [6], "seeds": [0], "model": "smoke", "fake_bridge": True},
        "nontree": {"task": "nontree", "N": [6], "seeds": [0], "model": "smoke", "cot": True},
        "rules": ProbeRules(step_cap=200, give_up_epochs=10, eval_every=25, batch_size=128, test_size_per_type=100),
        "miniature": True,  # train the tiny models and run the miniature searches here, under out_dir
        "note": "",
    },
    "default": _DEFAULT_KNOBS,
    "paper": _DEFAULT_KNOBS | {"note": "The paper's scale (8-layer GPT-2, N = 50 to 200) needs a GPU; "
                                       "this preset reads the default cache."},
}


# the default preset's four models: one (N, n_train) where plain two-hop fails (chapter 4: n_req at N = 30 is
# about 7,300-9,000) and CoT, which the paper finds needs 5-10 times less, should not
_SHIPPED = {"default": {"num_tokens": 30, "n_train": 6000, "test_size_per_type": 1000, "steps": 4000,
                        "preset": "default"},
            "smoke": {"num_tokens": 8, "n_train": 200, "test_size_per_type": 100, "steps": 300, "preset": "smoke"}}


MODELS = {  # name -> (task, target style)
    "twohop": ("twohop", {}),
    "twohop_cot": ("twohop", {"cot": True}),
    "twohop_fakebridge": ("twohop", {"fake_bridge": True}),
    "nontree_cot": ("nontree", {"cot": True}),
}


def shipped_runs(preset: str = "default") -> dict[str, ShippedRun]:
    """The chapter's four models (data seed 0, one N and n_train) at a preset ("paper" uses the default's)."""
    knobs = _SHIPPED["smoke" if preset == "smoke" else "default"]
    runs = {}
    for name, (task, style) in MODELS.items():
        dataset = {"task": task, "num_tokens": knobs["num_tokens"], "n_train": knobs["n_train"], "seed": 0,
                   "test_size_per_type": knobs["test_size_per_type"], **style}
        runs[name] = ShippedRun(name, dataset, {"steps": knobs["steps"]}, knobs["preset"],
                                command=f"covlib ship cot --only {name}")
    return runs


def cot_ratio(plain: pd.DataFrame, cot: pd.DataFrame) -> pd.DataFrame:
    """n_req without CoT over n_req with CoT for every (N, seed) both searches have finished (search
    summaries of covlib.search). Columns N, seed, n_req_plain, n_req_cot, ratio."""
    return summary_ratio(plain, cot, ("plain", "cot"))


def placeholder_share(plain: pd.DataFrame, cot: pd.DataFrame, placeholder: pd.DataFrame) -> pd.DataFrame:
    """How much of CoT's data saving the placeholder bridge (an extra position, no bridge supervision)
    gets at each (N, seed) all three searches finished: share = log(plain / placeholder) / log(plain / cot),
    0 when the placeholder needs what the plain model needs, 1 when it needs what CoT needs. Columns N,
    seed, n_req_plain, n_req_placeholder, n_req_cot, share."""
    saved = summary_ratio(plain, placeholder, ("plain", "placeholder"))
    both = saved.merge(summary_ratio(plain, cot, ("plain", "cot")).drop(columns="n_req_plain"),
                       on=["N", "seed"], suffixes=("_placeholder", "_cot"))
    share = np.log(both["ratio_placeholder"]) / np.log(both["ratio_cot"])
    return both.assign(share=share)[["N", "seed", "n_req_plain", "n_req_placeholder", "n_req_cot", "share"]]


def ratio_lower_bounds(plain: pd.DataFrame, cot: pd.DataFrame) -> pd.DataFrame:
    """Cells where the plain search fails even at the largest size it may try (status "unreachable") while
    the CoT search has an estimate: the plain requirement is above that size, so the ratio is at least
    largest_n / n_req_cot. Search summaries of covlib.search.status.search_summary (they carry largest_n).
    Columns N, seed, plain_fails_at, n_req_cot, ratio_at_least."""
    cols = ["N", "seed", "plain_fails_at", "n_req_cot", "ratio_at_least"]
    if not len(plain) or not len(cot) or "largest_n" not in plain:
        return pd.DataFrame(columns=cols)
    failed = plain[plain["status"] == "unreachable"][["N", "seed", "largest_n"]]
    done = cot.dropna(subset=["n_req"])[["N", "seed", "n_req"]]
    both = failed.merge(done, on=["N", "seed"]).rename(columns={"largest_n": "plain_fails_at", "n_req": "n_req_cot"})
    both = both.astype({"plain_fails_at": float, "n_req_cot": float})
    return (both.assign(ratio_at_least=both["plain_fails_at"] / both["n_req_cot"])[cols]
            .sort_values(["N", "seed"]).reset_index(drop=True))



def target_layout(ds) -> list[str]:
    """Names of the target tokens of a dataset folder: the bridges (b, or b1, b2, ...) then the answer t."""
    n_targets = ds.test.targets.shape[1]
    bridges = n_targets - 1
    return (["b"] if bridges == 1 else [f"b{i + 1}" for i in range(bridges)]) + ["t"]


@torch.no_grad()
def decode_items(model, prompts: np.ndarray, targets: np.ndarray, batch_size: int = 2048) -> pd.DataFrame:
    """Per item: teacher-forced correctness of the bridges and of the answer (given the true bridges), and
    greedy decoding's bridges, answer and exact match (every target token right, the model feeding itself).

    With argmax decoding, greedy exact match equals teacher-forced correctness of every target token: while
    the model's tokens are right, its inputs are the teacher's. Teacher-forced *answer* accuracy is at least
    the exact match: it hands the model the true bridge even where it would have written a wrong one."""

    prompts = np.asarray(prompts)
    targets = np.asarray(targets)
    if len(prompts) != len(targets) or targets.ndim != 2:
        raise CovlibError(f"{len(prompts)} prompts but targets of shape {targets.shape}: one target row per prompt")
    device = next(model.parameters()).device
    m, L = prompts.shape[1], targets.shape[1]
    out = []
    for s in range(0, len(prompts), batch_size):
        p = torch.as_tensor(prompts[s : s + batch_size], dtype=torch.long, device=device)
        t = torch.as_tensor(targets[s : s + batch_size], dtype=torch.long, device=device)
        tf = model(torch.cat([p, t[:, :-1]], dim=1))[:, m - 1 :].argmax(-1) == t
        greedy = greedy_decode(model, p, L) == t
        out.append(torch.stack([tf[:, :-1].all(1), tf[:, -1], tf.all(1), greedy[:, :-1].all(1), greedy[:, -1],
                                greedy.all(1)], dim=1).cpu())
    cols = ["tf_bridges", "tf_answer", "tf_all", "greedy_bridges", "greedy_answer", "greedy_exact"]
    return pd.DataFrame(torch.cat(out).numpy(), columns=cols)


def split_label(split: str, n_primitives: int = 2) -> str:
    """A reader's name for a test type (SPEC §1's numbering: type_0 is ID; type_{bits+1} has primitive i seen
    when bit i, counted from the first primitive as the most significant, is set), e.g. type_2 of a
    two-primitive task -> "OOD: f1 unseen, f2 seen"."""
    if split in ("type_0", "train_inferred"):
        return {"type_0": "ID test", "train_inferred": "ID train"}[split]
    if not split.startswith("type_") or not split[5:].isdigit() or not 1 <= int(split[5:]) < 2 ** n_primitives:
        raise CovlibError(f"unknown test type {split!r} for a task with {n_primitives} primitives: choose "
                          f"train_inferred or type_0 .. type_{2 ** n_primitives - 1}")
    bits = int(split[5:]) - 1
    seen = [(bits >> (n_primitives - 1 - i)) & 1 for i in range(n_primitives)]
    return "OOD: " + ", ".join(f"f{i + 1} {'seen' if s else 'unseen'}" for i, s in enumerate(seen))


OUTCOMES = {  # greedy decoding: (bridges right, answer right) -> label
    (True, True): "bridge right, answer right",
    (True, False): "bridge right, answer wrong",
    (False, True): "bridge wrong, answer right",
    (False, False): "bridge wrong, answer wrong",
}


def decoding_summary(model, ds, splits: Sequence[str] = ("type_0",), max_items: int | None = None) -> pd.DataFrame:
    """Per test split of a CoT dataset: the accuracies of ``decode_items`` (means) and the share of each greedy
    outcome (OUTCOMES). Columns split, n, tf_answer, tf_all, greedy_answer, greedy_exact, and one per outcome."""

    if ds.test.targets.shape[1] < 2:
        raise CovlibError(f"{ds.name} has one target token (no bridge written out): decoding needs a CoT or "
                          "fake-bridge dataset")
    rows = []
    for split in splits:
        idx = split_items(ds, split)[:max_items]
        items = decode_items(model, ds.test.inputs[idx], ds.test.targets[idx])
        row = {"split": split, "n": len(items)} | items.mean().to_dict()
        for (bridge_ok, answer_ok), label in OUTCOMES.items():
            row[label] = float(((items["greedy_bridges"] == bridge_ok) & (items["greedy_answer"] == answer_ok)).mean())
        rows.append(row)
    return pd.DataFrame(rows)


def iicg_peak_table(table: pd.DataFrame, position: str | None = None) -> pd.DataFrame:
    """Per model and grouping key of an ``iicg_sequence_table`` (with a ``model`` column): the largest IICG
    over every layer but never at a cell high by construction (covlib.analyses.iicg.iicg_peaks), over every position
    or at one ``position``. Indexed by (model, group_by); columns iicg, layer, position."""

    sel = table if position is None else table[table["position"] == position]
    if sel.empty:
        raise CovlibError(f"no IICG rows at position {position!r}; positions here: "
                          f"{', '.join(dict.fromkeys(table['position'])) if len(table) else 'none'}")
    return iicg_peaks(sel).set_index(["model", "group_by"])[["iicg", "layer", "position"]]


def sequence_positions(ds) -> list[str]:
    """Names of the positions of the teacher-forced sequence: the prompt x1..xm, then the bridge positions
    (b or b1, b2, ...; for a fake-bridge dataset they hold the placeholder </b>)."""
    return [f"x{i + 1}" for i in range(ds.n_inputs)] + target_layout(ds)[:-1]


def iicg_sequence_table(model, ds, tables, keys: Sequence[str], split: str = "type_0", max_items: int = 2000
                        ) -> pd.DataFrame:
    """IICG maps over every position of the teacher-forced sequence (prompt and bridge positions): the
    covlib.analyses grouping (one item per determining fragment) on the residuals of prompt + true target
    tokens but the last. Long table (split, group_by, layer, position, iicg, within, between, items, groups,
    by_construction)."""

    idx = split_items(ds, split)[:max_items]
    inputs = ds.test.inputs[idx]
    sequences = np.concatenate([inputs, ds.test.targets[idx][:, :-1]], axis=1)
    resid = residual_streams(model, sequences)
    positions = sequence_positions(ds)
    written = not (ds.meta or {}).get("config", {}).get("fake_bridge", False)
    rows = []
    for key in keys:
        kept, labels = item_groups(tables, inputs, key)
        res = iicg_map(resid[kept], labels)
        fixed = fixed_positions(GROUP_KEYS[tables.task.name][key][0], positions, bridges_written=written)
        for layer in range(resid.shape[1]):
            for p, pos in enumerate(positions):
                rows.append({"split": split, "group_by": key, "layer": layer, "position": pos,
                             "iicg": float(res["iicg"][layer, p]), "within": float(res["within"][layer, p]),
                             "between": float(res["between"][layer, p]), "items": res["items"],
                             "groups": res["groups"], "by_construction": by_construction(layer, p, fixed)})
    return pd.DataFrame(rows)


OUTCOME_COLORS = ["#2e7d32", "#f9a825", "#90caf9", "#c62828"]  # in OUTCOMES order
ALL_ITEMS = "all test items"


def decoding_chart(summary: pd.DataFrame, title: str, row: str = "model") -> alt.LayerChart:
    """One bar per row of decoding_summary (labelled by the column ``row``, e.g. a model, or a model and
    a test split): the four greedy outcomes (bridge right or wrong, answer right or wrong) stacked, and a
    black tick at teacher-forced answer accuracy. With a ``split`` column, a radio button keeps the rows of
    one kind of test item (ID, or an OOD type)."""
    labels = list(OUTCOMES.values())
    summary = summary.assign(test_items=summary["split"].map(split_label)) if "split" in summary else summary
    kept = [c for c in (row, "test_items", "n") if c in summary]
    long = summary.melt(id_vars=list(dict.fromkeys(kept)), value_vars=labels, var_name="outcome", value_name="share")
    long["order"] = long["outcome"].map({lab: i for i, lab in enumerate(labels)})
    rows = list(dict.fromkeys(summary[row]))
    y = alt.Y(f"{row}:N", title=None, sort=rows, axis=alt.Axis(labelLimit=400))
    items = [alt.Tooltip("n:Q", title="test items", format=",d")] if "n" in summary else []
    bars = alt.Chart(long).mark_bar().encode(
        alt.X("share:Q", title="share of test items (greedy decoding)", axis=alt.Axis(format="%"),
              scale=alt.Scale(domain=[0, 1])),
        y, alt.Color("outcome:N", title=None, sort=labels, scale=alt.Scale(domain=labels, range=OUTCOME_COLORS),
                     legend=alt.Legend(orient="bottom", columns=2, labelLimit=300)),
        alt.Order("order:Q"),
        tooltip=[alt.Tooltip(f"{row}:N", title=row), alt.Tooltip("outcome:N", title="greedy decoding"),
                 alt.Tooltip("share:Q", title="share of the items", format=".1%"), *items])
    ticks = alt.Chart(summary.assign(what="teacher-forced answer accuracy")).mark_tick(
        color="black", thickness=3, size=22).encode(
        alt.X("tf_answer:Q"), y,
        tooltip=[alt.Tooltip(f"{row}:N", title=row), alt.Tooltip("tf_answer:Q", title="teacher-forced answer accuracy",
                                                                 format=".1%"), *items])
    if "test_items" in summary:  # each layer has data of its own, so each is filtered
        shown = alt.param(name="test_items_shown", value=ALL_ITEMS, bind=alt.binding_radio(
            options=[ALL_ITEMS, *dict.fromkeys(summary["test_items"])], name="show: "))
        keep = f"test_items_shown == '{ALL_ITEMS}' || datum.test_items == test_items_shown"
        bars, ticks = bars.add_params(shown).transform_filter(keep), ticks.transform_filter(keep)
    return alt.layer(bars, ticks).properties(width=420, height=alt.Step(30), title=alt.TitleParams(
        title, anchor="start", subtitle="bars: greedy decoding outcomes; black tick: teacher-forced answer accuracy"))


def ratio_chart(ratios: pd.DataFrame, title: str, band: tuple[float, float] | None = None,
                bounds: pd.DataFrame | None = None) -> alt.LayerChart:
    """n_req without CoT over n_req with CoT per (N, seed) (cot_ratio rows; coloured by ``task``
    when the rows carry one), with an optional shaded band (the paper's 5-10x) and optional lower bounds
    (ratio_lower_bounds rows, drawn as open up-triangles: the true ratio lies above). Clicking a task in the
    legend picks out its points."""
    ratios = ratios if "task" in ratios else ratios.assign(task="")
    picked, opacity = legend_highlight("task")
    color = alt.Color("task:N", title=None, scale=alt.Scale(domain=["twohop", "threehop"], range=["#1565c0", "#c62828"]))
    x = alt.X("N:Q", title="N (tokens)", scale=alt.Scale(zero=False, nice=False, padding=20))
    cell = [alt.Tooltip("task:N", title="task"), alt.Tooltip("N:Q", title="N"), alt.Tooltip("seed:Q", title="seed")]
    layers = []
    measured, at_least = "measured ratio (one seed, one N)", "at least (no success without CoT)"
    shape = alt.Scale(domain=[measured, at_least], range=["circle", "triangle-up"])
    if band:
        layers.append(alt.Chart(pd.DataFrame({"lo": [band[0]], "hi": [band[1]], "what": [f"paper: {band[0]:.0f}-{band[1]:.0f}x"]}))
                      .mark_rect(opacity=0.15).encode(
                          alt.Y("lo:Q"), alt.Y2("hi:Q"), tooltip=[alt.Tooltip("what:N", title="band")],
                          fill=alt.Fill("what:N", title=None, scale=alt.Scale(range=["#6a1b9a"]),
                                        legend=alt.Legend(orient="bottom"))))
    layers.append(alt.Chart(ratios.assign(what=measured)).mark_point(filled=True, size=70).encode(
        x, alt.Y("ratio:Q", title="n_req without CoT / with CoT", scale=alt.Scale(zero=True)), color,
        alt.Shape("what:N", title=None, scale=shape, legend=alt.Legend(orient="bottom")), opacity=opacity,
        tooltip=[*cell, alt.Tooltip("n_req_plain:Q", title="n_req without CoT", format=",.0f"),
                 alt.Tooltip("n_req_cot:Q", title="n_req with CoT", format=",.0f"),
                 alt.Tooltip("ratio:Q", title="ratio", format=".2f")]).add_params(picked))
    if bounds is not None and len(bounds):
        bounds = bounds if "task" in bounds else bounds.assign(task="")
        layers.append(alt.Chart(bounds.assign(what=at_least)).mark_point(size=90, filled=False, strokeWidth=2).encode(
            x, alt.Y("ratio_at_least:Q"), color, alt.Shape("what:N", title=None, scale=shape), opacity=opacity,
            tooltip=[*cell, alt.Tooltip("plain_fails_at:Q", title="no success without CoT even at", format=",.0f"),
                     alt.Tooltip("n_req_cot:Q", title="n_req with CoT", format=",.0f"),
                     alt.Tooltip("ratio_at_least:Q", title="ratio at least", format=".2f")]))
    return alt.layer(*layers).properties(width=320, height=220, title=alt.TitleParams(title, anchor="start"))


# ---- the notebook's set-up and prose (chapter 7 only) ----

TASKS = ("twohop", "threehop")  # the tasks whose required data is searched over N with and without CoT
# searched over N with CoT only (the authors train five-hop with CoT targets only), and without CoT at one N at most
COT_ONLY_TASKS = ("fivehop",)
MISSING = "n/a (not in the cache)"  # what the chapter writes for a result the cache does not hold yet
SEARCH_COLUMNS = ["task", "cot", "N", "seed", "status", "low", "high", "n_req", "eligible", "probes", "minutes"]
CURVE_COLORS = {"twohop": "#9e9e9e", "twohop_cot": "#1565c0", "twohop_fakebridge": "#f9a825", "nontree_cot": "#c62828"}
TARGETS = {"twohop": "t", "twohop_cot": "b, t", "twohop_fakebridge": "</b>, t", "nontree_cot": "b, t"}
DECODING_SPLITS = ("type_0", "type_2", "type_3")  # ID; f1 unseen, f2 seen; f1 seen, f2 unseen
IICG_MODELS, IICG_KEYS = ("twohop_cot", "twohop_fakebridge", "nontree_cot"), ("b", "b,x2", "t")


def _unfinished(summary: pd.DataFrame) -> pd.Series:
    """Which cells of a search summary are not finished (not started or still searching)."""
    return summary["status"].isin(["not started", "searching"])


def cache_line(preset: str, N: int, n_train: int, dest: os.PathLike, ready: Mapping[str, bool]) -> str:
    """One line saying where the four models are looked for and which of them are there."""
    return archive_status(f"preset={preset}: four models at N = {N}, n_train = {n_train:,};", dest, ready)


def missing_models_note(runs: Mapping[str, ShippedRun], ready: Mapping[str, bool]) -> str:
    """The commands that fill the cache with the models it lacks ("" when it holds them all)."""
    note = missing_archive_note(runs, ready, "about 10 CPU-minutes each; `data/cot/COMMANDS.txt`")
    return note and note + (" Or rerun this chapter with `recompute = True`. The sections below say what each "
                            "one needs.")


def probe_tables(table: str, root: os.PathLike, miniature: bool) -> tuple[Path, Path]:
    """The probe table (``table``, else the book's, or a fresh one under ``root`` for a miniature) and the
    placeholder searches' table of their own."""
    smoke_dir = Path(root) / "cot-smoke"
    table_path = probe_table(table, smoke_dir / "probes.csv" if miniature else None)
    fake_table = smoke_dir / "probes_fakebridge.csv" if miniature else repository_path(FAKE_BRIDGE_TABLE)
    return table_path, fake_table


def search_table(summaries: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Every cell of the four searches (plain and CoT, two-hop and three-hop) in one table."""
    return pd.concat(summaries.values(), ignore_index=True)[SEARCH_COLUMNS]


def cot_search_minutes(summaries: Mapping[str, pd.DataFrame]) -> float:
    """CPU minutes the CoT searches (two-hop, three-hop and five-hop) have taken so far."""
    return sum(float(s["minutes"].sum()) for name, s in summaries.items() if name.endswith("_cot"))


def pending_note(summaries: Mapping[str, pd.DataFrame], experiments: Mapping[str, dict]) -> str:
    """Which searches the cache has not finished, with the command that resumes each ("" when none)."""
    pending = {name: s for name, s in summaries.items() if _unfinished(s).any()}
    if not pending:
        return ""
    return "**Not finished in the cache:** " + "; ".join(
        f"{name}: {int(_unfinished(s).sum())} of {len(s)} cells "
        f"(`{experiment_command(experiments[name])}`)"
        for name, s in pending.items()) + ". The search resumes from the table."


def exponent_table(fits: Mapping[str, dict | None], summaries: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """The fitted exponents with and without CoT per task: value, interval (none below 4 values of N) and how it
    was made, the N range, values of N and seeds they rest on, and the paper's values."""
    targets = [(task, style, name) for task in TASKS
               for style, name in (("without CoT", task), ("with CoT", f"{task}_cot"))]
    targets += [(task, "with CoT", f"{task}_cot") for task in COT_ONLY_TASKS if f"{task}_cot" in fits]
    rows = []
    for task, style, name in targets:
        f = fits[name]
        rows.append({"task": task, "target": style, "c": f["c"] if f else np.nan,
                     "c_low": f["c_low"] if f else np.nan, "c_high": f["c_high"] if f else np.nan,
                     "interval": f.get("interval", "") if f else "",
                     "N range": f"{f['N_min']:.0f}-{f['N_max']:.0f}" if f else "",
                     "N values": f["n_values"] if f else 0, "seeds": f["seeds"] if f else 0,
                     "paper": (EXPONENTS_COT if style == "with CoT" else EXPONENTS)[task]})
    return pd.DataFrame(rows)


def required_data_chart(summaries: Mapping[str, pd.DataFrame], command: str) -> alt.TopLevelMixin:
    """The required-data estimates of every search with a finished cell, or a placeholder naming ``command``."""
    points = [requirement_frame(s.assign(model=name.replace("_cot", " with CoT")))
              for name, s in summaries.items() if s["n_req"].notna().any()]
    if points:
        return estimates_chart(points, "Required data with and without the bridge written out")
    return pending_chart("Required data with and without CoT", command)


def compare_fits(fits: Mapping[str, dict | None], task: str) -> str:
    """Whether this cache separates the two exponents of a task: do their bootstrap intervals overlap?"""
    with_cot, plain = fits[f"{task}_cot"], fits[task]
    if not (with_cot and plain) or np.isnan(with_cot["c_low"]) or np.isnan(plain["c_low"]):
        return ""
    if with_cot["c_high"] < plain["c_low"]:
        return f" The {task} intervals do not overlap: CoT lowers the exponent here, as the paper reports."
    if with_cot["c_low"] > plain["c_high"]:
        return f" The {task} intervals do not overlap, and CoT's exponent is the higher one, against the paper."
    return (f" The {task} intervals overlap, so this cache does not separate the two exponents (the CoT fit rests on "
            f"{with_cot['points']} estimates); the data ratio below is the sharper comparison.")


def exponent_text(fits: Mapping[str, dict | None]) -> str:
    """The measured exponents beside the paper's, and whether the intervals separate them."""
    parts = [f"{task}: with CoT {describe_exponent(fits[f'{task}_cot'])} against the paper's {EXPONENTS_COT[task]:.2f}; "
             f"without, {describe_exponent(fits[task])} (paper {EXPONENTS[task]:.2f})" for task in TASKS]
    parts += [f"{task} with CoT: {describe_exponent(fits[f'{task}_cot'])} against the paper's "
              f"{EXPONENTS_COT[task]:.2f}" for task in COT_ONLY_TASKS if f"{task}_cot" in fits]
    return "Measured on this CPU: " + ". ".join(parts) + "." + "".join(compare_fits(fits, t) for t in TASKS)


def paired_tasks(summaries: Mapping[str, pd.DataFrame]) -> list[str]:
    """The tasks searched both without and with CoT (five-hop only where a preset searches it both ways)."""
    return [task for task in TASKS + COT_ONLY_TASKS if task in summaries and f"{task}_cot" in summaries]


def steps_below_bracket(probes: pd.DataFrame, summary: pd.DataFrame) -> pd.Series:
    """The optimiser steps of the failing probe at each bracketed cell's lower end: how long the give-up rule
    let the largest failure train (one value per bracketed cell of a search summary)."""
    done = summary.dropna(subset=["low"])
    if not len(done) or not len(probes):
        return pd.Series(dtype=float)
    keys = ["task", "cot", "N", "seed", "model"]
    lows = done[keys + ["low"]].astype({"low": int, "N": int, "seed": int, "cot": bool})
    failed = probes[~probes["success"].astype(bool)].astype({"N": int, "seed": int, "n_train": int, "cot": bool})
    rows = lows.merge(failed, left_on=keys + ["low"], right_on=keys + ["n_train"])
    # a size probed again under a higher step cap: its longest run is the one that decided it
    return rows.groupby(keys)["steps"].max().astype(float)


def give_up_note(probes: pd.DataFrame, summaries: Mapping[str, pd.DataFrame], give_up_epochs: float) -> str:
    """How few steps the give-up rule lets five-hop's CoT probes train below their brackets, beside two-hop's
    with CoT: at a few hundred examples, its epochs are a few hundred updates ("" without a bracketed cell)."""
    five = steps_below_bracket(probes, summaries["fivehop_cot"]) if "fivehop_cot" in summaries else pd.Series()
    if not len(five):
        return ""
    two = steps_below_bracket(probes, summaries["twohop_cot"]) if "twohop_cot" in summaries else pd.Series()

    def span(steps: pd.Series) -> str:
        return f"{steps.min():,.0f}" + (f"-{steps.max():,.0f}" if steps.max() > steps.min() else "")
    beside = f"; two-hop's with CoT after {span(two)}" if len(two) else ""
    fitted = summaries["fivehop_cot"].dropna(subset=["n_req"])["N"]
    return (f" The failing probe just below each five-hop bracket stopped after {span(five)} "
            f"optimiser steps{beside}: the give-up rule counts {give_up_epochs:.0f} epochs, and an epoch of a few "
            f"hundred examples is one step. Over N = {int(fitted.min())}-{int(fitted.max())} the five-hop fit may "
            "measure that rule as much as the data.")


def ratio_tables(summaries: Mapping[str, pd.DataFrame]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The data ratios without / with CoT of every paired task (cot_ratio) and their lower bounds where the plain
    search fails everywhere (ratio_lower_bounds), each with a ``task`` column."""
    tasks = paired_tasks(summaries)
    ratios = pd.concat([cot_ratio(summaries[task], summaries[f"{task}_cot"]).assign(task=task) for task in tasks],
                       ignore_index=True)
    bounds = pd.concat([ratio_lower_bounds(summaries[task], summaries[f"{task}_cot"]).assign(task=task)
                        for task in tasks], ignore_index=True)
    return ratios, bounds


def ratios_by_task(ratios: pd.DataFrame) -> dict[str, float]:
    """The geometric mean of each task's data ratios (NaN for a task without a pair)."""
    return {task: geometric_mean(ratios[ratios["task"] == task]["ratio"]) for task in TASKS + COT_ONLY_TASKS}


def ratio_at_least(bounds: pd.DataFrame, task: str) -> float:
    """The largest lower bound on a task's data ratio, from cells its plain search never succeeds in (NaN if none)."""
    rows = bounds[bounds["task"] == task] if len(bounds) else bounds
    return float(rows["ratio_at_least"].max()) if len(rows) else float("nan")


def ratio_text(ratios: pd.DataFrame, by_task: Mapping[str, float]) -> str:
    """The data ratio of each task in words, beside the paper's 5-10x ("" without any pair)."""
    if not len(ratios):
        return ""
    parts = []
    for task in TASKS + COT_ONLY_TASKS:
        rows = ratios[ratios["task"] == task]
        if not len(rows):
            continue
        spread = (f"geometric mean of {len(rows)} pairs, range {rows['ratio'].min():.1f} to {rows['ratio'].max():.1f})"
                  if len(rows) > 1 else f"one pair, N = {int(rows['N'].iloc[0])})")
        parts.append(f"{task} without CoT needs {by_task[task]:.1f} times the data it needs with CoT (" + spread)
    return ("At equal N, " + "; ".join(parts)
            + f". The authors' CoT models need {COT_DATA_RATIO[0]:.0f} to {COT_DATA_RATIO[1]:.0f} times less.")


def bounds_text(bounds: pd.DataFrame) -> str:
    """The lower bounds on the data ratio in words, where the search without CoT never succeeds."""
    return "Where the search without CoT fails at every size it may try, only a bound is known: " + "; ".join(
        f"{r.task} N = {r.N} (seed {r.seed}) fails even at {r.plain_fails_at:,.0f} examples without CoT and needs "
        f"about {r.n_req_cot:,.0f} with it, a ratio of **at least {r.ratio_at_least:.1f}**"
        for r in bounds.itertuples()) + ". These cells (open triangles) are not in the geometric mean above."


def learning_curves_chart(metrics: Mapping[str, pd.DataFrame], N: int, n_train: int) -> alt.TopLevelMixin:
    """The four models' ID test accuracy over training (a placeholder when none is in the cache)."""
    if not metrics:
        return pending_chart("Learning curves of the four models", "covlib ship cot")
    curves, series = combine_curves(metrics, {"ID test": "acc/type_0"})
    return accuracy_curves_chart(
        curves, series, f"ID test accuracy, N = {N}, {n_train:,} examples (teacher-forced, all target tokens)",
        colors={f"{name}, ID test": c for name, c in CURVE_COLORS.items()}, chance=1 / N)


def final_accuracies(metrics: Mapping[str, pd.DataFrame], column: str = "acc/type_0") -> dict[str, float]:
    """Each of the four models' last evaluated ``column`` (NaN for a model not in the cache)."""
    return {name: final_value(metrics.get(name), column) for name in MODELS}


def curves_text(metrics: Mapping[str, pd.DataFrame], final_type0: Mapping[str, float],
                final_answer: Mapping[str, float], n_train: int) -> str:
    """The four models' final accuracies and when they reached 99%, or what the comparison still needs."""
    if not set(MODELS) <= set(metrics):
        return "The comparison needs all four models (see the top of the chapter for the commands)."

    def steps_to(name: str) -> str:
        return step_reached(metrics.get(name))

    return (f"After {int(metrics['twohop_cot']['step'].iloc[-1]):,} steps on {n_train:,} examples: two-hop without CoT "
            f"**{final_type0['twohop']:.1%}** ID accuracy (99% {steps_to('twohop')}), with CoT "
            f"**{final_type0['twohop_cot']:.1%}** (99% {steps_to('twohop_cot')}), with the placeholder bridge "
            f"**{final_type0['twohop_fakebridge']:.1%}** (answer token {final_answer['twohop_fakebridge']:.1%}), and "
            f"non-tree with CoT **{final_type0['nontree_cot']:.1%}** (answer token {final_answer['nontree_cot']:.1%}; "
            f"99% {steps_to('nontree_cot')}).")


def shortfall_text(final_type0: Mapping[str, float], N: int, n_train: int) -> str:
    """Non-tree with CoT against two-hop with CoT at the shipped N and data ("" while either is missing)."""
    shortfall = final_type0["twohop_cot"] - final_type0["nontree_cot"]
    if np.isnan(shortfall):
        return ""
    verdict = "still falls short of two-hop with CoT" if shortfall > 0.01 else "matches two-hop with CoT"
    return (f"At N = {N} and {n_train:,} examples, non-tree with CoT **{verdict}**: {final_type0['nontree_cot']:.1%} ID "
            f"exact match against {final_type0['twohop_cot']:.1%} ({shortfall * 100:+.1f} points for two-hop), though "
            f"both write their bridge out (the paper: non-tree with CoT fails at N = {NONTREE_COT_FAILS_AT['N']}, "
            f"n = {NONTREE_COT_FAILS_AT['n_train']:,}, where two-hop with CoT succeeds). Section 7.3 shows where its "
            "errors sit: bridge or answer.")


def unfinished_command(summary: pd.DataFrame, experiment: dict, miniature: bool) -> str:
    """The command that finishes a search's unfinished cells ("" when all are done, or for a miniature)."""
    return experiment_command(experiment) if not miniature and _unfinished(summary).any() else ""


def decoding_table(models: Mapping[str, tuple], max_items: int) -> pd.DataFrame:
    """decoding_summary of every model that writes a target before the answer (all but plain two-hop) on the
    ID items and the two OOD types DECODING_SPLITS, with ``model`` and a reader's row label ``items``."""
    parts = [decoding_summary(model, ds, splits=DECODING_SPLITS, max_items=max_items).assign(model=name)
             for name, (model, ds, _, _) in models.items() if name != "twohop"]
    decoding = pd.concat(parts or [pd.DataFrame()], ignore_index=True)
    if len(decoding):
        decoding["items"] = decoding["model"] + " · " + decoding["split"].map(split_label)
    return decoding


def decoded(decoding: pd.DataFrame, name: str, col: str, split: str = "type_0") -> float:
    """One value of the decoding table: model ``name``, test ``split``, column ``col`` (NaN when absent)."""
    sel = decoding[(decoding["model"] == name) & (decoding["split"] == split)] if len(decoding) else decoding
    return float(sel[col].iloc[0]) if len(sel) else float("nan")


def hops_follow_facts(decoding: pd.DataFrame, name: str, high: float = 0.9, low: float = 0.2) -> bool:
    """Does each hop succeed exactly where its own fact was seen (type_3's bridge right, type_2's wrong)?"""
    return (decoded(decoding, name, "greedy_bridges", "type_3") >= high
            and decoded(decoding, name, "greedy_answer", "type_3") <= low
            and decoded(decoding, name, "greedy_bridges", "type_2") <= low
            and decoded(decoding, name, "tf_answer", "type_2") >= high)


def outcome_text(decoding: pd.DataFrame, name: str) -> str:
    """A model's ID items under greedy decoding against teacher forcing, and where its errors start."""
    def value(col: str) -> float:
        return decoded(decoding, name, col)

    bridge_wrong = value("bridge wrong, answer right") + value("bridge wrong, answer wrong")
    answer_wrong = value("bridge right, answer wrong")
    gap = value("tf_answer") - value("greedy_exact")
    where = ("" if max(bridge_wrong, answer_wrong) < 0.01 else
             ": most errors come after a right bridge, in the second hop" if answer_wrong > bridge_wrong else
             ": most errors start at the bridge")
    return (f"greedy exact match **{value('greedy_exact'):.1%}** (teacher-forced, all tokens: "
            f"{value('tf_all'):.1%}: the same quantity), teacher-forced answer accuracy "
            f"{value('tf_answer'):.1%} (a gap of {gap * 100:+.1f} points). Greedy decoding writes a wrong bridge "
            f"for {bridge_wrong:.1%} of the items ({value('bridge wrong, answer wrong'):.1%} with a wrong answer "
            f"after it) and a right bridge followed by a wrong answer for {answer_wrong:.1%}{where}")


def ood_text(decoding: pd.DataFrame, name: str, N: int) -> str:
    """A model's OOD items with one fact unseen: teacher forcing credits a first hop greedy decoding lacks."""
    def value(col: str, split: str) -> float:
        return decoded(decoding, name, col, split)

    return (f"On the OOD items whose first fact is unseen and second seen ({split_label('type_2')}), teacher-forced "
            f"answer accuracy is **{value('tf_answer', 'type_2'):.1%}**: handed the true bridge, the model only "
            f"has to apply a seen second fact. Greedy decoding must write the bridge itself from an unseen fact: "
            f"{value('greedy_bridges', 'type_2'):.1%} of its bridges are right (chance is {1 / N:.1%}) and its "
            f"exact match is **{value('greedy_exact', 'type_2'):.1%}**. With the second fact unseen instead "
            f"(type_3) the bridge is right for {value('greedy_bridges', 'type_3'):.1%} and the answer for "
            f"{value('greedy_answer', 'type_3'):.1%}"
            + (": each hop generalises as far as its own facts were seen, and teacher-forced answer accuracy credits "
               "the model with a first hop it never learned." if hops_follow_facts(decoding, name) else "."))


def decoding_text(decoding: pd.DataFrame, available: Collection[str], N: int) -> str:
    """What greedy decoding shows for each model in ``available`` (the ones in the cache)."""
    parts = []
    if "twohop_cot" in available:
        parts.append("Two-hop with CoT, ID test: " + outcome_text(decoding, "twohop_cot") + ". "
                     + ood_text(decoding, "twohop_cot", N))
    if "nontree_cot" in available:
        parts.append("Non-tree with CoT, ID test: " + outcome_text(decoding, "nontree_cot") + ".")
    if "twohop_fakebridge" in available:
        parts.append("With the placeholder the 'bridge' is always `</b>`, so teacher forcing hands over nothing: "
                     "its answer accuracy on the OOD items with an unseen first fact is "
                     f"{decoded(decoding, 'twohop_fakebridge', 'tf_answer', 'type_2'):.1%} either way.")
    return " ".join(parts)


def control_table(metrics: Mapping[str, pd.DataFrame], final_type0: Mapping[str, float],
                  final_answer: Mapping[str, float]) -> pd.DataFrame:
    """The four models side by side: target, ID answer accuracy, ID exact match and steps to 99%."""
    return pd.DataFrame([{"model": name, "target": TARGETS[name],
                          "ID answer accuracy (teacher-forced)": final_answer[name], "ID exact match": final_type0[name],
                          "steps to 99%": step_reached(metrics.get(name))} for name in MODELS])


def late_rise(metrics: pd.DataFrame | None, window: int = 500) -> float:
    """Answer accuracy gained over the last ``window`` steps of a run (is it still learning?)."""
    if metrics is None:
        return float("nan")
    before = metrics[metrics["step"] <= metrics["step"].iloc[-1] - window]["answer_acc/type_0"]
    return float(metrics["answer_acc/type_0"].iloc[-1] - before.iloc[-1]) if len(before) else float("nan")


def still_rising_text(metrics: Mapping[str, pd.DataFrame]) -> str:
    """Whether the two runs without the bridge were still learning when training stopped ("" if not)."""
    rising = {name: late_rise(metrics.get(name)) for name in ("twohop", "twohop_fakebridge")}
    if any(np.isnan(v) for v in rising.values()) or max(rising.values()) <= 0.02:
        return ""
    return (f"Both runs without the bridge were still learning when training stopped (answer accuracy "
            f"{rising['twohop'] * 100:+.1f} and {rising['twohop_fakebridge'] * 100:+.1f} points over the "
            "last 500 steps): at this fixed budget the placeholder makes learning faster, and whether it "
            "also lowers the data needed is the question of the placeholder's required-data search.")


def gain_text(final_answer: Mapping[str, float], N: int, n_train: int) -> str:
    """How much writing the bridge out raises ID answer accuracy, and how much the extra position alone does."""
    gain = final_answer["twohop_cot"] - final_answer["twohop"]
    extra_position = final_answer["twohop_fakebridge"] - final_answer["twohop"]
    if np.isnan(gain):
        return ""
    return (f"At N = {N} and {n_train:,} examples, writing the bridge out raises ID answer accuracy from "
            f"{final_answer['twohop']:.1%} to {final_answer['twohop_cot']:.1%} ({gain * 100:+.1f} points)"
            + ("; the placeholder model is not in the cache yet." if np.isnan(extra_position) else
               f"; the placeholder position alone gives {final_answer['twohop_fakebridge']:.1%} "
               f"({extra_position * 100:+.1f} points).")
            + ("" if np.isnan(extra_position) else
               " The gain comes from supervising the bridge, not from the extra position."
               if abs(extra_position) < 0.25 * abs(gain) else
               f" The extra position alone brings {extra_position / gain:.0%} of the gain: at this size much of what "
               "CoT buys is room to compute, and the supervised bridge adds the rest."))


def placeholder_search_text(fake_summary: pd.DataFrame, described: str, experiment: dict, miniature: bool) -> str:
    """Where the placeholder's required-data searches stand (``described``: their cells in words)."""
    command = "" if miniature else experiment_command(experiment)
    if (fake_summary["status"] == "not started").all():
        return ("The placeholder's required-data search is not in the cache yet"
                + (f" (`{command}`)." if command else "."))
    return ("The placeholder searches: " + described
            + (f" To finish them: `{command}`." if command and _unfinished(fake_summary).any() else ""))


def mean_share(placeholder: pd.DataFrame) -> float:
    """The placeholder's mean share of CoT's data saving (placeholder_share rows; NaN without any)."""
    return float(placeholder["share"].mean()) if len(placeholder) else float("nan")


def placeholder_data_text(placeholder: pd.DataFrame) -> str:
    """The required data without CoT, with the placeholder and with CoT per N, and where the saving comes from."""
    if not len(placeholder):
        return ""
    share = mean_share(placeholder)
    return ("Required data at the same N and seed: " + "; ".join(
        f"N = {int(r['N'])}: without CoT {r['n_req_plain']:,.0f}, placeholder {r['n_req_placeholder']:,.0f}, "
        f"with CoT {r['n_req_cot']:,.0f} (the placeholder goes {r['share']:.0%} of the way, in log data)"
        for _, r in placeholder.iterrows()) + ". "
        + (f"In data, the saving comes from supervising the bridge: the extra position alone saves "
           f"{'none' if placeholder['share'].max() <= 0 else 'little'}; what it does at a fixed budget (above) is "
           "speed learning up, not lower the data a model needs."
           if share < 0.25 else
           "In data, the extra position alone gets most of the saving." if share > 0.75 else
           f"In data, the extra position alone gets {share:.0%} of the saving and supervising "
           "the bridge the rest."))


def iicg_table(models: Mapping[str, tuple], max_items: int) -> tuple[pd.DataFrame, list[str]]:
    """iicg_sequence_table of each IICG model by each key (IICG_MODELS, IICG_KEYS) with a ``model`` column, and
    the selections too small to group (smoke-sized data), each as "<model>, by <key>: <why>"."""
    parts, skipped = [], []
    for name in IICG_MODELS:
        if name not in models:
            continue
        model, ds, tables, _ = models[name]
        for key in IICG_KEYS:
            try:
                parts.append(iicg_sequence_table(model, ds, tables, [key], max_items=max_items).assign(model=name))
            except CovlibError as exc:
                skipped.append(f"{name}, by {key}: {exc}")
    return (pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()), skipped


MODEL_LABELS = {"twohop": "two-hop without CoT", "twohop_cot": "two-hop with CoT",
                "twohop_fakebridge": "two-hop with the placeholder", "nontree_cot": "non-tree with CoT"}
ALL_MODELS = "every model"


def iicg_chart(iicg: pd.DataFrame) -> alt.TopLevelMixin:
    """IICG by layer and position of the CoT sequence, one panel per model and key (a placeholder if empty),
    with a dropdown that keeps one model's row of panels."""
    if not len(iicg):
        return pending_chart("IICG over the CoT sequence", "covlib ship cot")
    names = list(dict.fromkeys(iicg["model"]))
    model = alt.param(name="iicg_model", value=ALL_MODELS, bind=alt.binding_select(
        options=[ALL_MODELS, *names], labels=[ALL_MODELS, *(MODEL_LABELS.get(n, n) for n in names)], name="model: "))
    heat = layer_position_heatmap(iicg.assign(panel=iicg["model"] + ": by " + iicg["group_by"]), "iicg",
                                  "IICG over the CoT sequence (ID test items)", facet="panel", columns=len(IICG_KEYS),
                                  domain=(-0.1, max(0.5, float(iicg["iicg"].max()))),
                                  positions=list(dict.fromkeys(iicg["position"])))
    return heat.add_params(model).transform_filter(f"iicg_model == '{ALL_MODELS}' || datum.model == iicg_model")


def iicg_peaks_by(iicg: pd.DataFrame, key: str) -> pd.DataFrame:
    """iicg_peak_table of the rows grouped by ``key``, over every position (empty when there are none)."""
    has_key = len(iicg) and (iicg["group_by"] == key).any()
    return iicg_peak_table(iicg[iicg["group_by"] == key]) if has_key else pd.DataFrame()


def bridge_position_peaks(iicg: pd.DataFrame) -> pd.DataFrame:
    """iicg_peak_table at the bridge position b, for every model and key (empty without IICG rows)."""
    return iicg_peak_table(iicg, position="b") if len(iicg) else pd.DataFrame()


def peak_at_bridge(at_bridge: pd.DataFrame, name: str, key: str) -> float:
    """The largest IICG at the bridge position of model ``name`` grouped by ``key`` (NaN when absent)."""
    return float(at_bridge.loc[(name, key), "iicg"]) if (name, key) in at_bridge.index else float("nan")


def context_gaps(at_bridge: pd.DataFrame) -> dict[str, float]:
    """Per IICG model: IICG by (b, x2) minus IICG by b at the bridge position (does it carry x2 along?)."""
    return {name: peak_at_bridge(at_bridge, name, "b,x2") - peak_at_bridge(at_bridge, name, "b") for name in IICG_MODELS}


def two_decimals(x: float) -> str:
    """Two decimals without a negative zero."""
    return f"{np.round(x, 2) + 0.0:.2f}"


def formed_text(where_b: pd.DataFrame, name: str, n_inputs: int) -> str:
    """Where model ``name`` groups items by their bridge most, and what that position is."""
    r = where_b.loc[(name, "b")]
    last_input = f"x{n_inputs}"
    why = (", the position whose output is the bridge token: the first hop is computed where it is written out"
           if r["position"] == last_input and name != "twohop_fakebridge" else
           ", where chapter 5 found the bridge of the model without CoT" if r["position"] == "x2" else "")
    return f"{name} at {r['position']}, layer {int(r['layer'])} ({r['iicg']:.2f}){why}"


def inside_text(where_b: pd.DataFrame, at_bridge: pd.DataFrame, where_t: pd.DataFrame,
                n_inputs: Mapping[str, int]) -> str:
    """What the IICG peaks say: where the bridge forms, what the bridge position computes, whether non-tree's
    bridge position stays context-dependent, and what the placeholder does with its extra position."""
    def peak(name: str, key: str) -> float:
        return peak_at_bridge(at_bridge, name, key)

    gap = context_gaps(at_bridge)
    lines = []
    if len(where_b):
        lines.append("Where the bridge forms (the largest IICG by $b$ past the embeddings): "
                     + "; ".join(formed_text(where_b, name, n_inputs[name]) for name in IICG_MODELS
                                 if (name, "b") in where_b.index) + ".")
    answer_at_bridge = peak("twohop_cot", "t")
    if not np.isnan(answer_at_bridge) and not np.isnan(peak("twohop_cot", "b")):
        leader = max(IICG_KEYS, key=lambda k: -np.inf if np.isnan(peak("twohop_cot", k)) else peak("twohop_cot", k))
        lines.append(f"At the bridge position two-hop with CoT groups items by $t$ up to {answer_at_bridge:.2f} "
                     f"(by $b$: {peak('twohop_cot', 'b'):.2f} past the embeddings)"
                     + (": the position that reads the bridge computes the answer." if leader == "t" else "."))
    if not np.isnan(gap["nontree_cot"]) and not np.isnan(gap["twohop_cot"]):
        separated = gap["nontree_cot"] - gap["twohop_cot"] > 0.05
        lines.append(f"At the bridge position, grouping by $(b, x_2)$ beats grouping by $b$ by "
                     f"**{two_decimals(gap['nontree_cot'])}** for non-tree with CoT against "
                     f"{two_decimals(gap['twohop_cot'])} for two-hop with CoT"
                     + (": non-tree's bridge position carries $x_2$ along with the bridge, which its second hop needs. "
                        "Its representation stays context-dependent even with the bridge written out, as the paper "
                        "reports." if separated else ": this cache shows no context dependence peculiar to non-tree."))
    if ("twohop_fakebridge", "t") in where_t.index:
        r = where_t.loc[("twohop_fakebridge", "t")]
        bridge_at_x2 = (("twohop_fakebridge", "b") in where_b.index
                        and where_b.loc[("twohop_fakebridge", "b"), "position"] == "x2")
        lines.append(f"The placeholder model groups items by $t$ most at "
                     f"{'the placeholder' if r['position'] == 'b' else r['position']} "
                     f"position (layer {int(r['layer'])}, {r['iicg']:.2f})"
                     + ((": it computes the bridge at $x_2$ as a model without CoT does, and" if bridge_at_x2 else ": it")
                        + " uses the extra position for the second hop: the room to compute of section 7.4."
                        if r["position"] == "b" else "."))
    return " ".join(lines)


def fit_text(fit: dict | None) -> str:
    """An exponent for the comparison table: value and interval, provisional, or not in the cache."""
    if not fit:
        return MISSING
    if np.isnan(fit["c_low"]):
        return f"{fit['c']:.2f} (from {fit['n_values']} N values: provisional)"
    return f"{fit['c']:.2f} ({fit['c_low']:.2f} to {fit['c_high']:.2f})"


def comparison_table(fits: Mapping[str, dict | None], by_task: Mapping[str, float], final_type0: Mapping[str, float],
                     gap: Mapping[str, float], N: int, n_train: int) -> pd.DataFrame:
    """The paper's numbers beside this book's: exponents, data ratio, non-tree with CoT, its representations."""
    paper, book = "paper (GPT-2, GPU)", "this book (4 layers, CPU)"
    rows = [{"quantity": f"exponent, {label} {style} CoT", paper: f"{table[task]:.2f}",
             book: fit_text(fits[f"{task}_cot" if style == "with" else task])}
            for task, label in (("twohop", "two-hop"), ("threehop", "three-hop"))
            for style, table in (("with", EXPONENTS_COT), ("without", EXPONENTS))]
    rows += [{"quantity": "exponent, five-hop with CoT", paper: f"{EXPONENTS_COT['fivehop']:.2f}",
              book: fit_text(fits.get("fivehop_cot"))}]
    rows += [
        {"quantity": "data without CoT / with CoT, two-hop", paper: f"{COT_DATA_RATIO[0]:.0f}-{COT_DATA_RATIO[1]:.0f}x",
         book: fmt(by_task["twohop"], ".1f", MISSING) + ("" if np.isnan(by_task["twohop"]) else "x")},
        {"quantity": "non-tree with CoT where two-hop with CoT succeeds",
         paper: f"fails (N = {NONTREE_COT_FAILS_AT['N']}, n = {NONTREE_COT_FAILS_AT['n_train']:,})",
         book: f"two-hop CoT {fmt(final_type0['twohop_cot'], '.1%', MISSING)}, non-tree CoT "
               f"{fmt(final_type0['nontree_cot'], '.1%', MISSING)} (N = {N}, n = {n_train:,})"},
        {"quantity": "non-tree with CoT: representations at the bridge", paper: "stay context-dependent",
         book: f"IICG by (b, x2) minus by b: {fmt(np.round(gap['nontree_cot'], 2) + 0.0, missing=MISSING)} "
               f"(two-hop CoT {fmt(np.round(gap['twohop_cot'], 2) + 0.0, missing=MISSING)})"},
    ]
    return pd.DataFrame(rows)


def ratio_range(ratios: pd.DataFrame) -> dict[str, float]:
    """Each task's data ratios as recorded metrics: the smallest, the largest and how many (N, seed) pairs."""
    out = {}
    for task in TASKS:
        rows = ratios[ratios["task"] == task] if len(ratios) else ratios
        out |= {f"data_ratio_{task}_cot_min": float(rows["ratio"].min()) if len(rows) else float("nan"),
                f"data_ratio_{task}_cot_max": float(rows["ratio"].max()) if len(rows) else float("nan"),
                f"data_ratio_{task}_cot_pairs": int(len(rows))}
    return out


def reachable(summary: pd.DataFrame) -> float:
    """1 if some probe of a search reached the threshold, 0 if its probes all failed, NaN before its first probe."""
    if not summary["probes"].fillna(0).astype(int).sum():
        return float("nan")
    return float(summary["high"].notna().any())


def reachable_text(summary: pd.DataFrame, threshold: float) -> str:
    """Whether any probe of the non-tree CoT search reached the threshold, against the paper's verdict."""
    verdict = reachable(summary)
    if np.isnan(verdict):
        return ""
    probed = summary[summary["probes"].fillna(0).astype(int) > 0]
    if verdict:
        cells = ", ".join(f"N = {r.N} at {r.high:,.0f} examples" for r in probed.itertuples() if pd.notna(r.high))
        return (f" Some probe reaches {threshold:.0%}: {cells}; at those N, CoT does rescue non-tree with enough "
                "data, against the paper's single failing point.")
    largest = ", ".join(f"N = {r.N} up to {r.largest_n:,.0f}" for r in probed.itertuples())
    return (f" No probe reaches {threshold:.0%} ({largest} examples): as the paper finds, writing the bridge out does "
            "not rescue non-tree within the data this search may use.")


def seeds_paired(ratios: pd.DataFrame, task: str = "twohop") -> int:
    """How many training seeds a task's data ratios (without / with CoT) come from."""
    return int(ratios.loc[ratios["task"] == task, "seed"].nunique()) if len(ratios) else 0


def recorded_metrics(fits: Mapping[str, dict | None], by_task: Mapping[str, float], final_type0: Mapping[str, float],
                     decoding: pd.DataFrame, at_bridge: pd.DataFrame, cot_minutes: float,
                     placeholder: pd.DataFrame, ratios: pd.DataFrame, nontree: pd.DataFrame,
                     bounds: pd.DataFrame) -> dict[str, float]:
    """The chapter's results as record_metrics keys (NaN for what the cache does not hold)."""
    gap = context_gaps(at_bridge)
    return {
        **ratio_range(ratios),
        **exponent_metrics("twohop_cot", fits["twohop_cot"]),
        **exponent_metrics("threehop_cot", fits["threehop_cot"]),
        **exponent_metrics("fivehop_cot", fits.get("fivehop_cot")),
        "cot_twohop_seeds": seeds_paired(ratios),
        "nontree_cot_reachable": reachable(nontree),
        "data_ratio_twohop_cot": by_task["twohop"],
        "data_ratio_threehop_cot": by_task["threehop"],
        # five-hop without CoT is searched at one N: a ratio where it succeeds, else only a lower bound
        "data_ratio_fivehop_cot": by_task["fivehop"],
        "data_ratio_fivehop_cot_at_least": ratio_at_least(bounds, "fivehop"),
        "final_type0_twohop_plain": final_type0["twohop"],
        "final_type0_twohop_cot": final_type0["twohop_cot"],
        "final_type0_twohop_fakebridge": final_type0["twohop_fakebridge"],
        "final_type0_nontree_cot": final_type0["nontree_cot"],
        "greedy_exact_twohop_cot": decoded(decoding, "twohop_cot", "greedy_exact"),
        "tf_answer_twohop_cot": decoded(decoding, "twohop_cot", "tf_answer"),
        "greedy_exact_type2_twohop_cot": decoded(decoding, "twohop_cot", "greedy_exact", "type_2"),
        "tf_answer_type2_twohop_cot": decoded(decoding, "twohop_cot", "tf_answer", "type_2"),
        "iicg_bridge_position_twohop_cot": peak_at_bridge(at_bridge, "twohop_cot", "b"),
        "iicg_bridge_position_nontree_cot": peak_at_bridge(at_bridge, "nontree_cot", "b"),
        "iicg_context_gap_bridge_position_twohop_cot": gap["twohop_cot"],
        "iicg_context_gap_bridge_position_nontree_cot": gap["nontree_cot"],
        "cot_search_cpu_minutes": cot_minutes,
        "placeholder_data_share": mean_share(placeholder),
    }


def fivehop_saving(ratios: pd.DataFrame, bounds: pd.DataFrame) -> str:
    """What CoT saves on five-hop at the one N searched without it, as a sentence ("" before that search ends)."""
    pair = ratios[ratios["task"] == "fivehop"] if len(ratios) else ratios
    if len(pair):
        r = pair.iloc[0]
        return (f" Without CoT, five-hop at N = {int(r['N'])} needs {r['n_req_plain']:,.0f} examples, "
                f"{r['ratio']:.1f} times as many.")
    bound = bounds[bounds["task"] == "fivehop"] if len(bounds) else bounds
    if len(bound):
        r = bound.iloc[0]
        return (f" Without CoT, five-hop at N = {int(r['N'])} fails even at {r['plain_fails_at']:,.0f} examples: "
                f"CoT needs at least {r['ratio_at_least']:.1f} times less.")
    return ""


def summary_text(*, fits: Mapping[str, dict | None], ratios: pd.DataFrame, by_task: Mapping[str, float],
                 metrics: Mapping[str, pd.DataFrame], final_type0: Mapping[str, float], placeholder: pd.DataFrame,
                 decoding: pd.DataFrame, available: Collection[str], at_bridge: pd.DataFrame, N: int,
                 n_train: int, bounds: pd.DataFrame) -> str:
    """The chapter's findings as a bullet list, each only where the cache holds what it rests on."""
    def value(name: str, col: str, split: str = "type_0") -> float:
        return decoded(decoding, name, col, split)

    summary = []
    if fits["twohop_cot"] or fits["threehop_cot"]:
        summary.append("With the bridge written out, the required data grows as " + "; ".join(
            f"{task}: N^{fits[f'{task}_cot']['c']:.2f} against N^{fits[task]['c']:.2f} without"
            + (f" (the CoT fit rests on {fits[f'{task}_cot']['n_values']} N values: provisional)"
               if np.isnan(fits[f"{task}_cot"]["c_low"]) else "")
            for task in TASKS if fits[f"{task}_cot"] and fits[task]) + ".")
    if fits.get("fivehop_cot"):
        summary.append(f"Five-hop with CoT: {describe_exponent(fits['fivehop_cot'])}, against the paper's "
                       f"{EXPONENTS_COT['fivehop']:.2f}." + fivehop_saving(ratios, bounds))
    if len(ratios):
        summary.append(f"At equal N, two-hop without CoT needs {fmt(by_task['twohop'], '.1f', MISSING)} times the "
                       "data it needs with CoT.")
    if set(MODELS) <= set(metrics):
        summary.append(f"At N = {N} and {n_train:,} examples, two-hop reaches {final_type0['twohop']:.1%} ID accuracy "
                       f"without CoT, {final_type0['twohop_cot']:.1%} with it and "
                       f"{final_type0['twohop_fakebridge']:.1%} with a placeholder; non-tree with CoT "
                       f"{final_type0['nontree_cot']:.1%}.")
    if len(placeholder):
        share = mean_share(placeholder)
        summary.append(f"The placeholder bridge (an extra position, no bridge supervision) gets {share:.0%} "
                       f"of CoT's data saving (log scale, {len(placeholder)} values of N): the saving comes from "
                       + ("supervising the bridge." if share < 0.5 else "the extra position."))
    if "twohop_cot" in available:
        summary.append(f"Greedy decoding's exact match ({value('twohop_cot', 'greedy_exact'):.1%} for two-hop with CoT) "
                       "is what a user sees; teacher-forced answer accuracy "
                       f"({value('twohop_cot', 'tf_answer'):.1%}) hands the model the true bridge and can only be "
                       "higher" + (f" (non-tree with CoT: {value('nontree_cot', 'greedy_exact'):.1%} against "
                                   f"{value('nontree_cot', 'tf_answer'):.1%})." if "nontree_cot" in available else ".")
                       + " On OOD items with an unseen first fact the two part: "
                       f"{value('twohop_cot', 'tf_answer', 'type_2'):.1%} teacher-forced against "
                       f"{value('twohop_cot', 'greedy_exact', 'type_2'):.1%} exact.")
    if not np.isnan(final_type0["twohop_cot"] - final_type0["nontree_cot"]):
        errors = 1 - value("nontree_cot", "greedy_exact")
        summary.append(f"Non-tree with CoT reaches {final_type0['nontree_cot']:.1%} where two-hop with CoT reaches "
                       f"{final_type0['twohop_cot']:.1%} at the same N and data"
                       + ("." if not errors > 0.01 else
                          "; most of its errors come in the second hop, after a right bridge."
                          if value("nontree_cot", "bridge right, answer wrong") > 0.5 * errors
                          else "; most of its errors start at the bridge."))
    gap = context_gaps(at_bridge)
    if not np.isnan(gap["nontree_cot"]):
        more = "more than" if gap["nontree_cot"] - gap["twohop_cot"] > 0.05 else "about as much as"
        summary.append(f"Inside, non-tree's bridge position groups by (b, x2) {more} by b (a gap of "
                       f"{two_decimals(gap['nontree_cot'])}, two-hop with CoT {two_decimals(gap['twohop_cot'])}).")
    return "\n".join(f"* {line}" for line in summary) or "The cache holds no results yet."


# ---- the exercises: the quantity each asks for, and its check ----

def bridge_wrong_share(decoding: pd.DataFrame, name: str = "twohop_cot", split: str = "type_2") -> float:
    """Exercise 1's quantity: the share of a model's items of one split whose bridge greedy decoding writes
    wrong, whatever follows it (the two "bridge wrong" outcomes of ``decoding_table``; NaN when absent)."""
    return (decoded(decoding, name, "bridge wrong, answer right", split)
            + decoded(decoding, name, "bridge wrong, answer wrong", split))


def check_bridge_wrong(answer, truth: float) -> str:
    """Exercise 1's check: the share of type_2 items with a wrong bridge under greedy decoding (twohop_cot)."""
    return check_share(answer, truth, "the share of type_2 items whose greedy bridge is wrong",
                       "add the two 'bridge wrong' outcome columns of the twohop_cot, type_2 row of `decoding`",
                       "the twohop_cot model is not in the cache (`covlib ship cot --only twohop_cot`)", tol=0.005)


@torch.no_grad()
def written_chains(model, ds, tables, split: str = "type_2", max_items: int | None = None,
                   batch_size: int = 2048) -> pd.DataFrame:
    """Per item of one test split of a CoT dataset, what greedy decoding writes and where it leads. Columns:
    the inputs (x1..), each bridge (b, or b1, b2, ...) beside the one the model wrote (b_written, ...), the
    answer t beside the written one (t_written), the answer the last written bridge leads to under the task's
    last hop (t_of_written; -1 where the model wrote a token that is no entity) and whether that fact of the
    last hop was in training (last_fact_seen). The items are the first ``max_items`` of the split, as in
    ``decoding_summary``."""
    targets = ds.test.targets
    if targets.shape[1] < 2 or (ds.meta or {}).get("config", {}).get("fake_bridge", False):
        raise CovlibError(f"{ds.name} writes no bridge before its answer: written_chains needs a CoT dataset")
    idx = split_items(ds, split)[:max_items]
    inputs = ds.test.inputs[idx]
    device = next(model.parameters()).device
    written = np.concatenate([
        greedy_decode(model, torch.as_tensor(inputs[s : s + batch_size], dtype=torch.long, device=device),
                      targets.shape[1]).cpu().numpy()
        for s in range(0, len(inputs), batch_size)] or [np.zeros((0, targets.shape[1]), dtype=np.int64)])
    task, values = tables.task, tables.values(inputs)
    names = target_layout(ds)[:-1]  # the reader's bridge names, in the order of task.bridges
    frame = {x: inputs[:, i] for i, x in enumerate(task.input_names)}
    by_node = {}
    for j, (node, name) in enumerate(zip(task.bridges, names)):
        frame[name], frame[f"{name}_written"] = values[node], written[:, j]
        by_node[node] = written[:, j]
    frame["t"], frame["t_written"] = values["t"], written[:, -1]
    last, table_name = task.hops[-1], task.table_of_hop(tables.same_functions)[-1]
    table = tables.tables[table_name]
    args = [by_node[a] if a in by_node else values[a] for a in last.inputs]
    entity = np.all([a < ds.num_tokens for a in args], axis=0)
    flat = np.ravel_multi_index(tuple(np.where(entity, a, 0) for a in args), table.shape)
    frame["t_of_written"] = np.where(entity, table.reshape(-1)[flat], -1)
    frame["last_fact_seen"] = entity & tables.seen[table_name].reshape(-1)[flat]
    return pd.DataFrame(frame)


def follows_written_bridge(chains: pd.DataFrame) -> float:
    """Exercise 2's quantity: among the items of ``written_chains`` whose written bridge is wrong, the share
    whose written answer is the one that wrong bridge leads to (t_written == t_of_written); NaN without any."""
    bridges = [c for c in chains.columns if c != "t" and f"{c}_written" in chains.columns]
    if not bridges:
        raise CovlibError("no bridge columns (b and b_written, ...): pass a table of written_chains")
    sel = chains[np.any([chains[b] != chains[f"{b}_written"] for b in bridges], axis=0)]
    return float((sel["t_written"] == sel["t_of_written"]).mean()) if len(sel) else float("nan")


def check_follows_written_bridge(answer, truth: float) -> str:
    """Exercise 2's check: the share of wrong-bridge type_2 items whose answer follows the written bridge."""
    return check_share(answer, truth, "the share of wrong-bridge type_2 items whose answer is f2(written bridge, x3)",
                       "call chain_of_thought.written_chains with the twohop_cot model, its dataset and tables "
                       "(models['twohop_cot']) on type_2 and max_items, keep the rows whose written bridge is "
                       "wrong and compare t_written with t_of_written",
                       "the twohop_cot model is not in the cache (`covlib ship cot --only twohop_cot`)", tol=0.005)


# ---- the chapter's tables, as a reader reads them ----

NONTREE_SEARCH_COLUMNS = ["task", "cot", "N", "seed", "status", "low", "high", "n_req", "eligible", "probes"]
PLACEHOLDER_SEARCH_COLUMNS = ["N", "seed", "status", "low", "high", "n_req", "probes"]


def exponent_reader_table(exponents: pd.DataFrame) -> ReaderTable:
    """``exponent_table``: each fitted exponent with its interval (empty below 4 values of N) and what it rests on."""
    return reader_table(exponents, {"task": "task", "target": "target", "c": "exponent c", "c_low": "c, 95% low",
                                    "c_high": "c, 95% high", "interval": "interval from", "N range": "N range",
                                    "N values": "values of N", "seeds": "seeds", "paper": "paper's c"},
                        dict.fromkeys(["c", "c_low", "c_high", "paper"], ".2f"),
                        caption="n_req grows as N^c, with a 95% interval where there are 4 values of N or more")


def ratio_reader_table(ratios: pd.DataFrame) -> ReaderTable:
    """``ratio_tables``' ratios: each (N, seed) with both estimates and their ratio."""
    return reader_table(ratios, {"task": "task", "N": "N (tokens)", "seed": "seed",
                                 "n_req_plain": "n_req without CoT (examples)", "n_req_cot": "n_req with CoT (examples)",
                                 "ratio": "without / with CoT"},
                        {"seed": "{}", "n_req_plain": COUNT, "n_req_cot": COUNT, "ratio": "{:.1f}x"})


def bounds_reader_table(bounds: pd.DataFrame) -> ReaderTable:
    """``ratio_tables``' lower bounds: cells where the search without CoT never succeeds."""
    return reader_table(bounds, {"task": "task", "N": "N (tokens)", "seed": "seed",
                                 "plain_fails_at": "no success without CoT even at (examples)",
                                 "n_req_cot": "n_req with CoT (examples)", "ratio_at_least": "ratio at least"},
                        {"seed": "{}", "plain_fails_at": COUNT, "n_req_cot": COUNT, "ratio_at_least": "{:.1f}x"})


def decoding_reader_table(decoding: pd.DataFrame) -> ReaderTable:
    """``decoding_table``: per model and kind of test item, teacher-forced answer accuracy beside what greedy
    decoding gets right (the split into four outcomes is in the chart and in the frame's outcome columns)."""
    shown = decoding.assign(model=decoding["model"].map(MODEL_LABELS).fillna(decoding["model"]),
                            split=decoding["split"].map(split_label))
    rates = ["tf_answer", "greedy_bridges", "greedy_answer", "greedy_exact"]
    return reader_table(shown, {"model": "model", "split": "test items", "n": "items",
                                "tf_answer": "answer right, teacher-forced", "greedy_bridges": "bridge right, greedy",
                                "greedy_answer": "answer right, greedy", "greedy_exact": "exact match, greedy"},
                        dict.fromkeys(rates, ".1%"))


def control_reader_table(control: pd.DataFrame) -> ReaderTable:
    """``control_table``: the four models side by side."""
    shown = control.assign(model=control["model"].map(MODEL_LABELS).fillna(control["model"]))
    accuracies = ["ID answer accuracy (teacher-forced)", "ID exact match"]
    return reader_table(shown, {"model": "model", "target": "target tokens",
                                "ID answer accuracy (teacher-forced)": "ID answer accuracy (teacher-forced)",
                                "ID exact match": "ID exact match", "steps to 99%": "reaches 99% ID exact match at"},
                        dict.fromkeys(accuracies, ".1%"))


def peaks_reader_table(peaks: pd.DataFrame, caption: str) -> ReaderTable:
    """An ``iicg_peak_table`` (indexed by model and grouping key): where each model's items group most."""
    shown = peaks.reset_index()
    shown = shown.assign(model=shown["model"].map(MODEL_LABELS).fillna(shown["model"]))
    return reader_table(shown, {"model": "model", "group_by": "grouped by", "iicg": "largest IICG", "layer": "layer",
                                "position": "position"}, {"iicg": ".3f", "layer": "{}"}, caption=caption)
