"""A reader who opens the book in JupyterLab: a double click on a chapter (notebooks/NN_*.py) opens it as a
notebook on the python3 kernel (the setting `make setup` writes), and running all its cells draws every chart with
JupyterLab's own Vega-Lite renderer (an older Vega-Lite than the site's: covlib.figures.live), with no error.
Checked against one real `jupyter lab` on 127.0.0.1 in Debian's headless Chromium, every chapter in turn at the
smoke preset, reading back the datasets and runs the smoke book (tests/conftest.py) made.
COVLIB_SMOKE_BUILD=DIR uses a build folder whose smoke/ already holds the executed chapters instead (their data in
DIR/data); COVLIB_LAB_SHOTS=DIR saves a screenshot of each chapter after Run All (1400 x 1000) there."""
from __future__ import annotations

import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import jupytext
import pytest
from browser import chromium, visit
from jupyter_client.kernelspec import KernelSpecManager
from jupyterlab.commands import get_app_dir

from covlib.base.paths import FIGURES_ENV, REPO
from covlib.book.runner import discover_chapters
from covlib.book.site import count_charts

CHAPTERS = discover_chapters()
SETTINGS_FILE = "settings/overrides.d/covlib.json"  # under JupyterLab's application folder


def test_make_setup_tells_jupyterlab_to_open_python_files_as_notebooks():
    makefile = (REPO / "Makefile").read_text()
    declared = re.search(r"^LAB_SETTINGS := (.+)$", makefile, flags=re.M).group(1)
    assert declared == f"$(VENV)/share/jupyter/lab/{SETTINGS_FILE}"
    assert "setup: $(STAMP) $(LAB_SETTINGS)" in makefile
    settings = Path(get_app_dir()) / SETTINGS_FILE
    assert settings.is_file(), f"{settings} is missing: run `make setup` (it writes JupyterLab's settings)"
    viewers = json.loads(settings.read_text())["@jupyterlab/docmanager-extension:plugin"]["defaultViewers"]
    assert viewers["python"] == "Jupytext Notebook"
    news = json.loads(settings.read_text())["@jupyterlab/apputils-extension:notification"]
    assert news == {"fetchNews": "false", "checkForUpdates": False}  # no pop-up asking to reach the network


def test_quieting_the_news_keeps_the_other_settings(tmp_path):
    from covlib.book.lab_settings import quiet_news

    file = tmp_path / "overrides.json"
    file.write_text(json.dumps({"a": {"b": 1}, "@jupyterlab/apputils-extension:notification": {"doNotDisturbMode": True}}))
    quiet_news(file)
    assert json.loads(file.read_text()) == {"a": {"b": 1}, "@jupyterlab/apputils-extension:notification": {
        "doNotDisturbMode": True, "fetchNews": "false", "checkForUpdates": False}}


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.stem for c in CHAPTERS])
def test_every_chapter_asks_for_the_python3_kernel_that_jupyter_has(chapter: Path):
    kernelspec = jupytext.read(chapter).metadata["kernelspec"]
    assert kernelspec["name"] == "python3" and kernelspec["language"] == "python"
    assert KernelSpecManager().get_kernel_spec("python3").language == "python"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def reader_copy(chapter: Path, folder: Path, data: Path) -> Path:
    """The chapter as a reader would open it, in ``folder``, set to the smoke preset and to keep its data under
    ``data`` (the repository's build/ and papers_figures/ stay untouched)."""
    text = chapter.read_text()
    # a parameter may carry its type (chapter 10's do, for papermill --help-notebook)
    edited = re.sub(r'^(preset(?:: str)?) = "default"', r'\1 = "smoke"', text, count=1, flags=re.M)
    edited = re.sub(r'^(out_dir(?:: str)?) = ""', lambda m: f'{m[1]} = "{data}"', edited, count=1, flags=re.M)
    assert edited.count('"smoke"') > text.count('"smoke"') and str(data) in edited, "the parameters cell changed"
    copy = folder / chapter.name
    copy.write_text(edited)
    return copy


# A chapter-like notebook with two charts: one JupyterLab draws, and one it cannot (a zoom parameter on a line with
# a point overlay inside a layer: JupyterLab's Vega-Lite 5.6 fails on it, the site's Vega-Lite 6 does not).
PLANTED = '''# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # A planted chapter

# %%
import altair as alt
import pandas as pd

from covlib.figures.live import enable_live_charts

enable_live_charts()
frame = pd.DataFrame({"step": [0, 100, 200], "accuracy": [0.1, 0.5, 0.9]})
line = alt.Chart(frame).mark_line(point=True).encode(x="step:Q", y="accuracy:Q", tooltip=["step:Q", "accuracy:Q"])
zoom = alt.selection_interval(bind="scales", encodings=["x"])

# %%
line.add_params(zoom).properties(title="drawn")

# %%
alt.layer(line.add_params(zoom)).properties(title="not drawn in JupyterLab")
'''
PLANTED_NAME = "00_planted.py"


@pytest.fixture(scope="module")
def smoke_build(request) -> Path:
    """The folder of the smoke book the chapter tests executed (tests/conftest.py), or COVLIB_SMOKE_BUILD's."""
    reuse = os.environ.get("COVLIB_SMOKE_BUILD")
    if reuse:
        return Path(reuse)
    build, results = request.getfixturevalue("smoke_book")
    failed = [f"{name}: {r.error}" for name, r in results.items() if r.status != "done"]
    assert not failed, f"chapters failed at smoke: {failed}"
    return build


@pytest.fixture(scope="module")
def jupyter_lab(tmp_path_factory, smoke_build: Path) -> Iterator[tuple[str, str]]:
    """`jupyter lab` serving a reader's copy of every chapter, and the planted one, on 127.0.0.1 (a free port, a
    random token), with this environment's JupyterLab settings and a private config and runtime folder; the
    chapters keep their data in the smoke book's data folder. Yields (url, token)."""
    build = smoke_build
    tmp_path = tmp_path_factory.mktemp("lab")
    book = tmp_path / "book"
    book.mkdir()
    for chapter in CHAPTERS:
        reader_copy(chapter, book, build / "data")
    (book / PLANTED_NAME).write_text(PLANTED)
    port, token = free_port(), secrets.token_hex(16)
    env = os.environ | {"JUPYTER_CONFIG_DIR": str(tmp_path / "config"), "JUPYTER_RUNTIME_DIR": str(tmp_path / "run"),
                        FIGURES_ENV: str(tmp_path / "figures"), "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
           "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={book}",
           "--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
           *(["--allow-root"] if os.geteuid() == 0 else [])]
    log = tmp_path / "lab.log"
    with log.open("w") as out:
        server = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(server, f"{url}/api/status?token={token}", log)
        yield url, token
    finally:
        stop(server, f"{url}/api/shutdown?token={token}")


@pytest.fixture(scope="module")
def lab_browser():
    with chromium() as browser:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        yield context
        context.close()


def wait_until_up(server: subprocess.Popen, status_url: str, log: Path, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert server.poll() is None, f"jupyter lab exited: {log.read_text()[-2000:]}"
        try:
            with urllib.request.urlopen(status_url, timeout=2):
                return
        except OSError:
            time.sleep(0.5)
    raise AssertionError(f"jupyter lab did not answer within {timeout:.0f} s: {log.read_text()[-2000:]}")


def stop(server: subprocess.Popen, shutdown_url: str) -> None:
    """Asks the server to shut down (it stops its kernels); kills its process group if it has not within 30 s."""
    try:
        urllib.request.urlopen(urllib.request.Request(shutdown_url, method="POST"), timeout=10).close()
        server.wait(30)
    except (OSError, subprocess.TimeoutExpired):
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(10)


@dataclass
class LabRun:
    """What a notebook shows after Run All in JupyterLab."""

    prompts: list[str]  # every code cell's prompt ("[3]:"; "[*]:" still running, "[ ]:" never ran)
    tracebacks: list[str]  # error outputs of the kernel
    chart_errors: list[str]  # outputs where JupyterLab's renderer failed ("Javascript Error: ...")
    drawn: int  # chart outputs whose Vega view JupyterLab drew
    undrawn: list[str] = field(default_factory=list)  # chart outputs without a drawn view (their text)
    page_errors: list[str] = field(default_factory=list)  # the page's console errors and uncaught exceptions
    external: list[str] = field(default_factory=list)  # requests that would have left the machine

    def problems(self) -> list[str]:
        """Everything a reader would see go wrong (empty when the chapter ran and every chart drew)."""
        unran = [p for p in self.prompts if not re.fullmatch(r"\[\d+\]:", p.strip())]
        return ([f"cells that did not run: {unran}"] if unran else []) + [f"traceback: {t[-300:]}" for t in self.tracebacks] \
            + [f"chart not drawn: {e}" for e in self.chart_errors + self.undrawn] \
            + [f"page error: {e}" for e in self.page_errors] + [f"outside request: {u}" for u in self.external]


# every output of the notebook: JupyterLab's Vega-Lite outputs, and the text of outputs its renderers failed on
OUTPUTS = """nb => {
  const outputs = [...nb.querySelectorAll('.jp-OutputArea-child')];
  const charts = [...nb.querySelectorAll('.jp-OutputArea-output.jp-RenderedVegaLite')];
  return {
    drawn: charts.filter(c => c.querySelector('.vega-embed svg.marks, .vega-embed canvas')).length,
    undrawn: charts.filter(c => !c.querySelector('.vega-embed svg.marks, .vega-embed canvas')).map(c => c.textContent.slice(0, 200)),
    errors: outputs.map(o => o.textContent).filter(t => t.includes('Javascript Error')).map(t => t.trim().slice(0, 300)),
  };
}"""


ALL_RAN = """() => {  // every cell ran or the run stopped (JupyterLab stops at an error)
    const prompts = [...document.querySelectorAll('.jp-NotebookPanel .jp-CodeCell .jp-InputPrompt')];
    const idle = document.querySelector(".jp-NotebookPanel .jp-Notebook-ExecutionIndicator[data-status='idle']");
    return Boolean(idle) && prompts.some(p => /\\[\\d+\\]/.test(p.textContent))
        && !prompts.some(p => p.textContent.includes('*'));
}"""


def start_run_all(context, url: str, token: str, name: str, workspace: str = "default"):
    """Opens ``name`` with a double click in JupyterLab's file browser (in its own workspace, so that two pages
    can each run a chapter) and starts Run All. Returns the page's Visit."""
    seen = visit(context, url)
    page = seen.page
    try:
        assert page.goto(f"{url}/lab/workspaces/{workspace}?token={token}&reset", wait_until="load").ok
        page.locator(".jp-DirListing-item", has_text=name).dblclick(timeout=120_000)
        page.locator(".jp-NotebookPanel, .jp-FileEditor").first.wait_for(timeout=60_000)
        assert page.locator(".jp-FileEditor").count() == 0, f"{name} opened as a text file (run `make setup`)"
        notebook = page.locator(".jp-NotebookPanel")
        notebook.locator(".jp-Toolbar-kernelName", has_text="Python 3").wait_for(timeout=60_000)
        notebook.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").wait_for(timeout=120_000)
        page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
        page.get_by_text("Run All Cells", exact=True).click()
    except BaseException:
        page.close()
        raise
    return seen


def collect_run(seen, name: str, shots: Path | None = None) -> LabRun:
    """What the notebook of a finished Run All shows; closes its page."""
    page = seen.page
    try:
        page.wait_for_timeout(3000)  # the last outputs' charts are drawn asynchronously
        notebook = page.locator(".jp-NotebookPanel")
        # textContent, not innerText: JupyterLab leaves the cells out of view unrendered
        prompts = notebook.locator(".jp-CodeCell .jp-InputPrompt").evaluate_all("ps => ps.map(p => p.textContent)")
        tracebacks = notebook.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").evaluate_all(
            "outputs => outputs.map(o => o.textContent).filter(t => t.includes('Traceback'))")
        shown = notebook.evaluate(OUTPUTS)
        if shots:  # the window after Run All, and each chart as JupyterLab drew it
            shots.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(shots / f"lab-{Path(name).stem}.png"))
            for number, chart in enumerate(notebook.locator(".jp-RenderedVegaLite").all(), start=1):
                chart.scroll_into_view_if_needed()
                chart.screenshot(path=str(shots / f"lab-{Path(name).stem}-chart{number}.png"))
        return LabRun(prompts, tracebacks, shown["errors"], shown["drawn"], shown["undrawn"], list(seen.errors),
                      list(seen.external))
    finally:
        page.close()


def run_all(context, url: str, token: str, name: str, shots: Path | None = None) -> LabRun:
    """Opens ``name`` with a double click, runs all its cells, waits until the kernel is idle and every cell has
    run (or the run stopped at an error), and reports what the notebook shows."""
    seen = start_run_all(context, url, token, name)
    seen.page.wait_for_function(ALL_RAN, timeout=1_200_000, polling=1000)
    return collect_run(seen, name, shots)


def run_all_side_by_side(context, url: str, token: str, names: list[str], shots: Path | None = None,
                         at_once: int = 2, timeout: float = 1_200) -> dict[str, LabRun]:
    """run_all for every notebook of ``names``, ``at_once`` of them running at a time in pages of their own (the
    kernels train on one thread each, so two share the machine's two cores)."""
    waiting, running, done = list(names), {}, {}
    while waiting or running:
        for slot in range(at_once):
            if slot not in running and waiting:
                name = waiting.pop(0)
                running[slot] = (name, start_run_all(context, url, token, name, f"w{slot}"), time.monotonic())
        for slot, (name, seen, started) in list(running.items()):
            if seen.page.evaluate(ALL_RAN):
                done[name] = collect_run(seen, name, shots)
                del running[slot]
            elif time.monotonic() - started > timeout:
                seen.page.close()
                raise AssertionError(f"{name} did not finish Run All within {timeout:.0f} s")
        time.sleep(1)
    return done


@pytest.mark.slow
def test_the_lab_check_sees_a_chart_jupyterlab_cannot_draw(jupyter_lab, lab_browser):
    """The check of every chapter below, on the planted notebook: one chart drawn, one failed, and it says so."""
    url, token = jupyter_lab
    run = run_all(lab_browser, url, token, PLANTED_NAME)
    assert run.drawn == 1 and run.tracebacks == []
    assert len(run.chart_errors) == 1 and "Duplicate signal name" in run.chart_errors[0], run.chart_errors
    assert run.problems() == [f"chart not drawn: {run.chart_errors[0]}"]


@pytest.fixture(scope="module")
def chapter_runs(jupyter_lab, lab_browser) -> dict[str, LabRun]:
    """Run All of every chapter in JupyterLab, two at a time."""
    url, token = jupyter_lab
    shots = os.environ.get("COVLIB_LAB_SHOTS")
    return run_all_side_by_side(lab_browser, url, token, [c.name for c in CHAPTERS], Path(shots) if shots else None)


@pytest.mark.slow
@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.stem for c in CHAPTERS])
def test_a_chapter_opened_with_a_double_click_runs_all_and_jupyterlab_draws_every_chart(
        chapter_runs: dict[str, LabRun], smoke_build: Path, chapter: Path):
    run = chapter_runs[chapter.name]
    assert len(run.prompts) > 5
    assert run.problems() == [], run.problems()
    expected = count_charts(json.loads((smoke_build / "smoke" / f"{chapter.stem}.ipynb").read_text()))
    assert run.drawn == expected, f"JupyterLab drew {run.drawn} charts, the chapter shows {expected}"
