"""Live charts in notebooks: Vega-Lite that JupyterLab and the book's site draw interactively (tooltips, zoom,
controls), with a PNG beside it for viewers without JavaScript (GitHub, nbviewer, an executed notebook on disk).

Every chapter enables this renderer through ``setup_chapter``. The output of a chart is one display_data whose
data is exactly ``{LIVE_MIMETYPE: spec, "image/png": base64 PNG, "text/plain": "<altair chart: TITLE>"}``; the
site (covlib.book.site) is built on that interface.
"""
from __future__ import annotations

import base64
import copy
import json
from collections.abc import Mapping
from typing import Any

import altair as alt
import vl_convert as vlc

from covlib.figures.style import reader_spec

# JupyterLab 4 draws this mimetype natively with the Vega-Lite it bundles (JupyterLab 4.6: vega-lite 5.6.1, vega
# 5.33, vega-embed 6.21); the site draws the same spec with vl-convert's newest Vega-Lite (6.x). altair 6 writes
# Vega-Lite 6, so a chart must keep to what both draw. One known difference: Vega-Lite 5.6 gives a selection
# parameter on a line with a point overlay (mark_line(point=...)) inside a layer or concat to both the line and
# its points, and the chart fails ("Duplicate signal name: param_..._tuple"); the book's charts draw such points
# as a layer of their own. tests/test_lab.py draws every chapter's charts in a real JupyterLab.
LIVE_MIMETYPE = "application/vnd.vegalite.v5+json"
LIVE_SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json"
RENDERER = "covlib-live"
PNG_SCALE = 1.5  # the PNG's pixels per chart pixel (the scale the book's PNG renderer used)


def chart_title(spec: Mapping[str, Any]) -> str:
    """The first title of a chart spec, looking into its parts when the whole has none ("untitled" if none)."""
    title = spec.get("title")
    if isinstance(title, Mapping):
        title = title.get("text")
    if isinstance(title, list):
        title = " ".join(map(str, title))
    if title:
        return str(title)
    for key in ("vconcat", "hconcat", "concat", "layer"):
        for part in spec.get(key, []):
            found = chart_title(part)
            if found != "untitled":
                return found
    return chart_title(spec["spec"]) if isinstance(spec.get("spec"), Mapping) else "untitled"


def live_spec(spec: Mapping[str, Any]) -> dict:
    """The spec a notebook embeds: as the saved figures show it (covlib.figures.style.reader_spec), data inline,
    Vega-Lite 5 schema."""
    live = reader_spec(copy.deepcopy(dict(spec)))
    live["$schema"] = LIVE_SCHEMA
    return live


def live_bundle(spec: Mapping[str, Any], scale: float = PNG_SCALE) -> dict[str, Any]:
    """The mimebundle of one chart: the live spec, a PNG of it (base64) and a one-line text stand-in."""
    live = live_spec(spec)
    png = vlc.vegalite_to_png(json.dumps(live), scale=scale)  # drawn with vl-convert's newest Vega-Lite
    return {
        LIVE_MIMETYPE: live,
        "image/png": base64.b64encode(png).decode("ascii"),
        "text/plain": f"<altair chart: {chart_title(live)}>",
    }


def enable_live_charts(scale: float = PNG_SCALE) -> None:
    """Register and enable the renderer that shows every altair chart as ``live_bundle`` (live + PNG)."""
    alt.renderers.register(RENDERER, lambda spec, **_: live_bundle(spec, scale))
    alt.renderers.enable(RENDERER)
