"""Splitting models into train / validation / test: stratified (``random``) or the strongest as test (``top``)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .errors import InputError
from .responses import Responses

__all__ = ["Split", "split_models", "SPLIT_KINDS"]

#: how the test models are chosen: stratified at random, or the strongest ``test`` fraction
SPLIT_KINDS = ("random", "top")


class Split(NamedTuple):
    """Disjoint model indices: ``train`` fits, ``val`` chooses, ``test`` is touched once for the reported figure."""

    train: np.ndarray
    val: np.ndarray
    test: np.ndarray


def split_models(responses: Responses | np.ndarray, test: float = 0.1, val: float = 0.1, seed: int = 0,
                 kind: str = "random") -> Split:
    """Sorted model indices for train / validation / test of a `Responses` (its ``target``) or ``(n_models,)``
    targets; same seed, same split. Test: one model from each of ``round(test * n)`` target strata (``random``)
    or the ``round(test * n)`` strongest (``top``); validation: drawn stratified from the rest."""
    y = responses.target if isinstance(responses, Responses) else np.asarray(responses, dtype=float)
    n = len(y)
    for nm, f in (("test", test), ("val", val)):
        if not 0 <= f < 1:
            raise InputError(f"{nm}: fraction {f} must be in [0, 1)")
    if test + val >= 1:
        raise InputError(f"test + val = {test + val} leaves no training models; use smaller fractions")
    n_test, n_val = int(round(test * n)), int(round(val * n))
    if (test > 0 and n_test == 0) or (val > 0 and n_val == 0) or n - n_test - n_val < 2:
        raise InputError(
            f"{n} models are too few to split test={test}, val={val} (need at least one test, one validation "
            "and two training models); add models or change the fractions")
    rng = np.random.default_rng(seed)

    def draw(pool: np.ndarray, m: int) -> np.ndarray:
        if m == 0:
            return np.array([], dtype=np.intp)
        order = pool[np.lexsort((rng.random(pool.size), y[pool]))]
        return np.array([rng.choice(chunk) for chunk in np.array_split(order, m)], dtype=np.intp)

    all_idx = np.arange(n)
    if kind not in SPLIT_KINDS:
        raise InputError(f"split: {kind!r} is not one of {', '.join(SPLIT_KINDS)} (random: test models drawn across "
                         "the scores; top: the strongest models)")
    if kind == "top":
        te = np.lexsort((rng.random(n), y))[n - n_test:] if n_test else np.array([], dtype=np.intp)
    else:
        te = draw(all_idx, n_test)
    rest = np.setdiff1d(all_idx, te)
    va = draw(rest, n_val)
    tr = np.setdiff1d(rest, va)
    return Split(np.sort(tr), np.sort(va), np.sort(te))
