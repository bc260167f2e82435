"""Coverage of a dataset folder with numpy alone: the k-cutoff of every test item, the share covered per test type
and k, and the files test_annotated.json and coverage.json.

`covlib coverage` runs on this module, so it imports only what a folder's coverage needs: not pandas (it would
double the command's start-up time), not generation. covlib.coverage.annotate gives the same results as pandas
tables, for the book, and takes generated datasets too.
"""
from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import numpy as np

from covlib import __version__
from covlib.base.errors import CovlibError
from covlib.base.files import write_text_atomic
from covlib.base.paths import readable_path
from covlib.coverage.authors import authors_sweep
from covlib.coverage.exact import CoverageResult, coverage_sweep
from covlib.tasks.folders import DatasetFolder, load_dataset, load_dataset_items, type_order

MODES = ("faithful", "authors")


COLUMNS = ("type", "k", "covered", "n")  # one row per test type and k: its share of items k-covered, of n


@dataclass
class CoverageInputs:
    """What coverage needs from a dataset, whatever its source (folder on disk or in memory)."""

    num_tokens: int
    train_inputs: np.ndarray
    train_answers: np.ndarray
    test_inputs: np.ndarray
    test_answers: np.ndarray
    test_types: np.ndarray
    path: Path | None = None


def coverage_inputs(source: str | os.PathLike | DatasetFolder) -> CoverageInputs:
    """Read training and test items from a folder path or a loaded ``DatasetFolder`` (a generated ``Dataset`` goes
    to covlib.coverage.annotate's coverage_inputs)."""
    if isinstance(source, (str, os.PathLike)):
        source = load_dataset(source)
    if isinstance(source, DatasetFolder):
        return CoverageInputs(source.num_tokens, source.train.inputs, source.train.answers, source.test.inputs,
                              source.test.answers, source.test.types, source.path)
    raise CovlibError(f"expected a dataset folder path or DatasetFolder, got {type(source).__name__} (a generated "
                      "Dataset: use covlib.coverage.annotate.coverage_inputs)")


def test_cutoffs(data: CoverageInputs, mode: str = "faithful", max_k: int | None = None) -> CoverageResult:
    """k-cutoff of every test item, by the paper's definition or the authors' script."""
    if mode == "faithful":
        return coverage_sweep(data.train_inputs, data.train_answers, data.num_tokens, data.test_inputs, max_k)
    if mode == "authors":
        return authors_sweep(data.train_inputs, data.train_answers, data.num_tokens, data.test_inputs,
                             data.test_answers, data.test_types, max_k)
    raise CovlibError(f"unknown coverage mode {mode!r}; choose one of: {', '.join(MODES)}")


def coverage_rows(cutoffs: np.ndarray, types: np.ndarray, max_k: int,
                  always: np.ndarray | None = None) -> list[dict]:
    """Share of items covered per test type and k = 1..max_k, as rows with keys type, k, covered, n.

    ``always`` marks items covered at every k (training inputs), whatever their cutoff value.
    """
    types = np.asarray(types).astype(str)
    always = np.zeros(len(cutoffs), dtype=bool) if always is None else np.asarray(always, dtype=bool)
    rows = []
    for name in sorted(set(types.tolist()), key=type_order):
        sel, sel_always = cutoffs[types == name], always[types == name]
        for k in range(1, max_k + 1):
            share = float(np.mean((sel >= k) | sel_always))
            rows.append({"type": name, "k": k, "covered": share, "n": int(len(sel))})
    return rows


def default_max_k(cutoffs: np.ndarray, in_train_value: int) -> int:
    """Table range when none is asked: k = 1..8 (the paper's), longer if some test item goes higher."""
    finite = cutoffs[cutoffs < in_train_value]
    return max(8, int(finite.max()) if len(finite) else 0)


def annotate_folder(path: str | os.PathLike, mode: str = "faithful", max_k: int | None = None) -> list[dict]:
    """Write ``test_annotated.json`` and ``coverage.json`` into a dataset folder; return the coverage rows.

    test_annotated.json: every test item (extra keys kept) with an integer ``k_cutoff``, followed,
    as in the authors' files, by a copy of each type_0 item whose type is ``covered_{k_cutoff}``.
    coverage.json: the share covered per test type for k = 1..K and the command that remakes it.
    """

    if mode not in MODES:
        raise CovlibError(f"unknown coverage mode {mode!r}; choose one of: {', '.join(MODES)}")
    folder, raw = load_dataset_items(path)
    data = coverage_inputs(folder)
    result = test_cutoffs(data, mode, max_k)
    cutoffs, ceiling = result.cutoffs, result.ceiling
    always = result.in_train  # training inputs: covered at every k, so no finite cutoff
    k_range = max_k if max_k is not None else default_max_k(cutoffs, ceiling)
    rows = coverage_rows(cutoffs, data.test_types, k_range, always)
    by_type: dict[str, list[dict]] = {}
    for row in rows:
        by_type.setdefault(row["type"], []).append(row)

    cutoff_list = cutoffs.tolist()
    for item, c, a in zip(raw, cutoff_list, always.tolist()):  # in place: a copy of each item took 8 ms
        item["k_cutoff"] = None if a else c
    covered_copies = [{**item, "type": f"covered_{c}"} for item, c in zip(raw, cutoff_list)
                      if item.get("type") == "type_0"]
    command = f"covlib coverage {readable_path(folder.path)} --mode {mode}" + (f" --max-k {max_k}" if max_k is not None else "")
    summary = {
        "generator": f"covlib {__version__}",
        "command": command,
        "mode": mode,
        "num_tokens": data.num_tokens,
        "n_train": int(len(data.train_inputs)),
        "max_k": k_range,
        "training_cutoff": int(ceiling),
        "coverage": {name: np.round([r["covered"] for r in group], 6).tolist() for name, group in by_type.items()},
        "n": {name: group[0]["n"] for name, group in by_type.items()},
        "rows": rows,
    }
    # compact: a machine-read file of every test item, written by json's C encoder (indent takes the slow one);
    # items just read from JSON hold no cycles, and not checking for them saves a third of the encoding
    write_text_atomic(folder.path / "test_annotated.json", json.dumps(raw + covered_copies, check_circular=False))
    write_text_atomic(folder.path / "coverage.json", json.dumps(summary, indent=2))
    return rows


def print_coverage(rows: list[dict], file: TextIO | None = None) -> None:
    """Print coverage by k (percent) as a small aligned table: a line per test type, a column per k."""
    file = file or sys.stdout
    by_type: dict[str, dict[int, float]] = {}
    for row in rows:
        by_type.setdefault(row["type"], {})[row["k"]] = row["covered"] * 100
    names = sorted(by_type, key=type_order)
    ks = sorted({k for shares in by_type.values() for k in shares})
    width = max(len(str(t)) for t in names) if names else 4
    print(f"{'type':<{width}}  " + " ".join(f"{'k=' + str(k):>6}" for k in ks), file=file)
    for name in names:
        print(f"{name:<{width}}  " + " ".join(f"{by_type[name].get(k, float('nan')):6.1f}" for k in ks), file=file)
