"""Models set against the default transformer on the same cells: model sizes and the Mamba architecture,
their exponents, their n_req ratios judged against the seed gap, and their training cost."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from covlib.analyses.fits import exponent_metrics, has_interval, summary_exponent
from covlib.base.paper import EXPONENTS_BY_SIZE_TWOHOP
from covlib.chapters.ch04_how_much_data.twohop_law import interval_text
from covlib.figures.required_data import requirement_frame
from covlib.search.experiments import experiment_command
from covlib.search.summary import geometric_mean, requirement_ratio, seed_spread
from covlib.search.verdicts import finished_cells, rule_label, rule_summary
from covlib.training.config import model_params
from covlib.training.shapes import MODEL_SHAPES

REFERENCE = "twohop"  # the default transformer's experiment: every other model is set against it
SIZE_EXPERIMENTS = ("twohop_small_model", REFERENCE, "twohop_large_model")
ARCHITECTURE_EXPERIMENTS = (REFERENCE, "twohop_mamba")


def size_experiments(summaries: Mapping[str, pd.DataFrame]) -> list[str]:
    """The model-size experiments present, smallest model first."""
    return [n for n in SIZE_EXPERIMENTS if n in summaries]


def model_family(model: str) -> str:
    """The architecture of a named model shape: "transformer" or "mamba"."""
    return MODEL_SHAPES.get(model, {}).get("family", "transformer")


def size_table(summaries: Mapping[str, pd.DataFrame], experiments: Mapping[str, dict], size_names: Sequence[str],
               reps: int = 2000, shared_cells: str = "twohop_small_model") -> tuple[pd.DataFrame, list[pd.DataFrame]]:
    """Per model (a size or an architecture), on the cells of the experiment ``shared_cells`` (the ones every
    model is searched on): family, parameters, finished cells, exponent and mean n_req (a table), and the
    estimates as chart points (one frame per model with a bracketed cell)."""
    size_rows, size_points = [], []
    for name in size_names:
        s = summaries[name]
        model = experiments[name]["model"]
        shared = experiments.get(shared_cells, experiments[name])
        params = model_params(model, 30, 4) if model in MODEL_SHAPES else None
        if not len(s):
            continue
        common = s[s["N"].isin(shared["N"]) & s["seed"].isin(shared["seeds"])]
        finished = common.dropna(subset=["n_req"])
        f = summary_exponent(common, reps)
        points = requirement_frame(common.assign(model=f"{model} ({params / 1e6:.2f}M)"))
        if len(points):  # a model with no bracketed cell has no point to draw
            size_points.append(points)
        size_rows.append({"model": model, "family": model_family(model), "parameters": params,
                          "cells finished": len(finished), "cells": len(common),
                          "N values": int(finished["N"].nunique()), "N low": finished["N"].min(),
                          "N high": finished["N"].max(), "seeds": int(finished["seed"].nunique()),
                          "exponent": f["c"] if f else np.nan,
                          "interval": interval_text(f), "has interval": has_interval(f),
                          "mean n_req": common["n_req"].mean(),
                          "unreachable at N": ", ".join(str(int(n)) for n in common.loc[common["status"] == "unreachable", "N"]),
                          "capped at N": ", ".join(str(int(n)) for n in common.loc[common["low_capped"], "N"])})
    return pd.DataFrame(size_rows), size_points


def parameter_ratio(measured_sizes: pd.DataFrame) -> float:
    """How many times the largest measured model's parameters the smallest's is (NaN below two sizes)."""
    if len(measured_sizes) <= 1:
        return float("nan")
    return float(measured_sizes["parameters"].max() / measured_sizes["parameters"].min())


def size_ratios(summaries: Mapping[str, pd.DataFrame], experiments: Mapping[str, dict],
                size_names: Sequence[str]) -> dict[str, pd.DataFrame]:
    """Per model size (by model name), n_req over the default model's at every cell both finished; sizes
    sharing no finished cell are left out."""
    ratios = {experiments[name]["model"]: requirement_ratio(summaries[name], summaries[REFERENCE], ("size", "default"))
              for name in size_names if name != REFERENCE and len(summaries[name])}
    return {model: r for model, r in ratios.items() if len(r)}


def interval_phrase(row: pd.Series, spread: float = float("nan")) -> str:
    """A size or architecture row's interval for prose: "95% interval 1.45 to 3.21", or, below four values
    of N, "no interval from 3 values of N" (the table cell's "none (3 N)" spelled out) and, given the typical
    seed-to-seed gap ``spread``, how far that gap alone can move an exponent over so narrow a span of N (one
    end's n_req off by the gap tilts the line through the ends by log(spread) / log(N high / N low))."""
    if row["has interval"]:
        return f"95% interval {row['interval']}"
    text = f"no interval from {row['N values']} values of N"
    low, high = row.get("N low", np.nan), row.get("N high", np.nan)
    if np.isfinite(spread) and high > low:
        text += (f"; over N = {low:.0f}-{high:.0f} the typical {spread:.2f}-fold gap between two seeds can move it "
                 f"by up to {np.log(spread) / np.log(high / low):.2f}")
    return text


def subset_caveat(models: pd.DataFrame, reference: str) -> str:
    """Why ``reference``'s exponent in a comparison differs from its headline fit: here it is fitted on the cells
    every compared model is searched on (fewer N, fewer seeds), so the same model gets a second c ("" when the
    comparison has no exponent for it)."""
    row = models[models["model"] == reference]
    if not len(row) or np.isnan(row["exponent"].iloc[0]):
        return ""
    r = row.iloc[0]
    seeds = f"{r['seeds']} seed{'s' if r['seeds'] != 1 else ''}"
    return (f" {reference}'s c = {r['exponent']:.2f} here is fitted on the compared cells only (N = {r['N low']:.0f}-"
            f"{r['N high']:.0f}, {seeds}), not on all its finished cells as in the headline fit above: the same "
            "model, a different set of N and seeds, hence a different value.")


def size_note(sizes: pd.DataFrame, measured_sizes: pd.DataFrame, param_ratio: float,
              ratios: Mapping[str, pd.DataFrame], spread: float, reference: str) -> str:
    """The model-size comparison in prose: each size's cells and fit, the span in parameters, and whether
    each size needs less data than ``reference``, judged against the gap between two seeds (``spread``)."""
    parts = []
    for _, r in sizes.iterrows():
        part = f"{r['model']} ({r['parameters'] / 1e6:.2f}M parameters): {r['cells finished']} of {r['cells']} cells finished"
        if not np.isnan(r["exponent"]):
            part += f", c = {r['exponent']:.2f} ({interval_phrase(r, spread)}), mean n_req {r['mean n_req']:,.0f}"
        if r["unreachable at N"]:
            part += f"; no success at N = {r['unreachable at N']} with any training set the pool allows"
        if r["capped at N"]:
            part += f" (at N = {r['capped at N']} the failing probe the result rests on stopped at the step cap)"
        parts.append(part)
    note = "; ".join(parts) + "."
    if len(measured_sizes) > 1:
        note += (f" The finished sizes span {param_ratio:.1f} times in parameters (the paper: about 20 times, "
                 f"exponents {', '.join(f'{c:.2f}' for c in EXPONENTS_BY_SIZE_TWOHOP.values())}).")
    return note + subset_caveat(sizes, reference) + ratio_verdicts(ratios, spread, reference)


def ratio_verdicts(ratios: Mapping[str, pd.DataFrame], spread: float, reference: str) -> str:
    """Each model's n_req over ``reference``'s on the cells both finished, per cell and as a geometric mean,
    judged against the typical gap between two seeds of the same cell (``spread``)."""
    note = ""
    for model, r in ratios.items():
        g = geometric_mean(r["ratio"])
        cells = f"the {len(r)} cells both finished" if len(r) > 1 else "the one cell both finished"
        note += f" {model} needs {g:.2f} times the data of {reference} on {cells} (per cell: {per_cell_text(r)}): "
        verdict = ratio_verdict(g, len(r), spread)
        if verdict == NO_SPREAD:
            note += "no second seed to judge the gap against."
        elif verdict == ONE_CELL:
            note += f"one cell is too few to call it more or less (two seeds of one cell differ {spread:.2f}-fold)."
        else:
            note += f"**{verdict}**, against a typical {spread:.2f}-fold gap between two seeds of the same cell."
    return note


NO_SPREAD, ONE_CELL = "no second seed", "one cell"


def ratio_verdict(ratio: float, cells: int, spread: float) -> str:
    """Whether a model needs "less", "more" or "about the same" data as the reference, from the geometric mean
    ``ratio`` over ``cells`` shared cells, judged against the typical gap between two seeds of one cell:
    NO_SPREAD without a second seed, ONE_CELL when one cell's ratio is a single draw of that very gap."""
    if np.isnan(spread):
        return NO_SPREAD
    if cells < 2:
        return ONE_CELL
    return "less" if ratio < 1 / spread else "more" if ratio > spread else "about the same"


def per_cell_text(ratios: pd.DataFrame) -> str:
    """"N = 25 1.07, N = 30 1.06": each cell's ratio, from a requirement_ratio frame."""
    return ", ".join(f"N = {int(n)} {x:.2f}" for n, x in zip(ratios["N"], ratios["ratio"]))


def ratios_by_rule(cells_of: Mapping[str, Sequence], probes: pd.DataFrame, experiments: Mapping[str, dict],
                   names: Sequence[str], floor: int, floor_cells_of: Mapping[str, Sequence] | None = None,
                   reference: str = REFERENCE) -> pd.DataFrame:
    """Each model's n_req over the ``reference`` experiment's, under the authors' rule (on ``cells_of``) and under
    the step floor (section 4.7; on ``floor_cells_of``, which may add cells the floor alone searches): per model
    and rule, the cells both finished, the ratio per cell and as a geometric mean, the reference's seed gap under
    that rule, the verdict (ratio_verdict), and the cells the authors' rule finished that the floor has not
    (``pending``: until they finish, the floor's verdict waits)."""
    rows = []
    cells_under = {0: cells_of, floor: floor_cells_of or cells_of}
    by_rule = {f: {n: rule_summary(cells_under[f][n], probes, f) for n in (reference, *names)} for f in (0, floor)}
    for floor_steps, summaries in by_rule.items():
        spread = seed_spread(summaries[reference])
        for name in names:
            if name == reference:
                continue
            r = requirement_ratio(summaries[name], summaries[reference], ("model", "reference"))
            pending = sorted(set(finished_cells(by_rule[0][name])) - set(finished_cells(summaries[name])))
            g = geometric_mean(r["ratio"])
            rows.append({"model": experiments[name]["model"], "give_up_floor": floor_steps,
                         "rule": rule_label(floor_steps), "cells": len(r), "per cell": per_cell_text(r) if len(r) else "",
                         "ratio": g, "seed gap": spread,
                         "verdict": ratio_verdict(g, len(r), spread) if len(r) and not pending else "",
                         "pending": ", ".join(f"N = {N} (seed {seed})" for N, seed in pending)})
    return pd.DataFrame(rows, columns=["model", "give_up_floor", "rule", "cells", "per cell", "ratio", "seed gap",
                                       "verdict", "pending"])


def rule_ratio_note(by_rule: pd.DataFrame, reference: str) -> str:
    """Whether the comparison with ``reference`` holds under the floor (section 4.7's rule) as under the authors'
    rule, in words ("" while the table holds no floor row with a finished cell)."""
    floor_rows = by_rule[by_rule["give_up_floor"] > 0]
    if not len(floor_rows) or not (floor_rows["cells"] > 0).any():
        return ""
    authors = by_rule[by_rule["give_up_floor"] == 0].set_index("model")
    parts = []
    for _, r in floor_rows.iterrows():
        if r["pending"]:
            parts.append(f"{r['model']} waits for {r['pending']}, still searching under the floor")
            continue
        if not r["cells"]:
            continue
        before = authors.loc[r["model"], "verdict"] if r["model"] in authors.index else ""
        said = {NO_SPREAD: "no second seed to judge it", ONE_CELL: "one cell, too few to judge"}.get(
            r["verdict"], f"**{r['verdict']}**")
        same = "as under the authors' rule" if r["verdict"] == before else f"where the authors' rule said {before}"
        parts.append(f"{r['model']} needs {r['ratio']:.2f} times the data of {reference} (per cell: {r['per cell']}; "
                     f"seed gap {r['seed gap']:.2f}-fold): {said}, {same}")
    if not parts:
        return ""
    return f" Section 4.7 reruns the lower ends under {floor_rows['rule'].iloc[0]}. There, " + "; ".join(parts) + "."


def rule_ratio_metrics(by_rule: pd.DataFrame, labels: Mapping[str, str] | None = None) -> dict[str, float]:
    """Each model's n_req ratio to the default model under the floor (NaN while cells wait), and the default
    model's seed gap under the floor, as recorded metrics; ``labels`` names a model in the key (else its name)."""
    floor_rows = by_rule[by_rule["give_up_floor"] > 0]
    label = {**{m: m.replace("-", "_") for m in floor_rows["model"]}, **(labels or {})}
    ratios = {f"n_req_ratio_{label[m]}_to_default_floor": (g if not pending else float("nan"))
              for m, g, pending in zip(floor_rows["model"], floor_rows["ratio"], floor_rows["pending"])}
    return {**ratios, "seed_spread_twohop_floor": float(floor_rows["seed gap"].iloc[0]) if len(floor_rows) else float("nan")}


def architecture_note(models: pd.DataFrame, ratios: Mapping[str, pd.DataFrame], spread: float, reference: str) -> str:
    """The architecture comparison in prose: each model's parameters, cells and exponent on the shared cells,
    and whether the other architecture needs more data than ``reference``, judged against the seed gap."""
    parts = []
    for _, r in models.iterrows():
        part = (f"{r['model']} ({r['family']}, {r['parameters']:,.0f} parameters): {r['cells finished']} of "
                f"{r['cells']} cells finished")
        if not np.isnan(r["exponent"]):
            part += f", c = {r['exponent']:.2f} ({interval_phrase(r, spread)})"
        if r["unreachable at N"]:
            part += f"; no success at N = {r['unreachable at N']} with any training set the pool allows"
        parts.append(part)
    note = "; ".join(parts) + "." + subset_caveat(models, reference) if parts else ""
    verdicts = ratio_verdicts(ratios, spread, reference)
    if verdicts:
        return note + verdicts
    return note + " No cell is finished by both architectures yet: nothing to compare."


def step_costs(probes: pd.DataFrame, models: Sequence[str], task: str = "twohop") -> pd.DataFrame:
    """Training cost of each model's probes on the plain ``task`` cells (N, seed) that every one of ``models``
    has probed: probes, steps, wall minutes, seconds per step and minutes per probe, one row per model, with
    each model's seconds per step over the first one's. Wall time: whatever else ran meanwhile slowed it."""
    rows = probes[(probes["task"] == task) & ~probes["cot"].astype(bool) & probes["model"].isin(models)]
    cells = [set(zip(rows.loc[rows["model"] == m, "N"], rows.loc[rows["model"] == m, "seed"])) for m in models]
    shared = set.intersection(*cells) if cells else set()
    rows = rows[[(n, s) in shared for n, s in zip(rows["N"], rows["seed"])]]
    table = (rows.groupby("model").agg(cells=("N", lambda n: len(set(n))), probes=("n_train", "size"),
                                       steps=("steps", "sum"), minutes=("minutes", "sum"))
             .reindex([m for m in models if m in set(rows["model"])]).reset_index())
    table["seconds per step"] = table["minutes"] * 60 / table["steps"]
    table["minutes per probe"] = table["minutes"] / table["probes"]
    table["x first"] = table["seconds per step"] / table["seconds per step"].iloc[0] if len(table) else []
    return table


def _probes(count: int) -> str:
    return f"{count} probe" + ("s" if count != 1 else "")


def step_cost_note(costs: pd.DataFrame) -> str:
    """The architectures' training cost on the cells both have probed, in words ("" before they share one)."""
    if len(costs) < 2:
        return ""
    first, rest = costs.iloc[0], costs.iloc[1:]
    cells = int(rest["cells"].min())
    where = f"the {cells} cells" if cells != 1 else "the one cell"
    return (f" On {where} both have probed, " + "; ".join(
        f"a {r['model']} step took {r['seconds per step']:.2f} s ({r['minutes per probe']:.0f} minutes per probe "
        f"over {_probes(r['probes'])}), {r['x first']:.1f}x" for _, r in rest.iterrows())
        + f" the {first['model']}'s {first['seconds per step']:.2f} s ({first['minutes per probe']:.0f} minutes "
        f"per probe over {_probes(first['probes'])}). These are wall times from the probe table, taken under whatever "
        "else the machine ran; `benchmarks/bench_architectures.py` times the shapes side by side.")


def size_cache_note(summaries: Mapping[str, pd.DataFrame], experiments: Mapping[str, dict],
                    size_names: Sequence[str], subject: str = "model size") -> str:
    """What the book's cache still lacks for the comparison of models (``subject``: model size or architecture):
    models not measured (with the command that measures them) and models still searching ("" when complete)."""
    note = ""
    missing = [name for name in size_names if name != REFERENCE and not summaries[name]["n_req"].notna().any()]
    if missing:
        note += (" **Not measured yet:** " + ", ".join(f"{experiments[n]['model']} (`{experiment_command(n)}`)"
                                                       for n in missing)
                 + f". Until they are, this chapter makes no claim about {subject}.")
    # the reference's cells count only at the N the other models share (two-hop's N = 70 compares no model)
    compared = {int(N) for n in size_names if n != REFERENCE for N in experiments[n]["N"]}
    searching = {experiments[n]["model"]: sorted({int(N) for N in summaries[n].loc[summaries[n]["status"] == "searching", "N"]
                                                  if n != REFERENCE or int(N) in compared})
                 for n in size_names if n not in missing and len(summaries[n])}
    searching = {m: Ns for m, Ns in searching.items() if Ns}
    if searching:  # a partly filled cache: say what a resumed search would add
        note += (" **Still searching** (the cache is partly filled; the commands in `data/scaling/COMMANDS.txt` "
                 "resume): " + "; ".join(f"{m} at N = {', '.join(map(str, Ns))}" for m, Ns in searching.items())
                 + ". The comparisons above use the finished cells only.")
    return note


def architecture_metrics(summaries: Mapping[str, pd.DataFrame], experiments: Mapping[str, dict],
                         ratios: Mapping[str, pd.DataFrame], reps: int = 2000) -> dict[str, float]:
    """The architecture check as recorded metrics: the Mamba's exponent over all its cells (with its values of N
    and seeds), its n_req over the default transformer's on the cells both finished (geometric mean), and both
    models' parameter counts (NaN and zero counts while the cache holds no Mamba result)."""
    mamba, default = experiments["twohop_mamba"]["model"], experiments[REFERENCE]["model"]
    ratio = ratios.get(mamba)
    return {**exponent_metrics("twohop_mamba", summary_exponent(summaries["twohop_mamba"], reps)),
            "n_req_ratio_mamba_to_default": geometric_mean(ratio["ratio"]) if ratio is not None else float("nan"),
            "params_mamba": model_params(mamba, 30, 4), "params_default": model_params(default, 30, 4)}
