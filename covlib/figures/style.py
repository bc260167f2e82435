"""One style for the book: palettes, tooltips, saving PNG and SVG (the notebook renderer: covlib.figures.live)."""
from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import altair as alt
import pandas as pd
import vl_convert as vlc

from covlib.base.paths import default_figures_dir

# The widest a chart may draw, titles and legends included, as vl-convert measures it. The book's site sets its
# text in a 784 px column at a 1400 px window; a browser's fonts run a few percent wider than vl-convert's, and
# vega-embed puts its action button (38 px) beside the chart, so a chart this wide fits the column there, and
# JupyterLab's output area (wider) too. tests/test_book.py checks every chart the book saves against it.
COLUMN_WIDTH = 784
MAX_CHART_WIDTH = 720
# a title's average character width (px): Vega's default title is 13 px bold, its subtitle 11 px
CHAR_WIDTH = {"text": 7.6, "subtitle": 6.4}
TITLE_MIN_WIDTH = 440  # a title may run past a narrow view's plot (over its legend, say) up to this width (px)

SPECS_ENV = "COVLIB_SPECS_DIR"  # where save_figure also writes each chart's Vega-Lite spec (tests set it)
TASK_COLORS = {"twohop": "#1565c0", "nontree": "#c62828"}


def save_figure(chart: alt.TopLevelMixin, name: str, directory: str | os.PathLike | None = None,
                scale: float = 2.0) -> list[Path]:
    """Write ``<directory>/<name>.png`` and ``.svg`` (atomically) and return both paths.

    ``directory`` defaults to ``default_figures_dir()``; an empty string means the default too.
    """
    folder = Path(directory) if directory else default_figures_dir()
    folder.mkdir(parents=True, exist_ok=True)
    live = reader_spec(json.loads(chart.to_json()))
    printed = json.dumps(printed_spec(live))
    outputs = {
        folder / f"{name}.png": vlc.vegalite_to_png(printed, scale=scale),
        folder / f"{name}.svg": vlc.vegalite_to_svg(printed).encode("utf-8"),
    }
    specs = os.environ.get(SPECS_ENV)
    if specs:  # the Vega-Lite spec too, for tests that read what every chart shows (tests/test_book.py)
        Path(specs).mkdir(parents=True, exist_ok=True)
        outputs[Path(specs) / f"{name}.vl.json"] = json.dumps(live).encode("utf-8")
    for path, payload in outputs.items():
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_bytes(payload)
        os.replace(tmp, path)
    return [p for p in outputs if p.suffix != ".json"]


SIGNIFICANT_DIGITS = 6  # the saved files keep what a reader can see, not float noise that differs between machines


def rounded(value: Any, digits: int = SIGNIFICANT_DIGITS) -> Any:
    """A chart spec (parsed JSON) with every float rounded to ``digits`` significant digits, so that the PNG and
    SVG files a chapter writes do not change with the last bits of a computation."""
    if isinstance(value, float):
        return float(f"{value:.{digits}g}") if math.isfinite(value) else value
    if isinstance(value, list):
        return [rounded(v, digits) for v in value]
    if isinstance(value, dict):
        return {k: rounded(v, digits) for k, v in value.items()}
    return value


AXIS_LABEL_SEPARATION = 6  # px between two axis labels, or one of them is left out ("280300" read as one number)


def reader_spec(spec: dict) -> dict:
    """A chart spec as the book shows it, live and in print: floats rounded (``rounded``), titles wrapped to the
    width of their view (``wrap_titles``), axis labels kept apart (AXIS_LABEL_SEPARATION)."""
    out = wrap_titles(rounded(spec))
    config = dict(out.get("config", {}))
    config["axis"] = {"labelSeparation": AXIS_LABEL_SEPARATION, **config.get("axis", {})}
    out["config"] = config
    return out


PROMPT = re.compile(r"\s*\((?:click|shift-click|hover)\b[^)]*\)", re.IGNORECASE)  # "task (click to pick)"
PROMPT_LINE = re.compile(r"^(?:click|shift-click|hover)\b", re.IGNORECASE)  # a subtitle line "click a dot for ..."


def printed_spec(spec: Any) -> Any:
    """A chart spec for the PNG and SVG files, where nothing can be clicked or hovered: the prompts to do so are
    left out of its titles and subtitles (the live chart keeps them)."""
    if isinstance(spec, list):
        return [printed_spec(v) for v in spec]
    if not isinstance(spec, dict):
        return spec
    out = {}
    for key, value in spec.items():
        if key in ("data", "datasets"):  # the rows drawn: a column that happens to be called "title" is data
            pass
        elif key in ("title", "subtitle") and isinstance(value, str):
            value = PROMPT.sub("", value)
        elif key in ("title", "subtitle") and isinstance(value, list) and all(isinstance(v, str) for v in value):
            value = [PROMPT.sub("", v) for v in value if not PROMPT_LINE.match(v)]
            if not value:
                continue
            value = value[0] if len(value) == 1 else value
        else:
            value = printed_spec(value)
        out[key] = value
    return out


def view_width(spec: Mapping[str, Any]) -> float | None:
    """The width (px) of a view's plotting area(s): its own ``width``, the sum of side-by-side parts, the widest
    of stacked or layered parts, a facet's panels times its columns; None when it has none set."""
    if isinstance(spec.get("width"), (int, float)):
        return float(spec["width"])
    if "hconcat" in spec or ("concat" in spec and not spec.get("columns")):
        parts = [view_width(p) or 0.0 for p in spec.get("hconcat", spec.get("concat", []))]
        return sum(parts) + 20.0 * (len(parts) - 1) if any(parts) else None
    for key in ("vconcat", "layer", "concat"):
        if key in spec:
            widths = [w for w in (view_width(p) for p in spec[key]) if w]
            return max(widths) if widths else None
    if isinstance(spec.get("spec"), Mapping):  # a facet: as many panels side by side as its columns allow
        panel = view_width(spec["spec"])
        return panel * int(spec.get("columns") or 1) if panel else None
    return None


def wrap_line(text: str, chars: int) -> list[str]:
    """``text`` broken at spaces into lines of at most ``chars`` characters (a longer word keeps its own line)."""
    lines: list[str] = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= chars:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


def wrap_titles(spec: Any, width: float | None = None) -> Any:
    """Every title and subtitle of a chart spec broken into lines that fit the width of its view (or
    TITLE_MIN_WIDTH, if wider): Vega draws a title on one line, however long, and a long one would widen the
    chart past the page."""
    if not isinstance(spec, dict):
        return spec
    own = view_width(spec) or width
    out = dict(spec)
    title = out.get("title")
    if own and title:
        title = {"text": title} if isinstance(title, (str, list)) else dict(title)
        for key, px in CHAR_WIDTH.items():
            value = title.get(key)
            if isinstance(value, (str, list)):
                lines = [value] if isinstance(value, str) else [str(v) for v in value]
                chars = int(max(own, TITLE_MIN_WIDTH) / px)
                wrapped = [part for line in lines for part in wrap_line(line, chars)]
                title[key] = wrapped if len(wrapped) > 1 else wrapped[0]
        out["title"] = title
    for key in ("hconcat", "vconcat", "concat", "layer"):
        if key in out:
            out[key] = [wrap_titles(part, own) for part in out[key]]
    if isinstance(out.get("spec"), dict):
        out["spec"] = wrap_titles(out["spec"], own)
    return out


def drawn_width(spec: Mapping[str, Any]) -> float:
    """The width (px) vl-convert draws a chart spec at: plotting areas, axes, legends and titles."""
    svg = vlc.vegalite_to_svg(json.dumps(spec))
    return float(re.search(r'<svg[^>]*\bwidth="([\d.]+)"', svg).group(1))


def pending_chart(title: str, command: str, lead: str = "not computed yet; fill the cache with") -> alt.Chart:
    """Stands in for a figure whose results are not in the cache yet: says so (``lead``), and which command
    fills it. Chapters save it under the figure's name so that papers_figures/ always holds every figure."""
    text = pd.DataFrame({"line": [lead, command], "y": [0, 1]})
    return alt.Chart(text, title=alt.TitleParams(title, anchor="start")).mark_text(
        fontSize=13, align="left", x=10).encode(y=alt.Y("y:O", axis=None), text="line:N").properties(width=460, height=60)


TRAIN_LABEL = "training set / train_inferred"


# One colour per test type across every chapter (train_inferred grey, type_0 green, OOD warm/purple).
TYPE_COLORS = {"train_inferred": "#9e9e9e", TRAIN_LABEL: "#9e9e9e", "type_0": "#2e7d32", "type_1": "#c62828",
               "type_2": "#ef6c00", "type_3": "#6a1b9a"}


def _type_scale(types: Sequence[str]) -> alt.Scale:
    extra = ["#1565c0", "#00838f", "#ad1457", "#5d4037", "#827717"]
    domain = list(dict.fromkeys(types))
    return alt.Scale(domain=domain, range=[TYPE_COLORS.get(t, extra[i % len(extra)]) for i, t in enumerate(domain)])


GROUP_COLORS = {"k<3": "#c62828", "k=3": "#f9a825", "k>3": "#2e7d32"}


LOG = alt.Scale(type="log")


def zoom(encodings: Sequence[str] = ("x", "y")) -> alt.Parameter:
    """Drag to pan and scroll to zoom the chart's ``encodings`` (double-click resets); add it to one layer."""
    return alt.selection_interval(bind="scales", encodings=list(encodings))


def legend_highlight(field: str) -> tuple[alt.Parameter, alt.ValueChannelMixin]:
    """Click a legend entry to highlight its marks (shift-click for several): the parameter and the opacity
    encoding that dims the other marks."""
    chosen = alt.selection_point(fields=[field], bind="legend")
    return chosen, alt.condition(chosen, alt.value(1.0), alt.value(0.2))
