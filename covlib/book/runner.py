"""Execute the chapters with papermill into build/<preset>/ and collect their results."""
from __future__ import annotations

import multiprocessing
import os
import re
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from covlib.base.errors import CovlibError
from covlib.base.paths import FIGURES_ENV, PROGRESS_ENV, REPO, RUN_DIR_ENV
from covlib.base.presets import PRESETS
from covlib.base.workers import one_thread_worker
from covlib.book.editions import check_edition, edition_root, for_edition
from covlib.book.sweep import METRICS_FILE, describe_error, execute_notebook, notebook_parameters, read_notebook
from covlib.figures.text import count_of

NOTEBOOKS = REPO / "notebooks"


CHAPTER = re.compile(r"^(\d\d)_[A-Za-z0-9_]+\.py$")


@dataclass
class ChapterResult:
    """Outcome of one chapter: status done or failed, seconds taken, error text, executed notebook."""

    name: str
    status: str
    elapsed: float
    output: Path
    error: str = ""


def discover_chapters(notebooks_dir: str | os.PathLike = NOTEBOOKS) -> list[Path]:
    """Every chapter file notebooks/NN_slug.py, in chapter order."""
    folder = Path(notebooks_dir)
    return sorted(p for p in folder.glob("*.py") if CHAPTER.match(p.name))


def select_chapters(chapters: Sequence[Path], only: Sequence[str] | None) -> list[Path]:
    """Chapters matching ``only`` (numbers such as 01 or 1, or names such as 01_tasks_and_data)."""
    if not only:
        return list(chapters)
    chosen = []
    for key in only:
        hits = [c for c in chapters if c.stem == key or c.stem.split("_")[0] == key.zfill(2) or c.name == key]
        if not hits:
            names = ", ".join(c.stem for c in chapters) or "none"
            raise CovlibError(f"--only {key}: no such chapter; chapters are: {names}")
        chosen += [c for c in hits if c not in chosen]
    return sorted(chosen)


def preset_figures_dir(preset: str, out: str | os.PathLike) -> Path:
    """papers_figures/ for the default preset, else ``<out>/<preset>/papers_figures`` (keeps the book's figures)."""
    return REPO / "papers_figures" if preset == "default" else Path(out) / preset / "papers_figures"


def metrics_path(chapter: str, preset: str, out: str | os.PathLike = "build") -> Path:
    """Where a chapter executed by the book records its metrics: ``<out>/<preset>/metrics/<chapter>/metrics.json``."""
    return Path(out) / preset / "metrics" / Path(chapter).stem / METRICS_FILE


@contextmanager
def _kernel_env(figures_dir: Path, run_dir: Path) -> Iterator[None]:
    """Environment the kernels inherit: offline Hugging Face hub, where figures go, and the folder whose
    metrics.json collects what the chapter records (covlib.book.sweep.record_metrics)."""
    saved = {k: os.environ.get(k) for k in ("HF_HUB_OFFLINE", FIGURES_ENV, PROGRESS_ENV, RUN_DIR_ENV)}
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ[FIGURES_ENV] = str(figures_dir)
    os.environ[RUN_DIR_ENV] = str(run_dir)
    os.environ[PROGRESS_ENV] = "text"  # progress bars as text lines, which reach the terminal (log_output)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def run_chapter(chapter: str | os.PathLike, preset: str = "default", out: str | os.PathLike = "build",
                figures_dir: str | os.PathLike | None = None, extra: dict | None = None,
                kernel_name: str = "python3", timeout: float | None = None,
                progress_bar: bool = True, edition: str = "full") -> ChapterResult:
    """Execute one chapter into ``<out>/<preset>/<chapter>.ipynb``; never raises on a cell error. The student
    edition executes the chapter without its solution cells (covlib.book.editions); its checks still run."""
    chapter = Path(chapter)
    figures = Path(figures_dir) if figures_dir else preset_figures_dir(preset, out)
    output = Path(out) / preset / f"{chapter.stem}.ipynb"
    start = time.perf_counter()
    try:
        nb = for_edition(read_notebook(chapter), edition)
        declared = notebook_parameters(nb)
        wanted = {"preset": preset, "figures_dir": str(figures.resolve()), **(extra or {})}
        parameters = {k: v for k, v in wanted.items() if k in declared}  # never inject undeclared names
        figures.mkdir(parents=True, exist_ok=True)
        metrics = metrics_path(chapter.stem, preset, out)
        metrics.parent.mkdir(parents=True, exist_ok=True)
        metrics.unlink(missing_ok=True)  # numbers of an earlier run must not mix with this one's
        with _kernel_env(figures.resolve(), metrics.parent.resolve()):
            execute_notebook(nb, output, parameters, cwd=chapter.resolve().parent, progress_bar=progress_bar,
                             timeout=timeout, kernel_name=kernel_name, log_output=progress_bar)
    except Exception as exc:  # noqa: BLE001 - reported per chapter; the book goes on
        return ChapterResult(chapter.stem, "failed", time.perf_counter() - start, output, describe_error(exc))
    return ChapterResult(chapter.stem, "done", time.perf_counter() - start, output)


def run_chapters(chapters: Sequence[Path], preset: str, out: str | os.PathLike, figures_dir: str | os.PathLike,
                 extra: dict | None = None, kernel_name: str = "python3", timeout: float | None = None,
                 jobs: int = 1, progress: bool = True, say=print, edition: str = "full") -> list[ChapterResult]:
    """Execute ``chapters`` (run_chapter each), ``jobs`` at a time, and return their results in chapter order.
    With jobs > 1 each chapter runs in a one-thread worker process, without cell output or progress bars (they
    would interleave); chapters that want the same dataset or training run wait for each other (folder_lock)."""
    if jobs < 1:
        raise CovlibError(f"jobs must be at least 1, not {jobs}")
    n = len(chapters)
    results: dict[Path, ChapterResult] = {}

    def report(i: int, result: ChapterResult) -> None:
        if result.status == "done":
            say(f"[{i}/{n}] {result.name} done in {result.elapsed:.1f} s", flush=True)
        else:
            say(f"[{i}/{n}] {result.name} FAILED after {result.elapsed:.1f} s\n    {result.error}\n"
                f"    executed notebook (with the traceback): {result.output}", flush=True)

    arguments = dict(preset=preset, out=out, figures_dir=figures_dir, extra=extra, kernel_name=kernel_name,
                     timeout=timeout, edition=edition)
    if jobs == 1:
        for i, chapter in enumerate(chapters, 1):
            say(f"[{i}/{n}] {chapter.stem} ...", flush=True)
            results[chapter] = run_chapter(chapter, progress_bar=progress, **arguments)
            report(i, results[chapter])
    else:
        context = multiprocessing.get_context("spawn")  # a fresh interpreter: no state forked from the caller
        with ProcessPoolExecutor(min(jobs, n), mp_context=context, initializer=one_thread_worker) as pool:
            futures = {pool.submit(run_chapter, chapter, progress_bar=False, **arguments): chapter
                       for chapter in chapters}
            say(f"{count_of(n, 'chapter')}, {jobs} at a time", flush=True)
            for i, future in enumerate(as_completed(futures), 1):
                results[futures[future]] = future.result()
                report(i, results[futures[future]])
    return [results[chapter] for chapter in chapters]


def run_book(preset: str = "default", only: Sequence[str] | None = None, out: str | os.PathLike = "build",
             figures_dir: str | os.PathLike | None = None, notebooks_dir: str | os.PathLike = NOTEBOOKS,
             kernel_name: str = "python3", timeout: float | None = None, progress: bool = True,
             jobs: int = 1, edition: str = "full") -> list[ChapterResult]:
    """Execute the chosen chapters (``jobs`` at a time), printing progress and a time table; returns every
    result in chapter order. The student edition goes to ``<out>/student/<preset>/`` (covlib.book.editions),
    its figures beside it: papers_figures/ is the full book's."""
    if preset not in PRESETS:
        raise CovlibError(f"unknown preset {preset!r}; choose one of: {', '.join(PRESETS)}")
    chapters = select_chapters(discover_chapters(notebooks_dir), only)
    if not chapters:
        raise CovlibError(f"no chapters (NN_slug.py) found in {notebooks_dir}")
    out = edition_root(out, check_edition(edition))
    figures = Path(figures_dir) if figures_dir else (
        preset_figures_dir(preset, out) if edition == "full" else out / preset / "papers_figures")
    say = print if progress else (lambda *a, **k: None)
    say(f"book: {count_of(len(chapters), 'chapter')}, preset {preset}"
        + ("" if edition == "full" else f", {edition} edition")
        + f"; notebooks -> {Path(out) / preset}, figures -> {figures}")
    start = time.perf_counter()
    results = run_chapters(chapters, preset, out, figures, kernel_name=kernel_name, timeout=timeout, jobs=jobs,
                           progress=progress, say=say, edition=edition)
    say(format_table(results, time.perf_counter() - start if jobs > 1 else None))
    return results


def format_table(results: Sequence[ChapterResult], wall: float | None = None) -> str:
    """Plain-text table: chapter, status, seconds, a total, and the wall-clock time when chapters ran side by
    side (``wall``)."""
    width = max([len(r.name) for r in results] + [len("chapter")])
    lines = [f"{'chapter':<{width}}  status  seconds", f"{'-' * width}  ------  -------"]
    lines += [f"{r.name:<{width}}  {r.status:<6}  {r.elapsed:7.1f}" for r in results]
    lines.append(f"{'total':<{width}}  {'':<6}  {sum(r.elapsed for r in results):7.1f}")
    if wall is not None:
        lines.append(f"{'wall clock':<{width}}  {'':<6}  {wall:7.1f}")
    return "\n".join(lines)
