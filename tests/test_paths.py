"""How a path is shown to readers (covlib.base.paths.readable_path): never the machine's absolute path."""
from __future__ import annotations

from covlib.base.paths import REPO, readable_path


def test_a_path_inside_the_repository_is_shown_relative_to_it():
    assert readable_path(REPO / "data" / "scaling" / "probes.csv") == "data/scaling/probes.csv"


def test_a_path_outside_the_repository_is_shown_by_its_name_only(tmp_path):
    shown = readable_path(tmp_path / "twohop.30.4000.diff-f12.inf")
    assert shown == "twohop.30.4000.diff-f12.inf" and str(tmp_path) not in shown
    assert readable_path("build/datasets/x") == "build/datasets/x"  # a relative path is already readable
