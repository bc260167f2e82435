"""`covlib train`: train a model on a dataset folder."""
from __future__ import annotations

import argparse

from covlib.base.errors import CovlibError
from covlib.training.config import PRESETS
from covlib.training.loop import train
from covlib.training.shapes import MODEL_SHAPES, model_overrides

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


def overrides_from_args(args: argparse.Namespace) -> dict:
    """The overrides dict that train() takes, from explicit flags and --set pairs."""

    out: dict = model_overrides(args.shape) if args.shape else {}
    out |= {name: getattr(args, name) for name in FLAGS if getattr(args, name) is not None}
    if args.early_stop:
        out["early_stop"] = True
    if args.threshold is not None:
        out["threshold"] = args.threshold
    for pair in args.set:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise CovlibError(f"--set takes KEY=VALUE, got {pair!r}")
        out[key.strip()] = value.strip()
    return out


def run(args: argparse.Namespace) -> int:
    result = train(args.dataset_dir, args.out, preset=args.preset, overrides=overrides_from_args(args),
                   resume=args.resume, progress=not args.no_progress)
    final = result.final
    print(f"{result.run_dir}: step {final.get('step')}, {final.get('elapsed', 0.0):.1f} s, stopped by {result.stopped}")
    types = [k.split("/", 1)[1] for k in final if k.startswith("acc/") and not k[4:].startswith("k")]
    cols = [c for c in ("acc", "answer_acc", "greedy", "loss") if any(f"{c}/{t}" in final for t in types)]
    print(f"{'type':<16}" + "".join(f"{c:>12}" for c in cols))
    for t in types:
        print(f"{t:<16}" + "".join(f"{final[f'{c}/{t}']:>12.4f}" if f"{c}/{t}" in final else f"{'':>12}" for c in cols))
    groups = [k for k in final if k.startswith("acc/k")]
    if groups:
        print("type_0 by k-cutoff: " + ", ".join(f"{k[4:]} {final[k]:.3f}" for k in groups))
    thr = result.config.train.threshold
    step = result.first_step_type0_above
    print(f"first step with type_0 accuracy >= {thr:g}: {step if step is not None else 'not reached'}")
    return 0
