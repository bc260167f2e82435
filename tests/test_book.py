"""Every chapter runs end to end at the smoke preset and writes its figures; the runner's behaviour."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from figure_checks import boolean_tooltips, empty_panels, missing_tooltips, overlay_params, unexplained_layers

from covlib.base.errors import CovlibError
from covlib.book.runner import discover_chapters, format_table, metrics_path, run_book, select_chapters
from covlib.book.sweep import notebook_parameters
from covlib.cli.main import main
from covlib.figures.style import MAX_CHART_WIDTH, drawn_width

CHAPTERS = discover_chapters()


def test_chapters_are_discovered():
    assert CHAPTERS, "no notebooks/NN_*.py found"
    assert [p.name for p in CHAPTERS] == sorted(p.name for p in CHAPTERS)


@pytest.mark.slow
@pytest.mark.parametrize("chapter", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_chapter_runs_at_smoke_preset(chapter: Path, smoke_book):
    build, results = smoke_book
    declared = notebook_parameters(chapter)
    assert "preset" in declared, f"{chapter.name} declares no preset parameter"
    result = results[chapter.stem]
    assert result.status == "done", f"{chapter.stem} failed: {result.error} (see {result.output})"
    assert result.output == build / "smoke" / f"{chapter.stem}.ipynb" and result.output.is_file()
    prefix = chapter.stem.split("_")[0] + "_"
    pngs = sorted((build / "figures").glob(f"{prefix}*.png"))
    assert pngs, f"{chapter.stem} saved no figure {prefix}*.png to the figures dir it was given"
    for png in pngs:
        svg = png.with_suffix(".svg")
        assert png.stat().st_size > 1000 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert svg.is_file() and svg.stat().st_size > 0 and "<svg" in svg.read_text()[:500]
    executed = json.loads(result.output.read_text())
    injected = [c for c in executed["cells"] if "injected-parameters" in c["metadata"].get("tags", [])]
    assert injected and 'preset = "smoke"' in "".join(injected[0]["source"])
    shipped = {p.stem for p in (chapter.parent.parent / "papers_figures").glob(f"{prefix}*.png")}
    # a smoke run may skip a figure whose data a miniature cannot give (no bracketed pair in chapter 4's search)
    assert {p.stem for p in pngs} <= shipped, "a figure the chapter writes is missing from papers_figures/"
    for spec in sorted((build / "specs").glob(f"{prefix}*.vl.json")):
        assert not unexplained_layers(json.loads(spec.read_text())), f"{spec.name}: a mark nothing explains"
        assert not missing_tooltips(json.loads(spec.read_text())), f"{spec.name}: a data mark without a tooltip"
        assert not boolean_tooltips(json.loads(spec.read_text())), f"{spec.name}: a tooltip shows true/false"
        assert not overlay_params(json.loads(spec.read_text())), f"{spec.name}: JupyterLab's Vega-Lite fails on it"
        assert not empty_panels(json.loads(spec.read_text())), f"{spec.name}: {empty_panels(json.loads(spec.read_text()))} draw nothing"
        width = drawn_width(json.loads(spec.read_text()))
        assert width <= MAX_CHART_WIDTH, f"{spec.name}: {width:.0f} px wide, wider than the page ({MAX_CHART_WIDTH})"
    metrics = json.loads(metrics_path(chapter.stem, "smoke", build).read_text())
    assert metrics, f"{chapter.stem} recorded no metrics"
    assert not out_of_range(metrics), f"{chapter.stem} recorded impossible values: {out_of_range(metrics)}"


# What a recorded number can be, by what its name says it is (checked on every chapter's smoke run).
RANGES = [  # (what the name matches, lowest, highest): the first match decides
    (re.compile(r"(_layer|_seeds|_n_values|population_type_\d|count|minutes|hours|probes|pairs|steps|cells|^N$|n_train)"),
     0, float("inf")),
    (re.compile(r"(^params_|_cap$|runs_per_arm)"), 0, float("inf")),
    (re.compile(r"^nontree_\w*(reachable|rule_decided)$"), 0.0, 1.0),  # yes/no flags (n_property_reachable counts)
    (re.compile(r"_pp$"), -100.0, 100.0),  # differences and bounds in percentage points
    (re.compile(r"(gap_between_arms|_pts$)"), -100.0, 100.0),  # gaps of coverage in percentage points
    (re.compile(r"effect_per_coverage_point"), -float("inf"), float("inf")),  # points of accuracy per point moved
    (re.compile(r"correlation|spearman"), -1.0, 1.0),
    (re.compile(r"^placeholder_saving_share_give_up_floor$"), 0, float("inf")),
    (re.compile(r"(placeholder_saving_share|context_gap|gain)"), -2.0, 2.0),
    (re.compile(r"(ratio|spread)"), 0.0, float("inf")),
    (re.compile(r"exponent"), 0.0, 8.0),
    (re.compile(r"^iicg"), -2.0, 2.0),
    (re.compile(r"(^|_)(acc|accuracy|share|coverage|purity|covered|final|tf_answer|greedy_exact|lens|trace_rank|"
                r"top1|edge_final)(_|$)"), 0.0, 1.0),
]


def out_of_range(metrics: dict) -> dict:
    """The metrics whose value is impossible for what their name says (NaN means "not in this run": allowed)."""
    bad = {}
    for key, value in metrics.items():
        if not isinstance(value, (int, float)) or isinstance(value, bool) or value != value:
            continue
        for pattern, low, high in RANGES:
            if pattern.search(key):
                if not low <= value <= high:
                    bad[key] = value
                break
    return bad


def test_the_figure_check_finds_a_mark_nothing_explains():
    line = {"mark": "line", "encoding": {"color": {"field": "series", "type": "nominal"}}}
    rule = {"mark": "rule", "encoding": {"y": {"field": "chance", "type": "quantitative"}}}
    dashed = {"mark": "rule", "encoding": {"strokeDash": {"field": "label", "type": "nominal"}}}
    hidden = {"mark": "rule", "encoding": {"strokeDash": {"field": "label", "type": "nominal", "legend": None}}}
    assert unexplained_layers({"layer": [line, rule]}) == ["chart.layer[1] (rule): no legend entry of its own and no subtitle"]
    assert unexplained_layers({"layer": [line, dashed]}) == []
    assert len(unexplained_layers({"layer": [line, hidden]})) == 1
    assert unexplained_layers({"title": {"text": "t", "subtitle": "dashed: chance"}, "layer": [line, rule]}) == []
    assert len(unexplained_layers({"hconcat": [{"layer": [line, rule]}]})) == 1


def test_the_empty_panel_check_finds_a_panel_with_only_a_title():
    bars = {"mark": "bar", "data": {"name": "full"}, "title": "bars"}
    empty = {"mark": "bar", "data": {"name": "none"}, "title": "At step 300"}
    datasets = {"full": [{"x": 1}], "none": []}
    assert empty_panels({"vconcat": [bars, empty], "datasets": datasets}) == ["chart.vconcat[1] (At step 300)"]
    assert empty_panels({"vconcat": [bars, bars], "datasets": datasets}) == []
    annotated = {"layer": [bars, {"mark": "rule", "data": {"values": []}}], "datasets": datasets}
    assert empty_panels(annotated) == []  # an annotation with no rows beside a drawn layer
    assert empty_panels({"layer": [empty], "title": {"text": "Required data by task"}, "datasets": datasets}) == \
        ["chart (Required data by task)"]
    assert empty_panels({"data": {"name": "full"}, "hconcat": [{"mark": "point"}], "datasets": datasets}) == []


def test_the_range_check_catches_an_impossible_value():
    assert out_of_range({"final_type0_twohop": 0.93, "exponent_twohop": 2.1, "iicg_id_peak": 0.4}) == {}
    assert out_of_range({"final_type0_twohop": 1.3, "exponent_twohop_seeds": 2, "cpu_hours": -1}) == {
        "final_type0_twohop": 1.3, "cpu_hours": -1}


CHAPTER_OK = '''# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% tags=["parameters"]
preset = "default"

# %%
print("preset is", preset)
'''

CHAPTER_FAIL = CHAPTER_OK.replace('print("preset is", preset)', 'raise RuntimeError("deliberate failure in " + preset)')


def test_runner_reports_a_failing_chapter_and_injects_only_declared_parameters(tmp_path, capsys):
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    (notebooks / "01_ok.py").write_text(CHAPTER_OK)
    (notebooks / "02_broken.py").write_text(CHAPTER_FAIL)
    (notebooks / "helpers.py").write_text("x = 1\n")  # not a chapter: ignored
    results = run_book("smoke", out=tmp_path / "build", figures_dir=tmp_path / "figs", notebooks_dir=notebooks)
    assert [(r.name, r.status) for r in results] == [("01_ok", "done"), ("02_broken", "failed")]
    assert "RuntimeError" in results[1].error and "deliberate failure in smoke" in results[1].error
    printed = capsys.readouterr().out
    assert "02_broken FAILED" in printed and "deliberate failure" in printed
    assert re.search(r"01_ok\s+done\s+\d+\.\d", printed)  # the time table
    executed = json.loads((tmp_path / "build" / "smoke" / "01_ok.ipynb").read_text())
    injected = "".join(next(c for c in executed["cells"] if "injected-parameters" in c["metadata"].get("tags", []))["source"])
    assert "preset" in injected and "figures_dir" not in injected  # 01_ok does not declare figures_dir


CHAPTER_THREADS = CHAPTER_OK.replace('print("preset is", preset)', """import os
import time

import torch

time.sleep(1)
print("threads", torch.get_num_threads(), os.environ["OMP_NUM_THREADS"])""")


def test_two_jobs_run_chapters_side_by_side_on_one_thread_each_and_report_in_chapter_order(tmp_path, capsys):
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    for name in ("01_a", "02_b", "03_c"):
        (notebooks / f"{name}.py").write_text(CHAPTER_THREADS)
    (notebooks / "04_broken.py").write_text(CHAPTER_FAIL)
    results = run_book("smoke", out=tmp_path / "build", figures_dir=tmp_path / "figs", notebooks_dir=notebooks,
                       jobs=2)
    assert [(r.name, r.status) for r in results] == [("01_a", "done"), ("02_b", "done"), ("03_c", "done"),
                                                      ("04_broken", "failed")]
    assert "deliberate failure in smoke" in results[3].error
    for name in ("01_a", "02_b", "03_c"):
        executed = json.loads((tmp_path / "build" / "smoke" / f"{name}.ipynb").read_text())
        printed = "".join("".join(o.get("text", "")) for c in executed["cells"] for o in c.get("outputs", []))
        assert "threads 1 1" in printed, printed
    table = capsys.readouterr().out
    assert "wall clock" in table and "2 at a time" in table
    with pytest.raises(CovlibError, match="jobs must be at least 1"):
        run_book("smoke", out=tmp_path / "build", notebooks_dir=notebooks, jobs=0)


def test_select_chapters_by_number_or_name(tmp_path):
    chapters = [tmp_path / "01_a.py", tmp_path / "02_b.py", tmp_path / "03_c.py"]
    assert select_chapters(chapters, None) == chapters
    assert select_chapters(chapters, ["3", "01"]) == [chapters[0], chapters[2]]
    assert select_chapters(chapters, ["02_b"]) == [chapters[1]]
    with pytest.raises(CovlibError, match="no such chapter"):
        select_chapters(chapters, ["9"])


def test_book_command_line_fails_cleanly_on_bad_input(tmp_path, capsys):
    assert main(["book", "--preset", "smoke", "--only", "99", "--out", str(tmp_path)]) == 2
    assert "no such chapter" in capsys.readouterr().err


def test_book_command_leaves_no_handler_on_papermills_logger(tmp_path):
    # a handler left behind writes to the stream of whoever called first (a closed capture, in a test run)
    import logging

    log = logging.getLogger("papermill")
    before = (list(log.handlers), log.level, log.propagate)
    assert main(["book", "--preset", "smoke", "--only", "99", "--out", str(tmp_path)]) == 2
    assert (list(log.handlers), log.level, log.propagate) == before


def test_format_table_lists_every_chapter_and_a_total():
    from covlib.book.runner import ChapterResult

    table = format_table([ChapterResult("01_a", "done", 1.25, Path("x")), ChapterResult("02_b", "failed", 2.0, Path("y"))])
    assert "01_a" in table and "failed" in table and "3.2" in table


def test_preset_values_take_the_readers_settings_over_the_preset():
    from covlib.base.errors import CovlibError
    from covlib.book.setup import preset_values

    presets = {"smoke": {"N": 10, "steps": 5}, "default": {"N": 30, "steps": 2000}}
    assert preset_values(presets, "default", N=None, steps=7) == {"N": 30, "steps": 7}
    assert preset_values(presets, "smoke", N=0) == {"N": 0, "steps": 5}  # 0 is a setting, None is not
    with pytest.raises(CovlibError, match="choose one of smoke, default"):
        preset_values(presets, "huge")




def test_only_the_book_at_its_default_preset_names_papers_figures(tmp_path, monkeypatch):
    """A chapter given no figures_dir (JupyterLab, papermill) saves under build/figures/<preset>/ (or its
    out_dir's figures/), never into the tracked papers_figures/; `covlib book --preset default` passes that."""
    from covlib.base.paths import FIGURES_ENV, REPO, default_figures_dir
    from covlib.book.runner import preset_figures_dir
    from covlib.book.setup import setup_chapter

    monkeypatch.delenv(FIGURES_ENV, raising=False)
    assert setup_chapter("01", "default").figures_dir == REPO / "build" / "figures" / "default"
    assert setup_chapter("01", "smoke", out_dir=tmp_path).figures_dir == tmp_path / "figures" / "smoke"
    assert setup_chapter("01", "default", figures_dir=tmp_path / "mine").figures_dir == tmp_path / "mine"
    assert default_figures_dir() == REPO / "build" / "figures"
    monkeypatch.setenv(FIGURES_ENV, str(tmp_path / "sweep"))  # what `covlib sweep` and `covlib book` set
    assert setup_chapter("01", "default").figures_dir == default_figures_dir() == tmp_path / "sweep"
    assert preset_figures_dir("default", "build") == REPO / "papers_figures"
    assert preset_figures_dir("smoke", tmp_path) == tmp_path / "smoke" / "papers_figures"


@pytest.mark.slow
def test_a_readers_papermill_run_leaves_papers_figures_as_it_was(tmp_path, monkeypatch):
    """Chapter 1 at the smoke preset through papermill, as a reader runs it (no figures_dir, none of the
    book's environment): every file of papers_figures/ keeps its bytes and its time, and the figures go to
    build/figures/smoke/."""
    import hashlib

    import jupytext
    import papermill

    from covlib.base.paths import FIGURES_ENV, REPO, RUN_DIR_ENV

    for name in (FIGURES_ENV, RUN_DIR_ENV):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")

    def state(folder: Path) -> dict[str, tuple[int, str]]:
        return {p.name: (p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest())
                for p in sorted(folder.iterdir()) if p.is_file()}

    book = REPO / "papers_figures"
    readers = REPO / "build" / "figures" / "smoke"
    for old in readers.glob("01_*"):
        old.unlink()  # so that what is there afterwards is this run's
    before = state(book)
    chapter = REPO / "notebooks" / "01_tasks_and_data.py"
    papermill.execute_notebook(jupytext.read(chapter), str(tmp_path / chapter.with_suffix(".ipynb").name),
                               parameters={"preset": "smoke"}, kernel_name="python3", language="python",
                               cwd=str(chapter.parent), progress_bar=False)
    assert state(book) == before, "a reader's run changed papers_figures/"
    written = {p.stem for p in readers.glob("01_*.png")}
    assert written and written <= {p.stem for p in book.glob("01_*.png")}, "the reader's figures are not in build/"
    assert all(p.with_suffix(".svg").is_file() for p in readers.glob("01_*.png"))
