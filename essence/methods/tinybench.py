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

from ..data.checks import ListOf, OneOf, Real, Whole
from ..data.errors import InputError
from ..features.irt import IRTConfig
from ..reconstructors.irt import GPIRTReconstructor, gp_lambda, gpirt_components
from ..reconstructors.tables import GAM_LAM, GAM_N_SPLINES, round_list
from ..search.anchors import kmeans_anchors
from .base import Selector, irt_item_params

__all__ = ["TinyBenchSelector"]


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
    _configs = {"irt": IRTConfig}
    _domains = {**Selector._domains, "n_init": Whole(1), "max_iter": Whole(1),
                "min_val_models": Whole(0), "n_splines": Whole(4), "lam": Real(0.0), "min_models": Whole(1),
                "candidates": ListOf(OneOf("gpirt", "gpirt_gam", "weighted_line"))}
    plain_mean_choices = False

    def __init__(self, k, seed=0, progress=True, n_init: int = 10, max_iter: int = 300, irt: IRTConfig = IRTConfig(),
                 min_val_models: int = 20, n_splines: int = GAM_N_SPLINES, lam: float = GAM_LAM,
                 min_models: int = 100, candidates=("gpirt", "gpirt_gam", "weighted_line")):
        super().__init__(k, seed, progress)
        self.irt = irt
        self.candidates = candidates
        self.min_models = min_models
        self.n_init = n_init
        self.max_iter = max_iter
        self.min_val_models = min_val_models
        self.n_splines = n_splines
        self.lam = lam

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
        A, P = gpirt_components(R[:, idx], self.params_, idx, self.weights_, self.irt.binarize, self.irt.prior_sd)
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
                      threshold=self.irt.binarize, prior_sd=self.irt.prior_sd, n_splines=self.n_splines, lam=self.lam)
        from ..reconstructors.base import reconstructor_class

        weighted_line = reconstructor_class("weighted_line")  # kmeans' class, by registry (no method imports another)
        make = {
            "gpirt": lambda: GPIRTReconstructor(calibrate=False, **common),
            "gpirt_gam": lambda: GPIRTReconstructor(calibrate=True, **common),
            "weighted_line": lambda: weighted_line(weights=self.weights_.tolist()),
        }
        names = [self.candidates] if isinstance(self.candidates, str) else list(self.candidates)
        return {str(c): make[str(c)] for c in names}
