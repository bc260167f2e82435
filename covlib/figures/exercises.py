"""What a chapter's exercise self-check prints: "correct", "not quite" (with the truth), or what to run first."""
from __future__ import annotations

import math
from typing import Any


def check_share(answer: Any, truth: float, what: str, run: str, missing: str | None = None,
                tol: float = 0.01) -> str:
    """The message of a check whose answer is a share in [0, 1]: "correct ..." within ``tol`` of ``truth``,
    "not quite ..." otherwise (with a hint when it looks like a percentage), what to ``run`` when the answer
    is still None, and ``missing`` when the truth could not be computed (NaN)."""
    if answer is None:
        return f"no answer yet: {run}."
    try:
        value = float(answer)
    except (TypeError, ValueError):
        return f"not quite: the answer is a share between 0 and 1, a number, not {answer!r}."
    if math.isnan(truth):
        return f"cannot check: {missing or what + ' could not be computed here'}."
    if abs(value - truth) < tol:
        return f"correct: {what} is {truth:.3f}."
    percent = (" (write it as a share between 0 and 1, not a percentage)" if value > 1 and abs(value / 100 - truth) < tol
               else "")
    return f"not quite: {what} is {truth:.3f}, not {value:.3f}{percent}."
