"""Choosing a reconstructor by cross-validation over models, and the candidate lists every method shares.

Candidates are label -> zero-argument factory; ``X`` is ``(n_models, k)`` in [0, 1], ``y`` ``(n_models,)`` in pp,
``R`` ``(n_models, n_pool)`` or None (:func:`~essence.reconstructors.base.fit_reconstructor`)."""

from __future__ import annotations

import time
from typing import Callable

import numpy as np

from ..data.errors import InputError
from ..data.metrics import rmse
from .base import check_X, fit_reconstructor, model_folds
from .combine import COMBINES, GREEDY_STEPS, AverageReconstructor, combine_oof
from .mlp import MIN_MODELS_MLP, MLPReconstructor

__all__ = ["choose_on_validation", "oof_predictions", "cv_rmse", "choose_by_cv", "pool_candidates",
           "choose_average_by_cv"]


def choose_on_validation(candidates: dict[str, Callable[[], object]], X_train, y_train, X_val, y_val):
    """Fit each candidate on the training models; keep the lowest validation RMSE. Returns ``(label, fitted,
    val_rmse_by_label)``; a failed fit is recorded as ``"failed: ..."``; InputError if all fail."""
    scores: dict[str, float | str] = {}
    best = None
    for label, make in candidates.items():
        try:
            rec = make().fit(X_train, y_train)
            err = rmse(y_val, rec.predict(X_val))
        except (ValueError, np.linalg.LinAlgError) as exc:
            scores[label] = f"failed: {exc}"
            continue
        scores[label] = err
        if best is None or err < best[2]:
            best = (label, rec, err)
    if best is None:
        raise InputError(f"no reconstructor could be fitted: {scores}")
    return best[0], best[1], scores


def oof_predictions(make: Callable[[], object], X, y, folds: int = 5, seed: int = 0, R=None) -> np.ndarray:
    """Out-of-fold predictions ``(n,)`` pp: each fold of ``model_folds(n, folds, seed)`` predicted by ``make()``
    fitted on the other folds (the same folds for every candidate)."""
    X = check_X(X)
    y = np.asarray(y, dtype=np.float64)
    lab = model_folds(len(y), folds, seed)
    pred = np.empty(len(y))
    for f in np.unique(lab):
        te = lab == f
        pred[te] = fit_reconstructor(make(), X[~te], y[~te], None if R is None else R[~te]).predict(X[te])
    return pred


def cv_rmse(make: Callable[[], object], X, y, folds: int = 5, seed: int = 0, R=None) -> tuple[float, list[float]]:
    """``(pooled out-of-fold RMSE, per-fold RMSEs)``, pp, of :func:`oof_predictions` (same arguments)."""
    y = np.asarray(y, dtype=np.float64)
    pred = oof_predictions(make, X, y, folds, seed, R)
    return float(np.sqrt(np.mean((pred - y) ** 2))), _per_fold(pred, y, folds, seed)


def _per_fold(pred, y, folds, seed) -> list[float]:
    lab = model_folds(len(y), folds, seed)
    return [float(np.sqrt(np.mean((pred[lab == f] - y[lab == f]) ** 2))) for f in np.unique(lab)]


def _cross_fit_all(candidates: dict, X, y, folds, seed, R, seconds: dict) -> tuple[dict, dict]:
    """``(oof, scores)``: each candidate's out-of-fold predictions and RMSE (``"failed: ..."`` when its fit fails
    or predicts a non-finite number); InputError if every candidate fails."""
    oof, scores = {}, {}
    for label, make in candidates.items():
        t0 = time.perf_counter()
        try:
            p = oof_predictions(make, X, y, folds, seed, R)
            seconds[label] = round(time.perf_counter() - t0, 3)
        except (ValueError, np.linalg.LinAlgError) as exc:
            scores[label] = f"failed: {exc}"
            continue
        if not np.isfinite(p).all():
            scores[label] = "failed: non-finite predictions"
            continue
        oof[label], scores[label] = p, float(np.sqrt(np.mean((p - y) ** 2)))
    if not oof:
        raise InputError(f"no reconstructor could be fitted: {scores}")
    return oof, scores


def choose_by_cv(candidates: dict[str, Callable[[], object]], X, y, folds: int = 5, seed: int = 0, R=None):
    """``(label, fitted_on_all, scores)``: the lowest pooled out-of-fold RMSE (pp; ties: the earlier label), refitted
    on all models, its per-fold RMSEs in ``fitted_on_all.cv_folds_``. InputError if every candidate fails."""
    y = np.asarray(y, dtype=np.float64)
    oof, scores = _cross_fit_all(candidates, X, y, folds, seed, R, {})
    label = min(oof, key=scores.get)
    rec = fit_reconstructor(candidates[label](), X, y, R)
    rec.cv_folds_ = _per_fold(oof[label], y, folds, seed)
    return label, rec, scores


def pool_candidates(items, n_models: int, seed: int = 0) -> dict:
    """The stronger candidates (label -> factory): ``mlp`` with at least
    :data:`essence.reconstructors.mlp.MIN_MODELS_MLP` non-test models. ``items`` ``(k,)``: pool positions."""
    return {"mlp": lambda: MLPReconstructor(seed=seed)} if n_models >= MIN_MODELS_MLP else {}


def choose_average_by_cv(candidates: dict, X, y, folds: int = 5, seed: int = 0, R=None, max_parts: int = 3,
                         seconds: dict | None = None, combine: str = "equal", steps: int = GREEDY_STEPS):
    """``(label, fitted, scores, oof (n,))``: a candidate or an average of them (``label`` ``"a+b"``) by CV on the
    same folds, combined by :func:`essence.reconstructors.combine.combine_oof`, refitted on all models; ``seconds``
    receives each candidate's and the refit's time. InputError if every candidate fails or for an unknown ``combine``.
    """
    if combine not in COMBINES:
        raise InputError(f"combine: {combine!r} is not one of {', '.join(COMBINES)} (equal: the best "
                         "unweighted average of up to max_parts candidates; greedy: a weighted greedy ensemble)")
    y = np.asarray(y, dtype=np.float64)
    seconds = {} if seconds is None else seconds
    oof, scores = _cross_fit_all(candidates, X, y, folds, seed, R, seconds)
    weights = combine_oof(oof, y, combine, max_parts, steps)
    combo = tuple(weights)
    if combine == "equal":
        p = np.mean([oof[c] for c in combo], axis=0)
        weights = None  # an unweighted average's artifact stores no weights
    else:
        p = np.sum([weights[c] * oof[c] for c in combo], axis=0)
    err = float(np.sqrt(np.mean((p - y) ** 2)))
    t0 = time.perf_counter()
    if len(combo) == 1:
        rec = fit_reconstructor(candidates[combo[0]](), X, y, R)
    else:
        rec = AverageReconstructor.of_fitted([fit_reconstructor(candidates[c](), X, y, R) for c in combo],
                                             np.shape(X)[1], None if weights is None else list(weights.values()))
    seconds["refit"] = round(time.perf_counter() - t0, 3)
    label = "+".join(combo)
    scores[label] = err
    return label, rec, scores, p
