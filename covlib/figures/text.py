"""How the book writes numbers in its prose: one place for missing values and formats."""
from __future__ import annotations

import math
from typing import Any


def fmt(value: Any, spec: str = ".2f", missing: str = "n/a") -> str:
    """``value`` formatted with ``spec``, or ``missing`` when it is None or NaN (a result not in the cache)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return missing
    return format(value, spec)
