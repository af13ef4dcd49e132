"""Analysis helpers behind notebook 06 (IRT): item curves, information, MetaBench's bins, and a test of why
IRT loses to random items on GSM8K.

The 2PL model, its fit and the selection rule live in :mod:`essence.features.irt` and
:mod:`essence.methods.irt`; nothing here changes what they choose. Abilities ``theta`` are on the
standardised scale of :func:`essence.features.irt.fit_2pl` (training models: mean 0, sd 1), full scores and
errors in percentage points (pp). Test models are passed separately and only measure.
"""

from __future__ import annotations

import numpy as np

from ..data.errors import InputError
from ..features.irt import estimate_ability, fisher_information, fit_item_params
from ..data.metrics import rmse
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
    """One row per ability bin of MetaBench's rule, with the item it takes.

    ``theta`` ``(n_models,)`` training abilities, ``a``, ``b`` ``(n_items,)``; ``curve`` the full score as a
    function of ability (:func:`full_score_curve`) or None. Columns: ``bin`` (lowest abilities first),
    ``theta_lo``, ``theta_hi``, ``item`` (position taken), ``a``, ``b``, ``info`` (its largest information in
    the bin) and, with a curve, ``score_lo``, ``score_hi`` (full score at the bin's ends, pp) and ``rise``
    (``score_hi - score_lo``, pp: how much the full score moves across the bin).
    """
    import pandas as pd

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
    """A variant of MetaBench's rule that spends one item per *full-score level* instead of per model quantile.

    ``k`` full-score levels evenly spaced inside ``y_range = (low, high)`` pp (the ends excluded); each level
    is mapped to the lowest ability at which ``curve`` (full score against ability, :func:`full_score_curve`)
    reaches it, and takes the not-yet-chosen item with the largest Fisher information there (ties: lowest
    index). Where many models sit at the floor, MetaBench's bins crowd there; these levels do not.
    Returns ``(k,)`` distinct item positions. ``a``, ``b`` ``(n_items,)``.
    """
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
    taken = np.zeros(a.size, dtype=bool)
    chosen = []
    for row in fisher_information(thetas, a, b):
        row = np.where(taken, -np.inf, row)
        j = int(np.argmax(row))
        taken[j] = True
        chosen.append(j)
    return np.asarray(chosen, dtype=np.intp)


def hypothesis_runs(data, k: int, split_seeds, n_random: int = 10, floor: float = 5.0, progress: bool = False):
    """Test RMSE of three ways to choose ``k`` items, each reconstructed by the same GAM on the subset mean.

    For every split seed ``s`` (:func:`essence.data.split_models`): the 2PL fit of the ``irt`` method
    (:func:`essence.features.irt.fit_item_params` with seed ``s``: the cached fit the sweep uses), the training
    abilities, then
    ``irt``: MetaBench's rule (:func:`select_by_information`); ``above_floor_bins``: the same rule with bins
    over the training models whose full score is at least ``floor`` only (no item is spent at the floor);
    ``score_levels``: :func:`select_at_score_levels`
    over the training full scores' range; ``random``: ``n_random`` uniform draws. Each subset gets a
    :class:`~essence.reconstructors.simple.GAMReconstructor` fitted on training + validation models and is measured on
    the test models: overall, on those whose full score is below ``floor`` pp and on the rest.
    Returns a DataFrame: ``split_seed, selection, draw, rmse, rmse_floor, rmse_above, n_test_floor,
    floor_bins`` (for ``irt``: how many of its ``k`` bins have a median training full score below ``floor``).
    """
    import pandas as pd

    from ..data import split_models

    rows = []
    for s in split_seeds:
        sp = split_models(data, seed=int(s))
        train = data.subset(models=sp.train)
        params, Rb, _ = fit_item_params(train, method="irt", seed=int(s), progress=progress)
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
