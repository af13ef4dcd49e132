"""Choosing a reconstructor by cross-validation over models, and the candidate lists every method shares.

``choose_by_cv`` scores each candidate (a zero-argument factory) by K-fold CV over all non-test models and
refits the best on all of them; ``choose_average_by_cv`` may also combine several kinds' out-of-fold
predictions into an average (:mod:`essence.reconstructors.combine`). ``X`` is ``(n_models, k)`` in [0, 1],
``y`` ``(n_models,)`` in pp."""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..data.errors import InputError
from .base import check_X
from .combine import COMBINES, GREEDY_STEPS, AverageReconstructor, combine_oof
from .mlp import MIN_MODELS_MLP, MLPReconstructor
from .base import model_folds
from .base import fit_reconstructor

__all__ = ["choose_on_validation", "oof_predictions", "cv_rmse", "choose_by_cv", "pool_candidates", "choose_average_by_cv"]


def choose_on_validation(candidates: dict[str, Callable[[], object]], X_train, y_train, X_val, y_val):
    """Fit each candidate reconstructor on training models and keep the one with the lowest validation RMSE.

    ``candidates`` maps a label to a zero-argument factory. Returns ``(label, fitted, val_rmse_by_label)``.
    A candidate whose fit fails is skipped (its error is recorded); ValueError if all fail.
    """
    from ..data.metrics import rmse

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
    """Out-of-fold predictions ``(n,)`` pp of one reconstructor factory: each fold of
    ``model_folds(n, folds, seed)`` is predicted by ``make()`` fitted on the other folds.

    ``X`` ``(n, k)``, ``y`` ``(n,)`` pp, ``R`` ``(n, n_pool)`` or None (see :func:`fit_reconstructor`). The
    cross-fitting behind :func:`cv_rmse`, the averages of :func:`essence.reconstructors.choose.choose_average_by_cv` and
    ``auto``'s paired comparisons: the same folds for every candidate.
    """
    X = check_X(X)
    y = np.asarray(y, dtype=np.float64)
    lab = model_folds(len(y), folds, seed)
    pred = np.empty(len(y))
    for f in np.unique(lab):
        te = lab == f
        pred[te] = fit_reconstructor(make(), X[~te], y[~te], None if R is None else R[~te]).predict(X[te])
    return pred


def cv_rmse(make: Callable[[], object], X, y, folds: int = 5, seed: int = 0, R=None) -> tuple[float, list[float]]:
    """K-fold CV over models of one reconstructor factory: ``(pooled out-of-fold RMSE, per-fold RMSEs)``, pp,
    from :func:`oof_predictions` (same arguments)."""
    y = np.asarray(y, dtype=np.float64)
    pred = oof_predictions(make, X, y, folds, seed, R)
    lab = model_folds(len(y), folds, seed)
    per = [float(np.sqrt(np.mean((pred[lab == f] - y[lab == f]) ** 2))) for f in np.unique(lab)]
    return float(np.sqrt(np.mean((pred - y) ** 2))), per


def choose_by_cv(candidates: dict[str, Callable[[], object]], X, y, folds: int = 5, seed: int = 0, R=None):
    """Choose a reconstructor by K-fold cross-validation over *all* the given models, then refit it on them.

    With 20-70 models a validation set of 2-7 models cannot tell candidates apart (its RMSE is noise);
    every model serves once as held-out here. ``candidates`` maps a label to a zero-argument factory;
    ``X`` ``(n, k)``, ``y`` ``(n,)`` pp (typically training + validation models), ``R`` their answers on
    every pool item (or None; :func:`fit_reconstructor`). Returns
    ``(label, fitted_on_all, scores)`` with ``scores[label]`` the pooled out-of-fold RMSE (pp) or
    ``"failed: ..."``; ties go to the earlier label. The per-fold RMSEs of the choice are in
    ``fitted_on_all.cv_folds_`` (pp). InputError if every candidate fails.
    """
    scores: dict[str, float | str] = {}
    best = None
    for label, make in candidates.items():
        try:
            err, per = cv_rmse(make, X, y, folds, seed, R)
        except (ValueError, np.linalg.LinAlgError) as exc:
            scores[label] = f"failed: {exc}"
            continue
        if not np.isfinite(err):
            scores[label] = "failed: non-finite predictions"
            continue
        scores[label] = err
        if best is None or err < best[1]:
            best = (label, err, per)
    if best is None:
        raise InputError(f"no reconstructor could be fitted: {scores}")
    rec = fit_reconstructor(candidates[best[0]](), X, y, R)
    rec.cv_folds_ = best[2]
    return best[0], rec, scores


def pool_candidates(items, n_models: int, seed: int = 0) -> dict:
    """The stronger candidates for a method's CV choice, by label -> zero-argument factory: ``mlp`` with at least
    :data:`essence.reconstructors.mlp.MIN_MODELS_MLP` non-test models. ``items`` ``(k,)``: the chosen items'
    positions in the pool."""
    out = {}
    if n_models >= MIN_MODELS_MLP:
        out["mlp"] = lambda: MLPReconstructor(seed=seed)
    return out


def choose_average_by_cv(candidates: dict, X, y, folds: int = 5, seed: int = 0, R=None, max_parts: int = 3,
                         seconds: dict | None = None, combine: str = "equal", steps: int = GREEDY_STEPS):
    """Choose a reconstructor, or an average of up to ``max_parts`` distinct candidates, by K-fold CV.

    Every candidate (label -> zero-argument factory) is cross-fitted once on the same folds. ``combine``
    ``"equal"``: the single candidates and every average of 2..``max_parts`` of them are scored by the RMSE of
    their averaged out-of-fold predictions, and the lowest wins (ties: fewer parts, then the earlier labels).
    ``"greedy"``: a weighted average by :func:`essence.reconstructors.combine.greedy_ensemble` over ``steps`` steps (``max_parts`` is not
    used; weights in multiples of 1 / ``steps``). The winner is refitted on all models. Returns ``(label,
    fitted, scores, oof (n,))``: ``label`` ``"a+b"`` for an average (its parts in the order of
    ``candidates``); ``scores`` every single candidate's out-of-fold RMSE (or ``"failed: ..."``) and the
    winner's; ``oof`` the winner's out-of-fold predictions (for its interval; the greedy weights were chosen
    on them too, so its CV score is a little optimistic, as the equal choice among averages is).
    InputError if every candidate fails, or for an unknown ``combine``. ``seconds``: a dict to receive each
    candidate's cross-fitting time and the final refit's (``"refit"``).
    """
    if combine not in COMBINES:
        raise InputError(f"combine: {combine!r} is not one of {', '.join(COMBINES)} (equal: the best "
                         "unweighted average of up to max_parts candidates; greedy: a weighted greedy ensemble)")
    import time

    from .base import fit_reconstructor

    y = np.asarray(y, dtype=np.float64)
    oof, scores = {}, {}
    seconds = {} if seconds is None else seconds
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
    weights = combine_oof(oof, y, combine, max_parts, steps)
    combo = tuple(weights)
    if combine == "equal":
        p = np.mean([oof[c] for c in combo], axis=0)
        weights = None  # an unweighted average's artifact stores no weights, as before weights existed
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
