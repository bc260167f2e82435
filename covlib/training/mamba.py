"""The Mamba model family: mambapy's pure-PyTorch Mamba language model on the task vocabulary.

The paper reports that the required-data exponent barely moves from transformers to a 4-layer Mamba; this
module lets the book test that with the same loop, evaluation, early stop, give-up rule and resume as the
transformers. The blocks are mambapy's ``Mamba`` (pure PyTorch; the selective scan is covlib's sequential scan on
the short sequences of the book, mambapy's parallel scan on longer ones); MambaLM adds the
embedding, final RMSNorm and unembedding of the task vocabulary, as mambapy's own ``LM`` does (that class is
not used because importing it pulls in mamba2, which needs the CUDA-only mamba_ssm package). Tokens in,
logits [batch, pos, vocab] out. It is not a TransformerBridge, so the TransformerLens analyses do not apply.
"""
from __future__ import annotations

import dataclasses
import functools
import math
import os
import warnings
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from mambapy.mamba import Mamba, MambaConfig, RMSNorm
from torch import nn

from covlib.base.errors import CovlibError

MAMBA = "mamba"  # the family name config.json records (a transformer's model entry carries no family)


@dataclass(frozen=True)
class MambaModelConfig:
    """Shape of a Mamba model: depth, width, SSM state size, block expansion and causal-convolution width.

    ``dt_rank`` is mambapy's "auto" (ceil(d_model / 16)); the selective scan is plain PyTorch (sequential_scan, or
    mambapy's parallel scan past SEQUENTIAL_UP_TO tokens), which runs on CPU and GPU alike (the official CUDA
    kernels are not used, so runs are repeatable everywhere)."""

    n_layers: int = 4
    d_model: int = 128
    d_state: int = 16
    expand: int = 2
    d_conv: int = 4
    family: str = field(default=MAMBA, init=False)  # written to config.json: how a run folder names its model

    def __post_init__(self) -> None:
        for name in ("n_layers", "d_model", "d_state", "expand", "d_conv"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise CovlibError(f"mamba model {name}={value!r} must be a positive integer")

    def describe(self) -> str:
        """The shape in words, for a reader: "a Mamba of 4 layers, width 128, state size 16"."""
        return f"a Mamba of {self.n_layers} layers, width {self.d_model}, state size {self.d_state}"

    @property
    def dt_rank(self) -> int:
        return math.ceil(self.d_model / 16)

    def mambapy_config(self) -> MambaConfig:
        return MambaConfig(d_model=self.d_model, n_layers=self.n_layers, d_state=self.d_state,
                           expand_factor=self.expand, d_conv=self.d_conv, pscan=True, use_cuda=False)

    def n_params(self, d_vocab: int, n_ctx: int) -> int:
        """Parameter count without building the model; ``n_ctx`` is unused (Mamba has no position embedding)
        and kept so that both families answer the same call."""
        d, inner, n, r = self.d_model, self.expand * self.d_model, self.d_state, self.dt_rank
        block = (d  # RMSNorm
                 + d * 2 * inner  # in_proj (no bias)
                 + inner * self.d_conv + inner  # depthwise conv1d and its bias
                 + inner * (r + 2 * n)  # x_proj -> (delta, B, C)
                 + r * inner + inner  # dt_proj
                 + inner * n + inner  # A_log and D
                 + inner * d)  # out_proj (no bias)
        return d_vocab * d + self.n_layers * block + d + d * d_vocab


def mamba_config_from_dict(raw: dict) -> MambaModelConfig:
    """A MambaModelConfig from config.json's "model" entry (with its "family": "mamba"); unknown keys are refused."""
    names = {f.name for f in dataclasses.fields(MambaModelConfig) if f.init}
    unknown = sorted(set(raw) - names - {"family"})
    if unknown:
        raise CovlibError(f"unknown mamba model config keys {unknown}; known keys: {sorted(names)}")
    return MambaModelConfig(**{k: v for k, v in raw.items() if k != "family"})


class MambaLM(nn.Module):
    """Embedding -> mambapy Mamba blocks -> RMSNorm -> unembedding: the forward the training loop calls."""

    def __init__(self, cfg: MambaModelConfig, d_vocab: int) -> None:
        super().__init__()
        self.config = cfg.mambapy_config()
        self.embedding = nn.Embedding(d_vocab, cfg.d_model)  # no padding index: every token is a task token
        self.mamba = Mamba(self.config)
        self.norm_f = RMSNorm(cfg.d_model, self.config.rms_norm_eps)
        self.lm_head = nn.Linear(cfg.d_model, d_vocab, bias=False)
        self._init_like_mambapy()
        for layer in self.mamba.layers:  # the same functions as mambapy's, computed faster on short sequences
            layer.mixer.selective_scan = _scan_by_length(layer.mixer, layer.mixer.selective_scan)
            conv = layer.mixer.conv1d
            conv.forward = functools.partial(causal_depthwise_conv, conv)

    def _init_like_mambapy(self) -> None:
        """mambapy LM's (non-muP) initialisation: every Linear and the embedding N(0, base_std), Linear biases
        zero, each block's out_proj scaled down by sqrt(2 * n_layers); A_log, D and conv1d keep Mamba's own."""
        std = self.config.base_std
        for module in self.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, mean=0.0, std=std)
            if isinstance(module, nn.Linear) and module.bias is not None:
                nn.init.zeros_(module.bias)
        for name, param in self.named_parameters():
            if name.endswith("mixer.out_proj.weight"):
                nn.init.normal_(param, mean=0.0, std=std / math.sqrt(2 * self.config.n_layers))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """tokens [batch, pos] -> logits [batch, pos, vocab] (causal: position i sees tokens up to i)."""
        return self.lm_head(self.norm_f(self.mamba(self.embedding(tokens))))


# sequences up to this many tokens take the sequential scan (sequential_scan), longer ones mambapy's parallel
# scan. Measured with benchmarks/bench_mamba_scan.py (one thread, default shape, batch 512, forward and
# backward), the sequential scan is faster at every length tried: 2.7x at 3 tokens, 4.2x at 12, 2.8x at 24 and
# 2.0x at 32, its lead shrinking; the book's sequences are at most a dozen tokens. Past 32 nothing was measured,
# so the parallel scan keeps what it did before.
SEQUENTIAL_UP_TO = 32


def sequential_scan(x: torch.Tensor, delta: torch.Tensor, A: torch.Tensor, B: torch.Tensor, C: torch.Tensor,
                    D: torch.Tensor) -> torch.Tensor:
    """The selective scan y_t = C_t . h_t + D x_t with h_t = exp(delta_t A) h_{t-1} + delta_t B_t x_t, one position
    at a time: each step's [batch, inner, state] terms are made and used at once, and only y is stacked (mambapy's
    scans build deltaA, BX and every h_t as [batch, pos, inner, state] tensors first). Same maths as mambapy's
    selective_scan; shapes as there: x, delta [b, l, inner], A [inner, state], B, C [b, l, state], D [inner]."""
    h, ys = None, []
    for t in range(x.shape[1]):
        d = delta[:, t].unsqueeze(-1)  # [b, inner, 1]
        bx = d * B[:, t].unsqueeze(1) * x[:, t].unsqueeze(-1)  # [b, inner, state]
        h = bx if h is None else torch.exp(d * A) * h + bx  # h_0 = 0: the first step is its input alone
        ys.append(torch.bmm(h, C[:, t].unsqueeze(-1)).squeeze(-1))
    return torch.stack(ys, dim=1) + D * x


# torch.compile unrolls the scan's loop over positions, so compiling takes longer the longer the sequence: measured
# here (one thread, a cold cache), 15-25 s for 3-8 tokens, but ~60 s at 12 and ~170 s at 32. The book's sequences
# that a Mamba trains on are 3-6 tokens; past COMPILED_UP_TO the scan runs uncompiled
COMPILED_UP_TO = 8


class _CompiledScan:
    """sequential_scan through torch.compile, which fuses each position's elementwise steps (and their backward)
    into one pass over memory: a Mamba training step takes about half the time (benchmarks/bench_mamba_scan.py).
    The same function to float rounding (tested). Where compiling fails (no C++ compiler, say), or with
    COVLIB_COMPILE=0, the plain function runs, after one warning."""

    def __init__(self) -> None:
        self.compiled = torch.compile(sequential_scan) if os.environ.get("COVLIB_COMPILE", "1") != "0" else None

    def __call__(self, *args):
        if self.compiled is not None:
            try:
                return self.compiled(*args)
            except Exception as exc:  # noqa: BLE001 - any compiler failure: the plain function computes the same
                warnings.warn(f"torch.compile could not compile the Mamba scan ({type(exc).__name__}: "
                              f"{str(exc).splitlines()[0] if str(exc) else ''}); it runs uncompiled, about half "
                              "as fast", RuntimeWarning, stacklevel=2)
                self.compiled = None
        return sequential_scan(*args)


@functools.cache
def _compiled_scan() -> _CompiledScan:
    """One per process: its compiled graphs serve every model."""
    return _CompiledScan()


def fast_sequential_scan(*args) -> torch.Tensor:
    """sequential_scan, compiled once per process when torch.compile works here (see _CompiledScan)."""
    return _compiled_scan()(*args)


def _scan_by_length(block, parallel):
    """A MambaBlock's selective_scan: the compiled sequential scan up to COMPILED_UP_TO tokens, the plain one up
    to SEQUENTIAL_UP_TO, else ``parallel``."""

    def scan(x, delta, A, B, C, D):
        if x.shape[1] <= COMPILED_UP_TO:
            return fast_sequential_scan(x, delta, A, B, C, D)
        if x.shape[1] <= SEQUENTIAL_UP_TO:
            return sequential_scan(x, delta, A, B, C, D)
        return parallel(x, delta, A, B, C, D)

    return scan


def causal_depthwise_conv(conv: nn.Conv1d, x: torch.Tensor) -> torch.Tensor:
    """mambapy's short causal convolution over time, as a sum of shifted products: the same function as
    ``conv(x)[..., :L]`` (a depthwise Conv1d padded by kernel - 1 on both sides, cut to the first L outputs), to
    float rounding. x [batch, channels, L] -> [batch, channels, L]. PyTorch's depthwise Conv1d backward took 18%
    of a Mamba training step here for a 4-tap filter over 3 tokens; these few multiply-adds take almost nothing."""
    weight, length, taps = conv.weight[:, 0, :], x.shape[-1], conv.weight.shape[-1]
    y = conv.bias[:, None] + weight[:, taps - 1, None] * x  # tap taps-1 reads the current position
    for shift in range(1, min(taps, length)):  # tap taps-1-shift reads the position `shift` back
        y = y + F.pad(weight[:, taps - 1 - shift, None] * x[..., : length - shift], (shift, 0))
    return y


def build_mamba(cfg: MambaModelConfig, d_vocab: int, seed: int, device: torch.device) -> MambaLM:
    """A freshly initialised MambaLM on ``d_vocab`` task tokens (weights depend only on cfg, d_vocab and seed)."""
    with torch.random.fork_rng(devices=[]):  # seeded init that leaves the caller's generator as it was
        torch.manual_seed(seed)
        model = MambaLM(cfg, d_vocab)
    return model.to(device)


def is_mamba(model: torch.nn.Module) -> bool:
    """Whether ``model`` is a Mamba language model built by build_mamba."""
    return isinstance(model, MambaLM)
