"""Analysis helpers behind notebook 05 (reconstruction and intervals): from a subset's results to a full score.

The reconstructors themselves live in :mod:`essence.reconstructors.simple` and the interval in
:mod:`essence.reconstructors.intervals`; nothing here changes what they compute. These functions run them side by side
on random subsets so that a notebook can show where each one wins, and rebuild the interval the way
:func:`essence.artifact.compressed.compress` does to measure its coverage. Conventions as everywhere in the
package: responses ``(n_models, n_items)`` in [0, 1] with NaN for missing, scores and errors in
percentage points (pp), every draw takes a ``seed``. Test models are passed separately and only measure.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..data.errors import InputError
from ..reconstructors.intervals import IntervalModel, cross_fitted_predictions
from ..data.metrics import coverage, rmse
from ..reconstructors.simple import GAMReconstructor, LineReconstructor, MeanRidgeReconstructor, RidgeGAMReconstructor, RidgeReconstructor, WeightedMeanReconstructor
from ..reconstructors.choose import choose_by_cv

__all__ = ["LADDER", "ladder_makers", "error_grid", "interval_for_subset", "coverage_table", "suite_reconstruction"]

#: The reconstructors from the simplest to the richest: label -> (zero-argument factory, one-line description).
LADDER: dict[str, tuple[Callable[[], object], str]] = {
    "mean": (WeightedMeanReconstructor, "the plain mean of the chosen items (nothing fitted)"),
    "line": (LineReconstructor, "a least-squares line on the subset mean (2 numbers)"),
    "mean_ridge": (MeanRidgeReconstructor, "the line plus item weights shrunk toward equal weights"),
    "gam": (GAMReconstructor, "a penalised spline (GAM) on the subset mean"),
    "ridge": (RidgeReconstructor, "ridge regression on the item vector (k weights)"),
    "ridge_gam": (RidgeGAMReconstructor, "ridge, then a GAM on its cross-fitted index"),
}


def ladder_makers(names=None) -> dict[str, Callable[[], object]]:
    """``{label: factory}`` for the :data:`LADDER` labels ``names`` (None = all, in ladder order)."""
    names = list(LADDER) if names is None else list(names)
    unknown = [n for n in names if n not in LADDER]
    if unknown or not names:
        raise InputError(f"names: {unknown or names!r} not in the ladder; choose among {', '.join(LADDER)}")
    return {n: LADDER[n][0] for n in names}


def _check(R, y, what: str) -> tuple[np.ndarray, np.ndarray]:
    R = np.asarray(R, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if R.ndim != 2 or y.shape != (R.shape[0],):
        raise InputError(f"{what}: expected responses (n_models, n_items) and target (n_models,), got {R.shape} "
                         f"and {y.shape}")
    return R, y


def error_grid(R_train, y_train, R_test, y_test, ks, n_trains, names=None, n_draws: int = 5, seed=0):
    """Test RMSE of every ladder reconstructor on random subsets, over budgets and training-set sizes.

    For each ``k`` in ``ks``, each ``n`` in ``n_trains`` (capped at the available training models; a value
    above them is skipped) and each of ``n_draws`` draws: ``k`` items drawn uniformly and ``n`` training
    models drawn uniformly (the same draw for every reconstructor); each reconstructor of ``names`` is fitted
    on those models and measured on the test models ``R_test`` ``(n_test, n_items)``, ``y_test`` pp.
    ``R_train`` ``(n_train, n_items)``, ``y_train`` ``(n_train,)`` pp. A fit that fails (too few models for
    its folds) is a row with NaN RMSE. Returns a DataFrame with columns ``k, n_train, draw, reconstructor,
    rmse`` (pp).
    """
    import pandas as pd

    R_train, y_train = _check(R_train, y_train, "training models")
    R_test, y_test = _check(R_test, y_test, "test models")
    if R_train.shape[1] != R_test.shape[1]:
        raise InputError(f"training ({R_train.shape[1]}) and test ({R_test.shape[1]}) models must share the items")
    makers = ladder_makers(names)
    rng = np.random.default_rng(seed)
    rows = []
    for k in ks:
        if not 1 <= int(k) <= R_train.shape[1]:
            raise InputError(f"ks: {k} must be between 1 and the {R_train.shape[1]} items")
        for n in n_trains:
            if int(n) > R_train.shape[0]:
                continue
            for d in range(int(n_draws)):
                S = np.sort(rng.choice(R_train.shape[1], size=int(k), replace=False))
                M = np.sort(rng.choice(R_train.shape[0], size=int(n), replace=False))
                for label, make in makers.items():
                    try:
                        pred = make().fit(R_train[np.ix_(M, S)], y_train[M]).predict(R_test[:, S])
                        err = rmse(y_test, pred)
                    except (ValueError, np.linalg.LinAlgError):
                        err = float("nan")
                    rows.append({"k": int(k), "n_train": int(n), "draw": d, "reconstructor": label, "rmse": err})
    return pd.DataFrame(rows, columns=["k", "n_train", "draw", "reconstructor", "rmse"])


def interval_for_subset(R, y, split, items, candidates: dict, level: float = 0.9, seed: int = 0) -> dict:
    """A subset's reconstructor and 90% interval built as :func:`essence.artifact.compressed.compress` builds them.

    ``R`` ``(n_models, n_items)``, ``y`` ``(n_models,)`` pp, ``split`` (train, val, test index arrays),
    ``items`` ``(k,)`` positions, ``candidates`` ``{label: factory}``. The reconstructor is chosen by 5-fold
    CV over training + validation models and refitted on all of them (:func:`essence.reconstructors.choose.choose_by_cv`);
    its cross-fitted predictions give the residual scale (training part) and the conformal calibration
    (validation part, joined by the training part when too few); the test models are predicted once.
    Returns ``{"choice", "interval" (fitted IntervalModel), "y_test", "estimate", "lower", "upper" (each
    (n_test,) pp), "coverage" (share of test models inside), "width" (mean upper - lower, pp),
    "test_rmse" (pp)}``.
    """
    R, y = _check(R, y, "R, y")
    S = np.asarray(items, dtype=np.intp)
    tr, va, te = (np.asarray(a, dtype=np.intp) for a in split)
    fit = np.r_[tr, va]
    label, rec, _ = choose_by_cv(candidates, R[np.ix_(fit, S)], y[fit], seed=seed)
    pred_cf = cross_fitted_predictions(rec, R[np.ix_(fit, S)], y[fit], seed=seed)
    n_tr = tr.size
    interval = IntervalModel(level=level).fit(pred_cf[:n_tr], y[tr], pred_cf[n_tr:], y[va])
    est = rec.predict(R[np.ix_(te, S)])
    lo, hi = interval.interval(est)
    return {"choice": label, "interval": interval, "y_test": y[te], "estimate": est, "lower": lo, "upper": hi,
            "coverage": coverage(y[te], lo, hi), "width": float(np.mean(hi - lo)), "test_rmse": rmse(y[te], est)}


def coverage_table(datasets: dict, k: int, split_seeds, n_draws: int = 2, candidates=None, level: float = 0.9,
                   seed: int = 0):
    """Coverage of the interval on test models, over datasets, splits and random subsets.

    ``datasets`` maps a name to a :class:`~essence.data.Responses`; each is split with
    :func:`essence.data.split_models` for every seed of ``split_seeds``; ``n_draws`` random ``k``-subsets
    per split (``min(k, n_items)`` items) go through :func:`interval_for_subset` with ``candidates``
    (default: ``line``, ``mean_ridge`` and ``gam`` of the ladder). Returns a DataFrame, one row per
    dataset, split seed and draw: ``dataset, split_seed, draw, choice, n_test, covered`` (test models
    inside), ``coverage`` (0-1), ``width`` (mean, pp), ``test_rmse`` (pp), ``q`` and ``calibration``.
    """
    import pandas as pd

    from ..data import split_models

    cands = ladder_makers(["line", "mean_ridge", "gam"]) if candidates is None else dict(candidates)
    rng = np.random.default_rng(seed)
    rows = []
    for name, data in datasets.items():
        kk = min(int(k), data.n_items)
        for s in split_seeds:
            split = split_models(data, seed=int(s))
            for d in range(int(n_draws)):
                S = np.sort(rng.choice(data.n_items, size=kk, replace=False))
                out = interval_for_subset(data.responses, data.target, split, S, cands, level, seed=int(s))
                inside = (out["y_test"] >= out["lower"]) & (out["y_test"] <= out["upper"])
                rows.append({"dataset": name, "split_seed": int(s), "draw": d, "choice": out["choice"],
                             "n_test": int(inside.size), "covered": int(inside.sum()), "coverage": out["coverage"],
                             "width": out["width"], "test_rmse": out["test_rmse"], "q": out["interval"].q_,
                             "calibration": out["interval"].calibration_})
    return pd.DataFrame(rows)


def suite_reconstruction(suite, k_each: int, seed: int = 0, reconstructors="basic", level: float = 0.9):
    """Every member of a suite reconstructed from its own random items and from the same items of *every* member.

    ``suite`` an :class:`essence.suite.Suite`; its shared models are split as ``benchmarks/suite.py`` splits
    them (:func:`essence.suite.study.suite_split`, seed ``seed``: 20% test, 10% validation). ``k_each``
    random items are drawn per member (seeded). Two readings per member, both fitted on training +
    validation models and measured on the test models:

    * ``own``: the member's own ``k_each`` items, its reconstructor and interval built as a separate
      artifact builds them (:func:`interval_for_subset`; CV among ``line``, ``mean_ridge``, ``ridge`` and
      ``ridge_gam``);
    * ``all``: all ``k_each x members`` items, as a suite artifact reads them
      (:func:`essence.suite.artifact.fit_members` with ``reconstructors``: ``"basic"``, CV among ridge,
      ridge + GAM and mean_ridge, or ``"default"``, the suite's greedy ensemble).

    The suite mean (``benchmark == "mean"``) is the mean of the member estimates, with the interval each
    reading calibrates for it. Returns a DataFrame, one row per reading x member (and ``mean``):
    ``reading, benchmark, items, choice, rmse (pp), coverage (0-1), width (pp)``.
    """
    import pandas as pd

    from ..suite.artifact import fit_members
    from ..suite.study import suite_split

    sp = suite_split(suite, seed)
    tr, va, te = (np.asarray(a, dtype=np.intp) for a in sp)
    fit = np.r_[tr, va]
    rng = np.random.default_rng([int(seed), 5])
    own = [np.sort(rng.choice(b, size=min(int(k_each), b.size), replace=False)) for b in suite.blocks]
    idx = np.concatenate(own)
    R = suite.pooled().responses
    Y = suite.targets
    rows, est_own, cf_own = [], [], []
    cands = ladder_makers(["line", "mean_ridge", "ridge", "ridge_gam"])
    for b, name in enumerate(suite.names):
        cols = own[b] - suite.blocks[b][0]  # positions inside the member
        Rb = suite.members[b].responses
        out = interval_for_subset(Rb, Y[:, b], sp, cols, cands, level, seed=seed)
        rec = cands[out["choice"]]().fit(Rb[np.ix_(fit, cols)], Y[fit, b])
        cf_own.append(cross_fitted_predictions(rec, Rb[np.ix_(fit, cols)], Y[fit, b], seed=seed))
        est_own.append(out["estimate"])
        rows.append({"reading": "own", "benchmark": name, "items": int(cols.size), "choice": out["choice"],
                     "rmse": out["test_rmse"], "coverage": out["coverage"], "width": out["width"]})
    fit_suite = suite.subset(fit)
    recs, ivs, mean_iv, choice, _ = fit_members(fit_suite, idx, reconstructors, n_train=tr.size, level=level,
                                                seed=seed, jobs=1)
    Xte = R[np.ix_(te, idx)]
    est_all = []
    for b, name in enumerate(suite.names):
        e = np.asarray(recs[name].predict(Xte), dtype=np.float64)
        est_all.append(e)
        lo, hi = ivs[name].interval(e)
        rows.append({"reading": "all", "benchmark": name, "items": int(idx.size), "choice": choice[name]["kind"],
                     "rmse": rmse(Y[te, b], e), "coverage": coverage(Y[te, b], lo, hi), "width": float(np.mean(hi - lo))})
    y_mean = suite.mean_target
    cf = np.mean(cf_own, axis=0)
    own_iv = IntervalModel(level=level).fit(cf[:tr.size], y_mean[tr], cf[tr.size:], y_mean[va])
    for reading, est, iv, n in (("own", np.mean(est_own, axis=0), own_iv, int(idx.size)),
                                ("all", np.mean(est_all, axis=0), mean_iv, int(idx.size))):
        lo, hi = iv.interval(est)
        rows.append({"reading": reading, "benchmark": "mean", "items": n, "choice": "mean of the members",
                     "rmse": rmse(y_mean[te], est), "coverage": coverage(y_mean[te], lo, hi),
                     "width": float(np.mean(hi - lo))})
    return pd.DataFrame(rows)
