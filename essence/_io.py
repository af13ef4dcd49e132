"""Small I/O helpers every module shares: atomic writes and JSON-safe copies.

An *atomic* write goes to a temporary file in the destination's folder and is renamed over the
destination only once it is complete, so a crash or an error never leaves a half-written file, and a
failed write leaves no temporary file behind.
"""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import numpy as np
from .errors import InputError

__all__ = ["atomic_path", "write_atomic", "jsonable"]


@contextmanager
def atomic_path(path, overwrite: bool = True) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; on success it is fsynced and renamed to ``path``.

    With ``overwrite=False`` an existing ``path`` raises ValueError before anything is written.
    """
    path = Path(path)
    if not overwrite and path.exists():
        raise InputError(f"{path}: already exists; choose another output path or pass --force")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp)
    try:
        yield tmp
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_atomic(path, data: str | bytes, overwrite: bool = True) -> Path:
    """Write text (UTF-8) or bytes to ``path`` atomically; see :func:`atomic_path`."""
    with atomic_path(path, overwrite=overwrite) as tmp:
        if isinstance(data, str):
            tmp.write_text(data, encoding="utf-8")
        else:
            tmp.write_bytes(data)
    return Path(path)


def jsonable(o):
    """A JSON-safe copy: numpy scalars and arrays to Python, tuples to lists, non-finite floats to None."""
    if isinstance(o, dict):
        return {str(k): jsonable(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [jsonable(v) for v in o]
    if isinstance(o, np.ndarray):
        return jsonable(o.tolist())
    if isinstance(o, np.generic):
        o = o.item()
    if isinstance(o, float) and not np.isfinite(o):
        return None
    return o
