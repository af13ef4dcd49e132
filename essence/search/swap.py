"""A swap search for the k items whose plain mean, through a line, predicts the full score best (LOO RMSE, pp)."""

from __future__ import annotations

import numpy as np

from ..data.errors import InputError

__all__ = ["loo_line_rmse", "swap_search"]


def loo_line_rmse(s, y) -> np.ndarray:
    """``(m,)`` leave-one-out RMSE (pp) of the line ``y ~ s`` for each column of ``s`` ``(n,)`` or ``(n, m)``."""
    s = np.asarray(s, dtype=np.float64)
    s = s[:, None] if s.ndim == 1 else s
    y = np.asarray(y, dtype=np.float64)
    n = y.size
    sc = s - s.mean(axis=0)
    yc = y - y.mean()
    ss = np.maximum((sc ** 2).sum(axis=0), 1e-12)
    r = yc[:, None] - sc * ((sc * yc[:, None]).sum(axis=0) / ss)
    h = 1.0 / n + sc ** 2 / ss
    return np.sqrt(np.mean((r / np.maximum(1.0 - h, 1e-6)) ** 2, axis=0))


def swap_search(R, y, k: int, seed: int = 0, checkpoints=(0, 3000), fixed=()) -> dict[int, np.ndarray]:
    """``{T: (k,) sorted item positions}``: the subset after ``T`` proposals, for each ``T`` of ``checkpoints``.
    ``fixed``: positions that every subset holds (never swapped out; at most ``k``); the search fills the rest,
    starting from a seeded random draw among the other items."""
    R = np.asarray(R, dtype=np.float64)
    if np.isnan(R).any():
        means = np.nanmean(np.where(np.isnan(R).all(axis=0), 0.5, R), axis=0)
        R = np.where(np.isnan(R), means, R)
    n, N = R.shape
    batch = 16
    if not 1 <= k <= N:
        raise InputError(f"k: must be between 1 and the {N} items, got {k}")
    fixed = np.unique(np.asarray(fixed, dtype=np.intp))
    if fixed.size > k or (fixed.size and (fixed[0] < 0 or fixed[-1] >= N)):
        raise InputError(f"fixed: at most k = {k} distinct positions among the {N} items, got {fixed.size}")
    rng = np.random.default_rng(seed)
    if fixed.size:
        cur = np.r_[fixed, rng.choice(np.setdiff1d(np.arange(N), fixed), size=k - fixed.size, replace=False)]
    else:
        cur = rng.choice(N, size=k, replace=False)
    free = k - fixed.size  # the positions of cur that may be swapped out: the last ``free``
    inside = np.zeros(N, dtype=bool)
    inside[cur] = True
    total = R[:, cur].sum(axis=1)
    best = loo_line_rmse(total / k, y)[0]
    cps = sorted({int(t) for t in checkpoints})
    out = {0: np.sort(cur)} if 0 in cps else {}
    steps = -(-cps[-1] // batch) if k < N and free else 0
    drop, draws = fixed.size + rng.integers(free or 1, size=steps), rng.integers(N, size=(steps, batch))
    for t in range(steps):
        i, js = drop[t], draws[t]
        js = js[~inside[js]]
        if js.size:
            cand = (total - R[:, cur[i]])[:, None] + R[:, js]
            v = loo_line_rmse(cand / k, y)
            j = int(np.argmin(v))
            if v[j] < best:
                best, total = v[j], cand[:, j]
                inside[cur[i]], inside[js[j]] = False, True
                cur[i] = js[j]
        for c in cps:
            if c not in out and c <= (t + 1) * batch:
                out[c] = np.sort(cur)
    for c in cps:  # a pool of exactly k items: nothing to swap
        out.setdefault(c, np.sort(cur))
    return out
