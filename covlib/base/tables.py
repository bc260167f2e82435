"""Result tables (CSV) that parallel workers read and append to under a file lock."""
from __future__ import annotations

import fcntl
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from covlib.base.errors import CovlibError


def read_table(path: str | os.PathLike, columns: Sequence[str], defaults: dict | None = None) -> pd.DataFrame:
    """A result table (empty with ``columns`` when the file does not exist); refuses foreign files. A column
    added to a table after it was first written gets its value for older rows from ``defaults``."""
    path = Path(path)
    if not path.is_file():
        return pd.DataFrame(columns=list(columns))
    try:
        df = pd.read_csv(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise CovlibError(f"{path} is not a result table ({exc}); restore it from git or delete it to start over") from None
    for column, value in (defaults or {}).items():
        if column in columns and column not in df.columns:
            df[column] = value
    missing = sorted(set(columns) - set(df.columns))
    if missing:
        raise CovlibError(f"{path} lacks the columns {missing}: it was written by something else; use another path")
    return df


def upsert_row(path: str | os.PathLike, row: dict, columns: Sequence[str], key: Sequence[str],
               sort: Sequence[str] | None = None, float_format: str = "%.6g", defaults: dict | None = None) -> None:
    """Add ``row`` to the table at ``path``, replacing a row with the same ``key`` values; the table stays
    sorted by ``sort`` (default: the key). See replace_rows."""
    replace_rows(path, pd.DataFrame([{c: row.get(c) for c in columns}]), columns, key, sort or key, float_format,
                 defaults)


def replace_rows(path: str | os.PathLike, rows: pd.DataFrame, columns: Sequence[str], key: Sequence[str],
                 sort: Sequence[str] | None = None, float_format: str = "%.6g", defaults: dict | None = None) -> None:
    """Put ``rows`` (which share one value of ``key``) in the table at ``path``, replacing the rows it held
    for that key; atomic and under an exclusive file lock, so that processes on one machine or a shared
    file system can share the table."""
    if rows.empty:
        return
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    first = {k: rows[k].iloc[0] for k in key}  # per column: a whole row would turn ints into floats
    with open(path.with_name(f".{path.name}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        table = read_table(path, columns, defaults)
        if len(table):
            same = np.ones(len(table), dtype=bool)
            for k in key:
                same &= (table[k].astype(str) == str(first[k])).to_numpy()
            table = table[~same]
        new = rows[list(columns)]
        # a None in a numeric column (a probe that never fitted) would make the column object-typed and write
        # every other value of it as "150.0": keep it numeric, so that a row added rewrites no other
        table = (pd.concat([table, new], ignore_index=True) if len(table) else new).infer_objects()
        if sort is not None:
            table = table.sort_values(list(sort), kind="stable")
        tmp = path.with_name(f".{path.name}.tmp")
        table.to_csv(tmp, index=False, float_format=float_format)
        os.replace(tmp, path)
