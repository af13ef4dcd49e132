"""The reconstructor contract and the registry of kinds.

A reconstructor maps a model's results on the chosen items to its full-benchmark score:

* it is a scikit-learn ``BaseEstimator``: ``__init__`` stores its parameters unchanged, ``get_params()``
  returns them and ``sklearn.base.clone`` gives an unfitted copy; values are checked in ``fit``;
* ``fit(X, y)``: ``X`` ``(n_models, k)`` in [0, 1] (NaN = missing), ``y`` ``(n_models,)`` in percentage
  points; returns ``self``;
* ``predict(X)`` returns ``(n_models,)`` estimates in percentage points, clipped to [0, 100];
* ``to_dict()`` gives the fitted state as plain JSON numbers (no pickle) and :func:`reconstructor_from_dict`
  rebuilds an object whose ``predict`` gives the same numbers.

Every subclass that names a ``kind`` is registered under it when its class is defined (:data:`KINDS`), so
the registry holds real classes; :mod:`essence.reconstructors` imports every kind's module.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator

from ..data._io import jsonable
from ..data.errors import InputError

__all__ = ["Reconstructor", "KINDS", "reconstructor_class", "reconstructor_from_dict", "subset_score", "check_X",
           "model_folds", "fit_reconstructor"]

#: kind name -> reconstructor class; filled as each class is defined
KINDS: dict[str, type] = {}


class Reconstructor(BaseEstimator):
    """Base of every reconstructor: scikit-learn's parameter handling, the registry and the artifact helpers.

    ``kind`` names the class in :data:`KINDS`; :meth:`params_dict` is ``get_params()`` as plain JSON values
    (what ``to_dict`` stores under ``"params"`` and ``from_dict`` passes back).
    """

    kind = "base"

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        if cls.__dict__.get("kind") not in (None, "base"):
            KINDS[cls.kind] = cls

    def params_dict(self) -> dict:
        """The constructor parameters as JSON values (tuples and arrays become lists)."""
        return jsonable(self.get_params(deep=False))


def reconstructor_class(kind: str) -> type:
    """The class registered under ``kind``; InputError naming the known kinds."""
    if kind not in KINDS:
        raise InputError(f"reconstructor: unknown kind {kind!r}; known kinds: {', '.join(sorted(KINDS))}")
    return KINDS[kind]


def reconstructor_from_dict(d: dict):
    """Rebuild a fitted reconstructor from its ``to_dict()`` output."""
    return reconstructor_class(d.get("kind")).from_dict(d)


def check_X(X, k: int | None = None) -> np.ndarray:
    """``X`` as a float ``(n_models, k)`` array; InputError on another shape or another ``k``."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise InputError(f"X: expected (n_models, k), got shape {X.shape}")
    if k is not None and X.shape[1] != k:
        raise InputError(f"X: {X.shape[1]} columns, but the reconstructor was fitted on {k} items")
    return X


def subset_score(X: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Score on the chosen items, pp: ``100 * weighted nanmean(X, axis=1)``; ``X`` is ``(n_models, k)``.

    Missing cells are left out of the mean (and their weight with them). A model with no result on any
    chosen item raises ValueError.
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise InputError(f"X: expected (n_models, k), got shape {X.shape}")
    w = np.ones(X.shape[1]) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != (X.shape[1],) or not np.isfinite(w).all() or (w < 0).any() or not w.sum() > 0:
        raise InputError(f"weights: must be {X.shape[1]} finite numbers >= 0 (one per chosen item), not all zero; got "
                         f"{w.size} with min {w.min() if w.size else float('nan'):g} and sum {w.sum():g}")
    obs = ~np.isnan(X)
    den = obs.astype(np.float64) @ w
    if (den <= 0).any():
        bad = np.flatnonzero(den <= 0)
        raise InputError(f"X: {bad.size} model(s) (rows {bad[:5].tolist()}) have no result on any chosen item")
    return 100.0 * (np.where(obs, X, 0.0) @ w) / den


_DIGITS = 10  # decimals kept in the artifact; predictions are made from the rounded numbers



def _rounded(a) -> np.ndarray:
    return np.round(np.asarray(a, dtype=np.float64), _DIGITS)


def model_folds(n: int, folds: int = 5, seed: int = 0) -> np.ndarray:
    """Fold label ``(n,)`` of each of ``n`` models for K-fold CV (``min(folds, n)`` folds, seeded, balanced)."""
    if n < 2:
        raise InputError(f"cross-validation needs at least 2 models, got {n}")
    f = max(2, min(int(folds), n))
    return np.random.default_rng(seed).permutation(n) % f


def fit_reconstructor(rec, X, y, R=None):
    """``rec.fit(X, y)``, or ``rec.fit(X, y, R=R)`` for a kind that says ``needs_pool`` (it models the
    training models' answers on every pool item: ``R`` ``(n, n_pool)``, the same rows as ``X``). Returns
    the fitted ``rec``; InputError when such a kind gets no ``R``."""
    if getattr(rec, "needs_pool", False):
        if R is None:
            raise InputError(f"{rec.kind}: needs the training models' answers on every pool item (R)")
        return rec.fit(X, y, R=R)
    return rec.fit(X, y)
