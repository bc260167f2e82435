"""A training step of each model shape the search uses, on this CPU: the cost behind a probe's minutes.

Usage: .venv/bin/python benchmarks/bench_architectures.py [--models L4-d128 mamba-L4-d128] [--rounds 5]
       [--steps 10] [--threads 1]

Each shape trains the two-hop N = 30 sequence (3 tokens fed, the answer at the last) through
`covlib train`'s own step (the same optimiser, batch and forward: FastForward for a transformer,
the model itself for a Mamba), one thread by default, as the queue's workers run. Rounds alternate
between the shapes so that load from other processes hits them alike; the table gives the median
and best round and each shape's median step time over the first shape's. A search probe's cost is
its steps times this figure, plus its evaluations. data/QUEUE.sh runs the Mamba with glibc's
MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_ and MALLOC_TOP_PAD_ raised: measured here (loaded, one
thread), they bring a Mamba step from 7.5x to 4.6x a transformer step; set them to compare.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from bench_training import D_VOCAB, N_CTX, SEQ, random_batches  # the same two-hop-shaped data

from covlib.training.config import make_config
from covlib.training.loop import make_optimizer, train_step
from covlib.training.model import FastForward, build_model
from covlib.training.shapes import model_overrides


def seconds_per_step(step, start: int, steps: int) -> float:
    t = time.perf_counter()
    for s in range(start, start + steps):
        step(s)
    return (time.perf_counter() - t) / steps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=["L4-d128", "mamba-L4-d128"], help="shapes (covlib.training.shapes)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=10, help="training steps per round")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (the queue's workers use 1)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), load average {os.getloadavg()[0]:.2f}")
    data, steps, params = random_batches(), {}, {}
    for name in args.models:
        cfg = make_config("default", model_overrides(name))
        model = build_model(cfg.model, D_VOCAB, N_CTX, seed=0, device="cpu").train()
        forward = FastForward(model) if cfg.train.fast_forward and FastForward.supports(model) else model
        opt = make_optimizer(model, cfg.train)
        steps[name] = lambda s, m=model, o=opt, f=forward, c=cfg: train_step(m, o, data, s, c.train, f)
        params[name] = sum(p.numel() for p in model.parameters())
        batch = cfg.train.batch_size
    times: dict[str, list[float]] = {name: [] for name in args.models}
    for name in args.models:  # warm-up
        seconds_per_step(steps[name], 0, 3)
    for r in range(args.rounds):
        for name in args.models:
            times[name].append(seconds_per_step(steps[name], 3 + r * args.steps, args.steps))
    print(f"\nbatch {batch}, {SEQ} tokens fed per item, d_vocab {D_VOCAB}; {args.rounds} alternating rounds of "
          f"{args.steps} steps")
    print(f"{'model':<16}{'params':>10}{'s/step med':>12}{'best':>8}{'x first':>9}")
    first = statistics.median(times[args.models[0]])
    for name in args.models:
        med = statistics.median(times[name])
        print(f"{name:<16}{params[name]:>10,}{med:>12.3f}{min(times[name]):>8.3f}{med / first:>8.1f}x")
    print(f"load average now {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
