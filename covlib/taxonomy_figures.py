"""Charts of chapter 8 (three ways to generalise): accuracy per reach group and condition."""
from __future__ import annotations

import altair as alt
import pandas as pd

CONDITION_LABELS = {"commutative": "f1 commutative", "distinct": "distinct tables (control)",
                    "shared": "one shared table + atomic facts"}


def reach_accuracy_chart(table: pd.DataFrame, groups: list[str], title: str) -> alt.Chart:
    """Grouped bars: accuracy of each condition's model on each group of inputs (n in the tooltip)."""
    data = table[table.group.isin(groups)].copy()
    data["model"] = data.condition.map(CONDITION_LABELS).fillna(data.condition)
    return (
        alt.Chart(data, title=title)
        .mark_bar()
        .encode(
            x=alt.X("group:N", sort=groups, title=None, axis=alt.Axis(labelAngle=-20, labelLimit=300)),
            xOffset=alt.XOffset("model:N"),
            y=alt.Y("acc:Q", title="accuracy", scale=alt.Scale(domain=[0, 1])),
            color=alt.Color("model:N", title="model", legend=alt.Legend(orient="bottom", labelLimit=400)),
            tooltip=["model", "group", "n", alt.Tooltip("acc:Q", format=".3f")],
        )
        .properties(width=420, height=240)
    )
