"""Output-path checks, atomic writes (a temporary file renamed over the destination) and JSON-safe copies."""

from __future__ import annotations

import errno
import json
import os
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import numpy as np
from .errors import InputError

__all__ = ["atomic_path", "write_atomic", "write_table", "jsonable", "check_output"]


def _umask() -> int:
    """The process umask, read without changing it where Linux tells it (other threads may be writing)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def check_output(path, overwrite: bool = True, folder: bool = False, flag: str = "") -> Path:
    """``path``, or InputError (prefixed by ``flag``) when it cannot be written (existing: only with ``overwrite``)."""
    path = Path(path)
    head = f"{flag} {path}" if flag else str(path)
    fix = f"choose another {flag}" if flag else "choose another output path"
    if folder:
        if path.exists() and not path.is_dir():
            raise InputError(f"{head}: is a file, not a folder; {fix}")
    else:
        if path.is_dir():
            raise InputError(f"{head}: is a folder; give a file path (a new name inside it, or elsewhere)")
        if path.exists() and not overwrite:
            raise InputError(f"{head}: already exists; {fix} or pass --force")
    anc = path if folder else path.parent
    anc = Path(os.path.abspath(anc))
    while not anc.exists():
        anc = anc.parent
    if not anc.is_dir():
        raise InputError(f"{head}: {anc} is a file, not a folder; {fix}")
    try:
        with tempfile.TemporaryFile(dir=anc):
            pass
    except OSError as exc:
        raise InputError(f"{head}: cannot write into folder {anc} ({exc.strerror}); {fix}") from None
    return path


@contextmanager
def atomic_path(path, overwrite: bool = True) -> Iterator[Path]:
    """Yield a temporary path next to ``path``, fsynced and renamed to ``path`` on success (:func:`check_output`)."""
    path = Path(path)
    check_output(path, overwrite=overwrite)
    mode = (stat.S_IMODE(path.stat().st_mode) if path.is_file() else 0o666 & ~_umask())
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise InputError(f"{path}: cannot write here ({exc.strerror}); choose another output path") from None
    os.close(fd)
    tmp = Path(tmp)
    try:
        yield tmp
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        try:
            os.replace(tmp, path)
        except OSError as exc:
            if exc.errno in (errno.EISDIR, errno.ENOTDIR, errno.EACCES, errno.EPERM, errno.EROFS):
                raise InputError(f"{path}: cannot write here ({exc.strerror}); choose another output path") from None
            raise
    finally:
        tmp.unlink(missing_ok=True)


def write_atomic(path, data: str | bytes, overwrite: bool = False) -> Path:
    """Write text (UTF-8) or bytes to ``path`` atomically; an existing file is replaced only with ``overwrite``."""
    with atomic_path(path, overwrite=overwrite) as tmp:
        if isinstance(data, str):
            tmp.write_text(data, encoding="utf-8")
        else:
            tmp.write_bytes(data)
    return Path(path)


def write_table(df, path, meta: dict) -> Path:
    """A results table: ``df`` as CSV at ``path`` (no index) and ``meta`` (title, command, caption, order) as JSON
    beside it (same stem), each written atomically, replacing what was there."""
    write_atomic(path, df.to_csv(index=False), overwrite=True)
    write_atomic(Path(path).with_suffix(".json"), json.dumps(meta, indent=1) + "\n", overwrite=True)
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
