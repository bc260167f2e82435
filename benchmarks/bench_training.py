"""Training throughput of the default preset vs a Hugging Face GPT-2 of the same shape, on this CPU.

Usage: .venv/bin/python benchmarks/bench_training.py [--rounds 5] [--steps 30] [--preset default]

Both models train the twohop N=30 shape (prompt 3 + answer 1: 3 tokens fed, loss on the last)
with the same AdamW (fused, decay on matrices only), clipping and batch. Rounds alternate
between the two models so that load from other processes hits both alike; the table gives the
median and best round. The machine's float32 matmul throughput (torch.mm of large square
matrices) is measured in the same run, and each model's achieved GFLOP/s is shown as a fraction
of it, with training FLOPs per step ~ 6 * (matmul parameters) * tokens + attention
(12 * layers * seq * d_model per token for QK^T and AV, forward and backward).
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from covlib.training.batches import IGNORE, Batches
from covlib.training.config import make_config
from covlib.training.loop import make_optimizer, train_step
from covlib.training.model import MODEL_PRESETS, FastForward, build_model

N, PROMPT, TARGET = 30, 3, 1
D_VOCAB, N_CTX, SEQ = N + 1, PROMPT + TARGET, PROMPT + TARGET - 1


def matmul_gflops(size: int = 2048, reps: int = 10) -> float:
    """Best-of-3 float32 GFLOP/s of torch.mm on size x size matrices (the machine's practical peak)."""
    a, b = torch.randn(size, size), torch.randn(size, size)
    a @ b
    best = 0.0
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(reps):
            a @ b
        best = max(best, 2 * size**3 * reps / (time.perf_counter() - t) / 1e9)
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


def flops_per_step(cfg, n_matmul_params: int, batch: int) -> float:
    tokens = batch * SEQ
    return 6 * n_matmul_params * tokens + 12 * cfg.model.n_layers * SEQ * cfg.model.d_model * tokens


def matmul_params(model: torch.nn.Module) -> int:
    """Parameters that take part in matmuls: everything but biases, norms and embedding lookups."""
    total = 0
    for name, p in model.named_parameters():
        if p.dim() >= 2 and not any(k in name for k in ("embed", "wte", "wpe")):
            total += p.numel()
    return total


def time_steps(model, opt, batches, cfg, start: int, steps: int, forward=None) -> float:
    t = time.perf_counter()
    for s in range(start, start + steps):
        train_step(model, opt, batches, s, cfg.train, forward)
    return steps / (time.perf_counter() - t)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="default")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=30, help="training steps per round")
    args = ap.parse_args()
    cfg = make_config(args.preset)
    batch = cfg.train.batch_size
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, load average {os.getloadavg()[0]:.2f}")
    peak = matmul_gflops()
    print(f"float32 matmul (torch.mm 2048^2): {peak:.1f} GFLOP/s")

    torch.manual_seed(0)
    ours = build_model(MODEL_PRESETS[args.preset], D_VOCAB, N_CTX, seed=0, device="cpu")
    # "covlib train" trains through FastForward; the plain bridge (hook wrappers) is shown for reference
    models = {"covlib train (FastForward)": ours,
              "TransformerBridge forward": build_model(MODEL_PRESETS[args.preset], D_VOCAB, N_CTX, seed=0, device="cpu"),
              "HF GPT2LMHeadModel": GPT2Logits(cfg)}
    forwards = {"covlib train (FastForward)": FastForward(ours)}
    data = random_batches()
    opts = {k: make_optimizer(m.train(), cfg.train) for k, m in models.items()}
    speeds: dict[str, list[float]] = {k: [] for k in models}
    for name, m in models.items():  # warm-up
        time_steps(m, opts[name], data, cfg, 0, 3, forwards.get(name))
    for r in range(args.rounds):
        for name, m in models.items():
            speeds[name].append(time_steps(m, opts[name], data, cfg, 3 + r * args.steps, args.steps, forwards.get(name)))
    print(f"\npreset {args.preset}: batch {batch}, {SEQ} tokens fed per item, d_vocab {D_VOCAB}; "
          f"{args.rounds} alternating rounds of {args.steps} steps")
    print(f"{'model':<28}{'params':>9}{'steps/s med':>13}{'best':>7}{'examples/s':>12}{'GFLOP/s':>9}{'of matmul':>11}")
    for name, m in models.items():
        med, best = statistics.median(speeds[name]), max(speeds[name])
        gflops = flops_per_step(cfg, matmul_params(m), batch) * med / 1e9
        n = sum(p.numel() for p in m.parameters())
        print(f"{name:<28}{n:>9,}{med:>13.2f}{best:>7.2f}{med * batch:>12,.0f}{gflops:>9.1f}{gflops / peak:>10.0%}")
    ours, bridge, theirs = (statistics.median(v) for v in speeds.values())
    print(f"\ncovlib train / GPT-2 speed: {ours / theirs:.2f}x, plain bridge / GPT-2: {bridge / theirs:.2f}x "
          f"(median rounds); load average now {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
