"""Chapter 7's required-data searches and its presets: which searches each preset runs (and whether it makes
miniatures here), where their probes go, where they stand, the exponents fitted to them, and whether CoT rescues
non-tree."""
from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import altair as alt
import numpy as np
import pandas as pd

from covlib.analyses.fits import describe_exponent
from covlib.base.paper import EXPONENTS, EXPONENTS_COT
from covlib.base.paths import repository_path
from covlib.figures.give_up_rule import reader_name
from covlib.figures.required_data import estimates_chart, requirement_frame
from covlib.figures.style import pending_chart
from covlib.figures.text import sentence_start
from covlib.search.cells import ProbeRules
from covlib.search.experiments import BOOK_EXPERIMENTS, experiment_command, floor_only_N, probe_table
from covlib.search.probes import rule_rows
from covlib.search.recheck import BOOK_FLOOR

FAKE_BRIDGE_TABLE = "data/cot/probes_fakebridge.csv"  # relative to the repository


# chapter 7's required-data searches (covlib.search.experiments.experiment_cells / experiment_command): CoT rows go to
# chapter 4's probe table; placeholder-bridge rows to a table of their own (the book's has no column for them)
EXPERIMENTS: dict[str, dict] = {
    # two seeds over five N each (CoT probes cost 1-2
    # CPU-minutes each here, a tenth of a plain three-hop probe)
    "twohop_cot": {"task": "twohop", "N": [20, 25, 30, 40, 50, 70, 80], "seeds": [0, 1], "model": "L4-d128",
                   "cot": True,
                   # N = 70, the plain search's largest N, under the floor alone: it narrows the exponent and the
                   # paired CoT claim most per CPU-hour (`covlib scaling value`); ~22k examples outlast 6,000 steps.
                   # N = 80 (~26k examples predicted) is the step expected to change most verdicts per CPU-hour
                   # after five-hop CoT's N = 16 (data/QUEUE.sh); it has no plain two-hop cell to pair with
                   "floor_only_N": [70, 80], "step_cap_by_N": {70: 12000, 80: 12000}},
    # N = 24, 30 and 40 decide the exponent under the floor (at N = 40 a slope of 1.45 predicts about 5.0k
    # examples, 1.76 about 6.2k); they are searched under the floor alone (data/QUEUE.sh)
    "threehop_cot": {"task": "threehop", "N": [10, 12, 14, 16, 20, 24, 30, 40, 50], "seeds": [0, 1],
                     "model": "L4-d128", "cot": True, "floor_only_N": [24, 30, 40, 50]},
    # five-hop is trained with CoT (the authors' setting), two seeds, N = 6-10; N = 12 and 14 are searched under
    # the floor alone, from the power law through N = 6-10 (data/QUEUE.sh)
    "fivehop_cot": {"task": "fivehop", "N": [6, 7, 8, 9, 10, 12, 14, 16], "seeds": [0, 1], "model": "L4-d128",
                    "cot": True, "floor_only_N": [12, 14, 16]},
    # ... and without CoT at the smallest N only, searched to its end or to the pool: what the bridges save there
    "fivehop": {"task": "fivehop", "N": [6], "seeds": [0], "model": "L4-d128"},
    # the paper: CoT does not rescue non-tree; searched where a plain non-tree search already fails (chapter 6)
    "nontree_cot": {"task": "nontree", "N": [20, 25, 30], "seeds": [0], "model": "L4-d128", "cot": True},
    # one seed, two N, under the authors' rule: each failing probe costs as much as a plain one
    "twohop_fakebridge": {"task": "twohop", "N": [25, 30], "seeds": [0], "model": "L4-d128", "fake_bridge": True,
                          "table": FAKE_BRIDGE_TABLE},
    # the same question under the step floor, on three N and two seeds (what a conclusion needs: section 7.4),
    # beside two-hop's plain and CoT cells at the same N under the same floor (data/QUEUE.sh)
    "twohop_fakebridge_floor": {"task": "twohop", "N": [25, 30, 40], "seeds": [0, 1], "model": "L4-d128",
                                "fake_bridge": True, "table": FAKE_BRIDGE_TABLE, "give_up_floor": BOOK_FLOOR},
}


_DEFAULT_KNOBS = {
    # the searches whose rows the cache holds (chapter 4's plain ones, this chapter's CoT and placeholder ones)
    "experiments": {"twohop": BOOK_EXPERIMENTS["twohop"], "threehop": BOOK_EXPERIMENTS["threehop"],
                    "twohop_cot": EXPERIMENTS["twohop_cot"], "threehop_cot": EXPERIMENTS["threehop_cot"],
                    "fivehop": EXPERIMENTS["fivehop"], "fivehop_cot": EXPERIMENTS["fivehop_cot"]},
    "fake": EXPERIMENTS["twohop_fakebridge"],
    "fake_floor": EXPERIMENTS["twohop_fakebridge_floor"],
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
        "fake_floor": {"task": "twohop", "N": [6], "seeds": [0], "model": "smoke", "fake_bridge": True,
                       "give_up_floor": BOOK_FLOOR},
        "nontree": {"task": "nontree", "N": [6], "seeds": [0], "model": "smoke", "cot": True},
        "rules": ProbeRules(step_cap=200, give_up_epochs=10, eval_every=25, batch_size=128, test_size_per_type=100),
        "miniature": True,  # train the tiny models and run the miniature searches here, under out_dir
        "note": "",
    },
    "default": _DEFAULT_KNOBS,
    "paper": _DEFAULT_KNOBS | {"note": "The paper's scale (8-layer GPT-2, N = 50 to 200) needs a GPU; "
                                       "this preset reads the default cache."},
}


TASKS = ("twohop", "threehop")  # the tasks whose required data is searched over N with and without CoT
# searched over N with CoT only (the authors train five-hop with CoT targets only), and without CoT at one N at most
COT_ONLY_TASKS = ("fivehop",)


SEARCH_COLUMNS = ["task", "cot", "N", "seed", "status", "low", "high", "n_req", "eligible", "probes", "minutes"]


# the CoT exponents set beside the paper's under both give-up rules (section 7.1; chapter 4 tests the rule)
COT_RULE_EXPONENTS = {f"{task}_cot": c for task, c in EXPONENTS_COT.items()}
# the paper's comparative claims this chapter tests (covlib.search.reproduction.CLAIMS; chapter 4 tests them all)
COT_CLAIMS = ("cot_flattens_twohop", "cot_flattens_threehop")
# the plain exponents they are compared with, refitted here under the floor too
PLAIN_RULE_EXPONENTS = {task: EXPONENTS[task] for task in TASKS}


def floor_fits(*exponents: pd.DataFrame) -> dict[str, dict | None]:
    """Each exponent's fit under the floor, from exponents_by_rule tables (None while its cells wait)."""
    return {r["exponent"]: r["fit"] for table in exponents for _, r in table.iterrows() if r["give_up_floor"] > 0}


def _unfinished(summary: pd.DataFrame) -> pd.Series:
    """Which cells of a search summary are not finished (not started or still searching)."""
    return summary["status"].isin(["not started", "searching"])


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


def pending_note(summaries: Mapping[str, pd.DataFrame], experiments: Mapping[str, dict],
                 floor_only: Mapping[str, pd.DataFrame] | None = None, floor: int = BOOK_FLOOR) -> str:
    """Which searches the cache has not finished, with the command that resumes each ("" when none):
    ``summaries`` under the authors' rule, and ``floor_only`` (summaries under the floor of the cells an
    experiment searches under the floor alone, its floor_only_N)."""
    # each command searches the N of the unfinished cells only (a higher step cap there would retrain the probes
    # that a lower cap stopped at the other N)
    parts = [f"{reader_name(name)}: {int(_unfinished(s).sum())} of {len(s)} cells "
             f"(`{experiment_command(experiments[name], Ns=sorted(set(s.loc[_unfinished(s), 'N'])))}`)"
             for name, s in summaries.items() if _unfinished(s).any()]
    parts += [f"{reader_name(name)} under the floor alone, at N = {', '.join(map(str, sorted(set(s.loc[_unfinished(s), 'N']))))}: "
              f"{int(_unfinished(s).sum())} of {len(s)} cells "
              f"(`{experiment_command(experiments[name], Ns=floor_only_N(experiments[name]), give_up_floor=floor)}`)"
              for name, s in (floor_only or {}).items() if len(s) and _unfinished(s).any()]
    if not parts:
        return ""
    return ("**Not finished yet** (left out of the fits; each command resumes its search from the probe table): "
            + "; ".join(parts) + ".")


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
    name = reader_name(task)
    if with_cot["c_high"] < plain["c_low"]:
        return f" The {name} intervals do not overlap: CoT lowers the exponent here, as the paper reports."
    if with_cot["c_low"] > plain["c_high"]:
        return f" The {name} intervals do not overlap, and CoT's exponent is the higher one, against the paper."
    return (f" The {name} intervals overlap, so this cache does not separate the two exponents (the CoT fit rests on "
            f"{with_cot['points']} estimates); the data ratio below is the sharper comparison.")


def exponent_text(fits: Mapping[str, dict | None]) -> str:
    """The measured exponents beside the paper's, and whether the intervals separate them."""
    parts = [f"{sentence_start(reader_name(task))}: with CoT {describe_exponent(fits[f'{task}_cot'])} against the paper's {EXPONENTS_COT[task]:.2f}; "
             f"without, {describe_exponent(fits[task])} (paper {EXPONENTS[task]:.2f})" for task in TASKS]
    parts += [f"{sentence_start(reader_name(task))} with CoT: {describe_exponent(fits[f'{task}_cot'])} against the paper's "
              f"{EXPONENTS_COT[task]:.2f}" for task in COT_ONLY_TASKS if f"{task}_cot" in fits]
    return "Measured on this CPU: " + ". ".join(parts) + "." + "".join(compare_fits(fits, t) for t in TASKS)


def steps_below_bracket(probes: pd.DataFrame, summary: pd.DataFrame) -> pd.Series:
    """The optimiser steps of the failing probe at each bracketed cell's lower end: how long the give-up rule
    let the largest failure train (one value per bracketed cell of a search summary under the authors' rule;
    a rerun of that lower end under a step floor is another rule's probe and is not read)."""
    done = summary.dropna(subset=["low"])
    if not len(done) or not len(probes):
        return pd.Series(dtype=float)
    keys = ["task", "cot", "N", "seed", "model"]
    lows = done[keys + ["low"]].astype({"low": int, "N": int, "seed": int, "cot": bool})
    authors = rule_rows(probes, 0)[0]
    failed = authors[~authors["success"].astype(bool)].astype({"N": int, "seed": int, "n_train": int, "cot": bool})
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


def unfinished_command(summary: pd.DataFrame, experiment: dict, miniature: bool) -> str:
    """The command that finishes a search's unfinished cells ("" when all are done, or for a miniature)."""
    return experiment_command(experiment) if not miniature and _unfinished(summary).any() else ""


def placeholder_search_text(fake_summary: pd.DataFrame, described: str, experiment: dict, miniature: bool) -> str:
    """Where the placeholder's required-data searches stand (``described``: their cells in words)."""
    command = "" if miniature else experiment_command(experiment)
    if (fake_summary["status"] == "not started").all():
        return ("The placeholder's required-data search is not in the cache yet"
                + (f" (`{command}`)." if command else "."))
    return ("The placeholder searches: " + described
            + (f" To finish them: `{command}`." if command and _unfinished(fake_summary).any() else ""))


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
