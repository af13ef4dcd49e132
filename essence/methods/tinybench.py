"""``tinybench``: tinyBenchmarks' anchor points and its gp-IRT estimator (Maia Polo et al., 2024)."""

from __future__ import annotations

import numpy as np

from ..data.checks import ListOf, OneOf, Real, Whole, store_params
from ..features.irt import IRTConfig
from ..reconstructors.irt import GPIRTReconstructor, gp_lambda, gpirt_components
from ..reconstructors.simple import WeightedLineReconstructor
from ..reconstructors.tables import GAM_LAM, GAM_N_SPLINES, round_list
from ..search.anchors import kmeans_anchors
from .base import Selector, irt_item_params, pick_candidates, require_models

__all__ = ["TinyBenchSelector"]


class TinyBenchSelector(Selector):
    """K-Means anchors (``n_init``, ``max_iter``) + gp-IRT (2PL settings ``irt``); ``min_val_models``: fewest validation
    models ``lambda`` is set on alone; ``n_splines``, ``lam``: the calibration GAM's; ``min_models``: fewest training
    models; ``candidates`` among ``gpirt``, ``gpirt_gam`` and ``weighted_line``, chosen by cross-validation."""

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
        store_params(self, locals())

    def select(self, train, val) -> np.ndarray:
        require_models(self, train)
        idx, sizes, inertia = kmeans_anchors(train.responses, self.k, seed=self.seed, n_init=self.n_init,
                                             max_iter=self.max_iter)
        self.weights_ = sizes / sizes.sum()
        self.params_, _ = irt_item_params(self, train)

        R, used = ((val.responses, "validation") if val.n_models >= self.min_val_models
                   else (np.vstack([train.responses, val.responses]), "train+validation"))
        A, P = gpirt_components(R[:, idx], self.params_, idx, self.weights_, self.irt.binarize, self.irt.prior_sd)
        pool = np.nanmean(R, axis=1)
        v = float(np.mean((A - pool) ** 2))
        b = float(np.sqrt(np.mean((P - pool) ** 2)))
        self.gp_lambda_ = gp_lambda(b, v)
        self.info_.update({
            "cluster_shares": round_list(self.weights_, 8), "kmeans_inertia": inertia,
            "gp_lambda": self.gp_lambda_, "pirt_rmse_pp": 100 * b, "anchor_rmse_pp": 100 * np.sqrt(v),
            "lambda_models": used, "lambda_n_models": int(R.shape[0])})
        return idx

    def reconstructor_candidates(self, train, idx) -> dict:
        p = self.params_
        common = dict(pool_a=p.a.tolist(), pool_b=p.b.tolist(),
                      pool_p_fixed=[None if np.isnan(v) else float(v) for v in p.p_fixed],
                      anchors=[int(i) for i in idx], weights=self.weights_.tolist(), gp_lambda=self.gp_lambda_,
                      threshold=self.irt.binarize, prior_sd=self.irt.prior_sd, n_splines=self.n_splines, lam=self.lam)
        return pick_candidates(self.candidates, {
            "gpirt": lambda: GPIRTReconstructor(calibrate=False, **common),
            "gpirt_gam": lambda: GPIRTReconstructor(calibrate=True, **common),
            "weighted_line": lambda: WeightedLineReconstructor(weights=self.weights_.tolist())})
