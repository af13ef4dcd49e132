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

from ..data.checks import ListOf, OneOf, Real, Whole, check_params
from ..reconstructors.simple import GAMReconstructor, Reconstructor, RidgeReconstructor
from ..reconstructors.tables import GAM_LAM, GAM_N_SPLINES, round_list
from .base import Selector
from ..data.errors import InputError

__all__ = ["DiscoSelector", "SignatureKNNReconstructor", "disagreement", "top_disagreement", "stratified_disagreement"]


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


class SignatureKNNReconstructor(Reconstructor):
    """Full score = distance-weighted mean target of the K nearest training models in PCA space.

    Parameters
    ----------
    n_components : int, default 10
        PCA components kept (at most ``k`` and ``n_train - 1``).
    n_neighbors : int, default 10
        ``K`` (at most the number of training models).

    ``fit(X, y)``: ``X`` ``(n_train, k)`` responses on the chosen items (NaN filled with the item's
    training mean, stored), ``y`` ``(n_train,)`` pp. PCA by SVD of the centred training signatures.
    ``predict(X)``: weights ``1 / distance``; a model at distance < 1e-4 from training models (an
    identical signature; stored signatures are rounded to 1e-5 to keep the artifact small, about
    90 KB per 1000 training models and 10 components) gets their mean target. Predictions in pp, clipped to [0, 100].
    """

    kind = "signature_knn"
    _domains = {"n_components": Whole(1), "n_neighbors": Whole(1)}

    def __init__(self, n_components: int = 10, n_neighbors: int = 10):
        self.n_components = n_components
        self.n_neighbors = n_neighbors

    def _fill(self, X) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.fill_.size:
            raise InputError(f"X: expected (n_models, {self.fill_.size}) responses on the chosen items, got {X.shape}")
        return np.where(np.isnan(X), self.fill_[None, :], X)

    def transform(self, X) -> np.ndarray:
        """PCA coordinates ``(n_models, n_components_)`` of signatures ``X`` ``(n_models, k)``."""
        return (self._fill(X) - self.mean_) @ self.components_.T

    def fit(self, X, y):
        check_params(self)
        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        if X.ndim != 2 or y.shape != (X.shape[0],):
            raise InputError(f"X, y: expected (n, k) and (n,), got {X.shape} and {y.shape}")
        if X.shape[0] < 2:
            raise InputError("X: need at least 2 training models for PCA + kNN")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            m = np.nanmean(X, axis=0)
        # every stored array is rounded here exactly as to_dict writes it, so a reloaded artifact
        # predicts bit for bit what the fitted object predicts
        self.fill_ = np.round(np.where(np.isnan(m), 0.0, m), 10)
        F = np.where(np.isnan(X), self.fill_[None, :], X)
        self.mean_ = np.round(F.mean(axis=0), 10)
        _, _, Vt = np.linalg.svd(F - self.mean_, full_matrices=False)
        c = int(min(self.n_components, X.shape[1], X.shape[0] - 1))
        comps = Vt[:c]
        # deterministic sign: the largest-magnitude loading of each component is positive
        signs = np.sign(comps[np.arange(c), np.abs(comps).argmax(axis=1)])
        signs[signs == 0] = 1.0
        self.components_ = np.round(comps * signs[:, None], 10)
        self.train_z_ = np.round((F - self.mean_) @ self.components_.T, 5)
        self.train_y_ = np.round(y, 7)
        return self

    def predict(self, X) -> np.ndarray:
        Z = self.transform(X)
        T = self.train_z_
        d2 = (Z**2).sum(axis=1)[:, None] + (T**2).sum(axis=1)[None, :] - 2.0 * Z @ T.T
        d = np.sqrt(np.maximum(d2, 0.0))
        K = min(self.n_neighbors, T.shape[0])
        nn = np.argpartition(d, K - 1, axis=1)[:, :K]
        dn = np.take_along_axis(d, nn, axis=1)
        yn = self.train_y_[nn]
        exact = dn <= 1e-4  # stored signatures are rounded to 1e-5: closer than this counts as identical
        with np.errstate(divide="ignore"):
            w = np.where(exact.any(axis=1, keepdims=True), exact.astype(float), 1.0 / dn)
        out = (w * yn).sum(axis=1) / w.sum(axis=1)
        return np.clip(out, 0.0, 100.0)

    def to_dict(self) -> dict:
        return {
            "kind": self.kind, "params": self.params_dict(), "fill": round_list(self.fill_, 10),
            "mean": round_list(self.mean_, 10), "components": [round_list(r, 10) for r in self.components_],
            "train_z": [round_list(r, 5) for r in self.train_z_], "train_y": round_list(self.train_y_, 7),
        }

    @classmethod
    def from_dict(cls, d: dict):
        obj = cls(**d["params"])
        obj.fill_ = np.asarray(d["fill"], dtype=np.float64)
        obj.mean_ = np.asarray(d["mean"], dtype=np.float64)
        obj.components_ = np.asarray(d["components"], dtype=np.float64).reshape(-1, obj.fill_.size)
        obj.train_z_ = np.asarray(d["train_z"], dtype=np.float64).reshape(-1, obj.components_.shape[0])
        obj.train_y_ = np.asarray(d["train_y"], dtype=np.float64)
        return obj


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
            from ..reconstructors.simple import FEW_MODEL_CHOICES, cv_rmse

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
