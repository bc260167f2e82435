"""Defer the one import that costs every covlib process about two seconds: the IRI grammar of rfc3987-syntax.

altair and nbformat import jsonschema, and jsonschema imports `rfc3987_syntax` (pulled in by Jupyter's
`jsonschema[format-nongpl]`) to offer an "iri" format check. That module builds some thirty Earley parsers when it
is imported: 2.2-2.4 s of CPU on an AMD EPYC (2026-11-28), in every chapter's kernel, every `covlib` command that draws
a chart and every papermill worker, though nothing in the book ever checks an IRI
(https://github.com/python-jsonschema/jsonschema/issues/1428).

``defer_iri_grammar`` puts a stand-in under that module's name. jsonschema takes ``is_valid_syntax`` from it as
before; the real module is imported on the first call of that function, or of any other name, so a program that
does check IRIs gets the same answers, later.
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
import types

MODULE = "rfc3987_syntax"


def _real_module() -> types.ModuleType:
    """Swap the stand-in for the real module (imported now, once) and return it."""
    stand_in = sys.modules.get(MODULE)
    ours = getattr(stand_in, "__covlib_stand_in__", False)
    if ours:
        del sys.modules[MODULE]
    try:
        return importlib.import_module(MODULE)
    except BaseException:
        if ours:  # put back only what was taken out; the next call tries again
            sys.modules[MODULE] = stand_in
        raise


def is_valid_syntax(term: str, value: str) -> bool:
    """rfc3987_syntax.is_valid_syntax, importing the real module on first use."""
    return _real_module().is_valid_syntax(term, value)


def _any_other_name(name: str):
    if name.startswith("__"):  # import machinery probing dunders must not pay for the grammar
        raise AttributeError(name)
    return getattr(_real_module(), name)


def defer_iri_grammar() -> bool:
    """Install the stand-in unless the real module is already imported or not installed; True if installed."""
    spec = None if MODULE in sys.modules else importlib.util.find_spec(MODULE)
    if spec is None:
        return False
    stand_in = types.ModuleType(MODULE, "stand-in for rfc3987_syntax until first use (covlib.base.iri_grammar)")
    stand_in.__spec__ = spec  # the real module's, so that find_spec still finds it
    stand_in.__covlib_stand_in__ = True
    stand_in.is_valid_syntax = is_valid_syntax
    stand_in.__getattr__ = _any_other_name  # PEP 562: names the stand-in lacks come from the real module
    sys.modules[MODULE] = stand_in
    return True
