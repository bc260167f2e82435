"""`covlib coverage`: annotate a dataset with k-cutoffs (it imports neither pandas nor scipy: they took more than
half of its time)."""
from __future__ import annotations

import argparse
import time

from covlib.coverage.folder_coverage import annotate_folder, print_coverage


def run(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    rows = annotate_folder(args.dataset, mode=args.mode, max_k=args.max_k)
    print(f"coverage ({args.mode}) of {args.dataset}: percent of test items covered at each k "
          f"({time.perf_counter() - start:.2f} s)")
    print_coverage(rows)
    print("wrote test_annotated.json and coverage.json")
    return 0
