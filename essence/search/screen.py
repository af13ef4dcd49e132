"""EssenceBench on whole benchmarks: a pre-screen that shrinks a big item pool before the redundancy filter
and the genetic search.

Why: the GA's mutation adds about ``M / k`` random items to every child, so on a pool of thousands of items
each child is mostly random; the ridge fitness's ``(M, M)`` Gram matrix and the redundancy filter also grow
with ``M``. Criteria, computed on the training models column chunk by column chunk:

* ``"stratified"`` (default): within each of ``bins`` equal-count bins of training accuracy, the items with
  the largest ``|r_j|`` (point-biserial correlation with the full score, missing cells mean-imputed), so
  every difficulty level keeps its best-discriminating items;
* ``"pbis"``: the ``max_items`` largest ``|r_j|`` overall;
* ``"random"``: a uniform draw (seeded).

Constant items (``r_j`` undefined) rank last.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from ..data.errors import InputError

__all__ = ["SCREENS", "item_statistics", "screen_pool", "stratified_draws"]

SCREENS = ("stratified", "pbis", "random")


def item_statistics(R, y, chunk: int = 2048) -> tuple[np.ndarray, np.ndarray]:
    """``(p, r)``: each item's mean score ``(n_items,)`` (NaN when no model answered) and its
    point-biserial correlation with ``y`` ``(n_items,)`` (0 for constant items), over the rows of ``R``
    ``(n_models, n_items)`` in [0, 1] (NaN = missing, mean-imputed). ``y`` ``(n_models,)`` in pp.
    Works on ``chunk`` columns at a time (float64 temporaries of ``n_models x chunk``)."""
    R = np.asarray(R)
    y = np.asarray(y, dtype=np.float64)
    if R.ndim != 2 or y.shape != (R.shape[0],):
        raise InputError(f"R / y: shapes {R.shape} and {y.shape}; expected (n_models, n_items) and (n_models,)")
    n_items = R.shape[1]
    yc = y - y.mean()
    ny = float(np.linalg.norm(yc))
    p = np.full(n_items, np.nan)
    r = np.zeros(n_items)
    for a in range(0, n_items, chunk):
        X = np.asarray(R[:, a:a + chunk], dtype=np.float64)
        obs = ~np.isnan(X)
        n_obs = obs.sum(axis=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            mean = np.where(obs, X, 0.0).sum(axis=0) / n_obs
        p[a:a + X.shape[1]] = mean
        C = np.where(obs, X - np.where(np.isnan(mean), 0.0, mean), 0.0)
        norm = np.sqrt((C * C).sum(axis=0))
        ok = (n_obs >= 2) & (norm > 1e-12 * np.sqrt(np.maximum(n_obs, 1))) & (ny > 0)
        cov = yc @ C
        r[a:a + X.shape[1]] = np.where(ok, cov / np.where(ok, norm * ny, 1.0), 0.0)
    return p, r


def screen_pool(R, y, max_items: int, method: str = "stratified", bins: int = 10, seed=0) -> dict:
    """Keep at most ``max_items`` of the columns of ``R`` ``(n_models, n_items)`` by ``method`` (see the
    module docstring); ``y`` ``(n_models,)`` full scores, pp.

    Returns ``{"keep": (n_kept,) increasing int positions, "dropped": (n_items - n_kept,) positions,
    "info": JSON-able report}``. With ``n_items <= max_items`` everything is kept (no statistic computed).
    """
    if method not in SCREENS:
        raise InputError(f"screen: {method!r}; choose one of {', '.join(SCREENS)}")
    if isinstance(max_items, bool) or not isinstance(max_items, (int, np.integer)) or max_items < 1:
        raise InputError(f"max_pool: must be a whole number >= 1 (or None for no pre-screen), got {max_items!r}")
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 1:
        raise InputError(f"screen_bins: must be a whole number >= 1, got {bins!r}")
    t0 = time.perf_counter()
    n = int(np.shape(R)[1])
    info = {"method": method, "max_items": int(max_items), "n_items": n}
    if n <= max_items:
        keep = np.arange(n)
        info.update(n_kept=n, n_dropped=0, applied=False, seconds=0.0)
        return {"keep": keep, "dropped": np.array([], dtype=np.intp), "info": info}
    if method == "random":
        rng = np.random.default_rng(seed)
        keep = np.sort(rng.choice(n, size=max_items, replace=False))
    else:
        p, r = item_statistics(R, y)
        score = np.abs(r)
        if method == "pbis":
            keep = np.sort(np.argsort(-score, kind="stable")[:max_items])
        else:
            keep = _stratified(p, score, max_items, int(bins))
        info["pbis_kept_min"] = round(float(score[keep].min()), 4)
        info["pbis_dropped_max"] = round(float(np.delete(score, keep).max()), 4)
        info["item_mean_kept_range"] = [round(float(np.nanmin(p[keep])), 4), round(float(np.nanmax(p[keep])), 4)]
        if method == "stratified":
            info["bins"] = int(bins)
    dropped = np.setdiff1d(np.arange(n), keep)
    info.update(n_kept=int(keep.size), n_dropped=int(dropped.size), applied=True,
                seconds=round(time.perf_counter() - t0, 3))
    return {"keep": keep, "dropped": dropped, "info": info}


def _stratified(p: np.ndarray, score: np.ndarray, max_items: int, bins: int) -> np.ndarray:
    """Equal-count bins of ``p`` (unanswered items last); the top ``score`` items of each bin, the bins'
    quotas summing to ``max_items`` (a bin with fewer items passes its spare quota on)."""
    n = p.size
    order = np.argsort(np.where(np.isnan(p), np.inf, p), kind="stable")
    edges = np.linspace(0, n, bins + 1).round().astype(int)
    groups = [order[edges[b]:edges[b + 1]] for b in range(bins)]
    groups = [g[np.argsort(-score[g], kind="stable")] for g in groups]
    quota = np.diff(np.linspace(0, max_items, bins + 1).round().astype(int))
    take = np.minimum(quota, [g.size for g in groups])
    spare = max_items - int(take.sum())
    for b in range(bins):  # hand unused quota to bins that still have items (in bin order)
        extra = min(spare, groups[b].size - int(take[b]))
        take[b] += extra
        spare -= extra
    return np.sort(np.concatenate([g[:t] for g, t in zip(groups, take)]))


def stratified_draws(p, r, k: int, draws: int = 1, keep: float = 1.0, bins: int = 5, seed=0) -> np.ndarray:
    """``(draws, k)`` item positions (each row increasing): random k-subsets with the pool's difficulty
    profile, among the better-discriminating items of each stratum.

    ``p`` ``(n_items,)`` item accuracies (NaN sorts last), ``r`` ``(n_items,)`` item-score correlations
    (:func:`item_statistics`). The pool is cut into ``bins`` equal-count bins of ``p``; in each bin the
    ``keep`` fraction with the largest signed ``r`` is eligible (at least the bin's share of ``k``; ``keep =
    1`` keeps every item: plain stratified draws); each row draws each bin's share of ``k`` from its eligible
    items (seeded)."""
    groups, quota = _stratified_groups(p, r, k, keep, bins)
    rng = np.random.default_rng(seed)
    out = np.empty((int(draws), k), dtype=np.intp)
    for d in range(int(draws)):
        out[d] = np.sort(np.concatenate([rng.choice(g, size=int(q), replace=False) for g, q in zip(groups, quota)]))
    return out


def _stratified_groups(p, r, k: int, keep: float, bins: int) -> tuple[list, np.ndarray]:
    """``(groups, quota)`` of :func:`stratified_draws`: per equal-count bin of ``p`` (NaN last; ``bins`` capped
    at ``k``), the item positions eligible for drawing (the ``keep`` fraction with the largest signed ``r``,
    at least the bin's share of ``k``), and each bin's share of ``k`` ``(bins,)``."""
    p, r = np.asarray(p, dtype=np.float64), np.asarray(r, dtype=np.float64)
    n = p.size
    if not 0 < float(keep) <= 1:
        raise InputError(f"keep: the fraction of items kept per stratum must be in (0, 1], got {keep!r}")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= n:
        raise InputError(f"k: must be a whole number in [1, {n}], got {k!r}")
    bins = max(1, min(int(bins), k))
    order = np.argsort(np.where(np.isnan(p), np.inf, p), kind="stable")
    edges = np.linspace(0, n, bins + 1).round().astype(int)
    quota = np.diff(np.linspace(0, k, bins + 1).round().astype(int))
    groups = []
    for b in range(bins):
        g = order[edges[b]:edges[b + 1]]
        groups.append(g[np.argsort(-r[g], kind="stable")][:max(int(quota[b]), int(np.ceil(keep * g.size)))])
    return groups, quota
