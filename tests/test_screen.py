"""essence.search.screen: the pre-screen that shrinks whole-benchmark pools."""

import numpy as np
import pytest

from essence.data.errors import InputError
from essence.search.screen import item_statistics, screen_pool
from essence.data.synthetic import generate_mirt


def test_item_statistics_match_numpy_and_chunking():
    rng = np.random.default_rng(0)
    R = (rng.random((50, 30)) < 0.5).astype(float)
    R[:, 3] = 1.0  # constant
    R[rng.random(R.shape) < 0.1] = np.nan
    y = rng.normal(50, 10, 50)
    p, r = item_statistics(R, y, chunk=7)
    np.testing.assert_allclose(p, np.nanmean(R, axis=0))
    X = np.where(np.isnan(R), np.nanmean(R, axis=0), R)
    for j in (0, 5, 29):
        np.testing.assert_allclose(r[j], np.corrcoef(X[:, j], y)[0, 1], atol=1e-12)
    assert r[3] == 0.0


@pytest.mark.parametrize("method", ["stratified", "pbis", "random"])
def test_screen_keeps_max_items(method):
    d = generate_mirt(300, 500, seed=1)
    out = screen_pool(d.responses, d.target, 120, method=method, seed=0)
    assert out["keep"].size == 120 and np.all(np.diff(out["keep"]) > 0)
    assert np.union1d(out["keep"], out["dropped"]).size == 500 and out["info"]["n_dropped"] == 380
    again = screen_pool(d.responses, d.target, 120, method=method, seed=0)
    np.testing.assert_array_equal(out["keep"], again["keep"])


def test_stratified_covers_difficulties_and_prefers_discriminating_items():
    d = generate_mirt(1000, 2000, seed=2)
    p, r = item_statistics(d.responses, d.target)
    strat = screen_pool(d.responses, d.target, 200, "stratified")["keep"]
    pbis = screen_pool(d.responses, d.target, 200, "pbis")["keep"]
    rand = screen_pool(d.responses, d.target, 200, "random", seed=0)["keep"]
    # every accuracy decile keeps its share (+-2: ties in accuracy at the bin edges) ...
    deciles = np.digitize(p[strat], np.quantile(p, np.linspace(0, 1, 11)[1:-1]))
    assert np.bincount(deciles, minlength=10).min() >= 18
    # ... and within it the most discriminating items, so |r| beats a random draw
    assert np.abs(r[strat]).mean() > np.abs(r[rand]).mean() + 0.05
    assert np.abs(r[pbis]).min() >= np.abs(np.delete(r, pbis)).max()
    assert np.ptp(p[strat]) > np.ptp(p[pbis])


def test_small_pool_untouched_and_bad_arguments():
    R = np.zeros((5, 4))
    out = screen_pool(R, np.arange(5.0), 10)
    assert out["keep"].tolist() == [0, 1, 2, 3] and out["info"]["applied"] is False
    with pytest.raises(InputError, match="screen"):
        screen_pool(R, np.arange(5.0), 2, method="best")
    with pytest.raises(InputError, match="max_pool"):
        screen_pool(R, np.arange(5.0), 0)


@pytest.mark.parametrize("name", ["kmeans", "irt", "tinybench"])
def test_slow_methods_refuse_whole_benchmarks_up_front(name):
    """K-Means, IRT and tinyBenchmarks grow with the items (846 s / 353 s / 233 s at 14,000 items): above
    their item_limit fit refuses before any work, naming the limit, the measurement and the fix."""
    from essence.data import from_arrays
    from essence.methods import make_method

    m = make_method(name, k=5, seed=0, progress=False)
    n = m.item_limit + 1
    R = np.zeros((6, n))
    R[::2, ::3] = 1.0
    d = from_arrays(R)
    with pytest.raises(InputError, match=rf"{name}: {n} items are more than the {m.item_limit} .*took .*'essence'"):
        m.fit(d.subset(models=np.arange(4)), d.subset(models=np.arange(4, 6)))
