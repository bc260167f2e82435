"""`covlib analyze`: IICG, causal tracing and logit lens of a run."""
from __future__ import annotations

import argparse
from pathlib import Path

from covlib.analyses.iicg import iicg_table
from covlib.analyses.lens import logit_lens
from covlib.analyses.residuals import open_run, residual_streams, split_items
from covlib.analyses.tracing import trace_table
from covlib.base.files import write_text_atomic


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


def run(args: argparse.Namespace) -> int:
    model, ds, tables = open_run(args.run_dir, args.dataset, args.checkpoint)
    if args.analysis == "iicg":
        table = iicg_table(model, ds, tables, args.group, args.split, args.k_group or [None], args.max_items)
        cols = ["split", "group_by", "layer", "position", "iicg", "within", "between", "k_group", "items", "groups"]
    elif args.analysis == "trace":
        inputs = ds.test.inputs[split_items(ds, args.split)][: args.max_items * 4]
        table = trace_table(model, tables, inputs, args.variant, args.seed, args.max_pairs)
        if args.metric != "both":
            table = table[table["metric"] == args.metric]
        cols = ["variant", "metric", "layer", "position", "value", "pairs"]
    else:
        inputs = ds.test.inputs[split_items(ds, args.split)][: args.max_items]
        values = tables.values(inputs)
        targets = {name: values[name] for name in (*tables.task.bridges, "t")}
        table = logit_lens(model, residual_streams(model, inputs), targets)
        cols = ["target", "layer", "position", "rank", "prob", "top1"]
    write_text_atomic(Path(args.out), table[cols].to_csv(index=False, float_format="%.6g"))
    print(f"wrote {len(table)} rows to {args.out}")
    return 0
