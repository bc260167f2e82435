"""Running many jobs: a local pool of one-thread workers, or submitit job arrays on SLURM."""
from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from covlib.base.errors import CovlibError
from covlib.base.files import write_text_atomic
from covlib.base.workers import one_thread_worker

EXECUTORS = ("local", "slurm")


STATUS_FILE = "status.json"


@dataclass(frozen=True)
class Job:
    """One unit of work: ``fn(**kwargs)`` whose outcome is recorded in ``run_dir/status.json``."""

    fn: Callable[..., Any]
    kwargs: dict = field(default_factory=dict)
    run_dir: str = ""
    name: str = ""


@dataclass(frozen=True)
class SlurmOptions:
    """How the job array is submitted (submitit's slurm parameters)."""

    partition: str | None = None
    time_min: int = 60  # time limit of each task
    cpus: int = 1  # cpus per task (torch uses this many threads)
    parallelism: int = 64  # tasks of the array running at once
    mem_gb: float | None = None
    signal_delay_s: int = 15  # seconds between the warning signal and the time limit
    poll_s: float = 1.0


@dataclass
class Outcome:
    """What became of one job: status done, failed, cancelled or timed_out; its result or error."""

    name: str
    status: str
    result: Any = None
    error: str = ""
    job_id: str = ""


def write_status(run_dir: str, status: str, **extra: Any) -> None:
    """status.json of a run folder, written atomically."""
    if not run_dir:
        return

    Path(run_dir).mkdir(parents=True, exist_ok=True)
    write_text_atomic(Path(run_dir) / STATUS_FILE, json.dumps({"status": status, **extra}, indent=1))


def _call(job: Job) -> Any:
    return job.fn(**job.kwargs)


def _call_one_thread(job: Job) -> Any:
    one_thread_worker()
    return job.fn(**job.kwargs)


def run_jobs(jobs: Sequence[Job], executor: str = "local", workers: int = 1, slurm: SlurmOptions | None = None,
             folder: str | os.PathLike | None = None, progress: bool = True,
             on_outcome: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    """Run every job locally (``workers`` one-thread processes; 1 = in this process) or as a SLURM job
    array (``folder`` keeps submitit's scripts and logs); returns the outcomes in the jobs' order."""
    if executor not in EXECUTORS:
        raise CovlibError(f"unknown executor {executor!r}; choose one of: {', '.join(EXECUTORS)}")
    if not jobs:
        return []
    if executor == "slurm":
        return _run_slurm(jobs, slurm or SlurmOptions(), folder, progress, on_outcome)
    return _run_local(jobs, workers, progress, on_outcome)


def _run_local(jobs, workers, progress, on_outcome) -> list[Outcome]:
    from tqdm.auto import tqdm

    outcomes: dict[int, Outcome] = {}
    bar = tqdm(total=len(jobs), unit="job", disable=not progress)

    def finish(i: int, outcome: Outcome) -> None:
        outcomes[i] = outcome
        if outcome.status != "done" and not _has_final_status(jobs[i].run_dir):
            write_status(jobs[i].run_dir, outcome.status, error=outcome.error)
        bar.update(1)
        if on_outcome:
            on_outcome(outcome)

    if workers <= 1:
        for i, job in enumerate(jobs):
            try:
                finish(i, Outcome(job.name, "done", _call(job)))
            except Exception as exc:  # noqa: BLE001  (recorded; the other jobs go on)
                finish(i, Outcome(job.name, "failed", error=f"{type(exc).__name__}: {exc}"))
    else:
        from concurrent.futures import ProcessPoolExecutor, as_completed
        from multiprocessing import get_context

        with ProcessPoolExecutor(min(workers, len(jobs)), mp_context=get_context("spawn"), initializer=one_thread_worker) as pool:
            futures = {pool.submit(_call, job): i for i, job in enumerate(jobs)}
            for fut in as_completed(futures):
                i = futures[fut]
                try:
                    finish(i, Outcome(jobs[i].name, "done", fut.result()))
                except Exception as exc:  # noqa: BLE001  (a job raised, or its worker process died)
                    finish(i, Outcome(jobs[i].name, "failed", error=f"{type(exc).__name__}: {exc}"))
    bar.close()
    return [outcomes[i] for i in range(len(jobs))]


def _has_final_status(run_dir: str) -> bool:
    """True when the job itself recorded done or failed (its own words beat ours)."""
    try:
        return json.loads((Path(run_dir) / STATUS_FILE).read_text())["status"] in ("done", "failed")
    except (OSError, ValueError, KeyError, TypeError):
        return False


def _check_slurm(options: SlurmOptions) -> None:
    if shutil.which("sbatch") is None:
        raise CovlibError("--executor slurm needs SLURM's sbatch on PATH (and sacct for accounting); run on a "
                          "cluster login node, or use --executor local")
    if options.time_min < 1 or options.cpus < 1:
        raise CovlibError(f"--time-min {options.time_min} and --cpus {options.cpus} must be at least 1")


def _run_slurm(jobs, options: SlurmOptions, folder, progress, on_outcome) -> list[Outcome]:
    _check_slurm(options)
    import submitit
    from submitit.core.utils import FailedJobError, UncompletedJobError
    from tqdm.auto import tqdm

    folder = Path(folder or "submitit") / "%j"
    ex = submitit.AutoExecutor(folder=folder, cluster="slurm")
    params: dict[str, Any] = {"timeout_min": options.time_min, "cpus_per_task": options.cpus,
                              "slurm_array_parallelism": options.parallelism,
                              "slurm_signal_delay_s": options.signal_delay_s}
    if options.partition:
        params["slurm_partition"] = options.partition
    if options.mem_gb:
        params["mem_gb"] = options.mem_gb
    ex.update_parameters(**params)
    call = _call_one_thread if options.cpus == 1 else _call
    try:
        submitted = ex.map_array(call, list(jobs))
    except FailedJobError as exc:  # sbatch refused the array: a bad partition, the controller down, ...
        first = str(exc).strip().splitlines()
        raise CovlibError(f"SLURM refused the job array: {first[-1] if first else exc}") from None
    for job, sj in zip(jobs, submitted):
        write_status(job.run_dir, "queued", job_id=sj.job_id)
    outcomes: dict[int, Outcome] = {}
    bar = tqdm(total=len(jobs), unit="task", disable=not progress, desc=f"slurm array {submitted[0].job_id.split('_')[0]}")
    while len(outcomes) < len(jobs):
        for i, sj in enumerate(submitted):
            if i in outcomes or not sj.done():
                continue
            try:
                result = sj.result()
                state = _final_state(sj)
                if state in ("cancelled", "timed_out"):  # the job was stopped, whatever it managed to return
                    outcome = Outcome(jobs[i].name, state, result, error=f"SLURM state {sj.state}", job_id=sj.job_id)
                else:
                    outcome = Outcome(jobs[i].name, "done", result, job_id=sj.job_id)
            except UncompletedJobError as exc:
                outcome = Outcome(jobs[i].name, _uncompleted_status(str(exc), sj), error=_short(exc), job_id=sj.job_id)
            except FailedJobError as exc:
                status = "timed_out" if "timed-out" in str(exc) or "TIMEOUT" in str(exc) else "failed"
                outcome = Outcome(jobs[i].name, status, error=_short(exc), job_id=sj.job_id)
            except Exception as exc:  # noqa: BLE001  (the job's own exception, re-raised by submitit)
                outcome = Outcome(jobs[i].name, "failed", error=f"{type(exc).__name__}: {exc}", job_id=sj.job_id)
            outcomes[i] = outcome
            if outcome.status != "done" and (outcome.status != "failed" or not _has_final_status(jobs[i].run_dir)):
                write_status(jobs[i].run_dir, outcome.status, error=outcome.error, job_id=sj.job_id)
            bar.update(1)
            if on_outcome:
                on_outcome(outcome)
        if len(outcomes) < len(jobs):
            time.sleep(options.poll_s)
    bar.close()
    return [outcomes[i] for i in range(len(jobs))]


def _final_state(job) -> str:
    """cancelled / timed_out / other, from SLURM's accounting (sacct) for a finished task."""
    try:
        job.watcher.update()  # fresh sacct information, not the cached one
    except Exception:  # noqa: BLE001  (accounting unavailable: trust the result)
        return "other"
    state = str(job.state).upper()
    return "cancelled" if "CANCELLED" in state else "timed_out" if "TIMEOUT" in state else "other"


def _uncompleted_status(message: str, job) -> str:
    text = f"{message} {getattr(job, 'state', '')}".upper()
    if "CANCELLED" in text:
        return "cancelled"
    if "TIMEOUT" in text or "TIMED-OUT" in text:
        return "timed_out"
    return "failed"


def _short(exc: BaseException, limit: int = 600) -> str:
    """The useful part of a submitit error: the remote exception's last line, else its first line."""
    import re

    text = str(exc)
    raised = re.findall(r"^\s*([A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Exit)\b.*)$", text, flags=re.M)
    first = " ".join(text.strip().splitlines()[0].split()) if text.strip() else type(exc).__name__
    return (raised[-1].strip() + f" ({first})" if raised else first)[:limit]
