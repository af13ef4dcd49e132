"""``disco``: DISCO-style selection (items where models disagree most) + a model-signature kNN predictor."""

from __future__ import annotations

import warnings

import numpy as np

from ..data.checks import ListOf, OneOf, Real, Whole, as_matrix, store_params
from ..data.errors import InputError
from ..reconstructors.choose import cv_rmse
from ..reconstructors.signature import SignatureKNNReconstructor
from ..reconstructors.simple import FEW_MODEL_CHOICES, GAMReconstructor, RidgeReconstructor
from ..reconstructors.tables import GAM_LAM, GAM_N_SPLINES
from .base import Selector

__all__ = ["DiscoSelector", "disagreement", "top_disagreement", "stratified_disagreement"]


def disagreement(responses) -> np.ndarray:
    """``(n_items,)`` variance of each item's scores in ``responses`` ``(n_models, n_items)``, NaN ignored."""
    R = as_matrix(responses, "responses")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        v = np.nanvar(R, axis=0)
    return np.where(np.isnan(v), 0.0, v)


def stratified_disagreement(responses, k: int, seed: int = 0) -> np.ndarray:
    """``(k,)`` item positions: in each of ``k`` difficulty strata the item of highest :func:`disagreement`."""
    R = np.asarray(responses, dtype=np.float64)
    d = disagreement(R)
    if not 1 <= k <= d.size:
        raise InputError(f"k: {k} must be between 1 and the {d.size} items")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nan_to_num(np.nanmean(R, axis=0), nan=0.0)
    perm = np.random.default_rng(seed).permutation(d.size)
    by_mean = perm[np.argsort(mean[perm], kind="stable")]
    return np.array([g[np.argmax(d[g])] for g in np.array_split(by_mean, k)], dtype=np.intp)


def top_disagreement(responses, k: int, seed: int = 0) -> np.ndarray:
    """The ``k`` items of highest :func:`disagreement`, highest first, ties in seeded random order."""
    d = disagreement(responses)
    if not 1 <= k <= d.size:
        raise InputError(f"k: {k} must be between 1 and the {d.size} items")
    perm = np.random.default_rng(seed).permutation(d.size)
    return perm[np.argsort(-d[perm], kind="stable")][:k].astype(np.intp)


class DiscoSelector(Selector):
    """Items of highest disagreement; every pair of ``n_components`` and ``neighbors`` is a kNN candidate
    ``knn_c<c>_k<K>``; ``n_splines``, ``lam``: the GAM's. ``selection``: ``"top"``, ``"stratified"``
    (:func:`stratified_disagreement`) or ``"auto"`` (the one of lower 5-fold CV RMSE)."""

    name = "disco"
    signal = "responses"
    _domains = {**Selector._domains, "n_components": ListOf(Whole(1)), "neighbors": ListOf(Whole(1)),
                "n_splines": Whole(4), "lam": Real(0.0), "selection": OneOf("auto", "top", "stratified")}

    def __init__(self, k, seed=0, progress=True, n_components=(3, 10), neighbors=(5, 10, 20),
                 n_splines: int = GAM_N_SPLINES, lam: float = GAM_LAM, selection: str = "auto"):
        store_params(self, locals())

    def select(self, train, val) -> np.ndarray:
        sets = {}
        if self.selection in ("auto", "top"):
            sets["top"] = top_disagreement(train.responses, self.k, self.seed)
        if self.selection in ("auto", "stratified"):
            sets["stratified"] = stratified_disagreement(train.responses, self.k, self.seed)
        if len(sets) > 1:
            R = np.vstack([train.responses, val.responses])
            y = np.r_[train.target, val.target]
            cv = {name: min(cv_rmse(make, R[:, ix], y, seed=self.seed)[0] for make in FEW_MODEL_CHOICES.values())
                  for name, ix in sets.items()}
            self.info_["selection_cv_rmse"] = {n: round(v, 4) for n, v in cv.items()}
            chosen = min(cv, key=lambda n: (cv[n], n != "top"))
        else:
            chosen = next(iter(sets))
        self.info_["selection"] = chosen
        idx = sets[chosen]
        d = disagreement(train.responses)
        self.info_.update(disagreement_min_chosen=float(d[idx].min()), disagreement_max=float(d.max()))
        return idx

    def reconstructor_candidates(self, train, idx) -> dict:
        cands = {f"knn_c{c}_k{K}": (lambda c=c, K=K: SignatureKNNReconstructor(c, K))
                 for c in np.atleast_1d(self.n_components).tolist() for K in np.atleast_1d(self.neighbors).tolist()}
        cands["gam"] = lambda: GAMReconstructor(n_splines=self.n_splines, lam=self.lam)
        cands["ridge"] = RidgeReconstructor
        return cands
