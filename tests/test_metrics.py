"""essence.data.metrics against scipy and hand-computed cases."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from essence.data import metrics as M


def test_hand_computed_errors():
    y = [10.0, 20.0, 30.0, 40.0]
    p = [12.0, 18.0, 30.0, 44.0]
    assert M.mae(y, p) == pytest.approx((2 + 2 + 0 + 4) / 4)
    assert M.rmse(y, p) == pytest.approx(np.sqrt((4 + 4 + 0 + 16) / 4))


def test_correlations_match_scipy():
    rng = np.random.default_rng(0)
    y = rng.uniform(0, 100, 200)
    p = y + rng.normal(0, 10, 200)
    p[:5] = p[5]  # some ties
    assert M.kendall(y, p) == pytest.approx(stats.kendalltau(y, p).statistic)
    assert M.spearman(y, p) == pytest.approx(stats.spearmanr(y, p).statistic)
    assert M.pearson(y, p) == pytest.approx(np.corrcoef(y, p)[0, 1])


def test_kendall_hand_case():
    # 4 models; one discordant pair (3,4) out of 6 -> tau = (5 - 1) / 6
    assert M.kendall([1, 2, 3, 4], [1, 2, 4, 3]) == pytest.approx(4 / 6)
    assert M.kendall([1, 2, 3], [3, 2, 1]) == pytest.approx(-1)


def test_rank_error_within_hand_case():
    y = np.arange(1.0, 21.0)  # 20 models, distinct
    p = y.copy()
    p[[0, 19]] = p[[19, 0]]  # swap best and worst: each moves 19 ranks
    p[[5, 6]] = p[[6, 5]]  # swap neighbours: each moves 1 rank
    assert M.rank_error_within(y, y, 0) == 1.0
    # x = 5% of 20 models = 1 rank: all but the two extremes
    assert M.rank_error_within(y, p, 5) == pytest.approx(18 / 20)
    # x = 4%: 0.8 ranks: the neighbours' 1-rank shift no longer counts
    assert M.rank_error_within(y, p, 4) == pytest.approx(16 / 20)
    assert M.rank_error_within(y, p, 100) == 1.0


def test_coverage_and_summary():
    y = np.array([10.0, 50.0, 90.0])
    assert M.coverage(y, y - 1, y + 1) == 1.0
    assert M.coverage(y, [11, 40, 80], [12, 60, 95]) == pytest.approx(2 / 3)
    s = M.summary(y, y + 1, y - 2, y + 2)
    assert s["rmse"] == pytest.approx(1.0) and s["coverage"] == 1.0 and s["n_models"] == 3
    assert set(s) >= {"mae", "kendall", "spearman", "pearson", "rank_err_5", "rank_err_10"}


def test_bad_inputs():
    with pytest.raises(ValueError, match="same length"):
        M.rmse([1, 2], [1])
    with pytest.raises(ValueError, match="NaN"):
        M.mae([1, np.nan], [1, 2])
    with pytest.raises(ValueError, match="no models"):
        M.rmse([], [])
    with pytest.raises(ValueError, match="percentage"):
        M.rank_error_within([1, 2], [1, 2], 150)
    with pytest.raises(ValueError, match="exceed"):
        M.coverage([1.0], [2.0], [1.0])
    assert np.isnan(M.pearson([1, 2, 3], [5, 5, 5]))


# ---------------------------------------------------------------------------------------------------
# the one ratio to random
# ---------------------------------------------------------------------------------------------------
def test_ratio_to_random_is_the_geometric_mean_of_paired_ratios():
    from essence.data.metrics import ratio_to_random

    # twice as good on one split, twice as bad on another: as good as random overall
    assert ratio_to_random([1.0, 4.0], [2.0, 2.0]) == pytest.approx(1.0)
    assert ratio_to_random([1.0, 3.0], [2.0, 4.0]) == pytest.approx(np.sqrt(0.5 * 0.75))
    # a missing side drops the pair; nothing left is NaN
    assert ratio_to_random([1.0, np.nan], [2.0, 2.0]) == pytest.approx(0.5)
    assert np.isnan(ratio_to_random([np.nan], [2.0]))
    assert np.isnan(ratio_to_random([], []))
    with pytest.raises(ValueError, match="one pair per run"):
        ratio_to_random([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="> 0"):
        ratio_to_random([0.0], [1.0])


def test_paired_with_random_pairs_by_dataset_and_seed():
    import pandas as pd

    from essence.data.metrics import paired_with_random, ratio_to_random

    df = pd.DataFrame({
        "dataset": ["a", "a", "a", "a", "b", "b"], "method": ["random", "random", "x", "x", "random", "x"],
        "k": [5, 5, 5, 5, 5, 5], "seed": [0, 1, 1, 0, 0, 0], "rmse": [2.0, 4.0, 2.0, 1.0, 3.0, 9.9],
        "error": ["", "", "", "", "", "boom"],
    })
    a, b = paired_with_random(df, "x", 5)
    assert sorted(zip(a[np.isfinite(a)].tolist(), b[np.isfinite(a)].tolist())) == [(1.0, 2.0), (2.0, 4.0)]
    assert np.isnan(a).sum() == 1  # the failed run on b is a pair with a missing side
    assert ratio_to_random(a, b) == pytest.approx(0.5)
    assert paired_with_random(df, "x", 7)[0].size == 0
