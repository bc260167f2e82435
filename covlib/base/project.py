"""Where the book lives, its licence and how to cite it: one place for every page, notebook and the README.

REPOSITORY_URL is the book's public address, None until it has one: pages, downloaded notebooks, the README and
the book's citation then name the repository without a link. Set it here and rebuild (`make site`, `python -m
covlib.book.readme`) to put the link back everywhere. The functions below read it when called, so a test can set
it for a while."""
from __future__ import annotations

import html

REPOSITORY_URL: str | None = None
LICENSE_NAME = "MIT"
BOOK_TITLE = "The Coverage Principle, as a book you can rerun"
PAPER_URL = "https://arxiv.org/abs/2505.20278"
REPOSITORY_WITHOUT_URL = "the repository this book was built from"  # how the text names it while it has no address

PAPER_BIBTEX = """@article{chang2025coverage,
  title   = {The Coverage Principle: A Framework for Understanding Compositional Generalization},
  author  = {Chang, Hoyeon and Park, Jinho and Cho, Hanseul and Yang, Sohee and Ko, Miyoung and Hwang, Hyeonbin
             and Won, Seungpil and Lee, Dohaeng and Ahn, Youbin and Seo, Minjoon},
  journal = {arXiv preprint arXiv:2505.20278},
  year    = {2025}
}"""


def book_bibtex() -> str:
    """The book's own citation: a @misc entry, with the repository's address once it has one."""
    url = [f"  howpublished = {{\\url{{{REPOSITORY_URL}}}}},"] if REPOSITORY_URL else []
    return "\n".join(["@misc{coverage_principle_book,", f"  title        = {{{BOOK_TITLE}}},",
                      "  author       = {{the covlib authors}},", *url,
                      "  note         = {An interactive companion to arXiv:2505.20278}", "}"])


def repository_markdown() -> str:
    """Where the book lives, as markdown: its address as a link, or its name when it has none."""
    return f"<{REPOSITORY_URL}>" if REPOSITORY_URL else REPOSITORY_WITHOUT_URL


def repository_html(text: str = "the repository") -> str:
    """The repository as HTML: ``text`` linked to its address, or its name when it has none."""
    if REPOSITORY_URL:
        return f'<a href="{html.escape(REPOSITORY_URL, quote=True)}">{html.escape(text)}</a>'
    return REPOSITORY_WITHOUT_URL


def about_markdown(heading: str = "##") -> str:
    """The repository, the licence and how to cite the paper and the book, as markdown (a landing page's section,
    a downloaded notebook's first cell)."""
    where = (f"The book and its library, covlib, live at {repository_markdown()}: a chapter needs covlib to rerun, "
             "so clone the repository and run `make lab` (or `make book`) there." if REPOSITORY_URL else
             f"The book and its library, covlib, live in {REPOSITORY_WITHOUT_URL}: a chapter needs covlib to rerun, "
             "so run `make lab` (or `make book`) in a copy of that repository.")
    return "\n".join([
        f"{heading} Repository, licence and citation", "",
        f"{where} Code and text are under the {LICENSE_NAME} licence (the repository's LICENSE file).", "",
        f"If you use the results, cite the paper ([arXiv 2505.20278]({PAPER_URL})):", "",
        "```bibtex", PAPER_BIBTEX, "```", "",
        "and, for this book's reproduction and code:", "",
        "```bibtex", book_bibtex(), "```",
    ])
