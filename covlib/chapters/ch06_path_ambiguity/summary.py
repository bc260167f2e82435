"""Chapter 6's results in words: the learning curves' reading, the paper's numbers beside the book's,
and the summary."""
from __future__ import annotations

import numpy as np
import pandas as pd

from covlib.analyses.curves import final_value, step_reached
from covlib.base.paper import IICG_NONTREE_DRAFT, NONTREE_FAILS_AT
from covlib.chapters.ch06_path_ambiguity.coverage import cov_at, merged_value, type0_shares
from covlib.chapters.ch06_path_ambiguity.inside import trace_cell
from covlib.chapters.ch06_path_ambiguity.shipped import TASKS
from covlib.figures.text import fmt, up_to


def learning_text(metrics: dict[str, pd.DataFrame], final_type0: dict[str, float], coverage_k3: dict[str, float],
                  k: int, N: int) -> str:
    """Both models' learning curves in words: final ID accuracy, when each reached 99%, and the OOD accuracy."""
    ood = np.nanmean([final_value(metrics["nontree"], f"acc/type_{i}") for i in (1, 2, 3)])
    return (
        f"After {int(metrics['nontree']['step'].iloc[-1]):,} steps two-hop reaches **{final_type0['twohop']:.1%}** ID "
        f"accuracy (99% at {step_reached(metrics.get('twohop'))}), non-tree **{final_type0['nontree']:.1%}** (best "
        f"{metrics['nontree']['acc/type_0'].max():.1%}; 99% {step_reached(metrics.get('nontree'))}). Both fit their "
        f"training items (99% at {step_reached(metrics.get('twohop'), column='acc/train_inferred')} and "
        f"{step_reached(metrics.get('nontree'), column='acc/train_inferred')}). Non-tree's ID items have every fact in "
        f"training and {coverage_k3['nontree']:.0%} of them are {k}-covered; "
        + ("yet the model does not carry what it memorised over to them as two-hop's does. "
           if final_type0["nontree"] < final_type0["twohop"] - 0.01 else "and here the model reaches them as well. ")
        + f"Its OOD items (a fact unseen) end at {ood:.1%} on average (chance {1 / N:.1%}).")


NOT_CACHED = "n/a (not in the cache)"


def paper_comparison(N: int, n_train: int, verdict: str, final_type0: dict[str, float],
                     iicg_max: dict[tuple[str, str], float], x2_same_cell: float | None,
                     lens_best: dict[str, float], rank: pd.DataFrame) -> pd.DataFrame:
    """The chapter's numbers beside the paper's (covlib.base.paper), one row per quantity."""
    paper, book = "paper (8-layer GPT-2, GPU)", "this book (4 layers, CPU)"
    return pd.DataFrame([
        {"quantity": "non-tree reaches 99% ID accuracy", paper:
            f"no, even with about {NONTREE_FAILS_AT['n_train']:,} of {NONTREE_FAILS_AT['eligible']:,} eligible "
            f"inputs at N = {NONTREE_FAILS_AT['N']}", book: verdict},
        {"quantity": f"ID accuracy at N = {N}, {n_train:,} examples", paper: "not reported",
         book: f"two-hop {fmt(final_type0['twohop'], '.1%', NOT_CACHED)}, "
               f"non-tree {fmt(final_type0['nontree'], '.1%', NOT_CACHED)}"},
        {"quantity": "IICG by b (non-tree)", paper: f"about {IICG_NONTREE_DRAFT['b']} (draft)",
         book: fmt(iicg_max[("nontree", "b")], missing=NOT_CACHED)},
        {"quantity": "IICG by (b, x2) (non-tree)", paper: f"about {IICG_NONTREE_DRAFT['b,x2']} (draft)",
         book: fmt(iicg_max[("nontree", "b,x2")], missing=NOT_CACHED) + " (peak; by x2 alone at that cell: "
         + (fmt(x2_same_cell, missing=NOT_CACHED) if x2_same_cell is not None else "n/a") + ")"},
        {"quantity": "logit lens reads b (non-tree)", paper: "no",
         book: fmt(lens_best.get("nontree", float("nan")), ".0%", NOT_CACHED) + f" top-1 at best (chance {1 / N:.0%})"},
        {"quantity": "the direct x2 path matters", paper: "yes",
         book: "patching x2 with b kept flips " + up_to(trace_cell(rank, "nontree", "x2_keep_b", "x2"), "predictions")
         + " in the upper layers" if len(rank) else NOT_CACHED},
    ])


def summary_text(merged: pd.DataFrame, cov: pd.DataFrame, N: int, n_train: int, k: int,
                 final_type0: dict[str, float] | None, verdict: str | None,
                 iicg_max: dict[tuple[str, str], float] | None) -> str:
    """The chapter's summary as markdown bullets; the learning, search and IICG bullets only where their results
    exist (pass None for those that do not)."""
    covered = {t: cov_at(cov, t, "type_0", k) for t in TASKS}
    lines = [
        "Reading $x_2$ twice shrinks functional equivalence from \"same bridge\" to \"same bridge and same $x_2$\": "
        f"at N = {N} the largest class of first-hop fragments holds "
        f"{merged_value(merged, 'nontree', 'b', 'largest_class'):.0f} fragments instead of "
        f"{merged_value(merged, 'twohop', 'b', 'largest_class'):.0f}, and the same {n_train:,} examples "
        f"{k}-cover {covered['nontree']:.0%} of non-tree's ID test items against {covered['twohop']:.0%} of "
        f"two-hop's ({cov_at(cov, 'nontree', 'id_pool', k):.0%} of its whole ID pool, where "
        f"{1 - type0_shares(cov)['nontree']:.0%} of the inputs have a second fact no training item shows)."]
    if final_type0 is not None:
        lines.append(f"Trained the same way on that data, two-hop reaches {final_type0['twohop']:.1%} ID accuracy "
                     f"and non-tree {final_type0['nontree']:.1%}.")
    if verdict is not None:
        lines.append("The required-data searches of non-tree: " + verdict + ".")
    if iicg_max is not None and not np.isnan(iicg_max[("nontree", "b")]):
        lines.append(f"Inside the models, IICG by $b$ peaks at {iicg_max[('twohop', 'b')]:.2f} for two-hop and "
                     f"{iicg_max[('nontree', 'b')]:.2f} for non-tree, whose largest clusters follow $(b, x_2)$ "
                     f"({iicg_max[('nontree', 'b,x2')]:.2f}).")
    return "\n".join(f"* {line}" for line in lines)
