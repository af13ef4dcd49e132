"""EssenceBench step 3: EBM attribution and the High / Low / Random groups (essence.search.attribution)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from essence.search.attribution import attribution_groups, ebm_attribution, fit_ebm, shape_norms


@pytest.fixture(scope="module")
def real_items(small):
    """Real responses of 300 gsm8k models on 12 items of the pool."""
    return small.responses[:300, :12]


def test_item_that_determines_the_target_gets_the_largest_attribution(real_items):
    X = real_items
    driver = 4
    y = 20.0 + 50.0 * X[:, driver]  # the target is a function of one real item
    masks = np.zeros((2, X.shape[1]), dtype=bool)
    masks[0, [0, 1, 2, 3, 4, 5]] = True
    masks[1, [4, 6, 7, 8, 9, 10]] = True
    res = ebm_attribution(X, y, masks, max_models=None, seed=0)
    A = res.attribution
    others = np.delete(np.arange(X.shape[1]), driver)
    assert A[driver] > 5 * A[others].max()
    # A_l averages over the elites holding l
    assert res.counts.tolist() == masks.sum(axis=0).tolist()
    np.testing.assert_allclose(A[driver], res.per_elite[:, driver].mean())
    # the item in no elite gets 0 and a count of 0
    assert res.counts[11] == 0 and A[11] == 0.0
    # for a 0/1 driver the weighted norm is the std of its contribution: sqrt(p(1-p)) * 50
    p = X[:, driver].mean()
    assert A[driver] == pytest.approx(math.sqrt(p * (1 - p)) * 50.0, rel=0.1)


def test_shape_norm_is_the_rms_of_the_term_contribution(real_items):
    X = real_items[:, :6]
    y = 100 * np.nanmean(real_items, axis=1)
    ebm = fit_ebm(X, y, seed=0)
    contrib = ebm.eval_terms(X)  # (n_models, n_terms): each term's contribution per model
    rms = np.sqrt(np.mean(contrib**2, axis=0))
    np.testing.assert_allclose(shape_norms(ebm, 6), rms, rtol=1e-6, atol=1e-9)


def test_attribution_is_seeded_and_subsamples_models(real_items):
    X = real_items
    y = 100 * X.mean(axis=1)
    masks = np.zeros((1, X.shape[1]), dtype=bool)
    masks[0, :6] = True
    a = ebm_attribution(X, y, masks, max_models=120, seed=3)
    b = ebm_attribution(X, y, masks, max_models=120, seed=3)
    assert a.n_models == 120
    np.testing.assert_array_equal(a.attribution, b.attribution)
    with pytest.raises(ValueError, match="masks"):
        ebm_attribution(X, y, masks[:, :5])


def test_groups_sizes_and_order():
    A = np.array([5.0, 1.0, 4.0, 0.0, 3.0, 2.0, 6.0, 0.5])
    g = attribution_groups(A, k=2, seed=0)
    size = max(2, math.ceil(0.75 * 8))  # 6
    assert {n: v.size for n, v in g.items()} == {"high": size, "low": size, "random": size}
    assert set(g["high"]) == set(np.argsort(-A)[:size])
    assert set(g["low"]) == set(np.argsort(A)[:size])
    assert 6 in g["high"] and 6 not in g["low"] and 3 in g["low"] and 3 not in g["high"]
    np.testing.assert_array_equal(g["random"], attribution_groups(A, 2, seed=0)["random"])
    # k above the 3/4 share: groups of k items
    assert attribution_groups(A, k=7, seed=0)["high"].size == 7
    with pytest.raises(ValueError, match="k"):
        attribution_groups(A, k=9)
