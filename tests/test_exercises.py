"""The chapters' exercises: answers are parameters, checks are cells of their own that say right or wrong without
giving the answer away (covlib.figures.exercises and each chapter's checks), and the student edition leaves the
solutions out of the executed chapters, the downloads and the site (covlib.book.editions), its checks still running."""
from __future__ import annotations

import ast
import json
import math
import re
from pathlib import Path

import jupytext
import nbformat
import pandas as pd
import pytest

from covlib.base.errors import CovlibError
from covlib.book.classroom import CLASS_MINUTES, CLASS_PATH, class_path_markdown, path_minutes, section_range
from covlib.book.editions import (
    CHECK_TAG,
    SOLUTION_TAG,
    cell_tags,
    edition_root,
    source_without_solutions,
    without_solutions,
)
from covlib.book.pagecheck import page_text, site_findings
from covlib.book.runner import discover_chapters, run_book, run_chapters
from covlib.book.site import (
    EDITIONS_CLASS,
    SOLUTION_PROMPTS,
    build_site,
    downloaded_notebook,
    downloaded_source,
    editions_html,
    landing_page,
    link_editions,
    prepare_notebook,
)
from covlib.book.sweep import declared_types, notebook_parameters, read_notebook, refuse_mistyped, run_sweep
from covlib.chapters import ch01_tasks_and_data as ch01
from covlib.cli.main import main
from covlib.figures.exercises import (
    RIGHT,
    UNANSWERED,
    UNCHECKED,
    WRONG,
    check_choice,
    check_counts,
    check_number,
    check_share,
    read_answer,
    verdict_of,
)
from covlib.tasks.datasets import DatasetConfig, generate

CHAPTERS = discover_chapters()


# ----------------------------------------------------------------------------- the shared check messages


def test_a_share_check_says_right_or_wrong_with_a_hint_and_never_the_answer():
    truth = 0.4321
    assert verdict_of(check_share(0.43, truth, "the share", "count it")) == RIGHT
    assert "0.432" in check_share(0.43, truth, "the share", "count it")  # a right answer may see the value
    for answer, word in ((0.6, "too high"), (0.2, "too low")):
        message = check_share(answer, truth, "the share", "count it", hint="count twice.", name="my_share")
        assert verdict_of(message) == WRONG and word in message and "count twice." in message
        assert "0.432" not in message and "0.43" not in message
    assert "not a percentage" in check_share(43.2, truth, "the share", "count it")
    assert verdict_of(check_share("most", truth, "the share", "count it")) == WRONG
    assert verdict_of(check_share("0.432", truth, "the share", "count it")) == RIGHT  # as papermill -p passes it
    unanswered = check_share(None, truth, "the share", "count it", name="my_share")
    assert verdict_of(unanswered) == UNANSWERED and "count it" in unanswered and "my_share" in unanswered
    assert "parameters cell" in unanswered
    assert verdict_of(check_share(0.5, math.nan, "the share", "count it", missing="no model")) == UNCHECKED


def test_number_choice_and_count_checks_hide_the_answer():
    assert verdict_of(check_number(2.44, 2.4400614, "the ratio", "divide", "my_ratio", rel_tol=0.05)) == RIGHT
    wrong = check_number(3.0, 2.4400614, "the ratio", "divide", "my_ratio", rel_tol=0.05, fmt=".2f")
    assert wrong.startswith("wrong: 3.00 is too high") and "2.44" not in wrong
    assert verdict_of(check_number(True, 1.0, "x", "y", "my_x")) == WRONG  # a bool is no number
    assert check_choice("k>3", "k>3", ("k<3", "k=3", "k>3"), "my_group", "look").startswith("right")
    assert "'k>4' is not one of" in check_choice("k>4", "k>3", ("k<3", "k=3", "k>3"), "my_group", "look")
    assert "k>3" not in check_choice("k=3", "k>3", ("k<3", "k=3", "k>3"), "my_group", "look").split(":", 1)[1]
    truth, labels = {3: 12, 4: 7}, {3: "at k = 3", 4: "at k = 4"}
    for answer in ((12, 7), [12, 7], {3: 12, 4: 7}, {"3": 12, "4": 7}, "(12, 7)", pd.Series([12, 7])):
        assert verdict_of(check_counts(answer, truth, labels, "my_counts", "count")) == RIGHT, answer
    off = check_counts((12, 9), truth, labels, "my_counts", "count")
    assert off == "wrong: the count at k = 4 is too high."
    assert verdict_of(check_counts((12,), truth, labels, "my_counts", "count")) == WRONG
    assert verdict_of(check_counts((12.5, 7), truth, labels, "my_counts", "count")) == WRONG
    assert read_answer("{300: 0.5}") == {300: 0.5} and read_answer("k<3") == "k<3" and read_answer(4) == 4
    with pytest.raises(ValueError, match="not a check's message"):
        verdict_of("correct: yes")


# ----------------------------------------------------------------------------- the chapters' cells


def tagged(nb, tag: str) -> list:
    return [c for c in nb.cells if tag in cell_tags(c)]


def assigned_names(source: str) -> set[str]:
    """Names a cell binds at its top level and in its loops and comprehensions' targets (what a later cell reads)."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def read_names(source: str) -> set[str]:
    return {n.id for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.stem[:2] for c in CHAPTERS])
def test_every_chapter_checks_its_answers_apart_from_its_solutions(chapter: Path):
    nb = read_notebook(chapter)
    checks, solutions = tagged(nb, CHECK_TAG), tagged(nb, SOLUTION_TAG)
    assert checks and solutions, "every chapter ends with exercises, their checks and their solutions"
    assert not [c for c in checks if SOLUTION_TAG in cell_tags(c)], "a check cell must not be a solution cell"
    # a check (and every other cell kept in the student edition) reads nothing that only a solution cell makes
    only_solutions = set().union(*(assigned_names(c.source) for c in solutions))
    kept = [c for c in nb.cells if c.cell_type == "code" and SOLUTION_TAG not in cell_tags(c)]
    only_solutions -= set().union(*(assigned_names(c.source) for c in kept))
    for cell in kept:
        assert not read_names(cell.source) & only_solutions, (cell.source, read_names(cell.source) & only_solutions)
    # the answers the checks read are parameters: declared Optional[...] = None in the parameters cell, set nowhere else
    answers = {name for c in checks for name in read_names(c.source) if name.startswith("my_")}
    assert answers
    declared, types = notebook_parameters(nb), declared_types(nb)
    for name in answers:
        assert name in declared and declared[name] is None, name
        assert types[name].startswith("Optional["), (name, types[name])
    parameters = next(c for c in nb.cells if "parameters" in cell_tags(c))
    for cell in nb.cells:
        if cell is not parameters and cell.cell_type == "code":
            assert not assigned_names(cell.source) & answers, cell.source


def test_answers_are_type_checked_like_every_parameter():
    by_stem = {c.stem[:2]: c for c in CHAPTERS}
    refuse_mistyped(by_stem["02"], {"my_half_k": [3, 4, None]}, "chapter 2")
    with pytest.raises(CovlibError, match="declares my_half_k as Optional\\[int\\]"):
        refuse_mistyped(by_stem["02"], {"my_half_k": ["four"]}, "chapter 2")
    refuse_mistyped(by_stem["08"], {"my_reachable": [[12, 7]], "my_agreement": [0.16]}, "chapter 8")  # JSON lists
    with pytest.raises(CovlibError, match="my_reachable"):
        refuse_mistyped(by_stem["08"], {"my_reachable": [[12, 7, 3]]}, "chapter 8")
    refuse_mistyped(by_stem["09"], {"my_coverage": [{"250": 0.5, "500": 0.9}]}, "chapter 9")  # JSON's keys are text
    with pytest.raises(CovlibError, match="my_coverage"):
        refuse_mistyped(by_stem["09"], {"my_coverage": [{"250": "half"}]}, "chapter 9")
    assert main(["sweep", str(by_stem["02"]), "-p", "my_half_k", "four", "--out", "unused"]) == 2


# ----------------------------------------------------------------------------- chapter 2's exercise 2, and its error


def test_a_library_error_names_the_parameter_and_the_command_line_its_option(tmp_path, capsys):
    with pytest.raises(CovlibError, match="lower n_train$") as caught:
        generate(DatasetConfig("twohop", 10, 600, seed=0, test_size_per_type=10))
    assert "--" not in str(caught.value) and caught.value.parameter == "n_train"
    argv = ["generate", "twohop", "-N", "10", "--n-train", "600", "--test-size-per-type", "10", "--out", str(tmp_path)]
    assert main(argv) == 2
    assert capsys.readouterr().err.strip().endswith("lower n_train (option --n-train)")


# ----------------------------------------------------------------------------- the editions


def test_the_student_source_drops_exactly_the_solution_cells():
    for chapter in CHAPTERS:
        text = chapter.read_text(encoding="utf-8")
        full = jupytext.reads(text, fmt="py:percent")
        student = jupytext.reads(source_without_solutions(text), fmt="py:percent")
        assert [c.source for c in student.cells] == [c.source for c in full.cells if SOLUTION_TAG not in cell_tags(c)]
        assert tagged(student, CHECK_TAG) and not tagged(student, SOLUTION_TAG)
        assert student.metadata["kernelspec"]["name"] == "python3"
        node = without_solutions(read_notebook(chapter))
        assert isinstance(node, nbformat.NotebookNode) and not tagged(node, SOLUTION_TAG)
    assert edition_root("build") == Path("build") and edition_root("build", "student") == Path("build/student")
    with pytest.raises(CovlibError, match="unknown edition"):
        edition_root("build", "teacher")


EXECUTED = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
    {"cell_type": "markdown", "metadata": {}, "source": "# 1. A title\n\nIts story."},
    {"cell_type": "markdown", "metadata": {}, "source": "## Exercises\n\n1. Find k."},
    {"cell_type": "code", "metadata": {"tags": [CHECK_TAG]}, "execution_count": 1, "source": "print(check(my_k))",
     "outputs": [{"output_type": "stream", "name": "stdout", "text": "Exercise 1: no answer yet\n"}]},
    {"cell_type": "code", "metadata": {"tags": [SOLUTION_TAG]}, "execution_count": 2, "source": "print(4)",
     "outputs": [{"output_type": "stream", "name": "stdout", "text": "4\n"}]}]}


def test_reading_copies_label_the_folded_solutions_or_leave_them_out():
    full = prepare_notebook(EXECUTED, "01_a").notebook
    solution = full["cells"][-1]
    assert "hide-cell" in solution["metadata"]["tags"] and solution["metadata"]["mystnb"] == SOLUTION_PROMPTS
    assert SOLUTION_PROMPTS["code_prompt_show"] == "Show the solution"
    assert "hide-input" in full["cells"][-2]["metadata"]["tags"]  # the check: its verdict shows, its code folds
    student = prepare_notebook(EXECUTED, "01_a", "student").notebook
    assert [cell_tags(c) for c in student["cells"] if c["cell_type"] == "code"] == [[CHECK_TAG, "hide-input"]]
    assert "no solutions" in student["cells"][1]["source"] and "folded under its check" in full["cells"][1]["source"]
    downloaded = json.loads(downloaded_notebook(json.dumps(EXECUTED).encode(), "student"))
    assert not [c for c in downloaded["cells"] if SOLUTION_TAG in cell_tags(c)]
    assert len(json.loads(downloaded_notebook(json.dumps(EXECUTED).encode()))["cells"]) == len(EXECUTED["cells"]) + 1
    source = downloaded_source(CHAPTERS[0].read_bytes(), "student").decode()
    assert 'tags=["solution"]' not in source and 'tags=["check"]' in source


def test_the_landing_page_offers_the_other_edition_and_a_class_path(tmp_path):
    chapters = [(c.stem, f"{int(c.stem[:2])}. Title", "a line") for c in CHAPTERS]
    page = landing_page(chapters, [], "smoke", "full", "../../student/site/smoke/index.html")
    assert '<a href="../../student/site/smoke/index.html">student edition</a>' in page
    assert "make book EDITION=student" in page and f"## A {CLASS_MINUTES}-minute class" in page
    assert f"[1. Title]({CHAPTERS[0].stem}.ipynb)" in page and "-p my_half_k 4" in page
    alone = landing_page(chapters, [], "smoke")
    assert "href" not in editions_html("full", None) and "<code>make book EDITION=student</code>" in alone
    student = landing_page(chapters, [], "smoke", "student", "../../../site/smoke/index.html")
    assert "This is the student edition" in student and '">full edition</a>' in student
    index = tmp_path / "index.html"
    index.write_text(f"<html><body>{editions_html('full', None)}<p>rest</p></body></html>")
    assert link_editions(index, "full", "elsewhere/index.html")
    assert '<a href="elsewhere/index.html">student edition</a>' in index.read_text() and "<p>rest</p>" in index.read_text()
    assert index.read_text().count(f'class="{EDITIONS_CLASS}"') == 1


# ----------------------------------------------------------------------------- the class of 90 minutes


def test_the_class_path_names_real_sections_and_exercises_and_fills_the_class():
    assert path_minutes() == CLASS_MINUTES
    by_number = {c.stem[:2]: c.read_text(encoding="utf-8") for c in CHAPTERS}
    for stop in CLASS_PATH:
        text = by_number[stop.chapter]
        for section in stop.sections:
            assert re.search(rf"^# ## {re.escape(section)} ", text, flags=re.M), (stop.chapter, section)
        exercises = text[text.index("# ## Exercise"):]
        for number in stop.exercises:
            assert re.search(rf"^# {number}\. \*\*", exercises, flags=re.M), (stop.chapter, number)
        assert stop.minutes > 0 and (stop.exercise_minutes > 0 or not stop.exercises)
    assert section_range(["1.1", "1.2", "1.3", "1.5"]) == "1.1\u20131.3, 1.5" and section_range(["7.1"]) == "7.1"
    table = class_path_markdown({"01": ("01_a", "1. A")})
    assert "[1. A](01_a.ipynb)" in table and "| 0\u201315 |" in table and f"\u2013{CLASS_MINUTES} |" in table


# ----------------------------------------------------------------------------- built editions, end to end


TINY = '''# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 1. A tiny chapter
#
# Its story.

# %% tags=["parameters"]
from typing import Optional

preset = "default"
my_k: Optional[int] = None  # exercise 1

# %% [markdown]
# ## Exercises
#
# 1. **Find k.** Set `my_k`.

# %% tags=["check"]
print("Exercise 1:", "no answer yet" if my_k is None else "right" if my_k == 4 else "wrong")

# %% tags=["solution"]
answer_shown = 2 + 2
print("the solution is", answer_shown)
'''


@pytest.mark.slow
def test_both_editions_build_link_each_other_and_the_student_one_has_no_solution(tmp_path):
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    (notebooks / "01_tiny.py").write_text(TINY)
    build = tmp_path / "build"
    for edition in ("full", "student"):
        [result] = run_book("smoke", out=build, figures_dir=tmp_path / "figs", notebooks_dir=notebooks,
                            progress=False, edition=edition)
        assert result.status == "done", result.error
    student = json.loads((build / "student" / "smoke" / "01_tiny.ipynb").read_text())
    assert not [c for c in student["cells"] if SOLUTION_TAG in cell_tags(c)]
    check = next(c for c in student["cells"] if CHECK_TAG in cell_tags(c))
    assert "Exercise 1: no answer yet" in "".join(check["outputs"][0]["text"])  # the check ran without the solution
    full_site = build_site("smoke", build, notebooks_dir=notebooks)
    student_site = build_site("smoke", build, notebooks_dir=notebooks, edition="student")
    assert student_site == build / "student" / "site" / "smoke"
    full_page, student_page = ((s / "01_tiny.html").read_text(encoding="utf-8") for s in (full_site, student_site))
    assert "Show the solution" in full_page and "answer_shown" in full_page
    assert "answer_shown" not in student_page and "Show the solution" not in student_page
    assert "Exercise 1: no answer yet" in student_page
    assert 'href="../../student/site/smoke/index.html"' in (full_site / "index.html").read_text()  # linked afterwards
    assert 'href="../../../site/smoke/index.html"' in (student_site / "index.html").read_text()
    assert "answer_shown" not in (student_site / "downloads" / "01_tiny.py").read_text()
    assert "answer_shown" not in (student_site / "downloads" / "01_tiny.ipynb").read_text()


@pytest.mark.slow
def test_a_chapter_of_the_student_edition_has_no_solution_and_checks_answers_passed_from_outside(tmp_path):
    """Chapter 1 (the cheapest at the smoke preset) in the student edition: executed, published and downloaded
    without its solutions; its downloaded source, run by `covlib sweep` (papermill) with a right and a wrong answer,
    says which is which, and the wrong one does not learn the answer."""
    chapter = CHAPTERS[0]
    build, data = tmp_path / "build", str(tmp_path / "data")
    [result] = run_chapters([chapter], "smoke", edition_root(build, "student"), tmp_path / "figs",
                            extra={"out_dir": data}, progress=False, edition="student")
    assert result.status == "done", result.error
    site = build_site("smoke", build, edition="student")
    code = re.sub(r"\s+", "", page_text((site / f"{chapter.stem}.html").read_text(encoding="utf-8"))[1])
    full = read_notebook(chapter)
    assert re.sub(r"\s+", "", tagged(full, CHECK_TAG)[0].source.splitlines()[0]) in code  # the check is on the page
    for cell in tagged(full, SOLUTION_TAG):
        for line in cell.source.splitlines():
            assert len(line.strip()) < 20 or re.sub(r"\s+", "", line) not in code, line
    assert site_findings(site) == {} and "This is the student edition" in (site / "index.html").read_text()
    downloaded = site / "downloads" / chapter.name
    assert not tagged(jupytext.read(downloaded), SOLUTION_TAG) and tagged(jupytext.read(downloaded), CHECK_TAG)

    truth = ch01.eligible_share("twohop", notebook_parameters(chapter)["seed"])
    grid = {"preset": ["smoke"], "out_dir": [data], "my_eligible_share": [round(truth, 2), 0.9]}
    results = run_sweep(downloaded, grid, tmp_path / "answers", jobs=2, progress=False)
    verdicts = {}
    for run in results:
        assert run.status == "done", run.error
        executed = json.loads((tmp_path / "answers" / run.slug / f"{chapter.stem}.ipynb").read_text())
        check = next(c for c in executed["cells"] if CHECK_TAG in cell_tags(c))
        verdicts[run.params["my_eligible_share"]] = "".join("".join(o.get("text", "")) for o in check["outputs"])
    assert verdicts[round(truth, 2)].startswith("Exercise 1: right")
    assert verdicts[0.9].startswith("Exercise 1: wrong") and "too high" in verdicts[0.9]
    assert f"{truth:.3f}" not in verdicts[0.9] and f"{truth:.2f}" not in verdicts[0.9]


@pytest.mark.slow
@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.stem[:2] for c in CHAPTERS])
def test_every_check_can_judge_an_answer_at_the_smoke_preset(chapter: Path, smoke_book):
    """As shipped (no answer given), each check of the smoke book says what to do: none says it cannot check,
    for want of something the smoke preset does not compute."""
    _, results = smoke_book
    assert results[chapter.stem].status == "done", results[chapter.stem].error
    assert set(check_verdicts(results[chapter.stem].output).values()) == {UNANSWERED}


def check_verdicts(executed: Path) -> dict[str, str]:
    """Each exercise's verdict in an executed chapter's check cells: {"Exercise 1": "no answer yet", ...}."""
    notebook = json.loads(executed.read_text())
    text = "".join("".join(out.get("text", "")) for cell in notebook["cells"] if CHECK_TAG in cell_tags(cell)
                   for out in cell.get("outputs", []))
    lines = [line.split(": ", 1) for line in text.splitlines() if line.startswith("Exercise")]
    assert lines, f"{executed.name}: its check cells printed no verdict"
    return {name: verdict_of(message) for name, message in lines}
