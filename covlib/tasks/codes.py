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
    """Codes -> input tuples (n, m) int32; the inverse of ``encode``.

    Digits are peeled off the least significant end, each by one division by the scalar N: numpy divides by a
    scalar far faster than by a broadcast row of place values, and in 32 bits faster still when every code fits
    (2.75x the broadcast form over a five-hop space, side by side: benchmarks/bench_data.py)."""
    fits_32 = num_tokens**n_inputs <= np.iinfo(np.int32).max
    rest = np.asarray(codes, dtype=np.int32 if fits_32 else np.int64)
    digits = np.empty((len(rest), n_inputs), dtype=np.int32)
    for j in range(n_inputs - 1, -1, -1):
        quotient = rest // num_tokens
        digits[:, j] = rest - quotient * num_tokens
        rest = quotient
    return digits
