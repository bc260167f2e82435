"""What a chapter's exercise check prints: "right", "wrong" with a hint that does not give the answer away, "no
answer yet" with what to do, or "cannot check" when the truth could not be computed here.

A chapter's checks (its exercises module, or the exercises section of its module) compute the truth themselves and
say only whether an answer matches it: the solution cells, which show the answer, can be left out of the student
edition (covlib.book.editions) without taking the checks with them. An answer arrives from the chapter's parameters
cell, so it may come from ``papermill -p`` or ``covlib sweep -p`` as text: ``read_answer`` reads a literal there."""
from __future__ import annotations

import ast
import math
from collections.abc import Mapping, Sequence
from typing import Any

RIGHT, WRONG, UNANSWERED, UNCHECKED = "right", "wrong", "no answer yet", "cannot check"
VERDICTS = (RIGHT, WRONG, UNANSWERED, UNCHECKED)


def verdict_of(message: str) -> str:
    """The verdict a check's message starts with (one of VERDICTS): what a test or a teacher's script reads."""
    head = str(message).split(":", 1)[0].strip()
    if head not in VERDICTS:
        raise ValueError(f"not a check's message: {message!r}")
    return head


def right(text: str) -> str:
    return f"{RIGHT}: {text}"


def wrong(hint: str) -> str:
    return f"{WRONG}: {hint}"


def unanswered(name: str, how: str) -> str:
    """The message of a check whose answer ``name`` is still None: where to put it, and how to find it."""
    return (f"{UNANSWERED}: {how}; then set {name} in the chapter's parameters cell (at its top) and run that cell "
            "and this one again.")


def unchecked(why: str) -> str:
    return f"{UNCHECKED}: {why}."


def read_answer(answer: Any) -> Any:
    """An answer as a Python value: text that is a Python literal ("0.25", "[3, 4]", "{300: 0.5}", from a command
    line) becomes that literal; anything else is returned as it is."""
    if isinstance(answer, str):
        try:
            return ast.literal_eval(answer.strip())
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return answer
    return answer


def as_number(answer: Any) -> float | None:
    """An answer as a finite float, or None when it is not a number (a bool is not one)."""
    value = read_answer(answer)
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def direction(value: float, truth: float) -> str:
    return "too high" if value > truth else "too low"


def check_number(answer: Any, truth: float, what: str, how: str, name: str, hint: str = "",
                 rel_tol: float = 0.0, abs_tol: float = 0.0, fmt: str = ".3f", missing: str | None = None) -> str:
    """The check of an answer that is one number: right within ``rel_tol``/``abs_tol`` of ``truth``; wrong with
    whether it is too high or too low and ``hint``; never the truth unless the answer is right. A truth that could
    not be computed (None, NaN) says so first, answer or not."""
    if truth is None or isinstance(truth, float) and math.isnan(truth):
        return unchecked(missing or f"{what} could not be computed here")
    if answer is None:
        return unanswered(name, how)
    value = as_number(answer)
    if value is None:
        return wrong(f"{name} is a number, not {answer!r}.")
    if math.isclose(value, truth, rel_tol=rel_tol, abs_tol=abs_tol) or value == truth:
        return right(f"{what} is {_shown(truth, fmt)}.")
    return wrong(f"{_shown(value, fmt)} is {direction(value, truth)}." + (f" Hint: {hint}" if hint else ""))


def _shown(value: float, fmt: str) -> str:
    """A reader's number as the check writes it: in ``fmt``, or as it is when ``fmt`` does not fit it (2.5 for "d")."""
    try:
        return format(int(value) if fmt.endswith("d") and float(value).is_integer() else value, fmt)
    except ValueError:
        return format(value, "g")


def check_share(answer: Any, truth: float, what: str, run: str, missing: str | None = None,
                tol: float = 0.01, name: str = "the answer", hint: str = "") -> str:
    """The check of an answer that is a share in [0, 1]: right within ``tol`` of ``truth``; wrong says whether it is
    too high or too low (and that a share is not a percentage, when it looks like one), with ``hint``; ``run`` says
    how to find it while the answer is None, ``missing`` why the truth could not be computed (NaN; said first,
    answer or not)."""
    if truth is None or math.isnan(truth):
        return unchecked(missing or f"{what} could not be computed here")
    if answer is None:
        return unanswered(name, run)
    value = as_number(answer)
    if value is None:
        return wrong(f"the answer is a share between 0 and 1, a number, not {answer!r}.")
    if abs(value - truth) < tol:
        return right(f"{what} is {truth:.3f}.")
    if value > 1:
        return wrong("a share lies between 0 and 1: write it as a share, not a percentage (0.25, not 25).")
    if value < 0:
        return wrong("a share lies between 0 and 1; yours is negative.")
    return wrong(f"{value:.3f} is {direction(value, truth)}." + (f" Hint: {hint}" if hint else ""))


def check_choice(answer: Any, truth: Any, options: Sequence[Any], name: str, how: str, hint: str = "",
                 missing: str | None = None) -> str:
    """The check of an answer that is one of a few ``options``: right or wrong (with ``hint``), and the options when
    the answer is none of them; never which option is right unless the answer is."""
    if truth is None:
        return unchecked(missing or "the truth could not be computed here")
    if answer is None:
        return unanswered(name, how)
    value = read_answer(answer)
    if value == truth:
        return right(f"{truth}.")
    if value not in options:
        return wrong(f"{answer!r} is not one of {', '.join(map(repr, options))}.")
    return wrong(f"not {value!r}." + (f" Hint: {hint}" if hint else ""))


def check_counts(answer: Any, truth: Mapping[Any, int], labels: Mapping[Any, str], name: str, how: str,
                 hint: str = "") -> str:
    """The check of an answer that is a few whole numbers (``truth``: key -> count), given as a sequence in the
    order of ``truth`` or as a mapping: right, or wrong naming which of them (by ``labels``) are too high or too
    low, without their values."""
    if answer is None:
        return unanswered(name, how)
    keys = list(truth)
    value = read_answer(answer)
    given = _counts(value, keys)
    if given is None:
        shape = ", ".join(labels[k] for k in keys)
        return wrong(f"{name} holds {len(keys)} whole numbers, ({shape}); you gave {answer!r}.")
    if given == dict(truth):
        return right(", ".join(f"{truth[k]:,} {labels[k]}" for k in keys) + ".")
    off = [f"the count {labels[k]} is {direction(given[k], truth[k])}" for k in keys if given[k] != truth[k]]
    return wrong("; ".join(off) + "." + (f" Hint: {hint}" if hint else ""))


def _counts(value: Any, keys: list) -> dict | None:
    """An answer as {key: int}: a mapping, or a list, tuple or array in the order of ``keys`` (None if neither)."""
    try:
        if isinstance(value, Mapping):
            given = {read_answer(k) if isinstance(k, str) else k: v for k, v in value.items()}
            if set(given) != set(keys):
                return None
            counts = {k: _whole(given[k]) for k in keys}
        elif isinstance(value, (list, tuple)) or hasattr(value, "tolist"):
            items = list(value)
            if len(keys) == 1 and len(items) > 1 and len(set(items)) == 1:  # the same threshold asked twice
                items = items[:1]
            if len(items) != len(keys):
                return None
            counts = {k: _whole(v) for k, v in zip(keys, items)}
        else:
            return None
    except (TypeError, ValueError):
        return None
    return None if None in counts.values() else counts


def _whole(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    number = float(value)
    return int(number) if number.is_integer() else None
