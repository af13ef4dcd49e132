"""Kernel Herding: the greedy rule against a brute-force MMD, the median heuristic, determinism, the selector."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import cdist, pdist

from essence.data import from_arrays
from essence.methods import get_method, make_method
from essence.methods.herding import HerdingSelector, kernel_herding, median_heuristic


def brute_mmd2(K: np.ndarray, subset) -> float:
    """MMD^2 between the equal-weight subset and the whole pool, from the full kernel matrix."""
    s = np.asarray(subset)
    return K[np.ix_(s, s)].mean() - 2 * K[s].mean() + K.mean()


def full_kernel(X, sigma):
    return np.exp(-cdist(X, X, "sqeuclidean") / (2 * sigma**2))


@pytest.fixture
def X():
    rng = np.random.default_rng(1)
    # three blobs of different sizes, so a good subset must spread over them in proportion
    return np.vstack([rng.normal(0, 1, (30, 5)), rng.normal(4, 1, (15, 5)), rng.normal([0, 6, 0, 0, 0], 0.5, (5, 5))])


def test_median_heuristic_is_median_pairwise_distance(X):
    assert median_heuristic(X) == pytest.approx(np.median(pdist(X)), rel=1e-10)


def test_median_heuristic_subsamples_large_pools(X):
    big = np.vstack([X] * 3) + np.random.default_rng(2).normal(0, 0.01, (150, 5))
    rows = np.sort(np.random.default_rng(0).choice(150, size=40, replace=False))
    assert median_heuristic(big, max_points=40) == pytest.approx(np.median(pdist(big[rows])), rel=1e-10)


@pytest.mark.parametrize("bandwidth", [None, 0.8, 5.0])
def test_each_greedy_step_minimises_mmd(X, bandwidth):
    k = 12
    idx, info = kernel_herding(X, k, bandwidth=bandwidth)
    sigma = median_heuristic(X) if bandwidth is None else bandwidth
    assert info["bandwidth"] == pytest.approx(sigma)
    K = full_kernel(X, sigma)
    for t in range(k):
        chosen = list(idx[:t])
        cands = [x for x in range(len(X)) if x not in chosen]
        objective = np.array([brute_mmd2(K, chosen + [x]) for x in cands])
        assert idx[t] == cands[int(np.argmin(objective))], f"step {t}"
        # the reported MMD is that of the prefix
        assert info["mmd"][t] == pytest.approx(np.sqrt(max(objective.min(), 0)), rel=1e-6, abs=1e-9)
        # and the survey's score rule gives the same winner
        score = K.mean(axis=1) - K[:, chosen].sum(axis=1) / (t + 1)
        score[chosen] = -np.inf
        assert idx[t] == int(np.argmax(score))


def test_herding_tracks_the_pool_better_than_random(X):
    k = 10
    idx, info = kernel_herding(X, k)
    K = full_kernel(X, info["bandwidth"])
    rng = np.random.default_rng(0)
    random_mmd = [brute_mmd2(K, rng.choice(len(X), k, replace=False)) for _ in range(200)]
    assert brute_mmd2(K, idx) < np.min(random_mmd)
    # the small far blob (10% of the pool) gets its share: one of ten
    assert np.sum(idx >= 45) == 1


def test_distinct_deterministic_and_blockwise(X):
    a, ia = kernel_herding(X, 50)  # every item: a permutation
    assert sorted(a.tolist()) == list(range(50))
    b, _ = kernel_herding(X, 20, block_size=7)
    c, _ = kernel_herding(X, 20, seed=123)  # no ties: the seed changes nothing
    np.testing.assert_array_equal(a[:20], b)
    np.testing.assert_array_equal(a[:20], c)
    assert ia["mmd"][-1] == pytest.approx(0, abs=1e-7)  # the whole pool matches itself


def test_seed_breaks_exact_ties_only():
    rng = np.random.default_rng(0)
    base = rng.normal(size=(6, 3))
    X = np.vstack([base, base])  # every item has a twin: the first pick is always a tie between twins
    firsts = {int(kernel_herding(X, 3, seed=s)[0][0]) for s in range(20)}
    assert len(firsts) == 2 and (min(firsts) % 6) == (max(firsts) % 6)
    np.testing.assert_array_equal(kernel_herding(X, 4, seed=5)[0], kernel_herding(X, 4, seed=5)[0])


@pytest.mark.parametrize(
    "args, match",
    [
        (dict(X=np.ones((5, 2)), k=2), "median pairwise distance is 0"),
        (dict(X=np.zeros(5), k=2), "2-D"),
        (dict(X=np.array([[0.0, np.nan], [1.0, 2.0]]), k=1), "non-finite"),
        (dict(X=np.eye(3), k=4), "k: 4 is larger"),
        (dict(X=np.eye(3), k=2, bandwidth=-1.0), "bandwidth"),
        (dict(X=np.eye(3), k=2, block_size=0), "block_size"),
    ],
)
def test_kernel_herding_errors(args, match):
    with pytest.raises(ValueError, match=match):
        kernel_herding(**args)


# ---------------------------------------------------------------------------------------------------
# The selector
# ---------------------------------------------------------------------------------------------------
def test_registered():
    assert get_method("herding") is HerdingSelector
    assert HerdingSelector.needs_no_models and HerdingSelector.signal == "text (LM hidden states)"
    sel = make_method("herding", k=5, bandwidth=2.0, max_length=256)
    assert sel.params_dict() == {"k": 5, "seed": 0, "bandwidth": 2.0, "max_length": 256, "batch_size": 16}


def test_no_texts_is_refused(small):
    no_text = from_arrays(small.responses, small.models, small.items, small.target, name="notext")
    with pytest.raises(ValueError, match="'notext' has no item texts; herding chooses by item text"):
        HerdingSelector(k=5, progress=False).fit(no_text, no_text)


def test_choice_ignores_model_results(small, monkeypatch):
    """With features fixed, the subset depends on the texts only, never on the responses."""
    import essence.features.lm as lm

    feats = np.random.default_rng(3).normal(size=(small.n_items, 8)).astype(np.float32)
    lookup = {t: f for t, f in zip(small.texts, feats)}
    monkeypatch.setattr(lm, "lm_hidden_states", lambda texts, **kw: np.stack([lookup[t] for t in texts]))
    # predictors="basic": the reconstructor's stronger kinds (an MLP, seconds) do not bear on the choice
    a = HerdingSelector(k=10, progress=False).fit(small, small, predictors="basic")
    flipped = from_arrays(1 - small.responses, small.models, small.items, texts=small.texts, name="flipped")
    b = HerdingSelector(k=10, progress=False).fit(flipped, flipped, predictors="basic")
    np.testing.assert_array_equal(a.items_, b.items_)
    np.testing.assert_array_equal(a.items_, kernel_herding(feats, 10)[0])
    assert a.info_["bandwidth"] == pytest.approx(median_heuristic(feats)) == a.bandwidth_
    assert len(a.info_["mmd"]) == 10 and a.reconstructor_choice_ in a.reconstructor_scores_


@pytest.mark.slow
def test_end_to_end_real_features(small, project_cache):
    """Real SmolLM2 hidden states of 80 gsm8k items (read from the project's feature cache when warm)."""
    from essence.artifact.compressed import compress

    c1 = compress(small, k=10, method="herding", progress=False)
    c2 = compress(small, k=10, method="herding", seed=1, progress=False)
    assert len(set(c1.items)) == 10 and c1.method == "herding"
    assert c1.items == c2.items  # the seed only breaks ties (the split differs, the choice does not)
    assert c1.selection["bandwidth"] > 0 and len(c1.selection["mmd"]) == 10
    assert np.isfinite(c1.figures["test"]["rmse"])


def test_gam_candidate_extrapolates_with_the_line():
    """Herding chooses without model results: its GAM continues with the least-squares slope beyond the
    training models' range (essence.reconstructors.simple.GAMReconstructor)."""
    from essence.methods.herding import HerdingSelector

    cands = HerdingSelector(k=5).reconstructor_candidates(None, np.arange(5))
    assert set(cands) == {"gam"} and cands["gam"]().extrapolate == "line"
