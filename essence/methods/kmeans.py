"""``kmeans``: cluster the items by their score vectors over the training models; one anchor per cluster.

Each item ``j`` is the point ``S[:, j]`` in R^(n_train_models): which training models got it right (or
their continuous scores). K-Means (scikit-learn, ``k`` clusters, ``n_init`` seeded restarts) groups
items with the same "difficulty profile"; the item nearest each centroid represents its cluster and
carries the cluster's size as its weight. The full score is then read off the cluster-weighted anchor
mean (no fitting), or a GAM on that weighted mean, whichever has the lower validation RMSE.

Missing cells (NaN) are filled with the item's mean over the training models before clustering (the
imputed coordinate is the item's own average, so it pulls the item towards no other cluster).
"""

from __future__ import annotations

import warnings

import numpy as np

from ..reconstruct import GAMReconstructor, RidgeReconstructor, WeightedMeanReconstructor
from .base import Selector
from ..errors import InputError

__all__ = ["KMeansSelector", "kmeans_anchors", "item_features"]

_CANDIDATES = ("weighted_mean", "gam", "gam_unweighted", "ridge")


def item_features(responses) -> np.ndarray:
    """Items as points: ``responses.T`` ``(n_items, n_models)`` with NaN replaced by the item's mean.

    An item no model answered (all NaN) becomes the zero vector.
    """
    R = np.asarray(responses, dtype=np.float64)
    if R.ndim != 2:
        raise InputError(f"responses: expected (n_models, n_items), got shape {R.shape}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        means = np.nanmean(R, axis=0)
    means = np.where(np.isnan(means), 0.0, means)
    return np.where(np.isnan(R), means[None, :], R).T.copy()


def _exact_low_dim(F: np.ndarray) -> np.ndarray:
    """The same points in at most ``n_items`` coordinates, with every pairwise distance unchanged.

    ``n_items`` points span an affine subspace of dimension < ``n_items``; writing them in an
    orthonormal basis of it (SVD of the centred points) keeps all distances (and so K-Means' result)
    while cutting the cost when there are more models than items (gsm8k: 3260 -> 486 coordinates).
    """
    n, d = F.shape
    if d <= n:
        return F
    Fc = F - F.mean(axis=0)
    U, S, _ = np.linalg.svd(Fc, full_matrices=False)
    return U * S


def kmeans_anchors(responses, k: int, seed: int = 0, n_init: int = 10, max_iter: int = 300):
    """K-Means anchor items of training ``responses`` ``(n_models, n_items)``.

    Returns ``(idx, sizes, inertia)``: ``idx`` ``(k,)`` distinct item positions in increasing order,
    ``sizes`` ``(k,)`` the number of items in each anchor's cluster (sums to ``n_items``) and the
    K-Means inertia. The anchor of a cluster is its member nearest the centroid (ties: lowest index).
    When the items have fewer than ``k`` distinct score vectors (K-Means then leaves clusters empty),
    the missing anchors are the items farthest from every anchor so far, and each item's weight goes
    to its nearest anchor. Same seed, same anchors.
    """
    from sklearn.cluster import KMeans

    from .._runtime import single_thread

    n_items = np.shape(responses)[1] if np.ndim(responses) == 2 else 0
    if not 1 <= k <= n_items:
        raise InputError(f"k: {k} must be between 1 and the {n_items} items")
    # one thread: on a shared 2-core machine OpenMP/BLAS oversubscription makes K-Means 10-20x slower
    with warnings.catch_warnings(), single_thread():
        warnings.simplefilter("ignore")  # ConvergenceWarning when there are fewer distinct points than k
        F = _exact_low_dim(item_features(responses))
        km = KMeans(n_clusters=k, n_init=n_init, max_iter=max_iter, random_state=seed).fit(F)
    labels = km.labels_
    d2 = ((F - km.cluster_centers_[labels]) ** 2).sum(axis=1)  # each item's squared distance to its centroid
    reps, sizes = [], []
    for c in range(k):
        members = np.flatnonzero(labels == c)
        if members.size == 0:
            continue
        reps.append(int(members[np.lexsort((members, d2[members]))[0]]))
        sizes.append(float(members.size))
    if len(reps) < k:  # degenerate: fewer distinct item vectors than k
        chosen = list(reps)
        dist = ((F[:, None, :] - F[None, chosen, :]) ** 2).sum(axis=2).min(axis=1)
        dist[chosen] = -1.0
        while len(chosen) < k:
            j = int(np.argmax(dist))  # first index among ties
            chosen.append(j)
            dist = np.minimum(dist, ((F - F[j]) ** 2).sum(axis=1))
            dist[chosen] = -1.0
        near = ((F[:, None, :] - F[None, chosen, :]) ** 2).sum(axis=2).argmin(axis=1)
        reps, sizes = chosen, np.bincount(near, minlength=k).astype(float).tolist()
    idx = np.asarray(reps, dtype=np.intp)
    sizes = np.asarray(sizes, dtype=np.float64)
    order = np.argsort(idx)
    return idx[order], sizes[order], float(km.inertia_)


class KMeansSelector(Selector):
    """K-Means anchor items (one per cluster of items' training score vectors), cluster-size weights.

    Parameters
    ----------
    k : int
        Number of items (= clusters).
    seed : int, default 0
        K-Means ``random_state``; same seed, same items.
    n_init : int, default 10
        K-Means restarts (the best inertia wins); 10 is scikit-learn's classic default.
    max_iter : int, default 300
        Lloyd iterations per restart.
    n_splines, lam : default 25, 5.0
        The GAM candidates' spline basis size and smoothing penalty.
    candidates : tuple of str, default ("weighted_mean", "gam", "gam_unweighted")
        Reconstructor candidates, chosen on validation RMSE: ``weighted_mean`` (the cluster-size-weighted
        anchor mean, pp; it estimates the mean over the item pool, so on the metabench pools it is
        biased against the whole-benchmark target), ``gam`` (a GAM of the target on that weighted
        mean) and ``gam_unweighted`` (the GAM on the plain anchor mean, as every other method has it: on
        gsm8k it beats the weighted GAM, on arc the weights help). ``ridge`` may be added.
    """

    name = "kmeans"
    signal = "responses"

    def __init__(self, k, seed=0, progress=True, n_init: int = 10, max_iter: int = 300, n_splines: int = 25,
                 lam: float = 5.0, candidates=("weighted_mean", "gam", "gam_unweighted")):
        super().__init__(k, seed, progress)
        self.n_init = n_init
        self.max_iter = max_iter
        self.n_splines = n_splines
        self.lam = lam
        self.candidates = tuple(str(c) for c in ([candidates] if isinstance(candidates, str) else candidates))

    def select(self, train, val) -> np.ndarray:
        if not (isinstance(self.n_init, (int, np.integer)) and self.n_init >= 1):
            raise InputError(f"n_init: {self.n_init!r} must be a whole number >= 1")
        unknown = set(self.candidates) - set(_CANDIDATES)
        if unknown or not self.candidates:
            raise InputError(f"candidates: {sorted(unknown) or 'empty'} not understood; "
                             f"choose from {', '.join(_CANDIDATES)}")
        idx, sizes, inertia = kmeans_anchors(train.responses, self.k, seed=self.seed, n_init=self.n_init,
                                             max_iter=self.max_iter)
        self.weights_ = sizes
        self.info_.update({"cluster_sizes": sizes.astype(int).tolist(), "kmeans_inertia": inertia})
        return idx

    def reconstructor_candidates(self, train, idx) -> dict:
        w = [float(v) for v in self.weights_]
        make = {
            "weighted_mean": lambda: WeightedMeanReconstructor(weights=w),
            "gam": lambda: GAMReconstructor(n_splines=self.n_splines, lam=self.lam, weights=w),
            "gam_unweighted": lambda: GAMReconstructor(n_splines=self.n_splines, lam=self.lam),
            "ridge": RidgeReconstructor,
        }
        return {c: make[c] for c in self.candidates}
