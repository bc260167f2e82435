"""What a reader sees of whether the step floor is itself patient enough: its life table of successes past the
fit, the failures still climbing when it ended, and where, along N, the brackets it left to patience sit."""
from __future__ import annotations

from collections.abc import Callable

import altair as alt
import numpy as np
import pandas as pd

from covlib.figures.style import legend_highlight, zoom
from covlib.figures.tables import ReaderTable, reader_table
from covlib.figures.text import count_of
from covlib.search.cells import ProbeRules
from covlib.search.patience import (
    lower_end_accuracy,
    near_misses,
    near_threshold,
    steps_past_fit,
    still_climbing,
    success_life_table,
    trained_past,
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
    near_rising = int(near_threshold(climbing).sum())
    crossover = rules.one_rule_size(floor)
    text += (f"{len(misses)} of the {failed} failures ended within one point of the threshold"
             + (f", {near_rising} of those still climbing" if len(rising) else "") + ". ")
    if len(rising):
        were = "was" if len(climbing) == 1 else "were"
        text += (f"Of the {count_of(len(rising), 'failure')} whose learning curve the table kept, {len(climbing)} "
                 f"{were} still climbing when they gave up (best ID accuracy up more than {CLIMB * 100:g} point in "
                 f"their last {CLIMB_WINDOW} steps; the median rise over all of them is "
                 f"{rising['gain'].median() * 100:.1f} points). ")
    text += _beyond_the_floor(probes, floor)
    return text + (
        "The floor removes the epoch rule's dependence on n below about "
        f"{crossover:,.0f} examples ({rules.give_up_epochs:g} epochs at batch {rules.batch_size} are {floor:,} steps "
        "there), not the dependence on patience itself: n_req here is the data that reaches 99% within about "
        f"{floor:,} steps past the fit, or 100 epochs where those are longer, so the largest training sets get more "
        "patience again. A longer floor would flip some more failures, and each that is a bracket's lower end "
        "would lower its cell's n_req; which way that tilts a fit depends on where along N those lower ends sit.")


def _beyond_the_floor(probes: pd.DataFrame, floor: int) -> str:
    """What the authors'-rule probes that trained past ``floor`` steps beyond their fit (large training sets,
    whose 100 epochs are longer) did after it ("" if none did)."""
    if not (probes["give_up_floor"].astype(int) == 0).any():
        return ""
    longer = trained_past(probes, floor)
    if not len(longer):
        return ""
    late = longer[longer["success"]]
    when = (f", at {int(late['past'].min()):,}-{int(late['past'].max()):,} steps past it" if len(late) > 1 else
            f", at {int(late['past'].iloc[0]):,} steps past it" if len(late) else "")
    return (f"Under the authors' rule, {count_of(len(longer), 'probe')} (all of at least "
            f"{int(longer['n_train'].min()):,} examples, where 100 epochs are longer) trained more than {floor:,} "
            f"steps past the fit; {len(late)} of them reached 99% only after that{when}. ")


def lower_ends(exponents: pd.DataFrame, probes: pd.DataFrame, curves: pd.DataFrame, floor: int,
               names: Callable[[str], str]) -> pd.DataFrame:
    """The failing lower end of every bracket of every exponent fitted under the floor (lower_end_accuracy),
    with the exponent's reader's name (``series``) and where its N sits in its series (``side``: below, middle
    or above its median N)."""
    parts = []
    for _, r in exponents[(exponents["give_up_floor"] == floor) & exponents["c"].notna()].iterrows():
        ends = lower_end_accuracy(r["summary"], probes, curves, floor, CLIMB_WINDOW)
        middle = ends["N"].median()
        side = np.select([ends["N"] < middle, ends["N"] > middle], ["below", "above"], "middle")
        parts.append(ends.assign(series=names(r["exponent"]), side=side))
    columns = ["series", "N", "seed", "low", "low_best", "low_gain", "side"]
    return pd.concat(parts, ignore_index=True)[columns] if parts else pd.DataFrame(columns=columns)


def lower_end_note(ends: pd.DataFrame, min_to_lean: int = 4) -> str:
    """For each series of ``ends`` (lower_ends), the brackets whose failing lower end was still climbing when it
    gave up (patience, not data, stopped it: a longer floor could lower those cells' n_req), where they sit
    along N, and which way a longer floor would tilt the fits: small-N lower ends steepen them, large-N ones
    flatten them (said only once ``min_to_lean`` lie off their series' middle N). "" when there are none."""
    if not len(ends):
        return ""
    said = []
    for name, g in ends.groupby("series", sort=False):
        rising = g[g["low_gain"] > CLIMB]
        where = f"N = {', '.join(str(int(N)) for N in sorted(rising['N']))}; " if len(rising) else ""
        said.append(f"{name} {len(rising)} of {len(g)} ({where}its cells span N = {int(g['N'].min())}-"
                    f"{int(g['N'].max())})")
    rising = ends[ends["low_gain"] > CLIMB]
    below, above, middle = ((rising["side"] == side).sum() for side in ("below", "above", "middle"))
    unknown = int(ends["low_gain"].isna().sum())
    if below + above < min_to_lean:
        lean = (f"too few to say which way a longer floor would tilt the fits (a lean needs {min_to_lean} off the "
                "middle)")
    elif below > 2 * above:
        lean = "they gather at small N, so a longer floor would likely steepen these fits further"
    elif above > 2 * below:
        lean = "they gather at large N, so a longer floor would likely flatten these fits"
    else:
        lean = ("they are spread over small and large N alike, so a longer floor would lower n_req across the "
                "range more than tilt the fits")
    at_middle = f", {middle} at it" if middle else ""
    no_curve = (f" ({count_of(unknown, 'lower end')} kept no learning curve, and "
                f"{'is' if unknown == 1 else 'are'} counted as flat)" if unknown else "")
    return (f"**Where patience still decides a bracket.** A bracket whose failing lower end had flattened out would "
            "likely hold with more patience: that training set had learnt what it could. One whose lower end was "
            f"still climbing (best ID accuracy up more than {CLIMB * 100:g} point in its last {CLIMB_WINDOW} steps) "
            "was stopped by its patience (the floor, or 100 epochs where those are longer): "
            f"{'; '.join(said)}{no_curve}. {below} of them lie below their series' middle N and {above} above "
            f"it{at_middle}: {lean}.")


def patience_bullet(ends: pd.DataFrame) -> str:
    """A summary's sentence: how many brackets' lower ends patience still decided, and what n_req then means
    ("" when no exponent is fitted under the floor, or none kept a curve)."""
    known = ends.dropna(subset=["low_gain"]) if len(ends) else ends
    if not len(known):
        return ""
    rising = int((known["low_gain"] > CLIMB).sum())
    return (f"Of the {count_of(len(known), 'bracket')} whose lower end kept a learning curve under the floor, "
            f"{rising} had that lower end still climbing when it gave up: n_req is the data needed within the "
            "floor's patience, and a longer floor would lower it (section 4.7 says where along N).")


def lower_ends_chart(ends: pd.DataFrame) -> alt.LayerChart:
    """Each bracket's failing lower end: how much its best ID accuracy still rose in its last steps, against N,
    one colour per series; above the dashed line it was still climbing when it gave up."""
    data = ends.dropna(subset=["low_gain"]).assign(rise=lambda d: d["low_gain"] * 100, best=lambda d: d["low_best"])
    chosen, opacity = legend_highlight("series")
    points = alt.Chart(data).mark_point(filled=True, size=70).encode(
        alt.X("N:Q", title="N", scale=alt.Scale(type="log", nice=False, padding=12)),
        alt.Y("rise:Q", title=f"rise of best ID accuracy in the last {CLIMB_WINDOW} steps (points)"),
        alt.Color("series:N", title="task"), opacity=opacity,
        tooltip=[alt.Tooltip("series:N", title="task"), alt.Tooltip("N:Q"), alt.Tooltip("seed:Q"),
                 alt.Tooltip("low:Q", title="lower end (examples)", format=",d"),
                 alt.Tooltip("best:Q", title="best ID accuracy", format=".1%"),
                 alt.Tooltip("rise:Q", title="rise (points)", format=".1f")],
    ).add_params(chosen, zoom())
    line = alt.Chart(pd.DataFrame({"rise": [CLIMB * 100]})).mark_rule(strokeDash=[4, 4], color="#666").encode(
        y="rise:Q")
    return alt.layer(line, points).properties(
        width=420, height=260,
        title=alt.TitleParams("Were the brackets' lower ends still learning when they gave up?", anchor="start",
                              subtitle="above the dashed line: still climbing, stopped by patience rather than data"))


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
