"""The verdicts read as one family (Bonferroni). The book's rule (covlib.analyses.equivalence) judges each exponent
and each claim on its own, at the levels fixed before the data: a 90% interval for equivalence, a 95% interval for
an exclusion or a sign. Seven exponents and six claims are judged at once, so one in twenty of those verdicts could
be decided by chance alone. Read as one family, each test is made at a level that holds for all of them together:
the same rule with the equivalence interval at 1 - 2 alpha / m and the exclusion interval at 1 - alpha / m, for m
tests of the family and alpha 0.05. This reading was added after the data; it changes no verdict of the rule, and
the book states it beside them."""
from __future__ import annotations

FAMILY_ALPHA = 0.05


def family_levels(tests: int, alpha: float = FAMILY_ALPHA) -> dict[str, float]:
    """The levels of the rule's two intervals for one of ``tests`` tests read together (Bonferroni): fam_equiv, at
    which an equivalence is read (the rule's 90% for a single test), and fam_excl, at which an exclusion or a sign
    is read (its 95%)."""
    if tests < 1:
        raise ValueError(f"tests={tests}: a family holds at least one test")
    return {"fam_equiv": 1 - 2 * alpha / tests, "fam_excl": 1 - alpha / tests}
