"""`covlib train`: train a model on a dataset folder."""
from __future__ import annotations

import argparse

from covlib.base.errors import CovlibError
from covlib.cli.arguments.train import FLAGS
from covlib.training.loop import train
from covlib.training.shapes import model_overrides


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
