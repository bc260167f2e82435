"""The options of `covlib sweep` (its work: covlib.cli.sweep)."""
from __future__ import annotations

import argparse


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("notebook", help="a chapter, e.g. notebooks/01_tasks_and_data.py")
    p.add_argument("-p", "--param", nargs="+", action="append", default=[], metavar=("NAME", "VALUE"),
                   help="a parameter and its values (JSON literals when possible); repeat for a grid")
    p.add_argument("--jobs", "-j", type=int, default=1, help="worker processes (one kernel each)")
    p.add_argument("--out", required=True, help="sweep folder; one sub-folder per config")
    p.add_argument("--timeout", type=float, default=None, help="seconds allowed per cell")
    p.add_argument("--kernel", default="python3", help="Jupyter kernel name")
    p.add_argument("--executor", choices=["local", "slurm"], default="local",
                   help="local: a pool of --jobs processes; slurm: one job array task per config (submitit)")
    p.add_argument("--partition", default=None, help="SLURM partition (default: the cluster's default)")
    p.add_argument("--time-min", type=int, default=60, help="SLURM time limit per config, minutes")
    p.add_argument("--cpus", type=int, default=1, help="SLURM cpus per task")
