"""Inside the model (chapter 5, SPEC §4): residual streams, IICG, causal tracing and the logit lens,
all through TransformerLens hooks on the trained TransformerBridge.

Conventions shared by every analysis:

* **layer** 0 is the embedding output (token + position, ``blocks.0.hook_resid_pre``) and layer
  l = 1..L the residual stream after block l (``blocks.{l-1}.hook_resid_post``);
* **position** is a prompt position, named after its input (``x1`` .. ``xm``); the answer is
  predicted at the last one;
* analyses use the **raw trained weights** (no folding or centring: the native bridge has no
  weight processing), so cosines are between the residual vectors the model really computes.

The values of hidden nodes (bridges b1, b2, the answer t) come from the dataset's primitive
tables: regenerated from ``covlib.json`` when covlib wrote the folder, else read from its
``atomic_facts_f*.json`` (the authors' folders).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from covlib.errors import CovlibError
from covlib.io import DatasetFolder, load_dataset
from covlib.tasks import Task, get_task

# ----------------------------------------------------------------------------- hidden node values


@dataclass
class TaskTables:
    """A dataset's task, its primitive tables and the facts its training set uses."""

    task: Task
    tables: dict[str, np.ndarray]
    same_functions: bool
    seen: dict[str, np.ndarray]  # table name -> bool array: the fact appears in some training item

    def values(self, inputs: np.ndarray) -> dict[str, np.ndarray]:
        """Every node's value (x1.., b1.., t) for a batch of inputs."""
        return self.task.evaluate(inputs, self.tables, self.same_functions)[0]

    def all_facts_seen(self, inputs: np.ndarray) -> np.ndarray:
        """True where every primitive application of the input is a fact used in training."""
        _, facts = self.task.evaluate(inputs, self.tables, self.same_functions)
        ok = np.ones(len(inputs), dtype=bool)
        for flat, name in zip(facts, self.task.table_of_hop(self.same_functions)):
            ok &= self.seen[name].reshape(-1)[flat]
        return ok


def task_tables(ds: DatasetFolder) -> TaskTables:
    """The primitive tables behind a dataset folder (see the module docstring)."""
    meta = ds.meta or {}
    config = meta.get("config")
    if config:
        from covlib.data import DatasetConfig, generate

        cfg = DatasetConfig(**config)
        data = generate(dataclass_replace_test(cfg))
        task, tables, same = data.task, data.tables, cfg.same_functions
    else:
        task = _task_from_name(ds.name)
        same = ".same-" in ds.name
        facts = ds.atomic_facts()
        if not facts:
            raise CovlibError(f"{ds.path} has neither covlib.json nor atomic_facts_f*.json: the bridge values of its "
                              "items cannot be computed; regenerate it with `covlib generate`")
        tables = {}
        for name in task.table_names(same):
            if name not in facts:
                raise CovlibError(f"{ds.path} lacks atomic_facts_{name}.json; regenerate it with `covlib generate`")
            arity = task.primitives[name]
            table = np.full((ds.num_tokens,) * arity, -1, dtype=np.int64)
            table[tuple(facts[name].inputs.T)] = facts[name].answers
            tables[name] = table
    _, used = task.evaluate(ds.train.inputs, tables, same)
    seen = {name: np.zeros(t.shape, dtype=bool) for name, t in tables.items()}
    for flat, name in zip(used, task.table_of_hop(same)):
        seen[name].reshape(-1)[flat] = True
    return TaskTables(task, tables, same, seen)


def dataclass_replace_test(cfg):
    """The same dataset config without a test set: the tables do not depend on it, and it is faster."""
    import dataclasses

    return dataclasses.replace(cfg, test_size_per_type=0)


def _task_from_name(name: str) -> Task:
    try:
        return get_task(name.split(".")[0])
    except CovlibError:
        raise CovlibError(f"cannot tell the task of dataset folder {name!r} (no covlib.json, and its name does not "
                          "start with a task such as twohop.); regenerate it with `covlib generate`") from None


# ----------------------------------------------------------------------------- residual streams


def hook_names(n_layers: int) -> list[str]:
    """The residual-stream hooks of layers 0..L (embedding output, then every block's output)."""
    return ["blocks.0.hook_resid_pre"] + [f"blocks.{i}.hook_resid_post" for i in range(n_layers)]


@torch.no_grad()
def residual_streams(model, prompts: np.ndarray | torch.Tensor, batch_size: int = 1024) -> np.ndarray:
    """The residual stream at every layer and prompt position: float32 array (items, L+1, m, d_model).

    Caches only the L+1 residual hooks (``run_with_cache`` with a names_filter), in batches."""
    names = hook_names(model.cfg.n_layers)
    wanted = set(names)
    prompts = torch.as_tensor(np.asarray(prompts), dtype=torch.long)
    device = next(model.parameters()).device
    out = []
    for start in range(0, len(prompts), batch_size):
        batch = prompts[start : start + batch_size].to(device)
        _, cache = model.run_with_cache(batch, names_filter=lambda n: n in wanted)
        out.append(torch.stack([cache[n] for n in names], dim=1).float().cpu())
    if not out:
        raise CovlibError("no items to analyse: the selection is empty")
    return torch.cat(out).numpy()


# ----------------------------------------------------------------------------- IICG

# grouping key -> (nodes whose values form the key, input positions of the fragment that determines it)
GROUP_KEYS: dict[str, dict[str, tuple[tuple[str, ...], tuple[int, ...]]]] = {
    "twohop": {"b": (("b1",), (0, 1)), "t": (("t",), (0, 1, 2)), "x2": (("x2",), (0, 1)),
               "b,x2": (("b1", "x2"), (0, 1))},
    "nontree": {"b": (("b1",), (0, 1)), "t": (("t",), (0, 1, 2)), "x2": (("x2",), (0, 1)),
                "b,x2": (("b1", "x2"), (0, 1)), "b,x1": (("b1", "x1"), (0, 1))},
    "threehop": {"b1": (("b1",), (0, 1)), "b2": (("b2",), (0, 1, 2)), "t": (("t",), (0, 1, 2, 3))},
    "parallel_twohop": {"b1": (("b1",), (0, 1)), "b2": (("b2",), (2, 3)), "t": (("t",), (0, 1, 2, 3))},
}


def group_keys(task: str) -> list[str]:
    """The grouping keys IICG knows for a task."""
    return list(GROUP_KEYS.get(task, {}))


def item_groups(tables: TaskTables, inputs: np.ndarray, key: str) -> tuple[np.ndarray, np.ndarray]:
    """(kept item indices, group label of each kept item) for IICG grouped by ``key``.

    As the authors do, a group keeps one item per distinct fragment that determines the key (the
    first in the given order), so that repeats of one fragment do not inflate the within-group
    similarity. Grouping by x2 keeps one item per (x1, x2), like grouping by b."""
    spec = GROUP_KEYS.get(tables.task.name, {})
    if key not in spec:
        raise CovlibError(f"unknown group key {key!r} for task {tables.task.name}; choose one of: "
                          f"{', '.join(spec) or 'none (no keys defined for this task)'}")
    nodes, fragment = spec[key]
    values = tables.values(inputs)
    _, first = np.unique(inputs[:, list(fragment)], axis=0, return_index=True)
    kept = np.sort(first)
    label_cols = np.stack([values[n][kept] for n in nodes], axis=1)
    _, labels = np.unique(label_cols, axis=0, return_inverse=True)
    return kept, labels.reshape(-1)


def iicg_map(resid: np.ndarray, labels: np.ndarray) -> dict[str, np.ndarray]:
    """Within-group, between-group mean cosine and their gap (IICG), per (layer, position).

    ``resid``: (items, L+1, m, d); ``labels``: (items,) group ids. Within = mean cosine over all
    pairs of distinct items in the same group, pooled over groups; between = mean over all pairs
    from different groups. Computed from unit vectors and group sums (no items x items matrix):
    for unit vectors the sum of pairwise cosines in a set is (|sum|^2 - count) / 2."""
    labels = np.asarray(labels)
    if resid.shape[0] != len(labels):
        raise CovlibError(f"{resid.shape[0]} residual vectors but {len(labels)} labels")
    groups, labels = np.unique(labels, return_inverse=True)
    sizes = np.bincount(labels)
    within_pairs = float((sizes * (sizes - 1) / 2).sum())
    all_pairs = len(labels) * (len(labels) - 1) / 2
    if len(groups) < 2:
        raise CovlibError("IICG needs at least two groups (a between-group similarity); this selection has "
                          f"{len(groups)}: choose a larger split or another key")
    if within_pairs == 0:
        raise CovlibError("IICG needs a group with two items or more (a within-group similarity); every group here "
                          "holds one item: choose a larger split or a coarser key")
    x = torch.from_numpy(np.ascontiguousarray(resid, dtype=np.float64))
    unit = x / x.norm(dim=-1, keepdim=True).clamp_min(1e-12)
    flat = unit.reshape(len(labels), -1)
    sums = torch.zeros(len(groups), flat.shape[1], dtype=torch.float64).index_add_(0, torch.from_numpy(labels), flat)
    sums = sums.reshape(len(groups), *resid.shape[1:])
    within_sum = ((sums**2).sum(-1).sum(0) - len(labels)) / 2  # (L+1, m)
    total = unit.sum(0)
    all_sum = ((total**2).sum(-1) - len(labels)) / 2
    within = within_sum / within_pairs
    between = (all_sum - within_sum) / (all_pairs - within_pairs)
    return {"within": within.numpy(), "between": between.numpy(), "iicg": (within - between).numpy(),
            "items": len(labels), "groups": len(groups)}


def iicg_bruteforce(resid: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """IICG by listing every pair (slow; the reference the tests compare ``iicg_map`` with)."""
    n = len(labels)
    resid = np.asarray(resid, dtype=np.float64)
    unit = resid / np.maximum(np.linalg.norm(resid, axis=-1, keepdims=True), 1e-12)
    within, between = [], []
    for i in range(n):
        for j in range(i + 1, n):
            cos = (unit[i] * unit[j]).sum(-1)
            (within if labels[i] == labels[j] else between).append(cos)
    return np.mean(within, axis=0) - np.mean(between, axis=0)


# ----------------------------------------------------------------------------- selecting items


SPLIT_ALIASES = {"id_train": "train_inferred", "id_test": "type_0"}


def first_hop_unseen_types(n_primitives: int) -> list[str]:
    """The OOD test types whose first primitive application is unseen (SPEC §1's type numbering)."""
    return [f"type_{bits + 1}" for bits in range(2 ** (n_primitives - 1))]


def split_items(ds: DatasetFolder, split: str, k_group: str | None = None) -> np.ndarray:
    """Indices of test items of one split (a test type such as type_0; id_train, id_test; or ood_first_hop,
    every OOD type whose first hop is unseen), optionally restricted to a k-cutoff group of type_0
    ("k<3", "k=3", "k>3"; needs test_annotated.json)."""
    types = ds.test.types
    if split == "ood_first_hop":
        n_prim = int(np.log2(len([t for t in ds.test_types if t.startswith("type_")])))
        wanted = set(first_hop_unseen_types(n_prim))
        return np.flatnonzero(np.isin(types, sorted(wanted)))
    split = SPLIT_ALIASES.get(split, split)
    if split not in set(types.tolist()):
        raise CovlibError(f"unknown split {split!r}; this dataset's splits: {', '.join(ds.test_types)} "
                          "(also id_train, id_test, ood_first_hop)")
    idx = np.flatnonzero(types == split)
    if k_group is not None:
        from covlib.train import k_cutoffs

        ks = k_cutoffs(ds)
        if ks is None:
            raise CovlibError(f"{ds.path} has no test_annotated.json; run `covlib coverage {ds.path}` first")
        tests = {"k<3": ks < 3, "k=3": ks == 3, "k>3": ks > 3}
        if k_group not in tests:
            raise CovlibError(f"unknown k-cutoff group {k_group!r}; choose k<3, k=3 or k>3")
        idx = idx[tests[k_group][idx]]
    return idx


def iicg_table(model, ds: DatasetFolder, tables: TaskTables, keys: list[str], splits: list[str],
               k_groups: list[str | None] = (None,), max_items: int = 2000, batch_size: int = 1024) -> pd.DataFrame:
    """IICG maps as a long table (split, k_group, group_by, layer, position, iicg, within, between,
    items, groups) for every split x k-group x key; residuals computed once per selection."""
    rows = []
    positions = [f"x{i + 1}" for i in range(ds.n_inputs)]
    for split in splits:
        for kg in k_groups:
            idx = split_items(ds, split, kg)[:max_items]
            inputs = ds.test.inputs[idx]
            resid = residual_streams(model, inputs, batch_size)
            for key in keys:
                kept, labels = item_groups(tables, inputs, key)
                res = iicg_map(resid[kept], labels)
                for layer in range(resid.shape[1]):
                    for p, pos in enumerate(positions):
                        rows.append({"split": SPLIT_ALIASES.get(split, split), "k_group": kg or "all", "group_by": key,
                                     "layer": layer, "position": pos, "iicg": float(res["iicg"][layer, p]),
                                     "within": float(res["within"][layer, p]),
                                     "between": float(res["between"][layer, p]),
                                     "items": res["items"], "groups": res["groups"]})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- causal tracing

TRACE_VARIANTS = {
    "x2": "change x2 so that the bridge b and the answer t change",
    "x1": "change x1 so that the bridge b and the answer t change",
    "x2_keep_b": "change x2 keeping the bridge b (non-tree: isolates the direct x2 path)",
    "x2_change_b": "change x2 changing the bridge b (non-tree)",
}


def corrupted_pairs(tables: TaskTables, inputs: np.ndarray, variant: str = "x2", seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(clean, corrupted) input pairs: each clean input with one position changed as ``variant`` says,
    so that the answer changes and every fact of the corrupted input is seen in training. Clean
    inputs with no such change are dropped; the change is drawn uniformly among the valid ones."""
    if variant not in TRACE_VARIANTS:
        raise CovlibError(f"unknown variant {variant!r}; choose one of: {', '.join(TRACE_VARIANTS)}")
    task = tables.task
    pos = 0 if variant == "x1" else 1
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


def trace_table(model, tables: TaskTables, inputs: np.ndarray, variants: list[str], seed: int = 0,
                max_pairs: int = 1000, batch_size: int = 1024) -> pd.DataFrame:
    """Causal-tracing maps as a long table (variant, metric, layer, position, value, pairs)."""
    rows = []
    positions = [f"x{i + 1}" for i in range(inputs.shape[1])]
    for variant in variants:
        clean, corrupted = corrupted_pairs(tables, inputs, variant, seed)
        clean, corrupted = clean[:max_pairs], corrupted[:max_pairs]
        answers = (tables.values(clean)["t"], tables.values(corrupted)["t"])
        res = trace_map(model, clean, corrupted, answers, batch_size)
        for metric in ("rank", "prob"):
            for layer in range(res[metric].shape[0]):
                for p, pos in enumerate(positions):
                    rows.append({"variant": variant, "metric": metric, "layer": layer, "position": pos,
                                 "value": float(res[metric][layer, p]), "pairs": res["pairs"]})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- logit lens


@torch.no_grad()
def logit_lens(model, resid: np.ndarray, targets: dict[str, np.ndarray], batch_size: int = 4096) -> pd.DataFrame:
    """Each layer's residual at each position through the final LayerNorm and the unembedding: for every
    target node (e.g. b1, t) the mean rank (0 = top) and mean probability of its token, and the share of
    items where it is the top token. Long table (target, layer, position, rank, prob, top1)."""
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


# ----------------------------------------------------------------------------- shipped weights


def save_weights(run_dir: str | os.PathLike, dest: str | os.PathLike, checkpoint: str | None = None,
                 half: bool = True) -> Path:
    """Copy a run's model weights (final model.pt, or ``checkpoint`` such as checkpoints/step_001000.pt)
    to ``dest`` as a small file: the model state only (no optimizer), fp16 by default."""
    src = Path(run_dir) / (checkpoint or "model.pt")
    if not src.is_file():
        raise CovlibError(f"{src} does not exist; train the run (with keep_checkpoints for checkpoints) first")
    state = torch.load(src, map_location="cpu", weights_only=False)
    weights = {k: (v.half() if half and v.is_floating_point() else v) for k, v in state["model"].items()}
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.tmp")
    torch.save({"model": weights, "vocab": state["vocab"], "n_ctx": state["n_ctx"], "step": state.get("step")}, tmp)
    os.replace(tmp, dest)
    return dest


def load_weights(run_dir: str | os.PathLike, weights: str, ds: DatasetFolder | None = None, device=None):
    """A TransformerBridge built from ``run_dir/config.json`` with the weights file ``run_dir/weights``
    (as written by ``save_weights``; fp16 is cast back to float32), in eval mode."""
    from covlib.model import build_model, model_config_from_dict
    from covlib.train import load_run_config

    run_dir = Path(run_dir)
    meta = load_run_config(run_dir)
    file = run_dir / weights
    if not file.is_file():
        raise CovlibError(f"{file} does not exist; see {run_dir / 'COMMANDS.txt'} for the commands that make it")
    state = torch.load(file, map_location="cpu", weights_only=False)
    if ds is not None and list(ds.vocab) != list(state["vocab"]):
        raise CovlibError(f"the vocabulary of {ds.path} ({len(ds.vocab)} tokens) is not the one {file} was trained on "
                          f"({len(state['vocab'])} tokens); pass the dataset folder of this run")
    model = build_model(model_config_from_dict(meta["model"]), len(state["vocab"]), state["n_ctx"],
                        seed=meta["train"]["seed"], device=device)
    model.load_state_dict({k: v.float() for k, v in state["model"].items()})
    model.eval()
    return model


def open_run(run_dir: str | os.PathLike, dataset_dir: str | os.PathLike | None = None, checkpoint: str | None = None,
             device=None):
    """(model, dataset, tables) for a run folder: a trained run (model.pt / checkpoints) or a shipped one
    (weights/*.pt). The dataset defaults to the one in the run's config.json."""
    from covlib.train import load_model, load_run_config

    run_dir = Path(run_dir)
    meta = load_run_config(run_dir)
    dataset_dir = Path(dataset_dir) if dataset_dir else Path(meta["dataset"]["path"])
    if not dataset_dir.is_dir():
        raise CovlibError(f"the run's dataset {dataset_dir} does not exist; pass --dataset (the folder the run was "
                          "trained on, e.g. regenerated with the command in its COMMANDS.txt)")
    ds = load_dataset(dataset_dir)
    if checkpoint and str(checkpoint).startswith("weights/") or (checkpoint is None and not (run_dir / "model.pt").is_file()
                                                                  and (run_dir / "weights" / "final.pt").is_file()):
        model = load_weights(run_dir, checkpoint or "weights/final.pt", ds, device)
    else:
        model = load_model(run_dir, dataset_dir, device=device, checkpoint=checkpoint)
    if json.dumps(list(ds.vocab)) != json.dumps(meta["dataset"]["vocab"]):
        raise CovlibError(f"{dataset_dir} does not have the vocabulary {run_dir} was trained on; pass its own dataset")
    return model, ds, task_tables(ds)
