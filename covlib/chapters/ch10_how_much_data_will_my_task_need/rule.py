"""The predictor's rule: fitted on two-hop's cells alone (which k and share, and one constant factor), then
tested unchanged on every other task's cells and on the authors' published two-hop models."""
from __future__ import annotations

import numpy as np
import pandas as pd

from covlib.base.paper import REQUIRED_DATA_TWOHOP_AUTHORS
from covlib.base.paths import repository_path
from covlib.search.experiments import BOOK_EXPERIMENTS, BOOK_TABLE, experiment_cells
from covlib.search.probes import read_probes
from covlib.search.status import search_summary

BAND = 1.15  # a prediction within this factor of the measurement counts as right
CROSSINGS = "data/predict/crossings_{task}.csv"  # per-seed exact crossings (covlib scaling coverage --per-seed)
AUTHORS_PREDICTION = "data/predict/authors_twohop.csv"  # covlib predict at the authors' N, for the fitted rule
FITTED_ON = "twohop"
DRIFT = 0.2  # a slope of log ratio on log N at least this large is named as a drift

# the book's searched cells, grouped as the chapter tests them: label -> (task, N, seeds, model, cot, and the
# step caps its experiment raised, so that a failure a lower cap stopped is not read as final)
TEST_SETS: dict[str, dict] = {
    "two-hop": {"task": "twohop", "N": [20, 25, 30, 35, 40, 50], "seeds": [0, 1], "model": "L4-d128", "cot": False,
                "step_cap_by_N": BOOK_EXPERIMENTS["twohop"]["step_cap_by_N"]},
    "three-hop": {"task": "threehop", "N": [10, 12, 14, 16, 18, 20], "seeds": [0, 1], "model": "L4-d128", "cot": False},
    "parallel two-hop": {"task": "parallel_twohop", "N": [10, 12, 14, 16, 20, 24], "seeds": [0, 1], "model": "L4-d128",
                         "cot": False},
    "two-hop, CoT": {"task": "twohop", "N": [20, 25, 30, 40, 50], "seeds": [0, 1], "model": "L4-d128", "cot": True},
    "three-hop, CoT": {"task": "threehop", "N": [10, 12, 14, 16, 20], "seeds": [0, 1], "model": "L4-d128", "cot": True},
    "two-hop, Mamba": {"task": "twohop", "N": [25, 30, 35, 40], "seeds": [0], "model": "mamba-L4-d128", "cot": False},
}
FIT_SET = "two-hop"


def rule_name(floor: int) -> str:
    """The give-up rule of a probe, as the tables name it (0: the authors' rule)."""
    return "the authors' (100 epochs after fitting)" if not floor else f"a step floor of {floor:,}"


def probes_under_rule(probes: pd.DataFrame, floor: int = 0) -> pd.DataFrame:
    """The probes trained under one give-up rule: ``give_up_floor`` equal to ``floor`` (a table without that
    column holds the authors' rule only)."""
    if "give_up_floor" not in probes:
        return probes if not floor else probes.iloc[:0]
    return probes[probes["give_up_floor"].fillna(0).astype(int) == floor]


def measured_cells(probes: pd.DataFrame | None = None, floor: int = 0) -> pd.DataFrame:
    """Every bracketed cell of the test sets under one give-up rule: set, task, N, seed, n_req, rule."""
    probes = read_probes(repository_path(BOOK_TABLE)) if probes is None else probes
    probes = probes_under_rule(probes, floor)
    frames = []
    for label, e in TEST_SETS.items():
        s = search_summary(experiment_cells(e), probes)
        s = s[s["status"] == "bracketed"]
        frames.append(s.assign(set=label)[["set", "task", "N", "seed", "low", "high", "n_req"]])
    out = pd.concat(frames, ignore_index=True).astype({"n_req": float, "low": float, "high": float})
    return out.assign(rule=rule_name(floor))


def read_crossings(tasks=("twohop", "threehop", "parallel_twohop")) -> pd.DataFrame:
    """The shipped per-seed exact crossings of every task that has them (task, N, seed, k, target, n_train)."""
    paths = [repository_path(CROSSINGS.format(task=t)) for t in tasks]
    frames = [pd.read_csv(p) for p in paths if p.is_file()]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        columns=["task", "N", "seed", "k", "target", "n_train"])


def cell_ratios(cells: pd.DataFrame, crossings: pd.DataFrame) -> pd.DataFrame:
    """Every cell beside its own seed's crossing at every (k, target): ratio = measured n_req / crossing."""
    cols = ["task", "N", "seed", "k", "target", "n_train"]
    both = cells.merge(crossings[cols].rename(columns={"n_train": "crossing"}), on=["task", "N", "seed"])
    return both.dropna(subset=["crossing"]).assign(ratio=lambda d: d["n_req"] / d["crossing"])


def fit_rule(ratios: pd.DataFrame, fit_set: str = FIT_SET) -> dict:
    """The (k, share) whose ratios on ``fit_set``'s cells spread least (max / min), and the constant factor that
    centres them (the geometric mean of the largest and smallest): chosen on those cells alone."""
    fit = ratios[ratios["set"] == fit_set]
    if not len(fit):
        return {}
    g = fit.groupby(["k", "target"])["ratio"].agg(["min", "max", "count"])
    g = g[g["count"] == g["count"].max()]  # every cell has the crossing
    spread = g["max"] / g["min"]
    k, target = spread.idxmin()
    lo, hi = g.loc[(k, target), "min"], g.loc[(k, target), "max"]
    return {"k": int(k), "target": float(target), "factor": float(np.sqrt(lo * hi)), "spread": float(hi / lo),
            "cells": int(g.loc[(k, target), "count"]), "fitted_on": fit_set,
            "candidates": spread.rename("spread").reset_index()}


def describe_rule(rule: dict) -> str:
    """The rule in a few words: "1.43 x the data that 3-covers 99% of the ID test items"."""
    if not rule:
        return "no rule (no two-hop cell is finished)"
    return f"{rule['factor']:.2f} x the data that {rule['k']}-covers {rule['target']:.0%} of the ID test items"


def apply_rule(ratios: pd.DataFrame, rule: dict) -> pd.DataFrame:
    """Every cell's measured over predicted under the rule (its crossing at the rule's k and share, times the factor)."""
    at = ratios[(ratios["k"] == rule["k"]) & (ratios["target"] == rule["target"])]
    return at.assign(predicted=at["crossing"] * rule["factor"],
                     ratio=at["n_req"] / (at["crossing"] * rule["factor"])).reset_index(drop=True)


def authors_ratios(rule: dict) -> pd.DataFrame:
    """The authors' published two-hop models over the rule's prediction at their N (where it has been computed:
    data/predict/authors_twohop.csv holds covlib predict's crossings at the rule's k and share)."""
    path = repository_path(AUTHORS_PREDICTION)
    if not rule or not path.is_file():
        return pd.DataFrame(columns=["set", "N", "n_req", "predicted", "ratio", "rule"])
    pred = pd.read_csv(path)
    pred = pred[(pred["k"] == rule["k"]) & (pred["share"] == rule["target"])]
    rows = pd.DataFrame({"N": list(REQUIRED_DATA_TWOHOP_AUTHORS), "n_req": list(REQUIRED_DATA_TWOHOP_AUTHORS.values())})
    both = rows.merge(pred[["N", "n_pred", "factor", "seeds", "seconds", "cpu_seconds"]], on="N")
    predicted = both["n_pred"] / both["factor"] * rule["factor"]
    return both.assign(set="authors' two-hop (GPT-2)", predicted=predicted, ratio=both["n_req"] / predicted,
                       rule="the authors' (GPU runs)")


def ratio_ranges(tested: pd.DataFrame, band: float = BAND) -> pd.DataFrame:
    """Per set: cells, N range, smallest and largest ratio, how many within the band, the drift (slope of log ratio
    on log N, from 3 or more N: the measured exponent minus the predicted one) and the give-up rule."""
    rows = []
    for label, g in tested.groupby("set", sort=False):
        inside = ((g["ratio"] <= band) & (g["ratio"] >= 1 / band)).sum()
        drift = (float(np.polyfit(np.log(g["N"].astype(float)), np.log(g["ratio"].astype(float)), 1)[0])
                 if g["N"].nunique() >= 3 else float("nan"))
        rows.append({"set": label, "cells": len(g), "N": f"{int(g['N'].min())}-{int(g['N'].max())}",
                     "ratio_min": float(g["ratio"].min()), "ratio_max": float(g["ratio"].max()),
                     "within": int(inside), "drift": drift, "give-up rule": ", ".join(sorted(set(g["rule"])))})
    return pd.DataFrame(rows)


def where_it_misses(ranges: pd.DataFrame, band: float = BAND) -> str:
    """A sentence per set outside the band: where, by how much, in which direction."""
    lines = []
    for _, r in ranges.iterrows():
        if r["within"] == r["cells"]:
            lines.append(f"{r['set']}: every one of its {r['cells']} cells within {band:g}x.")
            continue
        if r["ratio_min"] > band:
            what = f"needs {r['ratio_min']:.2f}-{r['ratio_max']:.2f}x the prediction: more data than the rule says"
        elif r["ratio_max"] < 1 / band:
            what = f"needs {r['ratio_min']:.2f}-{r['ratio_max']:.2f}x the prediction: less data than the rule says"
        else:
            what = f"ranges {r['ratio_min']:.2f}-{r['ratio_max']:.2f}x the prediction"
        drift = ""
        if r["drift"] == r["drift"] and abs(r["drift"]) >= DRIFT:
            drift = (f"; the ratio drifts as N^{r['drift']:+.2f}: the measured data grows "
                     f"{'faster' if r['drift'] > 0 else 'slower'} with N than the prediction")
        lines.append(f"{r['set']} ({r['cells']} cells, N = {r['N']}): {r['within']} within {band:g}x; {what}{drift}.")
    return "\n".join(f"- {line}" for line in lines)


def with_authors(tested: pd.DataFrame, authors: pd.DataFrame) -> pd.DataFrame:
    """The tested cells and the authors' points in one table (the authors' have no seed: shown as 0)."""
    return pd.concat([tested, authors.assign(seed=0)], ignore_index=True) if len(authors) else tested


def authors_note(authors: pd.DataFrame, rule: dict) -> str:
    """How the authors' points were predicted, and how long N = 200 took; or the command that computes them."""
    if not rule:
        return "No rule, so no prediction for the authors' models."
    if not len(authors):
        command = (f"covlib predict --task twohop --N {' '.join(str(n) for n in REQUIRED_DATA_TWOHOP_AUTHORS)} "
                   f"--k {rule['k']} --share {rule['target']:g} --seeds 3 --out {AUTHORS_PREDICTION}")
        return f"The authors' points are not predicted yet at this rule's k and share; run `{command}`."
    top = authors.loc[authors["N"].idxmax()]
    seeds = "; ".join(f"{int(n)} dataset seed{'s' if n > 1 else ''} at N = {', '.join(str(int(v)) for v in g['N'])}"
                      for n, g in sorted(authors.groupby("seeds"), key=lambda part: part[1]["N"].min()))
    return (f"The authors' points are predicted by `covlib predict` at the rule's k and share ({seeds}). At "
            f"N = {int(top['N'])} the prediction took {top['cpu_seconds']:.0f} CPU seconds ({top['seconds']:.0f} s "
            "of wall time), against GPU-hours of training for the measurement.")


def depth_each_set_needs(ratios: pd.DataFrame, rule: dict) -> pd.DataFrame:
    """Keeping the rule's factor and share, the k that would centre each set best (typical ratio closest to 1), its
    typical ratio and range, and the factor the set would need at the rule's own k: how much deeper (or shallower) a
    coverage each task's data tracks than two-hop's. It uses every set's own cells: a reading, not a prediction."""
    rows = []
    for label, g in ratios[ratios["target"] == rule["target"]].groupby("set", sort=False):
        scaled = g.assign(r=g["n_req"] / (g["crossing"] * rule["factor"]))
        by_k = scaled.groupby("k")["r"].agg(typical=lambda r: float(np.exp(np.log(r).mean())), low="min", high="max",
                                           count="count")
        by_k = by_k[by_k["count"] == by_k["count"].max()]
        best = int(by_k.index[np.argmin(np.abs(np.log(by_k["typical"].to_numpy())))])
        own = by_k.loc[rule["k"], "typical"] * rule["factor"] if rule["k"] in by_k.index else float("nan")
        rows.append({"set": label, "k": best, "typical ratio": by_k.loc[best, "typical"],
                     "range": f"{by_k.loc[best, 'low']:.2f}-{by_k.loc[best, 'high']:.2f}",
                     "factor at the rule's k": own, "at the edge": best in (by_k.index.min(), by_k.index.max())
                     and abs(np.log(by_k.loc[best, "typical"])) > np.log(BAND), "cells": int(by_k.loc[best, "count"])})
    return pd.DataFrame(rows)


def depth_sentence(depth: pd.DataFrame, rule: dict) -> str:
    """Which tasks' data tracks a deeper (higher k) or shallower coverage than two-hop's rule, at the rule's share."""
    if not len(depth) or not rule:
        return ""
    def name(r) -> str:
        edge = (f" or {'lower' if r['k'] < rule['k'] else 'higher'}: the candidates end there" if r["at the edge"]
                else "")
        return f"{r['set']} (k = {r['k']}{edge})"
    deeper = [name(r) for _, r in depth.iterrows() if r["k"] > rule["k"]]
    shallower = [name(r) for _, r in depth.iterrows() if r["k"] < rule["k"]]
    same = [r["set"] for _, r in depth.iterrows() if r["k"] == rule["k"]]
    parts = [f"{', '.join(same)} at the rule's own k = {rule['k']}"] if same else []
    if deeper:
        parts.append("deeper coverage for " + ", ".join(deeper))
    if shallower:
        parts.append("shallower coverage for " + ", ".join(shallower))
    return (f"With the rule's factor and share ({rule['target']:.0%}) kept, the measured data is centred best by "
            + "; ".join(parts) + ".")
