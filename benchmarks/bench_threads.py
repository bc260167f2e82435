"""Training under a competing CPU-bound process: wall time of the same steps alone and beside `yes > /dev/null`,
for several thread settings, side by side in one run.

Usage: .venv/bin/python benchmarks/bench_threads.py [--steps 60] [--rounds 2] [--preset default]

Each setting trains the two-hop N = 30 shape (bench_training's data) for --steps steps in a fresh process (the
OpenMP runtime reads its wait policy when torch loads), once alone and once with one `yes` process running;
rounds alternate so that the machine's other load hits every setting alike. The settings:
- "2 threads": one thread per core (torch's default here), libgomp's default wait policy;
- "2 threads, passive": OMP_WAIT_POLICY=PASSIVE (waiting threads sleep instead of spinning);
- "covlib policy": what covlib.base.device.cpu_threads picks with COVLIB_THREADS and OMP_NUM_THREADS unset.
The table gives the median wall seconds per step and the ratio loaded / alone of each setting.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from machine import describe, load

HERE = Path(__file__).resolve().parent
CHILD = r"""
import os, sys, time, torch
sys.path.insert(0, {here!r})
from bench_training import random_batches, D_VOCAB, N_CTX
from covlib.base.device import get_device
from covlib.training.config import make_config
from covlib.training.loop import make_optimizer, train_step
from covlib.training.model import FastForward, build_model
cfg = make_config({preset!r})
model = build_model(cfg.model, D_VOCAB, N_CTX, seed=0, device=get_device()).train()
opt, fast, data = make_optimizer(model, cfg.train), FastForward(model), random_batches()
for s in range(3):
    train_step(model, opt, data, s, cfg.train, fast)
t = time.perf_counter()
for s in range(3, 3 + {steps}):
    train_step(model, opt, data, s, cfg.train, fast)
print((time.perf_counter() - t) / {steps}, torch.get_num_threads())
"""
# the thread count goes through COVLIB_THREADS: covlib.base.device sets torch's threads when the device is picked
SETTINGS = {"2 threads": ({"COVLIB_THREADS": "2"}, 2),
            "2 threads, passive": ({"COVLIB_THREADS": "2", "OMP_WAIT_POLICY": "PASSIVE"}, 2),
            "covlib policy": ({}, 0)}


def one_run(env: dict, threads: int, steps: int, preset: str, competitor: bool) -> tuple[float, int]:
    """Seconds per step of a fresh training process (and its thread count), with or without `yes` running."""
    rival = subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) if competitor else None
    try:
        full = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "COVLIB_THREADS", "OMP_WAIT_POLICY")}
        code = CHILD.format(here=str(HERE), preset=preset, steps=steps)
        out = subprocess.run([sys.executable, "-c", code], env=full | env, capture_output=True, text=True, check=True)
    finally:
        if rival is not None:
            rival.kill()
            rival.wait()
    seconds, used = out.stdout.split()
    return float(seconds), int(used)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--preset", default="default")
    args = ap.parse_args()
    print(f"{describe()}\n{load()} at the start")
    times: dict[tuple[str, bool], list[float]] = {}
    used: dict[str, int] = {}
    t0 = time.perf_counter()
    for _ in range(args.rounds):
        for name, (env, threads) in SETTINGS.items():
            for competitor in (False, True):
                s, used[name] = one_run(env, threads, args.steps, args.preset, competitor)
                times.setdefault((name, competitor), []).append(s)
    print(f"\npreset {args.preset}, {args.steps} steps per run, {args.rounds} alternating rounds; wall s/step (median)")
    print(f"{'setting':<22}{'threads':>8}{'alone':>8}{'with yes':>10}{'loaded/alone':>14}")
    for name in SETTINGS:
        alone, loaded = (statistics.median(times[(name, c)]) for c in (False, True))
        print(f"{name:<22}{used[name]:>8}{alone:>8.3f}{loaded:>10.3f}{loaded / alone:>13.2f}x")
    print(f"{load()} at the end; {time.perf_counter() - t0:.0f} s in all")


if __name__ == "__main__":
    main()
