"""`covlib coverage`: annotate a dataset with k-cutoffs (it imports neither pandas nor scipy: they took more than
half of its time)."""
from __future__ import annotations

import argparse
import time

from covlib.coverage.folder_coverage import MODES, annotate_folder, print_coverage


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("dataset", metavar="DATASET_DIR", help="a dataset folder (covlib's or the authors' scripts')")
    p.add_argument("--mode", choices=MODES, default="faithful",
                   help="faithful: the paper's definition (default); authors: their script's algorithm")
    p.add_argument("--max-k", type=int, default=None,
                   help="cap the sweep at K (k-cutoffs never exceed it); default: the full sweep, table to k=8 or more")


def run(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    rows = annotate_folder(args.dataset, mode=args.mode, max_k=args.max_k)
    print(f"coverage ({args.mode}) of {args.dataset}: percent of test items covered at each k "
          f"({time.perf_counter() - start:.2f} s)")
    print_coverage(rows)
    print("wrote test_annotated.json and coverage.json")
    return 0
