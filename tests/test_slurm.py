"""Sweeps on a real single-node SLURM cluster (submitit job arrays), started by tests/slurm/start_slurm.sh.

Skipped, with the reason, where SLURM's daemons are not installed (.ci/install_slurm.sh installs
them) or cannot be started; the cluster lives in its own folder on non-default ports and is
stopped after the tests."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

from covlib.base.errors import CovlibError
from covlib.book.sweep import collect_sweep, config_slug, run_sweep
from covlib.training.pool import Job, SlurmOptions, run_jobs

HERE = Path(__file__).parent
PROBE = HERE / "notebooks" / "sweep_probe.py"
NEEDED = ("munged", "slurmctld", "slurmd", "slurmdbd", "mariadbd", "sbatch", "sacct", "scancel")


@pytest.fixture(scope="module")
def partition():
    missing = [c for c in NEEDED if shutil.which(c) is None]
    if missing:
        pytest.skip(f"SLURM is not installed ({', '.join(missing)} missing; .ci/install_slurm.sh installs it)")
    if os.geteuid() != 0:
        pytest.skip("the private test cluster runs its daemons as root")
    base = Path(tempfile.mkdtemp(prefix="covlib-slurm-"))
    base.chmod(0o755)  # munged wants every folder above its socket executable by all
    env = os.environ | {"SLURM_BASE": str(base)}
    t0 = time.perf_counter()
    started = subprocess.run(["bash", str(HERE / "slurm" / "start_slurm.sh")], env=env, capture_output=True, text=True,
                             timeout=300)
    if started.returncode != 0:
        subprocess.run(["bash", str(HERE / "slurm" / "stop_slurm.sh"), "--clean"], env=env, capture_output=True)
        why = "the private SLURM cluster did not start: " + " | ".join(started.stderr.strip().splitlines()[-4:])
        if os.environ.get("CI"):  # on CI SLURM is installed: a cluster that cannot start is a failure, not a skip
            pytest.fail(why)
        pytest.skip(why)
    print(f"\nSLURM cluster up in {time.perf_counter() - t0:.1f} s")
    values = dict(line.split("=", 1) for line in started.stdout.split() if "=" in line)
    saved = os.environ.get("SLURM_CONF")
    os.environ["SLURM_CONF"] = values["SLURM_CONF"]
    yield values["SLURM_PARTITION"]
    t0 = time.perf_counter()
    subprocess.run(["bash", str(HERE / "slurm" / "stop_slurm.sh"), "--clean"], env=env, capture_output=True, timeout=120)
    print(f"SLURM cluster stopped in {time.perf_counter() - t0:.1f} s")
    if saved is None:
        os.environ.pop("SLURM_CONF", None)
    else:
        os.environ["SLURM_CONF"] = saved


def test_a_three_config_sweep_finishes_two_records_the_failure_and_resumes(partition, tmp_path: Path):
    slurm = SlurmOptions(partition=partition, time_min=5, poll_s=0.5)
    t0 = time.perf_counter()
    results = run_sweep(PROBE, {"x": [1, 2, "boom"]}, tmp_path, executor="slurm", slurm=slurm, progress=False)
    round_trip = time.perf_counter() - t0
    print(f"\n3-config sweep on SLURM: {round_trip:.1f} s round trip")
    by_slug = {r.slug: r for r in results}
    assert by_slug["x-1"].status == "done" and by_slug["x-2"].status == "done"
    assert by_slug["x-boom"].status == "failed" and "x must be an int" in by_slug["x-boom"].error
    table = collect_sweep(tmp_path).set_index("slug")
    assert table.loc["x-2", "y"] == 4 and table.loc["x-1", "x_squared"] == 1  # the same metrics as a local run
    assert json.loads((tmp_path / "x-boom" / "status.json").read_text())["status"] == "failed"
    assert list((tmp_path / "x-1").glob("*.ipynb")), "the executed notebook is in the run folder"
    again = run_sweep(PROBE, {"x": [1, 2, "boom"]}, tmp_path, executor="slurm", slurm=slurm, progress=False)
    assert [r.status for r in again] == ["skipped", "skipped", "failed"]  # only the failed config is resubmitted


def test_a_cancelled_task_is_recorded_as_cancelled(partition, tmp_path: Path):
    slurm = SlurmOptions(partition=partition, time_min=5, poll_s=0.5)
    box = {}
    worker = threading.Thread(target=lambda: box.setdefault("results", run_sweep(
        PROBE, {"x": [3], "sleep_s": [300]}, tmp_path, executor="slurm", slurm=slurm, progress=False)))
    worker.start()
    status_file = tmp_path / config_slug({"x": 3, "sleep_s": 300}) / "status.json"
    # wait for the signal that the notebook started inside its SLURM task (no wall-clock deadline: a loaded
    # machine starts kernels slowly); a generous cap only keeps a broken cluster from hanging the suite
    started, cap = False, time.monotonic() + 900
    while not started and worker.is_alive() and time.monotonic() < cap:
        status = json.loads(status_file.read_text()) if status_file.is_file() else {}
        started = status.get("status") == "running"
        time.sleep(0.5)
    assert started, "the notebook never started running in its task"
    queued = subprocess.run(["squeue", "-h", "-o", "%i"], capture_output=True, text=True).stdout.split()
    assert queued, "the task never reached the queue"
    subprocess.run(["scancel", *queued], check=True)
    worker.join(timeout=120)
    assert not worker.is_alive(), "run_sweep did not notice the cancellation"
    (result,) = box["results"]
    assert result.status == "cancelled", result
    recorded = json.loads(status_file.read_text())
    assert recorded["status"] == "cancelled" and "CANCELLED" in recorded["error"].upper()


def test_generic_jobs_on_slurm_and_clear_errors(partition, tmp_path: Path):
    jobs = [Job(json.loads, {"s": "[1, 2]"}, str(tmp_path / "ok"), "ok"),
            Job(json.loads, {"s": "{not json"}, str(tmp_path / "bad"), "bad")]
    outcomes = run_jobs(jobs, "slurm", slurm=SlurmOptions(partition=partition, time_min=2, poll_s=0.5),
                        folder=tmp_path / "submitit", progress=False)
    assert outcomes[0].status == "done" and outcomes[0].result == [1, 2]
    assert outcomes[1].status == "failed" and "JSONDecodeError" in outcomes[1].error
    assert json.loads((tmp_path / "bad" / "status.json").read_text())["status"] == "failed"
    with pytest.raises(CovlibError, match="SLURM refused the job array"):
        run_jobs(jobs[:1], "slurm", slurm=SlurmOptions(partition="no-such-partition", time_min=2),
                 folder=tmp_path / "submitit2", progress=False)


def test_unknown_executor_and_missing_sbatch_are_clear_errors(tmp_path: Path, monkeypatch):
    with pytest.raises(CovlibError, match="unknown executor"):
        run_jobs([Job(json.loads, {"s": "1"})], "kubernetes")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(CovlibError, match="needs SLURM's sbatch"):
        run_jobs([Job(json.loads, {"s": "1"})], "slurm", folder=tmp_path / "s")


def test_the_search_for_required_data_runs_its_probes_on_slurm_and_matches_a_local_search(partition, tmp_path: Path):
    from covlib.search.cells import ProbeRules
    from covlib.search.experiments import cells_for
    from covlib.search.required_data import search

    rules = ProbeRules(step_cap=200, give_up_epochs=20, eval_every=25, batch_size=128, test_size_per_type=100)
    cells = cells_for("twohop", [6], [0], model="smoke")
    on_slurm = search(cells, tmp_path / "slurm.csv", tmp_path / "ws", rules, max_probes=2, log=None,
                         executor="slurm", slurm=SlurmOptions(partition=partition, time_min=5, poll_s=0.5))
    local = search(cells, tmp_path / "local.csv", tmp_path / "wl", rules, max_probes=2, log=None, jobs=2)
    cols = ["N", "n_train", "success", "steps", "best_type0"]
    assert len(on_slurm.table) == 2 and on_slurm.crashed == []
    assert on_slurm.table[cols].reset_index(drop=True).equals(local.table[cols].reset_index(drop=True))
