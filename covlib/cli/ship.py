"""`covlib ship`: train and archive the models chapters 6 and 7 analyse."""
from __future__ import annotations

import argparse
import importlib
import time
from pathlib import Path

from covlib.base.errors import CovlibError
from covlib.base.paths import repository_path
from covlib.cli.arguments.ship import SETS
from covlib.training.shipped import ship_run, shipped_ready


def run(args: argparse.Namespace) -> int:
    module = importlib.import_module(SETS[args.set])
    runs = module.shipped_runs(args.preset)
    if args.preset != "default" and args.dest is None:
        raise CovlibError("--preset smoke needs --dest: the folders under data/ hold the book's default models")
    dest = Path(args.dest) if args.dest else repository_path(module.DATA_DIR)
    unknown = sorted(set(args.only or []) - set(runs))
    if unknown:
        raise CovlibError(f"--only {' '.join(unknown)}: no such model in {args.set}; its models: {', '.join(runs)}")
    chosen = [runs[name] for name in (args.only or runs)]
    if args.list:
        for r in chosen:
            state = "archived" if shipped_ready(r, dest) else "missing"
            print(f"{r.name:<20} {state:<9} {dest / r.folder}  ({r.overrides.get('steps')} steps; {r.command})")
        return 0
    for r in chosen:
        t0 = time.perf_counter()
        folder = ship_run(r, dest, args.work, retrain=args.retrain, progress=not args.no_progress)
        print(f"{r.name}: archived in {folder} ({(time.perf_counter() - t0) / 60:.1f} min)", flush=True)
    return 0
