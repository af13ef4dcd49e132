"""The boosted-trees reconstructor: its own walk of the trees equals scikit-learn's, it learns what a line cannot,
JSON round trip with missing cells, bad input and damaged artifacts."""

from __future__ import annotations

import json

import numpy as np
import pytest

from essence.reconstructors.boost import BoostReconstructor, block_means
from essence.data.errors import InputError
from essence.reconstructors.simple import RidgeReconstructor
from essence.reconstructors.base import reconstructor_from_dict


@pytest.fixture(autouse=True)
def _one_thread():
    """OpenMP held to one thread, as compress() holds it (essence.data._runtime): on a busy 2-core machine
    scikit-learn's boosting threads wait on each other (measured 0.4 s against 3.8 s for 300 trees)."""
    from essence.data._runtime import single_thread

    with single_thread():
        yield


def _binary(n, k, seed):
    return (np.random.default_rng(seed).random((n, k)) < 0.5).astype(float)


def test_walk_of_the_stored_trees_equals_scikit_learns_predictions():
    from sklearn.ensemble import HistGradientBoostingRegressor

    X = _binary(400, 12, 0)
    X[np.random.default_rng(1).random(X.shape) < 0.1] = np.nan
    y = 30 + 40 * np.nan_to_num(X[:, :6], nan=0.5).mean(1) + np.random.default_rng(2).normal(0, 2, 400)
    rec = BoostReconstructor(blocks=[[0, 1, 2, 3, 4, 5], [6, 7, 8, 9, 10, 11]], trees=60).fit(X[:300], y[:300])
    gb = HistGradientBoostingRegressor(max_iter=60, learning_rate=0.05, max_leaf_nodes=15, min_samples_leaf=20,
                                       l2_regularization=1.0, early_stopping=False, random_state=0)
    F = lambda A: np.column_stack([block_means(A, [np.arange(6), np.arange(6, 12)]), A])  # noqa: E731
    gb.fit(F(X[:300]), y[:300])
    np.testing.assert_allclose(rec.predict(X[300:]), np.clip(gb.predict(F(X[300:])), 0, 100), atol=1e-7)
    again = BoostReconstructor(blocks=[[0, 1, 2, 3, 4, 5], [6, 7, 8, 9, 10, 11]], trees=60).fit(X[:300], y[:300])
    assert again.to_dict() == rec.to_dict()  # the same data give the same trees


def test_learns_a_saturating_sub_score_a_linear_reconstructor_cannot():
    # the score follows block A's mean until it saturates, then block B's: no line through the answers fits it
    X, Xt = _binary(600, 20, 3), _binary(300, 20, 4)
    def f(A):
        a, b = A[:, :10].mean(1), A[:, 10:].mean(1)
        return 20 + 60 * np.minimum(a, 0.5) + 40 * (a > 0.5) * b
    y = f(X) + np.random.default_rng(5).normal(0, 1, 600)
    boost = BoostReconstructor(blocks=[list(range(10)), list(range(10, 20))]).fit(X, y)
    lin = RidgeReconstructor().fit(X, y)
    rmse = lambda r: float(np.sqrt(np.mean((r.predict(Xt) - f(Xt)) ** 2)))  # noqa: E731
    assert rmse(boost) < 0.7 * rmse(lin)


def test_round_trip_with_missing_cells_and_a_model_missing_a_whole_block():
    X = _binary(200, 8, 6)
    y = 100 * X.mean(1)
    rec = BoostReconstructor(blocks=[[0, 1, 2], [3, 4, 5, 6, 7]], trees=25, min_leaf=5).fit(X, y)
    d = json.loads(json.dumps(rec.to_dict()))
    assert d["n_features"] == 10 and set(d["missing_left"]) <= {"0", "1"}
    Xt = _binary(7, 8, 7)
    Xt[0, 3] = np.nan
    Xt[1, :3] = np.nan  # no answer in block 0: its mean is missing too
    got = reconstructor_from_dict(d).predict(Xt)
    np.testing.assert_allclose(got, rec.predict(Xt), atol=1e-12)
    assert np.isfinite(got).all() and ((got >= 0) & (got <= 100)).all()
    plain = BoostReconstructor(trees=10, min_leaf=5).fit(X, y)  # no blocks: one block of every item
    assert plain.n_features_ == 9


def test_bad_input_and_damaged_artifacts_are_named():
    X = _binary(50, 5, 8)
    y = X.sum(1)
    with pytest.raises(InputError, match="block position 7 is beyond the 5 chosen items"):
        BoostReconstructor(blocks=[[0, 7]]).fit(X, y)
    with pytest.raises(InputError, match="non-empty list of distinct item positions"):
        BoostReconstructor(blocks=[[0, 0]]).fit(X, y)
    with pytest.raises(InputError, match="trees"):
        BoostReconstructor(trees=0).fit(X, y)
    with pytest.raises(InputError, match="at least 2 training models"):
        BoostReconstructor().fit(X[:1], y[:1])
    d = BoostReconstructor(trees=5, min_leaf=3).fit(X, y).to_dict()
    bad = dict(d, left=[len(d["feature"]) + 3 if v >= 0 else v for v in d["left"]])
    with pytest.raises(InputError, match="points outside its nodes"):
        reconstructor_from_dict(bad)
    with pytest.raises(InputError, match="differ in length"):
        reconstructor_from_dict(dict(d, value=d["value"][:-1]))
    with pytest.raises(InputError, match="features cannot come from"):
        reconstructor_from_dict(dict(d, n_features=3))
