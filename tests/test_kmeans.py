"""The ``kmeans`` method: anchors from K-Means on items' training score vectors, cluster-size weights."""

from __future__ import annotations

import json

import numpy as np
import pytest

from essence.artifact.compressed import Compressed, compress
from essence.methods.kmeans import KMeansSelector
from essence.search.anchors import _exact_low_dim, item_features, kmeans_anchors
from essence.reconstructors.base import reconstructor_from_dict


def test_item_features_impute_item_means():
    R = np.array([[1.0, 0.0], [np.nan, 1.0], [0.0, np.nan], [1.0, 1.0]])
    F = item_features(R)
    assert F.shape == (2, 4)
    np.testing.assert_allclose(F[0], [1, 2 / 3, 0, 1])
    np.testing.assert_allclose(F[1], [0, 1, 2 / 3, 1])


def test_low_dim_coordinates_keep_every_distance(small):
    from scipy.spatial.distance import pdist

    F = item_features(small.responses[:, :30])  # 30 points in 600 dimensions
    G = _exact_low_dim(F)
    assert G.shape[1] <= 30
    np.testing.assert_allclose(pdist(G), pdist(F), atol=1e-9)


def test_anchor_is_the_member_nearest_its_centroid(small):
    R = small.responses
    idx, sizes, _ = kmeans_anchors(R, 8, seed=0)
    assert idx.shape == (8,) and np.unique(idx).size == 8 and np.all(np.diff(idx) > 0)
    assert sizes.sum() == R.shape[1] and (sizes >= 1).all()
    # rebuild the partition: every item joins the cluster of its nearest centroid; each anchor must be
    # the member of its cluster nearest that cluster's mean
    from sklearn.cluster import KMeans
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        km = KMeans(8, n_init=10, random_state=0).fit(_exact_low_dim(item_features(R)))
    F = _exact_low_dim(item_features(R))
    for j in idx:
        c = km.labels_[j]
        members = np.flatnonzero(km.labels_ == c)
        d = ((F[members] - km.cluster_centers_[c]) ** 2).sum(axis=1)
        assert j == members[np.argmin(d)]
        assert sizes[list(idx).index(j)] == members.size


def test_same_seed_same_anchors_and_degenerate_duplicates(small):
    R = small.responses[:, :20].copy()
    a = kmeans_anchors(R, 6, seed=3)
    b = kmeans_anchors(R, 6, seed=3)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    # only 3 distinct item vectors but k = 5: still 5 distinct anchors, weights still sum to n_items
    D = np.repeat(small.responses[:, :3], [4, 4, 4], axis=1)
    idx, sizes, _ = kmeans_anchors(D, 5, seed=0)
    assert np.unique(idx).size == 5 and sizes.sum() == 12
    with pytest.raises(ValueError, match="k"):
        kmeans_anchors(D, 13)


def test_kmeans_end_to_end_and_artifact_reload(small, tmp_path):
    art = compress(small, k=10, method="kmeans", seed=0, progress=False)
    assert len(set(art.items)) == 10 and set(art.items) <= set(small.items)
    assert sum(art.selection["cluster_sizes"]) == small.n_items
    # kmeans' own candidates only: the plain-mean few-model choices are left out (plain_mean_choices = False)
    assert set(art.selection["reconstructor_val_rmse"]) == {"weighted_line", "gam", "ridge"}
    assert art.reconstructor.weights is not None and len(art.reconstructor.weights) == 10
    back = Compressed.load(art.save(tmp_path / "km.json"))
    assert back.items == art.items
    np.testing.assert_allclose(back.estimate(small)["estimate"], art.estimate(small)["estimate"], rtol=0, atol=1e-9)
    assert compress(small, k=10, method="kmeans", seed=0, progress=False).items == art.items


@pytest.mark.parametrize("label", ["weighted_line", "weighted_mean", "gam", "gam_unweighted", "ridge"])
def test_candidates_round_trip(small, label):
    from essence.data import split_models

    sp = split_models(small, seed=0)
    tr, va = small.subset(models=sp.train), small.subset(models=sp.val)
    sel = KMeansSelector(7, progress=False, candidates=(label,)).fit(tr, va)
    assert set(sel.reconstructor_scores_) == {label}  # no plain-mean few-model choices are added
    assert sel.reconstructor_choice_ in sel.reconstructor_scores_
    X = va.responses[:, sel.items_]
    rec = reconstructor_from_dict(json.loads(json.dumps(sel.reconstructor_.to_dict())))
    np.testing.assert_allclose(rec.predict(X), sel.reconstructor_.predict(X), rtol=0, atol=1e-9)


def test_bad_parameters_are_refused(small):
    with pytest.raises(ValueError, match="candidates"):
        compress(small, k=5, method="kmeans", progress=False, candidates=("median",))
    with pytest.raises(ValueError, match="n_init"):
        compress(small, k=5, method="kmeans", progress=False, n_init=0)


def test_kmeans_on_continuous_scores(alpaca, held_out):
    art = compress(alpaca, k=12, method="kmeans", seed=0, progress=False, min_models_continuous=0)
    assert len(set(art.items)) == 12 and set(art.items) <= set(alpaca.items)
    # graded scores are reconstructed, not just run through: on the held-out models the estimate is far better
    # than the trivial one (the training mean; measured 3.6 against 22.8 pp) and the recorded figure is that error
    rmse, baseline = held_out(art, alpaca)
    assert rmse < 0.4 * baseline and rmse < alpaca.target.std()
    assert art.figures["test"]["rmse"] == pytest.approx(rmse)


def test_weighted_line_by_hand_and_round_trip():
    from essence.reconstructors.simple import WeightedLineReconstructor

    X = np.array([[1, 0, 0], [1, 1, 0], [0, 1, 1], [1, 1, 1]], dtype=float)
    w = [2.0, 1.0, 1.0]
    m = 100 * (X @ np.array(w)) / 4  # the weighted subset score, pp: 50, 75, 50, 100
    y = 10 + 0.5 * m  # an exact line of it
    rec = WeightedLineReconstructor(weights=w).fit(X, y)
    assert rec.slope_ == pytest.approx(0.5) and rec.intercept_ == pytest.approx(10)
    np.testing.assert_allclose(rec.predict(X), y, atol=1e-9)
    back = reconstructor_from_dict(json.loads(json.dumps(rec.to_dict())))
    np.testing.assert_allclose(back.predict(X), rec.predict(X), rtol=0, atol=1e-12)
    # the plain mean would rank rows 0 and 2 equal to row 1 differently: the weights matter
    assert WeightedLineReconstructor().fit(X, y).predict(X)[0] != pytest.approx(y[0])


def test_kmeans_refuses_continuous_scores_with_few_models(alpaca):
    from essence.data import split_models

    sp = split_models(alpaca, seed=0)
    tr, va = alpaca.subset(models=sp.train), alpaca.subset(models=sp.val)
    with pytest.raises(ValueError, match="min_models_continuous"):
        KMeansSelector(10, progress=False).fit(tr, va)
    sel = KMeansSelector(10, progress=False, min_models_continuous=0).fit(tr, va)  # the user may insist
    assert sel.items_.size == 10


def test_faithful_candidate_is_the_papers_estimator_alone(small):
    from essence.data import split_models
    from essence.reconstructors.base import subset_score

    sp = split_models(small, seed=0)
    tr, va = small.subset(models=sp.train), small.subset(models=sp.val)
    sel = KMeansSelector(8, progress=False, candidates=("weighted_mean",)).fit(tr, va)
    assert sel.reconstructor_choice_ == "weighted_mean"
    X = va.responses[:, sel.items_]
    np.testing.assert_allclose(sel.reconstructor_.predict(X), np.clip(subset_score(X, sel.weights_), 0, 100))
