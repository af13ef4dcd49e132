"""Figures of notebook 03: the genetic search (the ruler, GA history, subset vs random, fitness vs held-out)."""

from __future__ import annotations

import numpy as np
from matplotlib.lines import Line2D
import matplotlib.pyplot as plt
from matplotlib.ticker import ScalarFormatter

from .style import METHOD_COLORS, _finish, _panels, _reference_style, _star, _starred_caveat

__all__ = ["plot_ruler", "plot_ga_history", "plot_subset_vs_random", "plot_fitness_vs_heldout"]


def plot_ruler(train_x, train_y, ruler, candidates: dict, dataset: str = "", max_points: int = 2000, seed: int = 0):
    """The GA's fixed ruler ``g`` (a callable on pp) on the training models' pool mean (x, pp) and full score (y, pp),
    and one panel per candidate ``label -> (x_val, y_val, rmse)``: the validation models under the same ``g``."""
    n = 1 + len(candidates)
    fig, axes = _panels(1, n, figsize=(4.3 * n, 4.1), sharey=True)
    grid = np.linspace(0, 100, 401)
    rng = np.random.default_rng(seed)
    tx, ty = np.asarray(train_x, dtype=float), np.asarray(train_y, dtype=float)
    sel = rng.permutation(tx.size)[:max_points]
    ax = axes[0, 0]
    ax.scatter(tx[sel], ty[sel], s=4, alpha=0.3, color="#4c72b0", lw=0, label="training models")
    ax.plot(grid, ruler(grid), color="#222222", lw=1.6, label="ruler g (GAM)")
    ax.set_title("g: fitted once, training models", fontsize=10.5)
    ax.set(xlabel="mean over the whole pool (pp)", ylabel="full-benchmark score (pp)")
    ax.legend(fontsize=9, loc="upper left")
    for ax, (label, (x, y, err)) in zip(axes.ravel()[1:], candidates.items()):
        ax.scatter(x, y, s=6, alpha=0.45, color="#dd8452", lw=0, label="validation models")
        ax.plot(grid, ruler(grid), color="#222222", lw=1.6, label="the same g")
        ax.set_title(f"{label}\nfitness: validation RMSE {err:.2f} pp", fontsize=10.5)
        ax.set_xlabel("mean over the subset's items (pp)")
        ax.legend(fontsize=9, loc="upper left")
    for ax in axes.ravel():
        ax.set(xlim=(-2, 102), ylim=(-2, 102))
    fig.suptitle(f"The paper's fixed ruler on {_star(dataset)}: every candidate subset is judged by the same g")
    return _finish(fig, [dataset])


def plot_ga_history(history, mean_history, refs: dict | None = None, title: str = "", dataset: str = "", ax=None):
    """Best and population-mean fitness RMSE (pp) per generation from ``(generations + 1,)`` ``history``,
    ``mean_history`` (-RMSE); ``refs``: label -> line (pp); given ``ax``, no layout or caveat."""
    h, m = -np.asarray(history, dtype=float), -np.asarray(mean_history, dtype=float)
    own = ax is None
    fig, ax = plt.subplots(figsize=(6.4, 3.9)) if own else (ax.figure, ax)
    gen = np.arange(h.size)
    ax.plot(gen, m, color="#8c8c8c", lw=1.4, label="population mean")
    ax.plot(gen, h, color=METHOD_COLORS["essence"], lw=1.8, label="best individual")
    for label, v in (refs or {}).items():  # one style per kind of reference, as in plot_fitness_vs_heldout
        ax.axhline(v, color="#555555", lw=1.1, ls=_reference_style(label), label=f"{label}: {v:.2f} pp")
    ax.set_xscale("symlog", linthresh=10)
    ax.set_xlim(0, max(gen[-1], 1))
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.set(xlabel="generation (linear to 10, then log scale)", ylabel="fitness: validation RMSE of g (pp)")
    ax.legend(fontsize=9)
    ax.set_title(title or "Fitness over generations")
    if own:  # a figure of its own: lay it out and add the caveat; in a caller's Axes that is the caller's
        fig.tight_layout()
        _starred_caveat(fig, [dataset])
    return fig


def plot_subset_vs_random(random: dict, marks: dict, k: int, dataset: str = ""):
    """Test RMSE (pp) and Kendall tau of chosen subsets (``marks``: label -> ``{"rmse", "kendall"}``) against random
    k-subsets (:func:`essence.lessons.stages.random_subset_scores` output)."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    colors = [METHOD_COLORS["essence"], "#4c72b0", "#55a868", "#8172b3"]
    for ax, key, xl, better in ((axes[0], "rmse", "test RMSE (pp)", np.less),
                                (axes[1], "kendall", "test Kendall tau", np.greater)):
        v = np.asarray(random[key], dtype=float)
        ax.hist(v, bins=20, color=METHOD_COLORS["random"], alpha=0.6,
                label=f"random {k}-subsets ({v.size}), mean {v.mean():.3f}")
        for c, (label, mk) in zip(colors, marks.items()):
            beat = float(np.mean(better(mk[key], v)))
            ax.axvline(mk[key], color=c, lw=2, label=f"{label}: {mk[key]:.3f} (beats {100 * beat:.0f}% of random)")
        ax.set(xlabel=xl, ylabel="random draws")
        ax.set_ylim(0, ax.get_ylim()[1] * 1.3)  # room for the legend
        ax.legend(fontsize=9, loc="upper right" if key == "rmse" else "upper left")
    fig.suptitle(f"{_star(dataset)}: the GA's subset against random subsets of the same size, k = {k}, on test models")
    return _finish(fig, [dataset])


def plot_fitness_vs_heldout(panels: dict, refs: dict | None = None):
    """Fitness (dashed) and test RMSE (solid, pp) of the best subset by generation, mean and min-max over seeds;
    ``panels``: dataset -> {label -> per seed a DataFrame ``generation, fitness_rmse, test_rmse``}; ``refs``:
    dataset -> {label: pp}."""
    n = len(panels)
    fig, axes = _panels(1, n, figsize=(5.2 * n, 4.3))
    colors = [METHOD_COLORS["essence"], "#4c72b0", "#55a868"]
    for ax, (ds, fits) in zip(axes.ravel(), panels.items()):
        for c, (label, tables) in zip(colors, fits.items()):
            gen = np.asarray(tables[0]["generation"], dtype=float)
            for col, ls, what in (("fitness_rmse", "--", "fitness (what the GA minimises)"),
                                  ("test_rmse", "-", "held-out test RMSE")):
                Y = np.vstack([np.asarray(t[col], dtype=float) for t in tables])
                ax.plot(gen, Y.mean(axis=0), color=c, ls=ls, lw=1.8, marker="o", ms=3.5, label=f"{label}: {what}")
                if Y.shape[0] > 1:
                    ax.fill_between(gen, Y.min(axis=0), Y.max(axis=0), color=c, alpha=0.12, lw=0)
        for label, v in ((refs or {}).get(ds) or {}).items():
            ax.axhline(v, color="#555555", lw=1.1, ls=_reference_style(label), label=label)
            ax.text(0.99, v, f"{v:.2f} pp", transform=ax.get_yaxis_transform(), ha="right", va="bottom",
                    fontsize=9, color="#555555")
        ax.set_xscale("symlog", linthresh=30)
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.set_xlim(0, float(max(np.max(np.asarray(t["generation"], dtype=float)) for ts in fits.values() for t in ts)))
        ax.set(xlabel="generation (linear to 30, then log scale)", ylabel="RMSE (pp)", title=_star(ds))
    first = next(iter(panels.values()))
    handles = [Line2D([], [], color=c, lw=2.2) for c, _ in zip(colors, first)]
    labels = list(first)
    handles += [Line2D([], [], color="#222222", ls=ls, lw=1.8) for ls in ("--", "-")]
    labels += ["dashed: the fitness the GA minimises", "solid: held-out test RMSE of its best subset"]
    for label in ((refs or {}).get(next(iter(panels))) or {}):
        handles.append(Line2D([], [], color="#555555", ls=_reference_style(label), lw=1.1))
        labels.append(label)
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.02), ncol=2, fontsize=9)
    fig.suptitle("Fitness against held-out error during the search (mean over seeds; band: min to max)")
    return _finish(fig, panels, y=-0.2, wrap=False)
