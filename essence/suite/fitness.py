"""The joint GA fitness: one ridge per member on the candidate's items from *all* members, scored at once.

For a candidate (a mask over the pooled items of a suite) and every member ``b`` a ridge
``y_b ~ c_b + X_m w_b`` is fitted on the training models (penalty ``alpha``, intercept unpenalised,
missing cells filled with the item's training mean), exactly as :class:`essence.search.genetic.RidgeFitness`
does for one benchmark. All members share the candidate's Gram block, so the ``(P, k, k)`` systems are
solved once with ``B`` right-hand sides. The suite mean's ridge is the mean of the members' (ridge is
linear in its target), so its error comes for free.

The members' errors ``r_b`` (pp) are combined into one number (lower is better; the GA maximises its
negative) by ``weighting``:

* ``"raw"``: ``mean_b r_b``. A benchmark with large errors (gsm8k) dominates the sum;
* ``"relative"``: ``mean_b r_b / ref_b`` with ``ref_b`` the member's median error over random candidates
  of the same size (drawn once, seeded): each benchmark's gain over random items counts equally;
* ``"relative+mean"``: the relative terms plus the suite mean's, ``r_mean / ref_mean``, as one more term
  (weighted ``mean_weight`` against 1 for each member: ``(sum_b r_b / ref_b + w r_mean / ref_mean) / (B + w)``).

``own_weight`` (``lambda``; 0 here, 0.5 in the suite's search, :data:`essence.suite.select.JOINT_DEFAULTS`):
the combined error becomes ``(1 - lambda) E_all + lambda E_own``, with
``E_own`` the same combination of the *own-items* ridges: member ``b``'s ridge on the candidate's items of
member ``b`` only (the suite mean's as the mean of those), each relative to its own random-candidate median.
The all-items score cannot see what a reconstructor that reads a member's own items (the suite's
``own_mlp``) gains from them. The own-items ridges come from the same batched solve with the Gram blocks
made block-diagonal by member and each member's right-hand side masked to its own items (the solution for
member ``b`` is then zero outside its items). In-sample and ``R_fit`` scoring only (not ``loo``).

``own_extra`` (in-sample scoring only): per member, the answers and scores of models *outside* the suite
(models that have that member's results but lack another member's). Member ``b``'s own-items ridge is then
fitted and scored in-sample on the training models plus those (its own Gram block, centring and count), so
the own-items term is measured on 2-3x the models and fits less of the training models' noise; the suite
mean's own-items term stays scored on the training models (the members' ridges carry their own intercepts).

Which one the suite uses by default, and why, is measured by ``benchmarks/suite.py --weightings``
(README, "Suites").
"""

from __future__ import annotations

import warnings

import numpy as np

from ..data.errors import InputError
from ..search.genetic import mask_positions, random_masks

__all__ = ["JointRidgeFitness", "WEIGHTINGS"]

WEIGHTINGS = ("raw", "relative", "relative+mean")


class JointRidgeFitness:
    """``-combined RMSE`` of each candidate (see the module docstring).

    ``R_train`` ``(n_train, M)`` pooled responses in [0, 1] (NaN = missing); ``Y_train`` ``(n_train, B)`` member
    scores, pp; ``member_of`` ``(M,)`` member index of each pooled item. ``R_fit``, ``Y_fit``: the models the
    fitness is scored on (None: in-sample on the training models, from the Gram matrix alone).
    ``loo``: score the leave-one-out error of each ridge on the training models instead of the in-sample one
    (closed form, :meth:`_loo_rmse`, the multi-target form of
    :class:`essence.search.fitness_cv.LOORidgeFitness`; in-sample errors reward items that fit the training
    models' noise).
    ``floor``: candidates with fewer than ``floor`` items of some member are penalised by 1,000 per missing item.
    ``mean_weight``: the suite mean's term's weight under ``"relative+mean"`` (each member's is 1).
    ``own_weight``: the own-items ridges' share ``lambda`` in [0, 1] (module docstring).
    ``k_ref``, ``seed``: size and seed of the 64 random candidates that set ``ref`` (``"relative"`` weightings).
    ``own_extra``: None, or ``B`` entries, each None or ``(R_b (n_b, M_b), y_b (n_b,))``: models outside the
    suite on member ``b``'s pooled items (in pooled order; NaN = missing, filled with the training models'
    item mean) and their member-``b`` scores, pp; they join member ``b``'s own-items ridge (module docstring).
    """

    ruler = None

    def __init__(self, R_train, Y_train, member_of, R_fit=None, Y_fit=None, alpha: float = 1.0,
                 weighting: str = "relative", floor: int = 0, k_ref: int | None = None, seed: int = 0,
                 loo: bool = False, mean_weight: float = 1.0, own_weight: float = 0.0, own_extra=None):
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
        if self.own_weight > 0 and loo:
            raise InputError("own_weight: the own-items term is not implemented for loo; use fitness_models train "
                             "or val, or own_weight 0")
        if not alpha > 0:
            raise InputError(f"alpha: the ridge penalty must be > 0, got {alpha}")
        self.member_of = np.asarray(member_of, dtype=np.intp)
        if self.member_of.shape != (X.shape[1],):
            raise InputError(f"member_of: expected ({X.shape[1]},), got {self.member_of.shape}")
        self.B = Y.shape[1]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            fill = np.nanmean(X, axis=0)
        self.fill = np.where(np.isnan(fill), 0.0, fill)
        X = np.where(np.isnan(X), self.fill, X)
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
        self.in_sample = R_fit is None
        self.loo = bool(loo)
        if self.loo:
            if not self.in_sample:
                raise InputError("loo: the leave-one-out error is computed on the training models; give no R_fit")
            self._Xc, self._Yc = Xc, Yc
        if not self.in_sample:
            Rf = np.asarray(R_fit, dtype=np.float64)
            self.Y_fit = np.asarray(Y_fit, dtype=np.float64)
            if Rf.shape[1] != self.n_items or self.Y_fit.shape != (Rf.shape[0], self.B):
                raise InputError(f"R_fit {Rf.shape} / Y_fit {self.Y_fit.shape}: expected (n, {self.n_items}) and (n, {self.B})")
            self._Xt = np.ascontiguousarray((np.where(np.isnan(Rf), self.fill, Rf) - self.mu).T)  # (M, n_fit)
        self._own_pool = None
        if own_extra is not None and self.own_weight > 0:
            self._own_pool = self._own_gram(X, Y, own_extra)
        self.ref = np.ones(self.B + 1)
        self.ref_own = np.ones(self.B + 1)
        if weighting != "raw" and k_ref is not None:
            masks = random_masks(64, self.n_items, int(k_ref), np.random.default_rng([int(seed), 16]))
            self.ref = np.median(self.member_rmse(masks), axis=0)
            if self.own_weight > 0:
                self.ref_own = np.median(self.member_rmse(masks, own=True), axis=0)

    def _own_gram(self, X, Y, own_extra) -> dict:
        """The own-items ridges' statistics on the training models plus each member's outside models:
        block-diagonal Gram ``(M, M)``, ``X'y`` ``(M, B)`` (member b's column nonzero on its items only),
        ``y'y`` ``(B,)``, model counts ``(B,)``, and each member's centring relative to the training models'
        (``shift`` ``(B, M)`` = training item means minus the member's, ``y_mean`` ``(B,)``)."""
        if not self.in_sample or self.loo:
            raise InputError("own_extra: models outside the suite join the in-sample fitness only; use "
                             "fitness_models train")
        if len(own_extra) != self.B:
            raise InputError(f"own_extra: {len(own_extra)} entries for {self.B} members; give one per member (None: none)")
        M, B = self.n_items, self.B
        G, b_, yy, n = np.zeros((M, M)), np.zeros((M, B)), np.zeros(B), np.zeros(B)
        shift, y_mean = np.zeros((B, M)), np.zeros(B)
        for m in range(B):
            cols = np.flatnonzero(self.member_of == m)
            Rm, ym = X[:, cols], Y[:, m]
            if own_extra[m] is not None:
                Re = np.asarray(own_extra[m][0], dtype=np.float64)
                ye = np.asarray(own_extra[m][1], dtype=np.float64)
                if Re.ndim != 2 or Re.shape[1] != cols.size or ye.shape != (Re.shape[0],):
                    raise InputError(f"own_extra[{m}]: expected answers (n, {cols.size}) and scores (n,), got "
                                     f"{Re.shape} and {ye.shape}")
                if not np.isfinite(ye).all():
                    raise InputError(f"own_extra[{m}]: scores must be finite (a model without a full score cannot "
                                     "train the fitness; drop it)")
                Rm = np.vstack([Rm, np.where(np.isnan(Re), self.fill[cols], Re)])
                ym = np.concatenate([ym, ye])
            mu = Rm.mean(axis=0)
            Xc, yc = Rm - mu, ym - ym.mean()
            G[np.ix_(cols, cols)] = Xc.T @ Xc
            b_[cols, m] = Xc.T @ yc
            yy[m], n[m] = yc @ yc, Rm.shape[0]
            shift[m, cols] = self.mu[cols] - mu
            y_mean[m] = ym.mean()
        return {"G": G, "b": b_, "yy": yy, "n": n, "shift": shift, "y_mean": y_mean}

    def _own_pool_rmse(self, idx) -> np.ndarray:
        """``(P, B + 1)`` :meth:`member_rmse` ``own=True`` with the outside models (:meth:`_own_gram`): each
        member's in-sample RMSE on its own models; the suite mean's, on the training models, of the mean of
        the members' ridges, each with its own intercept."""
        o, k = self._own_pool, idx.shape[1]
        M = self.n_items
        A = o["G"].ravel().take(idx[:, :, None] * M + idx[:, None, :])  # block-diagonal by member
        rhs = o["b"][idx]  # (P, k, B), member b's column zero off its items
        A[:, np.arange(k), np.arange(k)] += self.alpha
        w = np.linalg.solve(A, rhs)
        sse = o["yy"] - np.einsum("pib,pib->pb", w, rhs) - self.alpha * np.einsum("pib,pib->pb", w, w)
        r = np.sqrt(np.maximum(sse, 0.0) / o["n"])
        # on a training model x: estimate_b = y_mean_b + (mu - mu_b) w_b + (x - mu) w_b
        c = (o["y_mean"] + np.einsum("bpi,pib->pb", o["shift"][:, idx], w)).mean(axis=1) - self.ym.mean()  # (P,)
        wm, bm = w.mean(axis=2), self.b[idx].mean(axis=2)
        G_full = self.G.ravel().take(idx[:, :, None] * M + idx[:, None, :])
        sse_m = (self.n_train * c ** 2 + self.yy_mean - 2 * np.einsum("pi,pi->p", wm, bm)
                 + np.einsum("pi,pij,pj->p", wm, G_full, wm))
        return np.column_stack([r, np.sqrt(np.maximum(sse_m, 0.0) / self.n_train)])

    def member_rmse(self, masks, own: bool = False) -> np.ndarray:
        """``(P, B + 1)`` RMSE (pp) of each candidate's ridge for every member, then for the suite mean.
        ``own``: of each member's ridge on the candidate's items of that member only (the suite mean's
        estimate is the mean of those); a member without items there scores its intercept-only error."""
        idx = mask_positions(masks, self.n_items)
        if own and self._own_pool is not None:
            return self._own_pool_rmse(idx)
        k = idx.shape[1]
        M = self.n_items
        G_full = self.G.ravel().take(idx[:, :, None] * M + idx[:, None, :])  # (P, k, k) Gram blocks
        rhs = self.b[idx]  # (P, k, B)
        G = G_full
        if own:
            mem = self.member_of[idx]  # (P, k)
            G = G_full * (mem[:, :, None] == mem[:, None, :])  # block-diagonal by member
            rhs_s = rhs * (mem[:, :, None] == np.arange(self.B))  # member b's X'y on its own items only
        else:
            rhs_s = rhs
        A = G.copy()
        A[:, np.arange(k), np.arange(k)] += self.alpha
        w = np.linalg.solve(A, rhs_s)  # (P, k, B)
        if self.loo:
            return self._loo_rmse(idx, A, w)
        if self.in_sample:
            # at the ridge solution (G_S + aI) w = b_S on its columns S:  SSE_b = y_b'y_b - w_b'b_b - a w_b'w_b
            sse = self.yy - np.einsum("pib,pib->pb", w, rhs_s) - self.alpha * np.einsum("pib,pib->pb", w, w)
            r = np.sqrt(np.maximum(sse, 0.0) / self.n_train)
            wm, bm = w.mean(axis=2), rhs.mean(axis=2)  # the suite mean's weights and its X'y
            # the full Gram blocks: with ``own`` the mean of the own-items ridges reads items of every member
            sse_m = self.yy_mean - 2 * np.einsum("pi,pi->p", wm, bm) + np.einsum("pi,pij,pj->p", wm, G_full, wm)
            rm = np.sqrt(np.maximum(sse_m, 0.0) / self.n_train)
            return np.column_stack([r, rm])
        P, n_fit = idx.shape[0], self._Xt.shape[1]
        err = np.empty((P, n_fit, self.B))
        W = np.zeros((P, self.n_items))
        for b in range(self.B):  # one (P, M) @ (M, n_fit) product per member
            np.put_along_axis(W, idx, w[:, :, b], axis=1)
            err[:, :, b] = np.clip(W @ self._Xt + self.ym[b], 0.0, 100.0) - self.Y_fit[:, b]
        r = np.sqrt(np.mean(err ** 2, axis=1))
        rm = np.sqrt(np.mean(err.mean(axis=2) ** 2, axis=1))
        return np.column_stack([r, rm])

    def _loo_rmse(self, idx, A, w) -> np.ndarray:
        """``(P, B + 1)`` leave-one-out RMSE (pp) of each candidate's ridges on the training models, in closed
        form: residual ``e_i / (1 - h_i)`` with ``h_i = 1/n + x_i' A^-1 x_i`` the hat matrix's diagonal (the
        ``1/n`` for the intercept). ``h`` is the same for every member (they share ``A``), so each candidate
        costs one ``(k, k)`` inverse and one ``(n, k) @ (k, k)`` product with the training rows."""
        n = self.n_train
        out = np.empty((idx.shape[0], self.B + 1))
        Ainv = np.linalg.inv(A)  # (P, k, k): one batched inverse, then matrix products only
        for p in range(idx.shape[0]):
            Xs = self._Xc[:, idx[p]]  # (n, k)
            h = 1.0 / n + np.einsum("ij,ij->i", Xs @ Ainv[p], Xs)
            e = (self._Yc - Xs @ w[p]) / np.maximum(1.0 - h, 1e-6)[:, None]  # (n, B)
            out[p, :self.B] = np.sqrt(np.mean(e ** 2, axis=0))
            out[p, self.B] = np.sqrt(np.mean(e.mean(axis=1) ** 2))
        return out

    def combine(self, r, ref=None) -> np.ndarray:
        """``(P,)`` the combined error of ``(P, B + 1)`` per-member and mean errors, under ``weighting``
        (relative to ``ref``, default :attr:`ref`)."""
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
