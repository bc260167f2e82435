"""Each measured exponent under two give-up rules, set beside the paper's by one written rule.

The authors' rule gives up 100 epochs after the fit, which is a few hundred steps for a small training set, so
it can push n_req up where n is small and flatten the fit; the step floor (covlib.search.recheck) does not
shrink with the training set. Chapters 4 and 7 show both, the local slopes between adjacent N, and a verdict."""
from __future__ import annotations

import itertools
from collections.abc import Collection, Mapping, Sequence

import numpy as np
import pandas as pd

from covlib.analyses.fits import exponent_fit
from covlib.base.paper import REQUIRED_DATA_TWOHOP_AUTHORS
from covlib.search.cells import FINISHED, Cell
from covlib.search.required_data import search_states
from covlib.search.summary import summarise

VERDICTS = ("reproduced", "lower_small_n", "not_reproduced")
# how a reader reads each verdict
VERDICT_WORDS = {"reproduced": "reproduced", "lower_small_n": "lower, consistent with small N",
                 "not_reproduced": "not reproduced",
                 # the equivalence rule's (covlib.analyses.equivalence), which replaced this module's rule
                 "inconclusive": "inconclusive", "differs": "differs"}

# the widest 95% interval that can reproduce an exponent: a wider one cannot tell the paper's law from one half a
# power of N steeper or shallower, the size of the gaps the paper reports between tasks and between CoT and plain
MAX_INTERVAL_WIDTH = 1.0

# The book's verdicts follow covlib.analyses.equivalence; this module's rule (the earlier one, in RULE_VERSIONS'
# third version) stays to show what each earlier version says on today's fits (chapter 4, section 4.8)


def rule_summary(cells: Sequence[Cell], probes: pd.DataFrame, give_up_floor: int = 0) -> pd.DataFrame:
    """The search summary of ``cells`` under the give-up rule with ``give_up_floor`` (0: the authors')."""
    if not len(probes) or not cells:
        return pd.DataFrame()
    return summarise(search_states(cells, probes, starts={c.key(): 0 for c in cells}, give_up_floor=give_up_floor))


def finished_cells(summary: pd.DataFrame) -> list[tuple[int, int]]:
    """The (N, seed) of a search summary's finished cells (bracketed, or unreachable within the pool)."""
    if not len(summary):
        return []
    done = summary[summary["status"].isin(FINISHED)]
    return [(int(N), int(seed)) for N, seed in zip(done["N"], done["seed"])]


def rule_label(give_up_floor: int) -> str:
    """How a reader names a rule: "the authors' rule (100 epochs)" or "the floor (100 epochs or 2,000 steps)"."""
    return "the authors' rule (100 epochs)" if not give_up_floor else f"the floor (100 epochs or {give_up_floor:,} steps)"


def exponents_by_rule(cells_of: Mapping[str, Sequence[Cell]], probes: pd.DataFrame, floors: Sequence[int],
                      paper: Mapping[str, float], reps: int = 2000,
                      floor_only: Mapping[str, Collection[Cell]] | None = None) -> pd.DataFrame:
    """One row per (exponent, rule): c, its interval (None below 4 values of N), N range, values of N, seeds,
    the cells finished and those still searching under that rule, the paper's exponent, and the fit itself.
    Under a floor, an exponent is fitted only once every cell the authors' rule finished (bracketed, or
    unreachable within the ID pool) is finished under the floor too (``pending`` counts those that are not): a
    fit on the cells that happen to be done first (those whose lower ends already trained long enough, at the
    largest N) would not be the same exponent, and a cell the pool seemed to cut off may gain a bracket.
    ``floor_only`` names, per exponent, the cells searched under the floor alone (experiments.floor_only_cells):
    the authors' rule leaves them out (they are not its cells, nor still searching under it), and under the floor
    they join the fit together, once every one of them has finished (``held`` counts the finished ones held back
    until then; ``summary`` is the cells the fit reads), for the same reason: the Mamba's second seed at its two
    smallest N alone would tilt the fit."""
    rows = []
    for name, cells in cells_of.items():
        authors_finished = set()
        left_out = {c.key() for c in (floor_only or {}).get(name, ())}
        added = {(c.N, c.seed) for c in cells if c.key() in left_out}
        for floor in floors:
            summary = rule_summary(cells if floor else [c for c in cells if c.key() not in left_out], probes, floor)
            finished = set(finished_cells(summary))
            searching = int((summary["status"] == "searching").sum()) if len(summary) else 0
            held = 0
            if floor and added - finished and len(summary):  # the added cells wait for each other
                cell_of = pd.Series(list(zip(summary["N"].astype(int), summary["seed"].astype(int))), index=summary.index)
                held = len(added & finished)
                summary = summary[~cell_of.isin(added)]
            done = summary.dropna(subset=["n_req"]) if len(summary) else summary
            if not floor:
                authors_finished = finished
            pending = len(authors_finished - finished) if floor else 0
            fit = exponent_fit(done[["N", "seed", "n_req"]], reps=reps) if len(done) and not pending else None
            rows.append({"exponent": name, "give_up_floor": floor, "rule": rule_label(floor),
                         "c": fit["c"] if fit else np.nan, "ci_low": fit["c_low"] if fit else np.nan,
                         "ci_high": fit["c_high"] if fit else np.nan,
                         "N_min": fit["N_min"] if fit else np.nan, "N_max": fit["N_max"] if fit else np.nan,
                         "n_values": fit["n_values"] if fit else 0, "seeds": fit["seeds"] if fit else 0,
                         "finished": len(done), "pending": pending, "held": held, "searching": searching,
                         "paper": paper.get(name, np.nan), "fit": fit, "summary": summary})
    return pd.DataFrame(rows)


def local_slopes(summary: pd.DataFrame) -> pd.DataFrame:
    """The slope of log n_req against log N between each pair of adjacent N with finished cells: through the
    geometric means of the two cells (``slope``); its range over every pairing of one seed at each N
    (``slope_min``, ``slope_max``: how far the seed gap alone moves it); and the range the brackets allow
    (``bracket_min``, ``bracket_max``: over those pairings, from the lower cell's smallest succeeding n to the
    upper one's largest failing n, and back). A cell's n_req lies somewhere in its bracket, so between close
    values of N the bracket range is the one a verdict may lean on; without bracket ends it is the seed range."""
    columns = ["N_low", "N_high", "slope", "slope_min", "slope_max", "bracket_min", "bracket_max", "pairs"]
    done = summary.dropna(subset=["n_req"]) if len(summary) else summary
    rows = []
    cells = {int(N): g for N, g in done.groupby("N")} if len(done) else {}
    for a, b in itertools.pairwise(sorted(cells)):
        span = np.log(b / a)
        lower, upper = (_ends(cells[N]) for N in (a, b))
        pairs = [np.log(y / x) / span for (x, _, _), (y, _, _) in itertools.product(lower, upper)]
        narrowest = [np.log(y_low / x_high) / span for (_, _, x_high), (_, y_low, _) in itertools.product(lower, upper)]
        widest = [np.log(y_high / x_low) / span for (_, x_low, _), (_, _, y_high) in itertools.product(lower, upper)]
        mean = (np.mean([np.log(y) for y, _, _ in upper]) - np.mean([np.log(x) for x, _, _ in lower])) / span
        rows.append({"N_low": a, "N_high": b, "slope": float(mean), "slope_min": float(min(pairs)),
                     "slope_max": float(max(pairs)), "bracket_min": float(min(narrowest)),
                     "bracket_max": float(max(widest)), "pairs": len(pairs)})
    return pd.DataFrame(rows, columns=columns)


def _ends(cells: pd.DataFrame) -> list[tuple[float, float, float]]:
    """(n_req, low, high) of each finished cell at one N; the estimate itself stands in for a missing end."""
    n_req = cells["n_req"].to_numpy(float)
    low = cells["low"].to_numpy(float) if "low" in cells else n_req
    high = cells["high"].to_numpy(float) if "high" in cells else n_req
    return [(n, lo if np.isfinite(lo) else n, hi if np.isfinite(hi) else n) for n, lo, hi in zip(n_req, low, high)]


def paper_local_slopes(required: Mapping[int, float] = REQUIRED_DATA_TWOHOP_AUTHORS) -> pd.DataFrame:
    """The local slopes of the authors' published two-hop n_req (N = 50-200: 1.83, 1.94, 2.71, 2.41)."""
    summary = pd.DataFrame({"N": list(required), "seed": 0, "n_req": list(required.values())})
    return local_slopes(summary)


def verdict(fit: dict | None, slopes: pd.DataFrame, paper: float, slope_range: str = "bracket",
            max_width: float = MAX_INTERVAL_WIDTH) -> tuple[str, str]:
    """The verdict of the earlier rule (RULE_VERSIONS) on one fit and its local slopes, with the reason in a phrase. ``slope_range``
    ("bracket" or "seed") and ``max_width`` (inf: no cap) give the earlier versions of the rule (RULE_VERSIONS)."""
    if fit is None or np.isnan(paper):
        return "not_reproduced", "no fit" if fit is None else "no published exponent"
    if np.isnan(fit["c_low"]):
        return "not_reproduced", f"no interval from {fit['n_values']} values of N"
    last = slopes.iloc[-1] if len(slopes) else None
    holds = fit["c_low"] <= paper <= fit["c_high"]
    width = fit["c_high"] - fit["c_low"]
    ends = {"seed": "slope", "bracket": "bracket"}[slope_range]  # local_slopes' columns for each range
    agrees = last is not None and last[f"{ends}_min"] <= paper <= last[f"{ends}_max"]
    where = (f"local slope {last['slope']:.2f} between N = {last['N_low']:.0f} and {last['N_high']:.0f} "
             f"({_beside(last['bracket_min'], paper)} to {_beside(last['bracket_max'], paper)} within the brackets)"
             if last is not None else "no local slope")
    if holds and width <= max_width and agrees:
        # the local slope's point value may sit far from the paper's while its brackets still allow it: say so
        return "reproduced", f"the interval holds {paper:.2f} and the local slope's brackets allow it; {where}"
    if fit["c"] < paper and last is not None and last["slope"] > fit["c"]:
        return "lower_small_n", f"{fit['c']:.2f} below {paper:.2f}; {where}, steeper than the fit"
    if holds and width > max_width:
        return "not_reproduced", (f"the interval ({fit['c_low']:.2f} to {fit['c_high']:.2f}) holds {paper:.2f} but is "
                                  f"{width:.2f} wide, too wide to decide; {where}")
    reason = (f"the interval ({_beside(fit['c_low'], paper)} to {_beside(fit['c_high'], paper)}) misses"
              if not holds else "the local slope disagrees with")
    return "not_reproduced", f"{reason} {paper:.2f}; {where}"


def _beside(bound: float, paper: float) -> str:
    """A range's end to two decimals, or to three where two would show it equal to the paper's value it is
    judged against (1.763 against 1.76: outside, and the reader should see why)."""
    return f"{bound:.3f}" if f"{bound:.2f}" == f"{paper:.2f}" and bound != paper else f"{bound:.2f}"


def verdict_table(exponents: pd.DataFrame) -> pd.DataFrame:
    """Per exponent: the verdict under the floor where every cell of it has finished under the floor, else under
    the authors' rule (``decided_by`` says which), with its reason and how wide a range of local slopes the
    brackets at its two largest N allow (``slope_range``)."""
    rows = []
    for name, group in exponents.groupby("exponent", sort=False):
        floored = group[group["give_up_floor"] > 0]
        use = floored.iloc[0] if len(floored) and floored.iloc[0]["fit"] else group[group["give_up_floor"] == 0].iloc[0]
        slopes = local_slopes(use["summary"])
        word, reason = verdict(use["fit"], slopes, use["paper"])
        last = slopes.iloc[-1] if len(slopes) else None
        rows.append({"exponent": name, "verdict": word, "decided_by": use["rule"], "reason": reason,
                     "c": use["c"], "paper": use["paper"],
                     "slope_range": np.nan if last is None else last["bracket_max"] - last["bracket_min"]})
    return pd.DataFrame(rows)


def exponents_for_reader(exponents: pd.DataFrame) -> pd.DataFrame:
    """exponents_by_rule as the columns a reader's table shows: the interval and the N span as text, and the
    cells each rule has finished and still has to re-search."""
    def interval(r) -> str:
        if r["pending"]:
            return f"waiting for {r['pending']} cells to finish under this rule"
        if np.isnan(r["c"]):
            return "no fit yet"
        if np.isnan(r["ci_low"]):
            return f"none ({r['n_values']} values of N)"
        return f"{r['ci_low']:.2f} to {r['ci_high']:.2f}"

    def span(r) -> str:
        return "" if np.isnan(r["N_min"]) else f"{r['N_min']:.0f}-{r['N_max']:.0f}"

    return exponents.assign(interval=exponents.apply(interval, axis=1), N_span=exponents.apply(span, axis=1),
                            cells=exponents["finished"].astype(str) + " finished"
                            + exponents["searching"].map(lambda s: f", {s} still searching" if s else "")
                            + exponents.get("held", pd.Series(0, index=exponents.index)).map(
                                lambda h: f", {h} held back until the cells added under the floor all finish"
                                if h else ""))


def rule_metrics(exponents: pd.DataFrame, verdicts: pd.DataFrame) -> dict[str, float | str]:
    """The floor's exponents and the verdicts as recorded metrics: exponent_<X>_floor with _n_values and _seeds,
    _ci_low and _ci_high where there is an interval (as exponent_metrics does), and verdict_<X>."""
    out: dict[str, float | str] = {}
    for _, r in exponents[exponents["give_up_floor"] > 0].iterrows():
        key = f"exponent_{r['exponent']}_floor"
        out |= {key: float(r["c"]), f"{key}_n_values": int(r["n_values"]), f"{key}_seeds": int(r["seeds"])}
        if not np.isnan(r["ci_low"]):
            out |= {f"{key}_ci_low": float(r["ci_low"]), f"{key}_ci_high": float(r["ci_high"])}
    for _, r in verdicts.iterrows():
        out[f"verdict_{r['exponent']}"] = r["verdict"]
    return out


# The rules that decided verdicts before the equivalence rule (covlib.analyses.equivalence), in the order they were
# written: each was changed after data it then decided, and chapter 4 shows what each gives on today's data.
RULE_VERSIONS = (
    {"version": 1, "commit": "fc3e180", "date": "2026-11-26", "slope_range": "seed", "max_width": np.inf,
     "rule": "the 95% interval holds the paper's value, and so does the range of local slopes between the two "
             "largest N over the pairings of seeds",
     "moved when made": "first written, with the exponents it decided in view"},
    {"version": 2, "commit": "58a4535", "date": "2026-11-26", "slope_range": "bracket", "max_width": np.inf,
     "rule": "as 1, but the local slope's range is the one the two cells' brackets allow (wider)",
     "moved when made": "three-hop CoT to reproduced: its seed range at N = 24 (1.55-1.59) had excluded 1.76"},
    {"version": 3, "commit": "a206cb7", "date": "2026-11-27", "slope_range": "bracket", "max_width": MAX_INTERVAL_WIDTH,
     "rule": "as 2, and the 95% interval is at most 1 wide",
     "moved when made": "five-hop CoT kept from reproduced: its interval 0.35-2.02 held 1.80"},
)


def verdicts_by_version(exponents: pd.DataFrame) -> pd.DataFrame:
    """Each earlier rule (RULE_VERSIONS) applied to today's fits, one column per version: which verdicts each
    change of the rule moves on the same data (verdict_table's choice of fit, floor where it has one)."""
    names = exponents["exponent"].drop_duplicates() if len(exponents) else pd.Series([], dtype=str)
    out = pd.DataFrame({"exponent": names.to_numpy()})
    for v in RULE_VERSIONS:
        words = []
        for name in out["exponent"]:
            group = exponents[exponents["exponent"] == name]
            floored = group[group["give_up_floor"] > 0]
            use = floored.iloc[0] if len(floored) and floored.iloc[0]["fit"] else group[group["give_up_floor"] == 0].iloc[0]
            words.append(verdict(use["fit"], local_slopes(use["summary"]), use["paper"], v["slope_range"],
                                 v["max_width"])[0])
        out[f"rule {v['version']} ({v['commit']})"] = words
    return out
