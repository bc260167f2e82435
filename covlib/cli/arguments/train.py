"""The options of `covlib train` (its work: covlib.cli.train)."""
from __future__ import annotations

import argparse

from covlib.base.presets import PRESETS
from covlib.training.shapes import MODEL_SHAPES

# explicit flags for the knobs people change most; anything else goes through --set key=value
FLAGS = {
    "steps": int, "seed": int, "batch_size": int, "lr": float, "weight_decay": float, "warmup_steps": int,
    "eval_every": int, "checkpoint_every": int, "n_layers": int, "d_model": int, "n_heads": int,
}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("dataset_dir", help="a dataset folder made by `covlib generate`")
    p.add_argument("--out", required=True, help="run folder (config.json, metrics.jsonl, checkpoints, model.pt)")
    p.add_argument("--preset", default="default", help=f"one of: {', '.join(PRESETS)} (default: default)")
    p.add_argument("--resume", action="store_true", help="continue the run in --out from its last checkpoint")
    p.add_argument("--shape", default=None, metavar="NAME",
                   help=f"a named model shape, as the search takes: {', '.join(MODEL_SHAPES)} (flags and --set override it)")
    for name, kind in FLAGS.items():
        p.add_argument("--" + name.replace("_", "-"), type=kind, default=None, help=f"override the preset's {name}")
    p.add_argument("--early-stop", action="store_true", help="stop once type_0 accuracy reaches the threshold")
    p.add_argument("--threshold", type=float, default=None, help="type_0 accuracy for --early-stop (default 0.99)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override any model or training setting, e.g. --set d_mlp=256 --set betas=[0.9,0.999]; "
                        "--set family=mamba trains a Mamba model (settings n_layers, d_model, d_state, expand, d_conv)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
