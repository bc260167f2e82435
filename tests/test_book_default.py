"""The book a user runs: chapters 02-09 at the default preset read the caches under data/, and the numbers
they record must equal the committed snapshot (tests/snapshots/metrics_default.json). A deliberate change
of a result rewrites the snapshot in the same commit:
    covlib book --preset default --only 02 03 04 05 06 07 08 09 --snapshot tests/snapshots/metrics_default.json --reason "..."
"""
from __future__ import annotations

import math
from pathlib import Path

import pytest

from covlib.base.errors import CovlibError
from covlib.book.runner import discover_chapters, run_book
from covlib.book.snapshot import compare, read_metrics, read_snapshot, write_snapshot

SNAPSHOT = Path(__file__).parent / "snapshots" / "metrics_default.json"
CACHED_CHAPTERS = ["02", "03", "04", "05", "06", "07", "08", "09", "10"]  # deterministic at default: they read caches


@pytest.fixture(scope="session")
def default_metrics(tmp_path_factory):
    """Chapters 02-10 executed at the default preset (they read caches: about a minute each here)."""
    out = tmp_path_factory.mktemp("default-book")
    results = run_book("default", CACHED_CHAPTERS, out, out / "figures", progress=False)
    failed = {r.name: r.error for r in results if r.status != "done"}
    assert not failed, f"chapters failed at the default preset: {failed}"
    return read_metrics(out / "default" / "metrics")


@pytest.mark.slow
def test_the_default_chapters_record_the_snapshots_numbers(default_metrics):
    problems = compare(default_metrics, read_snapshot(SNAPSHOT))
    assert not problems, "the book's numbers moved; if that is deliberate, rewrite the snapshot:\n" + "\n".join(problems)


def test_the_snapshot_covers_every_cached_chapter():
    snapshot = read_snapshot(SNAPSHOT)
    stems = {p.stem for p in discover_chapters() if p.stem[:2] in CACHED_CHAPTERS}
    assert set(snapshot["chapters"]) == stems and snapshot["reason"].strip()


def test_compare_fails_on_a_wrong_number_a_missing_key_and_a_new_one():
    snapshot = {"chapters": {"04_x": {"exponent_twohop": 2.108, "probes": 94, "note": "a"}},
                "tolerances": {"04_x.probes": 2}}
    assert compare({"04_x": {"exponent_twohop": 2.108 * (1 + 1e-6), "probes": 95, "note": "a"}}, snapshot) == []
    problems = compare({"04_x": {"exponent_twohop": 2.2, "probes": 97, "extra": 1.0}}, snapshot)
    assert problems == ["04_x.exponent_twohop: 2.2, snapshot 2.108", "04_x.extra: new metric 1.0, not in the snapshot",
                        "04_x.note: missing (snapshot 'a')", "04_x.probes: 97, snapshot 94"]
    assert compare({"04_x": {"exponent_twohop": math.nan, "probes": 94, "note": "a"}}, snapshot) == [
        "04_x.exponent_twohop: nan, snapshot 2.108"]
    assert compare({}, snapshot) == ["04_x: recorded no metrics (the snapshot has 3)"]


def test_a_new_snapshot_of_some_chapters_keeps_the_others(tmp_path):
    path = tmp_path / "snapshot.json"
    write_snapshot({"04_x": {"a": 1.0}, "05_y": {"b": 2.0}}, path, "first", "default")
    write_snapshot({"05_y": {"b": 3.0}}, path, "05 moved", "default")
    doc = read_snapshot(path)
    assert doc["chapters"] == {"04_x": {"a": 1.0}, "05_y": {"b": 3.0}} and doc["reason"] == "05 moved"
    with pytest.raises(CovlibError, match="reason"):
        write_snapshot({}, path, " ", "default")
