"""On-disk cache of per-text features (embeddings, hidden states, perplexities).

Features are keyed by the feature model's id, the kind of feature and the SHA-256 of each text, so a text
seen once is never recomputed. Shards are ``.npz`` files written atomically.

Location: ``$ESSENCE_CACHE`` if set; else ``.cache/`` in the project checkout; else ``~/.cache/essence``.

Rows committed as data (:mod:`essence.features.committed`, ``data/features/``) are read first, after their
checksums are verified, and take precedence over the cache's own rows of the same text: a fresh clone and a
warm checkout see the same features.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import numpy as np

from ..data._io import atomic_path
from ..data.errors import InputError

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
    """Features of kind ``kind`` (e.g. ``"embedding"``, ``"hidden_last"``, ``"ppl"``) from model ``model_id``.

    ``get(texts)`` returns ``(values, missing)``: ``values`` ``(n, *feature_shape)`` (rows of missing
    texts are zero) or None when nothing is cached, and ``missing`` ``(n,)`` bool. ``put(texts, values)``
    stores new rows. ``committed``: read the committed rows of ``(model_id, kind)``
    (:func:`essence.features.committed.committed_rows`) before the cache's own; InputError when a committed
    file's checksum differs.
    """

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
                            for k, v in zip(z["keys"].tolist(), z["values"]):
                                index[k] = v
                    except Exception:  # a foreign or damaged file: ignore it, recompute what it held
                        continue
            if self.committed:
                from .committed import committed_rows

                index.update(committed_rows(self.model_id, self.kind))
            self._index = index
        return self._index

    def get(self, texts) -> tuple[np.ndarray | None, np.ndarray]:
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
        index = self._load()
        for k, v in zip(keys.tolist(), values):
            index[k] = v

    def compute(self, texts, fn, batch_size: int = 64, progress: bool = True, desc: str = "features") -> np.ndarray:
        """Features for every text: cached rows are read, the rest computed by ``fn(list_of_texts) -> array``
        in batches (each batch cached as soon as it is done, so an interrupted run resumes)."""
        texts = [str(t) for t in texts]
        values, missing = self.get(texts)
        todo = np.flatnonzero(missing)
        if todo.size:
            # de-duplicate identical texts before computing
            uniq: dict[str, int] = {}
            for i in todo:
                uniq.setdefault(texts[i], i)
            pending = list(uniq)
            from tqdm.auto import tqdm

            starts = range(0, len(pending), batch_size)
            for start in tqdm(starts, desc=desc, unit="batch", disable=not progress):
                chunk = pending[start:start + batch_size]
                self.put(chunk, np.asarray(fn(chunk)))
            values, missing = self.get(texts)
            assert not missing.any()
        return values
