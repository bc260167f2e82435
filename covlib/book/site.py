"""The executed chapters as a static HTML book (Sphinx, myst-nb), offline."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from covlib.base.errors import CovlibError
from covlib.base.paths import REPO
from covlib.book.runner import NOTEBOOKS, PRESETS, discover_chapters

TITLE = "The Coverage Principle, as a book you can rerun"


WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


CONF = '''# Sphinx configuration written by covlib.book.site (regenerated on every build).
import importlib.util
import os
import shutil

project = {title!r}
author = "the covlib authors"
extensions = ["myst_nb"]
myst_enable_extensions = ["dollarmath", "amsmath"]
nb_execution_mode = "off"  # the chapters were executed by `covlib book`
exclude_patterns = ["_build", "**.ipynb_checkpoints"]
html_theme = "sphinx_book_theme"
html_title = project
html_show_copyright = False
html_show_sourcelink = False
html_theme_options = {{"show_toc_level": 2, "use_download_button": False, "use_fullscreen_button": False}}
html_context = {{"default_mode": "light"}}  # a valid mode: an empty one logs a console error
html_favicon = "favicon.svg"
# MathJax 3 as one self-contained file (TeX input, SVG output, no fonts), served from the site
_mathjax = os.path.join(os.path.dirname(importlib.util.find_spec("sphinx-mathjax-offline").origin),
                        "static", "mathjax", "tex-svg-full.js")
mathjax_path = "mathjax/tex-svg-full.js"


def _copy_mathjax(app, exc):
    if exc is None and app.builder.format == "html":
        target = os.path.join(app.outdir, "_static", "mathjax")
        os.makedirs(target, exist_ok=True)
        shutil.copy2(_mathjax, target)


def setup(app):
    app.connect("build-finished", _copy_mathjax)
'''


FAVICON = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" '
           'fill="#1565c0"/><text x="8" y="12" font-size="10" text-anchor="middle" fill="white">k</text></svg>')


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


def prepare_notebook(notebook: dict) -> dict:
    """A copy of an executed chapter made for reading: code collapsed, injected parameters dropped,
    solutions collapsed, widget outputs reduced to text (a widget would load its code from a CDN)."""
    nb = json.loads(json.dumps(notebook))
    nb.get("metadata", {}).pop("widgets", None)
    for cell in nb["cells"]:
        tags = cell.setdefault("metadata", {}).setdefault("tags", [])
        if cell["cell_type"] != "code":
            continue
        if "injected-parameters" in tags:
            tags.append("remove-cell")
        elif "solution" in tags:
            tags.append("hide-cell")
        else:
            tags.append("hide-input")
        for out in cell.get("outputs", []):
            data = out.get("data")
            if data and WIDGET_MIME in data:
                data.pop(WIDGET_MIME)
                if not data:
                    out["data"] = {"text/plain": ""}
        cell["outputs"] = [o for o in cell.get("outputs", []) if not (o.get("data") == {"text/plain": ""})]
    return nb


def landing_page(chapters: list[tuple[str, str, str]], missing: list[str], preset: str) -> str:
    """index.md: what the book is, how to run it, and the chapters (file stem, title, one line)."""
    lines = [f"# {TITLE}", "",
             "An interactive companion to *The Coverage Principle: A Framework for Understanding Compositional "
             "Generalization* (Chang, Park, Cho et al., [arXiv 2505.20278](https://arxiv.org/abs/2505.20278)). "
             "A transformer that learns a composed function $t = f_2(f_1(x_1, x_2), x_3)$ from examples "
             "generalises to the inputs its training data *covers*, and the data it needs grows as a power of the "
             "number of tokens, $n_\\text{req} \\propto N^c$. Each chapter reproduces one part of the paper with "
             "small models trained on a laptop CPU, and sets its measured numbers beside the paper's.", "",
             "## Run it yourself", "",
             "Every chapter is a notebook you can open, rerun and change. On a machine with Python 3.10 or newer:", "",
             "```bash", "make book    # run every chapter at the default preset into build/",
             "make test    # the tests, and every chapter at the smoke preset",
             ".venv/bin/jupyter lab notebooks/   # read and change the chapters", "```", "",
             f"These pages show the chapters as executed at the `{preset}` preset; the code of each cell is folded "
             "under its output (click to open it).", "", "## Chapters", ""]
    for stem, title, line in chapters:
        lines.append(f"- [{title}]({stem}.ipynb): {line}")
    if missing:
        lines += ["", "Not executed at this preset (run `covlib book` to add them): "
                  + ", ".join(f"`{m}`" for m in missing) + "."]
    lines += ["", "```{toctree}", ":hidden:", ":maxdepth: 1", "", *[stem for stem, _, _ in chapters], "```", ""]
    return "\n".join(lines)


def build_site(preset: str = "default", build_dir: str | os.PathLike | None = None,
               notebooks_dir: str | os.PathLike = NOTEBOOKS, quiet: bool = True) -> Path:
    """Build ``<build_dir>/site/<preset>/`` from ``<build_dir>/<preset>/NN_*.ipynb``; returns the site folder
    (its ``index.html`` is the landing page). The folder is replaced only when the build succeeded."""
    if preset not in PRESETS:
        raise CovlibError(f"unknown preset {preset!r}; choose one of: {', '.join(PRESETS)}")
    build_dir = Path(build_dir) if build_dir else REPO / "build"
    executed_dir = build_dir / preset
    chapters, missing = [], []
    for chapter in discover_chapters(notebooks_dir):
        executed = executed_dir / f"{chapter.stem}.ipynb"
        (chapters if executed.is_file() else missing).append((chapter.stem, executed))
    if not chapters:
        raise CovlibError(f"no executed chapters in {executed_dir}; run `covlib book --preset {preset}` first")
    source = build_dir / "site-src" / preset
    shutil.rmtree(source, ignore_errors=True)
    source.mkdir(parents=True)
    summaries = []
    for stem, executed in chapters:
        try:
            notebook = json.loads(executed.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise CovlibError(f"{executed} is not a notebook ({exc}); rerun `covlib book --preset {preset}`") from None
        title, line = chapter_summary(notebook)
        summaries.append((stem, title, line))
        (source / f"{stem}.ipynb").write_text(json.dumps(prepare_notebook(notebook)), encoding="utf-8")
    (source / "index.md").write_text(landing_page(summaries, [m for m, _ in missing], preset), encoding="utf-8")
    (source / "conf.py").write_text(CONF.format(title=TITLE), encoding="utf-8")
    (source / "favicon.svg").write_text(FAVICON, encoding="utf-8")
    final = build_dir / "site" / preset
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
    return final
