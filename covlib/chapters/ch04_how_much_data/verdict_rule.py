"""Chapter 4's verdict rule (covlib.analyses.equivalence), stated once, and the rules that came before it, each
applied to today's fits so that a reader sees which verdicts every change of the rule moved."""
from __future__ import annotations

import pandas as pd

from covlib.analyses.equivalence import CLAIM_RULE, EQUIVALENCE_RULE
from covlib.figures.give_up_rule import reader_name
from covlib.figures.tables import ReaderTable, reader_table
from covlib.search.verdicts import RULE_VERSIONS, VERDICT_WORDS, verdicts_by_version


def rule_text() -> str:
    """The rule for exponents and the rule for the paper's comparative claims, as the chapter states them."""
    return EQUIVALENCE_RULE + "\n\n" + CLAIM_RULE


def history_view() -> ReaderTable:
    """The earlier rules, each with its commit, what it changed and what the change moved when it was made."""
    rows = pd.DataFrame([{k: v[k] for k in ("version", "commit", "date", "rule", "moved when made")}
                         for v in RULE_VERSIONS])
    return reader_table(rows, {"version": "version", "commit": "commit", "date": "date", "rule": "reproduced when",
                               "moved when made": "what the change moved when it was made"},
                        caption="The verdict rules before this one, in the order they were written")


def history_verdicts_view(exponents: pd.DataFrame) -> ReaderTable:
    """What each earlier rule says on today's fits (the authors' rule or the floor, as each rule read them)."""
    table = verdicts_by_version(exponents)
    table["exponent"] = table["exponent"].map(reader_name)
    for col in table.columns[1:]:
        table[col] = table[col].map(VERDICT_WORDS)
    return reader_table(table, {c: c for c in table.columns}, caption="Each earlier rule applied to today's fits")
