"""Chapter 6's tables as a reader reads them: titled columns, formats and captions."""
from __future__ import annotations

import pandas as pd

from covlib.chapters.ch06_path_ambiguity.coverage import POPULATION_LABELS
from covlib.figures.required_data import COUNT
from covlib.figures.tables import ReaderTable, reader_table


def merged_reader_table(merged: pd.DataFrame) -> ReaderTable:
    """``merged_pairs`` rows of both tasks: what the pairs of fragments in one class share, and how many."""
    k = int(merged["k"].iloc[0]) if len(merged) else 0
    return reader_table(merged, {"task": "task", "shared": "the two fragments share", "merged_pairs": "merged pairs",
                                 "share": "share of merged pairs", "fragments": "training fragments (x1, x2)",
                                 "classes": f"classes (k = {k})", "largest_class": "largest class (fragments)"},
                        {"share": ".1%"})


def coverage_reader_table(cov: pd.DataFrame) -> ReaderTable:
    """``coverage_comparison`` as one row per task and population, one column per k: the share k-covered."""
    wide = cov.pivot_table(index=["task", "population"], columns="k", values="covered", sort=False).reset_index()
    ks = [k for k in wide.columns if k not in ("task", "population")]
    wide = wide.assign(population=wide["population"].map(POPULATION_LABELS))
    shares = {k: f"k = {k}" for k in ks}
    return reader_table(wide, {"task": "task", "population": "items"} | shares, dict.fromkeys(ks, ".1%"),
                        caption="Share of items k-covered, per k")


def need_reader_table(need_table: pd.DataFrame, k: int) -> ReaderTable:
    """``need_summary`` per N: the examples that k-cover 99% of each task's items, and what non-tree can reach."""
    columns = {"N": "N (tokens)", "ID pool": "non-tree ID pool (inputs)",
               "twohop: 99% of type_0": f"two-hop: examples to {k}-cover 99% of ID test",
               "nontree: 99% of type_0": f"non-tree: examples to {k}-cover 99% of ID test",
               "nontree / twohop (type_0)": "non-tree / two-hop",
               "nontree: 99% of the ID pool": f"non-tree: examples to {k}-cover 99% of its ID pool",
               "nontree: most of the ID pool covered": f"non-tree: most of its ID pool {k}-covered"}
    counts = ["ID pool", "twohop: 99% of type_0", "nontree: 99% of type_0", "nontree: 99% of the ID pool"]
    return reader_table(need_table.reset_index(), columns, dict.fromkeys(counts, COUNT) | {
        "nontree / twohop (type_0)": "{:.1f}x", "nontree: most of the ID pool covered": ".1%"},
        caption="Examples for 99% coverage (empty: not reached by the largest training set the search allows)")


SPLIT_LABELS = {"type_0": "ID test", "train_inferred": "training items"}


def peaks_reader_table(peaks: pd.DataFrame) -> ReaderTable:
    """``iicg_peaks`` rows with a task column: where each task's items group most, per key and selection."""
    return reader_table(peaks.assign(split=peaks["split"].map(SPLIT_LABELS).fillna(peaks["split"])),
                        {"task": "task", "split": "selection", "group_by": "grouped by", "layer": "layer",
                         "position": "position", "iicg": "largest IICG", "within": "mean cosine within groups",
                         "between": "mean cosine between groups", "items": "items (one per fragment)",
                         "groups": "groups"},
                        {"layer": "{}", "iicg": ".3f", "within": ".3f", "between": ".3f"},
                        caption="Largest IICG per task, selection and grouping key (no cell high by construction)")


VARIANT_LABELS = {"x1": "x1 changed", "x2": "x2 changed", "x2_keep_b": "x2 changed, b kept",
                  "x2_change_b": "x2 changed, b changed"}


def tracing_reader_table(rank: pd.DataFrame) -> ReaderTable:
    """Causal tracing (rank rows of ``trace_models``): per task, corruption and layer, the share of predictions
    flipped by patching each position."""
    wide = rank.pivot_table(index=["task", "variant", "layer"], columns="position", values="value",
                            sort=False).reset_index()
    positions = [p for p in wide.columns if p not in ("task", "variant", "layer")]
    wide = wide.assign(variant=wide["variant"].map(VARIANT_LABELS).fillna(wide["variant"]))
    patched = {p: f"patched at {p}" for p in positions}
    return reader_table(wide, {"task": "task", "variant": "corrupted input", "layer": "layer"} | patched,
                        {"layer": "{}"} | dict.fromkeys(positions, ".0%"),
                        caption="Share of predictions flipped by patching one position")
