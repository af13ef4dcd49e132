"""GA fitness for few models: closed-form leave-one-out ridge RMSE, penalty chosen per subset.

With 20-70 models the default :class:`~essence.search.genetic.RidgeFitness` has two bad options: in-sample
RMSE on the training models (a k-item ridge fits 20-50 models almost exactly, so every subset looks good)
or RMSE on 2-7 validation models (noise that ~10^5 candidate subsets then overfit). :class:`LOORidgeFitness`
scores each candidate by the leave-one-out RMSE of a ridge on its items over *all* the models it is given
(training + validation), computed in closed form from the hat matrix. The penalty is chosen once among
``alphas`` by the mean LOO RMSE of the first population scored (the GA's random initial subsets): with
few models the stronger penalties win.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..data.errors import InputError
from .genetic import mask_positions

__all__ = ["LOORidgeFitness", "LOOLineFitness"]


class LOORidgeFitness:
    """``-LOO RMSE`` (pp) of a ridge ``y ~ b + X_m w`` on each candidate's items; penalty ``alpha_`` from ``alphas``.

    ``R`` ``(n, M)`` responses of the pool items (NaN filled with the item mean), ``y`` ``(n,)`` pp.
    For one mask with centred items ``X`` ``(n, k)`` and ``A = X'X + alpha I``: ``w = A^-1 X'y``,
    leverages ``h_i = x_i' A^-1 x_i + 1/n`` (the ``1/n`` is the intercept's), LOO residuals
    ``(y_i - yhat_i) / (1 - h_i)`` (exact for a ridge whose centring is held fixed). A generation costs ``O(P (k^3 + n k^2))`` and ``8 P n k`` bytes, so it is meant for few models: ``n`` above
    ``max_models`` is refused (use :class:`~essence.search.genetic.RidgeFitness` there).
    """

    ruler = None

    def __init__(self, R, y, alphas=(1.0, 10.0, 100.0), max_models: int = 2000):
        X = np.asarray(R, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        if X.ndim != 2 or y.shape != (X.shape[0],):
            raise InputError(f"R, y: expected (n, M) and (n,), got {X.shape} and {y.shape}")
        if X.shape[0] > max_models:
            raise InputError(f"R: {X.shape[0]} models; LOO fitness is for few models (<= {max_models}), "
                             "use RidgeFitness")
        if X.shape[0] < 3:
            raise InputError(f"R: LOO fitness needs at least 3 models, got {X.shape[0]}")
        self.alphas = tuple(float(a) for a in alphas)
        if not self.alphas or min(self.alphas) <= 0:
            raise InputError(f"alphas: {alphas!r} must be positive penalties")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            fill = np.nanmean(X, axis=0)
        fill = np.where(np.isnan(fill), 0.0, fill)
        X = np.where(np.isnan(X), fill, X)
        self.Xc = np.ascontiguousarray(X - X.mean(axis=0))  # (n, M)
        self.XcT = np.ascontiguousarray(self.Xc.T)  # (M, n)
        self.yc = y - y.mean()
        self.n = X.shape[0]
        self.G = self.Xc.T @ self.Xc
        self.b = self.Xc.T @ self.yc
        self.n_items = X.shape[1]
        self.alpha_ = None

    def restrict(self, cols) -> "LOORidgeFitness":
        """The same fitness on a sub-pool (``cols`` positions into the pool)."""
        cols = np.asarray(cols, dtype=np.intp)
        new = object.__new__(LOORidgeFitness)
        new.__dict__.update(self.__dict__)
        new.Xc = np.ascontiguousarray(self.Xc[:, cols])
        new.XcT = np.ascontiguousarray(new.Xc.T)
        new.G = np.ascontiguousarray(self.G[np.ix_(cols, cols)])
        new.b = self.b[cols]
        new.n_items = cols.size
        return new

    def rmse(self, masks) -> np.ndarray:
        """``(P,)`` LOO RMSE (pp) of each mask's ridge (the first call also fixes ``alpha_``)."""
        idx = mask_positions(masks, self.n_items)
        k, M = idx.shape[1], self.n_items
        G = self.G.ravel().take(idx[:, :, None] * M + idx[:, None, :])  # (P, k, k)
        Xm = self.XcT[idx]  # (P, k, n)
        rhs = np.concatenate([self.b[idx][:, :, None], Xm], axis=2)  # (P, k, 1 + n)
        if self.alpha_ is None:  # first call (the GA's random initial population): choose the penalty
            per = [self._loo(G, Xm, rhs, a) for a in self.alphas]
            self.alpha_ = self.alphas[int(np.argmin([float(np.mean(r)) for r in per]))]
            return per[self.alphas.index(self.alpha_)]
        return self._loo(G, Xm, rhs, self.alpha_)

    def _loo(self, G, Xm, rhs, a: float) -> np.ndarray:
        sol = np.linalg.solve(G + a * np.eye(G.shape[1]), rhs)  # (P, k, 1 + n)
        pred = np.einsum("pk,pkn->pn", sol[:, :, 0], Xm)
        h = np.einsum("pkn,pkn->pn", Xm, sol[:, :, 1:]) + 1.0 / self.n
        e = (self.yc[None, :] - pred) / np.maximum(1.0 - h, 1e-6)
        best = np.sqrt(np.mean(e * e, axis=1))
        return best

    def __call__(self, masks) -> np.ndarray:
        return -self.rmse(masks)


class LOOLineFitness:
    """``-LOO RMSE`` (pp) of a least-squares line of the full score on each candidate's subset mean: the paper's
    fixed 1-D ruler, scored in closed form by leave-one-out over all the models it is given.

    ``R`` ``(n, M)`` responses of the pool items (NaN filled with the item mean), ``y`` ``(n,)`` pp. For one
    mask with subset means ``m`` (pp): slope ``b = S_my / S_mm`` (centred sums), residuals
    ``e_i = y_i - ybar - b (m_i - mbar)``, leverages ``h_i = 1/n + (m_i - mbar)^2 / S_mm`` and LOO residuals
    ``e_i / (1 - h_i)`` (exact for a line). Two parameters per subset whatever ``k``, so with 20-100 models the
    fitness is an honest estimate of the line's error on new models (a k-item ridge's is not). A generation
    costs ``O(P n k)``. A subset whose mean is constant over the models scores ``inf``.
    """

    ruler = None

    def __init__(self, R, y):
        X = np.asarray(R, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        if X.ndim != 2 or y.shape != (X.shape[0],):
            raise InputError(f"R, y: expected (n, M) and (n,), got {X.shape} and {y.shape}")
        if X.shape[0] < 3:
            raise InputError(f"R: LOO fitness needs at least 3 models, got {X.shape[0]}")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            fill = np.nanmean(X, axis=0)
        fill = np.where(np.isnan(fill), 0.0, fill)
        self.XT = np.ascontiguousarray(np.where(np.isnan(X), fill, X).T * 100.0)  # (M, n) pp
        self.yc = y - y.mean()
        self.n = X.shape[0]
        self.n_items = X.shape[1]

    def restrict(self, cols) -> "LOOLineFitness":
        """The same fitness on a sub-pool (``cols`` positions into the pool)."""
        new = object.__new__(LOOLineFitness)
        new.__dict__.update(self.__dict__)
        new.XT = np.ascontiguousarray(self.XT[np.asarray(cols, dtype=np.intp)])
        new.n_items = new.XT.shape[0]
        return new

    def rmse(self, masks) -> np.ndarray:
        """``(P,)`` LOO RMSE (pp) of each mask's line."""
        idx = mask_positions(masks, self.n_items)
        m = self.XT[idx].mean(axis=1)  # (P, n) subset means, pp
        mc = m - m.mean(axis=1, keepdims=True)
        sxx = (mc * mc).sum(axis=1, keepdims=True)
        ok = sxx[:, 0] > 1e-12
        sxx = np.where(sxx > 1e-12, sxx, 1.0)
        b = (mc @ self.yc)[:, None] / sxx
        h = 1.0 / self.n + mc * mc / sxx
        e = (self.yc[None, :] - b * mc) / np.maximum(1.0 - h, 1e-6)
        return np.where(ok, np.sqrt(np.mean(e * e, axis=1)), np.inf)

    def __call__(self, masks) -> np.ndarray:
        return -self.rmse(masks)
