"""``random``: k items drawn uniformly without replacement; GAM reconstruction. The baseline every table shows."""

from __future__ import annotations

import numpy as np

from .base import Selector


class RandomSelector(Selector):
    """Uniform random k-subset of the items (seeded), reconstructed by the GAM on the subset score.

    Uses no model results to choose; the GAM is fitted on training models.
    """

    name = "random"
    signal = "none"
    needs_no_models = True

    def select(self, train, val) -> np.ndarray:
        rng = np.random.default_rng(self.seed)
        return np.sort(rng.choice(train.n_items, size=self.k, replace=False))
