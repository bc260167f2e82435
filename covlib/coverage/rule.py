"""The book's prediction rule: the training data a task needs, from evidence that follows its structure.

Its form was fixed in this file before any fit of it was computed (the text of FORM, the candidates and the fit
criterion below); only the choices the fit makes (the shares, the fact count m and the factor) come from the data:

* a task without chain of thought needs ``factor`` x the data at which ``plain_share`` of its ID test items are
  k-covered through true equivalences only (covlib.coverage.evidence: "sound", immune to coincidences), with
  **k = depth + 1**, depth being the number of hops on the longest path from an input to the output (two-hop and
  parallel two-hop 2, three-hop 3, five-hop 5);
* a task with its bridges written out (chain of thought) needs ``factor`` x the data at which ``cot_share`` of its ID
  test items have every hop fact used by at least ``m`` training examples ("hop facts": each hop is a taught table);
* one ``factor`` for both. The fit picks (plain_share, m, cot_share, factor) minimising the weighted mean squared log
  ratio measured / predicted over the fitting cells, each task (a graph with or without chain of thought) weighing
  as much as any other whatever its number of cells; the factor is the weighted geometric mean of the ratios. A
  candidate is used only if every fitting cell has its crossing. Cells whose measured n_req is pool-limited (above
  90% of the largest training set the ID pool allows) are left out of the fit: their n_req is bounded by the pool.
"""
from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from covlib.base.errors import CovlibError
from covlib.base.files import write_text_atomic
from covlib.tasks.graphs import Task, get_task

FORM = ("n_req = factor x the data at which a share of the ID test items is k-covered through true equivalences, "
        "k = depth + 1 (plain); factor x the data at which a share of the ID test items has every hop fact used by "
        "at least m training examples (chain of thought); one factor")
SHARES = (0.9, 0.95, 0.99)  # candidate shares of the ID test items
HOP_LEVELS = tuple(range(1, 11))  # candidate m: training examples per hop fact
PLAIN_EVIDENCE = "sound"
COT_EVIDENCE = "hop facts"


def depth(task: str | Task) -> int:
    """The number of hops on the longest path from an input to the output t."""
    task = get_task(task) if not isinstance(task, Task) else task
    level = {name: 0 for name in task.input_names}
    for hop in task.hops:  # evaluation order: every argument's level is known
        level[hop.output] = 1 + max(level[a] for a in hop.inputs)
    return level["t"]


def plain_k(task: str | Task) -> int:
    """The rule's k for a task without chain of thought: depth + 1."""
    return depth(task) + 1


@dataclass
class Rule:
    """A fitted rule: its choices, its factor, and where it came from."""

    plain_share: float
    cot_level: int
    cot_share: float
    factor: float
    form: str = FORM
    fitted_on: list[str] = field(default_factory=list)  # the tasks whose cells fitted it
    cells: int = 0  # fitting cells
    provenance: dict = field(default_factory=dict)  # protocol, estimator, commit, table rows, command
    accuracy: dict = field(default_factory=dict)  # out-of-sample accuracy (leave one task out), when known

    def evidence(self, task: str | Task, cot: bool) -> tuple[str, int, float]:
        """(evidence kind, level, share) the rule reads for a task, with or without chain of thought."""
        if cot:
            return COT_EVIDENCE, self.cot_level, self.cot_share
        return PLAIN_EVIDENCE, plain_k(task), self.plain_share

    def describe(self, task: str | Task | None = None, cot: bool | None = None) -> str:
        """The rule in words, for one task when given."""
        plain = (f"{self.factor:.2f} x the data at which {self.plain_share:.0%} of the ID test items are "
                 "k-covered through true equivalences, k = depth + 1")
        chain = (f"{self.factor:.2f} x the data at which {self.cot_share:.0%} of the ID test items have every hop "
                 f"fact in at least {self.cot_level} training example{'s' if self.cot_level != 1 else ''}")
        if task is None:
            return f"{plain} (no chain of thought); {chain} (chain of thought)"
        evidence, level, _ = self.evidence(task, bool(cot))
        return chain if cot else plain.replace("k = depth + 1", f"k = {level} (depth {depth(task)} + 1)")

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1, sort_keys=True, default=float)


def save_rule(rule: Rule, path: str | Path) -> None:
    write_text_atomic(Path(path), rule.to_json() + "\n")


def load_rule(path: str | Path) -> Rule:
    """The rule a file holds, with a clear error when there is none."""
    path = Path(path)
    if not path.is_file():
        raise CovlibError(f"no fitted rule at {path}: chapter 10 writes it (data/predict/COMMANDS.txt says how)")
    try:
        return Rule(**json.loads(path.read_text()))
    except (TypeError, json.JSONDecodeError) as exc:
        raise CovlibError(f"{path} is not a rule file ({exc}); regenerate it as data/predict/COMMANDS.txt says"
                          ) from None


# ---------------------------------------------------------------------------------------------------- the fit
# the table a fit reads: one row per (cell, evidence level, share) with the cell's own-seed crossing:
# series (the task, and ", CoT" with chain of thought), cot, task, N, seed, n_req, level, target, crossing,
# pool_limited; plain rows at every level computed, of which the fit reads level == depth + 1 alone

def _candidate_rows(table: pd.DataFrame, plain_share: float, level: int, cot_share: float) -> pd.DataFrame:
    """The rows a candidate reads: plain cells at k = depth + 1 and plain_share, CoT cells at m and cot_share."""
    cot = table["cot"].to_numpy(bool)
    k_of = table["task"].map({t: plain_k(t) for t in table["task"].unique()}).to_numpy()
    level_of, target = table["level"].to_numpy(), table["target"].to_numpy(float)
    plain = ~cot & (level_of == k_of) & np.isclose(target, plain_share)
    chain = cot & (level_of == level) & np.isclose(target, cot_share)
    return table[plain | chain]


def _weighted_log_fit(log_ratio: np.ndarray, series: np.ndarray) -> tuple[float, float]:
    """(log factor, weighted mean squared deviation) of the log ratios, each series (integer codes) weighing one."""
    weight = 1.0 / np.bincount(series)[series]
    centre = float(np.sum(weight * log_ratio) / np.sum(weight))
    return centre, float(np.sum(weight * (log_ratio - centre) ** 2) / np.sum(weight))


def fit_rule(table: pd.DataFrame, exclude: Sequence[str] = (), shares: Sequence[float] = SHARES,
             levels: Sequence[int] = HOP_LEVELS) -> Rule | None:
    """The rule fitted on ``table``'s cells (less the series in ``exclude`` and the pool-limited cells): every
    candidate (plain share, m, CoT share) whose crossings every fitting cell has, scored by the weighted mean
    squared log ratio after its factor; the best one. None when no candidate has cells of both kinds."""
    fit = table[~table["series"].isin(list(exclude)) & ~table["pool_limited"].astype(bool)]
    if not len(fit):
        return None
    cells = fit.drop_duplicates(["series", "N", "seed"])
    n_cells = len(cells)
    cot = fit["cot"].to_numpy(bool)
    k_of = fit["task"].map({t: plain_k(t) for t in fit["task"].unique()}).to_numpy()
    level_of, target = fit["level"].to_numpy(), fit["target"].to_numpy(float)
    log_ratio = np.log(fit["n_req"].to_numpy(float) / fit["crossing"].to_numpy(float))
    series = pd.factorize(fit["series"])[0]
    plain_at = {share: ~cot & (level_of == k_of) & np.isclose(target, share) for share in shares}
    best = None
    for plain_share in shares:
        for level in levels:
            for cot_share in shares:
                mask = plain_at[plain_share] | (cot & (level_of == level) & np.isclose(target, cot_share))
                if mask.sum() != n_cells or np.isnan(log_ratio[mask]).any():
                    continue
                centre, loss = _weighted_log_fit(log_ratio[mask], pd.factorize(series[mask])[0])
                if best is None or loss < best[0] - 1e-12:
                    best = (loss, plain_share, level, cot_share, centre, mask)
    if best is None:
        return None
    loss, plain_share, level, cot_share, centre, mask = best
    rows = fit[mask]
    return Rule(plain_share=float(plain_share), cot_level=int(level), cot_share=float(cot_share),
                factor=float(math.exp(centre)), fitted_on=sorted(rows["series"].unique()), cells=len(rows),
                provenance={"loss": loss})


def apply_rule(table: pd.DataFrame, rule: Rule) -> pd.DataFrame:
    """One row per cell: its crossing under ``rule`` (NaN where coverage never gets there below the pool), the
    prediction (factor x crossing) and ratio = measured / predicted."""
    rows = _candidate_rows(table, rule.plain_share, rule.cot_level, rule.cot_share)
    cells = table.drop_duplicates(["series", "N", "seed"]).drop(columns=["level", "target", "crossing"])
    keys = ["series", "N", "seed"]
    out = cells.merge(rows[keys + ["level", "target", "crossing"]], on=keys, how="left")
    out["predicted"] = out["crossing"] * rule.factor
    out["ratio"] = out["n_req"] / out["predicted"]
    return out


def leave_one_task_out(table: pd.DataFrame, series: Sequence[str] | None = None) -> pd.DataFrame:
    """Each series' cells predicted by the rule fitted without any of its cells (apply_rule's rows, with the
    held-out rule's choices in columns plain_share, cot_level, cot_share, factor)."""
    frames = []
    for held in (series if series is not None else sorted(table["series"].unique())):
        rule = fit_rule(table, exclude=[held])
        mine = table[table["series"] == held]
        others = table[(table["series"] != held) & ~table["pool_limited"].astype(bool)]
        if rule is None or not (others["cot"].astype(bool) == bool(mine["cot"].iloc[0])).any():
            continue  # no other task of its kind (with or without chain of thought) to fit its evidence on
        part = apply_rule(mine, rule)
        frames.append(part.assign(plain_share=rule.plain_share, cot_level=rule.cot_level, cot_share=rule.cot_share,
                                  factor=rule.factor))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def within(ratios: Sequence[float], band: float) -> float:
    """Share of ratios inside [1/band, band]; a missing prediction (NaN) counts as outside. NaN for none."""
    r = np.asarray(ratios, float)
    if not len(r):
        return float("nan")
    return float(np.mean(np.nan_to_num(np.abs(np.log(r)), nan=np.inf) <= math.log(band) + 1e-12))
