"""How the book writes numbers in its prose: one place for missing values, formats and degenerate cases.

A generated sentence must read for every value it can be given: a share that is negative or above the whole, a
percentage that rounds to zero, a p-value below what the format can show, a gap too small to print. Each helper
returns a phrase that stays true in those cases (tests/test_text.py holds one test per case)."""
from __future__ import annotations

import math
import re
from typing import Any

SMALLEST_P = 1e-300  # below this a float p-value is 0 or denormal: the text says "p < 1e-300", never "p = 0"


def fmt(value: Any, spec: str = ".2f", missing: str = "n/a") -> str:
    """``value`` formatted with ``spec``, or ``missing`` when it is None or NaN (a result not in the cache)."""
    if is_missing(value):
        return missing
    return format(value, spec)


def is_missing(value: Any) -> bool:
    """None or NaN: a number the cache does not hold."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def rounds_to_zero(value: float, spec: str = ".0%") -> bool:
    """Whether ``value`` prints as zero in ``spec`` ("0%", "+0.0", "-0.0"): a number a sentence must not state as
    if it were a finding."""
    return not re.search(r"[1-9]", format(value, spec).split("e")[0])


def p_value(p: float, digits: int = 2, decimals: int | None = None) -> str:
    """"p = 0.042" with ``digits`` significant digits, or with ``decimals`` fixed decimals ("p = 0.950"); a p-value
    the format would print as zero is written as a bound: "p < 0.001" (fixed decimals) or "p < 1e-300" (a p-value
    that underflowed, e.g. a binomial tail far out)."""
    if is_missing(p):
        return "p not computed"
    if p < SMALLEST_P:
        return f"p < {SMALLEST_P:.0e}".replace("e-0", "e-")
    if decimals is not None:
        floor = 10.0 ** -decimals
        return f"p < {floor:.{decimals}f}" if p < floor else f"p = {p:.{decimals}f}"
    return f"p = {p:.{digits}g}"


def share_of(share: float, whole: str, spec: str = ".0%") -> str:
    """"40% of CoT's data saving" for a share in (0, 1]; a share at or below zero is "none of ..." with the size of
    the move the other way, a share above one "all of ... and more", a missing one "an unknown share of ..."."""
    if is_missing(share):
        return f"an unknown share of {whole}"
    if share < 0 and not rounds_to_zero(share, spec):
        return f"none of {whole} (it moves {format(-share, spec)} of that distance the other way)"
    if rounds_to_zero(share, spec):
        return f"none of {whole}"
    if share > 1 and format(share, spec) != format(1.0, spec):
        return f"all of {whole} and more ({format(share, spec)})"
    return f"{format(share, spec)} of {whole}"


def up_to(value: float, noun: str, spec: str = ".0%") -> str:
    """"up to 42% of predictions", or "no predictions" when the largest value prints as zero."""
    if is_missing(value):
        return f"an unknown share of {noun}"
    return f"no {noun}" if rounds_to_zero(value, spec) else f"up to {format(value, spec)} of {noun}"


def signed_gap(gap: float, unit: str = "points", decimals: int = 1) -> str:
    """"a gap of +1.2 points", or "no gap (under 0.05 points)" when the gap prints as zero at ``decimals``."""
    if is_missing(gap):
        return "an unknown gap"
    if rounds_to_zero(gap, f"+.{decimals}f"):
        return f"no gap (under {0.5 * 10.0 ** -decimals:g} {unit})"
    return f"a gap of {gap:+.{decimals}f} {unit}"


def series(values: list[str]) -> str:
    """"a", "a and b", "a, b and c": a list in a sentence."""
    if len(values) <= 1:
        return "".join(values)
    return f"{', '.join(values[:-1])} and {values[-1]}"


def count_of(n: int, one: str, many: str | None = None) -> str:
    """"1 size", "2 sizes" (``many`` defaults to ``one`` + "s"): never "size(s)"."""
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


def run_time(hours: float) -> str:
    """Training time in one unit wherever the book states it (chapter 4, the README): "47.1 run-hours, about 2.0
    days of one CPU core" (run-hours: each one-thread run's wall time, summed)."""
    return f"{hours:.1f} run-hours, about {hours / 24:.1f} days of one CPU core"


def sentence_start(text: str) -> str:
    """``text`` with its first letter capitalised, to open a sentence (the rest as it is: "two-hop, CoT" stays so)."""
    return text[:1].upper() + text[1:]
