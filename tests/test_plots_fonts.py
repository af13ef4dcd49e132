"""Every figure function, drawn on small inputs, keeps its text readable and its layout promises.

The figures are shown in the committed notebooks at the page's width; text below
:data:`essence.lessons.plots.style.MIN_FONT_PT` (9 pt) is hard to read there. Each figure function in
``essence.lessons.plots`` is drawn on a small real slice (gsm8k) or a few numbers of the shape it documents,
and every visible text artist of the figure (titles, labels, tick labels, legend entries, annotations,
colour-bar labels, notes) must be at least 9 pt. A new figure function without a case here fails
:func:`test_every_figure_function_has_a_case`, so that it is checked too.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from essence.lessons import plots

RNG = np.random.default_rng(0)

#: the issue's floor (the figures' own constant, essence.lessons.plots.style.MIN_FONT_PT, must not be below it)
MIN_PT = 9.0


def _subset(small, n):
    return {f"gsm8k{'' if i == 0 else i}": small for i in range(n)}


def _fitness_table():
    gen = np.array([0, 10, 30, 100])
    return pd.DataFrame({"generation": gen, "fitness_rmse": 4 - 0.5 * np.log1p(gen) / 5, "test_rmse": 4 - 0.1 * np.log1p(gen)})


def _traces():
    rows = []
    for k in (25, 50):
        for seed in (0, 1):
            for step, stage in enumerate(["GA", "round 1", "round 2"]):
                rows.append({"k": k, "seed": seed, "stage": stage, "step": step, "fitness_rmse": 3 - 0.2 * step,
                             "val_rmse": 3.5 - 0.1 * step + 0.1 * seed})
    return pd.DataFrame(rows)


def _ablation():
    variants = ["GA only", "filter + GA", "filter + GA + refinement"]
    rows = [{"variant": v, "k": k, "seed": s, "rmse": 3 + 0.1 * i + 0.05 * s}
            for k in (25, 50) for s in (0, 1, 2) for i, v in enumerate(variants)]
    return pd.DataFrame(rows), variants


def _cases(small):
    """figure function name -> a callable drawing it on small inputs (``small``: 600 gsm8k models x 80 items)."""
    R = np.nan_to_num(small.responses)
    C = np.corrcoef(R.T[:20])
    ruler = lambda x: np.asarray(x, dtype=float)  # noqa: E731
    pairs = (RNG.random(300), RNG.random(300))
    curves = {"rank filter (text off)": [(0.7, 430, RNG.random(20) + 5), (0.8, 470, RNG.random(20) + 5),
                                         (0.9, 480, RNG.random(20) + 5)],
              "text filter (rank off)": [(0.6, 440, RNG.random(20) + 5), (0.8, 486, RNG.random(20) + 5)]}
    panel = {"full": RNG.random(20) + 5, "n_items": 486, "curves": curves}
    range_panel = {"train_x": 100 * R[:, :10].mean(axis=1), "train_y": small.target,
                   "train_fit": small.target, "x": 40.0, "estimate": 45.0, "lower": 40.0, "upper": 50.0}
    prof = 100 * R.mean(axis=1)
    A = RNG.random(40)
    A[30:] = 0
    return {
        "plot_score_distributions": lambda: plots.plot_score_distributions(_subset(small, 5)),
        "plot_item_difficulty": lambda: plots.plot_item_difficulty(_subset(small, 5)),
        "plot_pool_vs_full": lambda: plots.plot_pool_vs_full(_subset(small, 5)),
        "plot_redundancy_heatmaps": lambda: plots.plot_redundancy_heatmaps(
            {"R_text": C, "R_rank": C}, {"position": np.arange(20), "cluster": np.arange(20)[::-1]}, title="t"),
        "plot_redundancy_distributions": lambda: plots.plot_redundancy_distributions(
            {"R_text": {"gsm8k": pairs[0]}, "R_rank": {"gsm8k": pairs[1], "alpaca_eval2": pairs[0]}},
            {"R_text": 0.95, "R_rank": 0.9}, null={"R_rank": {"gsm8k": pairs[0] - 0.5}}),
        "plot_text_vs_rank": lambda: plots.plot_text_vs_rank({"gsm8k": pairs, "alpaca_eval2": pairs}, 0.95, 0.9),
        "plot_split_half": lambda: plots.plot_split_half({"gsm8k": (*pairs, 43), "alpaca_eval2": (*pairs, 44)}),
        "plot_kept_counts": lambda: plots.plot_kept_counts(
            {f"d{i}": {"kept": np.arange(12).reshape(3, 4) * 10, "tau_text": [0.9, 0.95, 1.0],
                       "tau_rank": [0.7, 0.8, 0.9, 1.0], "n_items": 120} for i in range(5)}),
        "plot_filter_error": lambda: plots.plot_filter_error({"gsm8k": panel, "alpaca_eval2": panel}, k=25),
        "plot_kept_vs_dropped": lambda: plots.plot_kept_vs_dropped(
            {"gsm8k": (RNG.random(50), np.arange(30))}, tau_rank=0.9),
        "plot_ruler": lambda: plots.plot_ruler(prof, small.target, ruler, {"random subset": (prof, small.target, 2.0)},
                                               dataset="gsm8k"),
        "plot_ga_history": lambda: plots.plot_ga_history(-np.linspace(4, 3, 11), -np.linspace(5, 4, 11),
                                                         refs={"g on the whole pool": 1.2}, dataset="gsm8k"),
        "plot_subset_vs_random": lambda: plots.plot_subset_vs_random(
            {"rmse": RNG.random(30) + 3, "kendall": RNG.random(30)}, {"GA": {"rmse": 3.2, "kendall": 0.5}}, k=50,
            dataset="gsm8k"),
        "plot_fitness_vs_heldout": lambda: plots.plot_fitness_vs_heldout(
            {"gsm8k": {"paper": [_fitness_table(), _fitness_table()], "ridge": [_fitness_table()]}},
            {"gsm8k": {"random 50-item subsets, test RMSE (GAM), mean": 4.0,
                       "the ruler on the whole pool, validation RMSE": 1.2}}),
        "plot_attribution": lambda: plots.plot_attribution(
            A, (A > 0).astype(int) * 3, RNG.random(40), {"high": [0, 1, 2], "low": [3, 4, 5], "random": [6, 7, 8]},
            best=[0, 1, 2, 3], k=4, dataset="gsm8k"),
        "plot_refinement_trace": lambda: plots.plot_refinement_trace(_traces(), dataset="gsm8k"),
        "plot_ablation": lambda: plots.plot_ablation(*_ablation(), dataset="gsm8k"),
        "plot_ratio_to_baseline": lambda: plots.plot_ratio_to_baseline(pd.DataFrame(
            {"dataset": ["gsm8k", "gsm8k", "arc", "arc"], "split": ["random", "top"] * 2,
             "method": ["auto", "auto", "kmeans", "kmeans"], "k": 50, "seed": 0,
             "ratio": [0.8, 1.2, np.nan, 1.5], "error": ["", "", "InputError: refused", ""]})),
        "plot_mean_profile": lambda: plots.plot_mean_profile(
            {"gsm8k": {"profiles": {"full": prof, "kmeans": prof + 1, "herding": prof - 1},
                       "random_draws": prof + RNG.normal(size=(5, prof.size)), "distance": {"kmeans": 1.0}}}, title="t"),
        "plot_new_model_estimates": lambda: plots.plot_new_model_estimates(
            pd.DataFrame({"dataset": ["gsm8k", "arc"], "estimate": [30.0, 40.0], "lower": [25.0, 35.0],
                          "upper": [35.0, 45.0]}),
            {"gsm8k": small.target, "arc": small.target}, chance={"arc": 25.0}, reference={"gsm8k": 31.0}),
        "plot_reconstructor_range": lambda: plots.plot_reconstructor_range({"gsm8k": range_panel, "arc": range_panel}),
        "plot_cross_prediction": lambda: plots.plot_cross_prediction(pd.DataFrame(
            {"benchmark": ["arc", "gsm8k", "arc", "gsm8k"], "own": [3.0, 4.0, 3.2, 4.1], "all": [2.5, 3.5, 2.6, 3.4],
             "own_pool": [1.0, 1.2, 1.1, 1.3]})),
        "plot_budget_split": lambda: plots.plot_budget_split({"essence": {"arc": 20, "gsm8k": 30}},
                                                             {"arc": 245, "gsm8k": 486}),
    }


def figure_functions() -> list[str]:
    return sorted(n for n in plots.__all__ if n.startswith("plot_"))


def small_texts(fig, minimum: float) -> list[str]:
    """``"<size> pt: <text>"`` for every visible, non-empty text artist of ``fig`` below ``minimum`` points."""
    from matplotlib.text import Text

    fig.canvas.draw()  # tick labels, legends and colour bars exist once drawn
    out = []
    for t in fig.findobj(Text):
        if t.get_visible() and t.get_text().strip() and t.get_fontsize() < minimum - 1e-9:
            out.append(f"{t.get_fontsize():g} pt: {t.get_text()[:60]!r}")
    return sorted(set(out))


@pytest.fixture(scope="module")
def cases(small):
    plots.use_style()
    return _cases(small)


def test_the_style_floor_is_at_least_9_pt():
    assert plots.MIN_FONT_PT >= MIN_PT


def test_every_figure_function_has_a_case(cases):
    missing = [n for n in figure_functions() if n not in cases]
    assert not missing, f"add a small-input case to tests/test_plots_fonts.py for: {', '.join(missing)}"


@pytest.mark.parametrize("name", figure_functions())
def test_no_text_below_the_minimum(cases, name):
    import matplotlib.pyplot as plt

    if name not in cases:
        pytest.skip("no case (test_every_figure_function_has_a_case fails)")
    fig = cases[name]()
    try:
        bad = small_texts(fig, MIN_PT)
    finally:
        plt.close(fig)
    assert not bad, f"{name}: text below {MIN_PT:g} pt:\n" + "\n".join(bad)


def test_a_planted_small_font_is_caught(cases):
    import matplotlib.pyplot as plt

    fig = cases["plot_ga_history"]()
    try:
        assert small_texts(fig, MIN_PT) == []
        fig.axes[0].annotate("tiny", (0.5, 0.5), xycoords="axes fraction", fontsize=MIN_PT - 0.5)
        assert small_texts(fig, MIN_PT) == [f"{MIN_PT - 0.5:g} pt: 'tiny'"]
    finally:
        plt.close(fig)
