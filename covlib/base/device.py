"""The device, picked once (cuda if present, else cpu), and seeding."""
from __future__ import annotations

import functools
import os
import random

import numpy as np
import torch


@functools.cache
def get_device() -> torch.device:
    """cuda when a GPU is present, else cpu; set COVLIB_DEVICE=cpu (or cuda:1, ...) to force one."""
    forced = os.environ.get("COVLIB_DEVICE")
    if forced:
        return torch.device(forced)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def seed_everything(seed: int) -> None:
    """Seed Python, numpy and torch global generators (covlib's own sampling uses explicit seeds too)."""
    random.seed(seed)
    np.random.seed(seed % (2**32))
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
