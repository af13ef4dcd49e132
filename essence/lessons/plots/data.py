"""Figures of notebook 00: the datasets (score distributions, item difficulty, pool vs full score)."""

from __future__ import annotations

import numpy as np

from .style import _finish, _grid, _panels, _star

__all__ = ["plot_score_distributions", "plot_item_difficulty", "plot_pool_vs_full"]


def plot_score_distributions(datasets: dict):
    """Histogram of each dataset's full-benchmark scores (pp). ``datasets``: name -> Responses; metabench pools are
    starred in the titles and the caveat note explains the star."""
    n = len(datasets)
    cols = min(4, n)
    rows = int(np.ceil(n / cols))
    fig, axes = _panels(rows, cols, figsize=(3.4 * cols, 2.8 * rows), n=n)
    for ax, (name, r) in zip(axes.ravel(), datasets.items()):
        ax.hist(r.target, bins=40, color="#4c72b0")
        ax.set(title=f"{_star(name)} ({r.n_models} models)", xlabel="full score (pp)", ylabel="models")
    fig.suptitle("How the models score: distribution of full-benchmark scores")
    return _finish(fig, datasets)


def plot_item_difficulty(datasets: dict):
    """Distribution of item mean scores (share of models that get the item right, 0-1) per dataset."""
    n = len(datasets)
    cols = min(4, n)
    rows = int(np.ceil(n / cols))
    fig, axes = _panels(rows, cols, figsize=(3.4 * cols, 2.8 * rows), n=n)
    for ax, (name, r) in zip(axes.ravel(), datasets.items()):
        p = np.nanmean(r.responses, axis=0)
        ax.hist(p, bins=np.linspace(0, 1, 26), color="#55a868")
        const = int((np.nanstd(r.responses, axis=0) == 0).sum())
        ax.set(title=f"{_star(name)} ({r.n_items} items)", xlabel="item mean score over models", ylabel="items")
        if const:
            ax.text(0.97, 0.95, f"{const} constant", transform=ax.transAxes, ha="right", va="top", fontsize=9)
    fig.suptitle("Item difficulty: mean score of each item over all models")
    return _finish(fig, datasets)


def plot_pool_vs_full(datasets: dict, max_points: int = 2000, seed: int = 0):
    """Pool mean (pp) against the whole-benchmark score (pp) for datasets whose target is ``full_score``."""
    items = [(k, r) for k, r in datasets.items() if r.target_source == "full_score"]
    rows, cols = _grid(len(items))
    fig, axes = _panels(rows, cols, figsize=(3.6 * cols, 3.5 * rows), n=len(items))
    rng = np.random.default_rng(seed)
    for ax, (name, r) in zip(axes.ravel(), items):
        pool = 100 * np.nanmean(r.responses, axis=1)
        sel = rng.permutation(r.n_models)[:max_points]
        ax.scatter(pool[sel], r.target[sel], s=3, alpha=0.4, color="#4c72b0")
        ax.plot([0, 100], [0, 100], color="#999999", lw=1, ls="--", label="y = x")
        rho = np.corrcoef(pool, r.target)[0, 1]
        ax.set(title=f"{_star(name)}: r = {rho:.3f}", xlabel="mean over the pool (pp)")
        ax.set(ylabel="full-benchmark score (pp)", xlim=(0, 100), ylim=(0, 100))
        ax.legend(loc="upper left", fontsize=9)
    fig.suptitle("The pool mean is not the full score: a reconstructor must learn the map")
    return _finish(fig, [name for name, _ in items])
