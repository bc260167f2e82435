"""The options of `covlib coverage` (its work: covlib.cli.coverage)."""
from __future__ import annotations

import argparse

from covlib.coverage.folder_coverage import MODES


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("dataset", metavar="DATASET_DIR", help="a dataset folder (covlib's or the authors' scripts')")
    p.add_argument("--mode", choices=MODES, default="faithful",
                   help="faithful: the paper's definition (default); authors: their script's algorithm")
    p.add_argument("--max-k", type=int, default=None,
                   help="cap the sweep at K (k-cutoffs never exceed it); default: the full sweep, table to k=8 or more")
