"""Tables a reader reads: chosen columns under headers that say what they are, numbers rounded (integers with
thousands separators), missing values as empty cells, no index, long tables folded, a width that fits a page.

``reader_table`` is the one entry point; chapters keep their headers and formats in their own module and the
notebook only calls it. In Jupyter and on the site the result is HTML (pandas Styler); as text it is a plain table.
"""
from __future__ import annotations

import hashlib
import html
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd
from pandas.io.formats.style import Styler

from covlib.base.errors import CovlibError

Format = str | Callable[[Any], str]

# Scoped to each table by the Styler: small type, tight padding, headers and text cells that wrap between words,
# numbers that never break. A table still too wide for the page scrolls inside its own box (WRAPPER), never the page.
TABLE_STYLES = [
    {"selector": "", "props": "border-collapse: collapse; font-size: 0.85em; margin: 0.3em 0;"},
    {"selector": "caption", "props": "caption-side: top; text-align: left; font-weight: 600; padding: 0 0 0.3em;"},
    {"selector": "th", "props": "text-align: left; vertical-align: bottom; white-space: normal; "
                                "overflow-wrap: break-word; padding: 0.2em 0.45em; border-bottom: 1px solid #888;"},
    {"selector": "td", "props": "text-align: left; vertical-align: top; overflow-wrap: break-word; "
                                "padding: 0.15em 0.45em; border-bottom: 1px solid #e3e3e3;"},
]
WRAPPER = '<div class="covlib-table" style="max-width: 100%; overflow-x: auto;">'

NUMBER_STYLE = [{"selector": "td", "props": "text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums;"},
                {"selector": "th", "props": "text-align: right;"}]


class ReaderTable:
    """A table for the reader: ``frame`` holds the chosen columns under their headers (values unformatted),
    ``text`` the same cells as the reader sees them. Shows as HTML in Jupyter, as a plain table in text."""

    def __init__(self, frame: pd.DataFrame, formatters: Mapping[str, Callable[[Any], str]], numeric: list[str],
                 max_rows: int, caption: str | None):
        self.frame = frame
        self.formatters = dict(formatters)
        self.numeric = numeric
        self.max_rows = max_rows
        self.caption = caption
        self.text = pd.DataFrame({col: [_cell(v, self.formatters[col]) for v in frame[col]] for col in frame.columns},
                                 columns=frame.columns)

    @property
    def hidden_rows(self) -> int:
        """How many rows sit in the folded part (0 when the table is short)."""
        return max(0, len(self.frame) - self.max_rows)

    def styler(self, rows: slice = slice(None), part: str = "") -> Styler:
        """The HTML view of ``rows`` (all by default): a pandas Styler with the book's table style."""
        frame = self.frame.iloc[rows]
        digest = hashlib.sha1(f"{self.caption}|{part}|{self.text.to_csv()}".encode()).hexdigest()[:10]
        styler = Styler(frame, uuid=f"covlib_{digest}", cell_ids=False, na_rep="")
        # cells and headers are text, not markup: a token such as "<t_3>" must show, not vanish as a tag
        styler.format(self.formatters, na_rep="", escape="html").format_index(escape="html", axis=1)
        styler.hide(axis="index").set_table_styles(TABLE_STYLES)
        if self.numeric:
            styler.set_table_styles(dict.fromkeys(self.numeric, NUMBER_STYLE), overwrite=False)
        if self.caption and part != "rest":
            styler.set_caption(html.escape(self.caption))
        return styler

    def _repr_html_(self) -> str:
        shown = self.styler(slice(0, self.max_rows), "head").to_html()
        if not self.hidden_rows:
            return f"{WRAPPER}{shown}</div>"
        rest = self.styler(slice(self.max_rows, None), "rest").to_html()
        return (f"{WRAPPER}{shown}<details><summary>show {_other_rows(self.hidden_rows)}"
                f"</summary>{rest}</details></div>")

    def __repr__(self) -> str:
        lines = [self.caption] if self.caption else []
        if self.text.empty:
            return "\n".join([*lines, " | ".join(self.text.columns), "(no rows)"])
        lines.append(self.text.iloc[: self.max_rows].to_string(index=False))
        if self.hidden_rows:
            lines.append(f"... and {self.hidden_rows:,} more {'row' if self.hidden_rows == 1 else 'rows'}")
        return "\n".join(lines)


def reader_table(frame: pd.DataFrame, columns: Mapping[str, str], formats: Mapping[str, Format] | None = None,
                 max_rows: int = 15, caption: str | None = None) -> ReaderTable:
    """``frame``'s ``columns`` (source column -> header that says what it is, with its unit), in that order, for
    the reader: no index, missing values as empty cells, numbers rounded (integers with thousands separators),
    the first ``max_rows`` rows shown and the rest folded under a "show" link.

    ``formats`` maps a source column to a format spec (".1%", ",.0f", or "{:.2f} s") or a function of the value;
    the other columns get a default by their values (yes/no for booleans, about three significant digits for
    decimals, chosen per column so that a column is rounded alike)."""
    formats = dict(formats or {})
    for name in [*columns, *formats]:
        if name not in frame.columns:
            raise CovlibError(f"reader_table: the frame has no column {name!r}; its columns are "
                              f"{', '.join(map(str, frame.columns))} (pass the source column name, not the header)")
    if not columns:
        raise CovlibError("reader_table: no columns chosen; pass columns={source column: header, ...}")
    if max_rows < 1:
        raise CovlibError(f"reader_table: max_rows={max_rows} shows nothing; pass 1 or more")
    headers = list(columns.values())
    if len(set(headers)) < len(headers):
        raise CovlibError(f"reader_table: two columns share a header in {headers}; give each its own")
    chosen = frame[list(columns)].reset_index(drop=True)
    chosen.columns = headers
    formatters, numeric = {}, []
    for source, header in columns.items():
        kind = _kind(chosen[header])
        formatters[header] = _formatter(formats[source]) if source in formats else _default_formatter(chosen[header], kind)
        if kind in ("integer", "decimal"):
            numeric.append(header)
    return ReaderTable(chosen, formatters, numeric, max_rows, caption)


def _other_rows(count: int) -> str:
    return "the other row" if count == 1 else f"the other {count:,} rows"


def _missing(value: Any) -> bool:
    return value is None or (np.ndim(value) == 0 and bool(pd.isna(value)))


def _cell(value: Any, formatter: Callable[[Any], str]) -> str:
    return "" if _missing(value) else formatter(value)


def _kind(column: pd.Series) -> str:
    """"boolean", "integer" (whole numbers, even stored as floats beside NaN), "decimal" or "text"."""
    inferred = pd.api.types.infer_dtype(column, skipna=True)
    if inferred == "boolean":
        return "boolean"
    if inferred not in ("integer", "floating", "mixed-integer-float", "decimal"):
        return "text"
    values = pd.to_numeric(column, errors="coerce").dropna().to_numpy(dtype=float)
    finite = values[np.isfinite(values)]
    return "integer" if np.all(finite == np.round(finite)) else "decimal"


def _formatter(spec: Format) -> Callable[[Any], str]:
    if callable(spec):
        return spec
    template = spec if "{" in spec else "{:" + spec + "}"
    return template.format


def _default_formatter(column: pd.Series, kind: str) -> Callable[[Any], str]:
    if kind == "boolean":
        return lambda v: "yes" if v else "no"
    if kind == "integer":
        return lambda v: f"{int(v):,}" if math.isfinite(float(v)) else str(v)
    if kind == "decimal":
        return _formatter(f",.{_decimals(column)}f")
    return str


def _decimals(column: pd.Series) -> int:
    """Decimals that give the column's largest value three significant digits (0 to 4)."""
    values = pd.to_numeric(column, errors="coerce").abs()
    largest = values[np.isfinite(values) & (values > 0)].max()
    if not largest or pd.isna(largest):
        return 2
    return int(np.clip(2 - math.floor(math.log10(largest)), 0, 4))


def readable(value: Any) -> str:
    """One cell of a column that mixes kinds (a key-value table): integers with thousands separators, decimals
    with four significant digits, booleans as yes/no, anything else as text."""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)) or (isinstance(value, (float, np.floating)) and float(value).is_integer()
                                                  and abs(value) < 1e15):
        return f"{int(value):,}"
    if isinstance(value, (float, np.floating)):
        return f"{value:,.4g}" if abs(value) < 1e6 else f"{value:,.0f}"
    return str(value)


def metrics_table(values: Mapping[str, Any], max_rows: int = 40) -> ReaderTable:
    """The numbers a chapter records (covlib.book.sweep.record_metrics), one per row: integers with separators,
    decimals to four significant digits, an empty cell where the cache holds no value."""
    frame = pd.DataFrame({"metric": list(values), "value": list(values.values())})
    return reader_table(frame, {"metric": "recorded metric", "value": "value"}, {"value": readable}, max_rows=max_rows)


def frame_table(frame: pd.DataFrame, caption: str | None = None) -> ReaderTable:
    """A table whose column names already say what each column is (a comparison written for readers), as is."""
    return reader_table(frame, {c: c for c in frame.columns}, caption=caption)
