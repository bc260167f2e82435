"""Chapter 4 (how much data): the required data of two-hop and longer chains, its exponent, model sizes."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import altair as alt
import numpy as np
import pandas as pd

from covlib.analyses.fits import describe_exponent, exponent_metrics, power_fit, summary_exponent
from covlib.base.paper import (
    EXPONENT_TWOHOP_DRAFT,
    EXPONENTS,
    EXPONENTS_BY_SIZE_TWOHOP,
    REQUIRED_DATA_TWOHOP_AUTHORS,
    theory_exponent,
)
from covlib.base.paths import repository_path
from covlib.coverage.requirement import coverage_requirement, probe_coverage_by_k
from covlib.figures.charts import accuracy_curves_chart, coverage_by_k_chart
from covlib.figures.required_data import fit_with_extrapolation, required_data_chart, requirement_frame
from covlib.figures.style import zoom
from covlib.figures.tables import ReaderTable, reader_table
from covlib.search.cells import Cell, ProbeRules
from covlib.search.experiments import BOOK_EXPERIMENTS, experiment_command, probe_table
from covlib.search.probes import read_curve
from covlib.search.required_data import search, search_states
from covlib.search.summary import bracket_pair, geometric_mean, requirement_ratio, summarise
from covlib.training.shapes import MODEL_SHAPES, model_params

# a miniature of every experiment: tiny N, a one-layer model, short budgets (seconds)
SMOKE_EXPERIMENTS: dict[str, dict] = {
    "twohop": {"task": "twohop", "N": [6, 7, 8], "seeds": [0, 1], "model": "smoke"},
    "twohop_small_model": {"task": "twohop", "N": [6, 7, 8], "seeds": [0], "model": "smoke"},
    "threehop": {"task": "threehop", "N": [4, 5], "seeds": [0], "model": "smoke"},
    "parallel_twohop": {"task": "parallel_twohop", "N": [4, 5], "seeds": [0], "model": "smoke"},
    "twohop_mamba": {"task": "twohop", "N": [6, 7], "seeds": [0], "model": "mamba-smoke"},
}


PAPER_NOTE = ("The paper's scale (8-layer GPT-2, N up to 200, batch 16,384) needs a GPU for days; this preset "
              "reads the same cache as the default one. Run `covlib scaling search --model ...` on a GPU to extend it.")


# experiments: what is searched; rules: ProbeRules beyond the threshold; coverage_N: N values whose coverage
# requirement is computed here (None: read data/scaling/coverage_<task>.csv); fresh_table: a probe table under the
# output folder instead of the book's; always_recompute: search even if recompute is False; quiet_search: one job,
# no log; describe_cache: say how to regenerate the book's cache and what it still lacks; note: printed at set-up
PRESETS: dict[str, dict] = {
    "smoke": {"experiments": SMOKE_EXPERIMENTS,
              "rules": {"step_cap": 300, "give_up_epochs": 20, "eval_every": 25, "batch_size": 128,
                        "test_size_per_type": 200},
              "coverage_N": {"twohop": [8, 12, 16], "threehop": [5, 6], "parallel_twohop": [5, 6]},
              "fresh_table": "scaling/probes_smoke.csv", "always_recompute": True, "quiet_search": True,
              "describe_cache": False, "note": ""},
    "default": {"experiments": BOOK_EXPERIMENTS, "rules": {}, "coverage_N": None, "fresh_table": "",
                "always_recompute": False, "quiet_search": False, "describe_cache": True, "note": ""},
    "paper": {"experiments": BOOK_EXPERIMENTS, "rules": {}, "coverage_N": None, "fresh_table": "",
              "always_recompute": False, "quiet_search": False, "describe_cache": True, "note": PAPER_NOTE},
}


COVERAGE_TASKS = ("twohop", "threehop", "parallel_twohop")


CHAIN_TASKS = ("twohop", "parallel_twohop", "threehop")


SIZE_EXPERIMENTS = ("twohop_small_model", "twohop", "twohop_large_model")


ARCHITECTURE_EXPERIMENTS = ("twohop", "twohop_mamba")  # the default transformer first: the others are set against it


def probe_table_path(table: str, root: Path, fresh_table: str) -> Path:
    """The probe table to read: the reader's ``table``, else a fresh one under ``root`` (smoke), else the book's."""
    return probe_table(table, root / fresh_table if fresh_table else None)


def run_searches(cells_of: Mapping[str, Sequence[Cell]], table_path: Path, work_dir: Path, rules: ProbeRules,
                 jobs: int, quiet: bool = False) -> None:
    """Run (or resume) every experiment's search into the probe table; ``quiet``: one job and no log."""
    for name, cells in cells_of.items():
        print(f"== {name}")
        search(cells, table_path, work_dir, rules, jobs=1 if quiet else jobs, log=None if quiet else print)


def experiment_summaries(cells_of: Mapping[str, Sequence[Cell]], probes: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Each experiment's search summary (one row per cell) from the probe table; empty when it has no probes."""
    states = {name: search_states(cells, probes) if len(probes) else [] for name, cells in cells_of.items()}
    return {name: summarise(s) if s else pd.DataFrame() for name, s in states.items()}


def search_cost(summaries: Mapping[str, pd.DataFrame]) -> tuple[int, float]:
    """(probes, run-hours) the chapter's experiments took: the size of the cache the chapter rests on."""
    cells = pd.concat([s for s in summaries.values() if len(s)] or [pd.DataFrame(columns=["probes", "minutes"])])
    return int(cells["probes"].sum()), float(cells["minutes"].sum() / 60)


def coverage_of_cache(summary: pd.DataFrame) -> str:
    """How far one experiment's search has got, e.g. "5 bracketed, 1 searching of 6 cells"."""
    if summary.empty:
        return "no probes yet"
    counts = summary["status"].value_counts().to_dict()
    return ", ".join(f"{v} {k}" for k, v in counts.items()) + f" of {len(summary)} cells"


def cache_status(summaries: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per experiment saying what the cache holds for it."""
    return pd.DataFrame({"experiment": list(summaries), "cells": [coverage_of_cache(s) for s in summaries.values()]})


def coverage_tables(coverage_N: Mapping[str, Sequence[int]] | None) -> dict[str, pd.DataFrame]:
    """The coverage-predicted requirement per task: computed here at ``coverage_N``'s values, or (None)
    read from data/scaling/coverage_<task>.csv where that file exists."""
    if coverage_N is None:
        return {t: pd.read_csv(repository_path(f"data/scaling/coverage_{t}.csv")) for t in COVERAGE_TASKS
                if repository_path(f"data/scaling/coverage_{t}.csv").is_file()}
    return {t: coverage_requirement(t, Ns, points=8, test_size_per_type=300) for t, Ns in coverage_N.items()}


def coverage_fits(cov: pd.DataFrame, N_max: float | None = None) -> pd.DataFrame:
    """The exponent of the coverage-predicted requirement per (k, target), beside the theory's 2.5 - 0.5/k:
    the growth coverage alone predicts, with no training."""
    rows = []
    for (k, target), g in cov.groupby(["k", "target"]):
        g = g.dropna(subset=["n_train"])
        g = g[g["N"] <= N_max] if N_max else g
        if g["N"].nunique() >= 2:
            f = power_fit(g["N"], g["n_train"])
            rows.append({"k": int(k), "target": target, "c": f["c"], "r2": f["r2"], "N range": f"{g['N'].min()}-{g['N'].max()}",
                         "theory 2.5 - 0.5/k": theory_exponent(k)})
    return pd.DataFrame(rows)


def twohop_chart(twohop: pd.DataFrame, cov2: pd.DataFrame, fit: dict | None) -> alt.LayerChart:
    """Two-hop's measured brackets and estimates beside the fitted law, the coverage-predicted requirement,
    the authors' models and the size of the ID pool (which no training set can exceed)."""
    pool = pd.DataFrame({"N": np.geomspace(15, 200, 20)})
    lines = [pd.DataFrame({"N": pool["N"], "n": 0.49 * pool["N"] ** 3, "series": "ID pool 0.49 N³", "dash": "pool"})]
    for k in (2, 3):
        g = cov2[(cov2["k"] == k) & (cov2["target"] == 0.99)].dropna(subset=["n_train"])
        if len(g):
            lines.append(pd.DataFrame({"N": g["N"], "n": g["n_train"], "series": f"coverage: 99% of ID items {k}-covered",
                                       "dash": "coverage"}))
    if fit:
        lines.append(fit_with_extrapolation(fit, draw_to=200))
    authors = pd.DataFrame({"N": list(REQUIRED_DATA_TWOHOP_AUTHORS), "n": list(REQUIRED_DATA_TWOHOP_AUTHORS.values()),
                            "series": "authors' 2-hop models (GPT-2, GPU)"})
    points = requirement_frame(twohop.assign(model="measured: 4-layer, width 128")) if len(twohop) else \
        pd.DataFrame(columns=["N", "seed", "n_req", "low", "high", "series"])
    return required_data_chart(points, pd.concat(lines, ignore_index=True), authors,
                               title="Two-hop: training examples needed for 99% ID accuracy")


def pool_shares(twohop: pd.DataFrame) -> pd.DataFrame:
    """The two-hop summary with ``share_of_pool``: the required data as a share of the ID-eligible inputs."""
    return twohop.assign(share_of_pool=twohop["n_req"] / twohop["eligible"]) if len(twohop) else twohop


def fit_rule_decided(twohop: pd.DataFrame, fit: dict | None, reps: int = 2000) -> dict | None:
    """The fit without the cells whose bracket the step cap decided rather than the authors' rule (``fit``
    itself when there are none)."""
    capped = twohop[twohop["low_capped"] & twohop["n_req"].notna()] if len(twohop) else twohop
    return summary_exponent(twohop[~twohop["low_capped"]], reps) if len(capped) else fit


def experiment_probes(probes: pd.DataFrame, experiment: Mapping) -> pd.DataFrame:
    """The probe table's rows of one experiment's task and model (no chain of thought)."""
    if not len(probes):
        return probes
    return probes[(probes["task"] == experiment["task"]) & ~probes["cot"].astype(bool)
                  & (probes["model"] == experiment["model"])]


def share_of_pool_note(id_pool: pd.DataFrame) -> str:
    """Where the required data comes near the whole ID pool, which may bound it rather than the law."""
    if not len(id_pool):
        return "No finished two-hop cells yet."
    per_N = id_pool.groupby("N")["share_of_pool"].mean()
    biting = per_N[per_N > 0.25]
    if not len(biting):
        return "At every N measured the required data stays below a quarter of the ID pool."
    return (f"At N = {', '.join(str(int(n)) for n in biting.index)} the required data is "
            f"{', '.join(f'{v:.0%}' for v in biting)} of the whole ID pool: the smaller N is, the more of the "
            "pool the model needs, and near the pool its size rather than the law may bound the requirement, "
            "which would flatten the low end of the fit.")


def capped_note(twohop: pd.DataFrame, rules: ProbeRules, rule_decided: dict | None) -> str:
    """The cells whose bracket's failing probe the step cap stopped, and the fit without them ("" if none)."""
    capped = twohop[twohop["low_capped"] & twohop["n_req"].notna()] if len(twohop) else twohop
    if not len(capped):
        return ""
    return (" At " + ", ".join(f"N = {int(r['N'])} (seed {int(r['seed'])})" for _, r in capped.iterrows())
            + f" the bracket's failing probe stopped at the {rules.step_cap:,}-step cap before the give-up rule "
            f"({rules.give_up_epochs:.0f} epochs after fitting) could decide: those estimates are the data needed "
            f"within {rules.step_cap:,} steps, and may sit above what longer training needs. Without them the fit "
            f"gives {describe_exponent(rule_decided)}.")


def raised_cap_note(twohop_rows: pd.DataFrame, rules: ProbeRules) -> str:
    """Where the step cap was raised so that the authors' rule, not the cap, decides ("" if it never was)."""
    caps = twohop_rows.groupby("N")["step_cap"].max().astype(int) if len(twohop_rows) else pd.Series(dtype=int)
    if caps.nunique() <= 1:
        return ""
    raised = caps[caps > caps.min()]
    return (f" The step cap was {caps.min():,} steps except at N = "
            + ", ".join(f"{n} ({c:,})" for n, c in raised.items())
            + f": there the training set is fitted late and {rules.give_up_epochs:.0f} epochs take more than "
            f"{caps.min():,} steps, so the lower cap, not the authors' rule, would have decided. A higher cap "
            "keeps every probe the rule decided and trains again those the lower cap stopped.")


def unreachable_note(twohop: pd.DataFrame, twohop_rows: pd.DataFrame) -> str:
    """The cells where even the largest training set the search may use fails ("" if none)."""
    lost = twohop[twohop["status"] == "unreachable"] if len(twohop) else twohop
    if not len(lost):
        return ""
    at_top = [twohop_rows[(twohop_rows["N"] == r["N"]) & (twohop_rows["seed"] == r["seed"])].nlargest(1, "n_train").iloc[0]
              for _, r in lost.iterrows()]
    return (" At the smallest N the law cannot be measured at all: "
            + "; ".join(f"at N = {int(t['N'])} (seed {int(t['seed'])}) the largest training set the search may use, "
                        f"{int(t['n_train']):,} of {int(t['eligible']):,} ID-eligible inputs, still ends at "
                        f"{t['best_type0']:.1%} ID accuracy" for t in at_top)
            + ": the requirement, if there is one, is more than the pool can give while keeping a test set.")


def pool_note(twohop: pd.DataFrame, twohop_rows: pd.DataFrame, rules: ProbeRules, rule_decided: dict | None) -> str:
    """What bounds the two-hop measurement: the ID pool, the step cap, and cells no training set reaches."""
    return (share_of_pool_note(pool_shares(twohop)) + capped_note(twohop, rules, rule_decided)
            + raised_cap_note(twohop_rows, rules) + unreachable_note(twohop, twohop_rows))


def coverage_exponent(cov_fit: pd.DataFrame, k: int = 3, target: float = 0.99) -> float:
    """The coverage-predicted exponent at one (k, target), NaN if it was not fitted."""
    c = cov_fit[(cov_fit["k"] == k) & (cov_fit["target"] == target)]["c"]
    return float(c.iloc[0]) if len(c) else float("nan")


def exponent_comparison(fit: dict | None, c3: float) -> pd.DataFrame:
    """The measured exponent beside coverage's, the paper's (and its superseded draft's) and the theory's."""
    def point(what: str, c: float, source: str) -> dict:
        return {"what": what, "c": c, "c_low": c, "c_high": c, "source": source}

    return pd.DataFrame([
        {"what": "measured here (4-layer, width 128, CPU)", "c": fit["c"] if fit else np.nan,
         "c_low": fit["c_low"] if fit else np.nan, "c_high": fit["c_high"] if fit else np.nan, "source": "this book"},
        point("coverage: 99% of ID items 3-covered", c3, "this book"),
        point("paper: 2-hop, GPT-2", EXPONENTS["twohop"], "paper"),
        point("paper draft fit (superseded)", EXPONENT_TWOHOP_DRAFT, "paper"),
        point("theory, k = 2", theory_exponent(2), "theory"),
        point("theory, k = 3", theory_exponent(3), "theory"),
    ])


def interval_text(fit: dict | None) -> str:
    """A fit's interval for a table cell: "1.82 to 2.38", "none (3 N)" below four values of N, or "n/a"."""
    if fit is None:
        return "n/a"
    if np.isnan(fit["c_low"]):
        return f"none ({fit['n_values']} N)"
    return f"{fit['c_low']:.2f} to {fit['c_high']:.2f}"


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
    estimates as chart points (one frame per model)."""
    size_rows, size_points = [], []
    for name in size_names:
        s = summaries[name]
        model = experiments[name]["model"]
        shared = experiments.get(shared_cells, experiments[name])
        params = model_params(model, 30, 4) if model in MODEL_SHAPES else None
        if not len(s):
            continue
        common = s[s["N"].isin(shared["N"]) & s["seed"].isin(shared["seeds"])]
        f = summary_exponent(common, reps)
        size_points.append(requirement_frame(common.assign(model=f"{model} ({params / 1e6:.2f}M)")))
        size_rows.append({"model": model, "family": model_family(model), "parameters": params, "cells finished": int(common["n_req"].notna().sum()),
                          "cells": len(common), "N values": int(common.dropna(subset=["n_req"])["N"].nunique()),
                          "seeds": int(common.dropna(subset=["n_req"])["seed"].nunique()),
                          "exponent": f["c"] if f else np.nan,
                          "interval": interval_text(f),
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
    ratios = {experiments[name]["model"]: requirement_ratio(summaries[name], summaries["twohop"], ("size", "default"))
              for name in size_names if name != "twohop" and len(summaries[name])}
    return {model: r for model, r in ratios.items() if len(r)}



def size_note(sizes: pd.DataFrame, measured_sizes: pd.DataFrame, param_ratio: float,
              ratios: Mapping[str, pd.DataFrame], spread: float, reference: str) -> str:
    """The model-size comparison in prose: each size's cells and fit, the span in parameters, and whether
    each size needs less data than ``reference``, judged against the gap between two seeds (``spread``)."""
    parts = []
    for _, r in sizes.iterrows():
        part = f"{r['model']} ({r['parameters'] / 1e6:.2f}M parameters): {r['cells finished']} of {r['cells']} cells finished"
        if not np.isnan(r["exponent"]):
            part += f", c = {r['exponent']:.2f} ({r['interval']}), mean n_req {r['mean n_req']:,.0f}"
        if r["unreachable at N"]:
            part += f"; no success at N = {r['unreachable at N']} with any training set the pool allows"
        if r["capped at N"]:
            part += f" (at N = {r['capped at N']} the failing probe the result rests on stopped at the step cap)"
        parts.append(part)
    note = "; ".join(parts) + "."
    if len(measured_sizes) > 1:
        note += (f" The finished sizes span {param_ratio:.1f} times in parameters (the paper: about 20 times, "
                 f"exponents {', '.join(f'{c:.2f}' for c in EXPONENTS_BY_SIZE_TWOHOP.values())}).")
    return note + ratio_verdicts(ratios, spread, reference)


def ratio_verdicts(ratios: Mapping[str, pd.DataFrame], spread: float, reference: str) -> str:
    """Each model's n_req over ``reference``'s on the cells both finished, per cell and as a geometric mean,
    judged against the typical gap between two seeds of the same cell (``spread``)."""
    note = ""
    for model, r in ratios.items():
        g = geometric_mean(r["ratio"])
        cells = f"the {len(r)} cells both finished" if len(r) > 1 else "the one cell both finished"
        note += (f" {model} needs {g:.2f} times the data of {reference} on {cells} "
                 f"(per cell: {', '.join(f'N = {int(n)} {x:.2f}' for n, x in zip(r['N'], r['ratio']))}): ")
        if np.isnan(spread):
            note += "no second seed to judge the gap against."
        elif len(r) < 2:  # one cell's ratio is one draw of the seed-to-seed gap it is judged against
            note += f"one cell is too few to call it more or less (two seeds of one cell differ {spread:.2f}-fold)."
        else:
            verdict = "less" if g < 1 / spread else "more" if g > spread else "about the same"
            note += f"**{verdict}**, against a typical {spread:.2f}-fold gap between two seeds of the same cell."
    return note


def architecture_note(models: pd.DataFrame, ratios: Mapping[str, pd.DataFrame], spread: float, reference: str) -> str:
    """The architecture comparison in prose: each model's parameters, cells and exponent on the shared cells,
    and whether the other architecture needs more data than ``reference``, judged against the seed gap."""
    parts = []
    for _, r in models.iterrows():
        part = (f"{r['model']} ({r['family']}, {r['parameters']:,.0f} parameters): {r['cells finished']} of "
                f"{r['cells']} cells finished")
        if not np.isnan(r["exponent"]):
            part += f", c = {r['exponent']:.2f} (95% interval: {r['interval']})"
        if r["unreachable at N"]:
            part += f"; no success at N = {r['unreachable at N']} with any training set the pool allows"
        parts.append(part)
    note = "; ".join(parts) + "." if parts else ""
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
    missing = [name for name in size_names if name != "twohop" and not summaries[name]["n_req"].notna().any()]
    if missing:
        note += (" **Not measured yet:** " + ", ".join(f"{experiments[n]['model']} (`{experiment_command(n)}`)"
                                                       for n in missing)
                 + f". Until they are, this chapter makes no claim about {subject}.")
    searching = {experiments[n]["model"]: sorted(set(summaries[n].loc[summaries[n]["status"] == "searching", "N"]))
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
    mamba, default = experiments["twohop_mamba"]["model"], experiments["twohop"]["model"]
    ratio = ratios.get(mamba)
    return {**exponent_metrics("twohop_mamba", summary_exponent(summaries["twohop_mamba"], reps)),
            "n_req_ratio_mamba_to_default": geometric_mean(ratio["ratio"]) if ratio is not None else float("nan"),
            "params_mamba": model_params(mamba, 30, 4), "params_default": model_params(default, 30, 4)}


def chain_table(summaries: Mapping[str, pd.DataFrame], experiments: Mapping[str, dict],
                fits: Mapping[str, dict | None]) -> tuple[pd.DataFrame, list[pd.DataFrame]]:
    """Per task (two-hop and the longer chains): N values, exponent, interval, the paper's and finished cells
    (a table), and the estimates as chart points (one frame per task with probes)."""
    rows, points = [], []
    for name in CHAIN_TASKS:
        s, f = summaries.get(name, pd.DataFrame()), fits.get(name)
        rows.append({"task": name, "N values": ", ".join(map(str, experiments.get(name, {}).get("N", []))),
                     "exponent": f["c"] if f else np.nan,
                     "interval": interval_text(f), "seeds": f["seeds"] if f else 0,
                     "paper": EXPONENTS.get(name), "finished cells": int(s["n_req"].notna().sum()) if len(s) else 0})
        if len(s):
            points.append(requirement_frame(s.assign(model=name)))
    return pd.DataFrame(rows), points


def paper_inside(fit: dict, paper: float) -> str:
    """Whether a published exponent lies inside a fit's 95% interval ("" where the fit has none)."""
    if np.isnan(fit["c_low"]):
        return ""
    inside = fit["c_low"] <= paper <= fit["c_high"]
    return f", {'inside' if inside else 'outside'} the interval"


def chain_note(summaries: Mapping[str, pd.DataFrame], fits: Mapping[str, dict | None], threshold: float) -> str:
    """The longer chains in prose: fit against the paper's, estimates, and N values no training set reaches."""
    parts = []
    for name in ("threehop", "parallel_twohop"):
        s, f = summaries.get(name, pd.DataFrame()), fits.get(name)
        if not len(s):
            continue
        done = s.dropna(subset=["n_req"]).sort_values(["N", "seed"])
        text = f"{name}: " + (describe_exponent(f) + f" against the paper's {EXPONENTS[name]:.2f}"
                              + paper_inside(f, EXPONENTS[name]) if f else "no fit yet")
        if len(done):
            text += " (n_req " + "; ".join(f"at N = {int(n)}: " + " and ".join(f"{v:,.0f}" for v in cell["n_req"])
                                           for n, cell in done.groupby("N")) + ")"
        lost = s[s["status"] == "unreachable"]
        if len(lost):
            where = ", ".join(f"{int(n)} (seed{'s' if len(cell) > 1 else ''} "
                              f"{' and '.join(str(int(v)) for v in sorted(cell['seed']))})"
                              for n, cell in lost.groupby("N"))
            text += f"; at N = {where} no training set the pool allows reaches {threshold:.0%}"
        parts.append(text)
    return "; ".join(parts)


def steeper_text(fits: Mapping[str, dict | None]) -> str:
    """Whether each longer chain is steeper than two-hop: only where both intervals exist and do not overlap."""
    two, parts = fits.get("twohop"), []
    if not two or np.isnan(two["c_low"]):
        return ""
    for name in ("threehop", "parallel_twohop"):
        f = fits.get(name)
        if not f:
            continue
        if np.isnan(f["c_low"]):
            parts.append(f"{name}: no interval, so no comparison")
        elif f["c_low"] > two["c_high"]:
            parts.append(f"{name} is steeper than two-hop (the intervals do not overlap)")
        elif f["c_high"] < two["c_low"]:
            parts.append(f"{name} is shallower than two-hop (the intervals do not overlap)")
        else:
            parts.append(f"{name}: the intervals overlap with two-hop's, so this cache does not say which is steeper")
    return "".join(f" {p}." for p in parts)


def cell_key(pair: pd.Series) -> dict:
    """The (task, N, model, seed) of a search summary row, as read_curve and the probe table key it."""
    return {"task": pair["task"], "N": int(pair["N"]), "model": pair["model"], "seed": int(pair["seed"])}


def pair_curves(table_path: Path, pair: pd.Series) -> pd.DataFrame:
    """Training and ID test accuracy by step of a bracket's failing and succeeding probes, one column per
    (metric, run) labelled for the chart."""
    key = cell_key(pair)
    curves = []
    for label, n in (("fails", int(pair["low"])), ("succeeds", int(pair["high"]))):
        c = read_curve(table_path, **key, n_train=n)
        curves.append(c.assign(run=f"n = {n:,} ({label})"))
    curve_frame = pd.concat(curves, ignore_index=True)
    wide = curve_frame.pivot_table(index="step", columns="run", values=["acc/train_inferred", "acc/type_0"])
    wide.columns = [f"{'train' if m == 'acc/train_inferred' else 'ID test'}, {r}" for m, r in wide.columns]
    return wide.reset_index()


def pair_coverage(pair: pd.Series) -> pd.DataFrame:
    """Coverage by k of the ID test items of a bracket's two probes (their datasets regenerated)."""
    key = cell_key(pair)
    return pd.concat([probe_coverage_by_k(key["task"], key["N"], int(pair[end]), key["seed"]).assign(
        type=f"n = {int(pair[end]):,}") for end in ("low", "high")], ignore_index=True)


def failure_chart(wide: pd.DataFrame, covs: pd.DataFrame, pair: pd.Series) -> alt.HConcatChart:
    """Learning curves of the two probes beside the coverage of their ID test items."""
    key = cell_key(pair)
    palette = ["#90caf9", "#1565c0", "#ef9a9a", "#c62828"]
    series = {c: c for c in wide.columns if c != "step"}
    failure_curve = accuracy_curves_chart(wide, series, f"Two-hop N={key['N']}, seed {key['seed']}: "
                                                        "just below and just above the required data",
                                          colors=dict(zip(series, palette)), chance=1 / key["N"])
    cov_chart = coverage_by_k_chart(covs, title="ID test items k-covered", legend_title="training set")
    return alt.hconcat(failure_curve, cov_chart).resolve_scale(color="independent")


def probe_row(probes: pd.DataFrame, pair: pd.Series, n_train: int) -> pd.Series:
    """The probe table's row of a cell's probe at one training-set size."""
    key = cell_key(pair)
    return probes[(probes["task"] == key["task"]) & (probes["N"] == key["N"]) & (probes["model"] == key["model"])
                  & (probes["seed"] == key["seed"]) & (probes["n_train"] == n_train)].iloc[0]


def failure_note(probes: pd.DataFrame, pair: pd.Series, covs: pd.DataFrame, threshold: float) -> str:
    """How the failing probe failed and the succeeding one succeeded, and whether coverage separates them."""
    fail_row, pair_rows = probe_row(probes, pair, int(pair["low"])), probe_row(probes, pair, int(pair["high"]))
    cov3 = covs[covs["k"] == 3].set_index("type")["covered"]
    note = (
        f"With {int(pair['low']):,} examples the model fitted its training set "
        f"(step {int(fail_row['first_fit_step']) if pd.notna(fail_row['first_fit_step']) else 'never'}; final training "
        f"accuracy {fail_row['final_train']:.1%}); its ID accuracy reached {fail_row['best_type0']:.1%} by step "
        f"{int(fail_row['steps'])}, where the give-up rule ended it ({fail_row['stopped']}). With {int(pair['high']):,} examples "
        f"({pair['high'] / pair['low']:.2f} times as many) it reached {threshold:.0%} at step {int(pair_rows['steps'])}. ")
    if abs(cov3.iloc[0] - cov3.iloc[1]) < 0.005:
        return note + (f"Coverage does not separate the two: {cov3.iloc[0]:.1%} and {cov3.iloc[1]:.1%} of the ID test "
                       "items are 3-covered. Here every ID item is reachable and the difference is how fast the model "
                       "gets there, which the give-up rule turns into a requirement: the measured n_req depends on "
                       "the rule as well as on coverage (try `give_up_epochs` in the search).")
    return note + (f"Coverage moves with the data: {cov3.iloc[0]:.1%} of the ID test items are 3-covered at the "
                   f"smaller size, {cov3.iloc[1]:.1%} at the larger.")


def fitted_failures_note(probes: pd.DataFrame) -> str:
    """How many failing probes fitted their training set and still missed the threshold ("" if none failed)."""
    fails = probes[~probes["success"]] if len(probes) else probes
    if not len(fails):
        return ""
    fitted_fails = fails[fails["final_train"] >= 0.99]
    return (f" Across the whole table, {len(fitted_fails)} of {len(fails)} failing probes fitted their "
            "training set (at least 99%) and still stayed below the threshold on the ID test.")


def summary_bullets(fit_twohop: dict | None, c3: float, chain_fits: Mapping[str, dict | None],
                    size_note: str, measured_size_count: int, own_probes: int, own_hours: float,
                    threshold: float) -> str:
    """The chapter's findings as a markdown list: the two-hop law, coverage's prediction, longer chains,
    model size (only when two sizes are measured) and the compute it took."""
    bullets = []
    has_interval = bool(fit_twohop) and not np.isnan(fit_twohop["c_low"])
    if fit_twohop:
        inside = has_interval and fit_twohop["c_low"] <= EXPONENTS["twohop"] <= fit_twohop["c_high"]
        verdict = (f"the paper's {EXPONENTS['twohop']:.2f} is {'inside' if inside else 'outside'} that interval"
                   if has_interval else "too few values of N for an interval")
        bullets.append(f"The data a 4-layer transformer needs to reach {threshold:.0%} ID accuracy on two-hop grows as "
                       f"a power of N, n_req ~ N^c with {describe_exponent(fit_twohop)}, measured by training on a "
                       f"CPU; {verdict}.")
    if not np.isnan(c3) and has_interval:
        bullets.append(f"Coverage predicts the growth without training a model: the data that 3-covers 99% of the ID "
                       f"items grows as N^{c3:.2f}, "
                       + ("inside the measured interval" if fit_twohop["c_low"] <= c3 <= fit_twohop["c_high"]
                          else "outside the measured interval")
                       + f"; the theory gives {theory_exponent(2):.2f} (k = 2) and {theory_exponent(3):.2f} (k = 3).")
    measured_chains = [n for n in ("threehop", "parallel_twohop") if chain_fits.get(n)]
    if measured_chains:
        bullets.append("Longer chains at small N: " + ", ".join(
            f"{n} {describe_exponent(chain_fits[n])}, paper {EXPONENTS[n]:.2f}" for n in measured_chains) + ".")
    bullets.append(size_note if measured_size_count > 1 else
                   "Model size: not measured yet at this cache (section 4.3 names the commands), so no claim is made.")
    bullets.append(f"Compute: this chapter's searches took {own_probes} probes and {own_hours:.1f} run-hours of "
                   "training on this machine (one-thread runs, two or more at a time on two cores; the wall time of each "
                   "run, summed).")
    return "\n".join(f"* {b}" for b in bullets)



STATUS_COLORS = {"bracketed": "#1565c0", "searching": "#ef6c00", "unreachable": "#c62828"}


def experiment_label(name: str, experiment: Mapping) -> str:
    """How the explorer's dropdown names an experiment: its name and model, e.g. "twohop (L4-d128)"."""
    return f"{name} ({experiment['model']})"


def explorer_frames(summaries: Mapping[str, pd.DataFrame], experiments: Mapping[str, Mapping],
                    probes: pd.DataFrame, threshold: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The explorer's data: one row per searched cell (with the experiment's label, its estimate or, unfinished,
    the largest n probed) and one row per probe of those cells (its outcome in words)."""
    cells, rows = [], []
    for name, summary in summaries.items():
        if not len(summary):
            continue
        label = experiment_label(name, experiments[name])
        own = experiment_probes(probes, experiments[name]).assign(experiment=label)
        own = own[own.set_index(["N", "seed"]).index.isin(summary.set_index(["N", "seed"]).index)]
        largest = own.groupby(["N", "seed"])["n_train"].max()
        cell = summary.assign(experiment=label)
        cell["shown_n"] = cell["n_req"].astype(float).fillna(
            pd.Series([largest.get((n, s), np.nan) for n, s in zip(cell["N"], cell["seed"])], index=cell.index))
        cells.append(cell[["experiment", "task", "model", "N", "seed", "status", "n_req", "low", "high", "shown_n",
                           "probes"]])
        rows.append(own)
    if not cells:
        return pd.DataFrame(), pd.DataFrame()
    cell_frame = pd.concat(cells, ignore_index=True).astype({"low": float, "high": float, "n_req": float})
    probe_frame = pd.concat(rows, ignore_index=True)
    probe_frame["outcome"] = np.where(probe_frame["success"], f"reached {threshold:.0%}", f"stopped below {threshold:.0%}")
    probe_frame["cell"] = (probe_frame["experiment"] + ", N = " + probe_frame["N"].astype(str) + ", seed "
                           + probe_frame["seed"].astype(str))
    return cell_frame, probe_frame[["experiment", "cell", "N", "seed", "n_train", "eligible", "best_type0",
                                    "final_train", "outcome", "stopped", "steps", "minutes"]]


def explorer_chart(cells: pd.DataFrame, probes: pd.DataFrame, start: pd.Series | None,
                   threshold: float) -> alt.HConcatChart:
    """Every searched cell of one experiment (chosen in a dropdown), its estimate against N; clicking a cell shows
    its probes beside it: the training-set size against the best ID accuracy the run reached, and whether it got
    to the threshold. ``start`` is the cell shown first (and in print)."""
    labels = list(dict.fromkeys(cells["experiment"]))
    first = cells.iloc[0] if start is None else start
    experiment = alt.param(name="experiment", value=first["experiment"],
                           bind=alt.binding_select(options=labels, name="experiment: "))
    picked = alt.selection_point(name="cell", fields=["experiment", "N", "seed"], on="click", clear="dblclick",
                                 value=[{"experiment": first["experiment"], "N": int(first["N"]),
                                         "seed": int(first["seed"])}])
    x = alt.X("N:Q", title="N (tokens)", scale=alt.Scale(type="log", nice=False, padding=12),
              axis=alt.Axis(values=sorted(int(n) for n in cells["N"].unique())))
    y = alt.Y("shown_n:Q", title="training examples", scale=alt.Scale(type="log", padding=12))
    # unfinished cells have no estimate or bracket: their tooltip says so rather than "null"
    shown = {f: f"isValid(datum.{f}) ? format(datum.{f}, ',.0f') : 'none yet'" for f in ("n_req", "low", "high")}
    base = alt.Chart(cells).transform_filter(alt.datum.experiment == experiment).transform_calculate(
        **{f"{f}_text": expr for f, expr in shown.items()})
    brackets = base.mark_rule(strokeWidth=2, color="#90a4ae").encode(x, alt.Y("low:Q"), alt.Y2("high:Q"))
    dots = base.mark_point(filled=True).encode(
        x, y, alt.Color("status:N", title="cell", scale=alt.Scale(domain=list(STATUS_COLORS),
                                                                  range=list(STATUS_COLORS.values()))),
        size=alt.condition(picked, alt.value(160), alt.value(60)),
        tooltip=[alt.Tooltip("experiment:N", title="experiment"), alt.Tooltip("N:Q", title="N (tokens)"),
                 alt.Tooltip("seed:O", title="seed"), alt.Tooltip("status:N", title="search"),
                 alt.Tooltip("n_req_text:N", title="n_req (estimate)"),
                 alt.Tooltip("low_text:N", title="largest failing n"),
                 alt.Tooltip("high_text:N", title="smallest succeeding n"),
                 alt.Tooltip("probes:Q", title="probes")],
    ).add_params(picked, experiment, zoom())
    left = alt.layer(brackets, dots).properties(width=300, height=260, title=alt.TitleParams(
        "The searched cells (choose an experiment below)", anchor="start",
        subtitle=["dots: n_req, or the largest n probed while unfinished; bars: the bracket", "click a dot for its probes"]))
    chosen = alt.Chart(probes).transform_filter(picked)
    outcome_scale = alt.Scale(domain=[f"reached {threshold:.0%}", f"stopped below {threshold:.0%}"],
                              range=["#2e7d32", "#c62828"])
    runs = chosen.mark_point(filled=True, size=90).encode(
        alt.X("n_train:Q", title="training examples of the probe", scale=alt.Scale(type="log", padding=12),
              axis=alt.Axis(format="~s")),
        alt.Y("best_type0:Q", title="best ID (type_0) accuracy", axis=alt.Axis(format="%"), scale=alt.Scale(domain=[0, 1])),
        alt.Color("outcome:N", title="probe", scale=outcome_scale),
        alt.Shape("outcome:N", title="probe", scale=alt.Scale(domain=outcome_scale.domain, range=["circle", "cross"])),
        tooltip=[alt.Tooltip("cell:N", title="cell"), alt.Tooltip("n_train:Q", title="training examples", format=","),
                 alt.Tooltip("eligible:Q", title="ID-eligible inputs", format=","),
                 alt.Tooltip("best_type0:Q", title="best ID accuracy", format=".1%"),
                 alt.Tooltip("final_train:Q", title="final training accuracy", format=".1%"),
                 alt.Tooltip("outcome:N", title="outcome"), alt.Tooltip("stopped:N", title="stopped by"),
                 alt.Tooltip("steps:Q", title="steps", format=","), alt.Tooltip("minutes:Q", title="minutes", format=".1f")]
    ).add_params(zoom(["x"]))
    bar = alt.Chart(pd.DataFrame({"threshold": [threshold]})).mark_rule(strokeDash=[5, 4], color="#555").encode(
        alt.Y("threshold:Q"))
    name = chosen.transform_aggregate(probes="count()", groupby=["cell"]).mark_text(
        align="right", baseline="bottom", x=296, y=256, fontSize=11, fontWeight="bold").encode(text="cell:N")
    right = alt.layer(runs, bar, name).properties(width=300, height=260, title=alt.TitleParams(
        "Its probes", anchor="start", subtitle=f"dashed: the threshold, {threshold:.0%} ID accuracy"))
    return alt.hconcat(left, right).resolve_scale(color="independent", shape="independent")



def probe_explorer(summaries: Mapping[str, pd.DataFrame], experiments: Mapping[str, Mapping], probes: pd.DataFrame,
                   threshold: float) -> alt.HConcatChart | None:
    """The explorer of every searched cell and its probes (``explorer_chart``), starting at two-hop's cell whose
    bracket is tightest (section 4.6's pair); None while no cell has a probe."""
    cells, probe_rows = explorer_frames(summaries, experiments, probes, threshold)
    if not len(cells):
        return None
    pair = bracket_pair(summaries["twohop"]) if len(summaries.get("twohop", [])) else None
    start = None
    if pair is not None:
        label = experiment_label("twohop", experiments["twohop"])
        start = cells[(cells["experiment"] == label) & (cells["N"] == pair["N"]) & (cells["seed"] == pair["seed"])].iloc[0]
    return explorer_chart(cells, probe_rows, start, threshold)


# What the reader sees: each table the chapter shows, with headers that say what a column is.

PROBE_COLUMNS = {"task": "task", "N": "N", "model": "model", "seed": "seed", "n_train": "training examples",
                 "success": "reached the threshold", "stopped": "stopped by",
                 "steps": "steps", "best_type0": "best ID accuracy", "final_train": "final training accuracy",
                 "minutes": "minutes"}


def probes_view(probes: pd.DataFrame, caption: str | None = None) -> ReaderTable:
    """Rows of the probe table for the reader."""
    return reader_table(probes, PROBE_COLUMNS, formats={"best_type0": ".1%", "final_train": ".1%", "minutes": ".1f"},
                        caption=caption)


def cache_status_view(summaries: Mapping[str, pd.DataFrame]) -> ReaderTable:
    """``cache_status`` for the reader."""
    return reader_table(cache_status(summaries), {"experiment": "experiment", "cells": "cells in the cache"})


CELL_COLUMNS = {"N": "N", "seed": "seed", "status": "search", "low": "largest failing n", "high": "smallest succeeding n",
                "n_req": "n_req (estimate)", "next_n": "next n to probe", "probes": "probes",
                "eligible": "ID-eligible inputs", "low_capped": "failing probe stopped by the step cap",
                "minutes": "run minutes"}


def cells_view(summary: pd.DataFrame) -> ReaderTable:
    """A search summary (one row per cell) for the reader; n_req is the bracket's geometric mean."""
    columns = {c: h for c, h in CELL_COLUMNS.items() if c in summary}
    return reader_table(summary, columns or {c: c for c in summary.columns})


def pool_view(id_pool: pd.DataFrame) -> ReaderTable:
    """``pool_shares`` for the reader: the required data against the ID pool."""
    return reader_table(id_pool, {"N": "N", "seed": "seed", "low": "largest failing n", "high": "smallest succeeding n",
                                  "n_req": "n_req (estimate)", "eligible": "ID-eligible inputs (the pool)",
                                  "share_of_pool": "n_req / pool", "low_capped": "failing probe stopped by the step cap",
                                  "probes": "probes", "minutes": "run minutes"},
                        formats={"share_of_pool": ".1%"})


def coverage_fits_view(cov_fit: pd.DataFrame) -> ReaderTable:
    """``coverage_fits`` for the reader."""
    columns = {"k": "k", "target": "share of ID items covered", "c": "exponent c", "r2": "R²", "N range": "N range",
               "theory 2.5 - 0.5/k": "theory 2.5 - 0.5/k"}
    if not len(cov_fit):
        cov_fit = pd.DataFrame(columns=list(columns))
    return reader_table(cov_fit, columns, formats={"target": ".0%", "c": ".2f", "r2": ".3f", "theory 2.5 - 0.5/k": ".2f"})


def exponent_view(comparison: pd.DataFrame) -> ReaderTable:
    """``exponent_comparison`` for the reader (the interval only where there is one)."""
    ranged = comparison.assign(interval=[f"{lo:.2f} to {hi:.2f}" if pd.notna(lo) and lo != hi else ""
                                         for lo, hi in zip(comparison["c_low"], comparison["c_high"])])
    return reader_table(ranged, {"what": "exponent", "c": "c", "interval": "95% interval", "source": "source"},
                        formats={"c": ".2f"})


def sizes_view(sizes: pd.DataFrame) -> ReaderTable:
    """``size_table`` for the reader."""
    columns = {"model": "model", "parameters": "parameters", "cells finished": "cells finished", "cells": "cells",
               "exponent": "exponent c", "interval": "95% interval", "mean n_req": "mean n_req",
               "unreachable at N": "no success at N", "capped at N": "capped at N"}
    if not len(sizes):
        sizes = pd.DataFrame(columns=list(columns))
    return reader_table(sizes, columns, formats={"exponent": ".2f", "mean n_req": ",.0f"})


def architectures_view(models: pd.DataFrame) -> ReaderTable:
    """``size_table`` over architectures, for the reader."""
    columns = {"model": "model", "family": "architecture", "parameters": "parameters",
               "cells finished": "cells finished", "cells": "cells", "N values": "values of N", "seeds": "seeds",
               "exponent": "exponent c", "interval": "95% interval", "mean n_req": "mean n_req",
               "unreachable at N": "no success at N"}
    if not len(models):
        models = pd.DataFrame(columns=list(columns))
    return reader_table(models, columns, formats={"parameters": ",.0f", "exponent": ".2f", "mean n_req": ",.0f"},
                        caption="Each architecture on the Mamba's cells (two-hop, the same N and seeds)")


def chains_view(chains: pd.DataFrame) -> ReaderTable:
    """``chain_table`` for the reader."""
    return reader_table(chains, {"task": "task", "N values": "N values", "exponent": "exponent c",
                                 "interval": "95% interval", "seeds": "seeds", "paper": "paper's c",
                                 "finished cells": "finished cells"}, formats={"exponent": ".2f", "paper": ".2f"})
