"""Reconstructors on a 2PL ability (:mod:`essence.features.irt`): MetaBench's GAM on (ability, subset score)
(``irt_gam``) and tinyBenchmarks' gp-IRT estimate (``gpirt``); estimates in pp."""

from __future__ import annotations

import warnings

import numpy as np
from pygam import LinearGAM, s

from ..data.checks import Flag, Real, Whole, check_params, store_params
from ..data.errors import InputError
from ..features.irt import ItemParams, binarize, estimate_ability
from .base import Reconstructor, subset_score
from .forward import THETA_MAX
from .tables import GAM_LAM, GAM_N_SPLINES, Table1D, fit_gam_table

__all__ = ["THETA_MAX", "fit_gam2_tables", "IRTGAMReconstructor", "gp_lambda", "gpirt_components",
           "GPIRTReconstructor"]


def fit_gam2_tables(Z, y, n_splines: int = GAM_N_SPLINES, lam: float = GAM_LAM, theta_max: float = THETA_MAX,
                    n_grid_theta: int = 2401, n_grid_score: int = 2001):
    """``(intercept, t_theta, t_score, gam)`` of pygam's ``LinearGAM(s(0) + s(1))`` on ``Z = [theta, score]``
    ``(n, 2)`` -> ``y`` (pp), each term a :class:`Table1D`; InputError for fewer than 4 distinct values a column."""
    Z = np.asarray(Z, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if Z.ndim != 2 or Z.shape[1] != 2 or Z.shape[0] != y.shape[0]:
        raise InputError(f"Z: expected (n, 2) matching y's {y.shape[0]} rows, got {Z.shape}")
    nd = [np.unique(Z[:, c]).size for c in range(2)]
    if min(nd) < 4:
        raise InputError(f"GAM on (theta, score): only {nd} distinct values; need at least 4 in each column")
    ns = [int(min(n_splines, max(4, d))) for d in nd]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gam = LinearGAM(s(0, n_splines=ns[0], lam=lam) + s(1, n_splines=ns[1], lam=lam)).fit(Z, y)
        gt = np.linspace(-theta_max, theta_max, n_grid_theta)
        gs = np.linspace(0.0, 100.0, n_grid_score)
        Xt = np.column_stack([gt, np.full_like(gt, np.median(Z[:, 1]))])
        Xs = np.column_stack([np.full_like(gs, np.median(Z[:, 0])), gs])
        ft = gam.partial_dependence(term=0, X=Xt)
        fs = gam.partial_dependence(term=1, X=Xs)
    intercept = float(gam.coef_[-1])  # pygam puts the intercept term last
    return intercept, Table1D(gt, ft), Table1D(gs, fs), gam


class IRTGAMReconstructor(Reconstructor):
    """Full score = GAM on (theta, subset score) (``use_score``) or on theta alone; theta the MAP 2PL ability of
    the answers binarised at ``threshold``, on items with ``a``, ``b`` ``(k,)``."""

    kind = "irt_gam"
    _domains = {"threshold": Real(0.0, 1.0), "prior_sd": Real(0.0, open_min=True), "use_score": Flag(),
                "n_splines": Whole(4), "lam": Real(0.0)}

    def __init__(self, a, b, threshold: float = 0.5, prior_sd: float = 1.0, use_score: bool = True,
                 n_splines: int = GAM_N_SPLINES, lam: float = GAM_LAM):
        store_params(self, locals())

    def _ab(self) -> tuple[np.ndarray, np.ndarray]:
        a, b = np.asarray(self.a, dtype=np.float64).ravel(), np.asarray(self.b, dtype=np.float64).ravel()
        if a.size != b.size:
            raise InputError(f"a, b: lengths {a.size} and {b.size} differ; give one of each per item")
        return a, b

    def _check(self, X) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != len(self.a):
            raise InputError(f"X: expected (n_models, {len(self.a)}) responses on the chosen items, "
                             f"got shape {X.shape}")
        return X

    def theta(self, X) -> np.ndarray:
        """MAP abilities ``(n_models,)`` from responses ``X`` ``(n_models, k)``, clipped to +-THETA_MAX."""
        X = self._check(X)
        a, b = self._ab()
        th = estimate_ability(binarize(X, float(self.threshold)), a, b, prior_sd=float(self.prior_sd))
        return np.clip(th, -THETA_MAX, THETA_MAX)

    def fit(self, X, y):
        check_params(self)
        self._ab()
        X = self._check(X)
        y = np.asarray(y, dtype=np.float64)
        th = self.theta(X)
        if self.use_score:
            self.intercept_, t_theta, t_score, _ = fit_gam2_tables(
                np.column_stack([th, subset_score(X)]), y, self.n_splines, self.lam)
            self.t_score_ = Table1D.from_dict(t_score.to_dict())  # as stored: reloads predict bit for bit
        else:
            self.intercept_ = 0.0
            t_theta = fit_gam_table(th, y, self.n_splines, self.lam, lo=-THETA_MAX, hi=THETA_MAX, n_grid=2401)
            self.t_score_ = None
        self.t_theta_ = Table1D.from_dict(t_theta.to_dict())
        return self

    def to_dict(self) -> dict:
        return {"kind": self.kind, "params": self.params_dict(), "k": len(self.a), "intercept": float(self.intercept_),
                "t_theta": self.t_theta_.to_dict(),
                "t_score": None if self.t_score_ is None else self.t_score_.to_dict()}

    @classmethod
    def from_dict(cls, d: dict):
        obj = cls(**d["params"])
        obj.intercept_ = float(d["intercept"])
        obj.t_theta_ = Table1D.from_dict(d["t_theta"])
        obj.t_score_ = None if d.get("t_score") is None else Table1D.from_dict(d["t_score"])
        return obj


def gp_lambda(b: float, v: float) -> float:
    """gp-IRT's weight ``b^2 / (v + b^2)`` of the anchor estimate (0.5 when both are 0): ``b`` p-IRT's error scale,
    ``v`` the anchor estimate's MSE, in the same units. InputError unless finite with ``v >= 0``."""
    b, v = float(b), float(v)
    if not (np.isfinite(b) and np.isfinite(v)) or v < 0:
        raise InputError(f"gp_lambda: need finite b and v >= 0, got b={b}, v={v}")
    den = v + b * b
    return 0.5 if den == 0 else b * b / den


def gpirt_components(X, params: ItemParams, anchors, weights, threshold: float = 0.5,
                     prior_sd: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """``(anchor estimate, p-IRT estimate)``, fractions ``(n_models,)`` each, from answers ``X`` ``(n_models, k)`` on
    the ``anchors`` ``(k,)`` (pool positions; NaN: unseen) with ``weights`` ``(k,)``; ``params``: the pool's."""
    X = np.asarray(X, dtype=np.float64)
    anchors = np.asarray(anchors, dtype=np.intp)
    w = np.asarray(weights, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] != anchors.size or w.shape != anchors.shape:
        raise InputError(f"X: expected (n_models, {anchors.size}) responses on the anchors, got {X.shape}")
    obs = ~np.isnan(X)
    den = obs @ w
    if (den <= 0).any():
        raise InputError(f"X: {int((den <= 0).sum())} model(s) have no result on any anchor item")
    anchor_est = (np.where(obs, X, 0.0) @ w) / den
    theta = estimate_ability(binarize(X, threshold), params.a[anchors], params.b[anchors], prior_sd=prior_sd)
    P = params.prob(theta)  # (n_models, N)
    n_pool = params.n_items
    seen_sum = np.where(obs, X, 0.0).sum(axis=1)
    unseen = np.ones_like(P, dtype=bool)
    unseen[:, anchors] = ~obs
    pirt = (seen_sum + np.where(unseen, P, 0.0).sum(axis=1)) / n_pool
    return anchor_est, pirt


class GPIRTReconstructor(Reconstructor):
    """tinyBenchmarks' gp-IRT estimate ``G`` (pp), or with ``calibrate`` a GAM of the target on it; ``pool_*``
    ``(N,)``: :class:`essence.features.irt.ItemParams`; ``anchors`` ``(k,)``: pool positions of ``X``'s columns."""

    kind = "gpirt"
    _domains = {"gp_lambda": Real(0.0, 1.0), "threshold": Real(0.0, 1.0), "prior_sd": Real(0.0, open_min=True),
                "calibrate": Flag(), "n_splines": Whole(4), "lam": Real(0.0)}

    def __init__(self, pool_a, pool_b, pool_p_fixed, anchors, weights, gp_lambda: float, threshold: float = 0.5,
                 prior_sd: float = 1.0, calibrate: bool = False, n_splines: int = GAM_N_SPLINES, lam: float = GAM_LAM):
        store_params(self, locals())

    def _state(self) -> tuple[ItemParams, list[int], list[float]]:
        """The pool's :class:`~essence.features.irt.ItemParams`, the anchors and their weights, checked."""
        a = [float(v) for v in self.pool_a]
        b = [float(v) for v in self.pool_b]
        p_fixed = [np.nan if (v is None or np.isnan(v)) else float(v) for v in self.pool_p_fixed]
        anchors = [int(v) for v in self.anchors]
        weights = [float(v) for v in self.weights]
        if not (len(a) == len(b) == len(p_fixed)):
            raise InputError("pool_a, pool_b, pool_p_fixed: must have one entry per pool item")
        if len(anchors) != len(weights) or not anchors:
            raise InputError("anchors, weights: need one weight per anchor and at least one anchor")
        if min(anchors) < 0 or max(anchors) >= len(a):
            raise InputError(f"anchors: positions must lie in [0, {len(a)})")
        if not 0.0 <= float(self.gp_lambda) <= 1.0:
            raise InputError(f"gp_lambda: {self.gp_lambda} must be in [0, 1]")
        return ItemParams(np.asarray(a), np.asarray(b), np.asarray(p_fixed, dtype=float)), anchors, weights

    def params_dict(self) -> dict:
        d = super().params_dict()
        d["pool_p_fixed"] = [None if (v is None or np.isnan(v)) else float(v) for v in self.pool_p_fixed]
        return d

    def gpirt(self, X) -> np.ndarray:
        """Uncalibrated gp-IRT estimate of the pool score, pp, ``(n_models,)``."""
        params, anchors, weights = self._state()
        A, P = gpirt_components(X, params, anchors, weights, float(self.threshold), float(self.prior_sd))
        lam = float(self.gp_lambda)
        return lam * (100.0 * A) + (1.0 - lam) * (100.0 * P)

    def fit(self, X, y):
        check_params(self)
        self._state()
        self.table_ = None
        if self.calibrate:
            t = fit_gam_table(self.gpirt(X), np.asarray(y, dtype=np.float64), self.n_splines, self.lam)
            self.table_ = Table1D.from_dict(t.to_dict())  # as stored: reloads predict bit for bit
        return self

    def to_dict(self) -> dict:
        return {"kind": self.kind, "params": self.params_dict(), "k": len(self.anchors),
                "table": None if self.table_ is None else self.table_.to_dict()}

    @classmethod
    def from_dict(cls, d: dict):
        obj = cls(**d["params"])
        obj.table_ = None if d.get("table") is None else Table1D.from_dict(d["table"])
        return obj
