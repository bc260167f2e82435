"""The book's numbers as a committed snapshot: the metrics every chapter records at one preset, compared
with a fresh run so that a wrong cache, a wrong computation or a drifted README cannot pass unnoticed.

A deliberate change of a result rewrites the snapshot in the same commit (``covlib book --snapshot``),
with a one-line reason in its ``reason`` field."""
from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from covlib.base.errors import CovlibError
from covlib.base.files import write_text_atomic
from covlib.book.sweep import METRICS_FILE

# The tolerance of a number unless the snapshot names one for it: the chapters at the default preset read
# caches, and recompute only small analyses of shipped fp16 models, so their numbers agree far closer than this.
DEFAULT_RELATIVE, DEFAULT_ABSOLUTE = 1e-4, 1e-6
# The numbers a chapter trains at the default preset rather than reads, with how far they may move between CPUs
# (float rounding differs with the instruction set, and a run amplifies it as a new seed would): chapter 10's
# check probe, its best ID accuracy 0.3294 on an AMD EPYC (AVX2) and 0.3471 on an Intel Xeon (AMX), 2026-11-29.
# A snapshot's own "tolerances" take precedence.
TRAINED_LIVE = {"10_how_much_data_will_my_task_need.reader_probe_best_type0": 0.05}

# The chapters the snapshot holds: deterministic at the default preset, since they read caches. A whole-book run's
# other metrics (chapter 1's) stay out of it, as the test that compares a fresh run expects.
SNAPSHOT_CHAPTERS = ("02", "03", "04", "05", "06", "07", "08", "09", "10")


def read_metrics(metrics_dir: str | os.PathLike) -> dict[str, dict[str, Any]]:
    """chapter -> its recorded metrics, from ``<metrics_dir>/<chapter>/metrics.json`` (covlib book's layout)."""
    found = {p.parent.name: json.loads(p.read_text(encoding="utf-8"))
             for p in sorted(Path(metrics_dir).glob(f"*/{METRICS_FILE}"))}
    if not found:
        raise CovlibError(f"no {METRICS_FILE} under {metrics_dir}; run `covlib book` first")
    return found


def read_snapshot(path: str | os.PathLike) -> dict:
    """The committed snapshot: {"reason": ..., "preset": ..., "tolerances": {...}, "chapters": {...}}."""
    path = Path(path)
    if not path.is_file():
        raise CovlibError(f"{path} does not exist; write it with `covlib book --preset default --snapshot {path}`")
    return json.loads(path.read_text(encoding="utf-8"))


def write_snapshot(metrics: dict[str, dict[str, Any]], path: str | os.PathLike, reason: str, preset: str) -> Path:
    """Write the metrics of the chapters that ran (those of SNAPSHOT_CHAPTERS) into the snapshot, keeping the other
    chapters' numbers and the tolerances the old snapshot named."""
    if not reason.strip():
        raise CovlibError("a new snapshot needs a one-line reason (--reason): what changed the results, and why")
    old = read_snapshot(path) if Path(path).is_file() else {}
    kept = {chapter: numbers for chapter, numbers in metrics.items() if chapter[:2] in SNAPSHOT_CHAPTERS}
    chapters = {**old.get("chapters", {}), **kept}
    doc = {"reason": reason.strip(), "preset": preset, "tolerances": old.get("tolerances", {}), "chapters": chapters}
    write_text_atomic(Path(path), json.dumps(doc, indent=1, sort_keys=True, allow_nan=True) + "\n")
    return Path(path)


def _same(expected: Any, actual: Any, tolerance: float | None) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool) or not isinstance(expected, (int, float)) \
            or not isinstance(actual, (int, float)):
        return expected == actual
    if math.isnan(expected) or math.isnan(actual):
        return math.isnan(expected) and math.isnan(actual)
    if tolerance is not None:
        return abs(actual - expected) <= tolerance
    return math.isclose(actual, expected, rel_tol=DEFAULT_RELATIVE, abs_tol=DEFAULT_ABSOLUTE)


def compare(metrics: dict[str, dict[str, Any]], snapshot: dict) -> list[str]:
    """Every difference between fresh metrics and the snapshot, one line each (empty when they agree):
    a chapter or metric missing on either side, or a number outside its tolerance."""
    problems = []
    tolerances = TRAINED_LIVE | snapshot.get("tolerances", {})
    expected_chapters = snapshot["chapters"]
    for chapter in sorted(set(expected_chapters) | set(metrics)):
        if chapter not in metrics:
            problems.append(f"{chapter}: recorded no metrics (the snapshot has {len(expected_chapters[chapter])})")
            continue
        if chapter not in expected_chapters:
            problems.append(f"{chapter}: not in the snapshot")
            continue
        want, got = expected_chapters[chapter], metrics[chapter]
        for key in sorted(set(want) | set(got)):
            if key not in got:
                problems.append(f"{chapter}.{key}: missing (snapshot {want[key]!r})")
            elif key not in want:
                problems.append(f"{chapter}.{key}: new metric {got[key]!r}, not in the snapshot")
            elif not _same(want[key], got[key], tolerances.get(f"{chapter}.{key}")):
                problems.append(f"{chapter}.{key}: {got[key]!r}, snapshot {want[key]!r}")
    return problems
