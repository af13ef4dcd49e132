"""Synthetic models for the item search: with tens of reference models a search for the ``k`` items that best
predict the full score fits their noise; models drawn from a factor model of the references
(:class:`essence.features.factor.FactorModel`, abilities ``theta ~ N(0, I)``) add noise-free rows: expected answers
``sigmoid(theta . a_j + b_j)`` and full scores through the references' line from the pool mean to the target
(:func:`essence.reconstructors.frontier.pool_map`)."""

from __future__ import annotations

import numpy as np

from ..features.factor import FactorModel
from ..reconstructors.frontier import fit_factor, pool_map

__all__ = ["synthetic_models", "augmented"]


def synthetic_models(R, y, n: int, d: int = 2, seed: int = 0,
                     factor: FactorModel | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(S, t)``: ``n`` synthetic models' expected answers ``S`` ``(n, N)`` in [0, 1] and full scores ``t``
    ``(n,)`` pp, from a rank-``d`` factor model of the references' answers ``R`` ``(m, N)`` (no NaN) with full
    scores ``y`` ``(m,)`` pp. ``factor``: that model when the caller has it already (``fit_factor(R, d,
    seed=seed)``), else fitted here. Deterministic in ``seed``."""
    R = np.asarray(R, dtype=np.float64)
    fm = factor if factor is not None else fit_factor(R, d, seed=seed)
    theta = np.random.default_rng(seed).standard_normal((int(n), fm.A_.shape[1]))
    S = 1.0 / (1.0 + np.exp(-(theta @ fm.A_.T + fm.b_)))
    a, b, _ = pool_map(R, y)
    return S, a + b * 100.0 * S.mean(axis=1)


def augmented(R, y, n: int, d: int = 2, seed: int = 0,
              factor: FactorModel | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(R', y')``: the references ``R`` ``(m, N)``, ``y`` ``(m,)`` with ``n`` synthetic models
    (:func:`synthetic_models`, ``factor`` passed on) stacked below them; ``(R, y)`` unchanged when ``n`` is 0."""
    if int(n) <= 0:
        return np.asarray(R, dtype=np.float64), np.asarray(y, dtype=np.float64)
    S, t = synthetic_models(R, y, n, d, seed, factor)
    return np.vstack([R, S]), np.r_[y, t]
