"""The Mamba's selective scan on this CPU: mambapy's parallel scan against covlib's sequential scan by sequence
length (the crossover behind covlib.training.mamba.SEQUENTIAL_UP_TO), and a Mamba training step over a
transformer step, in one run: mambapy's own (parallel scan, Conv1d), covlib's before (plain sequential scan,
Conv1d) and covlib's now (compiled sequential scan, the causal convolution as shifted products).

Usage: .venv/bin/python benchmarks/bench_mamba_scan.py [--lengths 3 4 6 12] [--reps 2] [--steps 5]

Times are this process's CPU seconds (the machine is shared), one thread, the default shapes (4 layers, width
128), batch 512: a forward and backward of the model per scan and length (best of --reps), then --steps
training steps of `covlib train`'s own step for the Mamba (its scan chosen by length) and the transformer
(FastForward), on the two-hop shape (3 tokens fed); the Mamba's step rounds alternate between its variants
(after one warm-up step each, which compiles).
glibc's allocator settings change the Mamba's figures (its [batch, inner, state] tensors are fresh mmaps that the
kernel zero-fills): compare a run under MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=1073741824
MALLOC_TOP_PAD_=268435456.
"""
from __future__ import annotations

import argparse
import statistics
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
    """Every block's selective_scan and convolution: mambapy's own ("parallel": parallel scan, Conv1d), covlib's
    plain sequential scan with Conv1d ("sequential"), or what MambaLM builds ("covlib")."""
    for layer in model.mamba.layers:
        mixer = layer.mixer
        if which == "covlib":
            continue
        mixer.__dict__.pop("selective_scan", None)
        mixer.conv1d.__dict__.pop("forward", None)
        if which == "sequential":
            mixer.selective_scan = lambda x, delta, A, B, C, D: sequential_scan(x, delta, A, B, C, D)


def step_seconds(name: str, steps: int, rounds: int, scans: tuple[str | None, ...] = (None,)) -> list[float]:
    """CPU seconds per training step of model ``name``, once per scan variant, median over alternating rounds."""
    cfg = make_config("default", model_overrides(name))
    runs = []
    for scan in scans:
        model = build_model(cfg.model, D_VOCAB, N_CTX, seed=0, device="cpu").train()
        if scan is not None:
            use_scan(model, scan)
        forward = FastForward(model) if FastForward.supports(model) else model
        opt, data = make_optimizer(model, cfg.train), random_batches()
        train_step(model, opt, data, 0, cfg.train, forward)  # warm-up (and compiling)
        runs.append((model, forward, opt, data))
    times: list[list[float]] = [[] for _ in scans]
    for _ in range(rounds):
        for i, (model, forward, opt, data) in enumerate(runs):
            t = time.process_time()
            for s in range(1, 1 + steps):
                train_step(model, opt, data, s, cfg.train, forward)
            times[i].append((time.process_time() - t) / steps)
    return [statistics.median(t) for t in times]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lengths", type=int, nargs="+", default=[3, 4, 6, 12])
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
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
    mambapy, before, now = step_seconds("mamba-L4-d128", args.steps, args.rounds, ("parallel", "sequential", "covlib"))
    transformer, = step_seconds("L4-d128", args.steps, args.rounds)
    print(f"training step, two-hop shape ({args.rounds} alternating rounds of {args.steps} steps, medians): Mamba "
          f"with mambapy's parallel scan and Conv1d {mambapy:.3f} s, covlib's plain sequential scan and Conv1d "
          f"{before:.3f} s, covlib's compiled scan and shifted-product convolution {now:.3f} s ({before / now:.2f}x "
          f"the plain one, {mambapy / now:.2f}x mambapy's); transformer {transformer:.3f} s; Mamba / transformer "
          f"{mambapy / transformer:.1f}x with mambapy's, {before / transformer:.1f}x before, {now / transformer:.1f}x "
          f"now; {load()}")

if __name__ == "__main__":
    main()
