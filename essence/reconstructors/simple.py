"""The simple reconstructors: a GAM on the subset score, ridge on the answers, ridge then a GAM on its index, a line
on the subset mean, the line plus shrunk item weights, weighted means."""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..data.checks import ListOf, OneOf, Real, Whole, check_params, store_params
from ..data.errors import InputError
from .base import Reconstructor, check_X, fill_means, subset_score
from .tables import GAM_LAM, GAM_N_SPLINES, Table1D, fit_gam_table, round_list

__all__ = ["GAMReconstructor", "RidgeReconstructor", "RidgeGAMReconstructor", "WeightedMeanReconstructor",
           "LineReconstructor", "MeanRidgeReconstructor", "WeightedLineReconstructor", "FEW_MODEL_CHOICES",
           "RECONSTRUCTOR_CHOICES", "reconstructor_makers"]


def _line_beyond(table: Table1D, s: np.ndarray, y: np.ndarray) -> Table1D:
    """``table`` continued beyond ``[min(s), max(s)]`` from its end values with the least-squares slope of ``y`` on
    ``s`` (``(n,)`` pp each)."""
    slope = float(np.polyfit(s, y, 1)[0])
    lo, hi = float(s.min()), float(s.max())
    x = np.union1d(table.x, [lo, hi])  # the ends join the grid, so values inside the range stay the table's
    v = table(x)
    below, above = x < lo, x > hi
    v[below] = float(table(lo)) + slope * (x[below] - lo)
    v[above] = float(table(hi)) + slope * (x[above] - hi)
    return Table1D(x, v)


class GAMReconstructor(Reconstructor):
    """Full score = g(subset score, ``weights`` ``(k,)`` or None) by pygam; beyond the fitted scores ``extrapolate``
    ``"gam"`` keeps the spline's end slope, ``"line"`` the least-squares line's."""

    kind = "gam"
    _domains = {"n_splines": Whole(4), "lam": Real(0.0), "extrapolate": OneOf("gam", "line")}

    def __init__(self, n_splines: int = GAM_N_SPLINES, lam: float = GAM_LAM, weights=None, extrapolate: str = "gam"):
        store_params(self, locals())

    def fit(self, X, y):
        check_params(self)
        X = check_X(X)
        self.k_ = X.shape[1]
        s = subset_score(X, self.weights)
        self.table_ = fit_gam_table(s, y, self.n_splines, self.lam)
        if self.extrapolate == "line" and np.unique(s).size >= 2:
            self.table_ = _line_beyond(self.table_, s, np.asarray(y, dtype=np.float64))
        return self

    def to_dict(self) -> dict:
        return {"kind": self.kind, "params": self.params_dict(), "k": self.k_, "table": self.table_.to_dict()}

    @classmethod
    def from_dict(cls, d: dict):
        obj = cls(**d["params"])
        obj.k_ = int(d["k"])
        obj.table_ = Table1D.from_dict(d["table"])
        return obj


def _ridge_cv(X: np.ndarray, y, alphas) -> tuple[np.ndarray, np.ndarray, float, float]:
    """RidgeCV of ``y`` on ``X`` ``(n, k)`` (a missing cell: its item's mean, else 0) over ``alphas``. Returns
    ``(fill (k,), coef (k,), intercept, alpha)``."""
    from sklearn.linear_model import RidgeCV

    Xf, fill = fill_means(X)
    m = RidgeCV(alphas=[float(a) for a in alphas]).fit(Xf, np.asarray(y, dtype=np.float64))
    return fill, np.asarray(m.coef_, dtype=np.float64), float(m.intercept_), float(m.alpha_)


class RidgeReconstructor(Reconstructor):
    """Full score = ``b + X w``: ridge on the chosen items' answers, penalty among ``alphas`` by RidgeCV's
    leave-one-out error; a missing cell counts as its item's training mean (stored)."""

    kind = "ridge"
    _domains = {"alphas": ListOf(Real(0.0, open_min=True))}

    def __init__(self, alphas=(0.01, 0.1, 1.0, 10.0, 100.0, 1000.0)):
        self.alphas = alphas

    def fit(self, X, y):
        check_params(self)
        X = check_X(X)
        self.k_ = X.shape[1]
        self.fill_, self.coef_, self.intercept_, self.alpha_ = _ridge_cv(X, y, self.alphas)
        return self

    def to_dict(self) -> dict:
        return {
            "kind": self.kind, "params": self.params_dict(), "k": self.k_, "coef": round_list(self.coef_, 12),
            "intercept": float(self.intercept_), "alpha": self.alpha_, "fill": round_list(self.fill_, 12),
        }

    @classmethod
    def from_dict(cls, d: dict):
        obj = cls(**d["params"])
        obj.k_ = int(d["k"])
        obj.coef_ = np.asarray(d["coef"], dtype=np.float64)
        obj.intercept_, obj.alpha_ = float(d["intercept"]), float(d["alpha"])
        obj.fill_ = np.asarray(d["fill"], dtype=np.float64)
        return obj


class RidgeGAMReconstructor(RidgeReconstructor):
    """Full score = g(b + X w): :class:`RidgeReconstructor`'s index, then a 1-D GAM ``g`` fitted on the
    ``folds``-fold cross-fitted indices, over their range (constant beyond it)."""

    kind = "ridge_gam"
    _domains = {**RidgeReconstructor._domains, "n_splines": Whole(4), "lam": Real(0.0), "folds": Whole(2),
                "seed": Whole(0)}

    def __init__(self, alphas=(0.01, 0.1, 1.0, 10.0, 100.0, 1000.0), n_splines: int = 20, lam: float = 5.0,
                 folds: int = 5, seed: int = 0):
        store_params(self, locals())

    def fit(self, X, y):
        from sklearn.linear_model import Ridge

        super().fit(X, y)
        X = check_X(X)
        y = np.asarray(y, dtype=np.float64)
        n = X.shape[0]
        folds = min(self.folds, n)
        if folds < 2:
            raise InputError(f"ridge_gam: needs at least 2 training models for cross-fitting, got {n}")
        Xf = np.where(np.isnan(X), self.fill_, X)
        order = np.random.default_rng(self.seed).permutation(n)
        index = np.empty(n)
        for f in range(folds):
            held = order[f::folds]
            keep = np.setdiff1d(order, held, assume_unique=True)
            m = Ridge(alpha=self.alpha_).fit(Xf[keep], y[keep])
            index[held] = m.predict(Xf[held])
        lo, hi = float(index.min()), float(index.max())
        if not hi > lo:
            raise InputError("ridge_gam: the cross-fitted index is constant; use 'ridge' or 'gam'")
        self.table_ = fit_gam_table(index, y, self.n_splines, self.lam, lo=lo, hi=hi)
        return self

    def to_dict(self) -> dict:
        d = super().to_dict()
        d["table"] = self.table_.to_dict()
        return d

    @classmethod
    def from_dict(cls, d: dict):
        obj = super().from_dict(d)
        obj.table_ = Table1D.from_dict(d["table"])
        return obj


class WeightedMeanReconstructor(Reconstructor):
    """Full score = ``100 * sum_j w_j x_j / sum_j w_j`` (pp); nothing is fitted."""

    kind = "weighted_mean"

    def __init__(self, weights=None):
        self.weights = weights

    def fit(self, X, y=None):
        X = check_X(X)
        subset_score(X[:1], self.weights)  # the weights checked now, not when a new model arrives
        self.k_ = X.shape[1]
        return self

    def to_dict(self) -> dict:
        return {"kind": self.kind, "params": self.params_dict(), "k": self.k_}

    @classmethod
    def from_dict(cls, d: dict):
        obj = cls(**d["params"])
        obj.k_ = int(d["k"])
        return obj


RECONSTRUCTOR_CHOICES = ("gam", "ridge", "ridge_gam")


def reconstructor_makers(names=RECONSTRUCTOR_CHOICES, n_splines: int = GAM_N_SPLINES,
                         lam: float = GAM_LAM) -> dict[str, Callable[[], object]]:
    """Zero-argument factories by label among ``"gam"`` (:class:`GAMReconstructor` with ``n_splines``, ``lam``),
    ``"ridge"`` and ``"ridge_gam"``; InputError names an unknown label."""
    names = tuple(names)
    unknown = [n for n in names if n not in RECONSTRUCTOR_CHOICES]
    if unknown or not names:
        raise InputError(f"reconstructors: {list(names)!r}; choose among 'gam', 'ridge' and 'ridge_gam'")
    makers = {"gam": lambda: GAMReconstructor(n_splines=n_splines, lam=lam), "ridge": RidgeReconstructor,
              "ridge_gam": RidgeGAMReconstructor}
    return {n: makers[n] for n in names}


class LineReconstructor(Reconstructor):
    """Full score = ``a + b * m``: a least-squares line on the subset score ``m`` (pp); with one distinct ``m``,
    the mean target."""

    kind = "line"
    #: item weights of the subset score (None: the plain mean); the weighted subclass makes it a parameter
    weights = None

    def fit(self, X, y):
        X = check_X(X)
        y = np.asarray(y, dtype=np.float64)
        self.k_ = X.shape[1]
        m = subset_score(X, self.weights)
        slope, icpt = (0.0, y.mean()) if np.unique(m).size < 2 else np.polyfit(m, y, 1)
        self.slope_, self.intercept_ = float(slope), float(icpt)
        return self

    def to_dict(self) -> dict:
        return {"kind": self.kind, "params": self.params_dict(), "k": self.k_, "slope": self.slope_,
                "intercept": self.intercept_}

    @classmethod
    def from_dict(cls, d: dict):
        obj = cls(**d.get("params", {}))
        obj.k_ = int(d["k"])
        obj.slope_, obj.intercept_ = float(d["slope"]), float(d["intercept"])
        return obj


class MeanRidgeReconstructor(Reconstructor):
    """Full score = ``a + b * m + X w``: the :class:`LineReconstructor` plus a ridge (RidgeCV over ``alphas``) on
    the answers fitted to its residuals; a missing cell counts as its item's training mean."""

    kind = "mean_ridge"

    def __init__(self, alphas=(1.0, 10.0, 100.0, 1000.0, 1e4, 1e5)):
        self.alphas = alphas

    def fit(self, X, y):
        X = check_X(X)
        y = np.asarray(y, dtype=np.float64)
        self.line_ = LineReconstructor().fit(X, y)
        self.k_ = X.shape[1]
        resid = y - (self.line_.intercept_ + self.line_.slope_ * subset_score(X))
        self.fill_, self.coef_, self.intercept_, self.alpha_ = _ridge_cv(X, resid, self.alphas)
        return self

    def to_dict(self) -> dict:
        return {"kind": self.kind, "params": self.params_dict(), "k": self.k_, "line": self.line_.to_dict(),
                "coef": round_list(self.coef_, 12), "intercept": self.intercept_, "alpha": self.alpha_,
                "fill": round_list(self.fill_, 12)}

    @classmethod
    def from_dict(cls, d: dict):
        obj = cls(**d["params"])
        obj.k_ = int(d["k"])
        obj.line_ = LineReconstructor.from_dict(d["line"])
        obj.coef_ = np.asarray(d["coef"], dtype=np.float64)
        obj.intercept_, obj.alpha_ = float(d["intercept"]), float(d["alpha"])
        obj.fill_ = np.asarray(d["fill"], dtype=np.float64)
        return obj


#: reconstructors every method's choice includes (added by the Selector base class): they need few models
FEW_MODEL_CHOICES = {"line": LineReconstructor, "mean_ridge": MeanRidgeReconstructor}


class WeightedLineReconstructor(LineReconstructor):
    """Full score = ``a + b * m_w``: :class:`LineReconstructor` on the ``weights``-weighted subset score."""

    kind = "weighted_line"

    def __init__(self, weights=None):
        self.weights = weights
