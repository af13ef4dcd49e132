"""``herding``: Kernel Herding on a small LM's last-layer hidden states; GAM reconstruction.

Each item text is read once by SmolLM2-135M-Instruct and represented by the final layer's hidden
state at its last token, ``x_i`` in R^576 (:func:`essence.features.lm_hidden_states`). With the RBF
kernel ``K(x, y) = exp(-||x - y||^2 / (2 sigma^2))`` the squared maximum mean discrepancy between a
subset ``S`` (``t`` items, equal weights) and the whole pool ``P`` (``n`` items) is

    MMD^2(S) = 1/t^2 sum_{i,j in S} K_ij  -  2/t sum_{i in S} m_i  +  1/n^2 sum_{i,j in P} K_ij,
    m_i = 1/n sum_{j in P} K_ij          (the kernel mean embedding of the pool, evaluated at item i).

Herding builds ``S`` greedily. Adding item ``x`` to ``t`` chosen items changes MMD^2 by terms in
``x`` that, because ``K_xx = 1`` for every item, reduce to maximising

    score[x] = m_x - (sum_{s in S} K_sx) / (t + 1),       x not in S,

the rule of the survey (``K_mean[i] - K_selected_sum[i] / (t + 1)``, chosen items masked). So every
step is the exact greedy minimiser of MMD^2 between the subset and the pool: the subset's "centre of
mass" in the kernel's feature space follows the pool's.

Bandwidth: ``sigma`` = the median heuristic, the median Euclidean distance ``||x_i - x_j||`` over all
pairs ``i < j`` of items (computed on 2000 items drawn with a fixed generator when the pool is
larger), unless given.

Cost: ``m`` is computed in blocks of rows, and each step needs only the kernel column of the item
just chosen, added to a running sum; memory is O(block_size * n), never the n x n kernel.
"""

from __future__ import annotations

import numpy as np

from ..data import Responses
from ..data.checks import Real, Whole, whole_number
from ..data.errors import InputError
from .base import TextOnlySelector, check_k, require_texts

__all__ = ["HerdingSelector", "kernel_herding", "median_heuristic", "rbf_kernel", "require_texts"]

#: Pool size above which the median heuristic is computed on a fixed random subsample of this many items.
MEDIAN_MAX_POINTS = 2000


def _features(X, what: str = "X") -> np.ndarray:
    try:
        X = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{what}: expected a numeric 2-D array (n_items, n_features)") from None
    if X.ndim != 2 or X.shape[0] == 0:
        raise InputError(f"{what}: expected a 2-D array (n_items, n_features) with at least one row, got shape {X.shape}")
    if not np.isfinite(X).all():
        raise InputError(f"{what}: {int((~np.isfinite(X)).sum())} non-finite value(s); features must be finite")
    return X


def _sq_dists(A: np.ndarray, B: np.ndarray, a2: np.ndarray | None = None, b2: np.ndarray | None = None) -> np.ndarray:
    """Squared Euclidean distances ``(len(A), len(B))``, clipped at 0."""
    a2 = (A * A).sum(axis=1) if a2 is None else a2
    b2 = (B * B).sum(axis=1) if b2 is None else b2
    d = a2[:, None] + b2[None, :] - 2.0 * (A @ B.T)
    return np.maximum(d, 0.0, out=d)


def median_heuristic(X, max_points: int = MEDIAN_MAX_POINTS) -> float:
    """Median heuristic bandwidth: ``median_{i<j} ||x_i - x_j||_2`` over pairs of distinct rows of ``X``.

    ``X``: ``(n, d)`` features. Pools of more than ``max_points`` rows use ``max_points`` rows drawn
    without replacement by ``numpy.random.default_rng(0)`` (fixed, independent of any method seed).
    Returns sigma in the units of ``X``. ValueError when there are fewer than 2 rows or the median
    distance is 0 (most rows identical): pass a bandwidth explicitly then.
    """
    X = _features(X)
    n = X.shape[0]
    if n < 2:
        raise InputError("X: the median heuristic needs at least 2 items; pass a bandwidth explicitly")
    if n > max_points:
        X = X[np.sort(np.random.default_rng(0).choice(n, size=max_points, replace=False))]
        n = max_points
    iu = np.triu_indices(n, k=1)
    sigma = float(np.median(np.sqrt(_sq_dists(X, X)[iu])))
    if not sigma > 0:
        raise InputError(
            "X: the median pairwise distance is 0 (most items have identical features); pass bandwidth= explicitly"
        )
    return sigma


def rbf_kernel(X, Y, bandwidth: float) -> np.ndarray:
    """RBF kernel matrix ``exp(-||x_i - y_j||^2 / (2 bandwidth^2))``, shape ``(len(X), len(Y))``, values in (0, 1]."""
    bandwidth = _check_bandwidth(bandwidth)
    return np.exp(-_sq_dists(_features(X, "X"), _features(Y, "Y")) / (2.0 * bandwidth**2))


def _check_bandwidth(bandwidth) -> float:
    try:
        b = float(bandwidth)
    except (TypeError, ValueError):
        raise InputError(f"bandwidth: must be a positive number or None (median heuristic), got {bandwidth!r}") from None
    if not np.isfinite(b) or b <= 0:
        raise InputError(f"bandwidth: must be a positive number or None (median heuristic), got {bandwidth!r}")
    return b


def kernel_herding(
    X,
    k: int,
    bandwidth: float | None = None,
    seed: int = 0,
    block_size: int = 1024,
    progress: bool = False,
) -> tuple[np.ndarray, dict]:
    """Greedy Kernel Herding: ``k`` rows of ``X`` whose RBF mean embedding tracks that of all rows.

    Parameters
    ----------
    X : array, shape (n, d)
        Item features (any units; distances are Euclidean).
    k : int
        Number of items to choose, ``1 <= k <= n``.
    bandwidth : float or None
        RBF sigma in the units of ``X``; None = :func:`median_heuristic`.
    seed : int
        Breaks ties only: when several unchosen items share the best score (within a relative 1e-12,
        e.g. items with identical texts), the one first in ``numpy.random.default_rng(seed).permutation(n)``
        wins. Without ties the result does not depend on ``seed``.
    block_size : int
        Rows of the kernel held at once while computing the pool's mean embedding.
    progress : bool
        tqdm bar over the k steps.

    Returns
    -------
    idx : ndarray, shape (k,), int
        Chosen rows, in the order chosen (every prefix is itself the herding subset of that size).
    info : dict
        ``bandwidth`` (sigma), ``mmd`` (list of k floats: MMD between the first t+1 chosen items and the
        pool, in kernel units, after each step) and ``score`` (list of k floats: the winning score).
    """
    X = _features(X)
    n = X.shape[0]
    k = check_k(k, n)
    block_size = whole_number("block_size", block_size, 1)
    sigma = median_heuristic(X) if bandwidth is None else _check_bandwidth(bandwidth)
    gamma = 1.0 / (2.0 * sigma**2)
    x2 = (X * X).sum(axis=1)

    # m_i = mean_j K(x_i, x_j), a block of rows at a time
    k_mean = np.empty(n)
    for start in range(0, n, block_size):
        stop = min(start + block_size, n)
        k_mean[start:stop] = np.exp(-gamma * _sq_dists(X[start:stop], X, x2[start:stop], x2)).mean(axis=1)
    pool_term = float(k_mean.mean())  # 1/n^2 sum_ij K_ij

    priority = np.random.default_rng(seed).permutation(n)  # tie-break order
    selected_sum = np.zeros(n)  # sum_{s in S} K(x_s, x_i)
    chosen = np.zeros(n, dtype=bool)
    idx = np.empty(k, dtype=np.intp)
    mmd, scores = [], []
    sum_ss = 0.0  # sum_{i,j in S} K_ij
    sum_m = 0.0  # sum_{i in S} m_i
    from tqdm.auto import tqdm

    for t in tqdm(range(k), desc="herding", unit="item", disable=not progress):
        score = k_mean - selected_sum / (t + 1)
        score[chosen] = -np.inf
        best = score.max()
        tied = np.flatnonzero(score >= best - 1e-12 * max(1.0, abs(best)))
        i = int(tied[np.argmin(priority[tied])])
        col = np.exp(-gamma * _sq_dists(X, X[i:i + 1], x2, x2[i:i + 1])[:, 0])
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
    """Kernel Herding on SmolLM2-135M last-layer hidden states of the item texts; GAM reconstruction.

    Chooses with **no model results at all**: only the item texts are read (one forward pass of the
    small LM per item, cached). The training models are used afterwards, as for every method, to
    fit the GAM that maps the subset score to the full score (validation models pick among the
    reconstructor candidates).

    Parameters
    ----------
    k : int
        Items to choose.
    seed : int
        Only breaks exact ties between equally good items (see :func:`kernel_herding`); the subset is
        otherwise deterministic.
    bandwidth : float or None
        RBF sigma in hidden-state units; None (default) = median pairwise distance over the pool.
    max_length : int
        Tokens per text fed to the LM (default 1024 keeps every shipped text whole).
    batch_size : int
        Texts per forward pass (only matters when features are not cached yet).

    Fitted attributes: ``items_`` (in the order chosen), ``bandwidth_``, ``mmd_`` (``(k,)`` MMD after
    each step), plus those of :class:`~essence.methods.base.Selector`.
    """

    name = "herding"
    signal = "text (LM hidden states)"
    _domains = {**TextOnlySelector._domains, "bandwidth": Real(0.0, open_min=True, none=True), "max_length": Whole(1),
                "batch_size": Whole(1)}
    needs_no_models = True

    def __init__(
        self,
        k: int,
        seed: int = 0,
        progress: bool = True,
        bandwidth: float | None = None,
        max_length: int = 1024,
        batch_size: int = 16,
    ):
        super().__init__(k=k, seed=seed, progress=progress)
        self.bandwidth = bandwidth
        self.max_length = max_length
        self.batch_size = batch_size

    def select(self, train: Responses, val: Responses) -> np.ndarray:
        texts = require_texts(train, self.name)
        if self.bandwidth is not None:
            _check_bandwidth(self.bandwidth)
        from ..features.lm import MODEL_ID, lm_hidden_states

        X = lm_hidden_states(texts, batch_size=self.batch_size, max_length=self.max_length, progress=self.progress)
        idx, info = kernel_herding(X, self.k, bandwidth=self.bandwidth, seed=self.seed, progress=self.progress)
        self.bandwidth_ = info["bandwidth"]
        self.mmd_ = np.asarray(info["mmd"])
        self.info_.update({"feature_model": MODEL_ID, "bandwidth": info["bandwidth"],
                           "mmd": info["mmd"]})
        return idx
