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

from covlib.figures.style import rounded

# JupyterLab 4 draws this mimetype natively (its vega-lite 5 renderer); altair 6 writes Vega-Lite 6 specs, which
# use nothing Vega-Lite 5 lacks (tests/test_figures.py compiles every chapter's charts with Vega-Lite 5 to check).
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
    """The spec a notebook embeds: floats rounded as in the saved figures, data inline, Vega-Lite 5 schema."""
    live = rounded(copy.deepcopy(dict(spec)))
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
