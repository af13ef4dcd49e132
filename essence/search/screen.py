"""A pre-screen that shrinks a whole benchmark's item pool before the redundancy filter and the search."""

from __future__ import annotations

import time
import warnings

import numpy as np

from ..data.checks import whole_number
from ..data.errors import InputError

__all__ = ["SCREENS", "item_statistics", "screen_pool"]

SCREENS = ("stratified", "pbis", "random")


def item_statistics(R, y, chunk: int = 2048) -> tuple[np.ndarray, np.ndarray]:
    """``(p, r)`` ``(n_items,)``: each item's mean score (NaN: unanswered) and point-biserial correlation with ``y``
    (0: constant), over ``R`` ``(n_models, n_items)`` (NaN mean-imputed), ``chunk`` columns at a time."""
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
    """``{"keep", "dropped": positions, "info"}``: at most ``max_items`` columns of ``R`` kept by ``method``."""
    if method not in SCREENS:
        raise InputError(f"screen: {method!r}; choose one of {', '.join(SCREENS)}")
    max_items, bins = whole_number("max_pool", max_items, 1), whole_number("screen_bins", bins, 1)
    t0 = time.perf_counter()
    n = int(np.shape(R)[1])
    info = {"method": method, "max_items": int(max_items), "n_items": n}
    if n <= max_items:
        info.update(n_kept=n, n_dropped=0, applied=False, seconds=0.0)
        return {"keep": np.arange(n), "dropped": np.array([], dtype=np.intp), "info": info}
    if method == "random":
        keep = np.sort(np.random.default_rng(seed).choice(n, size=max_items, replace=False))
    else:
        p, r = item_statistics(R, y)
        score = np.abs(r)
        keep = (np.sort(np.argsort(-score, kind="stable")[:max_items]) if method == "pbis"
                else _stratified(p, score, max_items, int(bins)))
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
    """The top ``score`` items of each equal-count bin of ``p`` (NaN last), quotas summing to ``max_items``."""
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
