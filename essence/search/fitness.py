"""The GA's fitness: ``-RMSE`` (pp) of every candidate subset of a population at once (:class:`GAMRulerFitness`,
:class:`RidgeFitness`, :class:`LOORidgeFitness`; :func:`pool_fitness` builds one). Masks are ``(P, M)`` bool over
the pool's ``M`` items; responses ``(n_models, M)`` in [0, 1], NaN = missing; scores ``y`` in pp."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..data.checks import ListOf, OneOf, Real, Settings, Whole, as_matrix
from ..data.errors import InputError
from ..reconstructors.base import fill_means
from ..reconstructors.tables import GAM_LAM, GAM_N_SPLINES, Table1D, fit_gam_table

__all__ = ["FitnessConfig", "pool_fitness", "GAMRulerFitness", "RidgeFitness", "LOORidgeFitness", "mask_positions",
           "gram_blocks", "fill_means"]


@dataclass(frozen=True)
class FitnessConfig(Settings):
    """The GA's fitness: ``kind`` ``"ridge"`` or ``"gam"``; ``fitness_models``: ``"auto"`` (ridge: ``"train"`` with at
    least ``10 k`` training models, else ``"loo"``; gam: ``"val"``), ``"train"``, ``"val"``, ``"train+val"`` or
    ``"loo"``; penalties ``ridge_alpha``, ``loo_alphas``; the GAM ruler's ``gam_splines``, ``gam_lam``."""

    kind: str = "ridge"
    fitness_models: str = "auto"
    ridge_alpha: float = 1.0
    loo_alphas: tuple = (1.0, 10.0, 100.0)
    gam_splines: int = GAM_N_SPLINES
    gam_lam: float = GAM_LAM

    _domains: ClassVar[dict] = {"kind": OneOf("gam", "ridge"), "fitness_models": OneOf("auto", "val", "train", "train+val", "loo"),
                                "ridge_alpha": Real(0.0, open_min=True), "loo_alphas": ListOf(Real(0.0, open_min=True)),
                                "gam_splines": Whole(4), "gam_lam": Real(0.0)}


def pool_fitness(config: FitnessConfig, R_train, y_train, R_val, y_val, k: int):
    """``(make, models)``: ``make(cols)`` builds the fitness on pool columns ``cols``; ``models``: the resolved kind."""
    M = R_train.shape[1]
    fm = config.fitness_models
    if fm == "auto":
        fm = ("train" if R_train.shape[0] >= 10 * k else "loo") if config.kind == "ridge" else "val"
    R_all, y_all = np.vstack([R_train, R_val]), np.r_[y_train, y_val]
    Rf, yf = {"val": (R_val, y_val), "loo": (R_val, y_val), "train": (R_train, y_train)}.get(fm, (R_all, y_all))
    base = None
    if config.kind == "ridge" and fm == "loo":
        base = LOORidgeFitness(R_all, y_all, alphas=tuple(np.atleast_1d(config.loo_alphas)))
    elif config.kind == "ridge":
        base = RidgeFitness(R_train, y_train, None if fm == "train" else Rf, None if fm == "train" else yf,
                            alpha=float(config.ridge_alpha))

    def make(cols: np.ndarray):
        if base is not None:
            return base if cols.size == M else base.restrict(cols)
        return GAMRulerFitness(R_train[:, cols], y_train, Rf[:, cols], yf, config.gam_splines, config.gam_lam)

    return make, fm


class _NegRMSE:
    def __call__(self, masks) -> np.ndarray:
        return -self.rmse(masks)


class LOORidgeFitness(_NegRMSE):
    """``-LOO RMSE`` (pp) of a ridge on each candidate's items over ``R`` ``(n, M)`` / ``y`` ``(n,)``; penalty
    ``alpha_`` chosen from ``alphas`` on the first call; at most ``max_models`` models."""

    def __init__(self, R, y, alphas=(1.0, 10.0, 100.0), max_models: int = 2000):
        X = as_matrix(R, "R")
        y = np.asarray(y, dtype=np.float64)
        if y.shape != (X.shape[0],):
            raise InputError(f"R, y: expected (n, M) and (n,), got {X.shape} and {y.shape}")
        if X.shape[0] > max_models:
            raise InputError(f"R: {X.shape[0]} models; LOO fitness is for few models (<= {max_models}), "
                             "use RidgeFitness")
        if X.shape[0] < 3:
            raise InputError(f"R: LOO fitness needs at least 3 models, got {X.shape[0]}")
        self.alphas = tuple(float(a) for a in alphas)
        if not self.alphas or min(self.alphas) <= 0:
            raise InputError(f"alphas: {alphas!r} must be positive penalties")
        X, _ = fill_means(X)
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
        new = _copy(self, G=np.ascontiguousarray(self.G[np.ix_(cols, cols)]), b=self.b[cols], n_items=cols.size,
                    Xc=np.ascontiguousarray(self.Xc[:, cols]))
        new.XcT = np.ascontiguousarray(new.Xc.T)
        return new

    def rmse(self, masks) -> np.ndarray:
        """``(P,)`` LOO RMSE (pp) of each mask's ridge."""
        idx = mask_positions(masks, self.n_items)
        G = gram_blocks(self.G, idx)
        Xm = self.XcT[idx]  # (P, k, n)
        rhs = np.concatenate([self.b[idx][:, :, None], Xm], axis=2)  # (P, k, 1 + n)
        if self.alpha_ is None:  # the GA's random initial population chooses the penalty
            per = [self._loo(G, Xm, rhs, a) for a in self.alphas]
            self.alpha_ = self.alphas[int(np.argmin([float(np.mean(r)) for r in per]))]
            return per[self.alphas.index(self.alpha_)]
        return self._loo(G, Xm, rhs, self.alpha_)

    def _loo(self, G, Xm, rhs, a: float) -> np.ndarray:
        sol = np.linalg.solve(G + a * np.eye(G.shape[1]), rhs)  # (P, k, 1 + n)
        pred = np.einsum("pk,pkn->pn", sol[:, :, 0], Xm)
        h = np.einsum("pkn,pkn->pn", Xm, sol[:, :, 1:]) + 1.0 / self.n
        e = (self.yc[None, :] - pred) / np.maximum(1.0 - h, 1e-6)
        return np.sqrt(np.mean(e * e, axis=1))


class GAMRulerFitness(_NegRMSE):
    """The paper's fixed ruler: ``fitness(m) = -RMSE_val(g(s(m)), y)`` (pp), ``s(m)`` the accuracy on the items of
    ``m``, ``g`` a GAM (:func:`~essence.reconstructors.tables.fit_gam_table`) fitted once on the training models'
    accuracy over the pool. ``R_train`` ``(n_train, M)`` / ``R_val`` ``(n_val, M)``, ``y_train`` / ``y_val`` pp."""

    def __init__(self, R_train, y_train, R_val, y_val, n_splines: int = GAM_N_SPLINES, lam: float = GAM_LAM):
        R_train = as_matrix(R_train, "R_train")
        R_val = as_matrix(R_val, "R_val")
        y_train = _vector(y_train, R_train.shape[0], "y_train")
        y_val = _vector(y_val, R_val.shape[0], "y_val")
        if R_train.shape[1] != R_val.shape[1]:
            raise InputError(f"R_val: {R_val.shape[1]} items, but R_train has {R_train.shape[1]}; give both on the same pool")
        if R_val.shape[0] == 0:
            raise InputError("R_val: no validation models; the GA's fitness needs at least one")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a model with no answer: NaN, dropped below
            x = 100.0 * np.nanmean(R_train, axis=1)
        ok = np.isfinite(x)
        if ok.sum() < 2:
            raise InputError("R_train: fewer than two training models answered any pool item; cannot fit the ruler g")
        self.ruler: Table1D = fit_gam_table(x[ok], y_train[ok], n_splines=n_splines, lam=lam)
        self._interp = _uniform_interp(self.ruler.x, self.ruler.y)
        self.n_items = R_train.shape[1]
        self.y_val = y_val
        obs = ~np.isnan(R_val)
        self.has_missing = not bool(obs.all())
        # 0/1 data: float32 sums of at most 2^24 ones are exact and twice as fast
        binary = bool(np.all((R_val[obs] == 0) | (R_val[obs] == 1)))
        self._dtype = np.float32 if binary and R_val.shape[1] < 2**24 else np.float64
        self._Rt = np.ascontiguousarray(np.where(obs, R_val, 0.0).T, dtype=self._dtype)  # (M, n_val)
        self._Ot = np.ascontiguousarray(obs.T, dtype=self._dtype) if self.has_missing else None  # (M, n_val)

    def rmse(self, masks) -> np.ndarray:
        """``(P,)`` validation RMSE (pp) of each mask (models with no answer on it left out; none left: ``inf``)."""
        masks = np.asarray(masks)
        if masks.ndim != 2 or masks.shape[1] != self.n_items:
            raise InputError(f"masks: expected (P, {self.n_items}) bool, got shape {masks.shape}")
        W = masks.astype(self._dtype)
        S = (W @ self._Rt).astype(np.float64)
        if not self.has_missing:
            err = np.clip(self._interp(S * (100.0 / masks.sum(axis=1, keepdims=True))), 0.0, 100.0) - self.y_val
            return np.sqrt(np.mean(err * err, axis=1))
        cnt = (W @ self._Ot).astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            means = np.where(cnt > 0, 100.0 * S / cnt, np.nan)
        pred = np.clip(self._interp(means), 0.0, 100.0)
        pred[np.isnan(means)] = np.nan
        err = pred - self.y_val
        sq = np.where(np.isnan(err), 0.0, err * err)
        n = (~np.isnan(err)).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(n > 0, np.sqrt(sq.sum(axis=1) / np.maximum(n, 1)), np.inf)


def mask_positions(masks, n_items: int) -> np.ndarray:
    """``(P, k)`` sorted item positions of each row of ``masks`` ``(P, n_items)`` bool (InputError: bad shape)."""
    masks = np.asarray(masks, dtype=bool)
    if masks.ndim != 2 or masks.shape[1] != n_items:
        raise InputError(f"masks: expected (P, {n_items}) bool, got shape {masks.shape}")
    k = int(masks[0].sum()) if masks.shape[0] else 0
    if not (masks.sum(axis=1) == k).all():
        raise InputError("masks: every row must hold the same number of items")
    return np.nonzero(masks)[1].reshape(masks.shape[0], k)  # row-major: sorted positions per row


class RidgeFitness(_NegRMSE):
    """``-RMSE`` (pp) of a ridge ``y ~ b + X_m w`` (penalty ``alpha``) on each candidate's items, fitted on the
    training models: in-sample (``R_fit is None``) or on ``R_fit`` / ``y_fit``; at most ``max_items`` pool items."""

    def __init__(self, R_train, y_train, R_fit=None, y_fit=None, alpha: float = 1.0, max_items: int = 8000):
        X = as_matrix(R_train, "R_train")
        y = _vector(y_train, X.shape[0], "y_train")
        if X.shape[1] > max_items:
            raise InputError(f"R_train: {X.shape[1]} pool items need a {X.shape[1]}^2 Gram matrix for ridge fitness; "
                             f"use fitness='gam' or shrink the pool below {max_items} items "
                             "(EssenceSelector: max_pool)")
        if not alpha > 0:
            raise InputError(f"alpha: the ridge penalty must be > 0, got {alpha}")
        X, self.fill = fill_means(X)
        self.mu = X.mean(axis=0)
        Xc = X - self.mu
        self.ym = float(y.mean())
        yc = y - self.ym
        self.alpha = float(alpha)
        self.n_train = X.shape[0]
        self.G = Xc.T @ Xc  # (M, M)
        self.b = Xc.T @ yc  # (M,)
        self.yy = float(yc @ yc)
        self.n_items = X.shape[1]
        self.in_sample = R_fit is None
        if not self.in_sample:
            Rf = as_matrix(R_fit, "R_fit")
            if Rf.shape[1] != self.n_items:
                raise InputError(f"R_fit: {Rf.shape[1]} items, but R_train has {self.n_items}; give both on the same pool")
            self.y_fit = _vector(y_fit, Rf.shape[0], "y_fit")
            self._Xt = np.ascontiguousarray((np.where(np.isnan(Rf), self.fill, Rf) - self.mu).T)  # (M, n_fit)

    def restrict(self, cols) -> "RidgeFitness":
        """The same fitness on a sub-pool (``cols`` positions): slices the Gram matrix, refits nothing."""
        cols = np.asarray(cols, dtype=np.intp)
        new = _copy(self, G=np.ascontiguousarray(self.G[np.ix_(cols, cols)]), b=self.b[cols], fill=self.fill[cols],
                    mu=self.mu[cols], n_items=cols.size)
        if not self.in_sample:
            new._Xt = self._Xt[cols]
        return new

    def weights(self, masks) -> tuple[np.ndarray, np.ndarray]:
        """``(idx, w)``: ``(P, k)`` sorted item positions of each mask and their ridge weights."""
        idx = mask_positions(masks, self.n_items)
        k = idx.shape[1]
        A = gram_blocks(self.G, idx)
        A[:, np.arange(k), np.arange(k)] += self.alpha
        w = np.linalg.solve(A, self.b[idx][:, :, None])[:, :, 0]
        return idx, w

    def rmse(self, masks) -> np.ndarray:
        """``(P,)`` RMSE (pp) of each mask's ridge on the fitness models (in-sample when none were given)."""
        idx, w = self.weights(masks)
        if self.in_sample:  # at the ridge solution (G + aI) w = b:  SSE = y'y - w'b - a w'w
            sse = self.yy - np.einsum("pi,pi->p", w, self.b[idx]) - self.alpha * np.einsum("pi,pi->p", w, w)
            return np.sqrt(np.maximum(sse, 0.0) / self.n_train)
        W = np.zeros((idx.shape[0], self.n_items))
        np.put_along_axis(W, idx, w, axis=1)
        pred = np.clip(W @ self._Xt + self.ym, 0.0, 100.0)
        return np.sqrt(np.mean((pred - self.y_fit) ** 2, axis=1))


def _copy(obj, **changes):
    new = object.__new__(type(obj))
    new.__dict__.update(obj.__dict__, **changes)
    return new


def gram_blocks(G: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``(P, k, k)`` blocks ``G[idx_p][:, idx_p]`` of the ``(M, M)`` Gram matrix, for ``idx`` ``(P, k)``."""
    M = G.shape[0]
    return G.ravel().take(idx[:, :, None] * M + idx[:, None, :])


def _uniform_interp(x: np.ndarray, y: np.ndarray):
    """A function equal to ``np.interp(v, x, y)``; on a uniform grid it indexes instead of searching."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    step = (x[-1] - x[0]) / (x.size - 1)
    if not np.allclose(np.diff(x), step, rtol=1e-9, atol=0):
        return lambda v: np.interp(v.ravel(), x, y).reshape(v.shape)
    x0, n, inv = x[0], x.size, 1.0 / step
    slope = np.r_[np.diff(y), 0.0]

    def f(v):
        pos = np.clip((np.asarray(v, dtype=np.float64) - x0) * inv, 0.0, n - 1.0)
        bad = np.isnan(pos)
        if bad.any():
            pos = np.where(bad, 0.0, pos)
        i = np.minimum(pos.astype(np.intp), n - 1)
        out = y[i] + (pos - i) * slope[i]
        if bad.any():
            out[bad] = np.nan
        return out

    return f


def _vector(y, n: int, name: str) -> np.ndarray:
    y = np.asarray(y, dtype=np.float64)
    if y.shape != (n,):
        raise InputError(f"{name}: shape {y.shape}, expected ({n},): one full score (pp) per model")
    if not np.isfinite(y).all():
        raise InputError(f"{name}: contains NaN or inf; give every model a finite full score")
    return y
