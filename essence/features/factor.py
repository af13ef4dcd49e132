"""A low-rank logistic factor model of the answers: ``P(model m right on item j) = sigmoid(theta_m . a_j + b_j)``."""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from ..data.errors import InputError

__all__ = ["FactorModel"]


class FactorModel:
    """``fit(R)``, ``R`` ``(n_models, n_items)`` in [0, 1] (NaN: missing), gives ``A_`` ``(n_items, d)`` loadings,
    ``b_`` ``(n_items,)`` easiness, ``theta_`` ``(n_models, d)`` abilities."""

    def __init__(self, d: int = 2, lam: float = 1.0, iters: int = 40, seed: int = 0):
        self.d = d
        self.lam = lam
        self.iters = iters
        self.seed = seed

    def fit(self, R) -> "FactorModel":
        R = np.asarray(R, dtype=np.float64)
        if R.ndim != 2 or R.shape[0] < 2:
            raise InputError(f"factor model: expected (n_models >= 2, n_items) answers, got shape {R.shape}")
        M = ~np.isnan(R)
        Y = np.where(M, R, 0.0)
        n, N = R.shape
        d = int(self.d)
        pm = np.clip(np.nanmean(np.where(M.any(axis=0), R, 0.5), axis=0), 0.02, 0.98)
        b = np.log(pm / (1 - pm))  # pm lies in [0.02, 0.98]
        if d == 0:
            self.A_, self.b_, self.theta_ = np.zeros((N, 0)), b, np.zeros((n, 0))
            return self
        U, S, Vt = np.linalg.svd(np.where(M, R, pm) - pm, full_matrices=False)
        theta = U[:, :d] * np.sqrt(n) + 0.01 * np.random.default_rng(self.seed).standard_normal((n, d))
        A = Vt[:d].T * S[:d] / np.sqrt(n) * 4.0
        theta, A, b = self._newton(Y, M.astype(np.float64), theta, A, b)
        mu = theta.mean(axis=0)  # standardise: theta' = W (theta - mu), a' = W^-T a, b' = b + a . mu
        evals, evecs = np.linalg.eigh(np.cov(theta.T).reshape(d, d) + 1e-9 * np.eye(d))
        W = evecs @ np.diag(evals ** -0.5) @ evecs.T
        self.theta_ = (theta - mu) @ W.T
        self.A_ = A @ np.linalg.inv(W)
        self.b_ = b + A @ mu
        return self

    def _newton(self, Y, Mf, theta, A, b):
        n, N = Y.shape
        d = theta.shape[1]
        pen_item = np.diag(np.r_[np.full(d, self.lam), 1e-3])
        pen_theta = self.lam * np.eye(d)
        beta = np.column_stack([A, b])  # (N, d + 1)
        for _ in range(int(self.iters)):
            Phi = np.column_stack([theta, np.ones(n)])  # items given abilities
            P = expit(Phi @ beta.T)
            W = P * (1 - P) * Mf
            g = ((Y - P) * Mf).T @ Phi - beta @ pen_item
            q = Phi.shape[1]
            H = (W.T @ (Phi[:, :, None] * Phi[:, None, :]).reshape(n, q * q)).reshape(N, q, q) + pen_item
            step = _damped(np.linalg.solve(H, g[..., None])[..., 0], 3.0)
            beta = beta + step
            A, bb = beta[:, :d], beta[:, d]  # abilities given items
            P = expit(theta @ A.T + bb)
            W = P * (1 - P) * Mf
            g = ((Y - P) * Mf) @ A - self.lam * theta
            H = (W @ (A[:, :, None] * A[:, None, :]).reshape(N, d * d)).reshape(n, d, d) + pen_theta
            st = _damped(np.linalg.solve(H, g[..., None])[..., 0], 3.0)
            theta = theta + st
            if max(np.abs(step).max(), np.abs(st).max()) < 1e-4:
                break
        return theta, beta[:, :d], beta[:, d]


def _damped(step, limit: float) -> np.ndarray:
    """Rows of ``step`` scaled down so that no entry exceeds ``limit``."""
    return step * np.minimum(1.0, limit / np.maximum(np.abs(step).max(axis=-1, keepdims=True), 1e-12))
