"""The options of `covlib analyze` (its work: covlib.cli.analyze)."""
from __future__ import annotations

import argparse


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="analysis", required=True, metavar="ANALYSIS")
    helps = {"iicg": "intra-inter cosine gap of residual streams, grouped by a hidden value",
             "trace": "causal tracing: patch a corrupted residual into the clean run",
             "lens": "logit lens: is the bridge (or answer) readable from each layer and position"}
    for name, text in helps.items():
        s = sub.add_parser(name, help=text, description=text)
        s.add_argument("run_dir", help="a run folder (covlib train), or a shipped one under data/runs/")
        s.add_argument("--dataset", default=None, help="its dataset folder (default: the one in config.json)")
        s.add_argument("--checkpoint", default=None,
                       help="weights to load: checkpoints/step_NNNNNN.pt or weights/NAME.pt (default: final)")
        s.add_argument("--out", required=True, help="CSV file to write")
        s.add_argument("--max-items", type=int, default=2000)
        if name == "iicg":
            s.add_argument("--group", nargs="+", required=True, help="keys: b, t, x2, b,x2 (nontree also b,x1)")
            s.add_argument("--split", nargs="+", default=["type_0"], help="test types, or id_train / id_test")
            s.add_argument("--k-group", nargs="+", default=None, help="restrict type_0 to k<3, k=3, k>3")
        elif name == "trace":
            s.add_argument("--variant", nargs="+", default=["x2"], help="x2, x1, x2_keep_b, x2_change_b")
            s.add_argument("--metric", choices=["rank", "prob", "both"], default="both")
            s.add_argument("--split", default="train_inferred", help="the clean inputs' test type")
            s.add_argument("--max-pairs", type=int, default=1000)
            s.add_argument("--seed", type=int, default=0)
        else:
            s.add_argument("--split", default="type_0")
