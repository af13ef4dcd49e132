"""Item features committed as data: ``<model id>/<kind>/<dataset>.npz`` under :func:`committed_root` with
arrays ``keys`` (:func:`~essence.features.cache.text_key`) and ``values``, checked against ``SHA256SUMS`` before use.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import zipfile
from pathlib import Path

import numpy as np

from ..data._io import atomic_path
from ..data.errors import InputError

__all__ = ["ENV", "RECOMPUTE", "SUMS", "committed_root", "folder", "verify_folder", "committed_rows",
           "write_committed", "write_sums"]

ENV = "ESSENCE_FEATURES_COMMITTED"
RECOMPUTE = ".venv/bin/python benchmarks/features.py --write-committed --fresh"
SUMS = "SHA256SUMS"
_MEMO: dict[tuple, dict[str, np.ndarray]] = {}


def committed_root() -> Path | None:
    """``$ESSENCE_FEATURES_COMMITTED`` (None when ``off``), else this checkout's ``data/features/``, else None."""
    env = os.environ.get(ENV, "").strip()
    if env:
        return None if env.lower() == "off" else Path(env)
    project = Path(__file__).resolve().parents[2]
    if (project / "pyproject.toml").is_file() and (project / "essence").is_dir():
        return project / "data" / "features"
    return None


def folder(model_id: str, kind: str, root: Path | None = None) -> Path | None:
    """``<root>/<model id made file-safe>/<kind>``, or None without a root."""
    root = committed_root() if root is None else Path(root)
    return None if root is None else root / re.sub(r"[^A-Za-z0-9_.-]+", "_", model_id) / kind


def _sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _read_sums(root: Path) -> dict[str, str]:
    path = root / SUMS
    if not path.is_file():
        raise InputError(f"committed features: {path} is missing; restore it from git or recompute with "
                         f"`{RECOMPUTE}`")
    sums = {}
    for n, line in enumerate(path.read_text().splitlines(), 1):
        parts = line.split(None, 1)
        if len(parts) != 2 or not re.fullmatch(r"[0-9a-f]{64}", parts[0]):
            raise InputError(f"committed features: {path}, line {n}: expected '<sha256>  <path>', got {line!r}")
        sums[parts[1].strip().lstrip("*")] = parts[0]
    return sums


def verify_folder(model_id: str, kind: str, root: Path | None = None) -> list[Path]:
    """The ``.npz`` files of ``(model_id, kind)``, sorted; InputError on one differing from or not in ``SHA256SUMS``."""
    root = committed_root() if root is None else Path(root)
    d = folder(model_id, kind, root)
    files = sorted(d.glob("*.npz")) if d is not None and d.is_dir() else []
    sums = _read_sums(root) if files else {}
    for f in files:
        rel = f.relative_to(root).as_posix()
        if rel not in sums:
            raise InputError(f"committed features: {f} is not listed in {root / SUMS}; delete it or recompute "
                             f"with `{RECOMPUTE}`")
        if _sha256(f) != sums[rel]:
            raise InputError(f"committed features: the checksum of {f} differs from {root / SUMS} (the file was "
                             f"changed or damaged); restore it from git or recompute with `{RECOMPUTE}`")
    return files


def committed_rows(model_id: str, kind: str, root: Path | None = None) -> dict[str, np.ndarray]:
    """``{text key: row}`` of every verified file of ``(model_id, kind)`` (float16 read as float32); memoised."""
    root = committed_root() if root is None else Path(root)
    d = folder(model_id, kind, root)
    if d is None or not d.is_dir():
        return {}
    stamp = tuple((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(d.glob("*.npz")))
    sums = root / SUMS
    memo_key = (str(d.resolve()), stamp, sums.stat().st_mtime_ns if sums.is_file() else None)
    if memo_key not in _MEMO:
        rows: dict[str, np.ndarray] = {}
        for f in verify_folder(model_id, kind, root):
            with np.load(f, allow_pickle=False) as z:
                keys, values = z["keys"].tolist(), z["values"]
            rows.update(zip(keys, values.astype(np.float32) if values.dtype == np.float16 else values))
        _MEMO[memo_key] = rows
    return _MEMO[memo_key]


def _npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """An uncompressed ``.npz`` whose bytes depend on the arrays only (fixed member times)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as zf:
        for name, arr in arrays.items():
            member = io.BytesIO()
            np.lib.format.write_array(member, np.ascontiguousarray(arr), allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            zf.writestr(info, member.getvalue())
    return buf.getvalue()


def write_committed(model_id: str, kind: str, dataset: str, keys, values, root: Path | None = None) -> Path:
    """Write ``<root>/<model>/<kind>/<dataset>.npz`` (``keys`` ``(n,)``, ``values`` ``(n, ...)``) and ``SHA256SUMS``."""
    root = committed_root() if root is None else Path(root)
    if root is None:
        raise InputError(f"committed features: no root (${ENV} is 'off' or this is not a checkout)")
    keys, values = np.asarray([str(k) for k in keys]), np.asarray(values)
    if keys.ndim != 1 or len(keys) != len(values):
        raise InputError(f"committed features: {len(keys)} keys but {len(values)} rows")
    keys, first = np.unique(keys, return_index=True)
    values = values[first].astype(np.float16 if kind.startswith("hidden") else np.float64)
    if not np.isfinite(values).all():
        raise InputError(f"committed features: {dataset} {kind} has values that are not finite in {values.dtype}")
    path = folder(model_id, kind, root) / f"{dataset}.npz"
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        Path(tmp).write_bytes(_npz_bytes({"keys": keys.astype("<U32"), "values": values}))
    write_sums(root)
    return path


def write_sums(root: Path | None = None) -> Path:
    """Rewrite ``<root>/SHA256SUMS`` from every ``.npz`` under the root (sorted; ``sha256sum -c`` reads it)."""
    root = committed_root() if root is None else Path(root)
    text = "".join(f"{_sha256(p)}  {p.relative_to(root).as_posix()}\n" for p in sorted(root.rglob("*.npz")))
    with atomic_path(root / SUMS) as tmp:
        Path(tmp).write_text(text)
    return root / SUMS
