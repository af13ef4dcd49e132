"""Reconstructors: from a model's results on the chosen items to its full-benchmark score.

Every reconstructor follows one contract (scikit-learn style):

* every reconstructor is a scikit-learn ``BaseEstimator``: ``__init__`` stores its parameters unchanged,
  ``get_params()`` returns them and ``sklearn.base.clone`` gives an unfitted copy; values are checked
  and converted in ``fit``;
* ``fit(X, y)`` with ``X`` ``(n_models, k)`` in [0, 1] (NaN = missing) and ``y`` ``(n_models,)`` in
  percentage points; returns ``self``;
* ``predict(X)`` returns ``(n_models,)`` estimates in percentage points, clipped to [0, 100];
* ``to_dict()`` gives the fitted state as plain JSON numbers (no pickle) and
  :func:`reconstructor_from_dict` rebuilds an object whose ``predict`` gives the same numbers.

Smooth 1-D functions fitted with pygam are exported as lookup tables on a fine grid
(:class:`~essence.reconstructors.tables.Table1D`), which also makes them cheap to evaluate on a whole GA population at
once. :data:`RECONSTRUCTOR_KINDS` names every kind an artifact can hold, including the methods' own.
"""

from __future__ import annotations

import importlib
from typing import Callable

import numpy as np
from sklearn.base import BaseEstimator

from ..data._io import jsonable
from ..data.checks import ListOf, OneOf, Real, Whole, check_params
from ..data.errors import InputError
from .tables import GAM_LAM, GAM_N_SPLINES, Table1D, fit_gam_table, round_list

__all__ = [
    "oof_predictions",
    "Table1D",
    "GAMReconstructor",
    "RidgeReconstructor",
    "RidgeGAMReconstructor",
    "WeightedMeanReconstructor",
    "fit_gam_table",
    "subset_score",
    "Reconstructor",
    "RECONSTRUCTOR_KINDS",
    "reconstructor_class",
    "reconstructor_from_dict",
    "choose_on_validation",
    "LineReconstructor",
    "MeanRidgeReconstructor",
    "choose_by_cv",
    "cv_rmse",
    "fit_reconstructor",
]

#: Every reconstructor kind an artifact can name -> ``"module:Class"``. A static table, resolved with
#: importlib when an artifact is loaded, so this module imports no method module (methods sit above it).
RECONSTRUCTOR_KINDS: dict[str, str] = {
    "gam": "essence.reconstructors.simple:GAMReconstructor",
    "ridge": "essence.reconstructors.simple:RidgeReconstructor",
    "ridge_gam": "essence.reconstructors.simple:RidgeGAMReconstructor",
    "weighted_mean": "essence.reconstructors.simple:WeightedMeanReconstructor",
    "weighted_line": "essence.methods.kmeans:WeightedLineReconstructor",
    "irt_gam": "essence.methods.irt:IRTGAMReconstructor",
    "gpirt": "essence.methods.tinybench:GPIRTReconstructor",
    "signature_knn": "essence.methods.disco:SignatureKNNReconstructor",
    "line": "essence.reconstructors.simple:LineReconstructor",
    "mean_ridge": "essence.reconstructors.simple:MeanRidgeReconstructor",
    "latent": "essence.reconstructors.ensemble:LatentReconstructor",
    "mlp": "essence.reconstructors.ensemble:MLPReconstructor",
    "kernel": "essence.reconstructors.kernel:KernelReconstructor",
    "boost": "essence.reconstructors.boost:BoostReconstructor",
    "average": "essence.reconstructors.ensemble:AverageReconstructor",
    "columns": "essence.reconstructors.ensemble:ColumnsReconstructor",
}


def reconstructor_class(kind: str) -> type:
    """The class registered under ``kind`` in :data:`RECONSTRUCTOR_KINDS`; InputError naming the known kinds."""
    if kind not in RECONSTRUCTOR_KINDS:
        raise InputError(f"reconstructor: unknown kind {kind!r}; known kinds: {', '.join(sorted(RECONSTRUCTOR_KINDS))}")
    module, name = RECONSTRUCTOR_KINDS[kind].split(":")
    return getattr(importlib.import_module(module), name)


def reconstructor_from_dict(d: dict):
    """Rebuild a fitted reconstructor from :meth:`to_dict` output."""
    return reconstructor_class(d.get("kind")).from_dict(d)


def subset_score(X: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Score on the chosen items, pp: ``100 * weighted nanmean(X, axis=1)``; ``X`` is ``(n_models, k)``.

    Missing cells are left out of the mean (and their weight with them). A model with no result on any
    chosen item raises ValueError.
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise InputError(f"X: expected (n_models, k), got shape {X.shape}")
    w = np.ones(X.shape[1]) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != (X.shape[1],) or not np.isfinite(w).all() or (w < 0).any() or not w.sum() > 0:
        raise InputError(f"weights: must be {X.shape[1]} finite numbers >= 0 (one per chosen item), not all zero; got "
                         f"{w.size} with min {w.min() if w.size else float('nan'):g} and sum {w.sum():g}")
    obs = ~np.isnan(X)
    den = obs.astype(np.float64) @ w
    if (den <= 0).any():
        bad = np.flatnonzero(den <= 0)
        raise InputError(f"X: {bad.size} model(s) (rows {bad[:5].tolist()}) have no result on any chosen item")
    return 100.0 * (np.where(obs, X, 0.0) @ w) / den


def _check_X(X, k: int | None = None) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise InputError(f"X: expected (n_models, k), got shape {X.shape}")
    if k is not None and X.shape[1] != k:
        raise InputError(f"X: {X.shape[1]} columns, but the reconstructor was fitted on {k} items")
    return X


class Reconstructor(BaseEstimator):
    """Base of every reconstructor: scikit-learn's parameter handling plus the artifact helpers.

    ``kind`` names the class in :data:`RECONSTRUCTOR_KINDS`; :meth:`params_dict` is ``get_params()`` as
    plain JSON values (what ``to_dict`` stores under ``"params"`` and ``from_dict`` passes back).
    """

    kind = "base"

    def params_dict(self) -> dict:
        """The constructor parameters as JSON values (tuples and arrays become lists)."""
        return jsonable(self.get_params(deep=False))


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

    Parameters: ``n_splines`` and ``lam`` of the spline term; optional item ``weights`` ``(k,)`` (e.g.
    K-Means cluster shares); uniform weights give the plain subset accuracy. ``extrapolate``: beyond the
    fitted models' range of subset scores, ``"gam"`` (default) follows the spline's own end slope;
    ``"line"`` (opt-in) continues from the spline's value at the range's end with the slope of the
    least-squares line over all fitted models. The end slope rests on the last few models: on
    alpaca_eval2 (44 systems) three graded systems above 40 % bent it to 1.9 pp per pp, and two test
    systems above the training range were over-estimated by 10-13 pp.
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
        X = _check_X(X)
        self.k_ = X.shape[1]
        s = subset_score(X, self.weights)
        self.table_ = fit_gam_table(s, y, self.n_splines, self.lam)
        if self.extrapolate == "line" and np.unique(s).size >= 2:
            self.table_ = _line_beyond(self.table_, s, np.asarray(y, dtype=np.float64))
        return self

    def predict(self, X) -> np.ndarray:
        X = _check_X(X, self.k_)
        return np.clip(self.table_(subset_score(X, self.weights)), 0.0, 100.0)

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
        X = _check_X(X)
        self.k_ = X.shape[1]
        self.fill_, self.coef_, self.intercept_, self.alpha_ = _ridge_cv(X, y, self.alphas)
        return self

    def predict(self, X) -> np.ndarray:
        X = _check_X(X, self.k_)
        Xf = np.where(np.isnan(X), self.fill_, X)
        return np.clip(Xf @ self.coef_ + self.intercept_, 0.0, 100.0)

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
        X = _check_X(X)
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

    def predict(self, X) -> np.ndarray:
        X = _check_X(X, self.k_)
        Xf = np.where(np.isnan(X), self.fill_, X)
        return np.clip(self.table_(Xf @ self.coef_ + self.intercept_), 0.0, 100.0)

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
        self.k_ = _check_X(X).shape[1]
        return self

    def predict(self, X) -> np.ndarray:
        return np.clip(subset_score(_check_X(X, self.k_), self.weights), 0.0, 100.0)

    def to_dict(self) -> dict:
        return {"kind": self.kind, "params": self.params_dict(), "k": self.k_}

    @classmethod
    def from_dict(cls, d: dict):
        obj = cls(**d["params"])
        obj.k_ = int(d["k"])
        return obj


RECONSTRUCTOR_CHOICES = ("gam", "ridge", "ridge_gam")


def reconstructor_makers(names=RECONSTRUCTOR_CHOICES, n_splines: int = GAM_N_SPLINES, lam: float = GAM_LAM) -> dict[str, Callable[[], object]]:
    """Zero-argument factories, by label, for :func:`choose_on_validation`: ``"gam"`` (a
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


def choose_on_validation(candidates: dict[str, Callable[[], object]], X_train, y_train, X_val, y_val):
    """Fit each candidate reconstructor on training models and keep the one with the lowest validation RMSE.

    ``candidates`` maps a label to a zero-argument factory. Returns ``(label, fitted, val_rmse_by_label)``.
    A candidate whose fit fails is skipped (its error is recorded); ValueError if all fail.
    """
    from ..data.metrics import rmse

    scores: dict[str, float | str] = {}
    best = None
    for label, make in candidates.items():
        try:
            rec = make().fit(X_train, y_train)
            err = rmse(y_val, rec.predict(X_val))
        except (ValueError, np.linalg.LinAlgError) as exc:
            scores[label] = f"failed: {exc}"
            continue
        scores[label] = err
        if best is None or err < best[2]:
            best = (label, rec, err)
    if best is None:
        raise InputError(f"no reconstructor could be fitted: {scores}")
    return best[0], best[1], scores


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
        X = _check_X(X)
        y = np.asarray(y, dtype=np.float64)
        self.k_ = X.shape[1]
        m = subset_score(X, self.weights)
        if np.unique(m).size < 2:
            self.slope_, self.intercept_ = 0.0, float(y.mean())
        else:
            slope, icpt = np.polyfit(m, y, 1)
            self.slope_, self.intercept_ = float(slope), float(icpt)
        return self

    def predict(self, X) -> np.ndarray:
        X = _check_X(X, self.k_)
        return np.clip(self.intercept_ + self.slope_ * subset_score(X, self.weights), 0.0, 100.0)

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
        X = _check_X(X)
        y = np.asarray(y, dtype=np.float64)
        self.line_ = LineReconstructor().fit(X, y)
        self.k_ = X.shape[1]
        resid = y - (self.line_.intercept_ + self.line_.slope_ * subset_score(X))
        self.fill_, self.coef_, self.intercept_, self.alpha_ = _ridge_cv(X, resid, self.alphas)
        return self

    def predict(self, X) -> np.ndarray:
        X = _check_X(X, self.k_)
        base = self.line_.intercept_ + self.line_.slope_ * subset_score(X)
        return np.clip(base + np.where(np.isnan(X), self.fill_, X) @ self.coef_ + self.intercept_, 0.0, 100.0)

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


def model_folds(n: int, folds: int = 5, seed: int = 0) -> np.ndarray:
    """Fold label ``(n,)`` of each of ``n`` models for K-fold CV (``min(folds, n)`` folds, seeded, balanced)."""
    if n < 2:
        raise InputError(f"cross-validation needs at least 2 models, got {n}")
    f = max(2, min(int(folds), n))
    return np.random.default_rng(seed).permutation(n) % f


def fit_reconstructor(rec, X, y, R=None):
    """``rec.fit(X, y)``, or ``rec.fit(X, y, R=R)`` for a kind that says ``needs_pool`` (it models the
    training models' answers on every pool item: ``R`` ``(n, n_pool)``, the same rows as ``X``). Returns
    the fitted ``rec``; InputError when such a kind gets no ``R``."""
    if getattr(rec, "needs_pool", False):
        if R is None:
            raise InputError(f"{rec.kind}: needs the training models' answers on every pool item (R)")
        return rec.fit(X, y, R=R)
    return rec.fit(X, y)


def oof_predictions(make: Callable[[], object], X, y, folds: int = 5, seed: int = 0, R=None) -> np.ndarray:
    """Out-of-fold predictions ``(n,)`` pp of one reconstructor factory: each fold of
    ``model_folds(n, folds, seed)`` is predicted by ``make()`` fitted on the other folds.

    ``X`` ``(n, k)``, ``y`` ``(n,)`` pp, ``R`` ``(n, n_pool)`` or None (see :func:`fit_reconstructor`). The
    cross-fitting behind :func:`cv_rmse`, the averages of :func:`essence.reconstructors.ensemble.choose_average_by_cv` and
    ``auto``'s paired comparisons: the same folds for every candidate.
    """
    X = _check_X(X)
    y = np.asarray(y, dtype=np.float64)
    lab = model_folds(len(y), folds, seed)
    pred = np.empty(len(y))
    for f in np.unique(lab):
        te = lab == f
        pred[te] = fit_reconstructor(make(), X[~te], y[~te], None if R is None else R[~te]).predict(X[te])
    return pred


def cv_rmse(make: Callable[[], object], X, y, folds: int = 5, seed: int = 0, R=None) -> tuple[float, list[float]]:
    """K-fold CV over models of one reconstructor factory: ``(pooled out-of-fold RMSE, per-fold RMSEs)``, pp,
    from :func:`oof_predictions` (same arguments)."""
    y = np.asarray(y, dtype=np.float64)
    pred = oof_predictions(make, X, y, folds, seed, R)
    lab = model_folds(len(y), folds, seed)
    per = [float(np.sqrt(np.mean((pred[lab == f] - y[lab == f]) ** 2))) for f in np.unique(lab)]
    return float(np.sqrt(np.mean((pred - y) ** 2))), per


def choose_by_cv(candidates: dict[str, Callable[[], object]], X, y, folds: int = 5, seed: int = 0, R=None):
    """Choose a reconstructor by K-fold cross-validation over *all* the given models, then refit it on them.

    With 20-70 models a validation set of 2-7 models cannot tell candidates apart (its RMSE is noise);
    every model serves once as held-out here. ``candidates`` maps a label to a zero-argument factory;
    ``X`` ``(n, k)``, ``y`` ``(n,)`` pp (typically training + validation models), ``R`` their answers on
    every pool item (or None; :func:`fit_reconstructor`). Returns
    ``(label, fitted_on_all, scores)`` with ``scores[label]`` the pooled out-of-fold RMSE (pp) or
    ``"failed: ..."``; ties go to the earlier label. The per-fold RMSEs of the choice are in
    ``fitted_on_all.cv_folds_`` (pp). InputError if every candidate fails.
    """
    scores: dict[str, float | str] = {}
    best = None
    for label, make in candidates.items():
        try:
            err, per = cv_rmse(make, X, y, folds, seed, R)
        except (ValueError, np.linalg.LinAlgError) as exc:
            scores[label] = f"failed: {exc}"
            continue
        if not np.isfinite(err):
            scores[label] = "failed: non-finite predictions"
            continue
        scores[label] = err
        if best is None or err < best[1]:
            best = (label, err, per)
    if best is None:
        raise InputError(f"no reconstructor could be fitted: {scores}")
    rec = fit_reconstructor(candidates[best[0]](), X, y, R)
    rec.cv_folds_ = best[2]
    return best[0], rec, scores
