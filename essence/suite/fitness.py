"""The joint GA fitness: per member ``b`` a ridge ``y_b ~ c_b + X w_b`` on the candidate's items from *all* members
(as :class:`essence.search.fitness.RidgeFitness`), one batched solve with ``B`` right-hand sides; the suite mean's
ridge is the mean of the members'."""

from __future__ import annotations

import numpy as np

from ..data.errors import InputError
from ..reconstructors.base import fill_means
from ..search.fitness import gram_blocks, mask_positions
from ..search.genetic import random_masks

__all__ = ["JointRidgeFitness", "WEIGHTINGS"]

WEIGHTINGS = ("raw", "relative", "relative+mean")


class JointRidgeFitness:
    """``-combined in-sample RMSE`` (pp) of each candidate on ``R_train`` ``(n, M)`` (NaN = missing), ``Y_train``
    ``(n, B)`` pp. ``weighting``: ``"raw"``, ``"relative"`` (each member's over its median on 64 random ``k_ref``-item
    candidates) or ``"relative+mean"`` (plus the suite mean's, weight ``mean_weight``); ``own_weight``: the share of
    the own-items ridges; ``floor``: 1,000 per item a candidate lacks below it in some member."""

    ruler = None

    def __init__(self, R_train, Y_train, member_of, alpha: float = 1.0, weighting: str = "relative", floor: int = 0,
                 k_ref: int | None = None, seed: int = 0, mean_weight: float = 1.0, own_weight: float = 0.0):
        X = np.asarray(R_train, dtype=np.float64)
        Y = np.asarray(Y_train, dtype=np.float64)
        if X.ndim != 2 or Y.ndim != 2 or Y.shape[0] != X.shape[0]:
            raise InputError(f"R_train {X.shape} and Y_train {Y.shape}: expected (n, M) and (n, B) on the same models")
        if weighting not in WEIGHTINGS:
            raise InputError(f"weighting: {weighting!r} is not one of {', '.join(WEIGHTINGS)}")
        if not float(mean_weight) >= 0:
            raise InputError(f"mean_weight: the suite mean's weight must be >= 0, got {mean_weight}")
        self.mean_weight = float(mean_weight)
        if not 0.0 <= float(own_weight) <= 1.0:
            raise InputError(f"own_weight: the own-items ridges' share must be in [0, 1], got {own_weight}")
        self.own_weight = float(own_weight)
        if not alpha > 0:
            raise InputError(f"alpha: the ridge penalty must be > 0, got {alpha}")
        self.member_of = np.asarray(member_of, dtype=np.intp)
        if self.member_of.shape != (X.shape[1],):
            raise InputError(f"member_of: expected ({X.shape[1]},), got {self.member_of.shape}")
        self.B = Y.shape[1]
        X, self.fill = fill_means(X)
        self.mu = X.mean(axis=0)
        Xc = X - self.mu
        self.ym = Y.mean(axis=0)
        Yc = Y - self.ym
        self.alpha = float(alpha)
        self.n_train = X.shape[0]
        self.G = Xc.T @ Xc  # (M, M)
        self.b = Xc.T @ Yc  # (M, B)
        self.yy = (Yc ** 2).sum(axis=0)  # (B,)
        self.yy_mean = float((Yc.mean(axis=1) ** 2).sum())
        self.n_items = X.shape[1]
        self.weighting = weighting
        self.floor = int(floor)
        self.ref = np.ones(self.B + 1)
        self.ref_own = np.ones(self.B + 1)
        if weighting != "raw" and k_ref is not None:
            masks = random_masks(64, self.n_items, int(k_ref), np.random.default_rng([int(seed), 16]))
            self.ref = np.median(self.member_rmse(masks), axis=0)
            if self.own_weight > 0:
                self.ref_own = np.median(self.member_rmse(masks, own=True), axis=0)

    def member_rmse(self, masks, own: bool = False) -> np.ndarray:
        """``(P, B + 1)`` RMSE (pp) of each candidate's ridge for every member, then the suite mean; ``own``: each
        member's ridge on its own items only (none: the intercept-only error)."""
        idx = mask_positions(masks, self.n_items)
        k = idx.shape[1]
        G = gram_blocks(self.G, idx)  # (P, k, k)
        rhs = self.b[idx]  # (P, k, B)
        if own:
            w, sse = self._own_solve(idx, G, rhs)
        else:
            A = G.copy()
            A[:, np.arange(k), np.arange(k)] += self.alpha
            w = np.linalg.solve(A, rhs)  # (P, k, B)
            # at the ridge solution (G_S + aI) w = b_S on its columns S:  SSE_b = y_b'y_b - w_b'b_b - a w_b'w_b
            sse = self.yy - np.einsum("pib,pib->pb", w, rhs) - self.alpha * np.einsum("pib,pib->pb", w, w)
        r = np.sqrt(np.maximum(sse, 0.0) / self.n_train)
        wm, bm = w.mean(axis=2), rhs.mean(axis=2)  # the suite mean's weights and its X'y
        # the full Gram blocks: with ``own`` the mean of the own-items ridges reads items of every member
        sse_m = self.yy_mean - 2 * np.einsum("pi,pi->p", wm, bm) + np.einsum("pi,pij,pj->p", wm, G, wm)
        rm = np.sqrt(np.maximum(sse_m, 0.0) / self.n_train)
        return np.column_stack([r, rm])

    def _own_solve(self, idx, G, rhs):
        """``(w (P, k, B), sse (P, B))`` of each member's ridge on its own items (``w`` zero elsewhere)."""
        P, k = idx.shape
        mem = self.member_of[idx]  # (P, k)
        w = np.zeros((P, k, self.B))
        sse = np.tile(self.yy, (P, 1))
        rows = np.arange(P)[:, None]
        for b in range(self.B):
            own = mem == b
            counts = own.sum(axis=1)
            kb = int(counts.max())
            if kb == 0:
                continue
            # positions of member b's items in each candidate, padded with position 0 (masked out below)
            order = np.argsort(~own, axis=1, kind="stable")[:, :kb]
            real = np.arange(kb)[None, :] < counts[:, None]  # (P, kb)
            A = G[rows[:, :, None], order[:, :, None], order[:, None, :]] * (real[:, :, None] & real[:, None, :])
            A[:, np.arange(kb), np.arange(kb)] += np.where(real, self.alpha, 1.0)
            y = np.where(real, rhs[rows, order, b], 0.0)
            wb = np.linalg.solve(A, y[..., None])[..., 0]  # (P, kb); zero on the padding
            sse[:, b] = self.yy[b] - np.einsum("pi,pi->p", wb, y) - self.alpha * np.einsum("pi,pi->p", wb, wb)
            w[rows, order, b] += np.where(real, wb, 0.0)
        return w, sse

    def combine(self, r, ref=None) -> np.ndarray:
        """``(P,)`` combined error of ``(P, B + 1)`` errors under ``weighting``, relative to ``ref`` (default ref)."""
        r = np.asarray(r, dtype=np.float64)
        if self.weighting == "raw":
            return r[:, :self.B].mean(axis=1)
        rel = r / (self.ref if ref is None else ref)
        if self.weighting == "relative":
            return rel[:, :self.B].mean(axis=1)
        w = self.mean_weight
        return (rel[:, :self.B].sum(axis=1) + w * rel[:, self.B]) / (self.B + w)

    def penalty(self, masks) -> np.ndarray:
        """``(P,)`` 1,000 per item a candidate lacks below the per-member ``floor``."""
        if self.floor <= 0:
            return np.zeros(len(masks))
        counts = np.stack([np.asarray(masks)[:, self.member_of == b].sum(axis=1) for b in range(self.B)], axis=1)
        return 1000.0 * np.maximum(self.floor - counts, 0).sum(axis=1)

    def score(self, masks) -> np.ndarray:
        """``(P,)`` the combined error (lower is better): ``(1 - own_weight) E_all + own_weight E_own``."""
        e = self.combine(self.member_rmse(masks))
        if self.own_weight > 0:
            lam = self.own_weight
            e = (1.0 - lam) * e + lam * self.combine(self.member_rmse(masks, own=True), self.ref_own)
        return e

    def __call__(self, masks) -> np.ndarray:
        return -(self.score(masks) + self.penalty(masks))
