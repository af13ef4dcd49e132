"""The figures keep the layout promises issue 14 asked for (small inputs; see test_plots_fonts for the cases)."""

from __future__ import annotations

import numpy as np
import pytest

from essence.lessons import plots

from test_plots_fonts import _cases


@pytest.fixture(scope="module")
def cases(small):
    plots.use_style()
    return _cases(small)


@pytest.fixture
def draw(cases):
    import matplotlib.pyplot as plt

    figs = []

    def _draw(name, *args, **kwargs):
        fig = cases[name]() if not (args or kwargs) else getattr(plots, name)(*args, **kwargs)
        fig.canvas.draw()
        figs.append(fig)
        return fig

    yield _draw
    for f in figs:
        plt.close(f)


def _panel_grid(fig):
    """(rows, cols) of the visible data panels, from their positions."""
    boxes = [ax.get_position() for ax in fig.axes if ax.axison and ax.get_label() != "<colorbar>"]
    rows = len({round(b.y0, 3) for b in boxes})
    cols = len({round(b.x0, 3) for b in boxes})
    return rows, cols


@pytest.mark.parametrize("name", ["plot_pool_vs_full", "plot_kept_counts"])
def test_many_panels_are_wrapped_into_rows(draw, name):
    fig = draw(name)  # five datasets
    rows, cols = _panel_grid(fig)
    assert rows >= 2 and cols <= 3, (rows, cols)
    assert fig.get_figwidth() <= 14, fig.get_figwidth()
    renderer = fig.canvas.get_renderer()
    texts = [(i, t) for i, ax in enumerate(fig.axes) if ax.axison
             for t in (ax.title, ax.xaxis.label, ax.yaxis.label, *ax.get_xticklabels(), *ax.get_yticklabels())
             if t.get_visible() and t.get_text()]
    boxes = [(i, t.get_text(), t.get_window_extent(renderer)) for i, t in texts]
    clashes = [(a[1], b[1]) for n, a in enumerate(boxes) for b in boxes[n + 1:] if a[0] != b[0] and a[2].overlaps(b[2])]
    assert not clashes, clashes[:5]


def test_filter_error_has_no_point_labels_distinct_curves_and_a_band_legend(draw):
    fig = draw("plot_filter_error")  # thresholds are read from the notebook's table, not crowded on the points
    for ax in fig.axes:
        assert not ax.texts
        curves = [c for c in ax.containers if hasattr(c, "lines")]
        colours = {c.lines[0].get_color() for c in curves}
        assert len(curves) == len(colours) >= 2
        assert any("10-90%" in t.get_text() for t in ax.get_legend().get_texts())


def test_one_line_style_per_reference_across_the_two_fitness_figures(draw):
    def styles(fig):
        out = {}
        for ax in fig.axes:
            for line in ax.get_lines():
                lab = line.get_label()
                if "whole pool" in lab:
                    out["whole pool"] = line.get_linestyle()
                elif lab.startswith("random"):
                    out["random"] = line.get_linestyle()
        return out

    ga = styles(draw("plot_ga_history"))
    held = styles(draw("plot_fitness_vs_heldout"))
    assert ga["whole pool"] == held["whole pool"] == "-."  # the prose of notebook 03: dash-dotted
    assert held["random"] == ":"


def test_the_new_models_estimate_is_drawn_on_top(draw):
    fig = draw("plot_reconstructor_range")
    for ax in fig.axes[:2]:
        drawn = [a for a in ax.get_children() if a.get_visible() and hasattr(a, "get_zorder")
                 and a not in (ax.patch, *ax.spines.values(), ax.xaxis, ax.yaxis, ax.title, ax._left_title,
                               ax._right_title)]
        top = max(drawn, key=lambda a: a.get_zorder())
        assert top.get_zorder() >= 10 and any(
            c.get_zorder() == top.get_zorder() for c in ax.containers[0].get_children())


def test_split_half_titles_give_the_half_sizes(draw):
    fig = draw("plot_split_half")  # 43 and 44 models
    titles = [ax.get_title() for ax in fig.axes]
    assert "halves of 21 and 22 models" in titles[0]
    assert "two halves of 22 models each" in titles[1]


def test_redundancy_legend_is_spelled_out(draw):
    fig = draw("plot_redundancy_distributions")
    texts = [t.get_text() for ax in fig.axes for t in ax.get_legend().get_texts()]
    assert any("item pairs, median" in t and "pairs above τ = 0.9" in t for t in texts), texts
    assert any("shuffled over models (no redundancy)" in t for t in texts), texts
    assert not any(" > 0.9" in t for t in texts)


def test_reference_styles_are_looked_up_by_label():
    from essence.lessons.plots.style import _grid, _reference_style

    assert _reference_style("the ruler on the whole pool, validation RMSE") == "-."
    assert _reference_style("random 50-item subsets") == ":"
    assert _reference_style("something else") == "--"
    assert [_grid(n) for n in (1, 3, 4, 5, 7)] == [(1, 1), (1, 3), (2, 2), (2, 3), (3, 3)]
    assert np.all([r * c >= n for n in range(1, 12) for r, c in [_grid(n)]])


def test_kept_counts_with_wide_grids_stays_within_the_page(draw):
    """Notebook 02's real grid: three datasets, eight rank thresholds, seven text thresholds."""
    taus_rank, taus_text = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0], [0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0]
    grids = {ds: {"kept": np.full((7, 8), 100), "tau_text": taus_text, "tau_rank": taus_rank, "n_items": 486}
             for ds in ("gsm8k", "arc", "alpaca_eval2")}
    fig = draw("plot_kept_counts", grids)
    assert fig.get_figwidth() <= 14, fig.get_figwidth()
    assert _panel_grid(fig)[0] >= 2
