"""Speed of chapter 5's analyses on the book's shipped model (4 layers, width 128; twohop N=30).

Prints seconds for: the residual streams of 2,000 ID test items; a full IICG map (all layers x
positions) for three groupings (b, t, (b,x2)) of those items; a causal-tracing map (all layers x
positions, rank and prob) for 1,000 (clean, corrupted) pairs; the logit lens of the 2,000 items.
"""
from __future__ import annotations

import time

from covlib.analyses.iicg import iicg_map, item_groups
from covlib.analyses.lens import logit_lens
from covlib.analyses.residuals import open_run, residual_streams, split_items
from covlib.analyses.tracing import corrupted_pairs, trace_map
from covlib.base.paths import repository_path
from covlib.coverage.annotate import annotate_dataset
from covlib.tasks.datasets import DatasetConfig, ensure_dataset
from covlib.training.shipped import EDGE_RUN


def main() -> None:
    cfg = EDGE_RUN["dataset"]
    ds_dir = ensure_dataset(DatasetConfig(cfg["task"], cfg["num_tokens"], cfg["n_train"], seed=cfg["seed"]),
                            repository_path("build/datasets"))
    annotate_dataset(ds_dir, max_k=8)
    t0 = time.perf_counter()
    model, ds, tables = open_run(repository_path(EDGE_RUN["archive"]), ds_dir, "weights/final.pt")
    print(f"load model and tables: {time.perf_counter() - t0:.2f} s")
    inputs = ds.test.inputs[split_items(ds, "type_0")][:2000]
    t0 = time.perf_counter()
    resid = residual_streams(model, inputs)
    t_resid = time.perf_counter() - t0
    t0 = time.perf_counter()
    for key in ("b", "t", "b,x2"):
        kept, labels = item_groups(tables, inputs, key)
        iicg_map(resid[kept], labels)
    t_iicg = time.perf_counter() - t0
    print(f"residual streams, {len(inputs)} items x {resid.shape[1]} layers x {resid.shape[2]} positions: {t_resid:.2f} s")
    print(f"IICG maps for 3 groupings (b, t, b,x2): {t_iicg:.2f} s (total with residuals {t_resid + t_iicg:.2f} s)")
    train_items = ds.test.inputs[split_items(ds, "train_inferred")]
    clean, corrupted = corrupted_pairs(tables, train_items, "x2")
    clean, corrupted = clean[:1000], corrupted[:1000]
    t0 = time.perf_counter()
    res = trace_map(model, clean, corrupted, (tables.values(clean)["t"], tables.values(corrupted)["t"]))
    print(f"causal tracing map ({res['rank'].shape[0]} layers x {res['rank'].shape[1]} positions, "
          f"{len(clean)} pairs, {res['pairs']} traced): {time.perf_counter() - t0:.2f} s")
    values = tables.values(inputs)
    t0 = time.perf_counter()
    logit_lens(model, resid, {"b": values["b1"], "t": values["t"]})
    print(f"logit lens of {len(inputs)} items: {time.perf_counter() - t0:.2f} s")


if __name__ == "__main__":
    main()
