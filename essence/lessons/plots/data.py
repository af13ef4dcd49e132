"""Figures of notebook 00: the datasets (score distributions, item difficulty, pool vs full score)."""

from __future__ import annotations

import numpy as np

from .style import _grid, _star, _starred_caveat

__all__ = ["plot_score_distributions", "plot_item_difficulty", "plot_pool_vs_full"]


def plot_score_distributions(datasets: dict):
    """Histogram of each dataset's full-benchmark scores (pp). ``datasets``: name -> Responses; metabench pools are
    starred in the titles and the caveat note explains the star."""
    import matplotlib.pyplot as plt

    n = len(datasets)
    cols = min(4, n)
    rows = int(np.ceil(n / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(3.4 * cols, 2.8 * rows), squeeze=False)
    for ax, (name, r) in zip(axes.ravel(), datasets.items()):
        ax.hist(r.target, bins=40, color="#4c72b0")
        ax.set_title(f"{_star(name)} ({r.n_models} models)")
        ax.set_xlabel("full score (pp)")
        ax.set_ylabel("models")
    for ax in axes.ravel()[n:]:
        ax.axis("off")
    fig.suptitle("How the models score: distribution of full-benchmark scores")
    fig.tight_layout()
    _starred_caveat(fig, datasets)
    return fig


def plot_item_difficulty(datasets: dict):
    """Distribution of item mean scores (share of models that get the item right, 0-1) per dataset."""
    import matplotlib.pyplot as plt

    n = len(datasets)
    cols = min(4, n)
    rows = int(np.ceil(n / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(3.4 * cols, 2.8 * rows), squeeze=False)
    for ax, (name, r) in zip(axes.ravel(), datasets.items()):
        p = np.nanmean(r.responses, axis=0)
        ax.hist(p, bins=np.linspace(0, 1, 26), color="#55a868")
        const = int((np.nanstd(r.responses, axis=0) == 0).sum())
        ax.set_title(f"{_star(name)} ({r.n_items} items)")
        ax.set_xlabel("item mean score over models")
        ax.set_ylabel("items")
        if const:
            ax.text(0.97, 0.95, f"{const} constant", transform=ax.transAxes, ha="right", va="top", fontsize=9)
    for ax in axes.ravel()[n:]:
        ax.axis("off")
    fig.suptitle("Item difficulty: mean score of each item over all models")
    fig.tight_layout()
    _starred_caveat(fig, datasets)
    return fig


def plot_pool_vs_full(datasets: dict, max_points: int = 2000, seed: int = 0):
    """Pool mean (pp) against the whole-benchmark score (pp) for datasets whose target is ``full_score``."""
    import matplotlib.pyplot as plt

    items = [(k, r) for k, r in datasets.items() if r.target_source == "full_score"]
    rows, cols = _grid(len(items))
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 3.5 * rows), squeeze=False)
    for ax in axes.ravel()[len(items):]:
        ax.axis("off")
    rng = np.random.default_rng(seed)
    for ax, (name, r) in zip(axes.ravel(), items):
        pool = 100 * np.nanmean(r.responses, axis=1)
        sel = rng.permutation(r.n_models)[:max_points]
        ax.scatter(pool[sel], r.target[sel], s=3, alpha=0.4, color="#4c72b0")
        ax.plot([0, 100], [0, 100], color="#999999", lw=1, ls="--", label="y = x")
        rho = np.corrcoef(pool, r.target)[0, 1]
        ax.set_title(f"{_star(name)}: r = {rho:.3f}")
        ax.set_xlabel("mean over the pool (pp)")
        ax.set_ylabel("full-benchmark score (pp)")
        ax.set_xlim(0, 100)
        ax.set_ylim(0, 100)
        ax.legend(loc="upper left", fontsize=9)
    fig.suptitle("The pool mean is not the full score: a reconstructor must learn the map")
    fig.tight_layout()
    _starred_caveat(fig, [name for name, _ in items])
    return fig
