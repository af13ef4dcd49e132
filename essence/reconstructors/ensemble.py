"""Stronger predictors: a latent-factor model of the whole pool and a small neural network on the chosen items.

Two reconstructor kinds that follow the contract of :mod:`essence.reconstructors.simple` (``fit``/``predict`` in pp,
``to_dict``/``from_dict`` as plain JSON numbers) and join every method's cross-validated choice when there
are enough models (:func:`pool_candidates`):

* ``latent`` (:class:`LatentReconstructor`): a rank-``r`` factor model of the training models' **full**
  answers ``R`` ``(n_models, n_pool)`` (probabilistic PCA on the item-centred matrix: item means ``mu``,
  loadings ``A`` ``(n_pool, r)``, per-item residual variances ``psi``). A new model's latent ability
  ``theta`` ``(r,)`` is the posterior mean from its answers on the chosen items; each unseen pool item is
  predicted as ``mu_j + A_j . theta``; the pool score is the mean of observed and predicted answers, and a
  least-squares line on that pool score and on the target's own prediction (the target joins the factor
  model as one more column, ``mu_y + A_y . theta``), fitted on cross-fitted values, gives the estimate. ``r`` is chosen by K-fold CV over the
  training models. The prediction is linear in ``theta``, so the artifact stores the chosen items'
  ``mu``, ``A``, ``psi`` and only the *sums* of ``mu`` and ``A`` over the other pool items: ``k (r + 2) + 2 r + 8``
  numbers, whatever the pool size (14,000 items cost nothing more).
* ``mlp`` (:class:`MLPReconstructor`): scikit-learn's ``MLPRegressor`` (one tanh hidden layer, L-BFGS,
  L2 penalty) on the chosen items' answers, the target standardised; the artifact stores the weights and
  :meth:`MLPReconstructor.predict` is its own forward pass (no pickle).

The latent model needs the training models' full answers at fit time: such a reconstructor says
``needs_pool = True`` and is fitted as ``fit(X, y, R=R)`` (``R`` the same models' answers on every pool
item); :func:`essence.reconstructors.simple.fit_reconstructor` is the one place that decides how to call ``fit``.
"""

from __future__ import annotations

import numpy as np

from ..data.checks import ListOf, Real, Whole, check_params
from ..data.errors import InputError
from .simple import Reconstructor, _check_X, model_folds, oof_predictions

__all__ = ["LatentReconstructor", "MLPReconstructor", "pool_candidates", "MIN_MODELS_LATENT", "MIN_MODELS_MLP",
           "factor_model", "AverageReconstructor", "ColumnsReconstructor", "choose_average_by_cv", "oof_predictions",
           "WithExtraModels", "greedy_ensemble", "best_equal_average", "combine_oof", "COMBINES",
           "GREEDY_STEPS"]

#: fewest non-test models for the candidates of :func:`pool_candidates`. Measured with
#: ``benchmarks/predictors.py --models 50 100 300 1000 --datasets arc gsm8k --seeds 0 1`` (50 random items,
#: test RMSE in pp, mean of 2 seeds): the MLP is clearly worse than mean_ridge with 50 models (arc 2.98 vs
#: 2.62, gsm8k 4.71 vs 4.13) and 100 on gsm8k (4.22 vs 3.95), level on arc from 100 on, still 0.1-0.2 worse on
#: gsm8k at 300-1000, and better or level on every metabench pool with all ~3,000 (README, "Stronger predictors"); from
#: 300 on the CV choice decides. The latent model is within 0.1 pp of mean_ridge at every count (rarely
#: better): offered from 100, where its inner CV over ranks has models enough. Below these an extra
#: candidate only adds fit time and a chance to win by CV noise.
MIN_MODELS_LATENT = 100
MIN_MODELS_MLP = 300

_DIGITS = 10  # decimals kept in the artifact; predictions are made from the rounded numbers


def _rounded(a) -> np.ndarray:
    return np.round(np.asarray(a, dtype=np.float64), _DIGITS)


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
        X = _check_X(X)
        y = np.asarray(y, dtype=np.float64)
        if R is None:
            raise InputError("latent: fit needs R, the training models' answers on every pool item "
                             "(fit(X, y, R=R)); use essence.reconstructors.simple.fit_reconstructor")
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
        return self._features(_check_X(X, self.k_), self.state_)[:, 0]

    def predict(self, X) -> np.ndarray:
        F = self._features(_check_X(X, self.k_), self.state_)
        return np.clip(self.coef_[0] + F @ self.coef_[1:], 0.0, 100.0)

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


# ----------------------------------------------------------------------------------------------
# A small neural network on the chosen items
# ----------------------------------------------------------------------------------------------
class MLPReconstructor(Reconstructor):
    """Full score = ``ybar + sd * (tanh(x W1 + b1) W2 + b2)``: a one-hidden-layer network on the chosen items.

    Parameters
    ----------
    hidden : int, default 16
        Units of the hidden layer (tanh).
    alpha : float, default 1.0
        L2 penalty (scikit-learn's ``MLPRegressor(alpha=...)``).
    max_iter, seed : default 500, 0
        L-BFGS iterations and the seed of the initial weights.

    ``X`` ``(n, k)`` in [0, 1] (a missing cell counts as its item's training mean, stored), ``y`` pp; the
    target is standardised for the fit. Predictions use the stored (rounded) weights.
    """

    kind = "mlp"
    _domains = {"hidden": Whole(1), "alpha": Real(0.0), "max_iter": Whole(1), "seed": Whole(0)}

    def __init__(self, hidden: int = 16, alpha: float = 1.0, max_iter: int = 500, seed: int = 0):
        self.hidden = hidden
        self.alpha = alpha
        self.max_iter = max_iter
        self.seed = seed

    def fit(self, X, y):
        import warnings

        from sklearn.exceptions import ConvergenceWarning
        from sklearn.neural_network import MLPRegressor

        check_params(self)
        X = _check_X(X)
        y = np.asarray(y, dtype=np.float64)
        self.k_ = X.shape[1]
        means = np.nanmean(X, axis=0) if X.shape[0] else np.zeros(self.k_)
        self.fill_ = _rounded(np.where(np.isnan(means), 0.0, means))
        self.y_mean_ = float(np.round(y.mean(), _DIGITS))
        self.y_sd_ = float(np.round(y.std() if y.std() > 0 else 1.0, _DIGITS))
        net = MLPRegressor(hidden_layer_sizes=(int(self.hidden),), activation="tanh", solver="lbfgs",
                           alpha=float(self.alpha), max_iter=int(self.max_iter), random_state=int(self.seed))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            net.fit(np.where(np.isnan(X), self.fill_, X), (y - self.y_mean_) / self.y_sd_)
        self.W1_, self.W2_ = _rounded(net.coefs_[0]), _rounded(net.coefs_[1][:, 0])
        self.b1_, self.b2_ = _rounded(net.intercepts_[0]), float(_rounded(net.intercepts_[1][0]))
        return self

    def predict(self, X) -> np.ndarray:
        X = _check_X(X, self.k_)
        h = np.tanh(np.where(np.isnan(X), self.fill_, X) @ self.W1_ + self.b1_)
        return np.clip(self.y_mean_ + self.y_sd_ * (h @ self.W2_ + self.b2_), 0.0, 100.0)

    def to_dict(self) -> dict:
        return {"kind": self.kind, "params": self.params_dict(), "k": self.k_, "fill": self.fill_.tolist(),
                "W1": self.W1_.ravel().tolist(), "b1": self.b1_.tolist(), "W2": self.W2_.tolist(), "b2": self.b2_,
                "y_mean": self.y_mean_, "y_sd": self.y_sd_}

    @classmethod
    def from_dict(cls, d: dict):
        obj = cls(**d["params"])
        obj.k_ = int(d["k"])
        f = lambda v: np.asarray(v, dtype=np.float64)  # noqa: E731
        obj.fill_, obj.b1_, obj.W2_ = f(d["fill"]), f(d["b1"]), f(d["W2"])
        obj.W1_ = f(d["W1"]).reshape(obj.k_, -1)
        obj.b2_, obj.y_mean_, obj.y_sd_ = float(d["b2"]), float(d["y_mean"]), float(d["y_sd"])
        return obj


def pool_candidates(items, n_models: int, seed: int = 0) -> dict:
    """The stronger candidates for a method's CV choice, by label -> zero-argument factory: ``latent`` with
    at least :data:`MIN_MODELS_LATENT` non-test models, ``mlp`` with at least :data:`MIN_MODELS_MLP`.
    ``items`` ``(k,)``: the chosen items' positions in the pool."""
    items = [int(i) for i in np.asarray(items).ravel()]
    out = {}
    if n_models >= MIN_MODELS_LATENT:
        out["latent"] = lambda: LatentReconstructor(items, seed=seed)
    if n_models >= MIN_MODELS_MLP:
        out["mlp"] = lambda: MLPReconstructor(seed=seed)
    return out


# ----------------------------------------------------------------------------------------------
# A reconstructor on some of the chosen items only
# ----------------------------------------------------------------------------------------------
class ColumnsReconstructor(Reconstructor):
    """Full score from a subset of the chosen items: ``part`` fitted and applied on ``X[:, columns]``.

    Parameters
    ----------
    columns : list of int
        Positions (0-based, distinct) into the ``k`` chosen items that the inner reconstructor reads; in a
        suite, a member's *own* chosen items (:func:`essence.suite.artifact.own_candidates`), so the CV can
        fall back to what a separate artifact fits where the other members' items add noise.
    part : {"kind": str, "params": dict}
        The inner kind (any of :data:`essence.reconstructors.simple.RECONSTRUCTOR_KINDS` except ``columns`` and
        ``average``) and its constructor parameters. A kind that needs the pool gets ``R`` unchanged.

    The artifact stores the inner reconstructor's own JSON under ``"fitted"``.
    """

    kind = "columns"

    def __init__(self, columns=(), part=None):
        self.columns = columns
        self.part = part

    def _spec(self) -> tuple[np.ndarray, dict]:
        cols, part = self.columns, self.part
        if (not isinstance(cols, (list, tuple, np.ndarray)) or len(cols) == 0
                or any(isinstance(c, bool) or int(c) != c or c < 0 for c in cols) or len(set(cols)) != len(cols)):
            raise InputError(f"columns: expected a non-empty list of distinct item positions >= 0, got {cols!r}")
        if not isinstance(part, dict) or not isinstance(part.get("kind"), str):
            raise InputError(f"columns: part must be {{'kind': ..., 'params': {{...}}}}, got {part!r}")
        if part["kind"] in (self.kind, "average"):
            raise InputError(f"columns: the inner kind cannot be {part['kind']!r}; name a single kind")
        return np.asarray(cols, dtype=np.intp), part

    @property
    def needs_pool(self) -> bool:
        from .simple import reconstructor_class

        return bool(getattr(reconstructor_class(self._spec()[1]["kind"]), "needs_pool", False))

    def fit(self, X, y, R=None):
        from .simple import fit_reconstructor, reconstructor_class

        X = _check_X(X)
        cols, part = self._spec()
        if cols.max() >= X.shape[1]:
            raise InputError(f"columns: position {int(cols.max())} is beyond the {X.shape[1]} chosen items")
        self.k_, self.columns_ = X.shape[1], cols
        self.part_ = fit_reconstructor(reconstructor_class(part["kind"])(**dict(part.get("params") or {})),
                                       X[:, cols], y, R)
        return self

    def predict(self, X) -> np.ndarray:
        X = _check_X(X, self.k_)
        return np.asarray(self.part_.predict(X[:, self.columns_]), dtype=np.float64)

    def to_dict(self) -> dict:
        return {"kind": self.kind, "params": self.params_dict(), "k": self.k_, "fitted": self.part_.to_dict()}

    @classmethod
    def from_dict(cls, d: dict):
        from .simple import reconstructor_from_dict

        obj = cls(**d["params"])
        cols, _ = obj._spec()
        obj.k_, obj.columns_ = int(d["k"]), cols
        if cols.max() >= obj.k_:
            raise InputError(f"columns: position {int(cols.max())} is beyond the {obj.k_} chosen items")
        if not isinstance(d.get("fitted"), dict):
            raise InputError("columns: 'fitted' must hold the fitted inner reconstructor")
        obj.part_ = reconstructor_from_dict(d["fitted"])
        return obj


# ----------------------------------------------------------------------------------------------
# An average of several kinds, chosen by the same cross-validation
# ----------------------------------------------------------------------------------------------
def _part_spec(rec) -> dict:
    return {"kind": rec.kind, "params": rec.params_dict()}


#: How :func:`choose_average_by_cv` combines candidates: ``equal`` (the best unweighted average of a few) or
#: ``greedy`` (a weighted greedy ensemble, :func:`greedy_ensemble`).
COMBINES = ("equal", "greedy")
#: The greedy ensemble's steps: its weights are multiples of 1 / GREEDY_STEPS.
GREEDY_STEPS = 20


class AverageReconstructor(Reconstructor):
    """Full score = the mean of several reconstructors' estimates (each clipped to [0, 100]), unweighted or
    weighted.

    Parameters
    ----------
    parts : list of {"kind": str, "params": dict}
        The kinds averaged (any of :data:`essence.reconstructors.simple.RECONSTRUCTOR_KINDS` except ``average``) with
        their constructor parameters; each is fitted on the same ``X``, ``y`` (and ``R`` when it needs the
        pool). Chosen by :func:`choose_average_by_cv`.
    part_weights : list of float, optional
        One non-negative weight per part, summing to 1 (the greedy ensemble of :func:`choose_average_by_cv`);
        None (as in every artifact written before weights existed): the unweighted mean.

    The artifact stores every fitted part's own JSON under ``"fitted"``.
    """

    kind = "average"

    def __init__(self, parts=(), part_weights=None):
        self.parts = parts
        self.part_weights = part_weights

    @property
    def needs_pool(self) -> bool:
        from .simple import reconstructor_class

        return any(bool(getattr(reconstructor_class(p["kind"])(**dict(p.get("params") or {})), "needs_pool", False))
                   for p in self._specs())

    def _specs(self) -> list:
        parts = self.parts
        if (not isinstance(parts, (list, tuple)) or not parts
                or any(not isinstance(p, dict) or not isinstance(p.get("kind"), str) for p in parts)):
            raise InputError(f"average: parts must be a non-empty list of {{'kind': ..., 'params': {{...}}}}, got {parts!r}")
        bad = [p["kind"] for p in parts if p["kind"] == self.kind]
        if bad:
            raise InputError("average: a part cannot itself be an average; list the kinds to average")
        self._weights(len(parts))
        return list(parts)

    def _weights(self, n: int) -> np.ndarray:
        """``(n,)`` the parts' weights (equal when ``part_weights`` is None); InputError unless one finite,
        non-negative weight per part, summing to 1."""
        if self.part_weights is None:
            return np.full(n, 1.0 / n)
        try:
            w = np.asarray(self.part_weights, dtype=np.float64)
        except (TypeError, ValueError):
            w = np.array([np.nan])
        if w.shape != (n,) or not np.isfinite(w).all() or (w < 0).any() or abs(w.sum() - 1.0) > 1e-6:
            raise InputError(f"average: part_weights must be {n} non-negative numbers (one per part) summing to 1, "
                             f"got {self.part_weights!r}; leave them out for the unweighted mean")
        return w

    def fit(self, X, y, R=None):
        from .simple import fit_reconstructor, reconstructor_class

        X = _check_X(X)
        self.k_ = X.shape[1]
        self.parts_ = [fit_reconstructor(reconstructor_class(p["kind"])(**dict(p.get("params") or {})), X, y, R)
                       for p in self._specs()]
        return self

    @classmethod
    def of_fitted(cls, fitted, k: int, part_weights=None):
        """The average of reconstructors already fitted on the same ``k`` chosen items (each as its factory
        made it, e.g. with extra training models, :class:`WithExtraModels`); for plain kinds the same as
        ``fit`` on their specs. ``part_weights``: as the constructor's (None: unweighted)."""
        obj = cls([_part_spec(p) for p in fitted], None if part_weights is None else [float(w) for w in part_weights])
        obj._specs()
        obj.parts_, obj.k_ = list(fitted), int(k)
        return obj

    def predict(self, X) -> np.ndarray:
        X = _check_X(X, self.k_)
        preds = np.array([np.asarray(p.predict(X), dtype=np.float64) for p in self.parts_])
        if self.part_weights is None:
            return preds.mean(axis=0)
        return self._weights(len(self.parts_)) @ preds

    def to_dict(self) -> dict:
        return {"kind": self.kind, "params": self.params_dict(), "k": self.k_,
                "fitted": [p.to_dict() for p in self.parts_]}

    @classmethod
    def from_dict(cls, d: dict):
        from .simple import reconstructor_from_dict

        obj = cls(**d["params"])
        obj._specs()
        obj.k_ = int(d["k"])
        if not isinstance(d.get("fitted"), list) or len(d["fitted"]) != len(obj.parts):
            raise InputError("average: 'fitted' must hold one fitted reconstructor per part")
        obj.parts_ = [reconstructor_from_dict(p) for p in d["fitted"]]
        return obj


class WithExtraModels:
    """A reconstructor fitted on the models it is given *plus* fixed extra training models.

    ``inner``: an unfitted reconstructor (a kind that does not need the pool); ``X_extra`` ``(m, k)`` the extra
    models' answers on the same chosen items (NaN = missing), ``y_extra`` ``(m,)`` their full scores, pp.
    ``fit(X, y)`` fits a copy of ``inner`` on the rows of ``X`` and ``X_extra`` together; everything else is
    that fitted copy's, so the artifact stores the fitted inner kind alone. In a suite the extra models are a
    member's models that lack another member (:meth:`essence.suite.data.Suite.outside_rows`): cross-validation
    folds hold out only the given models, so a CV score stays one on models the fit did not see.

    ``impute``: None (the inner kind handles the missing cells itself, as ``boost`` does), or the column
    blocks (a suite: each member's chosen items) whose all-missing cells are filled, at each fit, with their
    conditional mean given the row's other blocks, fitted on the given models only
    (:func:`essence.reconstructors.impute.impute_blocks`). ``tune_on_given``: the inner kind chooses its settings on the
    given models alone (``inner.fit``, then ``inner.tuned()``: an unfitted copy fixed to the choice), and
    that copy is fitted on the given plus the extra models: the choice stays one made on the models the
    CV folds hold out, and the big fit is a single solve (``kernel``). A ``kernel`` inner stores its
    training rows, so its artifact then holds the extra models' (imputed) answers on the chosen items too.
    """

    def __init__(self, inner, X_extra, y_extra, impute=None, tune_on_given: bool = False):
        if getattr(inner, "needs_pool", False):
            raise InputError(f"{inner.kind}: a kind that reads the whole pool cannot take extra models")
        if tune_on_given and not hasattr(inner, "tuned"):
            raise InputError(f"{inner.kind}: tune_on_given needs a kind that can fix its choice (kernel)")
        self.inner = inner
        self.X_extra = np.asarray(X_extra, dtype=np.float64)
        self.y_extra = np.asarray(y_extra, dtype=np.float64)
        self.impute = impute
        self.tune_on_given = bool(tune_on_given)
        if self.X_extra.ndim != 2 or self.y_extra.shape != (self.X_extra.shape[0],):
            raise InputError(f"extra models: answers {self.X_extra.shape} and scores {self.y_extra.shape} do not "
                             "match; give (m, k) and (m,)")
        if not np.isfinite(self.y_extra).all():
            raise InputError("extra models: every extra model needs a finite full score")

    kind = property(lambda self: self.inner.kind)
    needs_pool = False

    def params_dict(self) -> dict:
        return getattr(self, "fitted_", self.inner).params_dict()

    def fit(self, X, y):
        import copy

        from .impute import impute_blocks

        X = _check_X(X)
        y = np.asarray(y, dtype=np.float64)
        if self.X_extra.shape[1] != X.shape[1]:
            raise InputError(f"extra models: answers on {self.X_extra.shape[1]} items, the models on {X.shape[1]}")
        Xe = self.X_extra if self.impute is None else impute_blocks(X, self.X_extra, self.impute)
        inner = copy.deepcopy(self.inner)
        if self.tune_on_given:
            inner = inner.fit(X, y).tuned()
        self.fitted_ = inner.fit(np.vstack([X, Xe]), np.r_[y, self.y_extra])
        return self

    def predict(self, X) -> np.ndarray:
        return self.fitted_.predict(X)

    def to_dict(self) -> dict:
        return self.fitted_.to_dict()


def greedy_ensemble(oof: dict, y, steps: int = GREEDY_STEPS) -> dict:
    """Weights of a greedy ensemble (forward selection with replacement, Caruana et al. 2004) on out-of-fold
    predictions: ``steps`` times, add the candidate whose addition gives the lowest RMSE of the running
    (equally weighted) sum; a candidate may be added again. ``oof`` label -> ``(n,)`` pp, ``y`` ``(n,)`` pp.
    Returns label -> weight (the times chosen / ``steps``), for the labels chosen at least once, in the order
    of ``oof``; ties go to the earlier label."""
    y = np.asarray(y, dtype=np.float64)
    labels = list(oof)
    P = np.array([oof[c] for c in labels], dtype=np.float64)
    counts = np.zeros(len(labels), dtype=int)
    total = np.zeros_like(y)
    for t in range(int(steps)):
        err = np.sqrt(np.mean(((total[None, :] + P) / (t + 1) - y[None, :]) ** 2, axis=1))
        j = int(np.argmin(err))
        counts[j] += 1
        total += P[j]
    return {c: counts[i] / int(steps) for i, c in enumerate(labels) if counts[i]}


def best_equal_average(oof: dict, y, max_parts: int = 3) -> tuple:
    """The labels of the unweighted average of 1..``max_parts`` distinct candidates whose averaged out-of-fold
    predictions (``oof`` label -> ``(n,)`` pp) have the lowest RMSE against ``y`` ``(n,)`` pp; ties go to
    fewer parts, then the earlier labels (in the order of ``oof``)."""
    from itertools import combinations

    y = np.asarray(y, dtype=np.float64)
    best = None
    for m in range(1, min(int(max_parts), len(oof)) + 1):
        for combo in combinations(list(oof), m):
            err = float(np.sqrt(np.mean((np.mean([oof[c] for c in combo], axis=0) - y) ** 2)))
            if best is None or err < best[1] - 1e-12:
                best = (combo, err)
    return best[0]


def combine_oof(oof: dict, y, combine: str = "equal", max_parts: int = 3, steps: int = GREEDY_STEPS) -> dict:
    """label -> weight of the candidates :func:`choose_average_by_cv` combines, from their out-of-fold
    predictions ``oof`` (label -> ``(n,)`` pp) and the targets ``y`` ``(n,)`` pp: ``"equal"`` weights
    :func:`best_equal_average`'s parts alike, ``"greedy"`` is :func:`greedy_ensemble` over ``steps`` steps.
    Labels in the order of ``oof``."""
    if combine == "greedy":
        return greedy_ensemble(oof, y, steps)
    if combine != "equal":
        raise InputError(f"combine: {combine!r} is not one of {', '.join(COMBINES)}")
    combo = best_equal_average(oof, y, max_parts)
    return {c: 1.0 / len(combo) for c in combo}


def choose_average_by_cv(candidates: dict, X, y, folds: int = 5, seed: int = 0, R=None, max_parts: int = 3,
                         seconds: dict | None = None, combine: str = "equal", steps: int = GREEDY_STEPS):
    """Choose a reconstructor, or an average of up to ``max_parts`` distinct candidates, by K-fold CV.

    Every candidate (label -> zero-argument factory) is cross-fitted once on the same folds. ``combine``
    ``"equal"``: the single candidates and every average of 2..``max_parts`` of them are scored by the RMSE of
    their averaged out-of-fold predictions, and the lowest wins (ties: fewer parts, then the earlier labels).
    ``"greedy"``: a weighted average by :func:`greedy_ensemble` over ``steps`` steps (``max_parts`` is not
    used; weights in multiples of 1 / ``steps``). The winner is refitted on all models. Returns ``(label,
    fitted, scores, oof (n,))``: ``label`` ``"a+b"`` for an average (its parts in the order of
    ``candidates``); ``scores`` every single candidate's out-of-fold RMSE (or ``"failed: ..."``) and the
    winner's; ``oof`` the winner's out-of-fold predictions (for its interval; the greedy weights were chosen
    on them too, so its CV score is a little optimistic, as the equal choice among averages is).
    InputError if every candidate fails, or for an unknown ``combine``. ``seconds``: a dict to receive each
    candidate's cross-fitting time and the final refit's (``"refit"``).
    """
    if combine not in COMBINES:
        raise InputError(f"combine: {combine!r} is not one of {', '.join(COMBINES)} (equal: the best "
                         "unweighted average of up to max_parts candidates; greedy: a weighted greedy ensemble)")
    import time

    from .simple import fit_reconstructor

    y = np.asarray(y, dtype=np.float64)
    oof, scores = {}, {}
    seconds = {} if seconds is None else seconds
    for label, make in candidates.items():
        t0 = time.perf_counter()
        try:
            p = oof_predictions(make, X, y, folds, seed, R)
            seconds[label] = round(time.perf_counter() - t0, 3)
        except (ValueError, np.linalg.LinAlgError) as exc:
            scores[label] = f"failed: {exc}"
            continue
        if not np.isfinite(p).all():
            scores[label] = "failed: non-finite predictions"
            continue
        oof[label], scores[label] = p, float(np.sqrt(np.mean((p - y) ** 2)))
    if not oof:
        raise InputError(f"no reconstructor could be fitted: {scores}")
    weights = combine_oof(oof, y, combine, max_parts, steps)
    combo = tuple(weights)
    if combine == "equal":
        p = np.mean([oof[c] for c in combo], axis=0)
        weights = None  # an unweighted average's artifact stores no weights, as before weights existed
    else:
        p = np.sum([weights[c] * oof[c] for c in combo], axis=0)
    err = float(np.sqrt(np.mean((p - y) ** 2)))
    t0 = time.perf_counter()
    if len(combo) == 1:
        rec = fit_reconstructor(candidates[combo[0]](), X, y, R)
    else:
        rec = AverageReconstructor.of_fitted([fit_reconstructor(candidates[c](), X, y, R) for c in combo],
                                             np.shape(X)[1], None if weights is None else list(weights.values()))
    seconds["refit"] = round(time.perf_counter() - t0, 3)
    label = "+".join(combo)
    scores[label] = err
    return label, rec, scores, p
