"""Chapter 4 (how much data): the required data of two-hop and longer chains, its exponent, model sizes
and architectures."""
