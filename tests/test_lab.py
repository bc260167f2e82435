"""A reader who opens the book in JupyterLab: a double click on a chapter (notebooks/NN_*.py) opens it as a
notebook on the python3 kernel (the setting `make setup` writes), and running all its cells draws live charts.
Checked against a real `jupyter lab` on 127.0.0.1 in Debian's headless Chromium."""
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
from pathlib import Path

import jupytext
import pytest
from browser import chromium, visit
from jupyter_client.kernelspec import KernelSpecManager
from jupyterlab.commands import get_app_dir

from covlib.base.paths import FIGURES_ENV, REPO
from covlib.book.runner import discover_chapters

CHAPTERS = discover_chapters()
# the chapter run whole in JupyterLab: the cheapest one (about 25 s at the smoke preset here, chapter 2 about as much)
CHAPTER = "01_tasks_and_data"
SETTINGS_FILE = "settings/overrides.d/covlib.json"  # under JupyterLab's application folder
LIVE_OUTPUT = ".jp-OutputArea-output.jp-RenderedVegaLite"  # JupyterLab's own Vega-Lite renderer


def test_make_setup_tells_jupyterlab_to_open_python_files_as_notebooks():
    makefile = (REPO / "Makefile").read_text()
    declared = re.search(r"^LAB_SETTINGS := (.+)$", makefile, flags=re.M).group(1)
    assert declared == f"$(VENV)/share/jupyter/lab/{SETTINGS_FILE}"
    assert "setup: $(STAMP) $(LAB_SETTINGS)" in makefile
    settings = Path(get_app_dir()) / SETTINGS_FILE
    assert settings.is_file(), f"{settings} is missing: run `make setup` (it writes JupyterLab's settings)"
    viewers = json.loads(settings.read_text())["@jupyterlab/docmanager-extension:plugin"]["defaultViewers"]
    assert viewers["python"] == "Jupytext Notebook"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.stem for c in CHAPTERS])
def test_every_chapter_asks_for_the_python3_kernel_that_jupyter_has(chapter: Path):
    kernelspec = jupytext.read(chapter).metadata["kernelspec"]
    assert kernelspec["name"] == "python3" and kernelspec["language"] == "python"
    assert KernelSpecManager().get_kernel_spec("python3").language == "python"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def reader_copy(chapter: Path, folder: Path) -> Path:
    """The chapter as a reader would open it, set to the smoke preset and to write its data under ``folder``
    (the repository's build/ and papers_figures/ stay untouched)."""
    text = chapter.read_text()
    edited = text.replace('preset = "default"', 'preset = "smoke"', 1).replace('out_dir = ""', f'out_dir = "{folder}"', 1)
    assert edited.count('"smoke"') > text.count('"smoke"') and str(folder) in edited, "the parameters cell changed"
    copy = folder / "book" / chapter.name
    copy.parent.mkdir(parents=True)
    copy.write_text(edited)
    return copy


@pytest.fixture()
def jupyter_lab(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """`jupyter lab` serving a reader's copy of the chapter on 127.0.0.1 (a free port, a random token), with this
    environment's JupyterLab settings and a private config and runtime folder; yields (url, token)."""
    reader_copy(REPO / "notebooks" / f"{CHAPTER}.py", tmp_path)
    port, token = free_port(), secrets.token_hex(16)
    env = os.environ | {"JUPYTER_CONFIG_DIR": str(tmp_path / "config"), "JUPYTER_RUNTIME_DIR": str(tmp_path / "run"),
                        FIGURES_ENV: str(tmp_path / "figures"), "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
           "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={tmp_path / 'book'}",
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


@pytest.mark.slow
def test_a_double_click_opens_a_chapter_as_a_notebook_whose_charts_are_live_after_run_all(jupyter_lab):
    url, token = jupyter_lab
    with chromium() as browser:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        seen = visit(context, url)
        page = seen.page
        assert page.goto(f"{url}/lab?token={token}", wait_until="load").ok
        page.locator(".jp-DirListing-item", has_text=f"{CHAPTER}.py").dblclick(timeout=120_000)
        page.locator(".jp-NotebookPanel, .jp-FileEditor").first.wait_for(timeout=60_000)
        assert page.locator(".jp-FileEditor").count() == 0, "the chapter opened as a text file (run `make setup`)"
        notebook = page.locator(".jp-NotebookPanel")
        notebook.locator(".jp-Toolbar-kernelName", has_text="Python 3").wait_for(timeout=60_000)
        notebook.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").wait_for(timeout=120_000)
        cells = notebook.locator(".jp-CodeCell").count()
        assert cells > 5 and notebook.locator(".jp-MarkdownCell").count() > 5
        page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
        page.get_by_text("Run All Cells", exact=True).click()
        page.wait_for_function("""() => {  // every cell ran or the run stopped (JupyterLab stops at an error)
            const prompts = [...document.querySelectorAll('.jp-NotebookPanel .jp-CodeCell .jp-InputPrompt')];
            const idle = document.querySelector(".jp-NotebookPanel .jp-Notebook-ExecutionIndicator[data-status='idle']");
            return idle && prompts.some(p => /\\[\\d+\\]/.test(p.textContent))
                && !prompts.some(p => p.textContent.includes('*'));
        }""", timeout=600_000, polling=1000)
        # textContent, not innerText: JupyterLab leaves the cells out of view unrendered
        prompts = notebook.locator(".jp-CodeCell .jp-InputPrompt").evaluate_all("ps => ps.map(p => p.textContent)")
        failed = notebook.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").evaluate_all(
            "outputs => outputs.map(o => o.textContent).filter(t => t.includes('Traceback'))")
        assert failed == [] and all(re.fullmatch(r"\[\d+\]:", p.strip()) for p in prompts), (prompts, failed)
        charts = notebook.locator(LIVE_OUTPUT)
        assert charts.count() >= 1, "running the chapter showed no live chart"
        for chart in charts.all():  # JupyterLab's own Vega renderer drew each one
            chart.locator(".vega-embed svg.marks, .vega-embed canvas").first.wait_for(state="attached", timeout=30_000)
        assert seen.external == [], f"requests leaving the machine: {seen.external}"
        assert seen.errors == [], seen.errors
        context.close()
