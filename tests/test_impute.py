"""Conditional-mean imputation of missing answer blocks: the ridge it promises, the grid, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from essence.data.errors import InputError
from essence.reconstructors.impute import impute_blocks


def _answers(n, seed):
    """(n, 9) binary answers driven by one ability, three blocks of three items."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=(n, 1))
    return (rng.random((n, 9)) < 1 / (1 + np.exp(-(2 * theta - np.linspace(-1, 1, 9))))).astype(float)


BLOCKS = [[0, 1, 2], [3, 4, 5], [6, 7, 8]]


def test_each_missing_pattern_gets_the_ridge_conditional_mean_of_its_present_blocks():
    ref, X = _answers(300, 0), _answers(6, 1)
    X[:2, 3:6] = np.nan          # pattern: lacks block 1
    X[2:4, 0:3] = np.nan         # pattern: lacks block 0
    X[2:4, 6:9] = np.nan         # ... and block 2
    X[4, 7] = np.nan             # a sporadic gap in a present block: the reference mean
    out = impute_blocks(ref, X, BLOCKS, penalty=0.05, levels=20)
    mu = ref.mean(0)
    for rows, miss in (([0, 1], [3, 4, 5]), ([2, 3], [0, 1, 2, 6, 7, 8])):
        have = [c for c in range(9) if c not in miss]
        A = ref[:, have] - mu[have]
        W = np.linalg.solve(A.T @ A + 0.05 * 300 * np.eye(len(have)), A.T @ (ref[:, miss] - mu[miss]))
        want = np.clip(mu[miss] + (X[np.ix_(rows, have)] - mu[have]) @ W, 0, 1)
        assert np.abs(out[np.ix_(rows, miss)] - want).max() <= 0.025 + 1e-12  # rounded to 1/20
        assert np.allclose(out[np.ix_(rows, miss)] * 20, np.round(out[np.ix_(rows, miss)] * 20))
    assert out[4, 7] == pytest.approx(mu[7])
    present = ~np.isnan(X)
    assert np.array_equal(out[present], X[present]) and not np.isnan(out).any()
    # a model strong on its present blocks is imputed stronger than a weak one
    strong, weak = np.ones((1, 9)), np.zeros((1, 9))
    strong[:, 3:6] = weak[:, 3:6] = np.nan
    assert impute_blocks(ref, strong, BLOCKS)[0, 3:6].mean() > impute_blocks(ref, weak, BLOCKS)[0, 3:6].mean() + 0.3


def test_rows_lacking_every_block_get_the_reference_means_and_inputs_stay_untouched():
    ref = _answers(50, 2)
    ref[0, 0] = np.nan
    X = np.full((2, 9), np.nan)
    before = X.copy(), ref.copy()
    out = impute_blocks(ref, X, BLOCKS, levels=1000)
    np.testing.assert_allclose(out, np.round(np.nanmean(ref, 0) * 1000)[None].repeat(2, 0) / 1000)
    assert np.array_equal(X, before[0], equal_nan=True) and np.array_equal(ref, before[1], equal_nan=True)


def test_bad_input_names_the_problem():
    ref, X = _answers(20, 3), _answers(4, 4)
    with pytest.raises(InputError, match="need the same items"):
        impute_blocks(ref[:, :5], X, BLOCKS)
    with pytest.raises(InputError, match="at least 2 reference models"):
        impute_blocks(ref[:1], X, BLOCKS)
    with pytest.raises(InputError, match="disjoint lists of positions below 9"):
        impute_blocks(ref, X, [[0, 1], [1, 2]])
    with pytest.raises(InputError, match="disjoint lists of positions below 9"):
        impute_blocks(ref, X, [[0, 9]])
    with pytest.raises(InputError, match="penalty must be > 0"):
        impute_blocks(ref, X, BLOCKS, penalty=0)
