"""Item-text features cached on disk: :func:`embed_texts` (:mod:`essence.features.text`), :func:`lm_hidden_states`
and :func:`perplexity` (:mod:`essence.features.lm`), imported on first use (they load torch)."""

from .cache import FeatureCache, cache_root, text_key

__all__ = ["FeatureCache", "cache_root", "text_key", "embed_texts", "lm_hidden_states", "perplexity"]


def __getattr__(name):
    if name == "embed_texts":
        from .text import embed_texts

        return embed_texts
    if name in ("lm_hidden_states", "perplexity"):
        from . import lm

        return getattr(lm, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
