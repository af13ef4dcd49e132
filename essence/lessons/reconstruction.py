"""Helpers behind notebook 05 and ``benchmarks/reconstruction.py``: the reconstructors side by side on random subsets,
and the interval rebuilt as ``compress`` builds it. Scores and errors in pp; test models only measure."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd

from ..data import split_models
from ..data.errors import InputError
from ..data.metrics import coverage, rmse
from ..reconstructors.choose import choose_by_cv
from ..reconstructors.intervals import IntervalModel, cross_fitted_predictions
from ..reconstructors.simple import GAMReconstructor, LineReconstructor, MeanRidgeReconstructor, RidgeGAMReconstructor, RidgeReconstructor, WeightedMeanReconstructor
from ..suite.artifact import fit_members
from ..suite.study import suite_split

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
    """Test RMSE (pp, NaN for a failed fit) of the ``names`` reconstructors (None: the ladder) on random subsets: per
    ``k`` of ``ks``, ``n`` of ``n_trains`` (skipped above the training models) and draw, ``k`` items and ``n``
    training models drawn with ``default_rng([seed, k, n])``. Columns ``k, n_train, draw, reconstructor, rmse``."""
    R_train, y_train = _check(R_train, y_train, "training models")
    R_test, y_test = _check(R_test, y_test, "test models")
    if R_train.shape[1] != R_test.shape[1]:
        raise InputError(f"training ({R_train.shape[1]}) and test ({R_test.shape[1]}) models must share the items")
    makers = ladder_makers(names)
    rows = []
    for k in ks:
        if not 1 <= int(k) <= R_train.shape[1]:
            raise InputError(f"ks: {k} must be between 1 and the {R_train.shape[1]} items")
        for n in n_trains:
            if int(n) > R_train.shape[0]:
                continue
            rng = np.random.default_rng([int(seed), int(k), int(n)])
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
    """A subset's reconstructor (5-fold CV over training + validation models among ``candidates`` ``{label: factory}``)
    and interval as ``compress`` builds them, for ``split`` (train, val, test) and ``items`` ``(k,)``: ``choice``,
    ``interval``, ``y_test``, ``estimate``, ``lower``, ``upper`` (``(n_test,)`` pp), ``coverage`` (0-1), ``width``
    (mean, pp), ``test_rmse`` (pp)."""
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
    """:func:`interval_for_subset` on ``n_draws`` random ``min(k, n_items)``-subsets (``default_rng([seed, split seed,
    draw])``) per split of each ``{name: Responses}``; ``candidates`` default ``line``, ``mean_ridge``, ``gam``.
    Rows ``dataset, split_seed, draw, choice, n_test, covered, coverage, width, test_rmse, q, calibration``."""
    cands = ladder_makers(["line", "mean_ridge", "gam"]) if candidates is None else dict(candidates)
    rows = []
    for name, data in datasets.items():
        kk = min(int(k), data.n_items)
        for s in split_seeds:
            split = split_models(data, seed=int(s))
            for d in range(int(n_draws)):
                rng = np.random.default_rng([int(seed), int(s), d])
                S = np.sort(rng.choice(data.n_items, size=kk, replace=False))
                out = interval_for_subset(data.responses, data.target, split, S, cands, level, seed=int(s))
                inside = (out["y_test"] >= out["lower"]) & (out["y_test"] <= out["upper"])
                rows.append({"dataset": name, "split_seed": int(s), "draw": d, "choice": out["choice"],
                             "n_test": int(inside.size), "covered": int(inside.sum()), "coverage": out["coverage"],
                             "width": out["width"], "test_rmse": out["test_rmse"], "q": out["interval"].q_,
                             "calibration": out["interval"].calibration_})
    return pd.DataFrame(rows)


def suite_reconstruction(suite, k_each: int, seed: int = 0, reconstructors="basic", level: float = 0.9):
    """Each member of ``suite`` (:func:`essence.suite.study.suite_split`) read from its own ``k_each`` random items
    (``own``: :func:`interval_for_subset` among line, mean_ridge, ridge, ridge_gam) and from all members' items
    (``all``: :func:`essence.suite.artifact.fit_members` with ``reconstructors``), plus their ``mean``: rows
    ``reading, benchmark, items, choice, rmse`` (pp), ``coverage`` (0-1), ``width`` (pp)."""
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
