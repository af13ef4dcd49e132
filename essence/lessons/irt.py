"""Helpers behind notebook 06 (IRT) and ``benchmarks/irt_hypothesis.py``: information, MetaBench's bins and
variants of its rule. Abilities on the standardised scale of :func:`essence.features.irt.fit_2pl`; scores and
errors in pp."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..data import split_models
from ..data.errors import InputError
from ..data.metrics import rmse
from ..features.irt import estimate_ability, fisher_information, fit_item_params
from ..methods.irt import select_by_information
from ..reconstructors.irt import THETA_MAX
from ..reconstructors.simple import GAMReconstructor
from ..reconstructors.tables import Table1D, fit_gam_table

__all__ = ["test_information", "ability_groups", "full_score_curve", "bin_table", "select_at_score_levels",
           "hypothesis_runs"]


def test_information(theta, a, b) -> np.ndarray:
    """Test information ``(n_theta,)``: the sum of the items' Fisher information ``a^2 P (1 - P)`` at each
    ability. ``a``, ``b`` ``(n_items,)`` 2PL parameters (pass a subset's to get that subset's)."""
    return fisher_information(theta, a, b).sum(axis=1)


def ability_groups(theta, k: int) -> list[np.ndarray]:
    """The ``k`` equal-count groups of sorted abilities MetaBench's rule uses (:func:`select_by_information`):
    ``np.array_split`` of the sorted ``(n_models,)`` abilities, lowest first. Needs ``n_models >= k``."""
    theta = np.sort(np.asarray(theta, dtype=np.float64).ravel())
    if not 1 <= int(k) <= theta.size:
        raise InputError(f"k: {k} ability bins need at least {k} models, got {theta.size}")
    return np.array_split(theta, int(k))


def full_score_curve(theta, y) -> Table1D:
    """The training models' full score as a smooth function of ability: a GAM ``y ~ s(theta)`` (pp) on
    ``[-THETA_MAX, THETA_MAX]``; ``theta``, ``y`` ``(n_models,)``."""
    return fit_gam_table(theta, y, lo=-THETA_MAX, hi=THETA_MAX, n_grid=2401)


def bin_table(theta, a, b, k: int, curve: Table1D | None = None):
    """One row per ability bin of MetaBench's rule (``theta`` ``(n_models,)`` training abilities, ``a``, ``b``
    ``(n_items,)``): ``bin`` (lowest first), ``theta_lo``, ``theta_hi``, ``item`` (position taken), ``a``, ``b``,
    ``info`` (its largest information in the bin) and, given ``curve`` (:func:`full_score_curve`), ``score_lo``,
    ``score_hi`` (pp at the bin's ends) and ``rise`` (their difference, pp)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    groups = ability_groups(theta, k)
    chosen = select_by_information(a, b, theta, k)
    rows = []
    for i, (g, j) in enumerate(zip(groups, chosen)):
        row = {"bin": i, "theta_lo": float(g[0]), "theta_hi": float(g[-1]), "item": int(j), "a": float(a[j]),
               "b": float(b[j]), "info": float(fisher_information(g, a[[j]], b[[j]]).max())}
        if curve is not None:
            lo, hi = float(curve(g[0])), float(curve(g[-1]))
            row.update(score_lo=lo, score_hi=hi, rise=hi - lo)
        rows.append(row)
    return pd.DataFrame(rows)


def select_at_score_levels(a, b, curve: Table1D, y_range, k: int) -> np.ndarray:
    """``(k,)`` distinct items, one per full-score level: ``k`` levels evenly inside ``y_range`` (pp, ends
    excluded), each mapped to the lowest ability where ``curve`` reaches it, taking the untaken item of largest
    Fisher information there (ties: lowest index). ``a``, ``b`` ``(n_items,)``."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if not 1 <= int(k) <= a.size:
        raise InputError(f"k: {k} must be between 1 and the {a.size} items")
    lo, hi = (float(v) for v in y_range)
    if not hi > lo:
        raise InputError(f"y_range: {y_range!r} must be (low, high) with high > low, in pp")
    levels = np.linspace(lo, hi, int(k) + 2)[1:-1]
    running = np.maximum.accumulate(curve.y)  # the curve made non-decreasing, so each level has one ability
    at = np.searchsorted(running, levels, side="left").clip(0, curve.x.size - 1)
    thetas = curve.x[at]
    chosen = []
    for row in fisher_information(thetas, a, b):
        row[chosen] = -np.inf  # each item once
        chosen.append(int(np.argmax(row)))
    return np.asarray(chosen, dtype=np.intp)


def hypothesis_runs(data, k: int, split_seeds, n_random: int = 10, floor: float = 5.0, progress: bool = False,
                    fit_settings: dict | None = None):
    """Test RMSE (pp) of ``k`` items chosen four ways per split seed (the ``irt`` method's 2PL fit of that split), each
    read by one GAM on the subset mean fitted on training + validation models: ``irt`` (MetaBench's rule),
    ``above_floor_bins`` (bins over training models scoring >= ``floor``), ``score_levels``, ``random`` (``n_random``
    draws). Columns ``split_seed, selection, draw, rmse, rmse_floor, rmse_above`` (test models below / from ``floor``),
    ``n_test_floor``, ``floor_bins`` (irt: bins of median training score below ``floor``)."""
    rows = []
    for s in split_seeds:
        sp = split_models(data, seed=int(s))
        train = data.subset(models=sp.train)
        params, Rb, _ = fit_item_params(train, method="irt", seed=int(s), progress=progress, **(fit_settings or {}))
        theta = estimate_ability(Rb, params.a, params.b)
        curve = full_score_curve(np.clip(theta, -THETA_MAX, THETA_MAX), train.target)
        fit = np.r_[sp.train, sp.val]
        yt = data.target[sp.test]
        low = yt < floor
        groups = ability_groups(theta, k)
        floor_bins = int(sum(np.median(curve(g)) < floor for g in groups))
        above = theta[train.target >= floor]
        subsets = [("irt", 0, select_by_information(params.a, params.b, theta, k)),
                   ("above_floor_bins", 0, select_by_information(params.a, params.b, above, k)),
                   ("score_levels", 0, select_at_score_levels(params.a, params.b, curve,
                                                              (train.target.min(), train.target.max()), k))]
        rng = np.random.default_rng(int(s))
        subsets += [("random", d, np.sort(rng.choice(data.n_items, size=int(k), replace=False)))
                    for d in range(int(n_random))]
        for label, d, S in subsets:
            pred = GAMReconstructor().fit(data.responses[np.ix_(fit, S)], data.target[fit]).predict(
                data.responses[np.ix_(sp.test, S)])
            rows.append({"split_seed": int(s), "selection": label, "draw": d, "rmse": rmse(yt, pred),
                         "rmse_floor": rmse(yt[low], pred[low]) if low.any() else float("nan"),
                         "rmse_above": rmse(yt[~low], pred[~low]), "n_test_floor": int(low.sum()),
                         "floor_bins": floor_bins if label == "irt" else None})
    return pd.DataFrame(rows)
