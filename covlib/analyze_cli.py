"""`covlib analyze iicg|trace|lens RUN_DIR`: chapter 5's analyses of a trained run, as long CSV tables.

    covlib analyze iicg RUN_DIR --group b [--split type_0] [--k-group k<3] [--checkpoint NAME] --out iicg.csv
    covlib analyze trace RUN_DIR [--variant x2 x1] [--metric rank|prob] [--split train_inferred] --out trace.csv
    covlib analyze lens RUN_DIR [--split type_0] --out lens.csv

Layer 0 is the embedding output and layer L the last block's output; position is x1..xm.
"""
from __future__ import annotations

import argparse
from pathlib import Path


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
    from covlib import mechanisms as mc
    from covlib.io import write_json_atomic

    model, ds, tables = mc.open_run(args.run_dir, args.dataset, args.checkpoint)
    if args.analysis == "iicg":
        table = mc.iicg_table(model, ds, tables, args.group, args.split, args.k_group or [None], args.max_items)
        cols = ["split", "group_by", "layer", "position", "iicg", "within", "between", "k_group", "items", "groups"]
    elif args.analysis == "trace":
        inputs = ds.test.inputs[mc.split_items(ds, args.split)][: args.max_items * 4]
        table = mc.trace_table(model, tables, inputs, args.variant, args.seed, args.max_pairs)
        if args.metric != "both":
            table = table[table["metric"] == args.metric]
        cols = ["variant", "metric", "layer", "position", "value", "pairs"]
    else:
        inputs = ds.test.inputs[mc.split_items(ds, args.split)][: args.max_items]
        values = tables.values(inputs)
        targets = {name: values[name] for name in (*tables.task.bridges, "t")}
        table = mc.logit_lens(model, mc.residual_streams(model, inputs), targets)
        cols = ["target", "layer", "position", "rank", "prob", "top1"]
    write_json_atomic(Path(args.out), table[cols].to_csv(index=False, float_format="%.6g"))
    print(f"wrote {len(table)} rows to {args.out}")
    return 0
