"""Greedy decoding against teacher forcing for chapter 7's models that write a target before the answer: per-item
outcomes, their table, chart and prose, and the chains the models write (the exercises' quantities and checks)."""
from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

import altair as alt
import numpy as np
import pandas as pd
import torch

from covlib.analyses.residuals import split_items
from covlib.base.errors import CovlibError
from covlib.chapters.ch07_chain_of_thought.shipped import model_names, target_layout
from covlib.figures.exercises import check_share
from covlib.figures.text import signed_gap
from covlib.training.evaluation import greedy_decode


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
    """A reader's name for a test type (chapter 1's numbering: type_0 is ID; type_{bits+1} has primitive i seen
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


DECODING_SPLITS = ("type_0", "type_2", "type_3")  # ID; f1 unseen, f2 seen; f1 seen, f2 unseen


def decoding_table(models: Mapping[str, tuple], max_items: int) -> pd.DataFrame:
    """decoding_summary of every model that writes a target before the answer (all but plain two-hop) on the
    ID items and the two OOD types DECODING_SPLITS, with ``model`` and a reader's row label ``items``."""
    parts = [decoding_summary(model, ds, splits=DECODING_SPLITS, max_items=max_items).assign(model=name)
             for name, (model, ds, _, _) in models.items() if name != "twohop"]
    decoding = pd.concat(parts or [pd.DataFrame()], ignore_index=True)
    if len(decoding):
        decoding["items"] = model_names(decoding["model"]) + " · " + decoding["split"].map(split_label)
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
            f"{value('tf_answer'):.1%} ({signed_gap(gap * 100)}). Greedy decoding writes a wrong bridge "
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


def bridge_wrong_share(decoding: pd.DataFrame, name: str = "twohop_cot", split: str = "type_2") -> float:
    """Exercise 1's quantity: the share of a model's items of one split whose bridge greedy decoding writes
    wrong, whatever follows it (the two "bridge wrong" outcomes of ``decoding_table``; NaN when absent)."""
    return (decoded(decoding, name, "bridge wrong, answer right", split)
            + decoded(decoding, name, "bridge wrong, answer wrong", split))


def check_bridge_wrong(answer, truth: float) -> str:
    """Exercise 1's check: the share of type_2 items with a wrong bridge under greedy decoding (twohop_cot)."""
    return check_share(answer, truth, "the share of type_2 items whose greedy bridge is wrong",
                       "add the two 'bridge wrong' outcome columns of the twohop_cot, type_2 row of `decoding`",
                       "the twohop_cot model is not in the cache (`covlib ship cot --only twohop_cot`)", tol=0.005,
                       name="my_bridge_wrong", hint="a wrong bridge can be followed by a right or a wrong answer: "
                                                    "count both, on the twohop_cot model's type_2 row.")


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
                       "call greedy.written_chains with the twohop_cot model, its dataset and tables "
                       "(models['twohop_cot']) on type_2 and max_items, keep the rows whose written bridge is "
                       "wrong and compare t_written with t_of_written",
                       "the twohop_cot model is not in the cache (`covlib ship cot --only twohop_cot`)", tol=0.005,
                       name="my_follows_bridge", hint="keep only the items whose written bridge differs from the "
                                                      "true one, then compare t_written with t_of_written.")
