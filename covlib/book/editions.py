"""The book's two editions: the full book, and a student edition a teacher can hand out, without the solutions.

Every chapter ends with exercises. A reader's answers are parameters of the chapter (``my_*`` in its parameters
cell); a cell tagged ``check`` says whether they are right, without giving the answer away (the chapter's own check
functions); a cell tagged ``solution`` shows the answer. The student edition is the book without the solution cells:
in the executed chapters, in the downloads (.ipynb and .py) and on the site. The checks stay, so a student still
learns whether an answer is right."""
from __future__ import annotations

import copy
import os
import re
from pathlib import Path

from covlib.base.errors import CovlibError

EDITIONS = ("full", "student")
SOLUTION_TAG, CHECK_TAG = "solution", "check"

# the first line of a jupytext py:percent cell, with its tags when it has some
_CELL_MARKER = re.compile(r"^# %%(?P<rest>.*)$", flags=re.M)
_TAGS = re.compile(r"tags=\[(?P<tags>[^\]]*)\]")


def check_edition(edition: str) -> str:
    if edition not in EDITIONS:
        raise CovlibError(f"unknown edition {edition!r}; choose one of: {', '.join(EDITIONS)}")
    return edition


def edition_root(build: str | os.PathLike, edition: str = "full") -> Path:
    """Where an edition's build goes: ``build/`` for the full book (executed chapters in ``build/<preset>/``, the
    site in ``build/site/<preset>/``), ``build/student/`` for the student edition (the same layout below it)."""
    return Path(build) if check_edition(edition) == "full" else Path(build) / edition


def cell_tags(cell) -> list[str]:
    return list((cell.get("metadata") or {}).get("tags") or [])


def is_solution(cell) -> bool:
    return SOLUTION_TAG in cell_tags(cell)


def without_solutions(notebook):
    """A copy of a notebook (a node or a dict) without its cells tagged ``solution``."""
    stripped = copy.copy(notebook)  # the same type: papermill executes a NotebookNode, not a plain dict
    stripped["cells"] = [cell for cell in notebook["cells"] if not is_solution(cell)]
    return stripped


def for_edition(notebook, edition: str):
    """The notebook as ``edition`` shows it: unchanged for the full book, without solutions for the student's."""
    return notebook if check_edition(edition) == "full" else without_solutions(notebook)


def source_tags(marker_rest: str) -> list[str]:
    """The tags of a py:percent cell from the text after its ``# %%`` (``tags=["solution"]`` -> ["solution"])."""
    found = _TAGS.search(marker_rest)
    return re.findall(r"[\"']([^\"']+)[\"']", found.group("tags")) if found else []


def source_without_solutions(text: str) -> str:
    """A chapter's jupytext (py:percent) source without its cells tagged ``solution``; every other line is kept
    byte for byte (a cell runs from its ``# %%`` line to the next one, or to the end)."""
    markers = list(_CELL_MARKER.finditer(text))
    kept, last = [], 0
    for i, marker in enumerate(markers):
        end = markers[i + 1].start() if i + 1 < len(markers) else len(text)
        if SOLUTION_TAG in source_tags(marker.group("rest")):
            kept.append(text[last:marker.start()])
            last = end
    kept.append(text[last:])
    stripped = "".join(kept)
    return stripped.rstrip("\n") + "\n" if text.endswith("\n") else stripped
