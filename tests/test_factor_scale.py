"""The factor model's memo and its many-items path (essence.features.factor): a repeated fit is the same fit, and
above ABILITY_ITEMS_ABOVE items the fit still recovers a planted model (generated data: timing-scale shapes that no
shipped benchmark has)."""

from __future__ import annotations

import numpy as np

from essence.features import factor
from essence.features.factor import FactorModel


def _planted(n: int, N: int, d: int = 2, seed: int = 0, missing: float = 0.05):
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=(n, d))
    A, b = rng.normal(size=(N, d)), rng.normal(size=N)
    P = 1 / (1 + np.exp(-(theta @ A.T + b)))
    R = (rng.random((n, N)) < P).astype(float)
    R[rng.random((n, N)) < missing] = np.nan
    return R, P


def test_a_repeated_fit_is_the_same_fit_and_hands_back_copies():
    R, _ = _planted(120, 300, seed=1)
    first = FactorModel(d=2, seed=0).fit(R)
    A = first.A_.copy()
    first.A_[:] = 0.0  # a caller changing its result must not change the memo
    again = FactorModel(d=2, seed=0).fit(R)
    assert np.array_equal(again.A_, A)
    other = FactorModel(d=1, seed=0).fit(R)  # another rank: the same SVD, another fit
    assert other.A_.shape == (300, 1)


def test_many_items_fit_recovers_the_planted_probabilities():
    N = factor.ABILITY_ITEMS_ABOVE + 500
    R, P = _planted(300, N, seed=2)
    fm = FactorModel(d=2, seed=0).fit(R)
    assert fm.A_.shape == (N, 2) and np.isfinite(fm.A_).all() and np.isfinite(fm.b_).all()
    fitted = 1 / (1 + np.exp(-(fm.theta_ @ fm.A_.T + fm.b_)))
    # per model, the mean probability over all items (its full score) is recovered
    assert np.corrcoef(fitted.mean(axis=1), P.mean(axis=1))[0, 1] > 0.98
    # items outside the ability sample are fitted too: their probabilities track the planted ones
    assert np.corrcoef(fitted.mean(axis=0), P.mean(axis=0))[0, 1] > 0.95
