"""``latent``: a rank-``r`` factor model of the training models' answers on every pool item.

Probabilistic PCA on the item-centred matrix ``R`` ``(n_models, n_pool)`` (item means ``mu``, loadings ``A``
``(n_pool, r)``, residual variances ``psi``); a new model's latent ability ``theta`` ``(r,)`` is the posterior
mean from its answers on the chosen items; unseen pool items are predicted as ``mu_j + A_j . theta``; a
least-squares line on that pool score and on the target column's prediction, fitted on cross-fitted values,
gives the estimate (pp). ``r`` by inner CV. The artifact keeps the chosen items' loadings and only the sums
over the other items. Such a kind says ``needs_pool = True`` and is fitted as ``fit(X, y, R=R)``
(:func:`essence.reconstructors.choose.fit_reconstructor`)."""

from __future__ import annotations

import numpy as np

from ..data.checks import ListOf, Real, Whole, check_params
from ..data.errors import InputError
from .base import Reconstructor, _rounded, check_X
from .base import model_folds

__all__ = ["MIN_MODELS_LATENT", "factor_model", "LatentReconstructor"]

#: fewest non-test models for the candidates of :func:`essence.reconstructors.choose.pool_candidates`. Measured with
#: ``benchmarks/predictors.py --models 50 100 300 1000 --datasets arc gsm8k --seeds 0 1`` (50 random items,
#: test RMSE in pp, mean of 2 seeds): the MLP is clearly worse than mean_ridge with 50 models (arc 2.98 vs
#: 2.62, gsm8k 4.71 vs 4.13) and 100 on gsm8k (4.22 vs 3.95), level on arc from 100 on, still 0.1-0.2 worse on
#: gsm8k at 300-1000, and better or level on every metabench pool with all ~3,000 (README, "Stronger predictors"); from
#: 300 on the CV choice decides. The latent model is within 0.1 pp of mean_ridge at every count (rarely
#: better): offered from 100, where its inner CV over ranks has models enough. Below these an extra
#: candidate only adds fit time and a chance to win by CV noise.
MIN_MODELS_LATENT = 100



# ----------------------------------------------------------------------------------------------
# Latent factors of the whole pool
# ----------------------------------------------------------------------------------------------
def factor_model(R, r_max: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Principal factors of the item-centred answers ``R`` ``(n, N)`` (NaN = missing, counted as the item mean).

    Returns ``(mu (N,), A (N, r_max), var (N,))``: item means, loadings scaled so that abilities have unit
    variance (``R - mu ~ theta A^T`` with ``theta ~ N(0, I)``), and each item's total variance (so that the
    residual variance at rank ``r`` is ``var - sum_{l<r} A_l^2``). The top eigenvectors of the item
    covariance when ``N <= 2000``, else scikit-learn's randomized SVD (seeded).
    """
    R = np.asarray(R, dtype=np.float64)
    n = R.shape[0]
    mu = np.nanmean(R, axis=0)
    mu = np.where(np.isnan(mu), 0.0, mu)
    Xc = np.where(np.isnan(R), 0.0, R - mu)
    var = (Xc**2).sum(axis=0) / n
    r_max = int(min(r_max, n - 1, R.shape[1]))
    if R.shape[1] <= 2000:  # eigenvectors of the (N, N) covariance: the thin SVD's, at a fraction of its cost
        ev, V = np.linalg.eigh(Xc.T @ Xc / n)
        top = np.argsort(ev)[::-1][:r_max]
        A = V[:, top] * np.sqrt(np.maximum(ev[top], 0.0))
    else:
        from sklearn.utils.extmath import randomized_svd

        _, s, Vt = randomized_svd(Xc, r_max, random_state=seed)
        A = (Vt.T * s) / np.sqrt(n)
    A = A * np.where(A.sum(axis=0) < 0, -1.0, 1.0)  # a fixed sign per factor (same numbers on any machine)
    return mu, A, var



def _posterior_theta(X, mu_s, A_s, psi_s) -> np.ndarray:
    """Posterior-mean abilities ``(n, r)`` from answers ``X`` ``(n, k)`` on the chosen items (NaN left out)."""
    obs = ~np.isnan(X)
    Z = np.where(obs, (X - mu_s) / psi_s, 0.0)  # (n, k)
    b = Z @ A_s  # (n, r)
    r = A_s.shape[1]
    if obs.all():  # one posterior precision for every model
        return np.linalg.solve((A_s.T / psi_s) @ A_s + np.eye(r), b.T).T
    outer = (A_s[:, :, None] * A_s[:, None, :]).reshape(A_s.shape[0], r * r)  # (k, r*r): A_j A_j^T
    G = ((obs / psi_s) @ outer).reshape(-1, r, r) + np.eye(r)  # (n, r, r), one matrix product
    return np.linalg.solve(G, b[:, :, None])[:, :, 0]



def _pool_score(X, theta, mu_s, A_s, mu_rest, a_rest, n_pool) -> np.ndarray:
    """Pool score in pp ``(n,)``: observed answers plus predicted ones (``mu_j + A_j . theta``) for the rest."""
    obs = ~np.isnan(X)
    pred_s = mu_s + theta @ A_s.T  # (n, k)
    chosen = np.where(obs, X, pred_s).sum(axis=1)
    return 100.0 * (chosen + mu_rest + theta @ a_rest) / n_pool



def _lstsq_fit(F, y) -> tuple[np.ndarray, np.ndarray]:
    """Least squares of ``y`` on ``[1, F]``: ``(coef (1 + F.shape[1],), fitted (n,))``."""
    D = np.column_stack([np.ones(len(y)), F])
    coef = np.linalg.lstsq(D, y, rcond=None)[0]
    return coef, D @ coef



class LatentReconstructor(Reconstructor):
    """Full score = ``c + d1 * pool score + d2 * target's factor prediction``, from a rank-``r`` factor model
    of the full answers and the target.

    Parameters
    ----------
    items : sequence of int, length k
        Positions of the chosen items in the pool (the columns of ``R`` that ``X`` holds, in order).
    ranks : sequence of int, default (1, 2, 3, 4, 6, 8, 12, 16, 24, 32)
        Ranks tried; the one with the lowest ``folds``-fold CV RMSE over the training models is kept
        (ranks above ``n_models - 1`` of a fold are skipped).
    folds, seed : default 3, 0
        The inner CV over training models (also gives the cross-fitted pool scores the line is fitted on).
    psi_floor : float, default 1e-3
        Smallest residual variance of an item (answers in [0, 1] have variance <= 0.25).

    ``fit(X, y, R)``: ``X`` ``(n, k)`` answers on the chosen items, ``y`` ``(n,)`` pp, ``R`` ``(n, n_pool)``
    the same models' answers on every pool item. ``predict(X)`` needs only ``X``.
    """

    kind = "latent"
    needs_pool = True
    _domains = {"ranks": ListOf(Whole(1)), "folds": Whole(2), "seed": Whole(0),
                "psi_floor": Real(0.0, open_min=True)}

    def __init__(self, items, ranks=(1, 2, 3, 4, 6, 8, 12, 16, 24, 32), folds: int = 3, seed: int = 0,
                 psi_floor: float = 1e-3):
        self.items = items
        self.ranks = ranks
        self.folds = folds
        self.seed = seed
        self.psi_floor = psi_floor

    def _state_at(self, mu, A, var, r):
        """The stored numbers at rank ``r`` from a factor model of the pool plus the target (last column)."""
        items = np.asarray(self.items, dtype=np.intp)
        rest = np.ones(mu.size - 1, dtype=bool)
        rest[items] = False
        A_r = A[:, :r]
        psi = np.maximum(var[items] - (A_r[items] ** 2).sum(axis=1), float(self.psi_floor))
        return dict(mu_s=mu[items], A_s=A_r[items], psi_s=psi, mu_rest=float(mu[:-1][rest].sum()),
                    a_rest=A_r[:-1][rest].sum(axis=0), n_pool=int(mu.size - 1), mu_y=float(mu[-1]), a_y=A_r[-1])

    def fit(self, X, y, R=None):
        check_params(self)
        X = check_X(X)
        y = np.asarray(y, dtype=np.float64)
        if R is None:
            raise InputError("latent: fit needs R, the training models' answers on every pool item "
                             "(fit(X, y, R=R)); use essence.reconstructors.base.fit_reconstructor")
        R = np.asarray(R, dtype=np.float64)
        items = np.asarray(self.items, dtype=np.intp)
        if R.ndim != 2 or R.shape[0] != X.shape[0] or items.shape != (X.shape[1],) or items.min() < 0 \
                or items.max() >= R.shape[1]:
            raise InputError(f"latent: R {R.shape} must hold the {X.shape[0]} models of X and items "
                             f"({items.size} positions) must index its {R.shape[1] if R.ndim == 2 else '?'} columns")
        n = X.shape[0]
        if n < 6:
            raise InputError(f"latent: needs at least 6 training models for its inner CV, got {n}")
        self.k_ = X.shape[1]
        lab = model_folds(n, self.folds, self.seed)
        ranks = sorted({int(r) for r in self.ranks})
        n_fit = min(int((lab != f).sum()) for f in np.unique(lab))
        ranks = [r for r in ranks if r <= min(n_fit - 1, R.shape[1] - 1)] or [1]
        Ry = np.column_stack([R, y / 100.0])  # the target joins the factor model as one more column
        oof = [np.empty((n, 2)) for r in ranks]  # cross-fitted [pool score, target's own prediction] per rank
        for f in np.unique(lab):
            te = lab == f
            mu, A, var = factor_model(Ry[~te], max(ranks), self.seed)
            for i, r in enumerate(ranks):
                oof[i][te] = self._features(X[te], self._state_at(mu, A, var, min(r, A.shape[1])))
        errs = [float(np.sqrt(np.mean((_lstsq_fit(F, y)[1] - y) ** 2))) for F in oof]
        best = int(np.argmin(errs))
        self.rank_ = ranks[best]
        self.rank_cv_rmse_ = dict(zip(map(str, ranks), errs))
        self.coef_ = _rounded(_lstsq_fit(oof[best], y)[0])
        mu, A, var = factor_model(Ry, self.rank_, self.seed)
        st = self._state_at(mu, A, var, min(self.rank_, A.shape[1]))
        self.state_ = {k: (_rounded(v) if isinstance(v, np.ndarray) else v) for k, v in st.items()}
        self.state_["mu_rest"], self.state_["mu_y"] = float(_rounded(st["mu_rest"])), float(_rounded(st["mu_y"]))
        return self

    @staticmethod
    def _features(X, st) -> np.ndarray:
        """``(n, 2)``, pp: the pool score (observed + predicted answers) and the target column's prediction
        ``100 (mu_y + A_y . theta)``. Both are invariant to the factors' rotation, so cross-fitted values
        from different fits can be pooled."""
        theta = _posterior_theta(X, st["mu_s"], st["A_s"], st["psi_s"])
        pool = _pool_score(X, theta, st["mu_s"], st["A_s"], st["mu_rest"], st["a_rest"], st["n_pool"])
        return np.column_stack([pool, 100.0 * (st["mu_y"] + theta @ st["a_y"])])

    def pool_score(self, X) -> np.ndarray:
        """The model's estimated pool score (pp, ``(n,)``): observed answers + predicted ones."""
        return self._features(check_X(X, self.k_), self.state_)[:, 0]

    def to_dict(self) -> dict:
        st = self.state_
        return {"kind": self.kind, "params": self.params_dict(), "k": self.k_, "rank": self.rank_,
                "mu": st["mu_s"].tolist(), "loadings": st["A_s"].ravel().tolist(), "psi": st["psi_s"].tolist(),
                "mu_rest": st["mu_rest"], "loadings_rest": st["a_rest"].tolist(), "n_pool": st["n_pool"], "mu_target": st["mu_y"], "loadings_target": st["a_y"].tolist(),
                "coef": self.coef_.tolist(), "rank_cv_rmse": self.rank_cv_rmse_}

    @classmethod
    def from_dict(cls, d: dict):
        obj = cls(**d["params"])
        obj.k_, obj.rank_ = int(d["k"]), int(d["rank"])
        f = lambda v: np.asarray(v, dtype=np.float64)  # noqa: E731
        obj.state_ = dict(mu_s=f(d["mu"]), A_s=f(d["loadings"]).reshape(obj.k_, -1), psi_s=f(d["psi"]),
                          mu_rest=float(d["mu_rest"]), a_rest=f(d["loadings_rest"]), n_pool=int(d["n_pool"]),
                          mu_y=float(d["mu_target"]), a_y=f(d["loadings_target"]))
        obj.coef_ = f(d["coef"])
        obj.rank_cv_rmse_ = dict(d.get("rank_cv_rmse", {}))
        return obj
