"""The Mamba's selective scan on this CPU: mambapy's parallel scan against covlib's sequential scan by sequence
length (the crossover behind covlib.training.mamba.SEQUENTIAL_UP_TO), and a Mamba training step over a
transformer step, in one run.

Usage: .venv/bin/python benchmarks/bench_mamba_scan.py [--lengths 3 4 6 12] [--reps 2] [--steps 5]

Times are this process's CPU seconds (the machine is shared), one thread, the default shapes (4 layers, width
128), batch 512: a forward and backward of the model per scan and length (best of --reps), then --steps
training steps of `covlib train`'s own step for the Mamba (its scan chosen by length) and the transformer
(FastForward), on the two-hop shape (3 tokens fed); the Mamba's step is also timed with the parallel scan.
glibc's allocator settings change the Mamba's figures (its [batch, inner, state] tensors are fresh mmaps that the
kernel zero-fills): compare a run under MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=1073741824
MALLOC_TOP_PAD_=268435456.
"""
from __future__ import annotations

import argparse
import time

import torch
from bench_training import D_VOCAB, N_CTX, random_batches
from machine import describe, load

from covlib.training.config import make_config
from covlib.training.loop import make_optimizer, train_step
from covlib.training.mamba import SEQUENTIAL_UP_TO, MambaModelConfig, sequential_scan
from covlib.training.model import FastForward, build_model
from covlib.training.shapes import model_overrides


def fwd_bwd_seconds(model, tokens: torch.Tensor, reps: int) -> float:
    best = float("inf")
    for _ in range(reps):
        t = time.process_time()
        model(tokens).square().mean().backward()
        best = min(best, time.process_time() - t)
    model.zero_grad(set_to_none=True)
    return best


def use_scan(model, which: str) -> None:
    """Every block's selective_scan: mambapy's parallel scan ("parallel") or covlib's sequential one."""
    for layer in model.mamba.layers:
        mixer = layer.mixer
        mixer.__dict__.pop("selective_scan", None)
        if which == "sequential":
            mixer.selective_scan = lambda x, delta, A, B, C, D: sequential_scan(x, delta, A, B, C, D)


def step_seconds(name: str, steps: int, scan: str | None = None) -> float:
    cfg = make_config("default", model_overrides(name))
    model = build_model(cfg.model, D_VOCAB, N_CTX, seed=0, device="cpu").train()
    if scan is not None:
        use_scan(model, scan)
    forward = FastForward(model) if FastForward.supports(model) else model
    opt, data = make_optimizer(model, cfg.train), random_batches()
    train_step(model, opt, data, 0, cfg.train, forward)
    t = time.process_time()
    for s in range(1, 1 + steps):
        train_step(model, opt, data, s, cfg.train, forward)
    return (time.process_time() - t) / steps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lengths", type=int, nargs="+", default=[3, 4, 6, 12])
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--steps", type=int, default=5)
    args = ap.parse_args()
    torch.set_num_threads(1)
    print(f"{describe()}\n{load()}; CPU seconds, one thread, batch 512", flush=True)
    model = build_model(MambaModelConfig(), D_VOCAB, 64, seed=0, device="cpu")
    print(f"{'tokens':>7}{'parallel s':>12}{'sequential s':>14}{'parallel/sequential':>21}", flush=True)
    for length in args.lengths:
        tokens = torch.randint(0, D_VOCAB, (512, length), generator=torch.Generator().manual_seed(length))
        res = {}
        for which in ("parallel", "sequential"):
            use_scan(model, which)
            res[which] = fwd_bwd_seconds(model, tokens, args.reps)
        print(f"{length:>7}{res['parallel']:>12.3f}{res['sequential']:>14.3f}{res['parallel'] / res['sequential']:>20.2f}x",
              flush=True)
    print(f"covlib takes the sequential scan up to {SEQUENTIAL_UP_TO} tokens", flush=True)
    before = step_seconds("mamba-L4-d128", args.steps, "parallel")
    mamba, transformer = step_seconds("mamba-L4-d128", args.steps), step_seconds("L4-d128", args.steps)
    print(f"training step, two-hop shape: Mamba with the parallel scan {before:.3f} s, with covlib's choice "
          f"{mamba:.3f} s ({before / mamba:.2f}x), transformer {transformer:.3f} s; Mamba / transformer "
          f"{before / transformer:.1f}x before, {mamba / transformer:.1f}x now; {load()}")


if __name__ == "__main__":
    main()
