"""A training step of the default preset on this CPU: today's step beside the pruned one, side by side in one run.

Usage: .venv/bin/python benchmarks/bench_training.py [--rounds 5] [--steps 10] [--preset default] [--threads 1]
       [--references]

Both steps train the twohop N=30 shape (prompt 3 + answer 1: 3 tokens fed, loss on the last) through
`covlib train`'s own train_step, with the same AdamW, clipping and batch:
- "full forward": FastForward computes the logits of every position and the loss picks the labelled ones
  (the step before the pruning);
- "pruned last block": FastForward.at runs the last block's attention output projection, MLP, final norm
  and unembedding at the labelled positions only (what `covlib train` does now; logits bit-identical).
Rounds alternate between the variants so that load from other processes hits them alike; the table gives
the median and best round. The float32 matmul peak (torch.mm of 2048^2 matrices) is measured in the same run
on the same number of threads (one by default: the queue's workers train on one), and each step's achieved
GFLOP/s (of the matmuls it runs: 6 * matmul parameters * positions they run at, plus attention's QK^T and AV)
is shown as a share of it. An evaluation (4,000 test items, as a probe's) is timed through the bridge and
through FastForward.tail, and shown as a share of the 50 training steps it follows.
--references adds the plain TransformerBridge and a Hugging Face GPT-2 of the same shape.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from machine import describe, load  # noqa: E402  (benchmarks/machine.py)

from covlib.training.batches import IGNORE, Batches  # noqa: E402
from covlib.training.config import make_config  # noqa: E402
from covlib.training.evaluation import EvalSet, evaluate  # noqa: E402
from covlib.training.loop import make_optimizer, train_step  # noqa: E402
from covlib.training.model import MODEL_PRESETS, FastForward, build_model  # noqa: E402

N, PROMPT, TARGET = 30, 3, 1
D_VOCAB, N_CTX, SEQ = N + 1, PROMPT + TARGET, PROMPT + TARGET - 1
EVAL_ITEMS, EVAL_EVERY = 4000, 50


def matmul_gflops(size: int = 2048, reps: int = 10) -> float:
    """Best-of-3 float32 GFLOP/s of torch.mm on size x size matrices (the machine's practical peak)."""
    a, b = torch.randn(size, size), torch.randn(size, size)
    a @ b
    best = 0.0
    for _ in range(3):
        t = time.process_time()
        for _ in range(reps):
            a @ b
        best = max(best, 2 * size**3 * reps / (time.process_time() - t) / 1e9)
    return best


def random_batches(n: int = 10_000, seed: int = 0) -> Batches:
    """Twohop-shaped training data: 3 random tokens fed, the label at the last position."""
    g = np.random.default_rng(seed)
    tokens = torch.from_numpy(g.integers(0, N, size=(n, SEQ)))
    labels = torch.full((n, SEQ), IGNORE, dtype=torch.long)
    labels[:, -1] = torch.from_numpy(g.integers(0, N, size=n))
    return Batches(tokens, labels, seed)


class GPT2Logits(torch.nn.Module):
    """GPT2LMHeadModel (built from GPT2Config, no download) returning logits like our models do."""

    def __init__(self, cfg) -> None:
        super().__init__()
        from transformers import GPT2Config, GPT2LMHeadModel

        m = cfg.model
        self.inner = GPT2LMHeadModel(GPT2Config(
            vocab_size=D_VOCAB, n_positions=N_CTX, n_embd=m.d_model, n_layer=m.n_layers, n_head=m.n_heads,
            n_inner=m.mlp_dim, activation_function="gelu_new", resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
            tie_word_embeddings=False, use_cache=False))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.inner(input_ids=tokens, use_cache=False).logits


def step_flops(cfg, batch: int, labelled: int, pruned: bool) -> float:
    """Training FLOPs of one step (forward + backward = 3x forward) of the matmuls it runs: in a pruned step the
    last block's output projection, MLP and the unembedding run at the ``labelled`` positions only."""
    m = cfg.model
    d, h, f = m.d_model, m.n_heads * m.head_dim, m.mlp_dim
    tokens = batch * SEQ
    qkv, rest = 3 * d * h, h * d + 2 * d * f  # per block: QKV; output projection and MLP
    head = d * D_VOCAB
    late = labelled if pruned else tokens  # positions the last block's tail and the head run at
    per_forward = (2 * tokens * (m.n_layers * qkv + (m.n_layers - 1) * rest) + 2 * late * (rest + head)
                   + 4 * m.n_layers * SEQ * h * tokens)  # QK^T and AV (a full square; causal SDPA does half)
    return 3 * per_forward


def time_steps(model, opt, batches, cfg, start: int, steps: int, forward=None) -> float:
    """CPU seconds per step (this process's CPU time: on a shared machine, wall time measures the others too)."""
    t = time.process_time()
    for s in range(start, start + steps):
        train_step(model, opt, batches, s, cfg.train, forward)
    return (time.process_time() - t) / steps


def eval_seconds(model, forward, es: EvalSet, reps: int = 3) -> float:
    """Best of ``reps`` evaluations of the test set through ``forward`` (None: the model's own forward)."""
    best = float("inf")
    for _ in range(reps):
        t = time.process_time()
        evaluate(model, es, 2048, forward)
        best = min(best, time.process_time() - t)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="default")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=10, help="training steps per round")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (the queue's workers use 1)")
    ap.add_argument("--references", action="store_true", help="also the plain bridge and a Hugging Face GPT-2")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    cfg = make_config(args.preset)
    batch = cfg.train.batch_size
    print(f"{describe()}\ntorch {torch.__version__}, {torch.get_num_threads()} thread(s), {load()}")
    peak = matmul_gflops()
    print(f"float32 matmul peak on {args.threads} thread(s) (torch.mm 2048^2): {peak:.1f} GFLOP/s")

    ours = build_model(MODEL_PRESETS[args.preset], D_VOCAB, N_CTX, seed=0, device="cpu")
    fast = FastForward(ours)
    twin = build_model(MODEL_PRESETS[args.preset], D_VOCAB, N_CTX, seed=0, device="cpu")
    twin_fast = FastForward(twin)
    # a plain function (not a FastForward) makes train_step compute every position and pick the labelled ones
    variants = {"full forward (before)": (twin, lambda t: twin_fast(t), False),
                "pruned last block (now)": (ours, fast, True)}
    if args.references:
        bridge = build_model(MODEL_PRESETS[args.preset], D_VOCAB, N_CTX, seed=0, device="cpu")
        variants |= {"TransformerBridge forward": (bridge, None, False), "HF GPT2LMHeadModel": (GPT2Logits(cfg), None, False)}
    data = random_batches()
    opts = {k: make_optimizer(m.train(), cfg.train) for k, (m, _, _) in variants.items()}
    times: dict[str, list[float]] = {k: [] for k in variants}
    for name, (m, f, _) in variants.items():  # warm-up
        time_steps(m, opts[name], data, cfg, 0, 3, f)
    for r in range(args.rounds):
        for name, (m, f, _) in variants.items():
            times[name].append(time_steps(m, opts[name], data, cfg, 3 + r * args.steps, args.steps, f))

    print(f"\npreset {args.preset}: batch {batch}, {SEQ} tokens fed per item, loss at 1, d_vocab {D_VOCAB}; "
          f"{args.rounds} alternating rounds of {args.steps} steps; times are this process's CPU time")
    print(f"{'step':<28}{'ms/step med':>12}{'best':>7}{'GFLOP/step':>11}{'GFLOP/s':>9}{'of peak':>9}")
    for name, (_, _, pruned) in variants.items():
        med, best = statistics.median(times[name]), min(times[name])
        flops = step_flops(cfg, batch, batch, pruned)
        print(f"{name:<28}{1e3 * med:>12.1f}{1e3 * best:>7.1f}{flops / 1e9:>11.2f}{flops / med / 1e9:>9.1f}"
              f"{flops / med / 1e9 / peak:>9.0%}")
    before, now = (statistics.median(times[k]) for k in list(variants)[:2])
    print(f"pruned step: {before / now:.2f}x the speed of the full step (median rounds)")

    g = np.random.default_rng(1)
    es = EvalSet(torch.from_numpy(g.integers(0, N, size=(EVAL_ITEMS, PROMPT))),
                 torch.from_numpy(g.integers(0, N, size=(EVAL_ITEMS, TARGET))),
                 {f"type_{i}": np.arange(i, EVAL_ITEMS, 4) for i in range(4)})
    slow, quick = eval_seconds(ours, None, es), eval_seconds(ours, fast, es)
    print(f"\nevaluation of {EVAL_ITEMS:,} items: bridge {slow * 1e3:.0f} ms, FastForward.tail {quick * 1e3:.0f} ms "
          f"({slow / quick:.2f}x); share of a probe's time (one evaluation per {EVAL_EVERY} steps): "
          f"{slow / (EVAL_EVERY * before + slow):.1%} before, {quick / (EVAL_EVERY * now + quick):.1%} now")
    whole_before, whole_now = EVAL_EVERY * before + slow, EVAL_EVERY * now + quick
    print(f"a probe's {EVAL_EVERY} steps and their evaluation: {whole_before:.2f} CPU-s before, {whole_now:.2f} now: "
          f"{whole_before / whole_now:.2f}x; {load()}")


if __name__ == "__main__":
    main()
