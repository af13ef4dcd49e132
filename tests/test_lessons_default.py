"""Helpers of notebook 16 (essence.lessons.default): auto's cross-validation table and the two figures."""

from __future__ import annotations

import matplotlib
import numpy as np

from essence.lessons import default as LD
from essence.lessons import plots
from essence.lessons.plots.style import MIN_FONT_PT


def _small_texts(fig) -> list[str]:
    texts = [t for t in fig.findobj(matplotlib.text.Text) if t.get_visible() and t.get_text().strip()]
    return [t.get_text() for t in texts if t.get_fontsize() < MIN_FONT_PT - 1e-9]


def test_cv_table_rows_columns_and_blanks():
    record = {"T=0 line": 2.6, "T=0 ridge": 2.1, "T=0 aipw": 4.2, "T=300 line": 1.9, "T=300 ridge": 1.8}
    t = LD.cv_table(record)
    assert t.index.tolist() == [0, 300] and t.columns.tolist() == ["line", "ridge", "aipw"]
    assert t.loc[300, "line"] == 1.9 and t.loc[0, "aipw"] == 4.2 and np.isnan(t.loc[300, "aipw"])


def test_figures_draw_and_keep_text_readable():
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plots.use_style()
    fig = LD.plot_search_length((0, 300, 1000), {"loo": [2.6, 1.8, 1.3], "test": [6.1, 4.1, 3.2]})
    assert len(fig.axes[0].lines) == 2 and not _small_texts(fig)
    plt.close(fig)
    truth = np.array([44.0, 46.0, 50.0])
    est = np.array([43.0, 47.0, 49.0])
    fig = LD.plot_frontier_mix(truth, truth - 2, truth + 1, est, est - 3, est + 4, ref_max=43.0, title="t")
    ax = fig.axes[0]
    assert ax.get_xlim()[0] < 43.0 < ax.get_xlim()[1] and ax.get_ylim()[1] >= (est + 4).max()
    assert not _small_texts(fig)
    plt.close(fig)
