"""The reconstructor contract and the registry of kinds (:data:`KINDS`, filled as each kind's class is defined).

A reconstructor is a scikit-learn ``BaseEstimator``: ``fit(X, y)`` with ``X`` ``(n_models, k)`` in [0, 1] (NaN =
missing) and ``y`` ``(n_models,)`` pp returns ``self``; ``predict(X)`` gives ``(n_models,)`` pp clipped to [0, 100];
``to_dict()`` the fitted state as plain JSON numbers, which :func:`reconstructor_from_dict` rebuilds.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
from sklearn.base import BaseEstimator

from ..data._io import jsonable
from ..data.errors import InputError
from . import forward

__all__ = ["encode_answers", "decode_answers", "Reconstructor", "KINDS", "reconstructor_class",
           "reconstructor_from_dict", "subset_score", "check_X", "model_folds", "fit_reconstructor", "fill_means"]

#: kind name -> reconstructor class; filled as each class is defined
KINDS: dict[str, type] = {}


class Reconstructor(BaseEstimator):
    """Base of every reconstructor; ``kind`` names the class in :data:`KINDS`."""

    kind = "base"

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        if cls.__dict__.get("kind") not in (None, "base"):
            KINDS[cls.kind] = cls
        if "fit" in cls.__dict__:  # a new fit makes the cached state stale
            fit = cls.__dict__["fit"]

            @functools.wraps(fit)
            def fit_and_forget(self, *args, **kwargs):
                self.__dict__.pop("_state", None)
                return fit(self, *args, **kwargs)

            cls.fit = fit_and_forget

    def state(self) -> dict:
        """The fitted state as JSON numbers (``to_dict()``), computed once per fit."""
        if "_state" not in self.__dict__:
            self.__dict__["_state"] = self.to_dict()
        return self.__dict__["_state"]

    def predict(self, X) -> np.ndarray:
        """Estimates ``(n_models,)`` in pp, clipped to [0, 100], of answers ``X`` ``(n_models, k)``, by
        :mod:`essence.reconstructors.forward` on the fitted state."""
        state = self.state()
        return forward.predict(state, check_X(X, state.get("k")))

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
        raise InputError(f"X: {X.shape[1]} columns, but the reconstructor was fitted on {k} chosen items")
    return X


def fill_means(X) -> tuple[np.ndarray, np.ndarray]:
    """``(X, fill)``: NaN cells of ``X`` ``(n, k)`` replaced by their column's mean ``fill`` ``(k,)`` (0 for a column
    with no value)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        fill = np.nanmean(X, axis=0)
    fill = np.where(np.isnan(fill), 0.0, fill)
    return np.where(np.isnan(X), fill, X), fill


def subset_score(X: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """``100 * weighted nanmean(X, axis=1)`` (pp) of ``X`` ``(n_models, k)``; InputError for bad weights or a
    model with no result on any chosen item."""
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
    """``rec.fit(X, y)``, or ``rec.fit(X, y, R=R)`` for a kind that says ``needs_pool`` (``R`` ``(n, n_pool)``:
    the same models' answers on every pool item; InputError when it is None). Returns the fitted ``rec``."""
    if getattr(rec, "needs_pool", False):
        if R is None:
            raise InputError(f"{rec.kind}: needs the training models' answers on every pool item (R)")
        return rec.fit(X, y, R=R)
    return rec.fit(X, y)


_LEVELS = 20  # answers on the grid of 1/_LEVELS (imputed ones, graded ones) are stored one character each
_LEVEL_CHARS = "abcdefghijklmnopqrstu"  # value i / _LEVELS -> _LEVEL_CHARS[i] (a = 0, u = 1)


def encode_answers(T) -> dict:
    """Answers ``(n, k)`` in [0, 1] as JSON rows: ``"0"``/``"1"`` strings when binary, ``"a"``..``"u"`` on the
    grid of twentieths, else rounded numbers; :func:`decode_answers` inverts it."""
    T = np.asarray(T, dtype=np.float64)
    if np.isin(T, (0.0, 1.0)).all():
        return {"binary": True, "rows": ["".join("1" if v else "0" for v in r) for r in T.astype(bool)]}
    grid = np.round(T * _LEVELS)
    if np.allclose(grid, T * _LEVELS, rtol=0.0, atol=1e-9) and ((grid >= 0) & (grid <= _LEVELS)).all():
        return {"levels": _LEVELS, "rows": ["".join(_LEVEL_CHARS[int(v)] for v in r) for r in grid]}
    return {"rows": np.round(T, _DIGITS).tolist()}


def decode_answers(d: dict, k: int, what: str) -> np.ndarray:
    """The ``(n, k)`` matrix of :func:`encode_answers`' output ``d``; InputError naming ``what`` when damaged."""
    rows = d.get("rows") if isinstance(d, dict) else None
    if not isinstance(rows, list):
        raise InputError(f"{what}: the stored answers are not a list of rows")
    if d.get("binary") or d.get("levels") is not None:
        chars = "01" if d.get("binary") else _LEVEL_CHARS
        if (not d.get("binary") and d["levels"] != _LEVELS) or any(
                not isinstance(r, str) or len(r) != k or set(r) - set(chars) for r in rows):
            raise InputError(f"{what}: each stored row must be a string of {k} characters among {chars!r}")
        step = 1.0 if d.get("binary") else 1.0 / _LEVELS
        code = {c: i * step for i, c in enumerate(chars)}
        return np.array([[code[c] for c in r] for r in rows], dtype=np.float64).reshape(len(rows), k)
    return np.asarray(rows, dtype=np.float64).reshape(-1, k)
