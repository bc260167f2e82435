"""What every saved chart must show: each mark explained by a legend entry or a title (CONVENTIONS, Figures)."""
from __future__ import annotations

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
        data = [(i, layer) for i, layer in enumerate(layers) if _mark(layer) != "text"]
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
