"""``tinybench``: tinyBenchmarks' anchor points and its gp-IRT estimator (Maia Polo et al., 2024).

Selection: K-Means anchors on the training models' correctness vectors (as the ``kmeans`` method:
one item per cluster, the one nearest the centroid); each anchor's weight is its cluster's share of
the ``N`` pool items.

Estimators, for a model with responses ``x`` on the anchors (fractions, per model):

* anchor estimate  ``A = sum_j w_j x_j`` (cluster-share weighted anchor mean);
* p-IRT            ``P = (n_seen / N) * mean(seen x) + (1 - n_seen / N) * mean_{unseen pool items} P_j(theta)``
  where ``theta`` is the model's MAP ability from its anchor responses and ``P_j`` the 2PL curve of
  every pool item (fitted with py-irt on the training models; ``essence.features.irt``);
* gp-IRT           ``G = lambda * A + (1 - lambda) * P``,  ``lambda = b^2 / (v + b^2)``.

``lambda`` (:func:`gp_lambda`) is the weight that minimises the mean squared error of the mix of two
independent estimators with mean squared errors ``v`` (anchor) and ``b^2`` (p-IRT). Both are measured
against each model's pool mean on the **validation** models, with the anchors and item parameters
fixed (``b`` = root-mean-square error of p-IRT, ``v`` = mean squared error of the anchor estimate).
The paper estimates ``b`` the same way on held-out validation models and takes ``v`` from a
variance heuristic (mean item variance / (4 k)); measuring ``v`` directly is possible here because the
anchors are fixed before ``lambda`` is set. With fewer than ``min_val_models`` validation models, the
training models join them (the IRT fit saw those, so ``b`` is then optimistic).

These estimate the **pool** accuracy. On the metabench pools the target is the whole benchmark's
accuracy, so the ``gpirt_gam`` candidate adds a calibration: a GAM of the target on the gp-IRT
estimate (pp), fitted on the training models, and ``weighted_line`` a line on the anchor estimate ``A``.
The choice among ``candidates`` is cross-validated over training + validation models; the plain-mean
``line`` and ``mean_ridge`` every other method also gets are left out (``plain_mean_choices = False``):
the anchors are a cluster-stratified sample with unequal weights, whose plain mean is the wrong summary
(with them, ``tinybench`` chose ``mean_ridge`` on the plain anchor mean on all five metabench pools and
was the ``kmeans`` method under another name). ``candidates=("gpirt",)`` is the paper's estimator alone.
"""

from __future__ import annotations

import numpy as np

from ..search.anchors import kmeans_anchors
from ..data.checks import Flag, ListOf, OneOf, Real, Whole, check_params
from ..features.irt import DEFAULT_FIT, IRT_DOMAINS, ItemParams, binarize, estimate_ability
from ..reconstructors.simple import Reconstructor
from ..reconstructors.tables import GAM_LAM, GAM_N_SPLINES, Table1D, fit_gam_table, round_list
from .base import Selector, irt_item_params
from ..data.errors import InputError

__all__ = ["TinyBenchSelector", "GPIRTReconstructor", "gp_lambda", "gpirt_components"]


def gp_lambda(b: float, v: float) -> float:
    """gp-IRT mixing weight ``b^2 / (v + b^2)`` of the anchor estimate (the rest goes to p-IRT).

    ``b``: error scale (bias / RMSE) of p-IRT; ``v``: variance (MSE) of the anchor estimator; both in
    the same units (fractions or pp, squared for ``v``). A noisy anchor estimate (large ``v``) shifts the
    weight to p-IRT, a biased p-IRT (large ``b``) to the anchors. 0.5 when both are 0.
    """
    b, v = float(b), float(v)
    if not (np.isfinite(b) and np.isfinite(v)) or v < 0:
        raise InputError(f"gp_lambda: need finite b and v >= 0, got b={b}, v={v}")
    den = v + b * b
    return 0.5 if den == 0 else b * b / den


def gpirt_components(X, params: ItemParams, anchors, weights, threshold: float = 0.5,
                     prior_sd: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Anchor estimate and p-IRT estimate (fractions, each ``(n_models,)``) from anchor responses.

    ``X``: ``(n_models, k)`` responses on the anchors (NaN = missing: such an anchor counts as unseen);
    ``params``: 2PL parameters of all ``N`` pool items; ``anchors``: ``(k,)`` their positions in the
    pool; ``weights``: ``(k,)`` anchor weights (normalised here). The seen part of p-IRT uses the raw
    responses; the ability uses them binarised at ``threshold``.
    """
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
    """tinyBenchmarks' gp-IRT estimate of the pool score, optionally calibrated to the target by a GAM.

    Parameters
    ----------
    pool_a, pool_b, pool_p_fixed : sequences of length N
        2PL parameters of every pool item (``pool_p_fixed``: None, or the fixed probability of an item
        constant over the training models; see :class:`essence.features.irt.ItemParams`).
    anchors : sequence of int, length k
        Positions of the anchor items in the pool (the order of ``X``'s columns).
    weights : sequence of float, length k
        Anchor weights (cluster shares).
    gp_lambda : float in [0, 1]
        Weight of the anchor estimate (:func:`gp_lambda`).
    threshold, prior_sd : default 0.5, 1.0
        Binarisation threshold and prior sd for the ability estimate.
    calibrate : bool, default False
        False: the estimate is ``100 * G`` (pp); True: a GAM (``n_splines``, ``lam``) of the target on
        ``100 * G``, fitted on the training models.

    ``X`` is ``(n_models, k)``; predictions in pp clipped to [0, 100].
    """

    kind = "gpirt"
    _domains = {"gp_lambda": Real(0.0, 1.0), "threshold": Real(0.0, 1.0), "prior_sd": Real(0.0, open_min=True),
                "calibrate": Flag(), "n_splines": Whole(4), "lam": Real(0.0)}

    def __init__(self, pool_a, pool_b, pool_p_fixed, anchors, weights, gp_lambda: float, threshold: float = 0.5,
                 prior_sd: float = 1.0, calibrate: bool = False, n_splines: int = GAM_N_SPLINES, lam: float = GAM_LAM):
        self.pool_a = pool_a
        self.pool_b = pool_b
        self.pool_p_fixed = pool_p_fixed
        self.anchors = anchors
        self.weights = weights
        self.gp_lambda = gp_lambda
        self.threshold = threshold
        self.prior_sd = prior_sd
        self.calibrate = calibrate
        self.n_splines = n_splines
        self.lam = lam

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

    def components(self, X) -> tuple[np.ndarray, np.ndarray]:
        """``(anchor, pirt)`` estimates in pp, each ``(n_models,)``."""
        params, anchors, weights = self._state()
        A, P = gpirt_components(X, params, anchors, weights, float(self.threshold), float(self.prior_sd))
        return 100.0 * A, 100.0 * P

    def gpirt(self, X) -> np.ndarray:
        """Uncalibrated gp-IRT estimate of the pool score, pp, ``(n_models,)``."""
        A, P = self.components(X)
        lam = float(self.gp_lambda)
        return lam * A + (1.0 - lam) * P

    def fit(self, X, y):
        check_params(self)
        self._state()
        self.table_ = None
        if self.calibrate:
            t = fit_gam_table(self.gpirt(X), np.asarray(y, dtype=np.float64), self.n_splines, self.lam)
            self.table_ = Table1D.from_dict(t.to_dict())  # as stored: reloads predict bit for bit
        return self

    def predict(self, X) -> np.ndarray:
        g = self.gpirt(X)
        return np.clip(self.table_(g) if self.table_ is not None else g, 0.0, 100.0)

    def to_dict(self) -> dict:
        return {"kind": self.kind, "params": self.params_dict(),
                "table": None if self.table_ is None else self.table_.to_dict()}

    @classmethod
    def from_dict(cls, d: dict):
        obj = cls(**d["params"])
        obj.table_ = None if d.get("table") is None else Table1D.from_dict(d["table"])
        return obj


class TinyBenchSelector(Selector):
    """tinyBenchmarks: K-Means anchor points + gp-IRT (optionally GAM-calibrated) reconstruction.

    Parameters
    ----------
    k : int
        Number of anchor items (= K-Means clusters).
    seed : int, default 0
        Seeds K-Means and the py-irt fit; same seed, same items.
    n_init, max_iter : default 10, 300
        K-Means restarts and iterations (as :class:`~essence.methods.kmeans.KMeansSelector`).
    binarize, epochs, lr, lr_decay, priors, max_models, prior_sd, cache :
        IRT settings, as :class:`~essence.methods.irt.IRTSelector` (the two share the cached fit).
    min_val_models : int, default 20
        ``lambda`` is estimated on the validation models when there are at least this many, else on
        training + validation models.
    n_splines, lam : default essence.reconstructors.tables.GAM_N_SPLINES, GAM_LAM (25, 5.0)
        The calibration GAM's spline basis size and smoothing penalty.
    min_models : int, default 100
        Fewest training models accepted (InputError below it), as :class:`~essence.methods.irt.IRTSelector`:
        gp-IRT rests on a 2PL fit (alpaca_eval2, 44 training systems, k = 40: 4.3 pp against 2.6 for
        random items + a line, 5-fold CV over the systems).
    candidates : tuple of str, default ("gpirt", "gpirt_gam", "weighted_line")
        Reconstructor candidates (CV over training + validation models): ``gpirt`` (the paper's, 100 * G),
        ``gpirt_gam`` (a GAM of the target on it) and ``weighted_line`` (a line on the anchor estimate, as
        :class:`~essence.methods.kmeans.WeightedLineReconstructor`).
    """

    name = "tinybench"
    signal = "responses"
    item_limit = 20_000  # whole benchmarks: refused up front (base.Selector.fit)
    item_limit_reason = "K-Means plus a 2PL fit took 233 s at 14,000 items x 4,000 models, and grow with the items"
    _domains = {**Selector._domains, **IRT_DOMAINS, "n_init": Whole(1), "max_iter": Whole(1),
                "min_val_models": Whole(0), "n_splines": Whole(4), "lam": Real(0.0), "min_models": Whole(1),
                "candidates": ListOf(OneOf("gpirt", "gpirt_gam", "weighted_line"))}
    plain_mean_choices = False

    def __init__(self, k, seed=0, progress=True, n_init: int = 10, max_iter: int = 300, binarize: float = 0.5,
                 epochs: int = DEFAULT_FIT["epochs"], lr: float = DEFAULT_FIT["lr"],
                 lr_decay: float = DEFAULT_FIT["lr_decay"], priors: str = DEFAULT_FIT["priors"],
                 max_models: int | None = DEFAULT_FIT["max_models"], prior_sd: float = 1.0,
                 min_val_models: int = 20, n_splines: int = GAM_N_SPLINES, lam: float = GAM_LAM, cache: bool = True,
                 min_models: int = 100, candidates=("gpirt", "gpirt_gam", "weighted_line")):
        super().__init__(k, seed, progress)
        self.candidates = candidates
        self.min_models = min_models
        self.n_init = n_init
        self.max_iter = max_iter
        self.binarize = binarize
        self.epochs = epochs
        self.lr = lr
        self.lr_decay = lr_decay
        self.priors = priors
        self.max_models = max_models
        self.prior_sd = prior_sd
        self.min_val_models = min_val_models
        self.n_splines = n_splines
        self.lam = lam
        self.cache = cache

    def select(self, train, val) -> np.ndarray:
        if train.n_models < self.min_models:
            raise InputError(f"tinybench: {train.n_models} training models are too few for its 2PL fit of "
                             f"{train.n_items} items (needs at least min_models={self.min_models}); use method "
                             "'auto' or 'random'")
        idx, sizes, inertia = kmeans_anchors(train.responses, self.k, seed=self.seed, n_init=self.n_init,
                                             max_iter=self.max_iter)
        self.weights_ = sizes / sizes.sum()
        self.params_, _ = irt_item_params(self, train)

        # lambda on validation models (or train + validation when validation is small)
        if val.n_models >= self.min_val_models:
            R, used = val.responses, "validation"
        else:
            R, used = np.vstack([train.responses, val.responses]), "train+validation"
        A, P = gpirt_components(R[:, idx], self.params_, idx, self.weights_, self.binarize, self.prior_sd)
        pool = np.nanmean(R, axis=1)
        v = float(np.mean((A - pool) ** 2))
        b = float(np.sqrt(np.mean((P - pool) ** 2)))
        self.gp_lambda_ = gp_lambda(b, v)
        self.info_.update({
            "cluster_shares": round_list(self.weights_, 8), "kmeans_inertia": inertia,
            "gp_lambda": self.gp_lambda_, "pirt_rmse_pp": 100 * b, "anchor_rmse_pp": 100 * np.sqrt(v),
            "lambda_models": used, "lambda_n_models": int(R.shape[0]),
        })
        return idx

    def reconstructor_candidates(self, train, idx) -> dict:
        p = self.params_
        common = dict(pool_a=p.a.tolist(), pool_b=p.b.tolist(),
                      pool_p_fixed=[None if np.isnan(v) else float(v) for v in p.p_fixed],
                      anchors=[int(i) for i in idx], weights=self.weights_.tolist(), gp_lambda=self.gp_lambda_,
                      threshold=self.binarize, prior_sd=self.prior_sd, n_splines=self.n_splines, lam=self.lam)
        from ..reconstructors.simple import reconstructor_class

        weighted_line = reconstructor_class("weighted_line")  # kmeans' class, by registry (no method imports another)
        make = {
            "gpirt": lambda: GPIRTReconstructor(calibrate=False, **common),
            "gpirt_gam": lambda: GPIRTReconstructor(calibrate=True, **common),
            "weighted_line": lambda: weighted_line(weights=self.weights_.tolist()),
        }
        names = [self.candidates] if isinstance(self.candidates, str) else list(self.candidates)
        return {str(c): make[str(c)] for c in names}
