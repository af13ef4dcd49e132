"""How well estimated full scores match the true ones: ``y_true``, ``y_pred`` ``(n_models,)`` in pp -> a float."""

from __future__ import annotations

import numpy as np
from scipy import stats
from .errors import InputError

__all__ = ["rmse", "mae", "kendall", "spearman", "pearson", "rank_error_within", "coverage", "summary",
           "ratio_to_random", "paired_with_random"]


def _pair(y_true, y_pred) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(y_true, dtype=np.float64)
    b = np.asarray(y_pred, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape:
        raise InputError(f"y_true and y_pred must be 1-D of the same length, got shapes {a.shape} and {b.shape}")
    if a.size == 0:
        raise InputError("y_true: no models to score")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise InputError("y_true / y_pred: contain NaN or inf; score only models with finite estimates")
    return a, b


def rmse(y_true, y_pred) -> float:
    """Root mean squared error, pp: ``sqrt(mean((y_pred - y_true)^2))``."""
    a, b = _pair(y_true, y_pred)
    return float(np.sqrt(np.mean((b - a) ** 2)))


def mae(y_true, y_pred) -> float:
    """Mean absolute error, pp: ``mean(|y_pred - y_true|)``."""
    a, b = _pair(y_true, y_pred)
    return float(np.mean(np.abs(b - a)))


def kendall(y_true, y_pred) -> float:
    """Kendall's tau-b (``scipy.stats.kendalltau``); NaN when either vector is constant."""
    a, b = _pair(y_true, y_pred)
    return float(stats.kendalltau(a, b).statistic)


def spearman(y_true, y_pred) -> float:
    """Spearman's rank correlation (Pearson correlation of average ranks). NaN when either is constant."""
    a, b = _pair(y_true, y_pred)
    return float(stats.spearmanr(a, b).statistic)


def pearson(y_true, y_pred) -> float:
    """Pearson's linear correlation of the scores. NaN when either is constant."""
    a, b = _pair(y_true, y_pred)
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    return float(stats.pearsonr(a, b).statistic)


def rank_error_within(y_true, y_pred, x: float) -> float:
    """Share of models (0-1) with ``|r_pred - r_true| <= x / 100 * n`` (ranks 1 = best, ties averaged)."""
    a, b = _pair(y_true, y_pred)
    if not 0 <= x <= 100:
        raise InputError(f"x: {x} must be a percentage in [0, 100]")
    r_true = stats.rankdata(-a)
    r_pred = stats.rankdata(-b)
    return float(np.mean(np.abs(r_pred - r_true) <= x / 100.0 * a.size + 1e-9))


def coverage(y_true, lower, upper) -> float:
    """Share of models (0-1) whose true score lies in ``[lower, upper]`` (pp)."""
    a = np.asarray(y_true, dtype=np.float64)
    lo = np.asarray(lower, dtype=np.float64)
    hi = np.asarray(upper, dtype=np.float64)
    if not (a.shape == lo.shape == hi.shape) or a.ndim != 1:
        raise InputError(f"y_true, lower, upper must be 1-D of one length, got {a.shape}, {lo.shape}, {hi.shape}")
    if a.size == 0:
        raise InputError("y_true: no models to score")
    if (lo > hi).any():
        raise InputError("lower: some lower bounds exceed their upper bounds")
    return float(np.mean((a >= lo) & (a <= hi)))


def summary(y_true, y_pred, lower=None, upper=None) -> dict[str, float]:
    """``n_models, rmse, mae, kendall, spearman, pearson, rank_err_5, rank_err_10`` (and with bounds ``coverage``)."""
    a, b = _pair(y_true, y_pred)
    out = {"n_models": int(a.size), "rmse": rmse(a, b), "mae": mae(a, b), "kendall": kendall(a, b),
           "spearman": spearman(a, b), "pearson": pearson(a, b), "rank_err_5": rank_error_within(a, b, 5),
           "rank_err_10": rank_error_within(a, b, 10)}
    if lower is not None and upper is not None:
        out["coverage"] = coverage(a, lower, upper)
    return out


def ratio_to_random(rmse_method, rmse_random) -> float:
    """Geometric mean of ``rmse_method / rmse_random`` over paired runs (pairs with a NaN left out; none: NaN)."""
    a = np.asarray(rmse_method, dtype=np.float64).ravel()
    b = np.asarray(rmse_random, dtype=np.float64).ravel()
    if a.shape != b.shape:
        raise InputError(f"ratio_to_random: {a.size} method RMSEs but {b.size} random RMSEs; pass one pair per run")
    ok = np.isfinite(a) & np.isfinite(b)
    if (a[ok] <= 0).any() or (b[ok] <= 0).any():
        raise InputError("ratio_to_random: RMSEs must be > 0 (pp)")
    if not ok.any():
        return float("nan")
    return float(np.exp(np.mean(np.log(a[ok] / b[ok]))))


def paired_with_random(results, method: str, k: int, datasets=None) -> tuple[np.ndarray, np.ndarray]:
    """``(rmse_method, rmse_random)`` ``(n_pairs,)`` for :func:`ratio_to_random` from a sweep's results table: one
    pair per (dataset, seed) at ``k`` where both have a row (``datasets``: only these); a failed run is NaN."""
    df = results[results["k"] == k]
    if datasets is not None:
        df = df[df["dataset"].isin(list(datasets))]
    rmse = df["rmse"].where(df["error"].fillna("") == "")
    keyed = {(d, m, s): v for d, m, s, v in zip(df["dataset"], df["method"], df["seed"], rmse)}
    pairs = [(v, keyed[d, "random", s]) for (d, m, s), v in keyed.items() if m == method and (d, "random", s) in keyed]
    if not pairs:
        return np.empty(0), np.empty(0)
    a, b = zip(*pairs)
    return np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
