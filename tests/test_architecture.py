"""covlib is layered (README, Architecture): imports point only downward, chapters do not import each
other, there is no import circle, and covlib's own imports sit at the top of each module; each chapter notebook
imports its module by name (``import covlib.chapters.ch04_how_much_data as ch04``), never by a star."""
from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "covlib"
LAYERS = ["base", "tasks", "coverage", "training", "analyses", "search", "figures", "chapters", "book", "cli"]


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def layer(module: str) -> int:
    """The package root sits in the base layer: it runs first in every process (covlib.base.iri_grammar)."""
    parts = module.split(".")
    return 0 if len(parts) == 1 else LAYERS.index(parts[1])


def chapter(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "chapters" else None


def covlib_imports(path: Path) -> list[tuple[str, int, bool]]:
    """(imported covlib module, line, at module level) for every covlib import in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = {id(node) for node in tree.body}
    found = []
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "covlib":
            for alias in node.names:  # `from covlib.x import y` names module covlib.x.y when y is a module
                sub = f"{node.module}.{alias.name}"
                targets.append(sub if sub in MODULES else node.module)
        elif isinstance(node, ast.Import):
            targets = [a.name for a in node.names if a.name.split(".")[0] == "covlib"]
        found += [(t, node.lineno, id(node) in top) for t in targets]
    return found


def import_graph() -> nx.DiGraph:
    graph = nx.DiGraph()
    for name, path in MODULES.items():
        graph.add_node(name)
        for target, _, _ in covlib_imports(path):
            if target != name:
                graph.add_edge(name, target)
    return graph


def test_every_module_sits_in_a_known_layer():
    unknown = [m for m in MODULES if m != "covlib" and m.split(".")[1] not in LAYERS]
    assert not unknown, f"modules outside the layers {LAYERS}: {unknown}"


def test_imports_point_downward():
    upward = [f"{name} (layer {LAYERS[layer(name)]}) imports {target} (layer {LAYERS[layer(target)]}) at line {line}"
              for name, path in MODULES.items() for target, line, _ in covlib_imports(path)
              if layer(target) > layer(name)]
    assert not upward, "\n".join(upward)


def test_no_chapter_imports_another():
    crossing = [f"{name} imports {target}" for name, path in MODULES.items() for target, _, _ in covlib_imports(path)
                if chapter(name) and chapter(target) and chapter(name) != chapter(target)]
    assert not crossing, "\n".join(crossing)


def test_no_import_circle():
    cycles = list(nx.simple_cycles(import_graph()))
    assert not cycles, f"import circles: {cycles[:5]}"


def test_covlib_imports_sit_at_the_top():
    hidden = [f"{name}:{line} imports {target} inside a function" for name, path in MODULES.items()
              for target, line, at_top in covlib_imports(path) if not at_top]
    assert not hidden, "\n".join(hidden)


def test_a_chapter_package_is_one_chapter():
    """A chapter may be a package (covlib/chapters/chNN_slug/): its submodules are walked, all belong to that
    chapter, and they import each other without counting as one chapter importing another."""
    packages = {chapter(m) for m, path in MODULES.items() if chapter(m) and path.name == "__init__.py"}
    assert "ch07_chain_of_thought" in packages, f"chapter packages found: {sorted(packages)}"
    for package in packages:
        members = [m for m in MODULES if chapter(m) == package]
        assert len(members) > 1, f"{package}: no submodules walked"
        assert all(m.startswith(f"covlib.chapters.{package}") for m in members)
    within = [(name, target) for name, path in MODULES.items() for target, _, _ in covlib_imports(path)
              if chapter(name) in packages and chapter(target) == chapter(name) and target != name]
    assert within, "the submodules of a chapter package import each other"


@pytest.mark.parametrize("violation", ["upward", "chapter", "chapter package", "circle"])
def test_the_checks_catch_a_violation(violation, monkeypatch, tmp_path):
    """Each check fails on a planted violation (so the tests above can fail)."""
    edges = {"upward": ("covlib.base.errors", "covlib.cli.main"),
             "chapter": ("covlib.chapters.ch06_path_ambiguity.shipped",
                         "covlib.chapters.ch07_chain_of_thought.shipped"),
             "chapter package": ("covlib.chapters.ch07_chain_of_thought.greedy",
                                 "covlib.chapters.ch06_path_ambiguity.coverage"),
             "circle": ("covlib.tasks.graphs", "covlib.tasks.datasets")}
    source, target = edges[violation]
    assert target in MODULES  # the planted import names a module that exists
    planted = tmp_path / "planted.py"
    planted.write_text(MODULES[source].read_text(encoding="utf-8") + f"\nimport {target}\n", encoding="utf-8")
    monkeypatch.setitem(MODULES, source, planted)
    check = {"upward": test_imports_point_downward, "chapter": test_no_chapter_imports_another,
             "chapter package": test_no_chapter_imports_another, "circle": test_no_import_circle}[violation]
    with pytest.raises(AssertionError):
        check()


NOTEBOOKS = PACKAGE.parent / "notebooks"
CHAPTER_NOTEBOOKS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.py"))


def import_head_problems(path: Path) -> list[str]:
    """What would take a chapter's names more than one hop from their code: a star import anywhere, no
    ``import covlib.chapters.chNN_slug as chNN`` before its set-up call, or the chapter's code imported any other
    way (every call to it then reads ``chNN.x`` or ``chNN.module.x``, as d2l's cells read ``d2l.x``)."""
    own, alias = f"covlib.chapters.ch{path.stem}", f"ch{path.name[:2]}"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    setup = min((node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call)
                 and isinstance(node.func, ast.Name) and node.func.id == "setup_chapter"), default=0)
    problems, named = [], False
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if any(a.name == "*" for a in node.names):
                problems.append(f"line {node.lineno}: a star import from {node.module}")
            elif (node.module or "").startswith("covlib.chapters"):
                problems.append(f"line {node.lineno}: from {node.module} import ... (call it through {alias} instead)")
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name == own and a.asname == alias and node.lineno < setup:
                    named = True
                elif a.name.startswith("covlib.chapters"):
                    problems.append(f"line {node.lineno}: import {a.name} (only `import {own} as {alias}`, "
                                    "before the set-up call)")
    if not named:
        problems.append(f"its import head does not name its module: `import {own} as {alias}`")
    return problems


@pytest.mark.parametrize("notebook", CHAPTER_NOTEBOOKS, ids=[p.stem for p in CHAPTER_NOTEBOOKS])
def test_a_chapter_imports_its_module_by_name_and_nothing_by_star(notebook: Path):
    assert len(CHAPTER_NOTEBOOKS) == 10
    problems = import_head_problems(notebook)
    assert not problems, f"{notebook.name}: " + "; ".join(problems)


@pytest.mark.parametrize("head", ["from covlib.chapters.ch01_tasks_and_data import *",
                                  "from covlib.chapters import ch01_tasks_and_data as tasks_and_data",
                                  "import covlib.chapters.ch01_tasks_and_data as tasks_and_data",
                                  "import covlib.chapters.ch01_tasks_and_data as ch01\nfrom pandas import *"])
def test_the_import_head_check_catches_a_violation(head: str, tmp_path):
    planted = tmp_path / "01_tasks_and_data.py"
    planted.write_text(f"{head}\nchapter = setup_chapter('01', 'smoke')\n", encoding="utf-8")
    assert import_head_problems(planted)
    planted.write_text("import covlib.chapters.ch01_tasks_and_data as ch01\nchapter = setup_chapter('01', 'smoke')\n",
                       encoding="utf-8")
    assert not import_head_problems(planted)
