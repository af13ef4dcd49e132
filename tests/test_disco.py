"""The ``disco`` method: top-disagreement items + PCA/kNN model-signature predictor."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.base import clone

from essence.artifact.compressed import Compressed, compress
from essence.reconstructors.signature import SignatureKNNReconstructor
from essence.methods.disco import disagreement, top_disagreement
from essence.reconstructors.base import reconstructor_from_dict


def _matrix_with_accuracies(acc, n=20):
    """0/1 columns with exactly the given accuracies over n models."""
    cols = []
    for p in acc:
        c = np.zeros(n)
        c[: int(round(p * n))] = 1.0
        cols.append(c)
    return np.column_stack(cols)


def test_disagreement_is_p_one_minus_p_and_orders_items():
    acc = [0.1, 0.5, 1.0, 0.3, 0.9, 0.0]
    R = _matrix_with_accuracies(acc)
    np.testing.assert_allclose(disagreement(R), [p * (1 - p) for p in acc])
    order = top_disagreement(R, 6, seed=0).tolist()
    assert order[:2] == [1, 3]  # 0.25, then 0.21
    assert set(order[2:4]) == {0, 4}  # tie at 0.09
    assert set(order[4:]) == {2, 5}  # constant items last


def test_ties_broken_by_seed_reproducibly():
    R = _matrix_with_accuracies([0.5] * 12)  # all tied
    a = top_disagreement(R, 4, seed=0)
    assert np.array_equal(a, top_disagreement(R, 4, seed=0))
    others = {tuple(top_disagreement(R, 4, seed=s)) for s in range(1, 6)}
    assert len(others | {tuple(a)}) > 1


def test_disagreement_continuous_and_missing():
    R = np.array([[0.2, 1.0, np.nan], [0.4, 1.0, 0.3], [0.9, 1.0, 0.7]])
    np.testing.assert_allclose(disagreement(R), [np.var([0.2, 0.4, 0.9]), 0.0, np.var([0.3, 0.7])])
    with pytest.raises(ValueError, match="k"):
        top_disagreement(R, 4)


def test_knn_matches_sklearn_on_pca_coordinates(small):
    from sklearn.decomposition import PCA
    from sklearn.neighbors import KNeighborsRegressor

    X = small.responses[:, :30]
    Xtr, Xte = X[:500], X[500:]
    ytr = small.target[:500]
    rec = SignatureKNNReconstructor(n_components=5, n_neighbors=7).fit(Xtr, ytr)
    pca = PCA(5).fit(Xtr)
    # distinct-distance models only (ties in the 7th neighbour may be broken differently)
    Z, Zt = pca.transform(Xte), pca.transform(Xtr)
    d = np.sort(np.linalg.norm(Z[:, None] - Zt[None], axis=2), axis=1)
    ok = (d[:, 6] < d[:, 7] - 1e-6) & (d[:, 0] > 1e-3)
    assert ok.sum() > 20
    ref = KNeighborsRegressor(7, weights="distance").fit(Zt, ytr).predict(Z)
    np.testing.assert_allclose(rec.predict(Xte)[ok], ref[ok], atol=1e-4)


def test_knn_exact_match_and_round_trip(small):
    X = small.responses[:, :15].copy()
    X[::5, 2] = np.nan
    y = small.target
    rec = SignatureKNNReconstructor(n_components=3, n_neighbors=1).fit(X, y)
    # K = 1 on training models: the nearest signature is an identical one (its own, or a tie)
    pred = rec.predict(X[:50])
    Z = rec.transform(X[:50])
    for i in range(50):
        same = np.flatnonzero(np.all(np.abs(rec.train_z_ - Z[i]) < 1e-4, axis=1))
        assert i in same and np.isclose(rec.train_y_[same], pred[i], rtol=0, atol=1e-9).any()
    # K = 3 with identical signatures among the neighbours: only those count, equally
    rec3 = SignatureKNNReconstructor(n_components=3, n_neighbors=3).fit(X, y)
    d = np.linalg.norm(rec3.train_z_[None] - rec3.transform(X[:50])[:, None], axis=2)
    checked = 0
    for i in range(50):
        same = np.flatnonzero(d[i] < 1e-4)
        if same.size <= 3:  # all identical ones are among the 3 neighbours
            assert rec3.predict(X[i:i + 1])[0] == pytest.approx(rec3.train_y_[same].mean(), abs=1e-9)
            checked += 1
    assert checked > 10
    back = reconstructor_from_dict(json.loads(json.dumps(rec.to_dict())))
    np.testing.assert_array_equal(back.predict(X), rec.predict(X))
    assert clone(rec).get_params() == {"n_components": 3, "n_neighbors": 1}
    with pytest.raises(ValueError, match="n_neighbors"):
        SignatureKNNReconstructor(n_neighbors=0).fit(X, y)


def test_disco_end_to_end(small, tmp_path):
    art = compress(small, k=10, method="disco", seed=0, progress=False, selection="top")
    assert len(set(art.items)) == 10 and set(art.items) <= set(small.items)
    assert {"gam", "ridge", "knn_c3_k5", "knn_c10_k20"} <= set(art.selection["reconstructor_val_rmse"])
    # the chosen items are the training models' most-disagreed-on ones
    from essence.data import split_models

    sp = split_models(small, seed=0)
    d = disagreement(small.responses[sp.train])
    chosen = small.item_index(art.items)
    assert d[chosen].min() >= np.sort(d)[-10] - 1e-15
    back = Compressed.load(art.save(tmp_path / "disco.json"))
    np.testing.assert_allclose(back.estimate(small)["estimate"], art.estimate(small)["estimate"], rtol=0, atol=1e-9)
    assert compress(small, k=10, method="disco", seed=0, progress=False, selection="top").items == art.items


def test_disco_knn_artifact_and_continuous_scores(alpaca, tmp_path, held_out):
    art = compress(alpaca, k=20, method="disco", seed=0, progress=False, n_components=(3,), neighbors=(5,),
                   )
    assert len(set(art.items)) == 20 and set(art.items) <= set(alpaca.items)
    rmse, baseline = held_out(art, alpaca)  # measured 4.5 against 22.8 pp
    assert rmse < 0.4 * baseline and art.figures["test"]["rmse"] == pytest.approx(rmse)
    back = Compressed.load(art.save(tmp_path / "a.json"))
    np.testing.assert_allclose(back.estimate(alpaca)["estimate"], art.estimate(alpaca)["estimate"], rtol=0,
                               atol=1e-9)
    with pytest.raises(ValueError, match="neighbors"):
        compress(alpaca, k=5, method="disco", progress=False, neighbors=())
