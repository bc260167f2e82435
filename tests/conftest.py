"""Fixtures several test files share: the whole book executed once at the smoke preset."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from covlib.book.runner import ChapterResult, discover_chapters, run_chapters
from covlib.figures.style import SPECS_ENV
from covlib.tasks.datasets import DatasetConfig, ensure_dataset

CHAPTERS = discover_chapters()


@pytest.fixture(scope="session")
def smoke_book(tmp_path_factory) -> tuple[Path, dict[str, ChapterResult]]:
    """Every chapter executed once at the smoke preset into one build folder (executed notebooks in smoke/,
    figures in figures/, each chart's Vega-Lite spec in specs/, metrics in smoke/metrics/), shared by the
    chapter tests (tests/test_book.py) and the site tests (tests/test_site.py)."""
    build = tmp_path_factory.mktemp("smoke-book")
    saved = os.environ.get(SPECS_ENV)
    os.environ[SPECS_ENV] = str(build / "specs")  # save_figure also writes each chart's spec (kernels inherit it)
    try:
        ran = run_chapters(CHAPTERS, "smoke", build, build / "figures", extra={"out_dir": str(build / "data")},
                           jobs=2, progress=False, say=lambda *a, **k: None)  # two one-thread workers
        results = {r.name: r for r in ran}
    finally:
        if saved is None:
            os.environ.pop(SPECS_ENV, None)
        else:
            os.environ[SPECS_ENV] = saved
    return build, results


# Fixtures that train models, execute notebooks, start a cluster or a browser: every test using one is slow,
# so that `pytest -m "not slow"` is a quick loop while developing (make test runs everything).
SLOW_FIXTURES = {"smoke_book", "default_book", "default_metrics", "site", "served", "browser_context", "partition", "run", "shipped",
                 "sanity_datasets", "smoke_build", "jupyter_lab", "lab_browser", "chapter_runs"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="module")
def data_root(tmp_path_factory):
    """A folder for the datasets of one test module."""
    return tmp_path_factory.mktemp("data")


@pytest.fixture(scope="module")
def ds10(data_root):
    """A tiny two-hop dataset (N = 10, 400 training items) the training tests of both model families share."""
    return ensure_dataset(DatasetConfig("twohop", 10, 400, test_size_per_type=50), data_root)
