"""What the reader sees: chapter 8's tables, with headers that say what a column is."""
from __future__ import annotations

import pandas as pd

from covlib.chapters.ch08_three_ways_to_generalise.charts import CONDITION_LABELS, group_label
from covlib.chapters.ch08_three_ways_to_generalise.readings import (
    property_groups,
    property_table,
    shared_table,
    taxonomy_summary,
)
from covlib.chapters.ch08_three_ways_to_generalise.reuse import role_table_frame
from covlib.figures.tables import ReaderTable, reader_table

VALUE_HEADERS = {"n": ("inputs", ",.0f"), "acc": ("accuracy", ".1%"), "covered_share": ("k-covered", ".1%")}


def pivot_reader_table(pivot: pd.DataFrame, caption: str, order: list[str] | None = None) -> ReaderTable:
    """A ``group_pivot`` (rows: groups, in ``order`` where given; columns: (value, condition)) with one column per
    value and model, headed "<value>, <model>", and a reader's name for each group."""
    if order:
        pivot = pivot.reindex([g for g in order if g in pivot.index])
    flat = pd.DataFrame({"group": [group_label(g) for g in pivot.index]})
    columns, formats = {"group": "inputs"}, {}
    for value, condition in pivot.columns:
        name = f"{value} {condition}"
        header, spec = VALUE_HEADERS[value]
        flat[name] = pivot[(value, condition)].to_numpy()
        columns[name] = f"{header}, {CONDITION_LABELS.get(condition, condition)}"
        formats[name] = spec
    return reader_table(flat, columns, formats, caption=caption)


def property_reader_table(table: pd.DataFrame) -> ReaderTable:
    """``property_table`` for the reader: inputs and accuracy of the commutative model and its control per group."""
    return pivot_reader_table(property_table(table), "Commutative model and control, per group of inputs",
                              property_groups(table))


def shared_reader_table(table: pd.DataFrame) -> ReaderTable:
    """``shared_table`` for the reader: inputs, accuracy and covered share of the shared-table model and its control."""
    return pivot_reader_table(shared_table(table), "Shared-table model and control, per test type and role")


def taxonomy_reader_table(prop: dict[str, float], own: dict, reuse: dict) -> ReaderTable:
    """``taxonomy_summary`` for the reader: accuracy as a percentage."""
    summary = taxonomy_summary(prop, own, reuse)
    return reader_table(summary, {c: c for c in summary.columns}, {"measured accuracy": ".1%"})


def role_reader_table(roles: pd.DataFrame) -> ReaderTable:
    """``role_table_frame`` for the reader: per test type (which hop's fact is held out of the composed ID items)
    and condition, how training taught each fact, inputs, seeds, mean accuracy and its range over seeds."""
    frame = role_table_frame(roles)
    columns = {"unseen fact": "held-out fact", "model": "model", "first fact taught": "first fact taught",
               "second fact taught": "second fact taught", "n": "inputs", "seeds": "seeds",
               "acc": "accuracy (mean over seeds)", "seed range": "range over seeds", "covered_share": "3-covered"}
    return reader_table(frame, columns, {"n": ",.0f", "acc": ".1%", "covered_share": ".1%"},
                        caption="Accuracy per test type and per role of the held-out fact, four conditions at equal data "
                                "and steps")
