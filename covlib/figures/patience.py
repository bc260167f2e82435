"""What a reader sees of whether the step floor is itself patient enough: its life table of successes past the
fit, its near misses, and what a longer floor could still change."""
from __future__ import annotations

import pandas as pd

from covlib.figures.tables import ReaderTable, reader_table
from covlib.figures.text import count_of
from covlib.search.patience import near_misses, steps_past_fit, success_life_table


def patience_view(life: pd.DataFrame) -> ReaderTable:
    """The life table, one row per window of steps past the fit."""
    shown = life.assign(window=[f"{s:,}-{e:,}" for s, e in zip(life["start"], life["end"])])
    return reader_table(shown, {"window": "steps past the fit", "at_risk": "probes still short of 99%",
                                "successes": "reach it in the window", "hazard": "share that reach it"},
                        formats={"hazard": ".1%"})


def patience_note(probes: pd.DataFrame, floor: int, window: int = 250) -> str:
    """Whether probes under the floor were still succeeding when it ended, in prose ("" before any floor probe)."""
    if not (probes["give_up_floor"].astype(int) == floor).any():
        return ""
    life = success_life_table(probes, floor, window)
    runs = steps_past_fit(probes, floor)
    misses = near_misses(probes, floor)
    last = life.iloc[-1]
    if not last["at_risk"]:
        return ""  # every probe ended before the floor's last window: nothing to say of its end
    peak = life.loc[life["hazard"].idxmax()]
    late = int(life.loc[life["start"] >= 0.75 * floor, "successes"].sum())
    won, failed = int(runs["success"].sum()), int((~runs["success"]).sum())
    text = (f"**Is the floor itself long enough?** The floor does not scale with n, but it still ends: a probe "
            f"that would have generalised {window} steps after it counts as a failure. Of the "
            f"{count_of(len(runs), 'probe')} run under it that fitted their training set, {won} "
            f"succeeded, {late} of them in its last quarter (from {0.75 * floor:,.0f} steps past the fit). Among the "
            f"probes still short of 99%, the share reaching it within the next {window} steps peaked at "
            f"{peak['hazard']:.0%} ({int(peak['start']):,}-{int(peak['end']):,} steps past the fit) and had fallen to "
            f"{last['hazard']:.0%} in the floor's last {window} ({int(last['successes'])} of "
            f"{int(last['at_risk'])}). ")
    if failed:
        text += (f"{len(misses)} of the {failed} failures ended within one point of the threshold. At the last "
                 f"window's rate, about {last['hazard'] * failed:.0f} more of them would succeed in the next "
                 f"{window} steps, fewer if the rate goes on falling: a longer floor would flip a few more probes, "
                 "and each that is a bracket's lower end would lower its cell's n_req. Whether that steepens or flattens an exponent depends on whether "
                 "those cells sit at its small or its large N, which this table cannot tell; the floor's n_req are "
                 "upper bounds in that sense, as the authors' rule's are, only tighter.")
    return text


def patience_metrics(probes: pd.DataFrame, floor: int, window: int = 250) -> dict[str, float]:
    """floor_hazard_last_window (the share of probes still short of 99% that reached it in the floor's last
    window; NaN before any floor probe) and floor_near_misses (failures within one point of the threshold)."""
    if not (probes["give_up_floor"].astype(int) == floor).any():
        return {"floor_hazard_last_window": float("nan"), "floor_near_misses": 0}
    return {"floor_hazard_last_window": float(success_life_table(probes, floor, window)["hazard"].iloc[-1]),
            "floor_near_misses": len(near_misses(probes, floor))}
