"""A probe's evaluation, scoring every test type against the lean evaluation search probes now use, side by side.

Usage: PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_lean_eval.py [--rounds 3] [--threads 1] [--cells ...]

A probe evaluates every 50 steps, and until this benchmark it scored every test type of its dataset there:
five-hop has 32 types and a training sample (33,000 items at 1,000 per type), and a chain-of-thought target
is also decoded greedily (one forward pass per target token). Early stop and the give-up rule read only
type_0 and train_inferred, so a lean evaluation (TrainConfig.eval_types = search.cells.PROBE_EVAL_TYPES)
scores those and the other types a probe's kept curve shows, teacher-forced, and leaves every type to the
last evaluation. Training is untouched (tests/test_train.py shows identical metrics, decisions and weights).

For each cell (a probe's dataset at a size near its n_req), the script times 50 training steps of the default
model, one full evaluation and one lean evaluation, alternating in rounds so that other load hits them alike,
and prints the CPU seconds per 50 steps of probe before and after, and their ratio (the probe's speed-up).
"""
from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from machine import describe, load  # noqa: E402  (benchmarks/machine.py)

from covlib.search.cells import PROBE_EVAL_TYPES  # noqa: E402
from covlib.tasks.datasets import DatasetConfig, ensure_dataset  # noqa: E402
from covlib.tasks.folders import load_dataset  # noqa: E402
from covlib.training.batches import sequence_length, training_batches  # noqa: E402
from covlib.training.config import make_config  # noqa: E402
from covlib.training.evaluation import eval_set, evaluate  # noqa: E402
from covlib.training.loop import make_optimizer, train_step  # noqa: E402
from covlib.training.model import FastForward, build_model  # noqa: E402
from covlib.training.shapes import model_overrides  # noqa: E402

# (task, N, n_train, cot): cells of the queue's remaining steps, each near its measured n_req
CELLS = {
    "twohop": ("twohop", 25, 5000, False),
    "twohop-cot": ("twohop", 25, 2500, True),
    "threehop-cot": ("threehop", 24, 4000, True),
    "fivehop": ("fivehop", 9, 3000, False),
    "fivehop-cot": ("fivehop", 9, 1411, True),
}
STEPS = 50  # a probe evaluates every 50 steps


def cpu_seconds(fn) -> float:
    t = time.process_time()
    fn()
    return time.process_time() - t


def bench_cell(task: str, N: int, n_train: int, cot: bool, rounds: int, data: str) -> dict:
    folder = ensure_dataset(DatasetConfig(task, N, n_train, seed=0, cot=cot, test_size_per_type=1000), data)
    ds = load_dataset(folder)
    cfg = make_config("default", model_overrides("L4-d128"))
    cpu = torch.device("cpu")
    model = build_model(cfg.model, len(ds.vocab), sequence_length(ds), seed=0, device=cpu)
    forward, opt, batches = FastForward(model), make_optimizer(model, cfg.train), training_batches(ds, 0, cpu)
    full = eval_set(ds, cpu)
    lean = full.restricted_to(PROBE_EVAL_TYPES)
    for step in range(3):  # warm-up
        train_step(model, opt, batches, step, cfg.train, forward)
    times: dict[str, list[float]] = {"steps": [], "full": [], "lean": []}
    for _ in range(rounds):
        times["steps"].append(cpu_seconds(lambda: [train_step(model, opt, batches, s, cfg.train, forward)
                                                   for s in range(STEPS)]))
        times["full"].append(cpu_seconds(lambda: evaluate(model, full, cfg.train.eval_batch_size, forward)))
        times["lean"].append(cpu_seconds(lambda: evaluate(model, lean, cfg.train.eval_batch_size, forward)))
    med = {k: statistics.median(v) for k, v in times.items()}
    return {"items": (len(full.prompts), len(lean.prompts)), **med,
            "before": med["steps"] + med["full"], "after": med["steps"] + med["lean"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (the queue's workers use one)")
    parser.add_argument("--cells", nargs="+", default=list(CELLS), choices=list(CELLS))
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(f"machine: {describe()}; {load()}; {args.threads} thread(s), {args.rounds} alternating rounds, medians "
          f"of CPU seconds")
    print(f"{'cell':<14}{'items full/lean':>17}{'50 steps':>10}{'full eval':>11}{'lean eval':>11}"
          f"{'probe before':>14}{'after':>8}{'speed-up':>10}")
    with tempfile.TemporaryDirectory() as data:
        for name in args.cells:
            r = bench_cell(*CELLS[name], args.rounds, data)
            items = f"{r['items'][0]:,}/{r['items'][1]:,}"
            print(f"{name:<14}{items:>17}{r['steps']:>10.1f}{r['full']:>11.1f}{r['lean']:>11.1f}"
                  f"{r['before']:>14.1f}{r['after']:>8.1f}{r['before'] / r['after']:>9.2f}x", flush=True)
    print(f"(probe before/after: CPU seconds per {STEPS} training steps and the evaluation that follows them)")


if __name__ == "__main__":
    main()
