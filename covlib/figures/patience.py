"""What a reader sees of whether the step floor is itself patient enough: its life table of successes past the
fit, the failures still climbing when it ended, and where, along N, the brackets it left to patience sit."""
from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from covlib.figures.tables import ReaderTable, reader_table
from covlib.figures.text import count_of
from covlib.search.cells import ProbeRules
from covlib.search.patience import (
    lower_end_accuracy,
    near_misses,
    steps_past_fit,
    still_climbing,
    success_life_table,
)

CLIMB = 0.01  # a rise of the best ID accuracy, over a failure's last CLIMB_WINDOW steps, that counts as climbing
CLIMB_WINDOW = 500


def patience_view(life: pd.DataFrame) -> ReaderTable:
    """The life table, one row per window of steps past the fit."""
    shown = life.assign(window=[f"{s:,}-{e:,}" for s, e in zip(life["start"], life["end"])])
    return reader_table(shown, {"window": "steps past the fit", "at_risk": "probes still short of 99%",
                                "successes": "reach it in the window", "hazard": "share that reach it"},
                        formats={"hazard": ".1%"})


def patience_note(probes: pd.DataFrame, curves: pd.DataFrame, floor: int, window: int = 250,
                  rules: ProbeRules = ProbeRules()) -> str:
    """Whether probes under the floor were still succeeding, or still climbing, when it ended, in prose ("" before
    any floor probe)."""
    if not (probes["give_up_floor"].astype(int) == floor).any():
        return ""
    life = success_life_table(probes, floor, window)
    runs = steps_past_fit(probes, floor)
    last = life.iloc[-1]
    if not last["at_risk"]:
        return ""  # every probe ended before the floor's last window: nothing to say of its end
    peak = life.loc[life["hazard"].idxmax()]
    late = int(life.loc[life["start"] >= 0.75 * floor, "successes"].sum())
    won, failed = int(runs["success"].sum()), int((~runs["success"]).sum())
    text = (f"**Is the floor itself long enough?** Of the {count_of(len(runs), 'probe')} run under it that fitted "
            f"their training set, {won} succeeded, {late} of them in its last quarter (from {0.75 * floor:,.0f} steps "
            f"past the fit). Among the probes still short of 99%, the share reaching it within the next {window} "
            f"steps peaked at {peak['hazard']:.0%} ({int(peak['start']):,}-{int(peak['end']):,} steps past the fit) "
            f"and had fallen to {last['hazard']:.0%} in the floor's last {window} ({int(last['successes'])} of "
            f"{int(last['at_risk'])}). ")
    if not failed:
        return text
    misses = near_misses(probes, floor)
    rising = still_climbing(probes, curves, floor, CLIMB_WINDOW)
    climbing = rising[rising["gain"] > CLIMB]
    near_rising = int((climbing["best_type0"] >= climbing["threshold"] - 0.01 - 1e-12).sum())
    crossover = floor * rules.batch_size / rules.give_up_epochs
    text += (f"{len(misses)} of the {failed} failures ended within one point of the threshold"
             + (f", {near_rising} of those still climbing" if len(rising) else "") + ". ")
    if len(rising):
        text += (f"Of the {count_of(len(rising), 'failure')} whose learning curve the table kept, {len(climbing)} were "
                 f"still climbing when they gave up (best ID accuracy up more than {CLIMB * 100:g} point in their last "
                 f"{CLIMB_WINDOW} steps; the median rise over all of them is {rising['gain'].median() * 100:.1f} points). ")
    return text + (
        "The floor removes the epoch rule's dependence on n below about "
        f"{crossover:,.0f} examples ({rules.give_up_epochs:g} epochs at batch {rules.batch_size} are {floor:,} steps "
        "there), not the dependence on patience itself: n_req here is the data that reaches 99% within about "
        f"{floor:,} steps past the fit, or 100 epochs where those are longer, so the largest training sets get more "
        "patience again. A longer floor would flip some more failures, and each that is a bracket's lower end "
        "would lower its cell's n_req; which way that tilts a fit depends on where along N those lower ends sit.")


def lower_end_note(exponents: pd.DataFrame, probes: pd.DataFrame, curves: pd.DataFrame, floor: int,
                   names: Callable[[str], str], min_to_lean: int = 4) -> str:
    """For each exponent fitted under the floor, the brackets whose failing lower end was still climbing when it
    gave up (patience, not data, stopped it: a longer floor could lower those cells' n_req), where they sit along
    N, and which way a longer floor would tilt the fits: small-N lower ends steepen them, large-N ones flatten
    them (said only once ``min_to_lean`` lie off their series' middle N). ``exponents``: exponents_by_rule's rows
    (with their summaries); ``names`` gives an exponent its reader's name. "" when no exponent is fitted under it."""
    said, below, above, middle_count, unknown = [], 0, 0, 0, 0
    for _, r in exponents[(exponents["give_up_floor"] == floor) & exponents["c"].notna()].iterrows():
        ends = lower_end_accuracy(r["summary"], probes, curves, floor, CLIMB_WINDOW)
        rising = ends[ends["low_gain"] > CLIMB]
        unknown += int(ends["low_gain"].isna().sum())
        middle = ends["N"].median()
        below += int((rising["N"] < middle).sum())
        above += int((rising["N"] > middle).sum())
        middle_count += int((rising["N"] == middle).sum())
        where = f"N = {', '.join(str(int(N)) for N in sorted(rising['N']))}; " if len(rising) else ""
        said.append(f"{names(r['exponent'])} {len(rising)} of {len(ends)} ({where}its cells span N = "
                    f"{int(ends['N'].min())}-{int(ends['N'].max())})")
    if not said:
        return ""
    if below + above < min_to_lean:
        lean = f"too few to say which way a longer floor would tilt the fits (a lean needs {min_to_lean} off the middle)"
    elif below > 2 * above:
        lean = "they gather at small N, so a longer floor would likely steepen these fits further"
    elif above > 2 * below:
        lean = "they gather at large N, so a longer floor would likely flatten these fits"
    else:
        lean = ("they are spread over small and large N alike, so a longer floor would lower n_req across the "
                "range more than tilt the fits")
    at_middle = f", {middle_count} at it" if middle_count else ""
    no_curve = (f" ({count_of(unknown, 'lower end')} kept no learning curve, and "
                f"{'is' if unknown == 1 else 'are'} counted as flat)" if unknown else "")
    return (f"**Where patience still decides a bracket.** A bracket whose failing lower end had flattened out would "
            "likely hold with more patience: that training set had learnt what it could. One whose lower end was still climbing "
            f"(best ID accuracy up more than {CLIMB * 100:g} point in its last {CLIMB_WINDOW} steps) was stopped by its "
            "patience (the floor, or 100 epochs where those are longer): "
            f"{'; '.join(said)}{no_curve}. {below} of them lie below their series' middle N and {above} above "
            f"it{at_middle}: {lean}.")


def patience_metrics(probes: pd.DataFrame, curves: pd.DataFrame, floor: int, window: int = 250) -> dict[str, float]:
    """floor_hazard_last_window (the share of probes still short of 99% that reached it in the floor's last
    window; NaN before any floor probe), floor_near_misses (failures within one point of the threshold) and
    floor_failures_climbing (failures whose best ID accuracy still rose more than CLIMB in their last steps)."""
    if not (probes["give_up_floor"].astype(int) == floor).any():
        return {"floor_hazard_last_window": float("nan"), "floor_near_misses": 0, "floor_failures_climbing": 0}
    rising = still_climbing(probes, curves, floor, CLIMB_WINDOW)
    return {"floor_hazard_last_window": float(success_life_table(probes, floor, window)["hazard"].iloc[-1]),
            "floor_near_misses": len(near_misses(probes, floor)),
            "floor_failures_climbing": int((rising["gain"] > CLIMB).sum())}
