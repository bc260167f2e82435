"""Where the book lives, its licence and how to cite it: one place for every page, notebook and the README.

REPOSITORY_URL is a placeholder until the book's public address is settled: change it here and rebuild."""
from __future__ import annotations

REPOSITORY_URL = "https://github.com/coverage-book/coverage-principle-book"
LICENSE_NAME = "MIT"
BOOK_TITLE = "The Coverage Principle, as a book you can rerun"
PAPER_URL = "https://arxiv.org/abs/2505.20278"

PAPER_BIBTEX = """@article{chang2025coverage,
  title   = {The Coverage Principle: A Framework for Understanding Compositional Generalization},
  author  = {Chang, Hoyeon and Park, Jinho and Cho, Hanseul and Yang, Sohee and Ko, Miyoung and Hwang, Hyeonbin
             and Won, Seungpil and Lee, Dohaeng and Ahn, Youbin and Seo, Minjoon},
  journal = {arXiv preprint arXiv:2505.20278},
  year    = {2025}
}"""

BOOK_BIBTEX = f"""@misc{{coverage_principle_book,
  title        = {{{BOOK_TITLE}}},
  author       = {{{{the covlib authors}}}},
  howpublished = {{\\url{{{REPOSITORY_URL}}}}},
  note         = {{An interactive companion to arXiv:2505.20278}}
}}"""


def about_markdown(heading: str = "##") -> str:
    """The repository, the licence and how to cite the paper and the book, as markdown (a landing page's section,
    a downloaded notebook's first cell)."""
    return "\n".join([
        f"{heading} Repository, licence and citation", "",
        f"The book and its library, covlib, live at <{REPOSITORY_URL}>: a chapter needs covlib to rerun, so clone "
        "the repository and run `make lab` (or `make book`) there. Code and text are under the "
        f"{LICENSE_NAME} licence (the repository's LICENSE file).", "",
        f"If you use the results, cite the paper ([arXiv 2505.20278]({PAPER_URL})):", "",
        "```bibtex", PAPER_BIBTEX, "```", "",
        "and, for this book's reproduction and code:", "",
        "```bibtex", BOOK_BIBTEX, "```",
    ])
