"""A low-rank logistic factor model of the answers: ``P(model m right on item j) = sigmoid(theta_m . a_j + b_j)``.

A fit is an SVD of the centred answers (the start) and up to ``iters`` alternating damped Newton steps. Callers fit
the same answers again (``auto`` compares ranks on each fold, then refits the references), so SVDs and finished fits
are memoised by the answers' bytes (:data:`MEMO` each, least recently used dropped): the very arrays a fresh fit
computes, unchanged to the last bit. Above :data:`ABILITY_ITEMS_ABOVE` items the abilities come from
:data:`ABILITY_ITEMS` items drawn at random (seeded) and every item's ``(a_j, b_j)`` is then its own penalised
logistic regression on them (:meth:`FactorModel._items`); no shipped benchmark comes near that threshold.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

import numpy as np
from scipy.special import expit

from ..data.checks import store_params
from ..data.errors import InputError

__all__ = ["FactorModel", "MEMO", "ABILITY_ITEMS", "ABILITY_ITEMS_ABOVE"]

#: fits (and SVDs) memoised per process, least recently used dropped beyond this many
MEMO = 8
#: leading singular vectors an SVD keeps in the memo (a rank above it recomputes the SVD)
SVD_KEEP = 16
#: above this many items the abilities come from :data:`ABILITY_ITEMS` of them (module docstring)
ABILITY_ITEMS_ABOVE = 2000
ABILITY_ITEMS = 1000
_SVDS: "OrderedDict[tuple, tuple]" = OrderedDict()
_FITS: "OrderedDict[tuple, tuple]" = OrderedDict()
_LOCK = threading.Lock()


def _digest(R: np.ndarray) -> tuple:
    """The answers' identity for the memo: shape and a hash of their bytes (NaN pattern included)."""
    return R.shape, hashlib.sha1(np.ascontiguousarray(R).view(np.uint8)).hexdigest()


def _recall(memo: OrderedDict, key):
    with _LOCK:
        hit = memo.get(key)
        if hit is not None:
            memo.move_to_end(key)
        return hit


def _keep(memo: OrderedDict, key, value) -> None:
    with _LOCK:
        memo[key] = value
        memo.move_to_end(key)
        while len(memo) > MEMO:
            memo.popitem(last=False)


class FactorModel:
    """``fit(R)``, ``R`` ``(n_models, n_items)`` in [0, 1] (NaN: missing), gives ``A_`` ``(n_items, d)`` loadings,
    ``b_`` ``(n_items,)`` easiness, ``theta_`` ``(n_models, d)`` abilities."""

    def __init__(self, d: int = 2, lam: float = 1.0, iters: int = 40, seed: int = 0):
        store_params(self, locals())

    def fit(self, R) -> "FactorModel":
        R = np.asarray(R, dtype=np.float64)
        if R.ndim != 2 or R.shape[0] < 2:
            raise InputError(f"factor model: expected (n_models >= 2, n_items) answers, got shape {R.shape}")
        data_key = _digest(R)
        fit_key = (data_key, int(self.d), float(self.lam), int(self.iters), int(self.seed), ABILITY_ITEMS_ABOVE,
                   ABILITY_ITEMS)
        hit = _recall(_FITS, fit_key)
        if hit is not None:
            self.A_, self.b_, self.theta_ = (a.copy() for a in hit)
            return self
        M = ~np.isnan(R)
        Y = np.where(M, R, 0.0)
        n, N = R.shape
        d = int(self.d)
        pm = np.clip(np.nanmean(np.where(M.any(axis=0), R, 0.5), axis=0), 0.02, 0.98)
        b = np.log(pm / (1 - pm))  # pm lies in [0.02, 0.98]
        if d == 0:
            self.A_, self.b_, self.theta_ = np.zeros((N, 0)), b, np.zeros((n, 0))
            return self
        Mf = None if M.all() else M.astype(np.float64)
        if N > ABILITY_ITEMS_ABOVE:  # abilities from a random part of the items, then every item given them
            sub = np.sort(np.random.default_rng([int(self.seed), N]).choice(N, ABILITY_ITEMS, replace=False))
            theta, A_s, b_s = self._alternate(R[:, sub], M[:, sub], Y[:, sub], None if Mf is None else Mf[:, sub],
                                              pm[sub], b[sub], d, sigmoid=_sigmoid)
            # the other items start from the least-squares slopes of their centred answers on the abilities, on
            # the logistic scale (x 4, the slope of the sigmoid at 0 being 1/4)
            tc = theta - theta.mean(axis=0)
            A = (np.linalg.solve(tc.T @ tc + 1e-9 * np.eye(d), tc.T @ (np.where(M, R, pm) - pm)) * 4.0).T
            A[sub], b = A_s, b.copy()
            b[sub] = b_s
            A, b = self._items(Y, Mf, theta, A, b)
        else:
            theta, A, b = self._alternate(R, M, Y, Mf, pm, b, d, data_key)
        mu = theta.mean(axis=0)  # standardise: theta' = W (theta - mu), a' = W^-T a, b' = b + a . mu
        evals, evecs = np.linalg.eigh(np.cov(theta.T).reshape(d, d) + 1e-9 * np.eye(d))
        W = evecs @ np.diag(evals ** -0.5) @ evecs.T
        self.theta_ = (theta - mu) @ W.T
        self.A_ = A @ np.linalg.inv(W)
        self.b_ = b + A @ mu
        _keep(_FITS, fit_key, (self.A_.copy(), self.b_.copy(), self.theta_.copy()))
        return self

    def _alternate(self, R, M, Y, Mf, pm, b, d, data_key=None, sigmoid=expit):
        """``(theta, A, b)`` before standardising: the SVD start (memoised) and the alternating Newton steps."""
        n, N = R.shape
        data_key = _digest(R) if data_key is None else data_key
        svd = _recall(_SVDS, data_key)
        if svd is None or (svd[1].size < d and svd[1].size < min(n, N)):
            U, S, Vt = np.linalg.svd(np.where(M, R, pm) - pm, full_matrices=False)
            r = max(SVD_KEEP, d)  # the leading vectors only: the full Vt is (min(n, N), N)
            svd = (U[:, :r].copy(), S[:r].copy(), Vt[:r].copy())
            _keep(_SVDS, data_key, svd)
        U, S, Vt = svd
        theta = U[:, :d] * np.sqrt(n) + 0.01 * np.random.default_rng(self.seed).standard_normal((n, d))
        A = Vt[:d].T * S[:d] / np.sqrt(n) * 4.0
        return self._newton(Y, Mf, theta, A, b, sigmoid)

    def _items(self, Y, Mf, theta, A, b, chunk: int = 2048):
        """``(A, b)``: every item's loadings and easiness given the abilities ``theta`` (a penalised logistic
        regression per item, independent given ``theta``): damped Newton steps from ``(A, b)``, ``chunk`` items at
        a time, each item until its own largest step is under 1e-4 (the alternating fit's tolerance) or after
        ``iters`` steps."""
        n, N = Y.shape
        d = theta.shape[1]
        pen_item = np.diag(np.r_[np.full(d, self.lam), 1e-3])
        Phi = np.column_stack([theta, np.ones(n)])
        q = d + 1
        PhiPhi = (Phi[:, :, None] * Phi[:, None, :]).reshape(n, q * q)
        beta = np.column_stack([A, b])
        for s in range(0, N, chunk):
            act = np.arange(s, min(s + chunk, N))  # the items of this chunk still moving
            Yc = np.ascontiguousarray(Y[:, act])
            Mc = None if Mf is None else np.ascontiguousarray(Mf[:, act])
            bc = beta[act]
            for _ in range(int(self.iters)):
                P = _sigmoid(Phi @ bc.T)
                W = P * (1 - P)
                E = Yc - P
                if Mc is not None:
                    W *= Mc
                    E *= Mc
                g = E.T @ Phi - bc @ pen_item
                H = (W.T @ PhiPhi).reshape(-1, q, q) + pen_item
                step = _damped(np.linalg.solve(H, g[..., None])[..., 0], 3.0)
                bc = bc + step
                moving = np.abs(step).max(axis=1) >= 1e-4
                if not moving.all():
                    beta[act[~moving]] = bc[~moving]
                    act, bc, Yc = act[moving], bc[moving], Yc[:, moving]
                    Mc = None if Mc is None else Mc[:, moving]
                    if not act.size:
                        break
            beta[act] = bc
        return beta[:, :d], beta[:, d]

    def _newton(self, Y, Mf, theta, A, b, sigmoid=expit):
        """Alternating damped Newton steps (items given abilities, abilities given items). ``Mf``: the 0/1 mask of
        answered entries, None when every entry is answered. Three ``(n, N)`` buffers are reused throughout.
        ``sigmoid(x, out=)``: scipy's ``expit`` (the fit of every shipped benchmark), or :func:`_sigmoid`."""
        n, N = Y.shape
        d = theta.shape[1]
        pen_item = np.diag(np.r_[np.full(d, self.lam), 1e-3])
        pen_theta = self.lam * np.eye(d)
        beta = np.column_stack([A, b])  # (N, d + 1)
        P, W, E = np.empty((n, N)), np.empty((n, N)), np.empty((n, N))

        def weights_residuals():  # W = P (1 - P) [* Mf], E = (Y - P) [* Mf]
            np.subtract(1.0, P, out=W)
            np.multiply(W, P, out=W)
            np.subtract(Y, P, out=E)
            if Mf is not None:
                np.multiply(W, Mf, out=W)
                np.multiply(E, Mf, out=E)

        for _ in range(int(self.iters)):
            Phi = np.column_stack([theta, np.ones(n)])  # items given abilities
            np.matmul(Phi, beta.T, out=P)
            sigmoid(P, out=P)
            weights_residuals()
            g = E.T @ Phi - beta @ pen_item
            q = Phi.shape[1]
            H = (W.T @ (Phi[:, :, None] * Phi[:, None, :]).reshape(n, q * q)).reshape(N, q, q) + pen_item
            step = _damped(np.linalg.solve(H, g[..., None])[..., 0], 3.0)
            beta = beta + step
            A, bb = beta[:, :d], beta[:, d]  # abilities given items
            np.matmul(theta, A.T, out=P)
            P += bb
            sigmoid(P, out=P)
            weights_residuals()
            g = E @ A - self.lam * theta
            H = (W @ (A[:, :, None] * A[:, None, :]).reshape(N, d * d)).reshape(n, d, d) + pen_theta
            st = _damped(np.linalg.solve(H, g[..., None])[..., 0], 3.0)
            theta = theta + st
            if max(np.abs(step).max(), np.abs(st).max()) < 1e-4:
                break
        return theta, beta[:, :d], beta[:, d]


def _sigmoid(x, out=None) -> np.ndarray:
    """``1 / (1 + exp(-x))`` by numpy's vectorised ``exp``: several times faster than scipy's ``expit`` and equal
    to it within rounding; used only on the many-items path (module docstring)."""
    out = np.negative(x, out=out)
    with np.errstate(over="ignore"):  # exp(-x) = inf where x < -709: the sigmoid is 0 there, as it should be
        np.exp(out, out=out)
    out += 1.0
    return np.reciprocal(out, out=out)


def _damped(step, limit: float) -> np.ndarray:
    """Rows of ``step`` scaled down so that no entry exceeds ``limit``."""
    return step * np.minimum(1.0, limit / np.maximum(np.abs(step).max(axis=-1, keepdims=True), 1e-12))
