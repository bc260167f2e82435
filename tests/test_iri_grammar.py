"""covlib defers rfc3987-syntax's IRI grammar (about 2 s at every start of a process that imports altair) and
changes no answer of jsonschema's "iri" check. Each case runs in a fresh interpreter: the deferral acts at import."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from covlib.base import iri_grammar

IRIS = ["https://example.org/r\u00e9sum\u00e9?q=1#top", "urn:isbn:0451450523", "not an iri", "http://exa mple.org/"]
CHECK = """
import json, sys
{first}
import jsonschema
checker = jsonschema.FormatChecker()
before = "lark" in sys.modules
answers = [checker.conforms(iri, "iri") for iri in json.loads(sys.argv[1])]
print(json.dumps({{"grammar_at_import": before, "answers": answers, "grammar_after": "lark" in sys.modules}}))
"""


def run(first: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHECK.format(first=first), json.dumps(IRIS)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


@pytest.mark.skipif(iri_grammar.importlib.util.find_spec(iri_grammar.MODULE) is None,
                    reason="rfc3987-syntax is not installed: nothing to defer")
def test_the_grammar_waits_for_the_first_iri_check_and_the_answers_do_not_change():
    plain, deferred = run(""), run("import covlib, altair")
    assert plain["grammar_at_import"] and not deferred["grammar_at_import"]
    assert deferred["answers"] == plain["answers"] and {True, False} <= set(plain["answers"])
    assert deferred["grammar_after"]  # the first check imported the real module


def test_nothing_is_deferred_when_the_module_is_missing_or_already_imported(monkeypatch):
    monkeypatch.setattr(iri_grammar, "MODULE", "no_such_module_for_covlib")
    assert iri_grammar.defer_iri_grammar() is False and "no_such_module_for_covlib" not in sys.modules
    monkeypatch.setattr(iri_grammar, "MODULE", "json")  # imported: left as it is
    assert iri_grammar.defer_iri_grammar() is False and sys.modules["json"] is json
