"""Kernel ridge on the chosen items (``kernel``): ``ybar + sd * sum_i beta_i exp(-gamma * d(x, x_i))`` over the
training models ``x_i``, ``d(x, x') = sum_j s_j (x_j - x'_j)^2``, ``s_j = 1 + w`` on the ``own`` columns, else 1."""

from __future__ import annotations

import numpy as np

from ..data.checks import ListOf, Real, check_params, store_params
from ..data.errors import InputError
from .base import _DIGITS, Reconstructor, check_X, decode_answers, encode_answers, fill_means

__all__ = ["KernelReconstructor", "loo_kernel_ridge", "sq_dists"]


def sq_dists(A: np.ndarray, B: np.ndarray, a2: np.ndarray | None = None, b2: np.ndarray | None = None) -> np.ndarray:
    """``(len(A), len(B))`` squared Euclidean distances between rows, clipped at 0; ``a2``, ``b2``: the rows'
    squared norms when the caller has them."""
    a2 = (A * A).sum(axis=1) if a2 is None else a2
    b2 = (B * B).sum(axis=1) if b2 is None else b2
    d = a2[:, None] + b2[None, :] - 2.0 * (A @ B.T)
    return np.maximum(d, 0.0, out=d)


def loo_kernel_ridge(K: np.ndarray, z: np.ndarray, alphas) -> np.ndarray:
    """Exact leave-one-out MSE ``(m,)`` of kernel ridge ``(K + alpha I) beta = z`` (``K`` ``(n, n)`` PSD, ``z``
    ``(n,)``) for each of ``alphas`` ``(m,)`` > 0."""
    w, V = np.linalg.eigh(K)
    w = np.maximum(w, 0.0)
    Vz = V.T @ z
    V2 = V * V
    out = np.empty(len(alphas))
    for i, a in enumerate(alphas):
        h = w / (w + float(a))
        resid = z - V @ (h * Vz)
        out[i] = float(np.mean((resid / np.maximum(1.0 - V2 @ h, 1e-12)) ** 2))
    return out


class KernelReconstructor(Reconstructor):
    """RBF kernel ridge; ``own_weights``, ``scales`` and ``alphas``: the grid searched by leave-one-out error
    (``loo_rmse_``, pp); a missing cell counts as its item's training mean."""

    kind = "kernel"
    _domains = {"own_weights": ListOf(Real(0.0)), "scales": ListOf(Real(0.0, open_min=True)),
                "alphas": ListOf(Real(0.0, open_min=True))}

    def __init__(self, own=(), own_weights=(0.0, 9.0), scales=(2.0, 4.0),
                 alphas=(0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)):
        store_params(self, locals())

    def _own(self, k: int) -> np.ndarray:
        own = self.own
        if (not isinstance(own, (list, tuple, np.ndarray))
                or any(isinstance(c, bool) or int(c) != c or c < 0 for c in own) or len(set(own)) != len(own)):
            raise InputError(f"kernel: own must be a list of distinct item positions >= 0, got {own!r}")
        own = np.asarray(own, dtype=np.intp)
        if own.size and own.max() >= k:
            raise InputError(f"kernel: own position {int(own.max())} is beyond the {k} chosen items")
        return own

    def _weights(self, k: int, w: float) -> np.ndarray:
        s = np.ones(k)
        s[self._own(k)] = 1.0 + float(w)
        return s

    def fit(self, X, y):
        check_params(self)
        X = check_X(X)
        y = np.asarray(y, dtype=np.float64)
        n, k = X.shape
        if n < 3:
            raise InputError(f"kernel: needs at least 3 training models for its leave-one-out choice, got {n}")
        own = self._own(k)
        fill = np.round(fill_means(X)[1], _DIGITS)
        Xf = np.where(np.isnan(X), fill, X)
        y_mean, y_sd = float(y.mean()), float(y.std() if y.std() > 0 else 1.0)
        z = (y - y_mean) / y_sd
        ws = [float(w) for w in self.own_weights] if own.size else [0.0]
        alphas = [float(a) for a in (self.alphas if isinstance(self.alphas, (list, tuple)) else [self.alphas])]
        scales = [float(c) for c in (self.scales if isinstance(self.scales, (list, tuple)) else [self.scales])]
        if len(ws) * len(scales) * len(alphas) == 1:  # nothing to choose: no leave-one-out pass
            best = (float("nan"), ws[0], scales[0], alphas[0])
        else:
            best = None
            for w in ws:
                s = self._weights(k, w)
                D = sq_dists(Xf * np.sqrt(s), Xf * np.sqrt(s))
                for c in scales:
                    mse = loo_kernel_ridge(np.exp(-(c / s.sum()) * D), z, alphas)
                    i = int(np.argmin(mse))
                    if best is None or mse[i] < best[0] - 1e-15:
                        best = (float(mse[i]), w, c, alphas[i])
        mse, w, c, a = best
        s = self._weights(k, w)
        gamma = c / s.sum()
        K = np.exp(-gamma * sq_dists(Xf * np.sqrt(s), Xf * np.sqrt(s)))
        beta = np.linalg.solve(K + a * np.eye(n), z)
        self.k_, self.fill_, self.train_ = k, fill, Xf
        self.w_, self.scale_, self.alpha_, self.gamma_ = w, c, a, float(gamma)
        self.beta_ = np.round(beta, _DIGITS)
        self.y_mean_, self.y_sd_ = round(y_mean, _DIGITS), round(y_sd, _DIGITS)
        self.loo_rmse_ = None if np.isnan(mse) else float(np.sqrt(mse) * y_sd)
        return self

    def to_dict(self) -> dict:
        return {"kind": self.kind, "params": self.params_dict(), "k": self.k_, "fill": self.fill_.tolist(),
                "own_weight": self.w_, "scale": self.scale_, "alpha": self.alpha_, "gamma": self.gamma_,
                "train": encode_answers(self.train_),
                "beta": self.beta_.tolist(), "y_mean": self.y_mean_, "y_sd": self.y_sd_, "loo_rmse": self.loo_rmse_}

    @classmethod
    def from_dict(cls, d: dict):
        obj = cls(**d["params"])
        obj.k_ = int(d["k"])
        obj._own(obj.k_)
        obj.fill_ = np.asarray(d["fill"], dtype=np.float64)
        T = decode_answers(d["train"], obj.k_, "kernel")
        obj.train_ = T
        obj.beta_ = np.asarray(d["beta"], dtype=np.float64)
        if obj.beta_.shape != (T.shape[0],) or obj.fill_.shape != (obj.k_,):
            raise InputError(f"kernel: {T.shape[0]} stored training rows need as many coefficients (got "
                             f"{obj.beta_.size}) and {obj.k_} fill values (got {obj.fill_.size})")
        obj.w_, obj.scale_, obj.alpha_ = float(d["own_weight"]), float(d["scale"]), float(d["alpha"])
        obj.gamma_, obj.y_mean_, obj.y_sd_ = float(d["gamma"]), float(d["y_mean"]), float(d["y_sd"])
        loo = d.get("loo_rmse")
        obj.loo_rmse_ = None if loo is None else float(loo)
        return obj
