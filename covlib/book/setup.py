"""What every chapter does first: resolve its preset, make its folders, set up figures and tables."""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import altair as alt
import pandas as pd

from covlib.base.errors import CovlibError
from covlib.base.paths import FIGURES_ENV, repository_path
from covlib.base.presets import PRESETS
from covlib.figures.live import enable_live_charts
from covlib.figures.style import save_figure


@dataclass
class Chapter:
    """A chapter's resolved set-up: its preset, knobs, folders, and where its figures go."""

    number: str
    preset: str
    values: dict[str, Any] = field(default_factory=dict)
    root: Path = field(default_factory=lambda: repository_path("build"))
    figures_dir: Path | None = None  # None: covlib.base.paths.default_figures_dir()

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    def save(self, chart: alt.TopLevelMixin, name: str) -> alt.TopLevelMixin:
        """Write the figure as ``<figures_dir>/<name>.png`` and ``.svg``; return the chart to show it."""
        save_figure(chart, name, self.figures_dir)
        return chart


def preset_values(presets: Mapping[str, Mapping[str, Any]], preset: str, **given: Any) -> dict[str, Any]:
    """A chapter's knobs: the preset's values, overridden by each parameter the reader set (not None)."""
    if preset not in presets:
        raise CovlibError(f"preset={preset!r} is not one of this chapter's presets; choose one of {', '.join(presets)}")
    return {**presets[preset], **{name: value for name, value in given.items() if value is not None}}


def reader_figures_dir(root: Path, preset: str) -> Path:
    """Where a chapter run without a ``figures_dir`` saves its figures: $COVLIB_FIGURES_DIR if set, else
    ``<root>/figures/<preset>/`` (build/figures/default/ for a reader's run of the book from JupyterLab or
    papermill). papers_figures/ is written only by `covlib book --preset default`, which passes it as
    ``figures_dir``: a reader who changes N and reruns a chapter does not replace the book's figure."""
    env = os.environ.get(FIGURES_ENV)
    return Path(env) if env else root / "figures" / preset


def setup_chapter(number: str, preset: str, presets: Mapping[str, Mapping[str, Any]] | None = None,
                  out_dir: str | os.PathLike = "", figures_dir: str | os.PathLike = "", **given: Any) -> Chapter:
    """The one call after a chapter's parameters cell (papermill does not recompute that cell).

    Resolves the preset (an unknown one is an error naming the valid ones) and the knobs the reader set,
    picks the output folder (``out_dir`` or build/ of the repository) and the figures folder
    (``figures_dir``, else ``reader_figures_dir``: never papers_figures/ unless asked), and shows charts live
    (covlib.figures.live: Vega-Lite with a PNG beside it)."""
    values = preset_values(presets or {name: {} for name in PRESETS}, preset, **given)
    enable_live_charts()
    pd.set_option("display.width", 140)
    root = Path(out_dir) if out_dir else repository_path("build")
    return Chapter(number, preset, values, root, Path(figures_dir) if figures_dir else reader_figures_dir(root, preset))
