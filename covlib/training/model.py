"""Model families built from a config: TransformerLens native transformers (with a fused forward for fast
training) and Mamba models (covlib.training.mamba)."""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import ClassVar

import torch

from covlib.base.device import get_device
from covlib.base.errors import CovlibError
from covlib.training.mamba import MAMBA, MambaModelConfig, build_mamba, is_mamba, mamba_config_from_dict


@dataclass(frozen=True)
class ModelConfig:
    """Shape of the transformer; ``d_head`` and ``d_mlp`` default to d_model/n_heads and 4*d_model.

    The native TransformerLens model has no dropout, so the authors' dropout 0.1 cannot be
    reproduced; all presets train without dropout (which also makes runs bit-for-bit repeatable).
    """

    family: ClassVar[str] = "transformer"  # not a field: a transformer's config.json stays as it always was

    n_layers: int = 4
    d_model: int = 128
    n_heads: int = 4
    d_head: int | None = None
    d_mlp: int | None = None
    act_fn: str = "gelu_new"
    normalization_type: str = "LN"
    positional_embedding_type: str = "standard"
    init_mode: str = "gpt2"

    def __post_init__(self) -> None:
        for name in ("n_layers", "d_model", "n_heads"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise CovlibError(f"model {name}={getattr(self, name)!r} must be a positive integer")
        if self.d_head is None and self.d_model % self.n_heads:
            raise CovlibError(
                f"d_model={self.d_model} is not divisible by n_heads={self.n_heads}; change one or set d_head explicitly"
            )

    def describe(self) -> str:
        """The shape in words, for a reader: "a transformer of 4 layers, width 128, 4 heads"."""
        return f"a transformer of {self.n_layers} layers, width {self.d_model}, {self.n_heads} heads"

    @property
    def head_dim(self) -> int:
        return self.d_head if self.d_head is not None else self.d_model // self.n_heads

    @property
    def mlp_dim(self) -> int:
        return self.d_mlp if self.d_mlp is not None else 4 * self.d_model

    def n_params(self, d_vocab: int, n_ctx: int) -> int:
        """Parameter count without building the model (embeddings, blocks, final LN, unembedding)."""
        d, h = self.d_model, self.n_heads * self.head_dim
        block = 2 * 2 * d + (3 * (d * h + h) + h * d + d) + (d * self.mlp_dim + self.mlp_dim + self.mlp_dim * d + d)
        return d_vocab * d + n_ctx * d + self.n_layers * block + 2 * d + d * d_vocab


MODEL_PRESETS: dict[str, ModelConfig] = {
    # seconds per run: tests and notebook smoke runs
    "smoke": ModelConfig(n_layers=2, d_model=64, n_heads=4),
    # the book on a 2-core CPU: ~0.8M parameters, ~10 steps/s at batch 512
    "default": ModelConfig(n_layers=4, d_model=128, n_heads=4),
    # the authors' GPT-2 shape (their vocabulary was GPT-2's 50k tokens; ours is the task's)
    "paper": ModelConfig(n_layers=8, d_model=768, n_heads=12),
}


def bridge_config(cfg: ModelConfig, d_vocab: int, n_ctx: int, seed: int, device: torch.device | str):
    """The TransformerBridgeConfig for ``cfg`` on a given vocabulary size and context length."""
    from transformer_lens.config import TransformerBridgeConfig

    return TransformerBridgeConfig(
        n_layers=cfg.n_layers,
        d_model=cfg.d_model,
        n_heads=cfg.n_heads,
        d_head=cfg.head_dim,
        d_mlp=cfg.mlp_dim,
        n_ctx=n_ctx,
        d_vocab=d_vocab,
        act_fn=cfg.act_fn,
        normalization_type=cfg.normalization_type,
        positional_embedding_type=cfg.positional_embedding_type,
        init_mode=cfg.init_mode,
        seed=seed,
        device=str(device),
    )


# the model families a run can train: family name -> its config class (ModelConfig is the default)
MODEL_FAMILIES: dict[str, type] = {"transformer": ModelConfig, MAMBA: MambaModelConfig}


def family_config(family: str, preset: ModelConfig) -> ModelConfig | MambaModelConfig:
    """The model config of ``family`` at a preset's depth and width (the preset's other fields are transformer-only)."""
    if family not in MODEL_FAMILIES:
        raise CovlibError(f"unknown model family {family!r}; choose one of: {', '.join(MODEL_FAMILIES)}")
    if family == ModelConfig.family:
        return preset
    return MODEL_FAMILIES[family](n_layers=preset.n_layers, d_model=preset.d_model)


def build_model(cfg: ModelConfig | MambaModelConfig, d_vocab: int, n_ctx: int, seed: int = 42,
                device: torch.device | str | None = None):
    """A freshly initialised model (weights depend only on ``cfg``, sizes and ``seed``): a TransformerBridge for a
    ModelConfig, a MambaLM (mambapy blocks) for a MambaModelConfig; both map tokens to logits [batch, pos, vocab]."""
    device = torch.device(device) if device is not None else get_device()
    if isinstance(cfg, MambaModelConfig):
        return build_mamba(cfg, d_vocab, seed, device)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import transformer_lens.model_bridge.sources  # noqa: F401  (registers boot_native)
    from transformer_lens.model_bridge import TransformerBridge

    try:
        model = TransformerBridge.boot_native(bridge_config(cfg, d_vocab, n_ctx, seed, device), device=device)
    except (ValueError, NotImplementedError) as exc:
        raise CovlibError(f"cannot build the model from {cfg}: {exc}") from None
    return model


def model_family(model: torch.nn.Module) -> str:
    """The family of a built model: "mamba" for a MambaLM, else "transformer"."""
    return MAMBA if is_mamba(model) else ModelConfig.family


def model_config_from_dict(raw: dict) -> ModelConfig | MambaModelConfig:
    """The model config of config.json's "model" entry (a Mamba one says "family": "mamba"); unknown keys are an
    error, not ignored."""
    family = raw.get("family", ModelConfig.family)
    if family == MAMBA:
        return mamba_config_from_dict(raw)
    if family != ModelConfig.family:
        raise CovlibError(f"unknown model family {family!r} in a run's config; known: {', '.join(MODEL_FAMILIES)}")
    raw = {k: v for k, v in raw.items() if k != "family"}
    names = {f.name for f in dataclasses.fields(ModelConfig)}
    unknown = sorted(set(raw) - names)
    if unknown:
        raise CovlibError(f"unknown model config keys {unknown}; known keys: {sorted(names)}")
    return ModelConfig(**raw)


class FastForward:
    """The bridge's own parameters run through fused torch ops (one QKV matmul, SDPA attention),
    without the per-module hook wrappers: what training calls, ~5-10% faster than the bridge.

    It computes the NativeModel forward for the configs covlib builds (LayerNorm, standard
    positions, gelu/gelu_new/relu MLP); ``supports(model)`` says when it applies, and the tests
    check that its logits equal the bridge's. Analyses keep using the bridge and its hooks."""

    _ACTS = {"gelu_new": lambda x: torch.nn.functional.gelu(x, approximate="tanh"),
             "gelu": torch.nn.functional.gelu, "relu": torch.nn.functional.relu}

    def __init__(self, model) -> None:
        cfg = model.cfg
        self.n_layers, self.n_heads, self.d_head, self.eps = cfg.n_layers, cfg.n_heads, cfg.d_head, cfg.eps
        self.act = self._ACTS[cfg.act_fn]
        self.p = {n.replace("._original_component", ""): p for n, p in model.named_parameters()}

    @staticmethod
    def supports(model) -> bool:
        cfg = getattr(model, "cfg", None)  # a Mamba model has none: it trains through its own forward
        if cfg is None:
            return False
        return (str(cfg.normalization_type).upper() == "LN" and (cfg.positional_embedding_type or "standard") == "standard"
                and cfg.act_fn in FastForward._ACTS and not cfg.attn_only and not cfg.gated_mlp
                and not cfg.n_key_value_heads and cfg.attn_scale <= 0 and cfg.attention_dir == "causal"
                and cfg.output_logits_soft_cap <= 0 and cfg.attn_scores_soft_cap <= 0 and not cfg.final_rms)

    def __call__(self, tokens: torch.Tensor) -> torch.Tensor:
        """tokens [batch, pos] -> logits [batch, pos, vocab]."""
        return self._run(tokens, lambda t: t)

    def at(self, tokens: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor) -> torch.Tensor:
        """Logits [n, vocab] at the positions (rows[i], cols[i]) only: the last block's attention output
        projection, its MLP, the final norm and the unembedding run on those positions alone (every earlier
        layer, and the last block's attention, still see every position). What training calls: the loss
        reads only the labelled positions."""
        return self._run(tokens, lambda t: t[rows, cols])

    def tail(self, tokens: torch.Tensor, start: int) -> torch.Tensor:
        """Logits [batch, pos - start, vocab] of the positions from ``start`` on (what evaluation reads)."""
        return self._run(tokens, lambda t: t[:, start:])

    def _run(self, tokens: torch.Tensor, select) -> torch.Tensor:
        """The forward, with ``select`` (a view or gather of the [batch, pos, ...] axes) applied in the last
        block after its attention: positions left out cost no MLP or unembedding."""
        F, p = torch.nn.functional, self.p
        B, T = tokens.shape
        H, dh = self.n_heads, self.d_head
        x = F.embedding(tokens, p["tok_embed.weight"]) + p["pos.weight"][:T]
        d = x.shape[-1]
        for i in range(self.n_layers):
            pre = f"layers.{i}."
            h = F.layer_norm(x, (d,), p[pre + "ln1.weight"], p[pre + "ln1.bias"], self.eps)
            w = torch.cat([p[pre + f"attn.{k}.weight"] for k in "qkv"])
            b = torch.cat([p[pre + f"attn.{k}.bias"] for k in "qkv"])
            q, k, v = F.linear(h, w, b).view(B, T, 3, H, dh).permute(2, 0, 3, 1, 4)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(B, T, H * dh)
            if i == self.n_layers - 1:  # the last block: only the selected positions reach the logits
                x, a = select(x), select(a)
            x = x + F.linear(a, p[pre + "attn.o.weight"], p[pre + "attn.o.bias"])
            h = F.layer_norm(x, (d,), p[pre + "ln2.weight"], p[pre + "ln2.bias"], self.eps)
            h = self.act(F.linear(h, p[pre + "mlp.fc_in.weight"], p[pre + "mlp.fc_in.bias"]))
            x = x + F.linear(h, p[pre + "mlp.fc_out.weight"], p[pre + "mlp.fc_out.bias"])
        x = F.layer_norm(x, (d,), p["ln_out.weight"], p["ln_out.bias"], self.eps)
        return F.linear(x, p["head.weight"])
