"""Helpers of notebook 06 (essence.lessons.irt): test information, bins, the score-level variant, the runs."""

from __future__ import annotations

import numpy as np
import pytest

from essence.lessons import irt as LI
from essence.data.errors import InputError
from essence.features.irt import fisher_information
from essence.methods.irt import select_by_information
from essence.reconstructors.tables import Table1D

A = np.array([1.0, 2.0, 0.5, 3.0, 1.5])
B = np.array([-1.0, 0.0, 0.5, 1.0, 2.0])


def test_test_information_is_the_sum_and_peaks_at_b():
    grid = np.linspace(-3, 3, 601)
    np.testing.assert_allclose(LI.test_information(grid, A, B), fisher_information(grid, A, B).sum(axis=1))
    one = LI.test_information(grid, A[[3]], B[[3]])
    assert np.isclose(grid[np.argmax(one)], 1.0) and np.isclose(one.max(), 3.0**2 / 4)


def test_groups_and_bin_table_follow_the_rule():
    theta = np.random.default_rng(0).normal(size=40)
    groups = LI.ability_groups(theta, 4)
    assert [g.size for g in groups] == [10] * 4 and groups[0].max() <= groups[1].min()
    curve = Table1D(np.array([-6.0, 6.0]), np.array([0.0, 100.0]))
    t = LI.bin_table(theta, A, B, 4, curve)
    assert t["item"].tolist() == select_by_information(A, B, theta, 4).tolist()
    assert np.allclose(t["rise"], (t["theta_hi"] - t["theta_lo"]) * 100 / 12) and (t["info"] > 0).all()
    with pytest.raises(InputError, match="need at least"):
        LI.ability_groups(theta[:3], 4)


def test_score_levels_spread_items_over_the_score_range():
    # full score rises from 0 to 100 between theta -2 and 2: levels 25, 50, 75 sit at theta -1, 0, 1
    x = np.linspace(-6, 6, 1201)
    curve = Table1D(x, np.clip((x + 2) * 25, 0, 100))
    got = LI.select_at_score_levels(A, B, curve, (0, 100), 3)
    # at theta -1 item 0 (b=-1, a=1) vs item 1 (a=2, b=0): information 0.25 vs 4*P(1-P) at -2 = 0.42 -> item 1
    want = [int(np.argmax(fisher_information([t], A, B)[0])) for t in (-1.0, 0.0, 1.0)]
    assert got[0] == want[0] and np.unique(got).size == 3
    assert 3 in got  # the sharpest item, centred at theta 1, is taken at the top level
    with pytest.raises(InputError, match="high > low"):
        LI.select_at_score_levels(A, B, curve, (50, 50), 2)


@pytest.mark.slow
def test_hypothesis_runs_on_gsm8k_cached_fit(gsm8k):
    df = LI.hypothesis_runs(gsm8k, 20, [0], n_random=2)
    assert list(df["selection"]) == ["irt", "above_floor_bins", "score_levels", "random", "random"]
    assert (df["rmse"] > 0).all() and (df["n_test_floor"] > 0).all()
    assert df.loc[0, "floor_bins"] >= 1  # GSM8K: a sixth of the models near 0 pp fill some bins


def test_irt_figures_draw_with_text_at_9_pt_or_more():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd
    from matplotlib.text import Text

    from essence.lessons import plots
    from essence.lessons.plots import irt as PI

    plots.use_style()
    grid = np.linspace(-3, 3, 61)
    P, info = LI.fisher_information(grid, A, B), LI.fisher_information(grid, A, B)
    theta = np.random.default_rng(1).normal(size=60)
    curve = Table1D(np.array([-6.0, 6.0]), np.array([0.0, 100.0]))
    runs = pd.DataFrame({"split_seed": [0, 0, 0], "selection": ["irt", "random", "random"], "rmse": [4.0, 3.8, 3.9],
                         "rmse_floor": [1.5, 1.8, 1.9], "rmse_above": [4.4, 4.1, 4.2]})
    figs = [PI.plot_item_curves(grid, P, info, list("abcde"), {"irt (5 items)": info.sum(axis=1)}),
            PI.plot_bins(theta, 50 + 10 * theta, curve, LI.bin_table(theta, A, B, 4, curve), 5.0, title="GSM8K *"),
            PI.plot_hypothesis(runs, title="GSM8K *")]
    for fig in figs:
        small = [t.get_text() for t in fig.findobj(Text) if t.get_text().strip() and t.get_fontsize() < 9]
        assert not small, small
        plt.close(fig)
