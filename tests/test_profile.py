"""essence.lessons.profile: mean profiles of item sets and their distances, on real data slices."""

from __future__ import annotations

import numpy as np
import pytest

from essence.lessons.profile import mean_profile, profile_distance, random_profiles


def test_pool_profile_is_the_row_mean_in_pp(small):
    R = small.responses
    p = mean_profile(R)
    assert p.shape == (small.n_models,)
    np.testing.assert_allclose(p, 100 * np.nanmean(R, axis=1))
    assert p.min() >= 0 and p.max() <= 100


def test_subset_profile_and_mask_agree(small):
    idx = np.array([3, 7, 11, 40])
    mask = np.zeros(small.n_items, dtype=bool)
    mask[idx] = True
    np.testing.assert_allclose(mean_profile(small.responses, idx), 100 * small.responses[:, idx].mean(axis=1))
    np.testing.assert_allclose(mean_profile(small.responses, mask), mean_profile(small.responses, idx))


def test_integer_weights_equal_repeated_items(small):
    R = small.responses
    idx, w = np.array([0, 5, 9]), np.array([3.0, 1.0, 2.0])
    repeated = np.repeat(idx, w.astype(int))
    np.testing.assert_allclose(mean_profile(R, idx, w), 100 * R[:, repeated].mean(axis=1))


def test_missing_cells_are_left_out_with_their_weight(alpaca):
    R = alpaca.responses
    assert np.isnan(R).any()  # the real AlpacaEval 2 matrix has a few missing cells
    np.testing.assert_allclose(mean_profile(R), 100 * np.nanmean(R, axis=1))
    col = np.flatnonzero(np.isnan(R).any(axis=0))[0]
    p = mean_profile(R, np.array([col]))  # one item: a model missing it has no profile value
    np.testing.assert_array_equal(np.isnan(p), np.isnan(R[:, col]))


def test_distance_kinds(small):
    R = small.responses
    full, sub = mean_profile(R), mean_profile(R, np.arange(10))
    assert profile_distance(full, full) == 0.0
    d = sub - full
    assert profile_distance(sub, full) == pytest.approx(np.sqrt(np.mean(d**2)))
    assert profile_distance(sub, full, "mae") == pytest.approx(np.mean(np.abs(d)))
    assert profile_distance(sub, full, "bias") == pytest.approx(np.mean(d))
    assert profile_distance(sub, full, "mae") <= profile_distance(sub, full) + 1e-12
    with_nan = sub.copy()
    with_nan[0] = np.nan  # models without a value are skipped
    assert profile_distance(with_nan, full) == pytest.approx(np.sqrt(np.mean(d[1:] ** 2)))


def test_random_profiles_are_random_selector_subsets(small):
    from essence.methods.random import RandomSelector

    P = random_profiles(small.responses, k=12, n_draws=4, seed=5)
    assert P.shape == (4, small.n_models)
    for d in range(4):
        idx = RandomSelector(k=12, seed=5 + d).select(small, small)
        np.testing.assert_allclose(P[d], mean_profile(small.responses, idx))
    np.testing.assert_array_equal(P, random_profiles(small.responses, k=12, n_draws=4, seed=5))


def test_more_items_track_the_pool_better_on_average(small):
    R = small.responses
    full = mean_profile(R)
    d5 = np.mean([profile_distance(p, full) for p in random_profiles(R, 5, 20)])
    d60 = np.mean([profile_distance(p, full) for p in random_profiles(R, 60, 20)])
    assert d60 < d5


@pytest.mark.parametrize("call", [
    lambda R: mean_profile(R[0]),                                # 1-D
    lambda R: mean_profile(R * 100),                             # percentages
    lambda R: mean_profile(R, np.array([R.shape[1]])),           # out of range
    lambda R: mean_profile(R, np.array([], dtype=int)),          # empty
    lambda R: mean_profile(R, np.array([0, 1]), [1.0]),          # wrong number of weights
    lambda R: mean_profile(R, np.array([0, 1]), [-1.0, 2.0]),    # negative weight
    lambda R: profile_distance(R[:, 0], R[:-1, 0]),              # shapes differ
    lambda R: profile_distance(R[:, 0], R[:, 1], "median"),      # unknown kind
    lambda R: random_profiles(R, 0),                             # k too small
    lambda R: random_profiles(R, R.shape[1] + 1),                # k too large
])
def test_bad_input_raises_value_error(small, call):
    with pytest.raises(ValueError):
        call(small.responses)


def test_plot_mean_profile_draws_every_line(small, tmp_path):
    """The figure function behind notebook 09: one panel per entry, the random band, stable file names."""
    from essence.lessons import plots

    plots.use_style()
    R = small.responses
    full = mean_profile(R)
    panel = {"profiles": {"full": full, "kmeans": mean_profile(R, np.arange(10)), "herding": mean_profile(R, np.arange(10, 20))},
             "random_draws": random_profiles(R, 10, n_draws=5), "distance": {"kmeans": 1.0, "random": "x"}}
    for smooth in (1, 25):
        fig = plots.plot_mean_profile({"a": panel, "b": panel}, title="t", smooth=smooth)
        assert len(fig.axes) == 4
        assert "K-Means 1.00" in fig.axes[0].get_title() and "one random draw x" in fig.axes[0].get_title()
        assert len(fig.legends) == 1 and len(fig.legends[0].get_texts()) == 5  # band, random mean, full, 2 methods
    paths = plots.savefig(fig, "profile_test", tmp_path)
    assert all(p.exists() for p in paths)


def test_profile_lines_match_the_pure_functions(small):
    from essence.lessons.profile import profile_lines

    chosen = {"kmeans": np.arange(0, 80, 8), "kmeans_w": np.arange(1.0, 11.0), "herding": np.arange(5, 15)}
    R = small.responses[:300]
    panel, extra = profile_lines(R, chosen, k=10, n_draws=7, seed=2)
    full = mean_profile(R)
    np.testing.assert_array_equal(panel["profiles"]["full"], full)
    np.testing.assert_array_equal(panel["profiles"]["kmeans"], mean_profile(R, chosen["kmeans"], chosen["kmeans_w"]))
    assert panel["distance"]["herding"] == profile_distance(mean_profile(R, chosen["herding"]), full)
    assert panel["random_draws"].shape == (7, 300) and extra["random_draws"].shape == (7,)
    np.testing.assert_array_equal(panel["random_draws"], random_profiles(R, 10, n_draws=7, seed=2))
    assert extra["kmeans_unweighted"] == profile_distance(mean_profile(R, chosen["kmeans"]), full)
    d = extra["random_draws"]
    assert panel["distance"]["random"] == f"{d.mean():.2f} ± {d.std(ddof=1):.2f}"


def test_weight_shares_and_distance_row(small):
    from essence.lessons.profile import distance_row, profile_lines, weight_shares

    s = weight_shares([1, 6, 1, 2])
    assert s["largest cluster (%)"] == pytest.approx(60) and s["smallest cluster (%)"] == pytest.approx(10)
    assert s["largest 5 clusters (%)"] == pytest.approx(100) and s["equal weights, each item (%)"] == pytest.approx(25)
    with pytest.raises(ValueError):
        weight_shares([-1, 2])
    chosen = {"kmeans": np.arange(10), "kmeans_w": np.ones(10), "herding": np.arange(10, 20)}
    panel, extra = profile_lines(small.responses[:200], chosen, k=10, n_draws=9)
    row = distance_row(panel, extra)
    farther = np.mean(extra["random_draws"] > panel["distance"]["kmeans"])
    assert row["draws farther than K-Means"] == pytest.approx(farther) and row["models"] == 200
    assert row["random: mean"] == pytest.approx(np.mean(extra["random_draws"]))


def test_choose_kmeans_herding_fits_on_training_and_validation_only(alpaca, monkeypatch):
    """The held-out models are what no selection saw: rewriting their rows changes nothing chosen; rewriting the
    training rows changes K-Means' items but not Herding's, which reads texts only. Herding's features are fixed
    stand-ins (its SmolLM2 path: test_herding.py)."""
    import essence.features.lm as lm
    from essence.data import from_arrays
    from essence.lessons.profile import choose_kmeans_herding

    feats = np.random.default_rng(4).normal(size=(alpaca.n_items, 6))
    lookup = dict(zip(alpaca.texts, feats))
    monkeypatch.setattr(lm, "lm_hidden_states", lambda texts, **kw: np.stack([lookup[t] for t in texts]))
    c = choose_kmeans_herding(alpaca, k=8, seed=0)
    assert c["kmeans"].shape == (8,) and np.unique(c["kmeans"]).size == 8 and c["kmeans_w"].sum() == alpaca.n_items
    assert np.unique(c["herding"]).size == 8
    sp = c["split"]
    held = c["held_out"]
    assert np.all(np.diff(held) > 0) and held.size == sp.val.size + sp.test.size > 0
    assert not np.isin(held, sp.train).any() and np.union1d(held, sp.train).size == alpaca.n_models

    def rewritten(rows):  # the same targets (so the same split), other scores on ``rows``
        R = alpaca.responses.copy()
        R[rows] = np.random.default_rng(9).random((len(rows), alpaca.n_items))
        return from_arrays(R, alpaca.models, alpaca.items, alpaca.target, alpaca.texts, name=alpaca.name)

    p = choose_kmeans_herding(rewritten(sp.test), k=8, seed=0)
    np.testing.assert_array_equal(p["split"].test, sp.test)
    for key in ("kmeans", "kmeans_w", "herding"):
        np.testing.assert_array_equal(p[key], c[key])
    q = choose_kmeans_herding(rewritten(sp.train), k=8, seed=0)
    assert not np.array_equal(q["kmeans"], c["kmeans"])
    np.testing.assert_array_equal(q["herding"], c["herding"])
