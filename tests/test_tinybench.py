"""The ``tinybench`` method: K-Means anchors + tinyBenchmarks' p-IRT / gp-IRT estimators."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.base import clone

from essence.artifact.compressed import Compressed, compress
from essence.features.irt import ItemParams, estimate_ability, prob
from essence.reconstructors.irt import GPIRTReconstructor, gp_lambda, gpirt_components
from essence.reconstructors.base import reconstructor_from_dict

FAST = {"epochs": 25, "max_models": 200}


@pytest.fixture(autouse=True)
def _tmp_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("ESSENCE_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))


def test_gp_lambda_on_hand_made_numbers():
    assert gp_lambda(0.02, 0.0004) == pytest.approx(0.5)  # equal MSEs: equal weights
    assert gp_lambda(0.03, 0.0027) == pytest.approx(0.0009 / 0.0036)  # = 0.25
    assert gp_lambda(0.0, 0.01) == 0.0  # unbiased p-IRT: all weight to p-IRT
    assert gp_lambda(0.05, 0.0) == 1.0  # noiseless anchors: all weight to them
    assert gp_lambda(0.0, 0.0) == 0.5
    assert gp_lambda(-0.02, 0.0004) == pytest.approx(0.5)  # sign of the bias does not matter
    with pytest.raises(ValueError, match="v >= 0"):
        gp_lambda(0.1, -1.0)
    with pytest.raises(ValueError):
        gp_lambda(float("nan"), 0.1)


def _pool():
    a = np.array([1.0, 2.0, 0.5, 1.5, 0.0])
    b = np.array([-1.0, 0.0, 0.5, 1.0, 0.0])
    pf = np.array([np.nan, np.nan, np.nan, np.nan, 0.1])  # last item constant in training
    return ItemParams(a, b, pf)


def test_pirt_and_anchor_estimates_by_hand():
    params = _pool()
    anchors = np.array([0, 3])
    w = np.array([3.0, 1.0])
    X = np.array([[1.0, 0.0], [1.0, np.nan]])
    A, P = gpirt_components(X, params, anchors, w)
    # anchor estimate: weighted mean of the observed anchors
    np.testing.assert_allclose(A, [0.75, 1.0])
    # p-IRT by hand: seen responses + IRT probabilities of the unseen items (incl. missing anchors)
    th = estimate_ability(X, params.a[anchors], params.b[anchors])
    p0 = prob(th[:1], params.a, params.b)[0]
    p1 = prob(th[1:], params.a, params.b)[0]
    m0 = (1.0 + 0.0 + p0[1] + p0[2] + 0.1) / 5
    m1 = (1.0 + p1[3] + p1[1] + p1[2] + 0.1) / 5
    np.testing.assert_allclose(P, [m0, m1], rtol=1e-12)
    # equivalently (n_seen/N) * seen mean + (1 - n_seen/N) * unseen mean
    np.testing.assert_allclose(P[0], 2 / 5 * 0.5 + 3 / 5 * np.mean([p0[1], p0[2], 0.1]), rtol=1e-12)


def test_gpirt_reconstructor_mixes_and_round_trips():
    params = _pool()
    common = dict(pool_a=params.a, pool_b=params.b, pool_p_fixed=[None, None, None, None, 0.1], anchors=[0, 3],
                  weights=[3.0, 1.0], gp_lambda=0.25)
    X = np.array([[1.0, 0.0], [0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    y = np.array([60.0, 10.0, 90.0, 40.0, 55.0, 85.0])
    rec = GPIRTReconstructor(**common).fit(X, y)
    A, P = gpirt_components(X, params, [0, 3], [3.0, 1.0])
    np.testing.assert_allclose(rec.predict(X), np.clip(100 * (0.25 * A + 0.75 * P), 0, 100), rtol=1e-12)
    cal = GPIRTReconstructor(calibrate=True, **common).fit(X, y)
    for r in (rec, cal):
        back = reconstructor_from_dict(json.loads(json.dumps(r.to_dict())))
        np.testing.assert_array_equal(back.predict(X), r.predict(X))
        assert clone(r).params_dict() == r.params_dict()
    with pytest.raises(ValueError, match="gp_lambda"):
        GPIRTReconstructor(**{**common, "gp_lambda": 1.5}).fit(X, y)
    with pytest.raises(ValueError, match="anchors"):
        GPIRTReconstructor(**{**common, "anchors": [0, 9]}).fit(X, y)


def test_tinybench_end_to_end(small, tmp_path):
    art = compress(small, k=10, method="tinybench", seed=0, progress=False, **FAST)
    assert len(set(art.items)) == 10 and set(art.items) <= set(small.items)
    sel = art.selection
    assert 0.0 <= sel["gp_lambda"] <= 1.0 and sel["lambda_models"] == "validation"
    assert set(sel["reconstructor_val_rmse"]) == {"gpirt", "gpirt_gam", "weighted_line"}
    assert sum(sel["cluster_shares"]) == pytest.approx(1.0)
    back = Compressed.load(art.save(tmp_path / "tb.json"))
    np.testing.assert_allclose(back.estimate(small)["estimate"], art.estimate(small)["estimate"], rtol=0, atol=1e-9)
    again = compress(small, k=10, method="tinybench", seed=0, progress=False, cache=False, **FAST)
    assert again.items == art.items
    # the same K-Means anchors as the kmeans method
    from essence.data import split_models
    from essence.search.anchors import kmeans_anchors

    idx, _, _ = kmeans_anchors(small.responses[split_models(small, seed=0).train], 10, seed=0)
    assert small.items[idx].tolist() == art.items


def test_tinybench_on_continuous_scores(alpaca, held_out):
    with pytest.warns(UserWarning, match="binarize"):
        art = compress(alpaca, k=12, method="tinybench", seed=0, progress=False, min_models=10, **FAST)
    assert len(set(art.items)) == 12 and set(art.items) <= set(alpaca.items)
    rmse, baseline = held_out(art, alpaca)  # measured 3.6 against 22.8 pp
    assert rmse < 0.4 * baseline and art.figures["test"]["rmse"] == pytest.approx(rmse)
    assert art.selection["lambda_models"] == "train+validation"  # only 6 validation models
    assert art.params["irt"]["binarize"] == 0.5
