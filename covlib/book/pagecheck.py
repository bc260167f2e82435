"""What a reader must never see on a page of the site: a check over the built HTML.

A published page holds no path of the machine that built it, no Python object repr, no raw ``$...$`` that
MathJax did not typeset, and no maintainers' notes (an issue number, "SPEC §", a queue lane, an allocator's
environment variable). The check reads the text a reader can reach (folded code included) and reports each
finding with a few characters around it, so that a failing test names the page and the words."""
from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track",
         "wbr"}
_SKIP = {"script", "style", "svg", "mjx-container", "template", "noscript"}
_BLOCKS = {"p", "div", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "td", "th", "table", "section",
           "article", "pre", "br", "hr", "dt", "dd", "caption", "blockquote", "nav", "header", "footer", "main", "title"}
_TYPESET = {"math", "mathjax_process", "tex2jax_process", "arithmatex"}  # classes whose TeX MathJax typesets

# (name, pattern, where): where is "all" (prose and folded code) or "prose" (outputs and markdown only:
# code legitimately holds calls such as ModelConfig(n_layers=4) and f-strings with $x_2$)
CHECKS: tuple[tuple[str, re.Pattern[str], str], ...] = (
    ("machine path", re.compile(r"(?<![\w.:/])(?:/(?:work|home|tmp|root|Users|usr|var|opt|mnt|private|srv)/[\w.+-]+"
                                r"|[A-Za-z]:\\\\?[\w.-]+\\)"), "all"),
    ("Python repr", re.compile(r"\b(?:PosixPath|WindowsPath|PurePosixPath)\(|<[\w.]+ object at 0x[0-9a-fA-F]+>"
                               r"|\b[A-Z][A-Za-z0-9]*\((?:[a-z_][a-z0-9_]*=)|\b(?:np\.)?(?:array|tensor|float64|int64)"
                               r"\(\[?-?\d|\{'[a-z_][a-z0-9_]*': "), "prose"),
    ("raw $...$ (math not typeset)", re.compile(r"(?<![\\$\w])\$(?=[^\s$\d])[^$\n]{1,120}?(?<=[^\s\\])\$(?![\w$])"),
     "prose"),
    ("issue number", re.compile(r"\bissues?\s*#?\d+", re.I), "all"),
    ("reference to the spec", re.compile(r"\bSPEC\s*(?:§|\.md\b|\d)|\bCONVENTIONS\.md\b"), "all"),
    ("maintainers' note", re.compile(r"\blanes?\s+[AB]\b|\bQUEUE\.sh\b|\bMALLOC_\w+|\bGLIBC_TUNABLES\b"), "all"),
)


@dataclass(frozen=True)
class Finding:
    """One thing a reader should not see: which check, the matched text and its surroundings."""

    check: str
    match: str
    context: str

    def __str__(self) -> str:
        return f"{self.check}: {self.match!r} in \u2026{self.context}\u2026"


class _PageText(HTMLParser):
    """Splits a page's reachable text into prose (markdown, outputs) and code (cell inputs), leaving out scripts,
    styles, drawn SVG and typeset math (a ``math`` class or MathJax's own elements)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, bool, bool]] = []  # (tag, skipped, code)
        self.prose: list[str] = []
        self.code: list[str] = []

    def _gap(self, tag: str) -> None:
        """A block element separates words; inline ones (a highlighted token, a link) do not."""
        if tag in _BLOCKS:
            self.prose.append(" ")
            self.code.append("\n")

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._gap(tag)
        if tag in _VOID:
            return
        classes = (dict(attrs).get("class") or "").split()
        skipped, code = self.stack[-1][1:] if self.stack else (False, False)
        # math: Sphinx's typeset spans ("math"), and any container marked for MathJax to typeset in the browser;
        # raw TeX there is typeset, not shown. ("mathjax_ignore", which MyST puts on every section, is the opposite.)
        skipped = skipped or tag in _SKIP or bool(_TYPESET & set(classes))
        code = code or "cell_input" in classes
        self.stack.append((tag, skipped, code))

    def handle_endtag(self, tag: str) -> None:
        self._gap(tag)
        for depth in range(len(self.stack) - 1, -1, -1):
            if self.stack[depth][0] == tag:
                del self.stack[depth:]
                return

    def handle_data(self, data: str) -> None:
        skipped, code = self.stack[-1][1:] if self.stack else (False, False)
        if not skipped:
            (self.code if code else self.prose).append(data)


def page_text(html: str) -> tuple[str, str]:
    """(prose, code) of a page: the text a reader sees, and the folded code of its cells."""
    parser = _PageText()
    parser.feed(html)
    parser.close()
    return " ".join("".join(parser.prose).split()), "".join(parser.code)


def text_findings(prose: str, code: str = "") -> list[Finding]:
    """Every check's matches in the given prose and code."""
    findings = []
    for name, pattern, where in CHECKS:
        for text in (prose, code) if where == "all" else (prose,):
            for match in pattern.finditer(text):
                start, end = max(0, match.start() - 40), min(len(text), match.end() + 40)
                findings.append(Finding(name, match.group(0), " ".join(text[start:end].split())))
    return findings


def page_findings(html: str) -> list[Finding]:
    """What a reader should not see on one HTML page."""
    return text_findings(*page_text(html))


def site_findings(site: str | Path) -> dict[str, list[Finding]]:
    """The findings of every HTML page of a built site (search and index pages of Sphinx included), by page."""
    site = Path(site)
    found = {}
    for page in sorted(site.rglob("*.html")):
        findings = page_findings(page.read_text(encoding="utf-8"))
        if findings:
            found[str(page.relative_to(site))] = findings
    return found


def describe(found: dict[str, list[Finding]]) -> Iterator[str]:
    """One line per finding, headed by its page: for a test's failure message."""
    for page, findings in found.items():
        for finding in findings:
            yield f"{page}: {finding}"
