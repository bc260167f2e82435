"""The book as a static site (covlib.book.site): built offline from the executed chapters, and checked in
a real headless Chromium (Debian's, driven by Playwright; nothing downloads a browser)."""
from __future__ import annotations

import functools
import http.server
import json
import os
import re
import shutil
import threading
from pathlib import Path

import pytest

from covlib.base.errors import CovlibError
from covlib.book.runner import discover_chapters
from covlib.book.site import build_site, chapter_summary, prepare_notebook

CHROMIUM = next((p for p in ("/usr/lib/chromium/chromium", "/usr/bin/chromium") if Path(p).exists()), None)
CHAPTERS = discover_chapters()
LOADS = re.compile(r'<(?:script|img|link|iframe|source)\b[^>]*?(?:src|href)="(https?:)?//', re.I)
CSS_IMPORT = re.compile(r"(?:@import|url\()\s*['\"]?https?://", re.I)


@pytest.fixture(scope="session")
def site(smoke_book) -> Path:
    """The smoke book the chapter tests executed (tests/conftest.py), built as a site.
    COVLIB_SITE_BUILD=DIR builds from a folder whose smoke/ already holds the executed chapters instead."""
    reuse = os.environ.get("COVLIB_SITE_BUILD")
    if reuse:
        return build_site("smoke", reuse)
    build, results = smoke_book
    failed = [f"{name}: {r.error}" for name, r in results.items() if r.status != "done"]
    assert not failed, f"chapters failed at smoke: {failed}"
    return build_site("smoke", build)


def test_site_has_a_page_per_chapter_in_order_and_a_landing_page(site: Path):
    index = (site / "index.html").read_text(encoding="utf-8")
    links = re.findall(r'href="(\d\d_[A-Za-z0-9_]+)\.html"', index)
    assert list(dict.fromkeys(links)) == [c.stem for c in CHAPTERS]
    for chapter in CHAPTERS:
        assert (site / f"{chapter.stem}.html").is_file()
    assert (site / "searchindex.js").is_file() and (site / "search.html").is_file()
    assert (site / "_static" / "mathjax" / "tex-svg-full.js").stat().st_size > 1_000_000
    assert "Run it yourself" in index and "Chapters" in index


def test_nothing_on_the_site_loads_from_the_internet(site: Path):
    offenders = []
    for file in site.rglob("*"):
        if file.suffix in {".html", ".css"} and file.is_file():
            text = file.read_text(encoding="utf-8", errors="ignore")
            offenders += [f"{file.name}: {m.group(0)[:80]}" for m in LOADS.finditer(text)]
            offenders += [f"{file.name}: {m.group(0)[:80]}" for m in CSS_IMPORT.finditer(text)]
    assert offenders == []


def test_reading_copy_collapses_code_and_solutions_and_drops_widgets():
    nb = {"metadata": {"widgets": {"state": {}}}, "cells": [
        {"cell_type": "markdown", "metadata": {}, "source": "# 9. A title\n\nFirst sentence here. Second one."},
        {"cell_type": "code", "metadata": {"tags": ["injected-parameters"]}, "source": "preset = 'smoke'", "outputs": []},
        {"cell_type": "code", "metadata": {}, "source": "x = 1", "outputs": [
            {"output_type": "display_data", "data": {"application/vnd.jupyter.widget-view+json": {"model_id": "a"}}}]},
        {"cell_type": "code", "metadata": {"tags": ["solution"]}, "source": "check()", "outputs": []}]}
    out = prepare_notebook(nb)
    tags = [c["metadata"].get("tags", []) for c in out["cells"]]
    assert "remove-cell" in tags[1] and "hide-input" in tags[2] and "hide-cell" in tags[3]
    assert out["cells"][2]["outputs"] == [] and "widgets" not in out["metadata"]
    assert chapter_summary(nb) == ("9. A title", "First sentence here.")


def test_a_build_without_executed_chapters_is_a_clear_error(tmp_path: Path):
    with pytest.raises(CovlibError, match="no executed chapters"):
        build_site("smoke", tmp_path)
    with pytest.raises(CovlibError, match="unknown preset"):
        build_site("fast", tmp_path)


def test_a_broken_notebook_leaves_the_previous_site_in_place(site: Path, tmp_path: Path):
    build = tmp_path / "b"
    shutil.copytree(site.parent.parent / "smoke", build / "smoke")
    good = build_site("smoke", build)
    first = (good / "index.html").read_text()
    broken = build / "smoke" / f"{CHAPTERS[0].stem}.ipynb"
    broken.write_text("{not json")
    with pytest.raises(CovlibError, match="is not a notebook"):
        build_site("smoke", build)
    assert (good / "index.html").read_text() == first


# ----------------------------------------------------------------------------- in a real browser


@pytest.fixture(scope="module")
def served(site: Path):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser_context():
    if CHROMIUM is None:
        pytest.skip("Chromium is not installed (apt-get install chromium; .ci/run does it): browser test skipped")
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run"])
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        yield context
        context.close()
        browser.close()


PAGES = ["index"] + [c.stem for c in CHAPTERS]


@pytest.mark.parametrize("page_name", PAGES)
def test_page_renders_in_chromium_with_images_math_and_no_errors(browser_context, served: str, site: Path,
                                                                 page_name: str):
    page, errors, external = browser_context.new_page(), [], []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("response", lambda r: errors.append(f"HTTP {r.status} {r.url}") if r.status >= 400 else None)

    def guard(route):  # anything not served by our loopback server is recorded and refused
        if route.request.url.startswith((served, "data:", "blob:")):
            route.continue_()
        else:
            external.append(route.request.url)
            route.abort()

    page.route("**/*", guard)
    assert page.goto(f"{served}/{page_name}.html", wait_until="load").ok
    if page_name == "index":
        title = "The Coverage Principle"
    else:
        notebook = json.loads((site.parent.parent / "smoke" / f"{page_name}.ipynb").read_text())
        title = chapter_summary(notebook)[0]
    assert title in page.title()
    assert title in page.locator("h1").first.inner_text()
    images = page.evaluate("""async () => {
        const imgs = [...document.images]; imgs.forEach(i => i.loading = 'eager');
        await Promise.all(imgs.map(i => i.decode().catch(() => null)));
        return {n: imgs.length, broken: imgs.filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src)}; }""")
    assert images["broken"] == [], images
    if page_name != "index":
        assert images["n"] >= 1, f"{page_name} shows no figure"
    typeset = page.evaluate("async () => { await MathJax.startup.promise; "
                            "return document.querySelectorAll('mjx-container').length }")
    assert typeset > 0, "no math was typeset"
    assert external == [], f"requests leaving the machine: {external}"
    assert errors == [], errors
    page.close()
