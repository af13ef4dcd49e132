"""The item bank of adaptive testing: a 2PL model ``P_j(theta) = sigmoid(a_j theta + d_j)`` fitted by marginal
maximum likelihood, the ability scale standardised on the references."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import minimize

from ..data.errors import InputError
from .irt import _sigmoid

__all__ = ["ItemBank", "fit_bank", "posterior", "FIT_DEFAULTS"]

#: the fit's defaults: prior sds of log a and d, quadrature nodes on [-5, 5], L-BFGS iterations
FIT_DEFAULTS = {"sd_log_a": 0.5, "sd_d": 3.0, "n_nodes": 61, "max_iter": 300}


@dataclass
class ItemBank:
    """``a`` ``(J,)`` discriminations (>= 0), ``d`` ``(J,)`` intercepts; ``score_map`` ``(intercept, slope,
    resid_sd)``: full score (pp) = intercept + slope x pool score; ``info``: fit diagnostics."""

    a: np.ndarray
    d: np.ndarray
    score_map: tuple = (0.0, 100.0, 0.0)
    info: dict = field(default_factory=dict)

    @property
    def n_items(self) -> int:
        return int(self.a.shape[0])

    def prob(self, theta) -> np.ndarray:
        """Expected answers ``(n, J)`` at abilities ``theta`` ``(n,)``."""
        return _sigmoid(np.asarray(theta, dtype=np.float64).reshape(-1, 1) * self.a + self.d)

    def fisher(self, theta) -> np.ndarray:
        """Fisher information ``a^2 P (1 - P)`` ``(n, J)`` at ``theta`` ``(n,)``."""
        p = self.prob(theta)
        return self.a**2 * p * (1.0 - p)

    def to_dict(self) -> dict:
        return {"a": self.a.tolist(), "d": self.d.tolist(), "score_map": list(self.score_map), "info": self.info}

    @classmethod
    def from_dict(cls, d: dict) -> "ItemBank":
        a, dd = np.asarray(d["a"], dtype=np.float64), np.asarray(d["d"], dtype=np.float64)
        sm = tuple(float(x) for x in d["score_map"])
        if a.ndim != 1 or a.shape != dd.shape or not np.isfinite(np.r_[a, dd, sm]).all() or (a < 0).any() \
                or len(sm) != 3:
            raise InputError("item bank: 'a', 'd' equal-length finite lists (a >= 0), 'score_map' 3 numbers")
        return cls(a, dd, sm, dict(d.get("info", {})))


def posterior(bank: ItemBank, R, nodes, log_w) -> np.ndarray:
    """Posterior weights ``(N, Q)`` over ``nodes`` ``(Q,)`` (log prior ``log_w``) of answers ``R`` ``(N, J)``."""
    R = np.asarray(R, dtype=np.float64)
    M = ~np.isnan(R)
    Y = np.where(M, R, 0.0)
    P = np.clip(bank.prob(nodes), 1e-12, 1 - 1e-12)
    LL = Y @ np.log(P).T + (M - Y) @ np.log1p(-P).T + log_w
    W = np.exp(LL - LL.max(axis=1, keepdims=True))
    return W / W.sum(axis=1, keepdims=True)


def fit_bank(R, full_score=None, *, sd_log_a: float = 0.5, sd_d: float = 3.0, n_nodes: int = 61,
             max_iter: int = 300) -> ItemBank:
    """The bank of references' answers ``R`` ``(N, J)`` in [0, 1] (NaN: missing); ``full_score`` ``(N,)`` pp, when
    not the row mean, gets a least-squares score map. InputError for fewer than 2 references or bad answers."""
    R = np.asarray(R, dtype=np.float64)
    if R.ndim != 2 or R.shape[0] < 2 or R.shape[1] < 1:
        raise InputError(f"item bank: expected answers (n_models >= 2, n_items >= 1), got shape {R.shape}")
    fin = R[~np.isnan(R)]
    if fin.size and (fin.min() < 0 or fin.max() > 1):
        raise InputError("item bank: answers outside [0, 1]; scores must be fractions")
    N, J = R.shape
    M = ~np.isnan(R)
    Y = np.where(M, R, 0.0)
    n_obs = M.sum(axis=0)
    with np.errstate(invalid="ignore"):
        spread = np.where(M, R, -np.inf).max(axis=0) - np.where(M, R, np.inf).min(axis=0)
    live = np.flatnonzero((n_obs > 0) & (spread > 0))
    p0 = (Y.sum(axis=0) + 0.5) / (n_obs + 1.0)
    a, d = np.zeros(J), np.log(p0 / (1 - p0))
    nodes = np.linspace(-5.0, 5.0, int(n_nodes))
    lw = -0.5 * nodes**2 - np.logaddexp.reduce(-0.5 * nodes**2)
    n_iter = 0
    if live.size:
        A1, Mf, m = Y[:, live], M[:, live].astype(np.float64), live.size

        def objective(x):  # the negative log marginal likelihood + log priors, per reference, and its gradient
            la, dd = x[:m], x[m:]
            aa = np.exp(la)
            z = nodes[:, None] * aa + dd  # (Q, m)
            LL = np.outer(A1 @ aa, nodes) + (A1 @ dd)[:, None] + Mf @ (-np.logaddexp(0.0, z)).T + lw  # (N, Q)
            top = LL.max(axis=1, keepdims=True)
            E = np.exp(LL - top)
            S = E.sum(axis=1, keepdims=True)
            W = E / S
            Gz = W.T @ A1 - (W.T @ Mf) * _sigmoid(z)  # d marginal / d z, (Q, m)
            val = float((np.log(S) + top).sum()) - 0.5 * (la @ la) / sd_log_a**2 - 0.5 * (dd @ dd) / sd_d**2
            grad = np.r_[aa * (nodes @ Gz) - la / sd_log_a**2, Gz.sum(axis=0) - dd / sd_d**2]
            return -val / N, -grad / N

        pm = np.clip(p0[live], 0.02, 0.98)
        res = minimize(objective, np.r_[np.zeros(m), 1.7 * np.log(pm / (1 - pm))], jac=True, method="L-BFGS-B",
                       bounds=[(-6.0, 3.0)] * m + [(-40.0, 40.0)] * m,
                       options={"maxiter": int(max_iter), "maxcor": 20, "ftol": 1e-12, "gtol": 1e-7})
        a[live], d[live], n_iter = np.exp(res.x[:m]), res.x[m:], int(res.nit)
    bank = ItemBank(a, d)
    W = posterior(bank, R, nodes, lw)  # standardise on the references (law of total variance)
    eap = W @ nodes
    mu, sd = float(eap.mean()), float(np.sqrt(eap.var() + (W @ nodes**2 - eap**2).mean()))
    sd = sd if np.isfinite(sd) and sd > 0 else 1.0
    bank.d, bank.a = bank.d + bank.a * mu, bank.a * sd
    with np.errstate(invalid="ignore"):
        pool = np.nanmean(np.where(M.any(axis=1, keepdims=True), R, 0.0), axis=1)
    if full_score is not None and np.nanmax(np.abs(100 * pool - full_score)) > 1e-6:
        y = np.asarray(full_score, dtype=np.float64)
        slope, icpt = np.polyfit(pool, y, 1)
        bank.score_map = (float(icpt), float(slope), float(np.std(y - icpt - slope * pool)))
    bank.info = {"n_iter": n_iter, "n_ref": int(N), "n_items": int(J), "constant_items": int(J - live.size)}
    return bank
