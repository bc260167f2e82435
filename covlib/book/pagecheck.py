"""What a reader must never see on a page of the site, nor in the repository's own text.

A published page holds no path of the machine that built it, no Python object repr, no raw ``$...$`` that
MathJax did not typeset, and no maintainers' notes (an issue number, a section of a specification that is not
published, a queue lane, an allocator's environment variable). The check reads the text a reader can reach
(folded code included) and reports each finding with a few characters around it, so that a failing test names
the page and the words.

The repository's tracked text (code, comments, docs, commands) cites no work item (issue, session, milestone),
no document that is not in the repository, and no address the book does not have (``repository_findings``)."""
from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from covlib.base.errors import CovlibError
from covlib.base.paths import REPO

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


# The repository's own text. A work item: an issue, pull request (or PR), milestone or session followed by its
# number, with or without "#", in any case; or a bare "#" and one or two digits after a space or "(" (three or six
# digits are a CSS colour such as #888). A third-party issue cited by its URL (".../issues/123") is a source.
WORK_ITEM = re.compile(r"\b(?:issues?|PR|pull\s+requests?|milestones?|sessions?)\s*#?\d+"
                       r"|(?:^|(?<=[\s(\[]))#\d{1,2}\b(?![\w-])", re.I | re.M)
# a document that is not in the repository: the specification (its name in capitals, or in any case before a
# section sign) or the maintainers' conventions guide (its name in capitals); lowercase "spec" alone is a Vega-Lite
# chart spec, and names such as SPECS_ENV are not the word
UNPUBLISHED_DOCUMENT = re.compile(r"\bSPEC\b|\b(?i:spec)\s*§|\bCONVENTIONS\b")
# the placeholder address the book carried before it had a public one (covlib.base.project.REPOSITORY_URL)
MADE_UP_ADDRESS = re.compile(r"github\.com/coverage-book\b", re.I)
REPOSITORY_CHECKS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("work-item reference", WORK_ITEM),
    ("document not in the repository", UNPUBLISHED_DOCUMENT),
    ("made-up address", MADE_UP_ADDRESS),
)
# the tracked files whose text is read: these suffixes, and files without one (Makefile, .ci/run)
TEXT_SUFFIXES = frozenset({".py", ".md", ".txt", ".sh", ".toml", ".yml", ".yaml", ".cfg", ".ini", ""})


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


def repository_text_findings(text: str) -> list[tuple[int, Finding]]:
    """Every repository check's matches in one file's text: (line number, finding with that line as context)."""
    findings = []
    for name, pattern in REPOSITORY_CHECKS:
        for match in pattern.finditer(text):
            start, end = text.rfind("\n", 0, match.start()) + 1, text.find("\n", match.end())
            line = " ".join(text[start:end if end >= 0 else len(text)].split())
            findings.append((text.count("\n", 0, match.start()) + 1, Finding(name, match.group(0), line[:160])))
    return sorted(findings, key=lambda found: found[0])


def tracked_text_files(root: str | Path = REPO) -> list[Path]:
    """The text files git tracks under ``root`` (``git ls-files``), as they are in the working tree."""
    root = Path(root)
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as error:
        raise CovlibError(f"cannot list the tracked files of {root} ({error}): the repository check reads a git "
                          "checkout; run it from a clone of the repository with git installed") from error
    names = [name for name in listed.stdout.split("\0") if name]
    return [root / name for name in names if Path(name).suffix in TEXT_SUFFIXES and (root / name).is_file()]


def repository_findings(root: str | Path = REPO) -> dict[str, list[Finding]]:
    """The findings of every tracked text file, keyed "path:line" (a file that is not UTF-8 text is skipped)."""
    root = Path(root)
    found: dict[str, list[Finding]] = {}
    for path in tracked_text_files(root):
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for line, finding in repository_text_findings(text):
            found.setdefault(f"{path.relative_to(root).as_posix()}:{line}", []).append(finding)
    return found
