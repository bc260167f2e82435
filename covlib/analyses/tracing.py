"""Causal tracing (activation patching) through TransformerLens hooks."""
from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from covlib.analyses.residuals import TaskTables, hook_names, require_transformer_model
from covlib.base.errors import CovlibError

TRACE_VARIANTS = {
    "x2": "change x2 so that the bridge b and the answer t change",
    "x1": "change x1 so that the bridge b and the answer t change",
    "x2_keep_b": "change x2 keeping the bridge b (non-tree: isolates the direct x2 path)",
    "x2_change_b": "change x2 changing the bridge b (non-tree)",
}
CHANGED_POSITION = {"x1": 0, "x2": 1, "x2_keep_b": 1, "x2_change_b": 1}  # the input each variant changes


def corrupted_pairs(tables: TaskTables, inputs: np.ndarray, variant: str = "x2", seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(clean, corrupted) input pairs: each clean input with one position changed as ``variant`` says,
    so that the answer changes and every fact of the corrupted input is seen in training. Clean
    inputs with no such change are dropped; the change is drawn uniformly among the valid ones."""
    if variant not in TRACE_VARIANTS:
        raise CovlibError(f"unknown variant {variant!r}; choose one of: {', '.join(TRACE_VARIANTS)}")
    task = tables.task
    pos = CHANGED_POSITION[variant]
    n_tok = tables.tables[task.table_names(tables.same_functions)[0]].shape[0]
    clean = np.asarray(inputs)
    clean = clean[tables.all_facts_seen(clean)]
    base = tables.values(clean)
    cand = np.repeat(clean[:, None, :], n_tok, axis=1)  # (n, N, m): every replacement token
    cand[:, :, pos] = np.arange(n_tok)[None, :]
    flat = cand.reshape(-1, clean.shape[1])
    vals = tables.values(flat)
    b_key = task.bridges[0] if task.bridges else "t"
    b_new = vals[b_key].reshape(len(clean), n_tok)
    t_new = vals["t"].reshape(len(clean), n_tok)
    ok = tables.all_facts_seen(flat).reshape(len(clean), n_tok)
    ok &= t_new != base["t"][:, None]
    ok &= np.arange(n_tok)[None, :] != clean[:, pos][:, None]
    if variant == "x2_keep_b":
        ok &= b_new == base[b_key][:, None]
    else:
        ok &= b_new != base[b_key][:, None]
    rng = np.random.default_rng(seed)
    keep = ok.any(1)
    scores = np.where(ok, rng.random(ok.shape), -1.0)
    choice = scores.argmax(1)
    corrupted = cand[np.arange(len(clean)), choice]
    return clean[keep], corrupted[keep]


@torch.no_grad()
def trace_map(model, clean: np.ndarray, corrupted: np.ndarray, answers: tuple[np.ndarray, np.ndarray] | None = None,
              batch_size: int = 1024) -> dict[str, np.ndarray]:
    """Activation patching: the corrupted residual at one (layer, position) put into the clean run.

    Returns, per (layer, position): ``rank`` = share of pairs whose prediction becomes the corrupted
    answer t'; ``prob`` = mean over pairs of (p_patched(t') - p_clean(t')) / (p_corrupt(t') - p_clean(t')).
    With ``answers`` (true t of the clean and of the corrupted inputs), only pairs the model gets
    right on both are traced and t' is the true corrupted answer; without, t' is the model's own
    prediction on the corrupted input and pairs where it predicts the same for both are left out."""
    if len(clean) == 0:
        raise CovlibError("no (clean, corrupted) pair to trace: no input of the selection has a valid corruption")
    require_transformer_model(model)
    device = next(model.parameters()).device
    names = hook_names(model.cfg.n_layers)
    c = torch.as_tensor(np.asarray(clean), dtype=torch.long, device=device)
    r = torch.as_tensor(np.asarray(corrupted), dtype=torch.long, device=device)
    m = c.shape[1]
    logits_c = _last_logits(model, c, batch_size)
    logits_r = _last_logits(model, r, batch_size)
    t_c, t_r = logits_c.argmax(-1), logits_r.argmax(-1)
    if answers is not None:
        true_c, true_r = (torch.as_tensor(np.asarray(a), dtype=torch.long, device=device) for a in answers)
        keep = (t_c == true_c) & (t_r == true_r) & (true_c != true_r)
    else:
        keep = t_c != t_r
    c, r, logits_c, logits_r, t_r = c[keep], r[keep], logits_c[keep], logits_r[keep], t_r[keep]
    if len(c) == 0:
        raise CovlibError("no (clean, corrupted) pair left to trace: the model gets none of them right on both inputs")
    target = t_r  # the corrupted run's answer t'
    p_clean = logits_c.softmax(-1).gather(1, target[:, None])[:, 0]
    p_corr = logits_r.softmax(-1).gather(1, target[:, None])[:, 0]
    rank = np.zeros((len(names), m))
    prob = np.zeros((len(names), m))
    for start in range(0, len(c), batch_size):
        cb, rb = c[start : start + batch_size], r[start : start + batch_size]
        _, cache = model.run_with_cache(rb, names_filter=lambda n: n in set(names))
        for layer, name in enumerate(names):
            for p in range(m):
                patched = _patched_last_logits(model, cb, name, p, cache[name][:, p])
                flips = (patched.argmax(-1) == target[start : start + batch_size]).float()
                pp = patched.softmax(-1).gather(1, target[start : start + batch_size, None])[:, 0]
                pc, pr = p_clean[start : start + batch_size], p_corr[start : start + batch_size]
                ratio = (pp - pc) / (pr - pc).clamp_min(1e-6)
                rank[layer, p] += float(flips.sum())
                prob[layer, p] += float(ratio.sum())
    return {"rank": rank / len(c), "prob": prob / len(c), "pairs": int(len(c))}


def _last_logits(model, tokens: torch.Tensor, batch_size: int) -> torch.Tensor:
    return torch.cat([model(tokens[s : s + batch_size])[:, -1].float() for s in range(0, len(tokens), batch_size)])


def _patched_last_logits(model, tokens: torch.Tensor, hook: str, position: int, value: torch.Tensor) -> torch.Tensor:
    """Logits at the last position of a run whose residual at (hook, position) is replaced by ``value``."""
    def patch(act, hook=None):
        act = act.clone()
        act[:, position] = value
        return act

    return model.run_with_hooks(tokens, fwd_hooks=[(hook, patch)])[:, -1].float()


def trace_by_construction(layer: int, position: int, changed: int, n_layers: int, last: int) -> bool:
    """True where the patching effect is fixed whatever the model learned: before the changed token the
    corrupted residual equals the clean one under the causal mask (an identity patch, effect 0); the changed
    token's own embedding is the corrupted input itself, and the last position after the last block is the
    output itself (effect 1 by definition)."""
    return position < changed or (layer == 0 and position == changed) or (layer == n_layers and position == last)


def trace_table(model, tables: TaskTables, inputs: np.ndarray, variants: list[str], seed: int = 0,
                max_pairs: int = 1000, batch_size: int = 1024) -> pd.DataFrame:
    """Causal-tracing maps as a long table (variant, metric, layer, position, value, pairs, by_construction)."""
    rows = []
    positions = [f"x{i + 1}" for i in range(inputs.shape[1])]
    for variant in variants:
        clean, corrupted = corrupted_pairs(tables, inputs, variant, seed)
        clean, corrupted = clean[:max_pairs], corrupted[:max_pairs]
        answers = (tables.values(clean)["t"], tables.values(corrupted)["t"])
        res = trace_map(model, clean, corrupted, answers, batch_size)
        for metric in ("rank", "prob"):
            n_layers = res[metric].shape[0] - 1
            for layer in range(n_layers + 1):
                for p, pos in enumerate(positions):
                    fixed = trace_by_construction(layer, p, CHANGED_POSITION[variant], n_layers, len(positions) - 1)
                    rows.append({"variant": variant, "metric": metric, "layer": layer, "position": pos,
                                 "value": float(res[metric][layer, p]), "pairs": res["pairs"], "by_construction": fixed})
    return pd.DataFrame(rows)
