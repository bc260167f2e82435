"""Named model shapes (e.g. L4-d128, mamba-L4-d128): what a search or `covlib train --shape` may name. Without
torch, so that the command line can list them at once (their parameter counts: covlib.training.config.model_params)."""
from __future__ import annotations

from covlib.base.errors import CovlibError

# model shapes for the parameter-scaling experiment: name -> overrides of the default preset
MODEL_SHAPES: dict[str, dict] = {
    "L2-d64": {"n_layers": 2, "d_model": 64, "n_heads": 4},
    "L4-d128": {"n_layers": 4, "d_model": 128, "n_heads": 4},  # the book's default model
    "L6-d128": {"n_layers": 6, "d_model": 128, "n_heads": 4},  # 11x L2-d64's parameters at 1.5x the default's cost
    "L4-d256": {"n_layers": 4, "d_model": 256, "n_heads": 8},
    "L6-d256": {"n_layers": 6, "d_model": 256, "n_heads": 8},
    "smoke": {"n_layers": 1, "d_model": 32, "n_heads": 2},
    # the default model with the exact GELU in place of GPT-2's tanh approximation (a cheaper step, another model:
    # its cells are its own, never bracketed with L4-d128's; benchmarks/gelu_nreq.sh compares their n_req)
    "L4-d128-gelu": {"n_layers": 4, "d_model": 128, "n_heads": 4, "act_fn": "gelu"},
    # Mamba models (covlib.training.mamba): the paper's architecture check used a 4-layer width-256 Mamba
    "mamba-L2-d64": {"family": "mamba", "n_layers": 2, "d_model": 64},
    "mamba-L4-d128": {"family": "mamba", "n_layers": 4, "d_model": 128},  # the book's default depth and width
    "mamba-L4-d256": {"family": "mamba", "n_layers": 4, "d_model": 256},  # the paper's Mamba
    "mamba-smoke": {"family": "mamba", "n_layers": 1, "d_model": 32},  # the tests' and smoke preset's miniature
}


def model_overrides(model: str) -> dict:
    """The default preset's overrides for a named model shape (MODEL_SHAPES)."""
    if model not in MODEL_SHAPES:
        raise CovlibError(f"unknown model shape {model!r}; choose one of: {', '.join(MODEL_SHAPES)}")
    return dict(MODEL_SHAPES[model])
