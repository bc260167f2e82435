"""covlib: tasks, data, coverage, training and analyses for the Coverage Principle book."""
from covlib.base.iri_grammar import defer_iri_grammar

__version__ = "0.1.0"

defer_iri_grammar()  # ~2 s of every process that imports altair or nbformat: covlib.base.iri_grammar says why
