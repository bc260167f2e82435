"""The conda environment offers exactly the dependencies pyproject.toml declares."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = pytest.importorskip("tomli")


def _normalise(req: str) -> str:
    return req.replace(" ", "").lower()


def test_environment_yml_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    declared = {_normalise(r) for r in project["dependencies"]}
    offered = {_normalise(r) for r in pip_section if not r.startswith("-e")}
    assert offered == declared, f"only in environment.yml: {offered - declared}; only in pyproject: {declared - offered}"
    python = next(d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python"))
    assert python.replace("python", "") == project["requires-python"]


def test_torch_is_pinned_to_the_cpu_wheel_release():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "torch==2.13.*" in project["dependencies"]
    assert 'pip install --quiet "torch==2.13.0"' in (ROOT / "Makefile").read_text()
