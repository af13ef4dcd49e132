"""Item-selection methods behind one interface (see :mod:`essence.methods.base`).

Methods are imported lazily so that ``import essence`` does not load torch or py-irt.
"""

from __future__ import annotations

import importlib

from .base import Selector, check_k
from ..errors import InputError

__all__ = ["METHODS", "Selector", "check_k", "get_method", "make_method"]

#: registry name -> "module:Class" (relative to essence.methods)
METHODS: dict[str, str] = {
    "random": "random:RandomSelector",
    "essence": "essence:EssenceSelector",
    "kmeans": "kmeans:KMeansSelector",
    "herding": "herding:HerdingSelector",
    "ppl": "ppl:PPLSelector",
    "irt": "irt:IRTSelector",
    "tinybench": "tinybench:TinyBenchSelector",
    "disco": "disco:DiscoSelector",
    "auto": "auto:AutoSelector",
}


def get_method(name: str) -> type:
    """The selector class registered under ``name``; ValueError listing the known names."""
    if name not in METHODS:
        raise InputError(f"unknown method {name!r}; known methods: {', '.join(METHODS)}")
    module, cls = METHODS[name].split(":")
    return getattr(importlib.import_module(f"{__name__}.{module}"), cls)


def make_method(name: str, k: int, seed: int = 0, progress: bool = True, **params) -> Selector:
    """Instantiate a method; unknown parameters raise InputError naming the accepted ones."""
    cls = get_method(name)
    accepted = set(cls._param_names())
    unknown = set(params) - accepted
    if unknown:
        raise InputError(
            f"method {name!r}: unknown parameter(s) {sorted(unknown)}; accepted: {sorted(accepted - {'k', 'seed', 'progress'})}"
        )
    return cls(k=k, seed=seed, progress=progress, **params)
