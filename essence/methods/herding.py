"""``herding``: Kernel Herding on a small LM's hidden states of the item texts (:mod:`essence.features.lm`)."""

from __future__ import annotations

import numpy as np
from tqdm.auto import tqdm

from ..data import Responses
from ..data.checks import Real, Whole, real_number, store_params, whole_number
from ..data.errors import InputError
from ..reconstructors.kernel import sq_dists
from .base import TextOnlySelector, check_k, require_texts

__all__ = ["HerdingSelector", "kernel_herding", "median_heuristic"]

#: pool size above which the median heuristic uses a fixed random subsample of this many items
MEDIAN_MAX_POINTS = 2000


def _features(X) -> np.ndarray:
    try:
        X = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError("X: expected a numeric 2-D array (n_items, n_features)") from None
    if X.ndim != 2 or X.shape[0] == 0:
        raise InputError(f"X: expected a 2-D array (n_items, n_features) with at least one row, got shape {X.shape}")
    if not np.isfinite(X).all():
        raise InputError(f"X: {int((~np.isfinite(X)).sum())} non-finite value(s); features must be finite")
    return X


def median_heuristic(X, max_points: int = MEDIAN_MAX_POINTS) -> float:
    """``median_{i<j} ||x_i - x_j||`` over the rows of ``X`` ``(n, d)`` (at most ``max_points``, drawn seeded)."""
    X = _features(X)
    n = X.shape[0]
    if n < 2:
        raise InputError("X: the median heuristic needs at least 2 items; pass a bandwidth explicitly")
    if n > max_points:
        X = X[np.sort(np.random.default_rng(0).choice(n, size=max_points, replace=False))]
        n = max_points
    iu = np.triu_indices(n, k=1)
    sigma = float(np.median(np.sqrt(sq_dists(X, X)[iu])))
    if not sigma > 0:
        raise InputError("X: the median pairwise distance is 0 (most items have identical features); "
                         "pass bandwidth= explicitly")
    return sigma


def kernel_herding(X, k: int, bandwidth: float | None = None, seed: int = 0, block_size: int = 1024,
                   progress: bool = False) -> tuple[np.ndarray, dict]:
    """``(idx, info)``: ``k`` rows of ``X`` ``(n, d)`` in the order greedy MMD minimisation chooses them, and
    ``{"bandwidth", "mmd" (after each step), "score" (each winner's)}``. ``bandwidth``: RBF sigma (None: the
    median heuristic); ``seed`` only breaks ties; ``block_size``: kernel rows held at once."""
    X = _features(X)
    n = X.shape[0]
    k = check_k(k, n)
    block_size = whole_number("block_size", block_size, 1)
    sigma = median_heuristic(X) if bandwidth is None else real_number("bandwidth", bandwidth, 0.0, open_min=True)
    gamma = 1.0 / (2.0 * sigma**2)
    x2 = (X * X).sum(axis=1)

    # m_i = mean_j K(x_i, x_j), a block of rows at a time
    k_mean = np.empty(n)
    for start in range(0, n, block_size):
        stop = min(start + block_size, n)
        k_mean[start:stop] = np.exp(-gamma * sq_dists(X[start:stop], X, x2[start:stop], x2)).mean(axis=1)
    pool_term = float(k_mean.mean())  # 1/n^2 sum_ij K_ij

    priority = np.random.default_rng(seed).permutation(n)  # tie-break order
    selected_sum = np.zeros(n)  # sum_{s in S} K(x_s, x_i)
    chosen = np.zeros(n, dtype=bool)
    idx = np.empty(k, dtype=np.intp)
    mmd, scores = [], []
    sum_ss = 0.0  # sum_{i,j in S} K_ij
    sum_m = 0.0  # sum_{i in S} m_i
    for t in tqdm(range(k), desc="herding", unit="item", disable=not progress):
        score = k_mean - selected_sum / (t + 1)
        score[chosen] = -np.inf
        best = score.max()
        tied = np.flatnonzero(score >= best - 1e-12 * max(1.0, abs(best)))
        i = int(tied[np.argmin(priority[tied])])
        col = np.exp(-gamma * sq_dists(X, X[i:i + 1], x2, x2[i:i + 1])[:, 0])
        sum_ss += 2.0 * selected_sum[i] + col[i]
        sum_m += k_mean[i]
        selected_sum += col
        chosen[i] = True
        idx[t] = i
        mmd2 = sum_ss / (t + 1) ** 2 - 2.0 * sum_m / (t + 1) + pool_term
        mmd.append(float(np.sqrt(max(mmd2, 0.0))))
        scores.append(float(score[i]))
    return idx, {"bandwidth": sigma, "mmd": mmd, "score": scores}


class HerdingSelector(TextOnlySelector):
    """Kernel Herding on the item texts' LM hidden states (no model results); ``bandwidth``: RBF sigma (None: median
    heuristic); ``max_length``: tokens per text; ``batch_size``: texts per pass. Fitted: ``bandwidth_``, ``mmd_``."""

    name = "herding"
    signal = "text (LM hidden states)"
    _domains = {**TextOnlySelector._domains, "bandwidth": Real(0.0, open_min=True, none=True), "max_length": Whole(1),
                "batch_size": Whole(1)}
    needs_no_models = True

    def __init__(self, k: int, seed: int = 0, progress: bool = True, bandwidth: float | None = None,
                 max_length: int = 1024, batch_size: int = 16):
        store_params(self, locals())

    def select(self, train: Responses, val: Responses) -> np.ndarray:
        texts = require_texts(train, self.name)
        from ..features.lm import MODEL_ID, lm_hidden_states

        X = lm_hidden_states(texts, batch_size=self.batch_size, max_length=self.max_length, progress=self.progress)
        idx, info = kernel_herding(X, self.k, bandwidth=self.bandwidth, seed=self.seed, progress=self.progress)
        self.bandwidth_ = info["bandwidth"]
        self.mmd_ = np.asarray(info["mmd"])
        self.info_.update({"feature_model": MODEL_ID, "bandwidth": info["bandwidth"], "mmd": info["mmd"]})
        return idx
