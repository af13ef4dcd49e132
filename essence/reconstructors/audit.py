"""The audit's estimator: AIPW (Zhang, Dorner & Hardt, NeurIPS 2025) as a weighted mean ``sum_j w_j x_j`` of the
new model's answers, weights from a ridge over items whose features are the reference models' answers."""

from __future__ import annotations

import numpy as np

from ..data.checks import Real, check_params, store_params
from ..data.errors import InputError
from .base import check_X
from .simple import WeightedLineReconstructor

__all__ = ["AIPWReconstructor", "aipw_weights"]


def aipw_weights(R, items, alpha: float = 10.0) -> np.ndarray:
    """AIPW's weights ``(k,)`` (summing to 1) on the sampled ``items`` (positions into the columns of ``R``
    ``(n_ref, N)``, the reference models' answers on every item; a missing cell counts as its item's mean)."""
    R = np.asarray(R, dtype=np.float64)
    items = np.asarray(items, dtype=np.intp)
    N, k = R.shape[1], items.size
    if k >= N:
        return np.full(k, 1.0 / k)
    means = np.nanmean(np.where(np.isnan(R).all(axis=0), 0.5, R), axis=0)
    R = np.where(np.isnan(R), means, R)
    rest = np.setdiff1d(np.arange(N), items)
    Z = R[:, items].T  # (k, n_ref): one row of features per sampled item
    z_bar = Z.mean(axis=0)
    Zc = Z - z_bar
    a = np.linalg.solve(Zc @ Zc.T + float(alpha) * np.eye(k), Zc @ (R[:, rest].mean(axis=1) - z_bar))
    return np.full(k, 1.0 / k) + (a - a.mean()) / (1.0 + k / rest.size)


class AIPWReconstructor(WeightedLineReconstructor):
    """Full score = ``intercept + slope * 100 * sum_j w_j x_j``; ``items``: the chosen items' columns of ``R``,
    ``alpha``: the ridge penalty. Fitted as ``fit(X, y, R=R)``."""

    kind = "aipw"
    needs_pool = True
    _domains = {"alpha": Real(0.0, open_min=True)}

    def __init__(self, items=(), alpha: float = 10.0, weights=None):
        store_params(self, locals())

    def fit(self, X, y, R=None):
        check_params(self)
        X = check_X(X)
        y = np.asarray(y, dtype=np.float64)
        if R is None:
            raise InputError("aipw: fit needs R, the reference models' answers on every item (fit(X, y, R=R))")
        R = np.asarray(R, dtype=np.float64)
        items = np.asarray(self.items, dtype=np.intp)
        if items.shape != (X.shape[1],) or R.shape[0] != X.shape[0] or items.min() < 0 or items.max() >= R.shape[1]:
            raise InputError(f"aipw: items ({items.size} positions) must index the {R.shape[1]} columns of R for the "
                             f"{X.shape[1]} chosen items")
        self.weights = np.round(aipw_weights(R, items, self.alpha), 12).tolist()
        self.k_ = X.shape[1]
        with np.errstate(invalid="ignore"):
            pool_mean = 100.0 * np.nanmean(R, axis=1)
        if np.allclose(pool_mean, y, atol=1e-3, equal_nan=False):  # the target is the pool mean: AIPW as published
            self.slope_, self.intercept_ = 1.0, 0.0
        else:  # AIPW's weights may be negative: the weighted mean over each model's answered items
            obs = ~np.isnan(X)
            w = np.asarray(self.weights)
            s = 100.0 * (np.where(obs, X, 0.0) @ w) / (obs @ w)
            self.slope_, self.intercept_ = (float(v) for v in np.polyfit(s, y, 1))
        return self

    def params_dict(self) -> dict:
        return {"items": [int(i) for i in np.asarray(self.items)], "alpha": float(self.alpha),
                "weights": list(self.weights) if self.weights is not None else None}
