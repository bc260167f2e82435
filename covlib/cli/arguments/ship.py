"""The options of `covlib ship` (its work: covlib.cli.ship)."""
from __future__ import annotations

import argparse

SETS = {"ambiguity": "covlib.chapters.ch06_path_ambiguity.shipped", "cot": "covlib.chapters.ch07_chain_of_thought.shipped"}  # set -> module with shipped_runs() and DATA_DIR


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("set", choices=sorted(SETS), help="ambiguity (chapter 6) or cot (chapter 7)")
    p.add_argument("--only", nargs="+", metavar="NAME", default=None, help="train only these models of the set")
    p.add_argument("--preset", choices=["default", "smoke"], default="default",
                   help="default (the book's models) or smoke (tiny, seconds; needs --dest)")
    p.add_argument("--dest", default=None, help="archive folder (default: the set's folder under data/)")
    p.add_argument("--work", default="build/ship", help="where datasets and run folders are kept (default build/ship)")
    p.add_argument("--retrain", action="store_true", help="train from scratch even if a run exists")
    p.add_argument("--list", action="store_true", help="list the set's models and whether each is archived; no training")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
