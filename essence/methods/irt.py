"""``irt``: MetaBench-style selection by 2PL Fisher information across ability quantiles."""

from __future__ import annotations

import numpy as np

from ..data.checks import Real, Whole, store_params
from ..data.errors import InputError
from ..features.irt import IRTConfig, estimate_ability, fisher_information
from ..reconstructors.irt import IRTGAMReconstructor
from ..reconstructors.simple import GAMReconstructor, RidgeReconstructor
from ..reconstructors.tables import GAM_LAM, GAM_N_SPLINES, round_list
from .base import Selector, irt_item_params, require_models

__all__ = ["IRTSelector", "select_by_information"]


def select_by_information(a, b, theta, k: int) -> np.ndarray:
    """``(k,)`` item positions in the order taken: the sorted abilities ``theta`` ``(n_models,)`` split into ``k``
    near-equal groups (fewer models than ``k``: ``k`` quantiles), each, lowest first, taking the untaken item of
    largest ``max_{theta in group} I_j(theta)`` under the 2PL ``a``, ``b`` ``(n_items,)`` (ties: lowest index)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    theta = np.sort(np.asarray(theta, dtype=np.float64).ravel())
    n_items = a.size
    if not 1 <= k <= n_items:
        raise InputError(f"k: {k} must be between 1 and the {n_items} items")
    if theta.size == 0:
        raise InputError("theta: no training abilities to define the quantile bins")
    groups = (np.array_split(theta, k) if theta.size >= k  # fewer models than bins: k evenly spaced quantiles
              else [np.atleast_1d(q) for q in np.quantile(theta, (np.arange(k) + 0.5) / k)])
    taken = np.zeros(n_items, dtype=bool)
    chosen = []
    for g in groups:
        info = fisher_information(g, a, b).max(axis=0)
        info[taken] = -np.inf
        j = int(np.argmax(info))
        taken[j] = True
        chosen.append(j)
    return np.asarray(chosen, dtype=np.intp)


class IRTSelector(Selector):
    """One item of highest 2PL Fisher information per ability-quantile bin. ``irt``: the 2PL fit's settings
    (:class:`~essence.features.irt.IRTConfig`); ``n_splines``, ``lam``: the GAMs'; ``min_models``: fewest accepted."""

    name = "irt"
    signal = "responses"
    item_limit = 20_000  # whole benchmarks: refused up front (base.Selector.fit)
    item_limit_reason = "its 2PL fit took 353 s and 3.9 GB at 14,000 items x 4,000 models, and grows with the items"
    _configs = {"irt": IRTConfig}
    _domains = {**Selector._domains, "n_splines": Whole(4), "lam": Real(0.0), "min_models": Whole(1)}

    def __init__(self, k, seed=0, progress=True, irt: IRTConfig = IRTConfig(), n_splines: int = GAM_N_SPLINES,
                 lam: float = GAM_LAM, min_models: int = 100):
        store_params(self, locals())

    def select(self, train, val) -> np.ndarray:
        require_models(self, train)
        params, Rb = irt_item_params(self, train)
        theta = estimate_ability(Rb, params.a, params.b, prior_sd=self.irt.prior_sd)
        idx = select_by_information(params.a, params.b, theta, self.k)
        self.item_params_ = params.subset(idx)
        self.info_.update(selection_rule="one item per training-ability quantile bin, max Fisher information",
                          chosen_a=round_list(self.item_params_.a, 6), chosen_b=round_list(self.item_params_.b, 6))
        return idx

    def reconstructor_candidates(self, train, idx) -> dict:
        p = self.item_params_
        common = dict(a=p.a.tolist(), b=p.b.tolist(), threshold=self.irt.binarize, prior_sd=self.irt.prior_sd,
                      n_splines=self.n_splines, lam=self.lam)
        return {
            "irt_gam": lambda: IRTGAMReconstructor(use_score=True, **common),
            "theta_gam": lambda: IRTGAMReconstructor(use_score=False, **common),
            "gam": lambda: GAMReconstructor(n_splines=self.n_splines, lam=self.lam),
            "ridge": RidgeReconstructor}
