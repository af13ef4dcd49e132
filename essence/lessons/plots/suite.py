"""Figures of notebook 11: why a suite compresses better jointly, and the budget split the search chose."""

from __future__ import annotations

import numpy as np
import matplotlib.pyplot as plt

from .style import METHOD_COLORS, _starred_caveat

__all__ = ["plot_cross_prediction", "plot_budget_split"]


def plot_cross_prediction(table, ax=None):
    """Bars per benchmark: test RMSE (pp) from its own random items, everyone's, and its whole pool (``table``:
    :func:`essence.suite.study.cross_prediction` rows, averaged over seeds)."""
    g = table.groupby("benchmark", sort=False)[["own", "all", "own_pool"]].mean()
    fig = ax.figure if ax is not None else plt.figure(figsize=(7.5, 3.8))
    ax = ax if ax is not None else fig.add_subplot()
    x = np.arange(len(g))
    labels = {"own": "its own random items", "all": "the same random items of every benchmark",
              "own_pool": "every item of its own pool"}
    colors = {"own": METHOD_COLORS.get("random", "#999999"), "all": METHOD_COLORS.get("essence", "#c44e52"),
              "own_pool": "#4c72b0"}
    for i, col in enumerate(("own", "all", "own_pool")):
        ax.bar(x + (i - 1) * 0.27, g[col], width=0.27, color=colors[col], label=labels[col])
    ax.set_xticks(x, [f"{n}*" for n in g.index])
    ax.set_ylabel("test RMSE (pp)")
    ax.set_title("Each benchmark predicted from ...", loc="left")
    ax.legend(frameon=False, fontsize=9)
    _starred_caveat(fig, list(g.index))
    return fig


def plot_budget_split(budgets: dict, pool_sizes: dict, ax=None):
    """Items per benchmark chosen by each selector (``budgets``: label -> {benchmark: count}) beside a split in
    proportion to pool size (``pool_sizes``: benchmark -> items)."""
    names = list(pool_sizes)
    fig = ax.figure if ax is not None else plt.figure(figsize=(7.5, 3.6))
    ax = ax if ax is not None else fig.add_subplot()
    total = sum(next(iter(budgets.values())).values())
    series = {"in proportion to pool size": {n: total * pool_sizes[n] / sum(pool_sizes.values()) for n in names},
              **budgets}
    width = 0.8 / len(series)
    x = np.arange(len(names))
    for i, (label, b) in enumerate(series.items()):
        style = ({"color": "white", "edgecolor": "#222222", "hatch": "//"} if i == 0
                 else {"color": METHOD_COLORS.get(label.split()[0])})
        ax.bar(x + (i - (len(series) - 1) / 2) * width, [b[n] for n in names], width=width, label=label, **style)
    ax.set_xticks(x, [f"{n}*" for n in names])
    ax.set_ylabel(f"items of {total}")
    ax.set_title("How the budget was split", loc="left")
    ax.legend(frameon=False, fontsize=9)
    _starred_caveat(fig, names)
    return fig
