"""The logit lens: each layer's residual read through the final LayerNorm and unembedding."""
from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from covlib.analyses.residuals import require_transformer_model


@torch.no_grad()
def logit_lens(model, resid: np.ndarray, targets: dict[str, np.ndarray], batch_size: int = 4096) -> pd.DataFrame:
    """Each layer's residual at each position through the final LayerNorm and the unembedding: for every
    target node (e.g. b1, t) the mean rank (0 = top) and mean probability of its token, and the share of
    items where it is the top token. Long table (target, layer, position, rank, prob, top1)."""
    require_transformer_model(model)
    n, L1, m, d = resid.shape
    rows = []
    x = torch.from_numpy(resid).reshape(-1, d)
    logits = []
    device = next(model.parameters()).device
    for s in range(0, len(x), batch_size):
        logits.append(model.unembed(model.ln_final(x[s : s + batch_size].to(device))).float().cpu())
    logits = torch.cat(logits).reshape(n, L1, m, -1)
    probs = logits.softmax(-1)
    for name, tok in targets.items():
        tok = torch.as_tensor(np.asarray(tok), dtype=torch.long)[:, None, None, None].expand(n, L1, m, 1)
        score = logits.gather(-1, tok)
        rank = (logits > score).sum(-1).float()  # tokens scoring strictly higher
        p = probs.gather(-1, tok)[..., 0]
        for layer in range(L1):
            for pos in range(m):
                rows.append({"target": name, "layer": layer, "position": f"x{pos + 1}",
                             "rank": float(rank[:, layer, pos].mean()), "prob": float(p[:, layer, pos].mean()),
                             "top1": float((rank[:, layer, pos] == 0).float().mean())})
    return pd.DataFrame(rows)
