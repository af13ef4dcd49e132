"""``kmeans``: one anchor item per K-Means cluster of the items' score vectors, weighted by the cluster's size."""

from __future__ import annotations

import numpy as np

from ..data.checks import ListOf, OneOf, Real, Whole, store_params
from ..data.errors import InputError
from ..reconstructors.simple import (GAMReconstructor, RidgeReconstructor, WeightedLineReconstructor,
                                     WeightedMeanReconstructor)
from ..reconstructors.tables import GAM_LAM, GAM_N_SPLINES
from ..search.anchors import kmeans_anchors
from .base import Selector, pick_candidates

__all__ = ["KMeansSelector"]

_CANDIDATES = ("weighted_line", "weighted_mean", "gam", "gam_unweighted", "ridge")


class KMeansSelector(Selector):
    """K-Means anchor items with cluster-size weights: ``n_init`` seeded restarts of ``max_iter`` iterations; the
    GAMs' ``n_splines``, ``lam``; ``min_models_continuous``: fewest training models on graded scores; ``candidates``
    among ``_CANDIDATES`` (weighted-mean based, ``gam_unweighted`` and ``ridge``), chosen by cross-validation."""

    name = "kmeans"
    signal = "responses"
    item_limit = 10_000  # whole benchmarks: refused up front (base.Selector.fit)
    item_limit_reason = "K-Means over the items took 846 s at 14,000 items x 4,000 models"
    plain_mean_choices = False
    _domains = {**Selector._domains, "n_init": Whole(1), "max_iter": Whole(1), "n_splines": Whole(4),
                "lam": Real(0.0), "candidates": ListOf(OneOf(*_CANDIDATES)), "min_models_continuous": Whole(0)}

    def __init__(self, k, seed=0, progress=True, n_init: int = 10, max_iter: int = 300, n_splines: int = GAM_N_SPLINES,
                 lam: float = GAM_LAM, candidates=("weighted_line", "gam", "ridge"), min_models_continuous: int = 100):
        store_params(self, locals())

    def select(self, train, val) -> np.ndarray:
        R = train.responses[~np.isnan(train.responses)]
        graded = float(np.mean((R > 0) & (R < 1))) if R.size else 0.0
        if graded > 0.5 and train.n_models < self.min_models_continuous:
            raise InputError(f"kmeans: graded scores ({graded:.0%} of cells strictly between 0 and 1) with "
                             f"{train.n_models} training models (fewer than "
                             f"min_models_continuous={self.min_models_continuous}): the clusters are loose and a few "
                             "anchors carry most of the weight; use method 'auto' or 'random'")
        idx, sizes, inertia = kmeans_anchors(train.responses, self.k, seed=self.seed, n_init=self.n_init,
                                             max_iter=self.max_iter)
        self.weights_ = sizes
        self.info_.update({"cluster_sizes": sizes.astype(int).tolist(), "kmeans_inertia": inertia})
        return idx

    def reconstructor_candidates(self, train, idx) -> dict:
        w = [float(v) for v in self.weights_]
        return pick_candidates(self.candidates, {
            "weighted_line": lambda: WeightedLineReconstructor(weights=w),
            "weighted_mean": lambda: WeightedMeanReconstructor(weights=w),
            "gam": lambda: GAMReconstructor(n_splines=self.n_splines, lam=self.lam, weights=w),
            "gam_unweighted": lambda: GAMReconstructor(n_splines=self.n_splines, lam=self.lam),
            "ridge": RidgeReconstructor})
