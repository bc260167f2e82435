"""papermill sweeps: one run folder per configuration, resumable, with its metrics."""
from __future__ import annotations

import ast
import hashlib
import itertools
import json
import os
import re
import time
from collections.abc import Iterable, Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import pandas as pd

from covlib.base.errors import CovlibError
from covlib.base.files import write_text_atomic
from covlib.base.paths import FIGURES_ENV, RUN_DIR_ENV
from covlib.training.pool import EXECUTORS, Job, Outcome, run_jobs

PARAMS_FILE, STATUS_FILE, METRICS_FILE = "params.json", "status.json", "metrics.json"


_SAFE = re.compile(r"[^A-Za-z0-9.+-]+")


def read_notebook(path: str | os.PathLike):
    """A notebook node from a jupytext .py (or .ipynb) file, with a clear error if it is missing."""
    import jupytext

    path = Path(path)
    if not path.is_file():
        raise CovlibError(f"notebook {path} does not exist; pass a chapter such as notebooks/01_tasks_and_data.py")
    return jupytext.read(path)


def notebook_parameters(notebook) -> dict[str, Any]:
    """Names and default values declared in the notebook's cell tagged ``parameters``.

    Accepts a path or a notebook node; values that are not literals are reported as None.
    Raises CovlibError unless exactly one cell carries the tag.
    """
    nb = read_notebook(notebook) if isinstance(notebook, (str, os.PathLike)) else notebook
    cells = [c for c in nb.cells if c.cell_type == "code" and "parameters" in c.get("metadata", {}).get("tags", [])]
    if len(cells) != 1:
        raise CovlibError(f"a notebook needs exactly one cell tagged parameters, found {len(cells)}; "
                          'mark it with `# %% tags=["parameters"]`')
    try:
        tree = ast.parse(cells[0].source)
    except SyntaxError as exc:
        raise CovlibError(f"the parameters cell is not valid Python: {exc}") from None
    declared: dict[str, Any] = {}
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        value = getattr(node, "value", None)
        for target in targets:
            if isinstance(target, ast.Name):
                try:
                    declared[target.id] = ast.literal_eval(value) if value is not None else None
                except ValueError:
                    declared[target.id] = None
    return declared


def execute_notebook(notebook, output: Path, parameters: Mapping[str, Any], cwd: Path | None = None,
                     progress_bar: bool = False, timeout: float | None = None, kernel_name: str = "python3",
                     log_output: bool = False):
    """Run a notebook node (or .py path) with papermill, writing the executed copy to ``output``.

    Only parameters the notebook declares may be passed (CovlibError otherwise). Raises
    papermill's PapermillExecutionError when a cell fails; the output notebook is written anyway.
    """
    import papermill

    nb = read_notebook(notebook) if isinstance(notebook, (str, os.PathLike)) else notebook
    refuse_undeclared(nb, parameters, "the notebook")
    output.parent.mkdir(parents=True, exist_ok=True)
    kwargs = {"execution_timeout": timeout} if timeout else {}
    for attempt in range(1, KERNEL_START_ATTEMPTS + 1):
        try:
            return papermill.execute_notebook(
                nb, str(output), parameters=dict(parameters), kernel_name=kernel_name, language="python",
                progress_bar=progress_bar, cwd=str(cwd) if cwd else None, log_output=log_output, **kwargs,
            )
        except RuntimeError as exc:
            if not kernel_failed_to_start(exc) or attempt == KERNEL_START_ATTEMPTS:
                raise
            time.sleep(KERNEL_START_PAUSE * attempt)  # no cell has run: starting again repeats nothing


# Kernels launched side by side from separate processes can race for the same free TCP ports (jupyter_client
# picks them before the kernel binds them); the loser dies at start. Trying again after a pause is the cure.
KERNEL_START_ATTEMPTS, KERNEL_START_PAUSE = 3, 2.0
_START_FAILURES = ("Kernel died before replying to kernel_info", "Kernel didn't respond in")


def kernel_failed_to_start(exc: BaseException) -> bool:
    """Whether an execution failed because its kernel never came up (before any cell ran), not in a cell."""
    return isinstance(exc, RuntimeError) and str(exc).startswith(_START_FAILURES)


def declared_types(notebook) -> dict[str, str | None]:
    """The type each parameter of the notebook's parameters cell declares, as source text: its annotation
    (``N: Optional[int] = None``), else the type of its default literal (``seed = 0`` -> "int"); None when neither
    says (a default of None without an annotation): any value is then accepted."""
    nb = read_notebook(notebook) if isinstance(notebook, (str, os.PathLike)) else notebook
    defaults = notebook_parameters(nb)
    cell = next(c for c in nb.cells if c.cell_type == "code" and "parameters" in c.get("metadata", {}).get("tags", []))
    types: dict[str, str | None] = {}
    for node in ast.parse(cell.source).body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            types[node.target.id] = ast.unparse(node.annotation)
    for name, default in defaults.items():
        if name not in types:
            types[name] = None if default is None else type(default).__name__
    return types


_SCALARS = {"int": int, "float": (int, float), "str": str, "bool": bool}


def value_matches(value: Any, annotation: str | None) -> bool:
    """Whether a parameter value has the declared type: ``int``, ``float`` (an int too), ``str``, ``bool``,
    ``None``, ``list[...]``/``tuple[...]`` of one of these (a list: JSON has no tuple), ``dict[K, V]`` (a key may be
    the text of a K: JSON's keys are text), unions with ``|``, ``Optional[...]``; ``object``, ``Any`` or no
    declaration accept anything. A bool is not an int here: ``-p N true`` is a mistake, not 1."""
    if annotation is None:
        return True
    try:
        tree = ast.parse(annotation, mode="eval").body
    except SyntaxError:
        return True  # a declaration this check cannot read: leave it to the notebook
    return _matches(value, tree)


def _matches(value: Any, node: ast.expr) -> bool:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _matches(value, node.left) or _matches(value, node.right)
    if isinstance(node, ast.Constant) and node.value is None or isinstance(node, ast.Name) and node.id == "None":
        return value is None
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "Optional":
        return value is None or _matches(value, node.slice)  # the spelling papermill's own reader can read
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in ("list", "tuple"):
        if not isinstance(value, list):
            return False
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if len(items) == 2 and isinstance(items[1], ast.Constant) and items[1].value is Ellipsis:  # tuple[int, ...]
            items = items[:1]
        if len(items) > 1:  # tuple[int, str]: one value per place
            return len(value) == len(items) and all(_matches(one, item) for one, item in zip(value, items))
        return all(_matches(one, items[0]) for one in value)
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "dict":
        if not isinstance(value, dict) or not (isinstance(node.slice, ast.Tuple) and len(node.slice.elts) == 2):
            return isinstance(value, dict)
        key, item = node.slice.elts
        return all(_key_matches(k, key) and _matches(v, item) for k, v in value.items())
    if isinstance(node, ast.Name) and node.id in _SCALARS:
        if isinstance(value, bool) and node.id != "bool":
            return False
        return isinstance(value, _SCALARS[node.id])
    return True  # object, Any, or a type this check does not know


def _key_matches(key: Any, node: ast.expr) -> bool:
    """A dict key has the declared type, or is its JSON spelling: JSON's keys are text (``{"300": 0.5}``)."""
    return _matches(key, node) or isinstance(key, str) and _matches(parse_value(key), node)


def refuse_mistyped(notebook, grid: Mapping[str, Iterable[Any]], where: str) -> None:
    """CovlibError on the first value of ``grid`` whose type is not the one the parameters cell declares
    (``-p N abc`` where the cell says ``N: Optional[int]``), before anything runs."""
    types = declared_types(notebook)
    for name, values in grid.items():
        for value in values:
            if not value_matches(value, types.get(name)):
                raise CovlibError(f"-p {name} {json.dumps(value) if not isinstance(value, str) else value}: "
                                  f"{where} declares {name} as {types[name]}, and this value is a "
                                  f"{type(value).__name__}; give {name} a value of the declared type")


def refuse_undeclared(notebook, names: Iterable[str], where: str) -> None:
    """CovlibError naming any of ``names`` that the notebook's parameters cell does not declare."""
    declared = notebook_parameters(notebook)
    unknown = sorted(set(names) - set(declared))
    if unknown:
        raise CovlibError(f"{where} declares no parameter {', '.join(map(repr, unknown))}; "
                          f"it declares: {', '.join(declared)}")


def describe_error(exc: BaseException) -> str:
    """One readable paragraph for a failed execution: the cell, the exception and its message."""
    try:
        from papermill.exceptions import PapermillExecutionError
    except ImportError:  # pragma: no cover
        PapermillExecutionError = ()  # noqa: N806
    if isinstance(exc, PapermillExecutionError):
        return f"cell {exc.exec_count}: {exc.ename}: {exc.evalue}"
    return f"{type(exc).__name__}: {exc}"


def parse_value(text: str) -> Any:
    """A command-line value as a JSON literal when it is one (30 -> int, 0.5 -> float, true -> bool), else str."""
    try:
        return json.loads(text)
    except (json.JSONDecodeError, TypeError):
        return text


def expand_grid(grid: Mapping[str, Iterable[Any]]) -> list[dict[str, Any]]:
    """Every combination of the grid's values, in a stable order (names sorted)."""
    names = sorted(grid)
    values = [list(grid[name]) for name in names]
    for name, vals in zip(names, values):
        if not vals:
            raise CovlibError(f"parameter {name!r} has no values; give at least one after -p {name}")
    return [dict(zip(names, combo)) for combo in itertools.product(*values)]


def _fmt(value: Any) -> str:
    return json.dumps(value) if isinstance(value, bool) or value is None else str(value)


def config_slug(params: Mapping[str, Any]) -> str:
    """Deterministic, filesystem-safe folder name: ``N-30__n_train-4000`` (names sorted).

    When sanitising loses information (odd characters, or a long name), a short hash of the
    exact parameters is appended so that distinct configs never share a folder.
    """
    if not params:
        return "default"
    raw = "__".join(f"{k}-{_fmt(params[k])}" for k in sorted(params))
    safe = "__".join(f"{_SAFE.sub('_', str(k))}-{_SAFE.sub('_', _fmt(params[k]))}" for k in sorted(params))
    if safe != raw or len(safe) > 120:
        digest = hashlib.sha1(json.dumps(dict(params), sort_keys=True, default=str).encode()).hexdigest()[:8]
        safe = f"{safe[:100]}__{digest}"
    return safe


def _write_json(path: Path, data: Any) -> None:
    write_text_atomic(path, json.dumps(data, indent=2, sort_keys=True, default=_to_builtin) + "\n")


def _to_builtin(value: Any) -> Any:
    """numpy scalars and arrays -> Python numbers and lists, for json."""
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"metric value {value!r} of type {type(value).__name__} is not JSON-serialisable")


def _read_json(path: Path, default: Any = None) -> Any:
    try:
        return json.loads(path.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return default


def record_metrics(metrics: Mapping[str, Any], run_dir: str | os.PathLike | None = None) -> Path | None:
    """Merge ``metrics`` into ``<run folder>/metrics.json`` when a sweep or the book runs the chapter.

    The run folder is ``run_dir`` or $COVLIB_RUN_DIR (set by ``covlib sweep`` per configuration and by
    ``covlib book`` per chapter: build/<preset>/metrics/<chapter>/). Run by hand in JupyterLab, this does
    nothing and returns None, so chapters can call it unconditionally.
    """
    folder = run_dir or os.environ.get(RUN_DIR_ENV)
    if not folder:
        return None
    path = Path(folder) / METRICS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    merged = {**_read_json(path, {}), **dict(metrics)}
    _write_json(path, merged)
    return path


@dataclass
class RunResult:
    """What happened to one config: status is done, failed or skipped (already done)."""

    slug: str
    params: dict[str, Any]
    status: str
    elapsed: float = 0.0
    error: str = ""


def run_config(notebook: str, params: dict[str, Any], run_dir: str, kernel_name: str = "python3",
               timeout: float | None = None) -> RunResult:
    """Execute one config into ``run_dir`` (meant for a pool worker: it sets this process's env)."""
    folder = Path(run_dir)
    folder.mkdir(parents=True, exist_ok=True)
    _write_json(folder / PARAMS_FILE, params)
    (folder / METRICS_FILE).unlink(missing_ok=True)  # metrics of a previous failed attempt
    _write_json(folder / STATUS_FILE, {"status": "running", "pid": os.getpid()})
    os.environ[RUN_DIR_ENV] = str(folder.resolve())
    os.environ[FIGURES_ENV] = str((folder / "figures").resolve())
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    path = Path(notebook)
    start = time.perf_counter()
    try:
        nb = read_notebook(path)
        parameters = dict(params)
        if "figures_dir" in notebook_parameters(nb) and "figures_dir" not in parameters:
            parameters["figures_dir"] = os.environ[FIGURES_ENV]  # keep sweeps out of papers_figures/
        execute_notebook(nb, folder / f"{path.stem}.ipynb", parameters, cwd=path.resolve().parent,
                         timeout=timeout, kernel_name=kernel_name)
    except BaseException as exc:  # noqa: BLE001 - every failure is recorded, none stops the sweep
        elapsed = time.perf_counter() - start
        error = describe_error(exc)
        _write_json(folder / STATUS_FILE, {"status": "failed", "error": error, "elapsed": round(elapsed, 2)})
        return RunResult(folder.name, params, "failed", elapsed, error)
    elapsed = time.perf_counter() - start
    _write_json(folder / STATUS_FILE, {"status": "done", "elapsed": round(elapsed, 2),
                                       "finished": time.strftime("%Y-%m-%dT%H:%M:%S")})
    return RunResult(folder.name, params, "done", elapsed)


def run_sweep(notebook: str | os.PathLike, grid: Mapping[str, Iterable[Any]], out_dir: str | os.PathLike,
              jobs: int = 1, kernel_name: str = "python3", timeout: float | None = None,
              progress: bool = True, executor: str = "local", slurm=None) -> list[RunResult]:
    """Run every config of ``grid`` over ``notebook`` into ``out_dir/<slug>/``; skip configs already done.

    ``executor`` "local" runs ``jobs`` one-thread worker processes; "slurm" submits one job array
    task per config (``slurm``: covlib.training.pool.SlurmOptions). Parameters the notebook does not
    declare are refused before anything runs."""

    notebook = Path(notebook)
    grid = {name: list(values) for name, values in grid.items()}
    refuse_undeclared(notebook, grid, notebook.name)  # before anything runs
    refuse_mistyped(notebook, grid, notebook.name)
    if jobs < 1:
        raise CovlibError(f"--jobs {jobs}: need at least one worker")
    if executor not in EXECUTORS:
        raise CovlibError(f"unknown executor {executor!r}; choose one of: {', '.join(EXECUTORS)}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    configs = expand_grid(grid)
    slugs = [config_slug(c) for c in configs]
    if len(set(slugs)) != len(slugs):
        raise CovlibError("two configs share a folder name; give each parameter value once")
    results: list[RunResult] = []
    todo = []
    for params, slug in zip(configs, slugs):
        if _read_json(out / slug / STATUS_FILE, {}).get("status") == "done":
            results.append(RunResult(slug, params, "skipped"))
        else:
            todo.append((params, slug))
    work = [Job(run_config, {"notebook": str(notebook.resolve()), "params": p, "run_dir": str(out / s),
                             "kernel_name": kernel_name, "timeout": timeout}, str(out / s), s) for p, s in todo]

    def report(outcome) -> None:
        if outcome.status == "failed" and progress:
            print(f"FAILED {outcome.name}: {outcome.error}", flush=True)

    if executor == "slurm":
        outcomes = run_jobs(work, "slurm", slurm=slurm, folder=out / ".submitit", progress=progress, on_outcome=report)
    else:
        outcomes = _local_sweep(work, jobs, progress, report)
    for (params, slug), outcome in zip(todo, outcomes):
        if outcome.status == "done" and isinstance(outcome.result, RunResult):
            results.append(outcome.result)
            if outcome.result.status == "failed" and progress:
                print(f"FAILED {slug}: {outcome.result.error}", flush=True)
        else:
            error = outcome.error if outcome.status != "failed" else f"worker process failed: {outcome.error}"
            results.append(RunResult(slug, params, outcome.status, 0.0, error))
    order = {s: i for i, s in enumerate(slugs)}
    return sorted(results, key=lambda r: order[r.slug])


def _local_sweep(work, jobs: int, progress: bool, report):
    """Configs in a pool of ``jobs`` worker processes (each its own kernel, one torch thread when jobs > 1)."""

    if jobs == 1:  # still a separate process: the kernel must not share this process's ports
        from tqdm.auto import tqdm


        outcomes = []
        with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool:
            for job in tqdm(work, unit="config", disable=not progress):
                try:
                    outcomes.append(Outcome(job.name, "done", pool.submit(job.fn, **job.kwargs).result()))
                except Exception as exc:  # noqa: BLE001 - the worker process itself died
                    outcomes.append(Outcome(job.name, "failed", error=describe_error(exc)))
                    _write_json(Path(job.run_dir) / STATUS_FILE, {"status": "failed", "error": outcomes[-1].error})
        return outcomes
    return run_jobs(work, "local", workers=jobs, progress=progress, on_outcome=report)


def collect_sweep(out_dir: str | os.PathLike) -> pd.DataFrame:
    """One row per run folder under ``out_dir``: its params, slug, status, elapsed, error and metrics.

    A metric named like a parameter is prefixed ``metric_``. Sorted by slug.
    """
    out = Path(out_dir)
    if not out.is_dir():
        raise CovlibError(f"{out} is not a sweep folder; run `covlib sweep ... --out {out}` first")
    rows = []
    for folder in sorted(p for p in out.iterdir() if (p / PARAMS_FILE).is_file()):
        params = _read_json(folder / PARAMS_FILE, {})
        status = _read_json(folder / STATUS_FILE, {})
        metrics = _read_json(folder / METRICS_FILE, {})
        row = {**params, "slug": folder.name, "status": status.get("status", "unknown"),
               "elapsed": status.get("elapsed"), "error": status.get("error", "")}
        for key, value in metrics.items():
            row[f"metric_{key}" if key in row else key] = value
        rows.append(row)
    return pd.DataFrame(rows)
