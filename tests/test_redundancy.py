"""EssenceBench step 1: redundancies and the coarse filter (essence.search.redundancy)."""

from __future__ import annotations

import numpy as np
import pytest

from essence.search.redundancy import coarse_filter, item_prefilter, rank_redundancy, standardise_items, text_redundancy


def naive_filter(R, E, tau_text, tau_rank, drop_constant=True):
    """Plain O(n^2) reference: dense redundancies, one item at a time, earliest kept offender."""
    n = R.shape[1]
    C = rank_redundancy(R) if tau_rank < 1 else np.zeros((n, n))
    T = text_redundancy(E) if (E is not None and tau_text < 1) else np.zeros((n, n))
    const = np.isnan(np.diag(rank_redundancy(R)))
    kept, drops = [], {}
    for i in range(n):
        if drop_constant and const[i]:
            drops[i] = (-1, "constant")
            continue
        for j in kept:
            t = tau_text < 1 and T[j, i] > tau_text
            r = tau_rank < 1 and not (const[i] or const[j]) and C[j, i] > tau_rank
            if t or r:
                drops[i] = (j, "text+rank" if (t and r) else ("text" if t else "rank"))
                break
        else:
            kept.append(i)
    return np.array(kept), drops


# ----------------------------------------------------------------------------------------------
def test_text_redundancy_equals_dense_reference():
    rng = np.random.default_rng(0)
    E = rng.normal(size=(23, 8))
    ref = (E / np.linalg.norm(E, axis=1, keepdims=True)) @ (E / np.linalg.norm(E, axis=1, keepdims=True)).T
    np.testing.assert_allclose(text_redundancy(E), ref, atol=1e-12)


def test_rank_redundancy_equals_corrcoef(small):
    R = small.responses[:, :30]
    ref = np.corrcoef(R.T)
    const = np.isnan(np.diag(ref))
    got = rank_redundancy(R)
    ok = ~(const[:, None] | const[None, :])
    np.testing.assert_allclose(got[ok], ref[ok], atol=1e-10)
    assert np.isnan(got[~ok]).all()


def test_rank_redundancy_mean_imputes_missing_cells(alpaca):
    nan_cols = np.flatnonzero(np.isnan(alpaca.responses).any(axis=0))
    R = alpaca.responses[:, np.r_[nan_cols, np.arange(40)]]
    assert np.isnan(R).any(), "the alpaca slice should hold missing cells"
    filled = np.where(np.isnan(R), np.nanmean(R, axis=0), R)
    np.testing.assert_allclose(rank_redundancy(R), np.corrcoef(filled.T), atol=1e-10)


def test_constant_items_get_zero_vectors(small):
    R = small.responses[:, :10].copy()
    R[:, 3] = 1.0
    R[:, 7] = np.nan
    R[0, 7] = 0.0  # a single answer: no variance either
    Z, const = standardise_items(R)
    assert const.tolist() == [i in (3, 7) for i in range(10)]
    assert not Z[[3, 7]].any()
    np.testing.assert_allclose(np.linalg.norm(Z[~const], axis=1), 1.0)


# ----------------------------------------------------------------------------------------------
def test_filter_keeps_the_first_of_a_rank_redundant_pair(small):
    R = small.responses[:, :6]
    X = np.c_[R, R[:, 2]]  # item 6 duplicates item 2
    res = coarse_filter(X, None, tau_text=1.0, tau_rank=0.99)
    assert res.kept.tolist() == [0, 1, 2, 3, 4, 5]
    assert res.dropped.tolist() == [6] and res.dropped_by.tolist() == [2] and res.reason.tolist() == ["rank"]
    assert res.rank_value[0] == pytest.approx(1.0, abs=1e-5)
    # the copy first: now the copy is kept and the original dropped
    Y = np.c_[R[:, 2], R]
    res2 = coarse_filter(Y, None, tau_text=1.0, tau_rank=0.99)
    assert res2.dropped.tolist() == [3] and res2.dropped_by.tolist() == [0]


def test_filter_keeps_the_first_of_a_text_redundant_pair(small):
    R = small.responses[:, :5]
    rng = np.random.default_rng(1)
    E = rng.normal(size=(5, 16))
    E[4] = E[1] + 1e-3 * rng.normal(size=16)  # near-duplicate text of item 1
    res = coarse_filter(R, E, tau_text=0.95, tau_rank=1.0)
    assert res.dropped.tolist() == [4] and res.dropped_by.tolist() == [1] and res.reason.tolist() == ["text"]
    assert res.text_checked and not res.rank_checked
    assert np.isnan(res.rank_value).all()


def test_filter_only_compares_with_kept_items(small):
    # 0 ~ 1 and 1 ~ 2 by text but 0 !~ 2: 1 is dropped (by 0), so 2 survives (1 is no longer kept)
    R = small.responses[:, :3]
    E = np.array([[1.0, 0.0], [np.cos(0.3), np.sin(0.3)], [np.cos(0.6), np.sin(0.6)]])
    res = coarse_filter(R, E, tau_text=float(np.cos(0.35)), tau_rank=1.0)
    assert res.kept.tolist() == [0, 2] and res.dropped_by.tolist() == [0]


@pytest.mark.parametrize("block_size", [1, 7, 64, 5000])
def test_filter_matches_naive_reference_on_real_data(small, block_size):
    R = small.responses[:, :60]
    rng = np.random.default_rng(2)
    E = rng.normal(size=(60, 3))  # low-dimensional: many text-redundant pairs
    for tau_text, tau_rank in ((0.97, 0.5), (1.0, 0.45), (0.9, 1.0)):
        ref_kept, ref_drops = naive_filter(R, E, tau_text, tau_rank)
        res = coarse_filter(R, E, tau_text, tau_rank, block_size=block_size)
        assert res.kept.tolist() == ref_kept.tolist()
        got = {int(d): (int(b), str(w)) for d, b, w in zip(res.dropped, res.dropped_by, res.reason)}
        assert got == ref_drops
        assert 0 < res.n_kept < 60  # the thresholds do drop something (the test can fail)


def test_constant_items_are_dropped_or_kept_but_never_rank_dropped(small):
    R = small.responses[:, :8].copy()
    R[:, 5] = 0.0
    R[:, 6] = 0.0  # two identical constant items: "perfectly correlated" only in a naive implementation
    res = coarse_filter(R, None, tau_text=1.0, tau_rank=0.5)
    assert res.constant.tolist() == [5, 6]
    assert dict(zip(res.dropped.tolist(), res.reason.tolist()))[5] == "constant"
    assert any("constant" in n for n in res.notes)
    res2 = coarse_filter(R, None, tau_text=1.0, tau_rank=0.5, drop_constant=False)
    assert {5, 6} <= set(res2.kept.tolist())
    info = res2.to_info()
    assert info["n_constant"] == 2 and info["constant_items"] == [5, 6]


def test_filter_reports_missing_texts_and_lcb_constants():
    from essence.data import load, split_models

    lcb = load("lcb_codegen")
    assert lcb.texts is None
    tr = split_models(lcb, seed=0).train
    res = coarse_filter(lcb.responses[tr], None, tau_text=0.9, tau_rank=0.9)
    info = res.to_info(item_ids=lcb.items)
    assert not info["text_checked"]
    assert any("no item texts" in n for n in info["notes"])
    assert info["n_constant"] > 0 and info["dropped_by_reason"]["constant"] == info["n_constant"]
    assert info["constant_items"][0] in lcb.items.tolist()


def test_filter_rejects_bad_input(small):
    R = small.responses[:, :5]
    with pytest.raises(ValueError, match="embeddings"):
        coarse_filter(R, np.ones((4, 3)), tau_text=0.9)
    with pytest.raises(ValueError, match="tau_rank"):
        coarse_filter(R, None, tau_rank="high")
    with pytest.raises(ValueError, match="R_train"):
        coarse_filter(R[0], None)


def test_item_prefilter_on_real_data(small):
    tr = np.arange(small.n_models)
    R, y = small.responses[tr], small.target[tr]
    pre = item_prefilter(R, y, max_mean=0.5, min_pbis=None)
    np.testing.assert_array_equal(pre["too_easy"], np.flatnonzero(np.nanmean(R, axis=0) > 0.5))
    pre2 = item_prefilter(R, y, max_mean=None, min_pbis=0.6)
    pbis = np.array([np.corrcoef(R[:, j], y)[0, 1] for j in range(R.shape[1])])
    np.testing.assert_array_equal(pre2["low_pbis"], np.flatnonzero(np.abs(pbis) < 0.6))
    assert 0 < pre2["keep"].sum() < R.shape[1]
