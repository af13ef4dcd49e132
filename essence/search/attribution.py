"""EssenceBench step 3: attribution of items by Explainable Boosting Machines fitted on elite subsets.

For each elite mask ``m`` (a k-subset found by the GA), an EBM (interpret's
``ExplainableBoostingRegressor``, no interactions, one outer bag) learns the full score (pp) of the
training models from their responses on the ``k`` items of ``m``: ``y ~ b + sum_l f_l^m(x_l)``. The
attribution of item ``l`` in that EBM is the size of its shape function,

    ||f_l^m|| = sqrt( sum_b w_b f_l^m(b)^2 / sum_b w_b ),

the L2 norm weighted by the training counts ``w_b`` of the bins ``b`` (missing and unseen bins
included with their counts), i.e. the root mean square of the item's contribution over the training
models, in pp. (interpret centres every shape function on the training data, so this is also the
standard deviation of the contribution; for a 0/1 item with accuracy p it equals
``sqrt(p (1 - p)) |f(1) - f(0)|``.) An item's attribution averages over the elites that hold it:

    A_l = sum_m 1{l in m} ||f_l^m|| / sum_m 1{l in m}.

Items held by no elite get ``A_l = 0`` (no evidence that they help) and a count of 0.

:func:`attribution_groups` then splits the pool into **High** (largest A), **Low** (smallest A) and
**Random** groups of ``max(k, ceil(group_fraction * M))`` items each (the public port's 3/4).
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass

import numpy as np

from ..data.errors import InputError
from .genetic import as_generator

__all__ = ["AttributionResult", "ebm_attribution", "shape_norms", "attribution_groups", "fit_ebm"]


@dataclass
class AttributionResult:
    """``attribution``: ``(M,)`` A_l (pp; 0 where ``counts`` is 0); ``counts``: ``(M,)`` elites holding
    each item; ``per_elite``: ``(n_elites, M)`` shape-function norms (NaN where the elite lacks the item);
    ``n_models``: training models fed to each EBM; ``seconds``: wall time of all EBM fits."""

    attribution: np.ndarray
    counts: np.ndarray
    per_elite: np.ndarray
    n_models: int
    seconds: float


def fit_ebm(X, y, *, seed: int = 0, interactions: int = 0, outer_bags: int = 1, learning_rate: float = 0.04,
            max_rounds: int = 2000, early_stopping_rounds: int = 50, smoothing_rounds: int = 200,
            n_jobs: int = 1):
    """Fit an ``ExplainableBoostingRegressor`` on ``X`` ``(n_models, k)`` -> ``y`` ``(n_models,)`` pp.

    The settings are interpret's names; the defaults here are chosen for speed (see
    :class:`essence.methods.essence.EssenceSelector`).
    """
    from interpret.glassbox import ExplainableBoostingRegressor

    ebm = ExplainableBoostingRegressor(
        interactions=interactions, outer_bags=outer_bags, learning_rate=learning_rate, max_rounds=max_rounds,
        early_stopping_rounds=early_stopping_rounds, smoothing_rounds=smoothing_rounds, n_jobs=n_jobs,
        random_state=int(seed),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ebm.fit(np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64))
    return ebm


def shape_norms(ebm, n_features: int) -> np.ndarray:
    """``(n_features,)`` bin-count-weighted L2 norm of each feature's shape function (pp).

    Only main-effect terms are read (the EBMs here have no interactions); a feature the EBM dropped
    gets 0.
    """
    out = np.zeros(n_features)
    for term, scores, weights in zip(ebm.term_features_, ebm.term_scores_, ebm.bin_weights_):
        if len(term) != 1:
            continue
        w = np.asarray(weights, dtype=np.float64).ravel()
        f = np.asarray(scores, dtype=np.float64).ravel()
        tot = w.sum()
        out[term[0]] = math.sqrt(float((w * f * f).sum() / tot)) if tot > 0 else 0.0
    return out


def ebm_attribution(R_train, y_train, masks, *, max_models: int | None = 400, seed=0, progress: bool = False,
                    **ebm_params) -> AttributionResult:
    """Attribution ``A_l`` of every pool item from EBMs fitted on elite masks.

    Parameters
    ----------
    R_train : (n_train, M) training models' scores on the pool, [0, 1], NaN = missing (EBMs bin NaN
        separately).
    y_train : (n_train,) full scores, pp.
    masks : (n_elites, M) bool elite masks (each with the same k ones).
    max_models : at most this many training models per EBM, drawn without replacement (seeded) once and
        shared by all EBMs of the call; None = all.
    seed : int or Generator, for the model subsample and the EBMs' random_state.
    ebm_params : passed to :func:`fit_ebm` (interactions, outer_bags, learning_rate, max_rounds,
        early_stopping_rounds, smoothing_rounds, n_jobs).
    """
    t0 = time.perf_counter()
    R = np.asarray(R_train, dtype=np.float64)
    y = np.asarray(y_train, dtype=np.float64)
    masks = np.asarray(masks, dtype=bool)
    if R.ndim != 2 or y.shape != (R.shape[0],):
        raise InputError(f"R_train / y_train: shapes {R.shape} and {y.shape} do not match (n_models, M) and (n_models,)")
    if masks.ndim != 2 or masks.shape[1] != R.shape[1] or masks.shape[0] == 0:
        raise InputError(f"masks: expected (n_elites >= 1, {R.shape[1]}) bool, got shape {masks.shape}")
    rng = as_generator(seed)
    n = R.shape[0]
    rows = np.arange(n)
    if max_models is not None and n > int(max_models):
        rows = np.sort(rng.choice(n, size=int(max_models), replace=False))
    seeds = rng.integers(0, 2**31 - 1, size=masks.shape[0])
    per = np.full(masks.shape, np.nan)
    from tqdm.auto import tqdm

    for e in tqdm(range(masks.shape[0]), desc="EBM attribution", unit="ebm", disable=not progress, leave=False):
        cols = np.flatnonzero(masks[e])
        ebm = fit_ebm(R[np.ix_(rows, cols)], y[rows], seed=int(seeds[e]), **ebm_params)
        per[e, cols] = shape_norms(ebm, cols.size)
    counts = masks.sum(axis=0)
    with np.errstate(invalid="ignore"):
        A = np.where(counts > 0, np.nansum(per, axis=0) / np.maximum(counts, 1), 0.0)
    return AttributionResult(attribution=A, counts=counts, per_elite=per, n_models=int(rows.size),
                             seconds=time.perf_counter() - t0)


def attribution_groups(attribution, k: int, seed=0, group_fraction: float = 0.75) -> dict[str, np.ndarray]:
    """Split a pool of ``M`` items into ``{"high", "low", "random"}`` groups by attribution.

    Each group has ``size = min(M, max(k, ceil(group_fraction * M)))`` items: the ``size`` largest
    attributions, the ``size`` smallest, and ``size`` items drawn uniformly (seeded). Ties are broken by
    position (stable sort). Returns sorted ``(size,)`` int positions into the pool.
    """
    A = np.asarray(attribution, dtype=np.float64)
    if A.ndim != 1 or not np.isfinite(A).all():
        raise InputError("attribution: expected a finite 1-D array (one value per pool item)")
    M = A.size
    if not 1 <= k <= M:
        raise InputError(f"k: {k} must be between 1 and the {M} pool items")
    if not 0 < group_fraction <= 1:
        raise InputError(f"group_fraction: must be in (0, 1], got {group_fraction}")
    size = int(min(M, max(k, math.ceil(group_fraction * M))))
    order = np.argsort(-A, kind="stable")
    rng = as_generator(seed)
    return {
        "high": np.sort(order[:size]),
        "low": np.sort(order[M - size:]),
        "random": np.sort(rng.choice(M, size=size, replace=False)),
    }
