"""Perplexity stratification: quantile bins, largest-remainder allocation, the selector end to end."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from essence.data import from_arrays, load
from essence.methods import get_method, make_method
from essence.methods.ppl import DEFAULT_BINS, PPLSelector, largest_remainder, quantile_bins, stratified_sample


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 60), min_size=1, max_size=15).filter(any), st.integers(0, 10_000), st.integers(0, 3))
def test_largest_remainder_sums_to_k_and_is_proportional(sizes, draw, seed):
    sizes = np.array(sizes)
    total = int(sizes.sum())  # > 0: at least one non-empty stratum
    k = 1 + draw % total
    counts = largest_remainder(sizes, k, seed=seed)
    quota = k * sizes / total
    assert counts.sum() == k
    assert (counts <= sizes).all() and (counts >= 0).all()
    assert (np.abs(counts - quota) < 1).all()
    assert (counts >= np.floor(quota)).all() and (counts <= np.ceil(quota)).all()
    np.testing.assert_array_equal(counts, largest_remainder(sizes, k, seed=seed))


def test_largest_remainder_examples():
    np.testing.assert_array_equal(largest_remainder([10, 10, 10], 6), [2, 2, 2])
    np.testing.assert_array_equal(largest_remainder([50, 30, 20], 7), [4, 2, 1])  # 3.5, 2.1, 1.4 -> .5 wins
    # equal remainders: the seed decides which strata get the leftover draw, same seed, same answer
    got = {tuple(largest_remainder([5, 5, 5, 5], 2, seed=s)) for s in range(30)}
    assert all(sum(g) == 2 and max(g) == 1 for g in got) and len(got) > 1


def test_quantile_bins_equal_counts_and_monotone():
    v = np.random.default_rng(0).lognormal(size=103)
    b = quantile_bins(v, 10)
    counts = np.bincount(b)
    assert counts.size == 10 and counts.max() - counts.min() <= 1
    order = np.argsort(v)
    assert (np.diff(b[order]) >= 0).all()
    # ties in value still give equal-count bins
    b2 = quantile_bins(np.r_[np.zeros(50), np.ones(50)], 4)
    assert np.bincount(b2).tolist() == [25, 25, 25, 25]


def test_stratified_sample_follows_the_allocation():
    v = np.random.default_rng(1).lognormal(size=200)
    idx, info = stratified_sample(v, 23, n_bins=5, seed=4)
    assert idx.shape == (23,) and np.unique(idx).size == 23 and (np.diff(idx) > 0).all()
    bins = quantile_bins(v, 5)
    assert np.bincount(bins[idx], minlength=5).tolist() == info["bin_draws"]
    assert info["bin_sizes"] == [40] * 5 and sum(info["bin_draws"]) == 23
    assert info["bin_edges"][0] == v.min() and info["bin_edges"][-1] == v.max()
    assert np.all(np.diff(info["bin_edges"]) >= 0)
    same, _ = stratified_sample(v, 23, n_bins=5, seed=4)
    other, _ = stratified_sample(v, 23, n_bins=5, seed=5)
    np.testing.assert_array_equal(idx, same)
    assert not np.array_equal(idx, other)


@pytest.mark.parametrize(
    "args, match",
    [
        (dict(values=np.arange(5.0), k=2, n_bins=6), "n_bins: 6 bins for 5 items"),
        (dict(values=np.arange(5.0), k=2, n_bins=0), "n_bins"),
        (dict(values=np.arange(5.0), k=6), "k: 6 is larger"),
        (dict(values=np.array([1.0, np.inf]), k=1), "non-finite"),
        (dict(values=np.ones((2, 2)), k=1), "1-D"),
    ],
)
def test_stratified_sample_errors(args, match):
    with pytest.raises(ValueError, match=match):
        stratified_sample(**args)


def test_largest_remainder_errors():
    with pytest.raises(ValueError, match="sizes"):
        largest_remainder([1.5, 2], 1)
    with pytest.raises(ValueError, match="k: 5 is larger"):
        largest_remainder([2, 2], 5)


# ---------------------------------------------------------------------------------------------------
# The selector
# ---------------------------------------------------------------------------------------------------
def test_registered_and_params():
    assert get_method("ppl") is PPLSelector and PPLSelector.needs_no_models
    assert DEFAULT_BINS == 10
    sel = make_method("ppl", k=5, n_bins=4)
    assert sel.params_dict() == {"k": 5, "seed": 0, "n_bins": 4, "max_length": 1024, "batch_size": 16}


def test_no_texts_is_refused():
    from essence.artifact.compressed import compress

    lcb = load("lcb_codegen")
    assert lcb.texts is None
    with pytest.raises(ValueError, match="'lcb_codegen' has no item texts; ppl chooses by item text"):
        compress(lcb, k=10, method="ppl", progress=False)
    with pytest.raises(ValueError, match="'lcb_codegen' has no item texts; herding chooses by item text"):
        compress(lcb, k=10, method="herding", progress=False)


def test_too_many_bins_is_refused(small):
    with pytest.raises(ValueError, match="n_bins: 81 bins for 80 items"):
        PPLSelector(k=5, n_bins=81, progress=False).fit(small, small)


def test_choice_ignores_model_results(small, monkeypatch):
    import essence.features.lm as lm

    fake = dict(zip(small.texts, np.random.default_rng(0).lognormal(size=small.n_items)))
    monkeypatch.setattr(lm, "perplexity", lambda texts, **kw: np.array([fake[t] for t in texts]))
    # predictors="basic": the reconstructor's stronger kinds (an MLP, seconds) do not bear on the choice
    a = PPLSelector(k=12, n_bins=4, seed=3, progress=False).fit(small, small, predictors="basic")
    flipped = from_arrays(1 - small.responses, small.models, small.items, texts=small.texts)
    b = PPLSelector(k=12, n_bins=4, seed=3, progress=False).fit(flipped, flipped, predictors="basic")
    np.testing.assert_array_equal(a.items_, b.items_)
    assert a.info_["bin_draws"] == [3, 3, 3, 3]
    assert a.perplexity_.shape == (80,) and a.bin_edges_.shape == (5,)


@pytest.mark.slow
def test_end_to_end_gsm8k(small, project_cache):
    """Real SmolLM2 perplexities of 80 gsm8k items (read from the project's feature cache when warm)."""
    from essence.artifact.compressed import compress

    c = compress(small, k=20, method="ppl", progress=False)
    again = compress(small, k=20, method="ppl", progress=False)
    assert c.items == again.items and len(set(c.items)) == 20
    assert sum(c.selection["bin_draws"]) == 20 and c.selection["bin_sizes"] == [8] * 10
    assert np.isfinite(c.figures["test"]["rmse"])


@pytest.mark.slow
def test_end_to_end_continuous_scores(alpaca, held_out, project_cache):
    """alpaca_eval2: continuous judge probabilities; selection ignores the scores, the GAM fits them. Real SmolLM2
    perplexities of the 805 instructions (minutes to compute: read from the project's feature cache when warm)."""
    from essence.artifact.compressed import compress

    assert not alpaca.is_binary
    c = compress(alpaca, k=50, method="ppl", progress=False)
    assert len(set(c.items)) == 50 and set(c.items) <= set(alpaca.items)
    rmse, baseline = held_out(c, alpaca)  # measured 1.7 against 22.8 pp
    assert rmse < 0.5 * baseline and c.figures["test"]["rmse"] == pytest.approx(rmse)


def test_gam_candidate_extrapolates_with_the_line():
    """PPL chooses without model results, so the strongest test models can lie beyond the training range:
    its GAM continues with the least-squares slope there (essence.reconstructors.simple.GAMReconstructor)."""
    cands = PPLSelector(k=5).reconstructor_candidates(None, np.arange(5))
    assert set(cands) == {"gam"} and cands["gam"]().extrapolate == "line"
