"""EssenceBench step 3: item attribution (pp) by Explainable Boosting Machines fitted on the GA's elite subsets."""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass

import numpy as np
from tqdm.auto import tqdm

from ..data.errors import InputError

__all__ = ["AttributionResult", "ebm_attribution", "shape_norms", "attribution_groups", "fit_ebm"]


@dataclass
class AttributionResult:
    """``attribution`` ``(M,)`` pp; ``counts`` ``(M,)`` elites holding each item; ``per_elite`` ``(n_elites, M)``
    shape-function norms (NaN where the elite lacks the item); ``n_models`` fed to each EBM; ``seconds``."""

    attribution: np.ndarray
    counts: np.ndarray
    per_elite: np.ndarray
    n_models: int
    seconds: float


def fit_ebm(X, y, *, seed: int = 0, max_rounds: int = 2000):
    """An ``ExplainableBoostingRegressor`` without interactions fitted on ``X`` ``(n, k)`` -> ``y`` ``(n,)`` pp."""
    from interpret.glassbox import ExplainableBoostingRegressor

    ebm = ExplainableBoostingRegressor(interactions=0, outer_bags=1, learning_rate=0.04, max_rounds=max_rounds,
                                       early_stopping_rounds=50, smoothing_rounds=200, n_jobs=1, random_state=int(seed))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ebm.fit(np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64))
    return ebm


def shape_norms(ebm, n_features: int) -> np.ndarray:
    """``(n_features,)`` bin-count-weighted L2 norm (pp) of each feature's main-effect shape function."""
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
                    max_rounds: int = 2000) -> AttributionResult:
    """Attribution of every pool item from EBMs on elite ``masks`` ``(n_elites, M)`` (``max_models`` None: all)."""
    t0 = time.perf_counter()
    R = np.asarray(R_train, dtype=np.float64)
    y = np.asarray(y_train, dtype=np.float64)
    masks = np.asarray(masks, dtype=bool)
    if R.ndim != 2 or y.shape != (R.shape[0],):
        raise InputError(f"R_train / y_train: shapes {R.shape} and {y.shape} do not match (n_models, M) and (n_models,)")
    if masks.ndim != 2 or masks.shape[1] != R.shape[1] or masks.shape[0] == 0:
        raise InputError(f"masks: expected (n_elites >= 1, {R.shape[1]}) bool, got shape {masks.shape}")
    rng = np.random.default_rng(seed)
    n = R.shape[0]
    rows = (np.sort(rng.choice(n, size=int(max_models), replace=False))
            if max_models is not None and n > int(max_models) else np.arange(n))
    seeds = rng.integers(0, 2**31 - 1, size=masks.shape[0])
    per = np.full(masks.shape, np.nan)
    for e in tqdm(range(masks.shape[0]), desc="EBM attribution", unit="ebm", disable=not progress, leave=False):
        cols = np.flatnonzero(masks[e])
        ebm = fit_ebm(R[np.ix_(rows, cols)], y[rows], seed=int(seeds[e]), max_rounds=max_rounds)
        per[e, cols] = shape_norms(ebm, cols.size)
    counts = masks.sum(axis=0)
    with np.errstate(invalid="ignore"):
        A = np.where(counts > 0, np.nansum(per, axis=0) / np.maximum(counts, 1), 0.0)
    return AttributionResult(attribution=A, counts=counts, per_elite=per, n_models=int(rows.size),
                             seconds=time.perf_counter() - t0)


def attribution_groups(attribution, k: int, seed=0, group_fraction: float = 0.75) -> dict[str, np.ndarray]:
    """``{"high", "low", "random"}``: sorted positions of the top, bottom and random ``group_fraction`` of items."""
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
    rng = np.random.default_rng(seed)
    return {"high": np.sort(order[:size]), "low": np.sort(order[M - size:]),
            "random": np.sort(rng.choice(M, size=size, replace=False))}
