"""Figures reported by the paper (arXiv 2505.20278) and quoted in SPEC.md, kept for comparison only.

The book computes its own numbers; these are the published ones it sets them beside.
"""
from __future__ import annotations

# twohop, N=30, n_train=4000, seen_ratio 0.7: percent of type_0 test items k-covered, k = 1..8 (SPEC §2)
TYPE0_COVERAGE_TWOHOP_30_4000 = {1: 100, 2: 99, 3: 91, 4: 58, 5: 21, 6: 2, 7: 0.2, 8: 0}

# smallest n_train whose type_0 accuracy reaches 0.99, authors' data (SPEC §5.2)
REQUIRED_DATA_TWOHOP = {30: 4_000, 50: 15_000, 70: 30_000, 100: 80_000, 150: 250_000, 200: 500_000}
REQUIRED_DATA_THREEHOP = {30: 30_000, 50: 150_000, 70: 382_000, 100: 1_100_000, 150: 3_800_000, 200: 8_900_000}
