"""The audit's baselines (Zhang, Dorner & Hardt, 2025): ``random``'s items read by one fixed reconstructor."""

from __future__ import annotations

import numpy as np

from ..reconstructors.audit import AIPWReconstructor
from ..reconstructors.simple import LineReconstructor, RidgeReconstructor, WeightedMeanReconstructor
from .base import Selector

__all__ = ["RandomMeanSelector", "RandomLineSelector", "RandomRidgeSelector", "AIPWSelector", "AUDIT_ALPHAS"]

#: scikit-learn's RidgeCV default penalties, the audit's
AUDIT_ALPHAS = (0.1, 1.0, 10.0)


class _RandomItems(Selector):
    """Uniformly random items (seeded, as ``random`` draws them) and one fixed reconstructor."""

    signal = "none"
    needs_no_models = True
    plain_mean_choices = False  # the baseline's own reconstructor only

    def select(self, train, val) -> np.ndarray:
        return np.sort(np.random.default_rng(self.seed).choice(train.n_items, size=self.k, replace=False))

    def _fit(self, train, val):
        self.predictors_ = "basic"  # no stronger kinds beside the baseline's own
        return super()._fit(train, val)


class RandomMeanSelector(_RandomItems):
    """Random items, estimate = their plain mean (pp)."""

    name = "random_mean"

    def reconstructor_candidates(self, train, idx) -> dict:
        return {"mean": WeightedMeanReconstructor}


class RandomLineSelector(_RandomItems):
    """Random items, a least-squares line of the full score on their mean."""

    name = "random_line"

    def reconstructor_candidates(self, train, idx) -> dict:
        return {"line": LineReconstructor}


class RandomRidgeSelector(_RandomItems):
    """Random items, ridge on their answers with the penalty among 0.1, 1, 10 by leave-one-out."""

    name = "random_ridge"

    def reconstructor_candidates(self, train, idx) -> dict:
        return {"ridge": lambda: RidgeReconstructor(alphas=AUDIT_ALPHAS)}


class AIPWSelector(_RandomItems):
    """Random items, AIPW (a fixed weighted mean of the answers, from the references' answers on every item)."""

    name = "aipw"
    needs_no_models = False

    def reconstructor_candidates(self, train, idx) -> dict:
        return {"aipw": lambda: AIPWReconstructor(items=np.asarray(idx).tolist())}
