"""The device, picked once (cuda if present, else cpu), the CPU thread policy that goes with it, and seeding."""
from __future__ import annotations

import functools
import os
import random

import numpy as np
import torch

from covlib.base.errors import CovlibError


@functools.cache
def get_device() -> torch.device:
    """cuda when a GPU is present, else cpu; set COVLIB_DEVICE=cpu (or cuda:1, ...) to force one."""
    forced = os.environ.get("COVLIB_DEVICE")
    device = torch.device(forced or ("cuda" if torch.cuda.is_available() else "cpu"))
    if device.type == "cpu":
        torch.set_num_threads(cpu_threads())
    return device


def cpu_threads() -> int:
    """Threads covlib trains on when the device is the CPU: COVLIB_THREADS, else OMP_NUM_THREADS, else one.

    One by default because the book's models are small: a second thread speeds an idle step up little, and
    beside any other busy process it slows every step down (each of the hundreds of small parallel regions of a
    step waits at OpenMP's barrier for a thread the scheduler has paused; benchmarks/bench_threads.py)."""
    for name in ("COVLIB_THREADS", "OMP_NUM_THREADS"):
        value = os.environ.get(name, "").strip()
        if value:
            try:
                return max(1, int(value))
            except ValueError:
                raise CovlibError(f"{name}={value!r} is not a number of threads; set it to a positive integer") from None
    return 1


def seed_everything(seed: int) -> None:
    """Seed Python, numpy and torch global generators (covlib's own sampling uses explicit seeds too)."""
    random.seed(seed)
    np.random.seed(seed % (2**32))
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
