"""Atomic writes: a file or a folder appears whole or not at all."""
from __future__ import annotations

import os
import shutil
import tempfile
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
