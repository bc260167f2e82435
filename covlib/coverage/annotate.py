"""Coverage of a dataset as pandas tables, for the book: share covered per test type and k, in long and wide form.

The work (k-cutoffs, test_annotated.json, coverage.json) is covlib.coverage.folder_coverage's, with numpy alone, so
that `covlib coverage` starts without pandas; its names are re-exported here, and its reading of a folder extended
to generated datasets.
"""
from __future__ import annotations

import os
import sys
from typing import TextIO

import numpy as np
import pandas as pd

from covlib.coverage.folder_coverage import (
    COLUMNS,
    MODES,
    CoverageInputs,
    annotate_folder,
    coverage_rows,
    default_max_k,
    print_coverage,
    test_cutoffs,
)
from covlib.coverage.folder_coverage import coverage_inputs as folder_inputs
from covlib.tasks.datasets import Dataset
from covlib.tasks.folders import DatasetFolder, type_order

__all__ = ["MODES", "CoverageInputs", "annotate_dataset", "coverage_by_k", "coverage_inputs", "coverage_table",
           "default_max_k", "print_table", "test_cutoffs", "wide_table"]


def coverage_inputs(source: str | os.PathLike | DatasetFolder | Dataset) -> CoverageInputs:
    """Read training and test items from a folder path, a loaded ``DatasetFolder`` or a generated ``Dataset``."""
    if isinstance(source, Dataset):
        return CoverageInputs(source.config.num_tokens, source.train_inputs, source.evaluate(source.train_inputs)["t"],
                              source.test_inputs, source.evaluate(source.test_inputs)["t"], source.test_types)
    return folder_inputs(source)


def coverage_table(cutoffs: np.ndarray, types: np.ndarray, max_k: int,
                   always: np.ndarray | None = None) -> pd.DataFrame:
    """Share of items covered per test type and k = 1..max_k: columns type, k, covered, n.

    ``always`` marks items covered at every k (training inputs), whatever their cutoff value.
    """
    return pd.DataFrame(coverage_rows(cutoffs, types, max_k, always), columns=list(COLUMNS))


def coverage_by_k(source: str | os.PathLike | DatasetFolder | Dataset, max_k: int = 8,
                  mode: str = "faithful") -> pd.DataFrame:
    """Share of test items covered at each k = 1..max_k, per test type (columns type, k, covered, n)."""
    data = coverage_inputs(source)
    result = test_cutoffs(data, mode, max_k)
    return coverage_table(result.cutoffs, data.test_types, max_k, result.in_train)


def wide_table(table: pd.DataFrame) -> pd.DataFrame:
    """Coverage table as percentages, one row per type and one column per k (for printing)."""
    wide = table.pivot(index="type", columns="k", values="covered") * 100
    return wide.loc[sorted(wide.index, key=type_order)]


def annotate_dataset(path: str | os.PathLike, mode: str = "faithful", max_k: int | None = None) -> pd.DataFrame:
    """Write ``test_annotated.json`` and ``coverage.json`` into a dataset folder (see ``annotate_folder``); return
    the coverage table (columns type, k, covered, n)."""
    return pd.DataFrame(annotate_folder(path, mode, max_k), columns=list(COLUMNS))


def print_table(table: pd.DataFrame, file: TextIO | None = None) -> None:
    """Print coverage by k (percent) as a small aligned table."""
    print_coverage(table.to_dict(orient="records"), file or sys.stdout)
