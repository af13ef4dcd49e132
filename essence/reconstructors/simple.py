"""The simple reconstructors (contract: :mod:`essence.reconstructors.base`): a GAM on the subset score, ridge on the
answers, ridge followed by a GAM on its index, a line on the subset mean, the line plus shrunk item weights,
weighted means. Smooth 1-D functions are stored as lookup tables (:class:`~essence.reconstructors.tables.Table1D`)."""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..data.checks import ListOf, OneOf, Real, Whole, check_params
from ..data.errors import InputError
from .base import Reconstructor, check_X, subset_score
from .tables import GAM_LAM, GAM_N_SPLINES, Table1D, fit_gam_table, round_list

__all__ = ["GAMReconstructor", "RidgeReconstructor", "RidgeGAMReconstructor", "WeightedMeanReconstructor",
           "LineReconstructor", "MeanRidgeReconstructor", "WeightedLineReconstructor", "FEW_MODEL_CHOICES",
           "RECONSTRUCTOR_CHOICES", "reconstructor_makers"]

# ----------------------------------------------------------------------------------------------
# GAM on the subset score
# ----------------------------------------------------------------------------------------------
def _line_beyond(table: Table1D, s: np.ndarray, y: np.ndarray) -> Table1D:
    """``table`` with its values outside ``[min(s), max(s)]`` replaced by the table's value at that end plus
    the least-squares slope of ``y`` on ``s`` (``(n,)`` pp each) times the distance from it."""
    slope = float(np.polyfit(s, y, 1)[0])
    lo, hi = float(s.min()), float(s.max())
    x = np.union1d(table.x, [lo, hi])  # the ends join the grid, so values inside the range stay the table's
    v = table(x)
    below, above = x < lo, x > hi
    v[below] = float(table(lo)) + slope * (x[below] - lo)
    v[above] = float(table(hi)) + slope * (x[above] - hi)
    return Table1D(x, v)


class GAMReconstructor(Reconstructor):
    """Full score = g(subset score): a GAM (pygam, ``s(0)``) on the (weighted) mean over the chosen items, pp.

    ``weights`` ``(k,)`` or None (the plain subset accuracy). ``extrapolate``: beyond the fitted models' range of
    subset scores, ``"gam"`` follows the spline's end slope, ``"line"`` continues from the spline's end value with
    the slope of the least-squares line over all fitted models (the end slope rests on the last few models).
    """

    kind = "gam"
    _domains = {"n_splines": Whole(4), "lam": Real(0.0), "extrapolate": OneOf("gam", "line")}

    def __init__(self, n_splines: int = GAM_N_SPLINES, lam: float = GAM_LAM, weights=None, extrapolate: str = "gam"):
        self.n_splines = n_splines
        self.lam = lam
        self.weights = weights
        self.extrapolate = extrapolate

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


# ----------------------------------------------------------------------------------------------
# Ridge on the item responses
# ----------------------------------------------------------------------------------------------
def _ridge_cv(X: np.ndarray, y, alphas) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Ridge of ``y`` on ``X`` ``(n, k)`` with its penalty chosen among ``alphas`` by RidgeCV's leave-one-out
    error; a missing cell counts as its item's mean (0 when the item has none). Returns ``(fill (k,),
    coef (k,), intercept, alpha)``."""
    from sklearn.linear_model import RidgeCV

    means = np.nanmean(X, axis=0) if X.shape[0] else np.zeros(X.shape[1])
    fill = np.where(np.isnan(means), 0.0, means)
    m = RidgeCV(alphas=[float(a) for a in alphas]).fit(np.where(np.isnan(X), fill, X), np.asarray(y, dtype=np.float64))
    return fill, np.asarray(m.coef_, dtype=np.float64), float(m.intercept_), float(m.alpha_)


class RidgeReconstructor(Reconstructor):
    """Full score = ``b + X w``: ridge regression on the chosen items' responses, pp.

    The penalty is chosen among ``alphas`` by efficient leave-one-out CV (scikit-learn's RidgeCV) on
    the training models. Missing cells are filled with the item's training mean (stored in the artifact).
    """

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
        obj.intercept_ = float(d["intercept"])
        obj.alpha_ = float(d["alpha"])
        obj.fill_ = np.asarray(d["fill"], dtype=np.float64)
        return obj


# ----------------------------------------------------------------------------------------------
# Ridge index, then a GAM on it (a single-index model)
# ----------------------------------------------------------------------------------------------
class RidgeGAMReconstructor(RidgeReconstructor):
    """Full score = g(b + X w): ridge on the chosen items' responses gives a linear index (pp), and a 1-D GAM
    ``g`` bends it where the full score is not linear in the items (floors and ceilings of the scale).

    ``w`` and ``b`` are :class:`RidgeReconstructor`'s (penalty by leave-one-out CV on the training models).
    ``g`` is fitted on *out-of-fold* indices (``folds``-fold cross-fitting of the ridge with the chosen
    penalty), so it learns how the index errs on models it was not fitted on rather than on in-sample
    predictions, which overfit when there are few models per item. ``g`` is stored as a
    :class:`Table1D` over the range of those indices (constant beyond it). Missing cells: as ridge.
    """

    kind = "ridge_gam"
    _domains = {**RidgeReconstructor._domains, "n_splines": Whole(4), "lam": Real(0.0), "folds": Whole(2),
                "seed": Whole(0)}

    def __init__(self, alphas=(0.01, 0.1, 1.0, 10.0, 100.0, 1000.0), n_splines: int = 20, lam: float = 5.0,
                 folds: int = 5, seed: int = 0):
        super().__init__(alphas)
        self.n_splines = n_splines
        self.lam = lam
        self.folds = folds
        self.seed = seed

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


# ----------------------------------------------------------------------------------------------
# Weighted mean (no fitting): tinyBenchmarks' anchor estimator
# ----------------------------------------------------------------------------------------------
class WeightedMeanReconstructor(Reconstructor):
    """Full score = ``100 * sum_j w_j x_j / sum_j w_j``: the anchor-weighted mean, pp. Nothing is fitted.

    It estimates the mean over the *pool*; where the target is a score over a larger benchmark (the
    metabench pools) it is biased by the difference, which the GAM variant corrects.
    """

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


def reconstructor_makers(names=RECONSTRUCTOR_CHOICES, n_splines: int = GAM_N_SPLINES, lam: float = GAM_LAM) -> dict[str, Callable[[], object]]:
    """Zero-argument factories, by label, for :func:`essence.reconstructors.choose.choose_on_validation`: ``"gam"`` (a
    :class:`GAMReconstructor` with ``n_splines`` and ``lam`` on the subset mean, the paper's), ``"ridge"``
    (:class:`RidgeReconstructor` on the items) and ``"ridge_gam"`` (:class:`RidgeGAMReconstructor`: ridge,
    then a GAM on its index). EssenceBench chooses among all three; ValueError names an unknown label."""
    names = tuple(names)
    unknown = [n for n in names if n not in RECONSTRUCTOR_CHOICES]
    if unknown or not names:
        raise InputError(f"reconstructors: {list(names)!r}; choose among 'gam', 'ridge' and 'ridge_gam'")
    makers = {"gam": lambda: GAMReconstructor(n_splines=n_splines, lam=lam), "ridge": RidgeReconstructor,
              "ridge_gam": RidgeGAMReconstructor}
    return {n: makers[n] for n in names}


# ----------------------------------------------------------------------------------------------
# Few-model reconstructors and the cross-validated choice
# ----------------------------------------------------------------------------------------------
class LineReconstructor(Reconstructor):
    """Full score = ``a + b * m``: a least-squares line on the subset score ``m`` (pp, plain mean of the
    chosen items). Two numbers to learn, so it holds with a handful of models; the baseline a user tries
    first ("random items + a straight line"). With one distinct ``m`` it predicts the mean target.
    """

    kind = "line"
    #: item weights of the subset score (None: the plain mean); the weighted subclass makes it a parameter
    weights = None

    def fit(self, X, y):
        X = check_X(X)
        y = np.asarray(y, dtype=np.float64)
        self.k_ = X.shape[1]
        m = subset_score(X, self.weights)
        if np.unique(m).size < 2:
            self.slope_, self.intercept_ = 0.0, float(y.mean())
        else:
            slope, icpt = np.polyfit(m, y, 1)
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
    """Full score = ``a + b * m + X w``: the :class:`LineReconstructor` on the subset score ``m`` plus a ridge
    on the chosen items' responses fitted to the line's residuals, i.e. item weights shrunk toward equal
    weights (the plain mean). The penalty is chosen among ``alphas`` by efficient leave-one-out CV
    (RidgeCV); the largest penalties give back the line, so with few models it degrades to the line
    rather than overfitting ``k`` weights. Missing cells: filled with the item's training mean (stored).
    """

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
    """Full score = ``a + b * m_w``: a least-squares line on the weighted subset score ``m_w`` (pp,
    ``100 * sum_j w_j x_j / sum_j w_j``, :func:`essence.reconstructors.simple.subset_score`).

    The anchor-weighted mean estimates the item pool's accuracy; the line maps it to the target (a whole
    benchmark of which the pool is a part, or another scale) with two numbers, so it holds with a handful
    of models. With one distinct ``m_w`` it predicts the mean target. ``X`` ``(n_models, k)``; pp out,
    clipped to [0, 100]. Fit, prediction and JSON are :class:`essence.reconstructors.simple.LineReconstructor`'s.
    """

    kind = "weighted_line"

    def __init__(self, weights=None):
        self.weights = weights
