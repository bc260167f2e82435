"""The book a user runs: chapters 02-09 at the default preset read the caches under data/, and the numbers
they record must equal the committed snapshot (tests/snapshots/metrics_default.json). A deliberate change
of a result rewrites the snapshot in the same commit:
    covlib book --preset default --only 02 03 04 05 06 07 08 09 --snapshot tests/snapshots/metrics_default.json --reason "..."
"""
from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest
from figure_checks import boolean_tooltips, overlay_params

from covlib.base.errors import CovlibError
from covlib.book.runner import discover_chapters, run_book
from covlib.book.snapshot import SNAPSHOT_CHAPTERS, TRAINED_LIVE, compare, read_metrics, read_snapshot, write_snapshot
from covlib.figures.style import MAX_CHART_WIDTH, SPECS_ENV, drawn_width

SNAPSHOT = Path(__file__).parent / "snapshots" / "metrics_default.json"
CACHED_CHAPTERS = list(SNAPSHOT_CHAPTERS)  # deterministic at default: they read caches


@pytest.fixture(scope="session")
def default_book(tmp_path_factory) -> Path:
    """Chapters 02-10 executed at the default preset (they read caches: about a minute each here), with each
    chart's Vega-Lite spec in specs/."""
    out = tmp_path_factory.mktemp("default-book")
    saved = os.environ.get(SPECS_ENV)
    os.environ[SPECS_ENV] = str(out / "specs")  # save_figure also writes each chart's spec (kernels inherit it)
    try:
        results = run_book("default", CACHED_CHAPTERS, out, out / "figures", progress=False, jobs=2)
    finally:
        if saved is None:
            os.environ.pop(SPECS_ENV, None)
        else:
            os.environ[SPECS_ENV] = saved
    failed = {r.name: r.error for r in results if r.status != "done"}
    assert not failed, f"chapters failed at the default preset: {failed}"
    return out


@pytest.fixture(scope="session")
def default_metrics(default_book: Path):
    return read_metrics(default_book / "default" / "metrics")


@pytest.mark.slow
def test_every_chart_of_the_default_book_fits_the_page_and_draws_in_jupyterlab(default_book: Path):
    """Charts a smoke run does not draw (chapter 4's failing probe, say) checked as tests/test_book.py checks the
    smoke book's: no wider than the page, nothing JupyterLab's Vega-Lite cannot draw, no true/false in a tooltip."""
    specs = sorted((default_book / "specs").glob("*.vl.json"))
    assert specs, "the default book saved no chart spec"
    problems = []
    for path in specs:
        spec = json.loads(path.read_text())
        width = drawn_width(spec)
        problems += [f"{path.name}: {width:.0f} px wide"] if width > MAX_CHART_WIDTH else []
        problems += [f"{path.name}: {p}" for p in overlay_params(spec)]
        problems += [f"{path.name}: tooltip shows true/false for {f}" for f in boolean_tooltips(spec)]
    assert problems == []


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


def test_a_number_trained_live_may_move_as_far_as_between_two_cpus():
    """Chapter 10's check probe trains at the default preset: the AMD and Intel machines' values pass, a larger
    move does not, and the snapshot's own tolerance wins over the built-in one."""
    key = "reader_probe_best_type0"
    chapter = "10_how_much_data_will_my_task_need"
    assert f"{chapter}.{key}" in TRAINED_LIVE
    snapshot = {"chapters": {chapter: {key: 0.3294}}}
    assert compare({chapter: {key: 0.3471}}, snapshot) == []
    assert compare({chapter: {key: 0.40}}, snapshot) == [f"{chapter}.{key}: 0.4, snapshot 0.3294"]
    assert compare({chapter: {key: 0.3471}}, snapshot | {"tolerances": {f"{chapter}.{key}": 0.01}}) != []


def test_a_new_snapshot_of_some_chapters_keeps_the_others(tmp_path):
    path = tmp_path / "snapshot.json"
    write_snapshot({"04_x": {"a": 1.0}, "05_y": {"b": 2.0}}, path, "first", "default")
    write_snapshot({"05_y": {"b": 3.0}, "01_z": {"c": 4.0}}, path, "05 moved", "default")  # a whole-book run
    doc = read_snapshot(path)  # chapter 1's numbers are not the snapshot's (they do not read caches)
    assert doc["chapters"] == {"04_x": {"a": 1.0}, "05_y": {"b": 3.0}} and doc["reason"] == "05 moved"
    with pytest.raises(CovlibError, match="reason"):
        write_snapshot({}, path, " ", "default")
