"""Claims on cells, across processes: two searches of one probe table (two lanes of the queue, say) never probe
the same cell at the same time, so each probe of a cell still uses all the evidence of its cell, and a search
that finds every cell left to it claimed by the other ends instead of waiting.

A claim is a non-blocking exclusive flock on a lock file keyed by the table, the cell and the give-up rule. The
kernel drops it when its process ends, so a search that is killed leaves no stale claim behind. The lock files
live in the temporary folder (covlib.base.files.lock_path, as folder_lock's do), so none appears beside committed data. Local
only: the SLURM executor's tasks do not take claims."""
from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import IO

from covlib.base.files import lock_path
from covlib.search.cells import Cell


class CellClaims:
    """The cells this process has claimed on ``table`` under the give-up floor ``give_up_floor``."""

    def __init__(self, table: str | os.PathLike, give_up_floor: int):
        self._table = str(Path(table).resolve())
        self._floor = int(give_up_floor)
        self._held: dict[tuple, IO] = {}

    def take(self, cell: Cell) -> bool:
        """Claim ``cell``; False where another search (in this process or another) holds it."""
        if cell.key() in self._held:
            return True
        handle = open(lock_path(repr((self._table, cell.key(), self._floor)), prefix="claim-"), "w")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            return False
        self._held[cell.key()] = handle
        return True

    def release(self, cell: Cell) -> None:
        self._drop(cell.key())

    def release_all(self) -> None:
        for key in list(self._held):
            self._drop(key)

    def _drop(self, key: tuple) -> None:
        handle = self._held.pop(key, None)
        if handle is not None:
            fcntl.flock(handle, fcntl.LOCK_UN)
            handle.close()
