"""The executed chapters as a static HTML book (Sphinx, myst-nb), offline, with live charts and downloads.

Each chart output of an executed chapter ({LIVE_MIMETYPE: spec, "image/png": ..., "text/plain": ...}, written by
covlib.figures.live) becomes a small HTML block: the spec inline, the PNG as a fallback for readers without
JavaScript, drawn by vega-embed from one bundle the site serves itself (vl-convert ships it; no CDN)."""
from __future__ import annotations

import base64
import html
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import vl_convert as vlc

from covlib.base.errors import CovlibError
from covlib.base.paths import REPO
from covlib.base.presets import PRESETS
from covlib.base.project import about_markdown, repository_html
from covlib.book.classroom import class_path_markdown
from covlib.book.editions import (
    EDITIONS,
    SOLUTION_TAG,
    check_edition,
    edition_root,
    for_edition,
    source_without_solutions,
)
from covlib.book.readme import findings, site_link
from covlib.book.runner import NOTEBOOKS, discover_chapters
from covlib.book.snapshot import read_metrics
from covlib.figures.live import PNG_SCALE, chart_title

TITLE = "The Coverage Principle, as a book you can rerun"


WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
VEGALITE_MIME = re.compile(r"application/vnd\.vegalite\.v\d+\+json")
BUNDLE = "vega-bundle.js"  # vega + vega-lite + vega-embed (with vega-tooltip), in _static
NOTEBOOKS_ZIP = "coverage-principle-notebooks.zip"  # every executed chapter
SOURCES_ZIP = "coverage-principle-sources.zip"  # every chapter's jupytext source


CONF = '''# Sphinx configuration written by covlib.book.site (regenerated on every build).
import importlib.util
import os
import shutil

project = {title!r}
author = "the covlib authors"
extensions = ["myst_nb"]
myst_enable_extensions = ["dollarmath", "amsmath"]
nb_execution_mode = "off"  # the chapters were executed by `covlib book`
nb_render_markdown_format = "myst"  # Markdown a cell displays (generated prose) gets its $math$ typeset too
exclude_patterns = ["_build", "_static", "_extra", "**.ipynb_checkpoints"]
html_theme = "sphinx_book_theme"
html_title = project
html_show_copyright = False
html_show_sourcelink = False
html_theme_options = {{"show_toc_level": 2, "use_download_button": False, "use_fullscreen_button": False}}
html_context = {{"default_mode": "light"}}  # a valid mode: an empty one logs a console error
html_favicon = "favicon.svg"
html_static_path = ["_static"]  # the chart scripts and their stylesheet
html_extra_path = ["_extra"]  # served as they are: downloads/ and the charts' PNGs in charts/
html_css_files = ["covlib-charts.css"]
html_copy_source = False  # readers download the chapters from downloads/ instead
# MathJax 3 as one self-contained file (TeX input, SVG output, no fonts), served from the site
_mathjax = os.path.join(os.path.dirname(importlib.util.find_spec("sphinx-mathjax-offline").origin),
                        "static", "mathjax", "tex-svg-full.js")
mathjax_path = "mathjax/tex-svg-full.js"


def _copy_mathjax(app, exc):
    if exc is None and app.builder.format == "html":
        target = os.path.join(app.outdir, "_static", "mathjax")
        os.makedirs(target, exist_ok=True)
        shutil.copy2(_mathjax, target)


def _chart_scripts(app, pagename, templatename, context, doctree):
    # only a page that shows charts loads the Vega bundle (about 1 MB); deferred scripts run in this order
    if "covlib-chart" in context.get("body", ""):
        app.add_js_file({bundle!r}, loading_method="defer")
        app.add_js_file("covlib-charts.js", loading_method="defer")
    if pagename == "search":  # deferred: it runs after searchtools.js, before the search does
        app.add_js_file({search!r}, loading_method="defer")


def setup(app):
    app.connect("build-finished", _copy_mathjax)
    app.connect("html-page-context", _chart_scripts)
'''

# Draws every chart of a page with vega-embed. `window.covlibCharts` is a promise of the charts' Vega views (null
# for a chart that failed, whose PNG then stays), which the browser tests await. A chart wider than its column
# (the book's charts are made to fit one at a 1400 px window) says so above itself and scrolls sideways.
CHARTS_JS = '''"use strict";
window.covlibCharts = (() => {
  const options = {mode: "vega-lite", renderer: "svg", tooltip: true,
                   actions: {export: true, source: false, compiled: false, editor: false}};
  async function draw(container) {
    const spec = JSON.parse(container.querySelector("script.covlib-chart-spec").textContent);
    const result = await vegaEmbed(container.querySelector(".covlib-chart-live"), spec, options);
    container.querySelector("img.covlib-chart-png")?.remove();
    container.classList.add("covlib-chart-drawn");
    markWide(container);
    return result.view;
  }
  function markWide(container) {
    container.classList.toggle("covlib-chart-wide", container.scrollWidth > container.clientWidth + 1);
  }
  window.addEventListener("resize", () => document.querySelectorAll(".covlib-chart-drawn").forEach(markWide));
  const charts = [...document.querySelectorAll(".covlib-chart")];
  return Promise.all(charts.map(chart => draw(chart).catch(error => {
    console.error(`chart ${chart.id} could not be drawn: ${error}`);
    return null;
  })));
})();
'''

# Sphinx's search shows the start of a page's main element as each result's snippet. In this theme that element opens
# with the article's header (the theme switcher's "System Settings Light Dark") and a print-only copy of the title:
# the snippet is read from the article alone, without the download line and the folds' labels ("Show code cell
# source"), so that it starts at the page's own text.
SEARCH_JS_FILE = "covlib-search.js"
SEARCH_JS = '''"use strict";
(() => {
  if (typeof Search === "undefined" || typeof Search.htmlToText !== "function") return;
  const pageText = Search.htmlToText;
  Search.htmlToText = (htmlString, anchor) => {
    const page = new DOMParser().parseFromString(htmlString, "text/html");
    const main = page.querySelector('[role="main"]');
    const article = main && main.querySelector("article");
    if (article) main.replaceChildren(article);
    page.querySelectorAll(".covlib-downloads, summary").forEach((chrome) => chrome.remove());
    return pageText(page.documentElement.outerHTML, anchor);
  };
})();
'''

CHARTS_CSS = '''.covlib-chart { overflow-x: auto; margin: 0.5em 0; scrollbar-width: auto; scrollbar-color: #888 #eee; }
.covlib-chart.covlib-chart-wide { border-bottom: 1px solid #ccc; }
.covlib-chart.covlib-chart-wide::before { content: "This chart is wider than the page: scroll sideways to see all of it \\2192";
  display: block; position: sticky; left: 0; font-size: 0.85em; color: #555; font-style: italic; }
.covlib-chart img.covlib-chart-png { max-width: 100%; height: auto; }
.covlib-chart .vega-bindings { margin-top: 0.4em; font-size: 0.9em; }
.covlib-chart .vega-bind-radio label { margin: 0 0.9em 0 0.25em; }
.covlib-downloads { font-size: 0.9em; }
.cell_output pre { white-space: pre-wrap; overflow-wrap: anywhere; }
'''


FAVICON = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" '
           'fill="#1565c0"/><text x="8" y="12" font-size="10" text-anchor="middle" fill="white">k</text></svg>')


@dataclass
class ReadingCopy:
    """A chapter made for reading: its notebook, and the files its outputs link to (site path -> bytes)."""

    notebook: dict
    files: dict[str, bytes] = field(default_factory=dict)


def chapter_summary(notebook: dict) -> tuple[str, str]:
    """(title, one line) of a chapter: its first markdown heading and the first sentence after it."""
    for cell in notebook["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        match = re.search(r"^#\s+(.+)$", text, flags=re.M)
        if not match:
            continue
        rest = text[match.end():].strip()
        paragraph = " ".join(rest.split("\n\n")[0].split()) if rest else ""
        sentence = re.split(r"(?<=[.!?])\s", paragraph, maxsplit=1)[0] if paragraph else ""
        return match.group(1).strip(), sentence
    return "untitled chapter", ""


def chart_mimetype(data: dict) -> str | None:
    """The Vega-Lite mimetype of an output's data (any version), or None when the output is not a chart."""
    return next((key for key in data if VEGALITE_MIME.fullmatch(key)), None)


def count_charts(notebook: dict) -> int:
    """How many chart outputs (Vega-Lite) an executed notebook holds."""
    return sum(1 for cell in notebook["cells"] for out in cell.get("outputs", [])
               if chart_mimetype(out.get("data") or {}))


def png_width(png: bytes) -> int:
    """The width in pixels of a PNG (from its IHDR chunk)."""
    if png[:8] != b"\x89PNG\r\n\x1a\n":
        raise CovlibError("a chart's image/png output is not a PNG; rerun the chapter with `covlib book`")
    return struct.unpack(">I", png[16:20])[0]


def chart_html(spec: dict, png_path: str | None, png: bytes | None, chart_id: str) -> str:
    """One chart as HTML: a div vega-embed draws into, the PNG (shown until then, or for good without JavaScript)
    and the spec as inline JSON. The spec's $schema (a URL) is dropped: the page names no outside address."""
    spec = {key: value for key, value in spec.items() if key != "$schema"}
    # "<" only occurs inside JSON strings, where \u003c means the same: no "</script>" can end the block early
    payload = json.dumps(spec, separators=(",", ":"), ensure_ascii=False).replace("<", "\\u003c")
    title = html.escape(chart_title(spec), quote=True)
    image = ""
    if png_path and png:
        width = round(png_width(png) / PNG_SCALE)
        image = f'<img class="covlib-chart-png" src="{png_path}" alt="{title}" width="{width}" loading="lazy">'
    return (f'<div class="covlib-chart" id="{chart_id}" role="figure" aria-label="{title}">'
            f'<div class="covlib-chart-live"></div>{image}'
            f'<script type="application/json" class="covlib-chart-spec">{payload}</script></div>')


def live_chart_output(out: dict, mimetype: str, stem: str, number: int) -> tuple[dict, dict[str, bytes]]:
    """A chart output turned into HTML (text/html and text/plain kept), and its PNG file (site path -> bytes)."""
    data = out["data"]
    spec = data[mimetype]
    spec = json.loads(spec) if isinstance(spec, str) else spec
    encoded = data.get("image/png")
    png = base64.b64decode("".join(encoded) if isinstance(encoded, list) else encoded) if encoded else None
    png_path = f"charts/{stem}-{number}.png" if png else None
    converted = {"text/html": chart_html(spec, png_path, png, f"chart-{number}")}
    if "text/plain" in data:
        converted["text/plain"] = data["text/plain"]
    out = {**out, "data": converted}
    out.get("metadata", {}).pop(mimetype, None)
    return out, ({png_path: png} if png else {})


def download_links(stem: str) -> str:
    """The line under a chapter's title that offers it for download (files served from downloads/)."""
    return (f'<p class="covlib-downloads">Download this chapter: '
            f'<a href="downloads/{stem}.ipynb" download>the executed notebook (.ipynb)</a> · '
            f'<a href="downloads/{stem}.py" download>its source (.py, jupytext)</a></p>')


def _insert_under_heading(nb: dict, heading: str, html: str) -> bool:
    """Put ``html`` under the first markdown line matching ``heading`` (a regex); False when no cell has one."""
    for cell in nb["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        match = re.search(heading, text, flags=re.M)
        if match:
            cell["source"] = f"{text[:match.end()]}\n\n{html}\n{text[match.end():]}"
            return True
    return False


def add_download_links(nb: dict, stem: str) -> None:
    """Put the download line right under the chapter's first heading (or on top when it has none)."""
    if not _insert_under_heading(nb, r"^#\s+.+$", download_links(stem)):
        nb["cells"].insert(0, {"cell_type": "markdown", "metadata": {}, "source": download_links(stem)})


EXERCISES_NOTE = ("<p class=\"covlib-exercises-note\"><em>On this page the exercises' cells are folded and cannot be "
                  "run: download the chapter (the link under its title) and open it in JupyterLab from a checkout of "
                  "the repository to answer them there. Your answers go in the chapter's parameters cell (the "
                  "<code>my_</code> names), and the check under the exercises says whether each is right.{solutions}"
                  "</em></p>")
SOLUTIONS_NOTE = {"full": " Each solution is folded under its check.",
                  "student": " This is the student edition: it has no solutions."}
SOLUTION_PROMPTS = {"code_prompt_show": "Show the solution", "code_prompt_hide": "Hide the solution"}


def add_exercises_note(nb: dict, edition: str = "full") -> None:
    """Under a chapter's exercises heading, say where the exercises can be done: a page has no cells to type in."""
    _insert_under_heading(nb, r"^#+\s+Exercises?\b.*$", EXERCISES_NOTE.format(solutions=SOLUTIONS_NOTE[edition]))


def prepare_notebook(notebook: dict, stem: str = "chapter", edition: str = "full") -> ReadingCopy:
    """A copy of an executed chapter made for reading: code collapsed, injected parameters dropped, solutions
    folded under a "Show the solution" summary (left out of the student edition), widget outputs reduced to text (a
    widget would load its code from a CDN), charts made live (with their PNGs as files), and download links under
    the title."""
    nb = for_edition(json.loads(json.dumps(notebook)), edition)
    nb.get("metadata", {}).pop("widgets", None)
    files: dict[str, bytes] = {}
    charts = 0
    for cell in nb["cells"]:
        tags = cell.setdefault("metadata", {}).setdefault("tags", [])
        if cell["cell_type"] != "code":
            continue
        if "injected-parameters" in tags:
            tags.append("remove-cell")
        elif SOLUTION_TAG in tags:
            tags.append("hide-cell")
            cell["metadata"].setdefault("mystnb", {}).update(SOLUTION_PROMPTS)
        else:
            tags.append("hide-input")
        outputs = []
        for out in cell.get("outputs", []):
            data = out.get("data")
            if data and WIDGET_MIME in data:
                data.pop(WIDGET_MIME)
                if not data:
                    continue
            mimetype = chart_mimetype(data or {})
            if mimetype:
                charts += 1
                out, png = live_chart_output(out, mimetype, stem, charts)
                files.update(png)
            outputs.append(out)
        cell["outputs"] = [o for o in outputs if o.get("data") != {"text/plain": ""}]
    add_download_links(nb, stem)
    add_exercises_note(nb, edition)
    return ReadingCopy(nb, files)


EDITIONS_CLASS = "covlib-editions"  # the landing page's paragraph on the two editions (rewritten in place)
_EDITIONS_BLOCK = re.compile(rf'<div class="{EDITIONS_CLASS}">.*?</div>', flags=re.S)


def editions_html(edition: str, other_href: str | None) -> str:
    """The landing page's paragraph on the editions: which one this is, and a link to the other one when it is
    built (``other_href``, its landing page relative to this one), else how to build the student edition."""
    if check_edition(edition) == "full":
        text = ("This is the full edition: each chapter's exercises are followed by a check, which says whether an "
                "answer is right without giving it away, and by their solutions, folded.")
        other = (f' The <a href="{other_href}">student edition</a> is the same book without the solutions, for a '
                 "teacher to hand out; its checks still run." if other_href else
                 " A teacher can build a student edition, the same book without the solutions (the checks stay), "
                 "with <code>make book EDITION=student</code>.")
    else:
        text = ("This is the student edition: each chapter's exercises are followed by a check, which says whether "
                "your answer is right; the solutions are not in it.")
        other = f' The <a href="{other_href}">full edition</a> has them.' if other_href else ""
    return f'<div class="{EDITIONS_CLASS}"><p>{text}{other}</p></div>'


def landing_findings(metrics_dir: Path, preset: str, stems: Iterable[str]) -> str:
    """What the executed chapters found (covlib.book.readme.findings: the table of the paper's claims against the
    book's verdicts, and a sentence or two per chapter) from the metrics they recorded in ``metrics_dir``, linking
    the chapter pages ``stems``; "" when no chapter recorded any."""
    try:
        metrics = read_metrics(metrics_dir)
    except CovlibError:
        return ""
    lead = (f"What the chapters on this site found at the `{preset}` preset, claim by claim, against the paper; the "
            "README states the same at the default preset, and each chapter gives the long figures behind a row.")
    if preset == "smoke":
        lead += (" At the smoke preset the models and searches are miniatures: these numbers test the code, not the "
                 "paper.")
    return f"{lead}\n\n{findings(metrics, link=site_link, stems={stem[:2]: stem for stem in stems})}"


def landing_page(chapters: list[tuple[str, str, str]], missing: list[str], preset: str, edition: str = "full",
                 other_href: str | None = None, found: str = "") -> str:
    """index.md: what the book is, what it found (``found``, landing_findings), how to run it, its two editions
    (``other_href`` links the other one when it is built), the chapters (file stem, title, one line), a path for a
    90-minute class, and downloads."""
    lines = [f"# {TITLE}", "",
             "An interactive companion to *The Coverage Principle: A Framework for Understanding Compositional "
             "Generalization* (Chang, Park, Cho et al., [arXiv 2505.20278](https://arxiv.org/abs/2505.20278)). "
             "A transformer that learns a composed function $t = f_2(f_1(x_1, x_2), x_3)$ from examples "
             "generalises to the inputs its training data *covers*, and the data it needs grows as a power of the "
             "number of tokens, $n_\\text{req} \\propto N^c$. Each chapter reproduces one part of the paper with "
             "small models trained on a laptop CPU, and sets its measured numbers beside the paper's.", "",
             *(["## What the book finds", "", found, ""] if found else []),
             "## Run it yourself", "",
             "Every chapter is a notebook you can open, rerun and change. On a machine with Python 3.10 or newer:", "",
             "```bash", "make book    # run every chapter at the default preset into build/",
             "make test    # the tests, and every chapter at the smoke preset",
             "make lab     # JupyterLab on notebooks/: a double click opens a chapter as a notebook",
             "make book EDITION=student   # the book without the exercises' solutions, and its site, in build/student/",
             "```", "",
             f"These pages show the chapters as executed at the `{preset}` preset; the code of each cell is folded "
             "under its output (click to open it). Charts are live: hover a mark for its values, and move a "
             "chart's controls where it has some.", "", "## Exercises, in two editions", "",
             editions_html(edition, other_href), "",
             "An exercise's answer is a parameter of its chapter (a name starting with `my_`): set it in the "
             "chapter's parameters cell, or pass it from the command line, as "
             "`covlib sweep notebooks/02_coverage.py -p my_half_k 4 --out answers` or, on a downloaded notebook, "
             "`papermill 02_coverage.ipynb answered.ipynb -p my_half_k 4`; the check's verdict is in the executed "
             "notebook.", "", "## Chapters", ""]
    for stem, title, line in chapters:
        lines.append(f"- [{title}]({stem}.ipynb): {line}")
    if missing:
        lines += ["", "Not executed at this preset (run `covlib book` to add them): "
                  + ", ".join(f"`{m}`" for m in missing) + "."]
    lines += ["", class_path_markdown({stem[:2]: (stem, title) for stem, title, _ in chapters})]
    lines += ["", "## Download the book", "",
              '<p class="covlib-downloads">'
              f'<a href="downloads/{NOTEBOOKS_ZIP}" download>Every chapter as an executed notebook</a> (.ipynb, '
              f'with outputs and live charts; a zip) · <a href="downloads/{SOURCES_ZIP}" download>every chapter\'s '
              "source</a> (.py, jupytext; a zip). Each chapter page offers its own two files. To rerun a chapter "
              f"you need covlib too: run it from a checkout of {repository_html('the repository')}.</p>",
              "", about_markdown()]
    lines += ["", "```{toctree}", ":hidden:", ":maxdepth: 1", "", *[stem for stem, _, _ in chapters], "```", ""]
    return "\n".join(lines)


def write_zip(path: Path, members: Iterable[tuple[str, bytes]]) -> None:
    """A zip whose bytes depend only on its members (fixed timestamps), so a rebuild does not change it."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, content in members:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, content)


ABOUT_TAG = "covlib-about"  # the first cell of a downloaded chapter: repository, licence, citation


def about_cell() -> dict:
    return {"cell_type": "markdown", "metadata": {"tags": [ABOUT_TAG]}, "source": about_markdown("###")}


def downloaded_notebook(executed: bytes, edition: str = "full") -> bytes:
    """An executed chapter as a reader downloads it: first the repository, licence and citation, and the build's
    own settings (the book runner's figures folder, a path of the machine that ran it) out of its parameters; in
    the student edition, no solution cell (its chapters were executed without them: this makes sure)."""
    nb = for_edition(json.loads(executed), edition)
    for cell in nb["cells"]:
        if "injected-parameters" in cell.get("metadata", {}).get("tags", []):
            lines = "".join(cell["source"]).splitlines(keepends=True)
            cell["source"] = [line for line in lines if not line.startswith("figures_dir = ")]
    nb["cells"].insert(0, about_cell())
    return (json.dumps(nb, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def downloaded_source(source: bytes, edition: str = "full") -> bytes:
    """A chapter's jupytext source with the repository, licence and citation as its first cell; in the student
    edition, without its solution cells."""
    text = source.decode("utf-8")
    text = text if check_edition(edition) == "full" else source_without_solutions(text)
    header = re.match(r"(# ---\n.*?\n# ---\n\n?)", text, flags=re.S)
    head, body = (header.group(1), text[header.end():]) if header else ("", text)
    cell = "\n".join(f"# {line}".rstrip() for line in about_markdown("###").splitlines())
    return f"{head}# %% [markdown] tags=[\"{ABOUT_TAG}\"]\n{cell}\n\n{body}".encode()


def write_downloads(folder: Path, chapters: list[tuple[Path, Path]], preset: str, edition: str = "full") -> None:
    """downloads/: each chapter's executed notebook and source (chapter pages link them) and one zip of each kind
    (the landing page links those), each opening with the repository, licence and citation. ``chapters`` holds
    (source .py, executed .ipynb) pairs."""
    folder.mkdir(parents=True, exist_ok=True)
    notebooks = [(executed.name, downloaded_notebook(executed.read_bytes(), edition)) for _, executed in chapters]
    sources = [(source.name, downloaded_source(source.read_bytes(), edition)) for source, _ in chapters]
    for name, content in notebooks + sources:
        (folder / name).write_bytes(content)
    book = f"coverage-principle-{preset}" + ("" if edition == "full" else f"-{edition}")
    write_zip(folder / NOTEBOOKS_ZIP, ((f"{book}/{name}", content) for name, content in notebooks))
    write_zip(folder / SOURCES_ZIP, ((f"{book}/{name}", content) for name, content in sources))


def vega_bundle() -> str:
    """vega, vega-lite and vega-embed (with vega-tooltip) as one script, headed by their versions. The newest
    Vega-Lite vl-convert ships: the one altair writes for and vl-convert draws the charts' PNGs with."""
    newest = max(vlc.get_vegalite_versions(), key=lambda v: tuple(map(int, v.split("."))))
    header = (f"/* vega {vlc.get_vega_version()}, vega-lite {newest}, vega-embed "
              f"{vlc.get_vega_embed_version()}: bundled by vl-convert for covlib's site */\n")
    # the bundle declares top-level names (such as `_`) that clash with Sphinx's scripts in the page's shared
    # scope: a function scope keeps them private; it still sets window.vegaEmbed, and works from file:// too
    return f"{header}(() => {{\n{vlc.javascript_bundle()}\n}})();\n"


def read_executed(path: Path, preset: str) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise CovlibError(f"{path} is not a notebook ({exc}); rerun `covlib book --preset {preset}`") from None


def write_sources(source: Path, chapters: list[tuple[Path, Path]], missing: list[str], preset: str,
                  edition: str = "full", other_href: str | None = None) -> None:
    """The Sphinx source folder: the reading copies, the landing page, conf.py, and the static and extra files.
    ``chapters`` holds (source .py, executed .ipynb) pairs; ``missing`` names the chapters not executed;
    ``other_href`` is the other edition's landing page, when it is built."""
    static, extra = source / "_static", source / "_extra"
    static.mkdir(parents=True)
    summaries = []
    found = landing_findings(chapters[0][1].parent / "metrics", preset, [c.stem for c, _ in chapters]) if chapters else ""
    for chapter, executed in chapters:
        notebook = read_executed(executed, preset)
        summaries.append((chapter.stem, *chapter_summary(notebook)))
        copy = prepare_notebook(notebook, chapter.stem, edition)
        (source / f"{chapter.stem}.ipynb").write_text(json.dumps(copy.notebook), encoding="utf-8")
        for relative, content in copy.files.items():
            (extra / relative).parent.mkdir(parents=True, exist_ok=True)
            (extra / relative).write_bytes(content)
    write_downloads(extra / "downloads", chapters, preset, edition)
    (source / "index.md").write_text(landing_page(summaries, missing, preset, edition, other_href, found),
                                     encoding="utf-8")
    (source / "conf.py").write_text(CONF.format(title=TITLE, bundle=BUNDLE, search=SEARCH_JS_FILE), encoding="utf-8")
    (source / "favicon.svg").write_text(FAVICON, encoding="utf-8")
    (static / BUNDLE).write_text(vega_bundle(), encoding="utf-8")
    (static / "covlib-charts.js").write_text(CHARTS_JS, encoding="utf-8")
    (static / "covlib-charts.css").write_text(CHARTS_CSS, encoding="utf-8")
    (static / SEARCH_JS_FILE).write_text(SEARCH_JS, encoding="utf-8")


def site_dir(build_dir: str | os.PathLike, preset: str, edition: str = "full") -> Path:
    """Where an edition's site goes: ``build/site/<preset>/``, ``build/student/site/<preset>/``."""
    return edition_root(build_dir, edition) / "site" / preset


def link_editions(index: Path, edition: str, other_href: str | None) -> bool:
    """Rewrite the editions paragraph of a built landing page (``index``, of ``edition``) to link the other
    edition, built after it; False when the page has no such paragraph."""
    page = index.read_text(encoding="utf-8")
    linked, found = _EDITIONS_BLOCK.subn(lambda _: editions_html(edition, other_href), page, count=1)
    if found:
        index.write_text(linked, encoding="utf-8")
    return bool(found)


def build_site(preset: str = "default", build_dir: str | os.PathLike | None = None,
               notebooks_dir: str | os.PathLike = NOTEBOOKS, quiet: bool = True, edition: str = "full") -> Path:
    """Build ``<build_dir>/site/<preset>/`` from ``<build_dir>/<preset>/NN_*.ipynb`` (the student edition:
    ``<build_dir>/student/site/<preset>/`` from ``<build_dir>/student/<preset>/``); returns the site folder (its
    ``index.html`` is the landing page). The folder is replaced only when the build succeeded. When the other
    edition's site is built, the two landing pages link each other."""
    if preset not in PRESETS:
        raise CovlibError(f"unknown preset {preset!r}; choose one of: {', '.join(PRESETS)}")
    top = Path(build_dir) if build_dir else REPO / "build"
    build_dir = edition_root(top, check_edition(edition))
    executed_dir = build_dir / preset
    every = [(c, executed_dir / f"{c.stem}.ipynb") for c in discover_chapters(notebooks_dir)]
    chapters = [(c, executed) for c, executed in every if executed.is_file()]
    missing = [c.stem for c, executed in every if not executed.is_file()]
    if not chapters:
        flag = "" if edition == "full" else f" --edition {edition}"
        raise CovlibError(f"no executed chapters in {executed_dir}; run `covlib book --preset {preset}{flag}` first")
    source = build_dir / "site-src" / preset
    shutil.rmtree(source, ignore_errors=True)
    final = site_dir(top, preset, edition)
    other = next(e for e in EDITIONS if e != edition)
    other_index = site_dir(top, preset, other) / "index.html"
    other_href = os.path.relpath(other_index, final) if other_index.is_file() else None
    write_sources(source, chapters, missing, preset, edition, other_href)
    staging = final.with_name(f".{final.name}.tmp")
    shutil.rmtree(staging, ignore_errors=True)
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", *(["-q"] if quiet else []), str(source), str(staging)]
    done = subprocess.run(cmd, capture_output=True, text=True, env=os.environ | {"HF_HUB_OFFLINE": "1"})
    if done.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-5:])
        raise CovlibError(f"sphinx-build failed on {source}:\n{tail}")
    shutil.rmtree(staging / ".doctrees", ignore_errors=True)
    shutil.rmtree(final, ignore_errors=True)
    os.replace(staging, final)
    if other_href:
        link_editions(other_index, other, os.path.relpath(final / "index.html", other_index.parent))
    return final
