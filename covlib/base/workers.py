"""Worker processes on one thread each: the initialiser every covlib process pool uses."""
from __future__ import annotations

import os
import sys

ONE_THREAD = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "COVLIB_THREADS")  # OpenMP, MKL and covlib's own policy


def one_thread_worker() -> None:
    """Put this worker process (and any kernel or process it starts) on one thread: two one-thread processes
    train 1.3x as fast as one run on both cores, two two-thread processes a quarter as fast (README, performance).
    torch, if the worker has imported it already, is set at once; imported later, it reads OMP_NUM_THREADS
    (and covlib's get_device COVLIB_THREADS). A worker that never needs torch does not import it."""
    for name in ONE_THREAD:
        os.environ[name] = "1"
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)
