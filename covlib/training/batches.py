"""Training batches: token tensors, a batch order that is a pure function of (seed, step)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from covlib.tasks.folders import DatasetFolder

IGNORE = -100  # label of positions that carry no loss


@dataclass
class Batches:
    """The training set as one right-padded token array plus labels (IGNORE where no loss)."""

    tokens: torch.Tensor  # (n, T) long: prompt + target[:-1], padded
    labels: torch.Tensor  # (n, T) long: label at position i is the token at i+1 when it is a target
    seed: int
    _perms: dict[int, np.ndarray] = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return len(self.tokens)

    def indices(self, step: int, batch_size: int) -> np.ndarray:
        """Item indices of step ``step`` (0-based): a window on a stream of seeded epoch shuffles.

        A pure function of (seed, step), so a resumed run sees exactly the batches it would have seen."""
        n = len(self)
        pos = np.arange(step * batch_size, (step + 1) * batch_size, dtype=np.int64)
        epochs, offsets = pos // n, pos % n
        out = np.empty(batch_size, dtype=np.int64)
        for e in np.unique(epochs):
            mask = epochs == e
            out[mask] = self._perm(int(e))[offsets[mask]]
        return out

    def _perm(self, epoch: int) -> np.ndarray:
        if epoch not in self._perms:
            if len(self._perms) > 4:
                self._perms.clear()
            self._perms[epoch] = np.random.default_rng([self.seed, epoch]).permutation(len(self))
        return self._perms[epoch]


def sequence_length(ds: DatasetFolder) -> int:
    """n_ctx for a dataset: the longest prompt + target (the final </a> is not fed)."""
    splits = [ds.train, ds.test, *ds.train_extra]
    return max(s.inputs.shape[1] + s.targets.shape[1] for s in splits if len(s))


def training_batches(ds: DatasetFolder, seed: int, device: torch.device) -> Batches:
    """Every training item (train.json, all prompt lengths) as padded tokens and masked labels."""
    n_ctx = sequence_length(ds)
    width = n_ctx - 1
    pad = ds.vocab.index("</a>")
    tokens, labels = [], []
    for split in [ds.train, *ds.train_extra]:
        m, L = split.inputs.shape[1], split.targets.shape[1]
        seq = np.concatenate([split.inputs, split.targets], axis=1).astype(np.int64)
        tok = np.full((len(split), width), pad, dtype=np.int64)
        tok[:, : m + L - 1] = seq[:, :-1]
        lab = np.full((len(split), width), IGNORE, dtype=np.int64)
        lab[:, m - 1 : m + L - 1] = split.targets
        tokens.append(tok)
        labels.append(lab)
    return Batches(torch.from_numpy(np.concatenate(tokens)).to(device), torch.from_numpy(np.concatenate(labels)).to(device), seed)
