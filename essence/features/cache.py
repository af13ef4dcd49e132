"""On-disk cache of per-text features in ``.npz`` shards under ``$ESSENCE_CACHE``, else ``.cache/`` in the checkout,
else ``~/.cache/essence``; committed rows (:mod:`essence.features.committed`) take precedence."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from ..data._io import atomic_path
from ..data.errors import InputError
from .committed import committed_rows

__all__ = ["FeatureCache", "cache_root", "text_key"]


def cache_root() -> Path:
    env = os.environ.get("ESSENCE_CACHE")
    if env:
        return Path(env)
    project = Path(__file__).resolve().parents[2]
    if (project / "pyproject.toml").is_file() and (project / "essence").is_dir():
        return project / ".cache"
    return Path.home() / ".cache" / "essence"


def text_key(text: str) -> str:
    """Cache key of one text: the first 32 hex digits of its UTF-8 SHA-256."""
    return hashlib.sha256(str(text).encode("utf-8")).hexdigest()[:32]


class FeatureCache:
    """Features of ``kind`` from ``model_id``; ``committed``: :func:`essence.features.committed.committed_rows` too."""

    def __init__(self, model_id: str, kind: str, root: Path | None = None, committed: bool = True):
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", model_id)
        self.model_id, self.kind, self.committed = model_id, kind, bool(committed)
        self.dir = Path(root or cache_root()) / "features" / safe / kind
        self._index: dict[str, np.ndarray] | None = None

    def _load(self) -> dict[str, np.ndarray]:
        if self._index is None:
            index: dict[str, np.ndarray] = {}
            if self.dir.is_dir():
                for shard in sorted(self.dir.glob("*.npz")):
                    try:
                        with np.load(shard, allow_pickle=False) as z:
                            index.update(zip(z["keys"].tolist(), z["values"]))
                    except Exception:  # a foreign or damaged file: ignore it, recompute what it held
                        continue
            if self.committed:
                index.update(committed_rows(self.model_id, self.kind))
            self._index = index
        return self._index

    def get(self, texts) -> tuple[np.ndarray | None, np.ndarray]:
        """``(values (n, *shape) with zero rows where missing, or None when none is cached; missing (n,) bool)``."""
        keys = [text_key(t) for t in texts]
        index = self._load()
        missing = np.array([k not in index for k in keys], dtype=bool)
        if missing.all():
            return None, missing
        first = next(index[k] for k in keys if k in index)
        values = np.zeros((len(keys),) + first.shape, dtype=first.dtype)
        for i, k in enumerate(keys):
            if k in index:
                values[i] = index[k]
        return values, missing

    def put(self, texts, values) -> None:
        values = np.asarray(values)
        keys = np.array([text_key(t) for t in texts])
        if len(keys) != len(values):
            raise InputError(f"cache: {len(keys)} texts but {len(values)} feature rows")
        if not len(keys):
            return
        self.dir.mkdir(parents=True, exist_ok=True)
        name = hashlib.sha256("".join(keys.tolist()).encode()).hexdigest()[:20] + ".npz"
        with atomic_path(self.dir / name) as tmp, open(tmp, "wb") as f:
            np.savez(f, keys=keys, values=values)
        self._load().update(zip(keys.tolist(), values))

    def compute(self, texts, fn, batch_size: int = 64, progress: bool = True, desc: str = "features") -> np.ndarray:
        """Features of every text: cached rows read, the rest computed by ``fn(list_of_texts) -> array`` in
        batches, each cached when done."""
        texts = [str(t) for t in texts]
        values, missing = self.get(texts)
        todo = np.flatnonzero(missing)
        if todo.size:
            pending = list(dict.fromkeys(texts[i] for i in todo))  # identical texts computed once
            for start in tqdm(range(0, len(pending), batch_size), desc=desc, unit="batch", disable=not progress):
                chunk = pending[start:start + batch_size]
                self.put(chunk, np.asarray(fn(chunk)))
            values, missing = self.get(texts)
            assert not missing.any()
        return values
