"""Chapter 8's chart: accuracy per group of inputs, one bar per model."""
from __future__ import annotations

import altair as alt
import pandas as pd

from covlib.figures.style import legend_highlight

CONDITION_LABELS = {"commutative": "f1 commutative", "distinct": "distinct tables (control)",
                    "shared": "one shared table + atomic facts"}


GROUP_LABELS = {  # a reader's name for each group of inputs (run_taxonomy's keys)
    "covered": "covered", "uncovered": "uncovered", "mirror_covered": "mirror covered",
    "symmetry_reachable": "reachable through the symmetry", "uncovered_mirror_uncovered": "uncovered, mirror uncovered",
    "covered_all_facts_seen": "covered, all facts seen", "covered_a_fact_unseen": "covered, a fact unseen",
    "cross_role": "cross-role", "cross_role_uncovered": "cross-role, uncovered", "cross_role_covered": "cross-role, covered",
    "type:type_0": "ID (type_0)", "type:type_1": "OOD: both facts unseen (type_1)",
    "type:type_2": "OOD: first-hop fact unseen (type_2)", "type:type_3": "OOD: second-hop fact unseen (type_3)",
}


def group_label(group: str) -> str:
    """A reader's name for a group of inputs (the key itself when GROUP_LABELS has none)."""
    return GROUP_LABELS.get(group, group)


def reach_accuracy_chart(table: pd.DataFrame, groups: list[str], title: str, chance: float | None = None
                         ) -> alt.LayerChart:
    """Grouped bars: accuracy of each condition's model on each group of inputs, the number of inputs written
    on every bar, and chance (1/N) as a dashed rule with its own legend entry. Clicking a model in the legend
    picks out its bars."""
    data = table[table.group.isin(groups)].copy()
    data["model"] = data.condition.map(CONDITION_LABELS).fillna(data.condition)
    data["inputs"] = data.group.map(group_label)
    picked, opacity = legend_highlight("model")
    base = alt.Chart(data).encode(
        x=alt.X("inputs:N", sort=[group_label(g) for g in groups], title=None,
                axis=alt.Axis(labelAngle=-20, labelLimit=300)),
        xOffset=alt.XOffset("model:N"),
        y=alt.Y("acc:Q", title="accuracy", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")))
    bars = base.mark_bar().encode(
        color=alt.Color("model:N", title="model", legend=alt.Legend(orient="bottom", labelLimit=400)),
        opacity=opacity,
        tooltip=[alt.Tooltip("model:N", title="model"), alt.Tooltip("inputs:N", title="inputs"),
                 alt.Tooltip("n:Q", title="inputs in the group", format=",d"),
                 alt.Tooltip("acc:Q", title="accuracy", format=".1%"),
                 alt.Tooltip("covered_share:Q", title="k-covered share of the group", format=".1%")]).add_params(picked)
    counts = base.mark_text(dy=-4, fontSize=10, angle=270, align="left").encode(
        text=alt.Text("n:Q", format=","), opacity=opacity)
    layers = [bars, counts]
    if chance is not None:
        rule = alt.Chart(pd.DataFrame({"acc": [chance], "line": [f"chance 1/N = {chance:.3f}"]})).mark_rule(
            strokeDash=[4, 3], color="black").encode(
            y="acc:Q", strokeDash=alt.StrokeDash("line:N", title=None, scale=alt.Scale(range=[[4, 3]]),
                                                 legend=alt.Legend(orient="bottom")),
            tooltip=[alt.Tooltip("line:N", title="line")])
        layers.append(rule)
    return alt.layer(*layers).properties(width=420, height=240, title=alt.TitleParams(
        title, subtitle="numbers on the bars: inputs in the group", anchor="start"))
