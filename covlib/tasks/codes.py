"""Input tuples as base-N numbers (x1 most significant), the codes every coverage and generation step indexes by.

A module of its own so that `covlib coverage` can encode inputs without importing generation.
"""
from __future__ import annotations

import numpy as np


def digit_weights(num_tokens: int, n_digits: int) -> np.ndarray:
    """Place values of a base-N code with ``n_digits`` digits, most significant first."""
    return num_tokens ** np.arange(n_digits - 1, -1, -1, dtype=np.int64)


def encode(inputs: np.ndarray, num_tokens: int) -> np.ndarray:
    """Input tuples (n, m) -> codes (base-N numbers, x1 most significant); m may be 0."""
    inputs = np.asarray(inputs, dtype=np.int64)
    return inputs @ digit_weights(num_tokens, inputs.shape[1])


def decode(codes: np.ndarray, num_tokens: int, n_inputs: int) -> np.ndarray:
    """Codes -> input tuples (n, m) int32; the inverse of ``encode``."""
    codes = np.asarray(codes, dtype=np.int64)
    return ((codes[:, None] // digit_weights(num_tokens, n_inputs)[None, :]) % num_tokens).astype(np.int32)
