"""How to get the most probes per CPU-hour (chapter 4's searches are many small runs).

Trains RUNS copies of the default model (4 layers, width 128) for STEPS steps each on twohop
N=30, n_train=10,000, three ways, and prints examples per second of each against one run at a
time on all cores:

1. one run at a time, torch using every core (what `covlib train` does);
2. two worker processes of one thread each, each taking the next run (what `covlib scaling
   search --jobs 2` does; a worker's run is bit-for-bit the run of a one-thread process);
3. a batched ensemble: the RUNS models' parameters stacked and trained together in one process,
   the forward pass vmapped over the ensemble (torch.func), one fused AdamW over the stacks.

Usage: python benchmarks/bench_scaling_parallel.py [RUNS] [STEPS]
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

import torch

from covlib.base.workers import one_thread_worker

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 4
STEPS = int(sys.argv[2]) if len(sys.argv) > 2 else 150
BATCH = 512


def dataset_dir() -> str:
    from covlib.tasks.datasets import DatasetConfig, ensure_dataset

    return str(ensure_dataset(DatasetConfig("twohop", 30, 10_000, seed=0, test_size_per_type=200),
                              os.path.join(tempfile.gettempdir(), "covlib-bench")))


def one_run(args: tuple[str, int, str]) -> float:
    """Train one model for STEPS steps (no evaluation until the end); returns seconds."""
    from covlib.training.loop import train

    ds, seed, out = args
    t0 = time.perf_counter()
    train(ds, out, overrides={"steps": STEPS, "seed": seed, "eval_every": STEPS, "checkpoint_every": 0},
          progress=False)
    return time.perf_counter() - t0


def ensemble(ds: str) -> float:
    """RUNS models trained as one stacked ensemble; returns seconds for STEPS steps."""
    import torch.nn.functional as F
    from torch.func import stack_module_state, vmap

    from covlib.tasks.folders import load_dataset
    from covlib.training.batches import IGNORE, sequence_length, training_batches
    from covlib.training.model import MODEL_PRESETS, FastForward, build_model

    data = load_dataset(ds)
    n_ctx = sequence_length(data)
    models = [build_model(MODEL_PRESETS["default"], len(data.vocab), n_ctx, seed=s, device="cpu") for s in range(RUNS)]
    params, _ = stack_module_state(models)
    params = {k.replace("._original_component", ""): v.detach().requires_grad_() for k, v in params.items()}
    forward = FastForward(models[0])  # the training forward, run on each member's parameters
    batches = [training_batches(data, s, torch.device("cpu")) for s in range(RUNS)]
    opt = torch.optim.AdamW(list(params.values()), lr=1e-3, betas=(0.9, 0.98), weight_decay=0.1, fused=True)

    def loss_of(p, tokens, labels):
        forward.p = p
        logits = forward(tokens)
        # mean over labelled positions (ignore_index keeps shapes static, which vmap needs)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=IGNORE)

    batched = vmap(loss_of)
    t0 = time.perf_counter()
    for step in range(STEPS):
        idx = [torch.from_numpy(bt.indices(step, BATCH)) for bt in batches]
        tokens = torch.stack([bt.tokens[i] for bt, i in zip(batches, idx)])
        labels = torch.stack([bt.labels[i] for bt, i in zip(batches, idx)])
        opt.zero_grad(set_to_none=True)
        batched(params, tokens, labels).sum().backward()
        opt.step()
    return time.perf_counter() - t0


def main() -> None:
    ds = dataset_dir()
    examples = RUNS * STEPS * BATCH
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        for s in range(RUNS):
            one_run((ds, s, os.path.join(tmp, f"seq{s}")))
        sequential = time.perf_counter() - t0
        t0 = time.perf_counter()
        with ProcessPoolExecutor(2, mp_context=get_context("spawn"), initializer=one_thread_worker) as pool:
            list(pool.map(one_run, [(ds, s, os.path.join(tmp, f"par{s}")) for s in range(RUNS)]))
        two_procs = time.perf_counter() - t0
    try:
        stacked = ensemble(ds)
    except Exception as exc:  # noqa: BLE001  (a benchmark reports what failed and goes on)
        print(f"batched ensemble failed: {type(exc).__name__}: {exc}")
        stacked = float("nan")
    print(f"{RUNS} runs x {STEPS} steps x batch {BATCH} of the default model (twohop N=30), torch threads "
          f"{torch.get_num_threads()}:")
    for name, sec in (("one at a time, all cores", sequential), ("two one-thread processes", two_procs),
                      ("batched ensemble (vmap)", stacked)):
        print(f"  {name:<28} {sec:7.1f} s  {examples / sec:8.0f} examples/s  {sequential / sec:5.2f}x one at a time")


if __name__ == "__main__":
    main()
