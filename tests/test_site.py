"""The book as a static site (covlib.book.site): built offline from the executed chapters, with live charts
(vega-embed served from the site) and downloads, and checked in a real headless Chromium (Debian's, driven by
Playwright; nothing downloads a browser)."""
from __future__ import annotations

import base64
import io
import json
import os
import re
import shutil
import zipfile
from pathlib import Path

import altair as alt
import jupytext
import nbformat
import pandas as pd
import pytest
from browser import chromium, serve, visit
from bs4 import BeautifulSoup

from covlib.base import project
from covlib.base.errors import CovlibError
from covlib.base.project import LICENSE_NAME, about_markdown, repository_html, repository_markdown
from covlib.book.pagecheck import describe, page_text, site_findings
from covlib.book.readme import findings, site_link
from covlib.book.runner import discover_chapters
from covlib.book.site import (
    ABOUT_TAG,
    NOTEBOOKS_ZIP,
    SOURCES_ZIP,
    build_site,
    chapter_summary,
    count_charts,
    downloaded_notebook,
    downloaded_source,
    landing_findings,
    landing_page,
    prepare_notebook,
)
from covlib.figures.live import LIVE_MIMETYPE, PNG_SCALE, live_bundle

CHAPTERS = discover_chapters()
LOADS = re.compile(r'<(?:script|img|link|iframe|source)\b[^>]*?(?:src|href)="(https?:)?//', re.I)
CSS_IMPORT = re.compile(r"(?:@import|url\()\s*['\"]?https?://", re.I)
CONTROLS = ".vega-bindings input, .vega-bindings select"
WINDOW = {"width": 1400, "height": 1000}  # a reader's window: the text column is 784 px wide there


@pytest.fixture(scope="session")
def site(request) -> Path:
    """The smoke book the chapter tests executed (tests/conftest.py), built as a site.
    COVLIB_SITE_BUILD=DIR builds from a folder whose smoke/ already holds the executed chapters instead (and then
    executes nothing)."""
    reuse = os.environ.get("COVLIB_SITE_BUILD")
    if reuse:
        return build_site("smoke", reuse)
    build, results = request.getfixturevalue("smoke_book")
    failed = [f"{name}: {r.error}" for name, r in results.items() if r.status != "done"]
    assert not failed, f"chapters failed at smoke: {failed}"
    return build_site("smoke", build)


def executed_notebook(site: Path, stem: str) -> dict:
    return json.loads((site.parent.parent / "smoke" / f"{stem}.ipynb").read_text())


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


def test_every_chapter_page_offers_its_notebook_and_source_and_the_landing_page_the_whole_book(site: Path):
    downloads = site / "downloads"
    for chapter in CHAPTERS:
        page = (site / f"{chapter.stem}.html").read_text(encoding="utf-8")
        assert f'href="downloads/{chapter.stem}.ipynb"' in page and f'href="downloads/{chapter.stem}.py"' in page
        assert (downloads / f"{chapter.stem}.py").read_bytes() == downloaded_source(chapter.read_bytes())
        downloaded = json.loads((downloads / f"{chapter.stem}.ipynb").read_text())
        executed = executed_notebook(site, chapter.stem)
        assert ABOUT_TAG in downloaded["cells"][0]["metadata"]["tags"] and downloaded["cells"][0]["source"] == about_markdown("###")
        assert [c["outputs"] for c in downloaded["cells"][1:] if c["cell_type"] == "code"] == [
            c["outputs"] for c in executed["cells"] if c["cell_type"] == "code"]
    index = (site / "index.html").read_text(encoding="utf-8")
    for archive, suffix in ((NOTEBOOKS_ZIP, ".ipynb"), (SOURCES_ZIP, ".py")):
        assert f'href="downloads/{archive}"' in index
        with zipfile.ZipFile(downloads / archive) as members:
            assert [Path(n).name for n in members.namelist()] == [c.stem + suffix for c in CHAPTERS]


def test_no_page_of_the_site_shows_build_internals(site: Path):
    """Every built page (chapters, landing page, search): no machine path, repr, raw $...$, issue number, spec
    reference or maintainers' note (covlib.book.pagecheck; tests/test_pagecheck.py plants each case)."""
    found = site_findings(site)
    assert found == {}, "\n".join(describe(found))


def test_the_landing_page_gives_the_repository_licence_and_citations(site: Path):
    index = (site / "index.html").read_text(encoding="utf-8")
    assert repository_html() in index and f"{LICENSE_NAME} licence" in index
    text = page_text(index)[0]  # the BibTeX blocks are highlighted: read their text, not their markup
    assert "arXiv:2505.20278" in text and "@article{chang2025coverage," in text and "@misc{coverage_principle_book," in text


def test_a_downloaded_chapter_opens_with_the_repository_licence_and_citation():
    executed = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "metadata": {"tags": ["injected-parameters"]}, "execution_count": 1, "outputs": [],
         "source": ['preset = "smoke"\n', 'figures_dir = "/work/main/build/smoke/papers_figures"\n']},
        {"cell_type": "markdown", "metadata": {}, "source": "# 1. Title"}]}
    nb = json.loads(downloaded_notebook(json.dumps(executed).encode()))
    first = nb["cells"][0]
    assert first["cell_type"] == "markdown" and ABOUT_TAG in first["metadata"]["tags"]
    assert first["source"] == about_markdown("###") and "@article{chang2025coverage" in first["source"]
    assert "".join(nb["cells"][1]["source"]) == 'preset = "smoke"\n'  # the builder's own folder is gone
    source = CHAPTERS[0].read_bytes()
    text = downloaded_source(source).decode()
    parsed = jupytext.reads(text, fmt="py:percent")
    assert parsed.cells[0].cell_type == "markdown" and repository_markdown() in parsed.cells[0].source
    assert [c.source for c in parsed.cells[1:]] == [c.source for c in jupytext.reads(source.decode(), fmt="py:percent").cells]
    assert parsed.metadata["kernelspec"]["name"] == "python3"


@pytest.mark.parametrize("url", [None, "https://example.org/covlib-book"])
def test_the_repository_is_linked_only_once_it_has_an_address(monkeypatch, url):
    """Until the book has a public address (covlib.base.project.REPOSITORY_URL is None) the landing page, a
    downloaded chapter and the book's citation name the repository without a link; setting it links it in each."""
    monkeypatch.setattr(project, "REPOSITORY_URL", url)
    empty = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": []}
    source = jupytext.reads(downloaded_source(CHAPTERS[0].read_bytes()).decode(), fmt="py:percent")
    shown = {"landing page": landing_page([("01_a", "1. A", "a line")], [], "smoke"),
             "downloaded notebook": json.loads(downloaded_notebook(json.dumps(empty).encode()))["cells"][0]["source"],
             "downloaded source": source.cells[0].source}
    citation = project.book_bibtex()
    assert citation.startswith("@misc{coverage_principle_book,") and citation.endswith("}")
    for where, text in shown.items():
        assert citation in text, where
        if url is None:
            assert project.REPOSITORY_WITHOUT_URL in text and not re.search(r"https?://(?!arxiv\.org/)", text), where
        else:
            assert f"<{url}>" in text and project.REPOSITORY_WITHOUT_URL not in text, where
    if url is None:
        assert "howpublished" not in citation and "\\url" not in citation
        assert "a checkout of the repository this book was built from.</p>" in shown["landing page"]
    else:
        assert f"howpublished = {{\\url{{{url}}}}}," in citation
        assert f'a checkout of <a href="{url}">the repository</a>.' in shown["landing page"]


def test_the_exercises_say_where_they_can_be_done():
    nb = {"metadata": {}, "cells": [{"cell_type": "markdown", "metadata": {}, "source": "# 1. T\n\nBody."},
                                    {"cell_type": "markdown", "metadata": {}, "source": "## Exercises\n\n1. Do it."}]}
    text = prepare_notebook(nb, "01_t").notebook["cells"][1]["source"]
    assert text.index("## Exercises") < text.index("cannot be run") < text.index("1. Do it.")


def test_reading_copy_collapses_code_and_solutions_and_drops_widgets():
    nb = {"metadata": {"widgets": {"state": {}}}, "cells": [
        {"cell_type": "markdown", "metadata": {}, "source": "# 9. A title\n\nFirst sentence here. Second one."},
        {"cell_type": "code", "metadata": {"tags": ["injected-parameters"]}, "source": "preset = 'smoke'", "outputs": []},
        {"cell_type": "code", "metadata": {}, "source": "x = 1", "outputs": [
            {"output_type": "display_data", "data": {"application/vnd.jupyter.widget-view+json": {"model_id": "a"}}}]},
        {"cell_type": "code", "metadata": {"tags": ["solution"]}, "source": "check()", "outputs": []}]}
    out = prepare_notebook(nb, "09_x").notebook
    tags = [c["metadata"].get("tags", []) for c in out["cells"]]
    assert "remove-cell" in tags[1] and "hide-input" in tags[2] and "hide-cell" in tags[3]
    assert out["cells"][2]["outputs"] == [] and "widgets" not in out["metadata"]
    assert chapter_summary(nb) == ("9. A title", "First sentence here.")


def test_the_download_line_sits_right_under_the_chapter_title():
    nb = {"metadata": {}, "cells": [{"cell_type": "markdown", "metadata": {}, "source": ["Intro.\n", "# 3. Title\n",
                                                                                         "Body."]}]}
    text = prepare_notebook(nb, "03_title").notebook["cells"][0]["source"]
    title, downloads, body = text.index("# 3. Title"), text.index("downloads/03_title.ipynb"), text.index("Body.")
    assert text.startswith("Intro.") and title < downloads < body and "downloads/03_title.py" in text


def squares_chart(title: str = "Squares") -> alt.Chart:
    """A scatter with a tooltip and a slider bound to a parameter that filters the points."""
    data = pd.DataFrame({"x": range(8), "y": [v * v for v in range(8)], "task": ["twohop", "nontree"] * 4})
    cut = alt.param(name="cut", value=3, bind=alt.binding_range(min=0, max=7, step=1, name="points up to x = "))
    return (alt.Chart(data, title=title).mark_point(filled=True, size=150)
            .encode(x="x:Q", y="y:Q", color="task:N", tooltip=["x:Q", "y:Q", "task:N"])
            .add_params(cut).transform_filter(alt.datum.x <= cut))


def bars_chart() -> alt.Chart:
    """Bars with a tooltip and a drop-down bound to a parameter that picks the highlighted bar."""
    data = pd.DataFrame({"task": ["twohop", "nontree", "threehop"], "n": [3, 5, 2]})
    pick = alt.param(name="pick", value="twohop", bind=alt.binding_select(options=list(data.task), name="highlight "))
    return (alt.Chart(data, title="Bars").mark_bar()
            .encode(x="task:N", y="n:Q", tooltip=["task:N", "n:Q"],
                    color=alt.condition(alt.datum.task == pick, alt.value("#d62728"), alt.value("#9e9e9e")))
            .add_params(pick))


def chart_output(bundle: dict, result: bool = False) -> nbformat.NotebookNode:
    if result:
        return nbformat.v4.new_output("execute_result", data=bundle, execution_count=1)
    return nbformat.v4.new_output("display_data", data=bundle)


def wide_chart() -> alt.HConcatChart:
    """Two scatters side by side, together wider than the site's text column."""
    return alt.hconcat(squares_chart("Wide, left").properties(width=520), squares_chart("Wide, right").properties(width=520))


GENERATED_MATH = "The bridge $b$ depends on $x_2$, so the pair $(b, x_2)$ groups the items."


def write_synthetic_book(root: Path) -> None:
    """notebooks/ with three chapter sources and build/smoke/ with them "executed": chapter 01 holds two live charts
    (as covlib.figures.live writes them) and math; chapter 02 one chart whose spec cannot be drawn; chapter 03 a
    chart wider than the page, and Markdown with math that a cell displayed (as chapters display generated prose)."""
    (root / "notebooks").mkdir(parents=True)
    (root / "build" / "smoke").mkdir(parents=True)
    kernel = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}
    first = nbformat.v4.new_notebook(metadata=kernel, cells=[
        nbformat.v4.new_markdown_cell("# 1. Two live charts\n\nA scatter and bars, and math: $N^c$."),
        nbformat.v4.new_code_cell("squares", outputs=[chart_output(live_bundle(squares_chart().to_dict()))]),
        nbformat.v4.new_code_cell("bars", outputs=[chart_output(live_bundle(bars_chart().to_dict()), result=True)])])
    broken = live_bundle(squares_chart("Broken").to_dict())
    broken[LIVE_MIMETYPE] = {**broken[LIVE_MIMETYPE], "mark": "no-such-mark"}  # its PNG still shows the squares
    second = nbformat.v4.new_notebook(metadata=kernel, cells=[
        nbformat.v4.new_markdown_cell("# 2. A chart that cannot be drawn\n\nIts PNG stays, math stays: $x$."),
        nbformat.v4.new_code_cell("broken", outputs=[chart_output(broken)])])
    third = nbformat.v4.new_notebook(metadata=kernel, cells=[
        nbformat.v4.new_markdown_cell("# 3. A wide chart and generated prose\n\nBoth from code cells."),
        nbformat.v4.new_code_cell("display(Markdown(text))", outputs=[nbformat.v4.new_output(
            "display_data", data={"text/markdown": GENERATED_MATH, "text/plain": "<IPython.core.display.Markdown>"})]),
        nbformat.v4.new_code_cell("wide", outputs=[chart_output(live_bundle(wide_chart().to_dict()))])])
    for stem, notebook in (("01_live", first), ("02_broken", second), ("03_wide", third)):
        nbformat.write(notebook, root / "build" / "smoke" / f"{stem}.ipynb")
        (root / "notebooks" / f"{stem}.py").write_text(f"# %% [markdown]\n# # {stem}\n\n# %%\n1\n")


def test_chart_outputs_become_live_html_with_their_png_beside():
    title = "Squares </script><script>alert(1)</script>"
    bundle = live_bundle(squares_chart(title).to_dict())
    nb = {"metadata": {}, "cells": [{"cell_type": "code", "metadata": {}, "source": "c", "outputs": [
        {"output_type": "display_data", "metadata": {}, "data": bundle}]}]}
    copy = prepare_notebook(nb, "01_x")
    data = copy.notebook["cells"][-1]["outputs"][0]["data"]
    assert set(data) == {"text/html", "text/plain"} and count_charts(copy.notebook) == 0 and count_charts(nb) == 1
    png = base64.b64decode(bundle["image/png"])
    assert copy.files == {"charts/01_x-1.png": png}
    page = data["text/html"]
    assert page.count("</script>") == 1, "the title closed the spec's script block early"
    payload = re.search(r'<script type="application/json" class="covlib-chart-spec">(.*?)</script>', page, re.S)
    spec = {k: v for k, v in bundle[LIVE_MIMETYPE].items() if k != "$schema"}
    assert json.loads(payload.group(1)) == spec and "https://" not in page
    width = int.from_bytes(png[16:20], "big")
    assert 'src="charts/01_x-1.png"' in page and f'width="{round(width / PNG_SCALE)}"' in page


def test_the_landing_page_opens_with_what_the_book_finds(tmp_path: Path):
    """Above "Run it yourself": the README's table of claims and verdicts, from the metrics the site's own chapters
    recorded, linking the chapter pages that are built (and only those)."""
    snapshot = json.loads((Path(__file__).parent / "snapshots" / "metrics_default.json").read_text())["chapters"]
    for stem in ("04_how_much_data", "07_chain_of_thought"):
        (tmp_path / stem).mkdir()
        (tmp_path / stem / "metrics.json").write_text(json.dumps(snapshot[stem]))
    found = landing_findings(tmp_path, "default", ["04_how_much_data", "07_chain_of_thought"])
    assert found.endswith(findings({s: snapshot[s] for s in ("04_how_much_data", "07_chain_of_thought")},
                                   link=site_link, stems={"04": "04_how_much_data", "07": "07_chain_of_thought"}))
    assert "| parallel two-hop: required data ∝ N^c ([ch. 4](04_how_much_data.ipynb)) |" in found
    assert "06_path_ambiguity.ipynb" not in found and "notebooks/" not in found  # no link to a page not built
    page = landing_page([("04_how_much_data", "4. How much data", "")], [], "default", found=found)
    assert page.index("## What the book finds") < page.index("| the paper's claim |") < page.index("## Run it yourself")
    assert landing_findings(tmp_path / "none", "default", []) == ""  # no metrics recorded: no section
    assert "## What the book finds" not in landing_page([("04_how_much_data", "4. How much data", "")], [], "default")
    smoke = landing_findings(tmp_path, "smoke", ["04_how_much_data"])
    assert "these numbers test the code, not the paper" in smoke


@pytest.mark.slow
def test_a_search_snippet_starts_at_the_pages_own_text(synthetic_site: Path):
    """Sphinx's search reads a result's snippet from the page's main element, which in this theme opens with the
    theme switcher ("System Settings Light Dark") and a print-only title: covlib-search.js reads the article."""
    search = (synthetic_site / "search.html").read_text(encoding="utf-8")
    ours, theirs = search.index('src="_static/covlib-search.js'), search.index('src="_static/searchtools.js')
    assert "defer" in search[search.rindex("<script", 0, ours):ours] and ours < theirs  # deferred: runs after it
    assert "covlib-search.js" not in (synthetic_site / "01_live.html").read_text(encoding="utf-8")
    script = (synthetic_site / "_static" / "covlib-search.js").read_text(encoding="utf-8")
    assert 'querySelector(\'[role="main"]\')' in script and 'querySelector("article")' in script
    page = BeautifulSoup((synthetic_site / "01_live.html").read_text(encoding="utf-8"), "html.parser")
    main = page.select_one('[role="main"]')
    article = main.select_one("article")
    assert "System Settings" in main.get_text()  # what the snippet began with
    for chrome in article.select(".covlib-downloads, .headerlink, summary"):
        chrome.decompose()
    text = " ".join(article.get_text().split())
    assert "System Settings" not in text and text.startswith("1. Two live charts A scatter and bars")


@pytest.mark.slow
def test_the_search_shows_snippets_from_the_pages_text(browser_context, synthetic_served: str):
    for word in ("live", "scatter"):  # in the title (the snippet began with the theme switcher), and in the text
        seen = visit(browser_context, synthetic_served)
        assert seen.page.goto(f"{synthetic_served}/search.html?q={word}", wait_until="load").ok
        seen.page.wait_for_selector("ul.search li p.context", timeout=15_000)
        snippet = " ".join(seen.page.locator("ul.search li p.context").first.inner_text().split())
        assert "System Settings" not in snippet and "Download this chapter" not in snippet, snippet
        assert snippet.startswith("1. Two live charts A scatter and bars"), snippet
        assert seen.errors == [] and seen.external == []
        seen.page.close()


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


# ----------------------------------------------------------------------------- the synthetic book


@pytest.fixture(scope="module")
def synthetic_site(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("synthetic-book")
    write_synthetic_book(root)
    return build_site("smoke", root / "build", notebooks_dir=root / "notebooks")


@pytest.mark.slow
def test_the_site_serves_the_vega_bundle_itself_and_only_chart_pages_load_it(synthetic_site: Path):
    bundle = (synthetic_site / "_static" / "vega-bundle.js").read_text(encoding="utf-8")
    assert len(bundle) > 500_000 and "window.vegaEmbed=" in bundle
    scripts = re.compile(r'<script[^>]*src="_static/(vega-bundle|covlib-charts)\.js')
    page = (synthetic_site / "01_live.html").read_text(encoding="utf-8")
    assert [m.group(1) for m in scripts.finditer(page)] == ["vega-bundle", "covlib-charts"]
    assert not scripts.search((synthetic_site / "index.html").read_text(encoding="utf-8"))
    assert sorted(p.name for p in (synthetic_site / "charts").iterdir()) == [
        "01_live-1.png", "01_live-2.png", "02_broken-1.png", "03_wide-1.png"]


@pytest.fixture(scope="module")
def browser_context():
    with chromium() as browser:
        context = browser.new_context(viewport=WINDOW, accept_downloads=True)
        yield context
        context.close()


@pytest.fixture(scope="module")
def synthetic_served(synthetic_site: Path):
    with serve(synthetic_site) as url:
        yield url


# The points of a chart's data marks a pointer can rest on (at most 12, in client coordinates), after scrolling
# the chart into view: the centre of a mark, or for a line the middle of its stroke.
MARK_POINTS = """(chart) => {
  chart.scrollIntoView({block: "center"});
  const points = [];
  for (const mark of chart.querySelectorAll("svg.marks g.role-mark > path, svg.marks g.role-mark > g > path")) {
    const box = mark.getBoundingClientRect();
    if (box.width === 0 && box.height === 0) continue;
    let x = box.x + box.width / 2, y = box.y + box.height / 2;
    if (document.elementFromPoint(x, y) !== mark && mark.getTotalLength) {
      const p = mark.getPointAtLength(mark.getTotalLength() / 2).matrixTransform(mark.getScreenCTM());
      x = p.x; y = p.y;
    }
    if (document.elementFromPoint(x, y) === mark) points.push([x, y]);
    if (points.length === 12) break;
  }
  return points;
}"""


# Each drawn chart against its column: the widths of the column and of what vega-embed drew (the chart and its action
# button beside it), whether the column must scroll sideways to show it, whether the button covers the chart, and
# whether the chart says it is wide (the note above it, visible).
CHART_FIT = """() => [...document.querySelectorAll('.covlib-chart.covlib-chart-drawn')].map(chart => {
  const svg = chart.querySelector('svg.marks').getBoundingClientRect();
  const button = chart.querySelector('.vega-embed details summary');
  const box = button ? button.getBoundingClientRect() : null;
  const note = getComputedStyle(chart, '::before');
  return {id: chart.id, column: chart.clientWidth, drawn: chart.scrollWidth, chart: Math.round(svg.width),
          scrolls: chart.scrollWidth > chart.clientWidth + 1,
          covered: !!box && box.left < svg.right - 1 && box.bottom > svg.top && box.width > 0,
          says_wide: chart.classList.contains('covlib-chart-wide') && note.content.includes('wider than the page')
                     && note.display !== 'none'};
})"""


def misfits(page) -> list[str]:
    """The drawn charts of a page that do not fit their column at this window: too wide (and whether they say
    so), or under their action button."""
    problems = []
    for fit in page.evaluate(CHART_FIT):
        if fit["scrolls"]:
            cue = "says so" if fit["says_wide"] else "and does not say so"
            problems.append(f"{fit['id']}: {fit['drawn']} px wide in a {fit['column']} px column ({cue})")
        elif fit["covered"]:
            problems.append(f"{fit['id']}: its action button covers the chart")
    return problems


def drawn_charts(page) -> list[bool]:
    """Waits for the page's charts; for each, whether vega-embed drew it."""
    return page.evaluate("async () => window.covlibCharts ? (await window.covlibCharts).map(v => v !== null) : []")


def tooltip_of(page, chart) -> str:
    """The tooltip text shown while the pointer rests on one of ``chart``'s data marks ("" if none shows one)."""
    tooltip = page.locator("#vg-tooltip-element.visible")
    for x, y in chart.evaluate(MARK_POINTS):
        page.mouse.move(x, y)
        try:
            tooltip.wait_for(state="visible", timeout=400)
        except Exception:  # playwright's TimeoutError: this mark has no tooltip
            continue
        return tooltip.inner_text()
    return ""


def first_tooltip(page) -> str:
    """The tooltip of the first chart of the page that shows one on a data mark ("" if none does)."""
    for chart in page.locator(".covlib-chart").all():
        text = tooltip_of(page, chart)
        if text:
            return text
    return ""


def move_control(page, chart) -> None:
    """Moves the first control under ``chart`` as a reader would: a slider to its other end, another option of
    a drop-down, another radio button, a checkbox toggled."""
    control = chart.locator(CONTROLS).first
    kind = control.evaluate("e => e.tagName === 'SELECT' ? 'select' : e.type")
    if kind == "range":
        before = control.input_value()
        control.focus()
        page.keyboard.press("End" if control.evaluate("e => e.value !== e.max") else "Home")
        assert control.input_value() != before
    elif kind == "select":
        current = control.input_value()
        values = control.locator("option").evaluate_all("options => options.map(o => o.value)")
        control.select_option(next(v for v in values if v != current))
    elif kind == "radio":
        chart.locator(".vega-bindings input[type=radio]:not(:checked)").first.check()
    elif kind == "checkbox":
        control.click()
    else:
        raise AssertionError(f"no test knows how to move a control of type {kind!r}")


def control_redraws(page, chart) -> bool:
    """Whether moving ``chart``'s first control changes the marks it draws (within 5 s)."""
    marks = chart.locator("svg.marks")
    before = marks.inner_html()
    move_control(page, chart)
    try:
        page.wait_for_function("([svg, before]) => svg.innerHTML !== before", arg=[marks.element_handle(), before],
                               timeout=5000)
    except Exception:  # playwright's TimeoutError: the chart did not change
        return False
    return True


@pytest.mark.slow
def test_a_live_chart_draws_shows_tooltips_and_redraws_when_its_controls_move(browser_context, synthetic_served: str):
    seen = visit(browser_context, synthetic_served)
    page = seen.page
    assert page.goto(f"{synthetic_served}/01_live.html", wait_until="load").ok
    assert drawn_charts(page) == [True, True]
    charts = page.locator(".covlib-chart")
    assert page.locator(".covlib-chart svg.marks").count() == 2 and page.locator("img.covlib-chart-png").count() == 0
    tooltip = tooltip_of(page, charts.nth(0))
    assert re.search(r"\bx\s+\d", tooltip) and re.search(r"\by\s+\d", tooltip) and "task" in tooltip, tooltip
    assert "n" in tooltip_of(page, charts.nth(1)).split()
    for chart in charts.all():
        assert control_redraws(page, chart), "moving a control left its chart as it was"
    assert seen.external == [] and seen.errors == []
    page.close()


@pytest.mark.slow
def test_without_javascript_every_chart_shows_its_png(browser_context, synthetic_served: str):
    context = browser_context.browser.new_context(java_script_enabled=False)
    seen = visit(context, synthetic_served)
    assert seen.page.goto(f"{synthetic_served}/01_live.html", wait_until="load").ok
    pngs = seen.page.locator("img.covlib-chart-png")
    assert pngs.count() == 2
    for png in pngs.all():
        png.scroll_into_view_if_needed()
        png.evaluate("img => img.decode()")
        assert png.evaluate("img => img.naturalWidth") > 0 and png.is_visible()
    assert seen.external == [] and seen.errors == []
    context.close()


@pytest.mark.slow
def test_a_chart_that_cannot_be_drawn_keeps_its_png_and_says_so(browser_context, synthetic_served: str):
    seen = visit(browser_context, synthetic_served)
    assert seen.page.goto(f"{synthetic_served}/02_broken.html", wait_until="load").ok
    assert drawn_charts(seen.page) == [False]
    assert seen.page.locator("img.covlib-chart-png").count() == 1
    assert len(seen.errors) == 1 and "chart-1 could not be drawn" in seen.errors[0], seen.errors
    seen.page.close()


@pytest.mark.slow
def test_the_download_links_hand_over_the_chapter(browser_context, synthetic_served: str, synthetic_site: Path):
    seen = visit(browser_context, synthetic_served)
    page = seen.page
    assert page.goto(f"{synthetic_served}/01_live.html", wait_until="load").ok
    executed = synthetic_site.parent.parent / "smoke" / "01_live.ipynb"
    source = synthetic_site.parent.parent.parent / "notebooks" / "01_live.py"
    for link, expected in (("01_live.ipynb", downloaded_notebook(executed.read_bytes())),
                           ("01_live.py", downloaded_source(source.read_bytes()))):
        with page.expect_download() as download:
            page.locator(f'a[href="downloads/{link}"]').click()
        assert download.value.suggested_filename == link
        assert Path(download.value.path()).read_bytes() == expected
    assert page.goto(f"{synthetic_served}/index.html", wait_until="load").ok
    with page.expect_download() as download:
        page.locator(f'a[href="downloads/{NOTEBOOKS_ZIP}"]').click()
    with zipfile.ZipFile(io.BytesIO(Path(download.value.path()).read_bytes())) as archive:
        assert [Path(n).name for n in archive.namelist()] == ["01_live.ipynb", "02_broken.ipynb", "03_wide.ipynb"]
    assert seen.external == [] and seen.errors == []
    page.close()


# ----------------------------------------------------------------------------- the smoke book in a real browser


@pytest.fixture(scope="module")
def served(site: Path):
    with serve(site) as url:
        yield url


PAGES = ["index"] + [c.stem for c in CHAPTERS]


def cut_off_text(page) -> list[str]:
    """The first line of every printed cell output whose text runs past its box (hidden or scrolled sideways)."""
    return page.evaluate("""() => [...document.querySelectorAll('.cell_output pre')]
        .filter(el => el.scrollWidth > el.clientWidth + 2).map(el => el.innerText.slice(0, 100))""")


@pytest.mark.parametrize("page_name", PAGES)
def test_page_renders_in_chromium_with_live_charts_math_and_no_errors(browser_context, served: str, site: Path,
                                                                      page_name: str):
    seen = visit(browser_context, served)
    page = seen.page
    assert page.goto(f"{served}/{page_name}.html", wait_until="load").ok
    notebook = None if page_name == "index" else executed_notebook(site, page_name)
    title = "The Coverage Principle" if notebook is None else chapter_summary(notebook)[0]
    assert title in page.title()
    assert title in page.locator("h1").first.inner_text()
    charts = 0 if notebook is None else count_charts(notebook)
    assert drawn_charts(page) == [True] * charts, "a chart was not drawn"
    assert page.locator(".covlib-chart svg.marks").count() == charts
    assert misfits(page) == [], f"charts that do not fit the page at {WINDOW['width']} px"
    assert cut_off_text(page) == [], f"printed output wider than the column at {WINDOW['width']} px"
    images = page.evaluate("""async () => {
        const imgs = [...document.images]; imgs.forEach(i => i.loading = 'eager');
        await Promise.all(imgs.map(i => i.decode().catch(() => null)));
        return {n: imgs.length, broken: imgs.filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src)}; }""")
    assert images["broken"] == [], images
    if notebook is not None:
        assert images["n"] + charts >= 1, f"{page_name} shows no figure"
    if charts:
        assert first_tooltip(page), f"{page_name}: no chart shows a tooltip on its data marks"
    with_controls = page.locator(".covlib-chart").filter(has=page.locator(CONTROLS))
    if with_controls.count():
        assert control_redraws(page, with_controls.first), f"{page_name}: moving a control left its chart as it was"
    typeset = page.evaluate("async () => { await MathJax.startup.promise; "
                            "return document.querySelectorAll('mjx-container').length }")
    assert typeset > 0, "no math was typeset"
    assert seen.external == [], f"requests leaving the machine: {seen.external}"
    assert seen.errors == [], seen.errors
    page.close()


@pytest.mark.slow
def test_a_chart_wider_than_the_column_is_found_and_says_so_and_the_rest_fit(browser_context, synthetic_served: str):
    """The width check of every smoke page (test_page_renders_...), on the planted wide chart; and the cue a
    reader sees when a chart must be wider than the page."""
    seen = visit(browser_context, synthetic_served)
    page = seen.page
    assert page.goto(f"{synthetic_served}/03_wide.html", wait_until="load").ok
    assert drawn_charts(page) == [True]
    (problem,) = misfits(page)
    assert problem.startswith("chart-1: ") and problem.endswith("(says so)"), problem
    assert page.locator(".covlib-chart.covlib-chart-wide").evaluate(
        "c => getComputedStyle(c, '::before').content").startswith('"This chart is wider than the page')
    page.evaluate("() => document.querySelector('.covlib-chart').classList.remove('covlib-chart-wide')")
    assert misfits(page)[0].endswith("(and does not say so)")
    assert page.goto(f"{synthetic_served}/01_live.html", wait_until="load").ok
    assert drawn_charts(page) == [True, True] and misfits(page) == []
    assert seen.external == [] and seen.errors == []
    page.close()


@pytest.mark.slow
def test_math_in_markdown_a_cell_displays_is_typeset(browser_context, synthetic_served: str):
    """Chapters display generated prose as Markdown from code: its $...$ is typeset like the chapter's own text."""
    seen = visit(browser_context, synthetic_served)
    page = seen.page
    assert page.goto(f"{synthetic_served}/03_wide.html", wait_until="load").ok
    page.evaluate("async () => { await MathJax.startup.promise; }")
    output = page.locator(".cell_output", has_text="The bridge")
    assert output.locator("mjx-container").count() == 3
    assert "$" not in output.inner_text()
    assert seen.external == [] and seen.errors == []
    page.close()
