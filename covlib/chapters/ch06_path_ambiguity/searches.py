"""Chapter 6's presets and the required-data searches of non-tree: their cells and probe table, the
N = 40 rerun under a raised step cap, the verdict in words, and the required-data chart's frames."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from covlib.chapters.ch06_path_ambiguity.data_need import need_lines
from covlib.figures.give_up_rule import READER_NAMES
from covlib.figures.required_data import requirement_frame
from covlib.search.cells import Cell, ProbeRules
from covlib.search.experiments import cells_for, experiment_cells, experiment_command, probe_table
from covlib.search.probes import cell_rows
from covlib.search.required_data import search_states
from covlib.search.summary import summarise

# the chapter's presets (covlib.book.setup.setup_chapter): where the coverage need and the required-data searches
# come from, and whether the models are trained here
_DEFAULT_KNOBS = {"need_N": None, "search_N": None, "model": "L4-d128", "rules": ProbeRules(), "train_here": False,
                  "note": None}
PRESETS: dict[str, dict] = {
    # tiny models trained here, a miniature search with a one-layer model, coverage at small N (seconds)
    "smoke": {"need_N": [8, 12], "search_N": [6, 8], "model": "smoke",
              "rules": ProbeRules(step_cap=200, give_up_epochs=10, eval_every=25, batch_size=128,
                                  test_size_per_type=100),
              "train_here": True, "note": None},
    # the shipped models and tables
    "default": _DEFAULT_KNOBS,
    # the paper's scale is out of a CPU's reach: the default's models and tables, said so
    "paper": {**_DEFAULT_KNOBS, "note": "The paper's scale (8-layer GPT-2, N = 50 and more) needs a GPU; this preset "
                                         "reads the default cache."},
}


# chapter 6's required-data searches: rows of chapter 4's probe table, in the format of
# covlib.search.experiments.BOOK_EXPERIMENTS (kept here so that chapter 4 does not list, or guess starts for, them)
EXPERIMENTS: dict[str, dict] = {
    "nontree": {"task": "nontree", "N": [25, 30, 40, 50], "seeds": [0], "model": "L4-d128"},
}


# at N = 40 the largest training sets were not fitted within 6,000 steps, so the cap, not the authors' give-up rule,
# ended them: the cell is rerun under a higher cap (its capped probes resume from their checkpoints). Under 12,000
# steps the largest was still unfitted; under 24,000 it fits at step ~13,800 and the rule ends it
RAISED_CAP = {"N": 40, "step_cap": 24000}


def raised_cap_command(N: int, step_cap: int) -> str:
    """The command that reruns (or resumes) the non-tree cell at ``N`` under ``step_cap``."""
    return experiment_command({**EXPERIMENTS["nontree"], "N": [N], "step_cap": step_cap})


def probe_table_path(table: str, root: Path, train_here: bool) -> Path:
    """The probe table: the reader's ``table``, else a fresh one under ``root`` (smoke), else chapter 4's."""
    return probe_table(table, root / "ambiguity-smoke" / "probes.csv" if train_here else None)


def search_cells(search_N: Sequence[int] | None, model: str) -> tuple[list[Cell], list[Cell]]:
    """(two-hop cells, non-tree cells) of the required-data searches: at ``search_N`` with ``model`` (smoke's
    miniature search), else the cached experiments (EXPERIMENTS, and two-hop's cells at non-tree's N)."""
    if search_N is not None:
        return cells_for("twohop", search_N, [0], model), cells_for("nontree", search_N, [0], model)
    twohop = [c for c in experiment_cells("twohop") if c.N in EXPERIMENTS["nontree"]["N"]]
    return twohop, experiment_cells(EXPERIMENTS["nontree"])


SUMMARY_COLUMNS = ["task", "N", "seed", "status", "low", "high", "n_req", "eligible", "largest_n",
                   "best_type0_at_largest", "probes", "minutes"]


def required_data_frames(twohop_summary: pd.DataFrame, nontree_summary: pd.DataFrame, need: pd.DataFrame, k: int
                         ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(points, lines, reference) for covlib.figures.required_data.required_data_chart: the measured n_req of
    both tasks, the coverage-need lines, and the sizes at which non-tree never succeeded."""
    points = pd.concat([requirement_frame(s.assign(model=f"{READER_NAMES[task]}: measured n_req")) for task, s in
                        (("twohop", twohop_summary), ("nontree", nontree_summary)) if s["n_req"].notna().any()]
                       or [pd.DataFrame(columns=["N", "seed", "n_req", "low", "high", "series"])], ignore_index=True)
    lost = nontree_summary[nontree_summary["status"] == "unreachable"]
    capped = lost["low_capped"].astype(bool) if "low_capped" in lost else pd.Series(False, index=lost.index)
    reference = pd.DataFrame({"N": lost["N"], "n": lost["largest_n"],
                              "series": np.where(capped, "non-tree: no success at this size, stopped by the step cap",
                                                 "non-tree: no success at this size (the authors' rule)")})
    lines = need_lines(need, k) if len(need) else pd.DataFrame(columns=["N", "n", "dash", "series"])
    return points, lines, reference


def finished_cells(summary: pd.DataFrame) -> pd.DataFrame:
    """The cells of a ``search_summary`` whose search has ended: bracketed or unreachable."""
    return summary[summary["status"].isin(["bracketed", "unreachable"])]


def search_verdict(finished: pd.DataFrame) -> str:
    """Per finished non-tree cell, whether and where it reached 99% ID accuracy, in words."""
    return (", ".join(f"N = {int(r['N'])}: " + ("reached at about " + f"{r['n_req']:,.0f}" if r["status"] == "bracketed"
                      else f"never, up to {int(r['largest_n']):,} of {int(r['eligible']):,}"
                      + (" (within the step cap)" if r["low_capped"] else "")) for _, r in finished.iterrows())
            or "no finished search yet")


def raised_cap_result(cells: Sequence[Cell], probes: pd.DataFrame, N: int = RAISED_CAP["N"],
                      step_cap: int = RAISED_CAP["step_cap"]) -> dict[str, float]:
    """The non-tree cell at ``N`` rerun under a raised cap, as metrics: the highest cap its probes ran under,
    whether its search (read under that cap) ended with the authors' rule deciding (1), the cap deciding (0) or
    not yet (NaN), whether any probe reached the threshold (NaN before any probe), and, for its largest probe
    under that cap, the training accuracy it ended at, whether it ever fitted its training set (the give-up rule
    counts its epochs from that fit) and its best ID accuracy."""
    keys = ("cap", "rule_decided", "reachable", "largest_n", "largest_final_train", "largest_fitted",
            "largest_best_type0")
    cell = next((c for c in cells if c.N == N), None)
    rows = cell_rows(probes, cell) if cell is not None and len(probes) else probes.iloc[:0]
    if not len(rows):
        return {f"nontree_{N}_{k}": float("nan") for k in keys}
    cap = int(rows["step_cap"].astype(int).max())
    state = summarise(search_states([cell], probes, starts={cell.key(): 0}, step_cap=max(cap, step_cap))).iloc[0]
    finished = state["status"] in ("bracketed", "unreachable")
    under_cap = rows[rows["step_cap"].astype(int) == cap]
    largest = under_cap.loc[under_cap["n_train"].idxmax()]
    values = (cap, float(not state["low_capped"]) if finished else float("nan"),
              float(bool(rows["success"].astype(bool).any())), int(largest["n_train"]),
              float(largest["final_train"]), float(pd.notna(largest["first_fit_step"])), float(largest["best_type0"]))
    return {f"nontree_{N}_{k}": v for k, v in zip(keys, values)}


def raised_cap_note(result: Mapping[str, float], N: int = RAISED_CAP["N"], step_cap: int = RAISED_CAP["step_cap"]
                    ) -> str:
    """Where the raised-cap rerun stands, in words ("" when the cell has no probes)."""
    cap, decided, reached = (result[f"nontree_{N}_{k}"] for k in ("cap", "rule_decided", "reachable"))
    if np.isnan(cap):
        return ""
    if cap < step_cap:
        return (f" At N = {N} the {int(cap):,}-step cap, not the authors' give-up rule, ended the probes the search "
                f"rests on; the rerun under a {step_cap:,}-step cap is not in the cache yet "
                f"(`{raised_cap_command(N, step_cap)}`).")
    if np.isnan(decided):
        return f" At N = {N} the rerun under a {int(cap):,}-step cap is still searching (`{raised_cap_command(N, int(cap))}` resumes it)."
    who = "the authors' give-up rule" if decided else f"the {int(cap):,}-step cap again"
    outcome = "some probe reaches 99%" if reached else "no probe reaches 99%"
    note = f" At N = {N}, rerun under a {int(cap):,}-step cap: {outcome}, and {who} decided the search's end."
    if decided or reached:
        return note
    n, train, fitted, best = (result[f"nontree_{N}_largest_{k}"] for k in ("n", "final_train", "fitted", "best_type0"))
    why = ("it never fitted its training set, so the give-up rule, which counts its epochs from the first fit, "
           "never started" if not fitted else "it had fitted its training set, but the rule's epochs had not run out")
    doubled = raised_cap_command(N, 2 * int(cap))
    return (note + f" Its largest probe ({int(n):,} examples) ended at {train:.1%} training accuracy and at best "
            f"{best:.1%} ID accuracy: {why}. A cap of {2 * int(cap):,} steps would give the rule room to decide "
            f"(`{doubled}`, resumed from "
            "the probe's last checkpoint where its run folder is kept).")
