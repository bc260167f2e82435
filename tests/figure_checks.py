"""What every saved chart must show (the book's rules for figures): each mark explained by a legend entry or a
title, and a tooltip on every data mark."""
from __future__ import annotations

import json

import vl_convert as vlc

LEGEND_CHANNELS = ("color", "fill", "stroke", "shape", "strokeDash", "size", "opacity")


def _legend_keys(layer: dict) -> list[tuple[str, str]]:
    """(channel, field) of the encodings of a layer that draw a legend entry."""
    keys = []
    for channel in LEGEND_CHANNELS:
        enc = layer.get("encoding", {}).get(channel)
        if isinstance(enc, dict) and "field" in enc and enc.get("legend", {}) is not None:
            keys.append((channel, enc["field"]))
    return keys


def _mark(layer: dict) -> str:
    mark = layer.get("mark")
    return mark.get("type", "") if isinstance(mark, dict) else str(mark or "")


def _invisible(layer: dict) -> bool:
    """A mark drawn fully transparent: a hover target that carries a tooltip (e.g. points along a line)."""
    mark = layer.get("mark")
    return isinstance(mark, dict) and mark.get("opacity") == 0


def _has_subtitle(spec: dict) -> bool:
    title = spec.get("title")
    return isinstance(title, dict) and bool(title.get("subtitle"))


def unexplained_layers(spec: dict, path: str = "chart", explained_above: bool = False) -> list[str]:
    """The layers of a Vega-Lite spec that nothing explains: in a view of two or more data layers (text labels
    aside), a layer needs a legend entry of its own, unless a subtitle of the view (or of a chart around it)
    says what the marks are. A view with one data layer is explained by its title and axes."""
    explained = explained_above or _has_subtitle(spec)
    problems = []
    for key in ("hconcat", "vconcat", "concat"):
        for i, part in enumerate(spec.get(key, [])):
            problems += unexplained_layers(part, f"{path}.{key}[{i}]", explained)
    if "spec" in spec:  # a facet
        problems += unexplained_layers(spec["spec"], f"{path}.spec", explained)
    layers = spec.get("layer")
    if layers:
        data = [(i, layer) for i, layer in enumerate(layers) if _mark(layer) != "text" and not _invisible(layer)]
        if len(data) > 1 and not explained:
            seen: set = set()
            for i, layer in data:
                own = set(_legend_keys(layer)) - seen
                if not own:
                    problems.append(f"{path}.layer[{i}] ({_mark(layer)}): no legend entry of its own and no subtitle")
                seen |= set(_legend_keys(layer))
        for i, layer in enumerate(layers):
            problems += unexplained_layers({k: v for k, v in layer.items() if k in ("layer", "hconcat", "vconcat")},
                                           f"{path}.layer[{i}]", explained)
    return problems


# Marks that need no tooltip of their own: a text mark is a label that repeats what the mark beneath it shows or
# names; a rule is a reference line (chance, a threshold, the chosen k), an edge of a drawn graph, or the error bar
# beside a point whose own tooltip gives the bar's ends. Every other mark is data a reader may want to read off.
ANNOTATION_MARKS = ("text", "rule")


def _has_tooltip(unit: dict, inherited: dict) -> bool:
    mark = unit.get("mark")
    if isinstance(mark, dict) and mark.get("tooltip"):
        return True
    return "tooltip" in {**inherited, **unit.get("encoding", {})}


def missing_tooltips(spec: dict, path: str = "chart", inherited: dict | None = None) -> list[str]:
    """The data marks of a Vega-Lite spec that show no tooltip (an encoding of their own or of the layer around
    them, or ``mark.tooltip``); text and rule marks are annotations (ANNOTATION_MARKS) and exempt."""
    encoding = {**(inherited or {}), **spec.get("encoding", {})}
    problems = []
    for key in ("hconcat", "vconcat", "concat", "layer"):
        for i, part in enumerate(spec.get(key, [])):
            problems += missing_tooltips(part, f"{path}.{key}[{i}]", encoding if key == "layer" else None)
    if isinstance(spec.get("spec"), dict):  # a facet or repeat
        problems += missing_tooltips(spec["spec"], f"{path}.spec", encoding)
    if "mark" in spec and _mark(spec) not in ANNOTATION_MARKS and not _has_tooltip(spec, inherited or {}):
        problems.append(f"{path} ({_mark(spec)}): no tooltip")
    return problems


def svg_with_params(chart, **values) -> str:
    """The chart's SVG with its top-level parameters set to ``values`` (what a reader's control would set)."""
    spec = chart.to_dict()
    for param in spec.get("params", []):
        if param["name"] in values:
            param["value"] = values[param["name"]]
    return vlc.vegalite_to_svg(json.dumps(spec))


def _dicts(spec):
    """Every dict of a nested spec, at any depth (the spec itself first)."""
    if isinstance(spec, dict):
        yield spec
        for value in spec.values():
            yield from _dicts(value)
    elif isinstance(spec, list):
        for value in spec:
            yield from _dicts(value)


def _tooltip_fields(spec) -> set:
    """Every field a tooltip of the spec shows (any depth)."""
    found = set()
    for node in _dicts(spec):
        tip = node.get("tooltip")
        for item in tip if isinstance(tip, list) else [tip] if isinstance(tip, dict) else []:
            if isinstance(item, dict) and "field" in item:
                found.add(item["field"])
    return found


def boolean_tooltips(spec: dict) -> list[str]:
    """Tooltip fields whose inline data holds true/false: a reader would read "false" where a word belongs."""
    fields = _tooltip_fields(spec)
    rows = [row for data in spec.get("datasets", {}).values() for row in data if isinstance(row, dict)]
    return sorted({f for row in rows for f in fields if isinstance(row.get(f), bool)})


def _param_views(spec) -> set:
    """The names of the views that selection parameters are bound to (altair lifts a layer's parameters to the
    top with ``views``), at any depth."""
    return {view for node in _dicts(spec) for param in node.get("params", [])
            if isinstance(param, dict) and "select" in param for view in param.get("views", [])}


def overlay_params(spec: dict, path: str = "chart", nested: bool = False, views: set | None = None) -> list[str]:
    """Views that JupyterLab's Vega-Lite (5.6) cannot draw: a selection parameter on a mark with a point or line
    overlay (``mark_line(point=...)``) inside a layer or concat, which it gives to both parts ("Duplicate signal
    name"). covlib.figures.live says more."""
    views = _param_views(spec) if views is None else views
    problems = []
    mark = spec.get("mark")
    selects = any("select" in p for p in spec.get("params", []) if isinstance(p, dict)) or spec.get("name") in views
    if nested and selects and isinstance(mark, dict) and (mark.get("point") or mark.get("line")):
        problems.append(f"{path} ({_mark(spec)} with an overlay): a parameter JupyterLab cannot draw")
    for key in ("hconcat", "vconcat", "concat", "layer"):
        for i, part in enumerate(spec.get(key, [])):
            problems += overlay_params(part, f"{path}.{key}[{i}]", True, views)
    if isinstance(spec.get("spec"), dict):
        problems += overlay_params(spec["spec"], f"{path}.spec", True, views)
    return problems


CONCATS = ("vconcat", "hconcat", "concat")


def _rows(data: dict | None, datasets: dict) -> bool:
    """Whether a view's data holds anything to draw (a URL or a generator counts as data)."""
    if data is None:
        return False
    if "name" in data:
        return bool(datasets.get(data["name"]))
    if "values" in data:
        return bool(data["values"])
    return True


def _draws(view: dict, data: dict | None, datasets: dict) -> bool:
    """Whether a view (a mark, a layer, a facet) has any data row to draw, with ``data`` inherited."""
    data = view.get("data", data)
    if "layer" in view:
        return any(_draws(layer, data, datasets) for layer in view["layer"])
    if "spec" in view:  # facet or repeat
        return _draws(view["spec"], data, datasets)
    return _rows(data, datasets)


def empty_panels(spec: dict, path: str = "chart", data: dict | None = None, datasets: dict | None = None) -> list[str]:
    """Panels of a chart that draw nothing: a reader sees only a title and empty axes. A layer with nothing to
    draw beside others that draw (an annotation with no rows this time) is fine; a whole panel is not."""
    datasets = spec.get("datasets", {}) if datasets is None else datasets
    data = spec.get("data", data)
    for key in CONCATS:
        if key in spec:
            return [p for i, panel in enumerate(spec[key])
                    for p in empty_panels(panel, f"{path}.{key}[{i}]", data, datasets)]
    if _draws(spec, data, datasets):
        return []
    title = spec.get("title")
    return [f"{path} ({title.get('text') if isinstance(title, dict) else title or 'untitled'})"]
