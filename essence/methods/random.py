"""``random``: k items drawn uniformly without replacement; GAM reconstruction. The baseline every table shows."""

from __future__ import annotations

import numpy as np

from .base import Selector


class RandomSelector(Selector):
    """A uniformly random k-subset of the items (seeded)."""

    name = "random"
    signal = "none"
    needs_no_models = True

    def select(self, train, val) -> np.ndarray:
        rng = np.random.default_rng(self.seed)
        return np.sort(rng.choice(train.n_items, size=self.k, replace=False))
