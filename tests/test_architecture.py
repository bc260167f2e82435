"""covlib is layered (README, Architecture): imports point only downward, chapters do not import each
other, there is no import circle, and covlib's own imports sit at the top of each module."""
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
    parts = module.split(".")
    return -1 if len(parts) == 1 else LAYERS.index(parts[1])


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
