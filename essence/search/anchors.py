"""K-Means anchor items (``kmeans`` and ``tinybench``): the item nearest each centroid of the items' score vectors."""

from __future__ import annotations

import warnings

import numpy as np

from ..data._runtime import single_thread
from ..data.checks import as_matrix
from ..data.errors import InputError
from ..reconstructors.base import fill_means

__all__ = ["item_features", "kmeans_anchors"]


def item_features(responses) -> np.ndarray:
    """``responses.T`` ``(n_items, n_models)`` with NaN replaced by the item's mean (0 for an unanswered item)."""
    return fill_means(as_matrix(responses, "responses"))[0].T.copy()


def _exact_low_dim(F: np.ndarray) -> np.ndarray:
    """The same points in at most ``n_items`` coordinates (SVD), pairwise distances unchanged."""
    n, d = F.shape
    if d <= n:
        return F
    Fc = F - F.mean(axis=0)
    U, S, _ = np.linalg.svd(Fc, full_matrices=False)
    return U * S


def kmeans_anchors(responses, k: int, seed: int = 0, n_init: int = 10, max_iter: int = 300):
    """``(idx, sizes, inertia)`` of ``responses`` ``(n_models, n_items)``: ``idx`` ``(k,)`` increasing positions
    of each cluster's item nearest its centroid, ``sizes`` ``(k,)`` cluster sizes, the K-Means inertia."""
    from sklearn.cluster import KMeans

    n_items = np.shape(responses)[1] if np.ndim(responses) == 2 else 0
    if not 1 <= k <= n_items:
        raise InputError(f"k: {k} must be between 1 and the {n_items} items")
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
