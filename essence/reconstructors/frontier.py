"""The estimate that stays honest outside the references: regression inside, a shrinkage-free estimate outside.

A regression ``G`` on the reference models pulls every estimate toward their mean, so a model stronger than every
reference is read low and its interval misses. ``D`` does not shrink: a low-rank logistic factor model of the
references' answers on every item (:class:`essence.features.factor.FactorModel`, weak prior on the abilities) and

    D = mean over all N items of p_j(theta) + mean over the answered items of (answer_j - p_j(theta))

(the GREG form, design-unbiased where the items are a random sample), standard error ``sqrt((1 - k/N) v / k)``
(``v``: the largest of the residual variance, the Bernoulli variance and ``1 / (k + 2)``) times ``c_d >= 1``
calibrated on held-out references. Per model, from its own answers:

    p_out = P(the true score lies outside the references' range | D)    (flat prior; D ~ N(truth, s_D^2))
    w     = posterior of "outside" (prior ``pi_out``; inside: a Gaussian kernel of width s_D on each of the
            references' out-of-fold D values)
    estimate = (1 - w) G + w D;   interval = the ``level`` quantiles of (1 - p_out) N(G, s_G^2) + p_out N(D, s_D^2)

The inside likelihood is the density of what D reads for models inside the references: the percentiles of their
out-of-fold D values, so where D overshoots for the strongest references (its item parameters come from few models,
and chosen items are not a random sample), a model just inside their top that D reads as high is still judged
inside. ``s_G`` from G's cross-validated residuals. With ``side="above"`` (the default) D's weight ``w`` uses only the
probability above the references (``p_above`` in place of ``p_out``): new models are usually stronger, and below the
references, near the chance floor, D is noisier than the regression. With ``side="both"`` ``w`` is two-sided. The
interval mixes by the two-sided ``p_out`` either way, and *outside* means the two-sided posterior exceeds 0.5 or the
estimate itself lies beyond the references' scores (it extrapolates there, whatever the posterior says; the note of
``essence estimate --context`` follows this flag), so a model below every reference is still flagged (and keeps the
wide interval). Where the target is not the pool mean (a
pre-selected pool), a least-squares line maps D's pool mean to it (its residual sd joins ``s_D``).

Where the references say nothing about a model, only item sampling does: ``fallback`` names a uniformly random sample
of the items not chosen, which a model flagged outside may answer as a second stage; its design-based estimate is
combined with the one above (:meth:`FrontierReconstructor.predict_interval`).
"""

from __future__ import annotations

import numpy as np

from ..data.checks import ListOf, OneOf, Real, Whole, check_params
from ..data.errors import InputError
from ..features.factor import FactorModel
from . import forward
from .base import Reconstructor, check_X, fit_reconstructor, model_folds, reconstructor_class
from .tables import Table1D

__all__ = ["FrontierReconstructor", "Z90", "fit_factor", "d_estimates", "calibration", "oof_quantiles"]

Z90 = 1.6448536269514722  # the standard normal's 95 % quantile: a 90 % interval is +-Z90 sd


def _filled(R) -> np.ndarray:
    R = np.asarray(R, dtype=np.float64)
    if not np.isnan(R).any():
        return R
    means = np.nanmean(np.where(np.isnan(R).all(axis=0), 0.5, R), axis=0)
    return np.where(np.isnan(R), means, R)


def fit_factor(R, d: int, max_models: int = 800, seed: int = 0) -> FactorModel:
    """The factor model of rank ``d`` on at most ``max_models`` rows of ``R`` ``(n, N)`` (a seeded subsample)."""
    R = np.asarray(R, dtype=np.float64)
    if R.shape[0] > max_models:
        R = R[np.sort(np.random.default_rng(seed).choice(R.shape[0], max_models, replace=False))]
    return FactorModel(d=d, seed=seed).fit(R)


def pool_map(R, y) -> tuple[float, float, float]:
    """``(a, b, sd)``: the line from the pool mean (pp) to the target ``y`` (pp) on the references, identity
    ``(0, 1, 0)`` when the target is the pool mean; ``sd`` its residual sd (pp)."""
    pool = 100.0 * _filled(R).mean(axis=1)
    y = np.asarray(y, dtype=np.float64)
    if np.max(np.abs(pool - y)) < 1e-3:
        return 0.0, 1.0, 0.0
    b, a = np.polyfit(pool, y, 1)
    return float(a), float(b), float(np.sqrt(np.sum((y - a - b * pool) ** 2) / max(y.size - 2, 1)))


def d_estimates(fm: FactorModel, X, items, mapping, prior_prec: float = 0.01) -> tuple[np.ndarray, np.ndarray]:
    """``(D, s)`` ``(n,)`` pp: the shrinkage-free estimate and its uncalibrated standard error for answers ``X``
    ``(n, k)`` on ``items`` (module docstring), through the forward pass an artifact runs."""
    state = {"loadings": fm.A_, "easiness": fm.b_, "items": list(items), "map": list(mapping), "c_d": 1.0,
             "prior_prec": prior_prec}
    return forward.frontier_d(state, np.asarray(X, dtype=np.float64))


def calibration(eG, eD: dict, zD: dict, level: float = 0.9) -> tuple[int, float, float]:
    """``(d, s_inner, c_d)`` from out-of-fold residuals (pp) of G ``(n,)`` and of D per rank ``{d: (n,)}`` (``zD``:
    D's over its standard error): the rank with the lowest RMSE of D, the ``level`` quantile of G's absolute
    residuals over ``Z90`` and of D's standardised ones (at least 1)."""
    d = min(eD, key=lambda d_: (float(np.mean(eD[d_] ** 2)), d_))
    return (d, float(np.quantile(np.abs(eG), level) / Z90),
            float(max(1.0, np.quantile(np.abs(zD[d]), level) / Z90)))


def oof_quantiles(eD, y) -> np.ndarray:
    """``(101,)`` pp: the percentiles of what D reads for the references out of fold, ``eD + y`` (its out-of-fold
    residuals ``(n,)`` pp plus their scores ``(n,)`` pp): the inside density of the posterior."""
    return np.percentile(np.asarray(eD, dtype=np.float64) + np.asarray(y, dtype=np.float64), np.linspace(0, 100, 101))


class FrontierReconstructor(Reconstructor):
    """``(1 - w) G + w D`` with its own interval (module docstring).

    Parameters
    ----------
    items : the chosen items' positions among the columns of ``R`` (every item of the pool).
    inner : the regression ``G`` as ``{"kind": ..., "params": {...}}`` (default: a line on the subset mean).
    dims : factor-model ranks tried (by cross-validation of D over the references; ranks above
        ``n_train // models_per_dim`` of a fold are skipped).
    pi_out : prior probability that a new model lies outside the references.
    side : ``"above"`` (D may answer only above the references) or ``"both"`` (below them too).
    level : the interval's nominal coverage.
    prior_prec : precision of the prior on a new model's abilities (weak: sd 10 reference sds).
    max_models : reference models the factor model is fitted on (a seeded subsample beyond).
    folds, seed : the cross-validation over the references that calibrates ``s_G`` and ``c_d``.
    d, s_inner, c_d : the rank and the two calibrations, when a caller's own cross-validation gave them
        (all three, or None to compute them here on the fixed items).
    fallback : positions (among the columns of ``R``) of the fallback sample: items drawn uniformly at random from
        those not chosen, which a model placed outside the references may answer too
        (:meth:`predict_interval`'s ``Xf``); empty: none.
    d_quantiles : the percentiles (pp, ascending) of the references' out-of-fold D values
        (:func:`oof_quantiles`) from that cross-validation; computed here with the three above when they are
        None; given calibrations without them centre the inside density on the references' scores.

    ``fit(X, y, R=R)``: ``X`` ``(n, k)`` chosen answers, ``y`` ``(n,)`` pp, ``R`` ``(n, N)`` every answer.
    """

    kind = "frontier"
    needs_pool = True
    has_interval = True
    _domains = {"dims": ListOf(Whole(0)), "pi_out": Real(0.0, 1.0), "level": Real(0.0, 1.0, open_min=True),
                "prior_prec": Real(0.0, open_min=True), "max_models": Whole(10), "folds": Whole(2), "seed": Whole(0),
                "side": OneOf("both", "above")}

    def __init__(self, items=(), inner=None, dims=(1, 2, 3, 5, 8), pi_out: float = 0.5, level: float = 0.9,
                 prior_prec: float = 0.01, max_models: int = 800, folds: int = 5, seed: int = 0, d=None,
                 s_inner=None, c_d=None, side: str = "above", d_quantiles=None, fallback=()):
        self.items = items
        self.inner = inner
        self.dims = dims
        self.pi_out = pi_out
        self.level = level
        self.prior_prec = prior_prec
        self.max_models = max_models
        self.folds = folds
        self.seed = seed
        self.d = d
        self.s_inner = s_inner
        self.c_d = c_d
        self.side = side
        self.d_quantiles = d_quantiles
        self.fallback = fallback

    def _inner(self):
        spec = self.inner or {"kind": "line", "params": {}}
        return reconstructor_class(spec["kind"])(**spec.get("params", {}))

    def fit(self, X, y, R=None):
        check_params(self)
        X = check_X(X)
        y = np.asarray(y, dtype=np.float64)
        if R is None:
            raise InputError("frontier: fit needs R, the reference models' answers on every item (fit(X, y, R=R))")
        R = _filled(R)
        items = np.asarray(self.items, dtype=np.intp)
        if items.shape != (X.shape[1],) or R.shape[0] != X.shape[0] or items.min() < 0 or items.max() >= R.shape[1]:
            raise InputError(f"frontier: items ({items.size} positions) must index the {R.shape[1]} columns of R for "
                             f"the {X.shape[1]} chosen items")
        mapping = pool_map(R, y)
        given = (self.d, self.s_inner, self.c_d)
        if any(v is None for v in given):
            d, s_inner, c_d, dq = self.calibrate(X, y, R, items, mapping)
        else:
            d, s_inner, c_d = int(self.d), float(self.s_inner), float(self.c_d)
            dq = np.percentile(y, np.linspace(0, 100, 101)) if self.d_quantiles is None else self._given_quantiles()
        G = fit_reconstructor(self._inner(), X, y, R)
        fm = fit_factor(R, d, self.max_models, self.seed)
        self.k_, self.d_, self.s_inner_, self.c_d_, self.map_ = X.shape[1], d, s_inner, c_d, mapping
        self.s_inner_table_ = None  # a refit sets G's sd as a table over G (essence.artifact.refit)
        self.inner_, self.loadings_, self.easiness_ = G, fm.A_, fm.b_
        self.y_quantiles_ = np.percentile(y, np.linspace(0, 100, 101))
        self.d_quantiles_ = np.asarray(dq, dtype=np.float64)
        return self

    def _given_quantiles(self) -> np.ndarray:
        try:
            q = np.asarray(self.d_quantiles, dtype=np.float64).ravel()
        except (TypeError, ValueError):
            q = np.array([np.nan])
        if q.size < 2 or not np.isfinite(q).all() or (np.diff(q) < 0).any():
            raise InputError(f"frontier: d_quantiles must be ascending finite percentiles (pp) of the references' "
                             f"out-of-fold D values (oof_quantiles), got {self.d_quantiles!r}; leave it None to "
                             "centre the inside density on the references' scores")
        return q

    def calibrate(self, X, y, R, items, mapping) -> tuple[int, float, float, np.ndarray]:
        """``(d, s_inner, c_d, d_quantiles)`` by ``folds``-fold CV over the references on the fixed items: the rank
        with the lowest RMSE of D, the 90 % quantile of G's absolute residuals over ``Z90`` and of D's over its
        standard error (at least 1), the percentiles of D's out-of-fold values at that rank."""
        n = y.size
        lab = model_folds(n, self.folds, self.seed)
        n_fit = min(int((lab != f).sum()) for f in np.unique(lab))
        dims = [int(d) for d in self.dims if int(d) <= max(1, n_fit // 5)] or [min(int(d) for d in self.dims)]
        eG, eD, zD = np.empty(n), {d: np.empty(n) for d in dims}, {d: np.empty(n) for d in dims}
        for f in np.unique(lab):
            te = lab == f
            eG[te] = fit_reconstructor(self._inner(), X[~te], y[~te], R[~te]).predict(X[te]) - y[te]
            for d in dims:
                D, s = d_estimates(fit_factor(R[~te], d, self.max_models, self.seed), X[te], items, mapping,
                                   self.prior_prec)
                eD[d][te], zD[d][te] = D - y[te], (D - y[te]) / s
        d, s_inner, c_d = calibration(eG, eD, zD, float(self.level))
        return d, s_inner, c_d, oof_quantiles(eD[d], y)

    def to_dict(self) -> dict:
        r = lambda a: np.round(np.asarray(a, dtype=np.float64), 8).tolist()  # noqa: E731
        return {"kind": self.kind, "params": self.params_dict(), "k": self.k_, "inner": self.inner_.to_dict(),
                "d": self.d_, "loadings": r(self.loadings_), "easiness": r(self.easiness_),
                "items": [int(i) for i in np.asarray(self.items)], "map": list(self.map_), "s_inner": self.s_inner_,
                "c_d": self.c_d_, "prior_prec": float(self.prior_prec), "pi_out": float(self.pi_out),
                "side": str(self.side), "level": float(self.level), "y_quantiles": r(self.y_quantiles_),
                "d_quantiles": r(self.d_quantiles_),
                **({"fallback": [int(i) for i in np.asarray(self.fallback)]} if len(self.fallback) else {}),
                **({"s_inner_table": self.s_inner_table_.to_dict()} if getattr(self, "s_inner_table_", None) else {})}

    @classmethod
    def from_dict(cls, d: dict):
        from .base import reconstructor_from_dict

        obj = cls(**d["params"])
        obj.k_, obj.d_, obj.s_inner_, obj.c_d_ = int(d["k"]), int(d["d"]), float(d["s_inner"]), float(d["c_d"])
        obj.map_ = tuple(float(v) for v in d["map"])
        obj.inner_ = reconstructor_from_dict(d["inner"])
        n_items = len(d["easiness"])
        obj.loadings_ = np.asarray(d["loadings"], dtype=np.float64).reshape(n_items, obj.d_)
        obj.easiness_ = np.asarray(d["easiness"], dtype=np.float64)
        obj.y_quantiles_ = np.asarray(d["y_quantiles"], dtype=np.float64)
        obj.d_quantiles_ = np.asarray(d.get("d_quantiles", d["y_quantiles"]), dtype=np.float64)
        obj.s_inner_table_ = Table1D.from_dict(d["s_inner_table"]) if d.get("s_inner_table") else None
        return obj

    def predict_interval(self, X, Xf=None) -> dict:
        """``{"estimate", "lower", "upper", "weight", "outside", "fallback"}``, each ``(n,)``: the estimate and its
        interval (pp), D's weight ``w``, whether the model's own answers place it outside the references (either
        side), and whether the fallback sample answered (``Xf`` ``(n, m)``: answers on ``fallback``, NaN where not
        run). A model outside the references with any of them answered gets ``lam * E + (1 - lam) * F``: ``E`` the
        estimate above, ``F`` the sample's (:func:`essence.reconstructors.forward.frontier_fallback`, sd ``s_F``),
        ``lam = s_F^2 / (s_E^2 + s_F^2)`` (``s_E`` from E's interval), interval ``+- z sd`` with ``sd^2 = s_E^2 s_F^2 /
        (s_E^2 + s_F^2) + lam^2 max(0, (E - F)^2 - s_E^2 - s_F^2)``: E's bias, where F shows one, widens it."""
        state = self.state()
        return forward.frontier(state, check_X(X, state.get("k")), Xf)
