"""Chapter 7 (chain of thought): required data with the bridge written out, decoding, IICG over the sequence."""
from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd
import torch

from covlib.analyses.iicg import iicg_map, iicg_peaks, item_groups
from covlib.analyses.residuals import residual_streams, split_items
from covlib.base.errors import CovlibError
from covlib.search.summary import requirement_ratio as summary_ratio
from covlib.training.evaluation import greedy_decode
from covlib.training.shipped import ShippedRun

DATA_DIR = "data/cot"


FAKE_BRIDGE_TABLE = "data/cot/probes_fakebridge.csv"  # relative to the repository


# chapter 7's required-data searches (covlib.search.experiments.experiment_cells / experiment_command): CoT rows go to
# chapter 4's probe table; placeholder-bridge rows to a table of their own (the book's has no column for them)
EXPERIMENTS: dict[str, dict] = {
    # one seed over five N (compute budget: the exponent's interval bootstraps over N); add seed 1 to widen it
    "twohop_cot": {"task": "twohop", "N": [20, 25, 30, 40, 50], "seeds": [0], "model": "L4-d128", "cot": True},
    "threehop_cot": {"task": "threehop", "N": [10, 12, 14, 16], "seeds": [0], "model": "L4-d128", "cot": True},
    "nontree_cot": {"task": "nontree", "N": [25, 30, 40], "seeds": [0], "model": "L4-d128", "cot": True},
    # one seed, two N: each failing probe costs as much as a plain one
    "twohop_fakebridge": {"task": "twohop", "N": [25, 30], "seeds": [0], "model": "L4-d128", "fake_bridge": True,
                          "table": FAKE_BRIDGE_TABLE},
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
    largest_n / n_req_cot. Search summaries of covlib.chapters.ch06_path_ambiguity.search_summary (they carry largest_n).
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


def geometric_mean(values: Sequence[float]) -> float:
    """The geometric mean (NaN for no values): ratios are averaged in log space."""
    values = np.asarray(values, float)
    return float(np.exp(np.log(values).mean())) if len(values) else float("nan")


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


def iicg_peak_table(table: pd.DataFrame, position: str | None = None, min_layer: int = 1) -> pd.DataFrame:
    """Per model and grouping key of an ``iicg_sequence_table`` (with a ``model`` column): the largest IICG
    at layers >= ``min_layer`` (the embeddings left out, covlib.analyses.iicg.iicg_peaks), over every position
    or at one ``position``. Indexed by (model, group_by); columns iicg, layer, position."""

    sel = table if position is None else table[table["position"] == position]
    if sel.empty:
        raise CovlibError(f"no IICG rows at position {position!r}; positions here: "
                          f"{', '.join(dict.fromkeys(table['position'])) if len(table) else 'none'}")
    return iicg_peaks(sel, min_layer).set_index(["model", "group_by"])[["iicg", "layer", "position"]]


def sequence_positions(ds) -> list[str]:
    """Names of the positions of the teacher-forced sequence: the prompt x1..xm, then the bridge positions
    (b or b1, b2, ...; for a fake-bridge dataset they hold the placeholder </b>)."""
    return [f"x{i + 1}" for i in range(ds.n_inputs)] + target_layout(ds)[:-1]


def iicg_sequence_table(model, ds, tables, keys: Sequence[str], split: str = "type_0", max_items: int = 2000
                        ) -> pd.DataFrame:
    """IICG maps over every position of the teacher-forced sequence (prompt and bridge positions): the
    covlib.analyses grouping (one item per determining fragment) on the residuals of prompt + true target
    tokens but the last. Long table (split, group_by, layer, position, iicg, within, between, items, groups)."""

    idx = split_items(ds, split)[:max_items]
    inputs = ds.test.inputs[idx]
    sequences = np.concatenate([inputs, ds.test.targets[idx][:, :-1]], axis=1)
    resid = residual_streams(model, sequences)
    positions = sequence_positions(ds)
    rows = []
    for key in keys:
        kept, labels = item_groups(tables, inputs, key)
        res = iicg_map(resid[kept], labels)
        for layer in range(resid.shape[1]):
            for p, pos in enumerate(positions):
                rows.append({"split": split, "group_by": key, "layer": layer, "position": pos,
                             "iicg": float(res["iicg"][layer, p]), "within": float(res["within"][layer, p]),
                             "between": float(res["between"][layer, p]), "items": res["items"],
                             "groups": res["groups"]})
    return pd.DataFrame(rows)


OUTCOME_COLORS = ["#2e7d32", "#f9a825", "#90caf9", "#c62828"]  # in OUTCOMES order


def decoding_chart(summary: pd.DataFrame, title: str, row: str = "model") -> alt.LayerChart:
    """One bar per row of cot.decoding_summary (labelled by the column ``row``, e.g. a model, or a model and
    a test split): the four greedy outcomes (bridge right or wrong, answer right or wrong) stacked, and a
    black tick at teacher-forced answer accuracy."""
    labels = list(OUTCOMES.values())
    long = summary.melt(id_vars=[row], value_vars=labels, var_name="outcome", value_name="share")
    long["order"] = long["outcome"].map({lab: i for i, lab in enumerate(labels)})
    rows = list(dict.fromkeys(summary[row]))
    y = alt.Y(f"{row}:N", title=None, sort=rows, axis=alt.Axis(labelLimit=400))
    bars = alt.Chart(long).mark_bar().encode(
        alt.X("share:Q", title="share of test items (greedy decoding)", axis=alt.Axis(format="%"),
              scale=alt.Scale(domain=[0, 1])),
        y, alt.Color("outcome:N", title=None, sort=labels, scale=alt.Scale(domain=labels, range=OUTCOME_COLORS),
                     legend=alt.Legend(orient="bottom", columns=2, labelLimit=300)),
        alt.Order("order:Q"), tooltip=[row, "outcome", alt.Tooltip("share:Q", format=".3f")])
    ticks = alt.Chart(summary.assign(what="teacher-forced answer accuracy")).mark_tick(
        color="black", thickness=3, size=22).encode(alt.X("tf_answer:Q"), y,
                                                   tooltip=[row, "what", alt.Tooltip("tf_answer:Q", format=".3f")])
    return alt.layer(bars, ticks).properties(width=420, height=30 * len(rows) + 20,
                                             title=alt.TitleParams(title, anchor="start"))


def ratio_chart(ratios: pd.DataFrame, title: str, band: tuple[float, float] | None = None,
                bounds: pd.DataFrame | None = None) -> alt.LayerChart:
    """n_req without CoT over n_req with CoT per (N, seed) (cot_ratio rows; coloured by ``task``
    when the rows carry one), with an optional shaded band (the paper's 5-10x) and optional lower bounds
    (cot.ratio_lower_bounds rows, drawn as open up-triangles: the true ratio lies above)."""
    ratios = ratios if "task" in ratios else ratios.assign(task="")
    color = alt.Color("task:N", title=None, scale=alt.Scale(domain=["twohop", "threehop"], range=["#1565c0", "#c62828"]))
    x = alt.X("N:Q", title="N (tokens)", scale=alt.Scale(zero=False, nice=False, padding=20))
    layers = []
    if band:
        layers.append(alt.Chart(pd.DataFrame({"lo": [band[0]], "hi": [band[1]], "what": ["paper: 5-10x"]}))
                      .mark_rect(opacity=0.15, color="#6a1b9a").encode(alt.Y("lo:Q"), alt.Y2("hi:Q"), tooltip=["what"]))
    layers.append(alt.Chart(ratios).mark_point(filled=True, size=70).encode(
        x, alt.Y("ratio:Q", title="n_req without CoT / with CoT", scale=alt.Scale(zero=True)), color,
        tooltip=["task", "N", "seed", alt.Tooltip("n_req_plain:Q", format=",.0f"),
                 alt.Tooltip("n_req_cot:Q", format=",.0f"), alt.Tooltip("ratio:Q", format=".2f")]))
    if bounds is not None and len(bounds):
        bounds = bounds if "task" in bounds else bounds.assign(task="")
        layers.append(alt.Chart(bounds.assign(what="at least (no success without CoT)")).mark_point(
            shape="triangle-up", size=90, filled=False, strokeWidth=2).encode(
            x, alt.Y("ratio_at_least:Q"), color,
            tooltip=["task", "N", "seed", "what", alt.Tooltip("plain_fails_at:Q", format=",.0f"),
                     alt.Tooltip("n_req_cot:Q", format=",.0f"), alt.Tooltip("ratio_at_least:Q", format=".2f")]))
    return alt.layer(*layers).properties(width=320, height=220, title=alt.TitleParams(title, anchor="start"))
