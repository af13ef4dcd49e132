"""Helpers of notebook 05 (essence.lessons.reconstruction), on real data slices."""

from __future__ import annotations

import numpy as np
import pytest

from essence.lessons import reconstruction as LR
from essence.data import split_models
from essence.data.errors import InputError
from essence.reconstructors.intervals import IntervalModel, cross_fitted_predictions
from essence.data.metrics import coverage
from essence.reconstructors.simple import LineReconstructor, MeanRidgeReconstructor
from essence.reconstructors.choose import choose_by_cv


def test_ladder_order_and_unknown_names():
    assert list(LR.LADDER) == ["mean", "line", "mean_ridge", "gam", "ridge", "ridge_gam"]
    assert list(LR.ladder_makers(["line", "gam"])) == ["line", "gam"]
    with pytest.raises(InputError, match="not in the ladder"):
        LR.ladder_makers(["line", "spline"])


def test_error_grid_rows_draws_and_skips(small):
    sp = split_models(small, seed=0)
    R, y = small.responses, small.target
    df = LR.error_grid(R[sp.train], y[sp.train], R[sp.test], y[sp.test], ks=[5, 20], n_trains=[15, 10_000],
                       names=["mean", "line"], n_draws=2, seed=3)
    # 10_000 training models are more than the slice has: skipped; 2 ks x 1 n x 2 draws x 2 reconstructors
    assert len(df) == 8 and set(df["n_train"]) == {15} and set(df["k"]) == {5, 20}
    assert np.isfinite(df["rmse"]).all() and (df["rmse"] > 0).all()
    again = LR.error_grid(R[sp.train], y[sp.train], R[sp.test], y[sp.test], ks=[5, 20], n_trains=[15],
                          names=["mean", "line"], n_draws=2, seed=3)
    np.testing.assert_array_equal(df["rmse"].to_numpy(), again["rmse"].to_numpy())
    # the line learns the offset the plain mean ignores: on average over draws it is not worse
    g = df.groupby("reconstructor")["rmse"].mean()
    assert g["line"] < g["mean"]
    with pytest.raises(InputError, match="between 1 and"):
        LR.error_grid(R[sp.train], y[sp.train], R[sp.test], y[sp.test], ks=[0], n_trains=[15])


def test_interval_for_subset_matches_the_compress_recipe(small):
    sp = split_models(small, seed=1)
    S = np.arange(0, 80, 4)
    cands = LR.ladder_makers(["line", "mean_ridge"])
    out = LR.interval_for_subset(small.responses, small.target, sp, S, cands, level=0.9, seed=1)
    # the same steps by hand: CV choice on train + val, cross-fits, interval calibrated on the validation part
    fit = np.r_[sp.train, sp.val]
    X, y = small.responses[np.ix_(fit, S)], small.target[fit]
    label, rec, _ = choose_by_cv(cands, X, y, seed=1)
    cf = cross_fitted_predictions(rec, X, y, seed=1)
    n = sp.train.size
    iv = IntervalModel(0.9).fit(cf[:n], y[:n], cf[n:], y[n:])
    est = rec.predict(small.responses[np.ix_(sp.test, S)])
    lo, hi = iv.interval(est)
    assert out["choice"] == label and np.isclose(out["interval"].q_, iv.q_)
    np.testing.assert_allclose(out["lower"], lo)
    np.testing.assert_allclose(out["upper"], hi)
    assert out["coverage"] == coverage(small.target[sp.test], lo, hi)
    assert np.isclose(out["width"], np.mean(hi - lo)) and out["width"] > 0


def test_coverage_table_counts_and_is_near_nominal(small, alpaca):
    df = LR.coverage_table({"slice": small, "alpaca_eval2": alpaca}, k=20, split_seeds=[0, 1], n_draws=1,
                           candidates={"line": LineReconstructor, "mean_ridge": MeanRidgeReconstructor})
    assert len(df) == 4 and list(df["dataset"].unique()) == ["slice", "alpaca_eval2"]
    assert ((df["covered"] <= df["n_test"]) & (df["coverage"] == df["covered"] / df["n_test"])).all()
    big = df[df["dataset"] == "slice"]
    pooled = big["covered"].sum() / big["n_test"].sum()
    assert 0.7 <= pooled <= 1.0  # a 90% interval on 60 x 2 test models of real data


def _small_text(fig) -> list[str]:
    from matplotlib.text import Text

    return [t.get_text() for t in fig.findobj(Text) if t.get_text().strip() and t.get_fontsize() < 9]


def test_figures_draw_with_text_at_9_pt_or_more(small):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from essence.lessons import plots
    from essence.lessons.plots import reconstruction as PR

    plots.use_style()
    sp = split_models(small, seed=0)
    R, y = small.responses, small.target
    df = LR.error_grid(R[sp.train], y[sp.train], R[sp.test], y[sp.test], ks=[5, 20], n_trains=[30],
                       names=["mean", "line"], n_draws=1)
    out = LR.interval_for_subset(R, y, sp, np.arange(20), LR.ladder_makers(["line"]))
    m = 100 * np.nanmean(R[:, :20], axis=1)
    figs = [PR.plot_error_grid({"GSM8K * slice": df}, x="k"), PR.plot_intervals({"slice": out}),
            PR.plot_subset_fits(m, y, {"mean": (np.array([0, 100]), np.array([0, 100]))}, title="slice")]
    for fig in figs:
        assert not _small_text(fig), _small_text(fig)
        plt.close(fig)
    assert "covered" in figs[1].axes[0].get_title()


def test_interval_order_ignores_float_noise_in_tied_estimates():
    from essence.lessons.plots.reconstruction import interval_order

    est = np.array([5.0, 20.0, 5.0 + 1e-12, 5.0 - 1e-12, 12.0])
    y_true = np.array([7.0, 21.0, 3.0, 9.0, 11.0])
    # a plain argsort follows the noise in the three tied estimates
    assert list(np.argsort(est, kind="stable")) == [3, 0, 2, 4, 1]
    # the plot's order: ties at 0.01 pp broken by the true score, whatever the noise
    assert list(interval_order(est, y_true)) == [2, 0, 3, 4, 1]
    noisy = est.copy()
    noisy[[0, 2, 3]] = 5.0 + np.array([2e-12, -3e-12, 1e-12])
    assert list(interval_order(noisy, y_true)) == [2, 0, 3, 4, 1]
    # distinct estimates keep their order
    assert list(interval_order(np.array([3.0, 1.0, 2.0]), np.zeros(3))) == [1, 2, 0]
