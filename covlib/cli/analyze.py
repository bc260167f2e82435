"""`covlib analyze`: IICG, causal tracing and logit lens of a run."""
from __future__ import annotations

import argparse
from pathlib import Path

from covlib.analyses.iicg import iicg_table
from covlib.analyses.lens import logit_lens
from covlib.analyses.residuals import open_run, residual_streams, split_items
from covlib.analyses.tracing import trace_table
from covlib.base.files import write_text_atomic


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
