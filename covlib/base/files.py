"""Atomic writes: a file or a folder appears whole or not at all; and a lock for making a folder once."""
from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_UMASK = os.umask(0)


os.umask(_UMASK)


_FILE_MODE = 0o666 & ~_UMASK


def write_text_atomic(path: Path, text: str) -> None:
    """Write a file so that readers see either the old content or the new, never a part."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, _FILE_MODE)  # mkstemp creates 0600; give the usual umask-based mode
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_folder_atomic(final: Path, files: dict[str, str]) -> Path:
    """Write every file into a temporary sibling folder, then rename it into place."""
    final = Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".{final.name}.", suffix=".tmp"))
    try:
        os.chmod(tmp, 0o777 & ~_UMASK)  # mkdtemp creates 0700
        for name, text in files.items():
            (tmp / name).write_text(text, encoding="utf-8")
        if final.exists():
            shutil.rmtree(final)
        os.rename(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


def lock_path(name: str, prefix: str = "") -> Path:
    """A lock file for ``name`` in the temporary folder (keyed by a hash of it), so that no lock file appears
    beside committed data."""
    locks = Path(tempfile.gettempdir()) / "covlib-locks"
    locks.mkdir(exist_ok=True)
    return locks / f"{prefix}{hashlib.sha1(name.encode()).hexdigest()[:20]}.lock"


@contextmanager
def folder_lock(folder: str | os.PathLike) -> Iterator[None]:
    """Hold an exclusive lock on making ``folder`` (a dataset, a training run): a second process that wants the
    same folder, such as another chapter of a book run with --jobs 2, waits and then finds it made instead of
    making it again underneath the first. The lock file lives in the temporary folder, keyed by the folder's
    absolute path, so that no lock file appears beside committed data."""
    with open(lock_path(str(Path(folder).resolve())), "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
