"""``disco``: DISCO-style selection (items where models disagree most) + a model-signature predictor.

Selection: the ``k`` items with the highest disagreement across the **training** models. Disagreement
of an item is the variance of its scores over the models that answered it (``ddof=0``); for 0/1
scores that is ``p (1 - p)`` with ``p`` the item's accuracy, largest for items half the models pass.
(DISCO's own score, the predictive diversity of the models' answers, needs the answers themselves;
with correctness only, the variance is the natural stand-in.) Ties are broken by a seeded random
permutation, so the same seed gives the same subset.

Reconstruction: a model's responses on the chosen items are its *signature*. PCA (fitted on the
training models) compresses it; the full score is the distance-weighted mean of the targets of the
``K`` nearest training models in PCA space (:class:`SignatureKNNReconstructor`). The number of
components and ``K`` are chosen on validation (grid ``n_components`` x ``neighbors``), together with the
project's GAM on the subset score and ridge.
The artifact stores what ``predict`` needs as JSON numbers: PCA mean and components, the training
models' signatures (PCA coordinates) and targets. (A random forest, DISCO's other predictor, is left
out: it has no compact JSON form.)
"""

from __future__ import annotations

import warnings

import numpy as np

from ..data.checks import ListOf, OneOf, Real, Whole
from ..data.errors import InputError
from ..reconstructors.signature import SignatureKNNReconstructor
from ..reconstructors.simple import GAMReconstructor, RidgeReconstructor
from ..reconstructors.tables import GAM_LAM, GAM_N_SPLINES
from .base import Selector

__all__ = ["DiscoSelector", "disagreement", "top_disagreement", "stratified_disagreement"]


def disagreement(responses) -> np.ndarray:
    """Per-item disagreement ``(n_items,)``: variance (ddof=0) of the item's scores over the models.

    ``responses`` is ``(n_models, n_items)`` in [0, 1], NaN ignored; 0/1 items give ``p (1 - p)``
    (max 0.25). An item no model answered gets 0.
    """
    R = np.asarray(responses, dtype=np.float64)
    if R.ndim != 2:
        raise InputError(f"responses: expected (n_models, n_items), got shape {R.shape}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        v = np.nanvar(R, axis=0)
    return np.where(np.isnan(v), 0.0, v)


def stratified_disagreement(responses, k: int, seed: int = 0) -> np.ndarray:
    """One item per difficulty stratum: the items sorted by mean score (NaN ignored) are cut into ``k``
    consecutive groups of (almost) equal size, and each group gives its item of highest
    :func:`disagreement` (ties in seeded random order). ``(k,)`` item positions, easiest stratum first.

    Keeps the spread of difficulties a random draw has (the full score is a mean over all of them) while
    preferring, within a difficulty, the items that separate models most.
    """
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
    """The ``k`` items of highest :func:`disagreement`, highest first; ties in seeded random order."""
    d = disagreement(responses)
    if not 1 <= k <= d.size:
        raise InputError(f"k: {k} must be between 1 and the {d.size} items")
    perm = np.random.default_rng(seed).permutation(d.size)
    order = perm[np.argsort(-d[perm], kind="stable")]
    return order[:k].astype(np.intp)


class DiscoSelector(Selector):
    """Top-k disagreement items; kNN on PCA signatures (K chosen on validation), GAM and ridge as rivals.

    Parameters
    ----------
    k : int
        Number of items.
    seed : int, default 0
        Breaks ties in disagreement; same seed, same items.
    n_components : tuple of int, default (3, 10)
        Candidate numbers of PCA components of the signature.
    neighbors : tuple of int, default (5, 10, 20)
        Candidate ``K`` for the kNN predictor. Every pair (components ``c``, ``K``) is a reconstructor
        candidate ``knn_c<c>_k<K>`` (on gsm8k 3 components work best, on arc 10; small model sets such
        as alpaca_eval2 want small ``K``), chosen on validation with ``gam`` and ``ridge``.
    n_splines, lam : default essence.reconstructors.tables.GAM_N_SPLINES, GAM_LAM (25, 5.0)
        The GAM candidate's spline basis size and smoothing penalty.
    selection : {"auto", "top", "stratified"}, default "auto"
        "top": the k most disagreed items (DISCO's). "stratified": the most disagreed item of each of k
        difficulty strata (:func:`stratified_disagreement`). "auto": the one whose items give the lower
        5-fold CV RMSE (line or shrinkage-to-mean reconstructor) over training + validation models. On
        whole pools with skewed scores the top items can all be of middling difficulty and track the
        full score badly (alpaca_eval2, 49 systems, k = 40: 9.8 pp against random's 3.6 with "top").
    """

    name = "disco"
    signal = "responses"
    _domains = {**Selector._domains, "n_components": ListOf(Whole(1)), "neighbors": ListOf(Whole(1)),
                "n_splines": Whole(4), "lam": Real(0.0), "selection": OneOf("auto", "top", "stratified")}

    def __init__(self, k, seed=0, progress=True, n_components=(3, 10), neighbors=(5, 10, 20),
                 n_splines: int = GAM_N_SPLINES, lam: float = GAM_LAM, selection: str = "auto"):
        super().__init__(k, seed, progress)
        self.selection = selection
        self.n_components = n_components
        self.neighbors = neighbors
        self.n_splines = n_splines
        self.lam = lam

    def select(self, train, val) -> np.ndarray:
        sets = {}
        if self.selection in ("auto", "top"):
            sets["top"] = top_disagreement(train.responses, self.k, self.seed)
        if self.selection in ("auto", "stratified"):
            sets["stratified"] = stratified_disagreement(train.responses, self.k, self.seed)
        if len(sets) > 1:
            from ..reconstructors.choose import cv_rmse
            from ..reconstructors.simple import FEW_MODEL_CHOICES

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
        self.info_["disagreement_min_chosen"] = float(d[idx].min())
        self.info_["disagreement_max"] = float(d.max())
        return idx

    def reconstructor_candidates(self, train, idx) -> dict:
        cands = {f"knn_c{c}_k{K}": (lambda c=c, K=K: SignatureKNNReconstructor(c, K))
                 for c in np.atleast_1d(self.n_components).tolist() for K in np.atleast_1d(self.neighbors).tolist()}
        cands["gam"] = lambda: GAMReconstructor(n_splines=self.n_splines, lam=self.lam)
        cands["ridge"] = RidgeReconstructor
        return cands
