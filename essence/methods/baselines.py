"""The audit's baselines (Zhang, Dorner & Hardt, NeurIPS 2025): ``k`` uniformly random items read by one fixed
reconstructor, no choice among candidates:

* ``random_mean``: the plain mean of the items (an unbiased estimate of a whole benchmark's score);
* ``random_line``: a least-squares line of the full score on that mean (what a user tries first);
* ``random_ridge``: ridge regression of the full score on the ``k`` answers, penalty by leave-one-out among
  0.1, 1 and 10 (scikit-learn's ``RidgeCV`` default, the audit's "random sampling and learn");
* ``aipw``: AIPW (:mod:`essence.reconstructors.audit`), which with random sampling alone held up on models
  stronger than every reference model.

They stand beside every method in the comparisons. The items are those ``random`` draws with the same seed.
"""

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
    """Random items, AIPW (a fixed weighted mean of the answers computed from the references' answers on every
    item; the identity map when the target is the pool mean)."""

    name = "aipw"
    needs_no_models = False

    def reconstructor_candidates(self, train, idx) -> dict:
        return {"aipw": lambda: AIPWReconstructor(items=np.asarray(idx).tolist())}
