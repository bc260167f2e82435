"""Notebook sweeps: slugs, grids, metrics, failure recording and resume (covlib.book.sweep)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from covlib.base.errors import CovlibError
from covlib.base.paths import RUN_DIR_ENV
from covlib.book.sweep import (
    collect_sweep,
    config_slug,
    declared_types,
    execute_notebook,
    expand_grid,
    notebook_parameters,
    parse_value,
    record_metrics,
    run_sweep,
    value_matches,
)
from covlib.cli.main import main
from covlib.cli.sweep import parse_grid

PROBE = Path(__file__).parent / "notebooks" / "sweep_probe.py"
CHAPTER_2 = Path(__file__).parents[1] / "notebooks" / "02_coverage.py"


def test_parse_value_reads_json_literals_else_strings():
    assert parse_value("30") == 30 and isinstance(parse_value("30"), int)
    assert parse_value("0.5") == 0.5
    assert parse_value("true") is True
    assert parse_value("null") is None
    assert parse_value("twohop") == "twohop"
    assert parse_value("[1, 2]") == [1, 2]


def test_parse_grid_and_expand_grid():
    grid = parse_grid([["n_train", "4000", "2000"], ["N", "30"]])
    assert grid == {"n_train": [4000, 2000], "N": [30]}
    configs = expand_grid(grid)
    assert configs == [{"N": 30, "n_train": 4000}, {"N": 30, "n_train": 2000}]
    with pytest.raises(CovlibError, match="given twice"):
        parse_grid([["N", "1"], ["N", "2"]])
    with pytest.raises(CovlibError, match="at least one value"):
        parse_grid([["N"]])


def test_config_slug_is_deterministic_sorted_and_safe():
    assert config_slug({"n_train": 4000, "N": 30}) == "N-30__n_train-4000"
    assert config_slug({"N": 30, "n_train": 4000}) == config_slug({"n_train": 4000, "N": 30})
    assert config_slug({"cot": True, "ratio": 0.5}) == "cot-true__ratio-0.5"
    odd = config_slug({"path": "a/b c"})
    assert "/" not in odd and " " not in odd
    assert odd == config_slug({"path": "a/b c"})  # stable across calls
    assert odd != config_slug({"path": "a_b_c"})  # sanitising never merges two configs
    long = config_slug({"name": "x" * 300})
    assert len(long) < 130
    assert config_slug({}) == "default"


def test_record_metrics_is_a_no_op_outside_a_sweep(monkeypatch, tmp_path):
    monkeypatch.delenv(RUN_DIR_ENV, raising=False)
    assert record_metrics({"a": 1}) is None
    monkeypatch.setenv(RUN_DIR_ENV, str(tmp_path))
    record_metrics({"a": 1})
    path = record_metrics({"b": 2.5})  # merges with what is there
    assert json.loads(path.read_text()) == {"a": 1, "b": 2.5}


def test_notebook_parameters_reads_the_parameters_cell():
    assert notebook_parameters(PROBE) == {"x": 1, "figures_dir": "", "sleep_s": 0}


@pytest.mark.parametrize("chapter", sorted((Path(__file__).parents[1] / "notebooks").glob("[0-9][0-9]_*.py")),
                         ids=lambda p: p.stem[:2])
def test_papermill_reads_every_parameter_a_chapter_declares(chapter, caplog, tmp_path):
    """`papermill --help-notebook` lists, and `papermill -p` checks names against, what papermill's own reader
    finds; a line it cannot read (more than one "=") is a warning on every run and a parameter it does not know."""
    import nbformat
    import papermill

    from covlib.book.sweep import read_notebook

    ipynb = tmp_path / f"{chapter.stem}.ipynb"
    nbformat.write(read_notebook(chapter), ipynb)
    with caplog.at_level("WARNING", logger="papermill"):
        found = list(papermill.inspect_notebook(str(ipynb)))
    assert found == list(notebook_parameters(chapter)) and not caplog.records


def test_sweep_records_a_failure_finishes_the_rest_and_resumes(tmp_path):
    out = tmp_path / "sweep"
    results = run_sweep(PROBE, {"x": [2, "boom"]}, out, jobs=2, progress=False)
    by_slug = {r.slug: r for r in results}
    assert set(by_slug) == {"x-2", "x-boom"}
    assert by_slug["x-2"].status == "done"
    assert by_slug["x-boom"].status == "failed" and "x must be an int" in by_slug["x-boom"].error

    good, bad = out / "x-2", out / "x-boom"
    assert json.loads((good / "params.json").read_text()) == {"x": 2}
    assert json.loads((good / "status.json").read_text())["status"] == "done"
    assert json.loads((good / "metrics.json").read_text()) == {"y": 4, "x_squared": 4}
    assert (good / "sweep_probe.ipynb").is_file()
    assert (good / "figures" / "probe.txt").read_text() == "2"  # figures stay in the run folder
    failed = json.loads((bad / "status.json").read_text())
    assert failed["status"] == "failed" and "ValueError" in failed["error"]

    table = collect_sweep(out)
    assert list(table["slug"]) == ["x-2", "x-boom"]
    assert list(table["status"]) == ["done", "failed"]
    assert table.loc[0, "y"] == 4 and table.loc[0, "x"] == 2

    stamp = (good / "sweep_probe.ipynb").stat().st_mtime_ns
    again = {r.slug: r for r in run_sweep(PROBE, {"x": [2, "boom"]}, out, jobs=1, progress=False)}
    assert again["x-2"].status == "skipped"  # finished configs are not rerun
    assert (good / "sweep_probe.ipynb").stat().st_mtime_ns == stamp
    assert again["x-boom"].status == "failed"  # failed ones are retried


def test_sweep_refuses_undeclared_parameters(tmp_path):
    with pytest.raises(CovlibError, match="declares no parameter 'nope'"):
        run_sweep(PROBE, {"nope": [1]}, tmp_path, progress=False)


def test_sweep_command_line_exit_codes(tmp_path, capsys):
    out = tmp_path / "cli"
    assert main(["sweep", str(PROBE), "-p", "x", "3", "--out", str(out), "--jobs", "1"]) == 0
    assert json.loads((out / "x-3" / "metrics.json").read_text())["y"] == 6
    assert main(["sweep", str(PROBE), "-p", "x", "3", "oops", "--out", str(out)]) == 1
    assert "failed x-oops" in capsys.readouterr().out
    assert main(["sweep", str(PROBE), "-p", "nope", "1", "--out", str(out)]) == 2


def test_value_matches_the_declared_type():
    assert value_matches(30, "int | None") and value_matches(None, "int | None")
    assert not value_matches("abc", "int | None")
    assert not value_matches(True, "int")  # a bool is not a count
    assert value_matches(3, "float") and not value_matches("3", "float")
    assert value_matches([20, 30], "list[int] | None") and not value_matches([20, "x"], "list[int] | None")
    assert not value_matches(20, "list[int] | None")
    assert value_matches(30, "Optional[int]") and value_matches(None, "Optional[int]")
    assert not value_matches("abc", "Optional[int]") and not value_matches(20, "Optional[list[int]]")
    assert value_matches([20, 30], "Optional[list[int]]")
    assert value_matches("anything", None) and value_matches(1, "object")
    # the exercises' answers: a pair arrives as a JSON list, a mapping's keys as JSON text
    assert value_matches([12, 7], "Optional[tuple[int, int]]") and not value_matches([12, 7, 3], "tuple[int, int]")
    assert value_matches([1, 2, 3], "tuple[int, ...]") and not value_matches([12, "x"], "tuple[int, int]")
    assert value_matches({"250": 0.5}, "Optional[dict[int, float]]") and value_matches({250: 1}, "dict[int, float]")
    assert not value_matches({"x": 0.5}, "dict[int, float]") and not value_matches({"250": "half"}, "dict[int, float]")
    assert not value_matches([0.5], "dict[int, float]") and value_matches({"a": 1}, "dict")


def test_declared_types_read_annotations_else_the_default():
    types = declared_types(CHAPTER_2)
    assert types["N"] == "Optional[int]" and types["scaling_N"] == "Optional[list[int]]"
    assert types["seed"] == "int" and types["preset"] == "str" and types["out_dir"] == "str"


def test_a_mistyped_sweep_value_is_refused_before_any_work(tmp_path, capsys):
    out = tmp_path / "sweep"
    assert main(["sweep", str(CHAPTER_2), "-p", "N", "abc", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "-p N abc" in err[0] and "Optional[int]" in err[0], err
    assert not out.exists()  # nothing started, nothing written
    with pytest.raises(CovlibError, match="declares seed as int"):
        run_sweep(CHAPTER_2, {"seed": [0, 1.5]}, out, progress=False)
    assert not out.exists()


def _papermill_failing(monkeypatch, failures: list[BaseException]) -> list[int]:
    """Replace papermill's executor by one that raises ``failures`` in turn, then succeeds; returns the call log."""
    import papermill

    import covlib.book.sweep as sweep

    calls: list[int] = []

    def fake(*args, **kwargs):
        calls.append(1)
        if len(calls) <= len(failures):
            raise failures[len(calls) - 1]
        return "executed"

    monkeypatch.setattr(papermill, "execute_notebook", fake)
    monkeypatch.setattr(sweep, "KERNEL_START_PAUSE", 0.0)
    return calls


def test_a_kernel_that_dies_at_start_is_started_again(monkeypatch, tmp_path):
    calls = _papermill_failing(monkeypatch, [RuntimeError("Kernel died before replying to kernel_info")])
    assert execute_notebook(PROBE, tmp_path / "out.ipynb", {}) == "executed"
    assert len(calls) == 2


def test_kernel_start_failures_give_up_after_the_last_attempt(monkeypatch, tmp_path):
    import covlib.book.sweep as sweep

    dying = [RuntimeError("Kernel didn't respond in 60 seconds")] * sweep.KERNEL_START_ATTEMPTS
    calls = _papermill_failing(monkeypatch, dying)
    with pytest.raises(RuntimeError, match="didn't respond"):
        execute_notebook(PROBE, tmp_path / "out.ipynb", {})
    assert len(calls) == sweep.KERNEL_START_ATTEMPTS


@pytest.mark.parametrize("failure", [RuntimeError("Kernel died"), ValueError("Kernel died before replying to kernel_info")])
def test_a_failure_after_the_kernel_started_is_not_retried(monkeypatch, tmp_path, failure):
    """A kernel that dies mid-run (nbclient's DeadKernelError says "Kernel died") may have run cells: no retry."""
    calls = _papermill_failing(monkeypatch, [failure])
    with pytest.raises(type(failure)):
        execute_notebook(PROBE, tmp_path / "out.ipynb", {})
    assert len(calls) == 1

