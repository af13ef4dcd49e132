"""Figures of notebook 02: the coarse filter (kept counts, error after filtering, kept vs dropped)."""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import LogLocator, NullFormatter, ScalarFormatter

from .style import _finish, _grid, _panels, _star, _starred_caveat

__all__ = ["plot_kept_counts", "plot_filter_error", "plot_kept_vs_dropped"]


def plot_kept_counts(grids: dict):
    """Heatmaps of the items the coarse filter keeps over a threshold grid (1 = off), ``grids``: dataset -> ``kept``
    ``(n_text, n_rank)`` (:func:`essence.lessons.stages.kept_counts`), ``tau_text``, ``tau_rank``, ``n_items``."""
    n = len(grids)
    width = 0.48 * max(len(g["tau_rank"]) for g in grids.values()) + 1.5  # inches per panel
    # as many panels a row as fit in about 12 inches (a page shows the figure at its width), at most three
    rows, cols = _grid(n, max_cols=int(min(3, max(1, 12 // width))))
    fig, axes = _panels(rows, cols, figsize=(width * cols + 0.8, 3.7 * rows), n=n, layout="constrained")
    im = None
    for ax, (ds, g) in zip(axes.ravel(), grids.items()):
        K = np.asarray(g["kept"], dtype=float)
        share = K / g["n_items"]
        im = ax.imshow(share, cmap="viridis", vmin=0, vmax=1, aspect="auto", origin="lower")
        for i in range(K.shape[0]):
            for j in range(K.shape[1]):
                ax.text(j, i, f"{int(K[i, j])}", ha="center", va="center", fontsize=9,
                        color="white" if share[i, j] < 0.55 else "black")
        lab = lambda v: "off" if v >= 1 else f"{v:g}"  # noqa: E731
        ax.set_xticks(range(len(g["tau_rank"])), [lab(v) for v in g["tau_rank"]], fontsize=9)
        ax.set_yticks(range(len(g["tau_text"])), [lab(v) for v in g["tau_text"]], fontsize=9)
        ax.set(xlabel="τ_rank (Pearson threshold)", ylabel="τ_text (cosine threshold)")
        ax.set_title(f"{_star(ds)}: {g['n_items']} items", fontsize=10.5)
        ax.grid(False)
    fig.colorbar(im, ax=axes.ravel()[:n].tolist(), fraction=0.025, pad=0.01, label="share of items kept")
    fig.suptitle("Items kept by the coarse filter as the two thresholds vary (cells: items kept)")
    _starred_caveat(fig, grids)
    return fig


def plot_filter_error(panels: dict, k: int):
    """Held-out RMSE (pp) of random k-subsets of filtered pools by pool size; ``panels``: dataset -> ``full``
    ``(n_draws,)`` (unfiltered), ``n_items``, ``curves``: label -> list of ``(tau, pool_size, rmses (n_draws,))``."""
    n = len(panels)
    fig, axes = _panels(1, n, figsize=(4.4 * n, 4.0))
    for ax, (ds, p) in zip(axes.ravel(), panels.items()):
        full = np.asarray(p["full"], dtype=float)
        ax.axhspan(*np.percentile(full, [10, 90]), color="#999999", alpha=0.2, lw=0, label="no filter: 10-90% of draws")
        ax.axhline(full.mean(), color="#555555", lw=1.2, ls="--", label=f"no filter ({p['n_items']} items)")
        for c, m_, (label, pts) in zip(("#dd8452", "#4c72b0"), ("o", "s"), p["curves"].items()):
            pts = sorted(pts, key=lambda t: t[1])
            x = np.array([q[1] for q in pts], dtype=float)
            m = np.array([np.mean(q[2]) for q in pts])
            lo, hi = (np.array([np.percentile(q[2], v) for q in pts]) for v in (10, 90))
            ax.errorbar(x, m, yerr=[m - lo, hi - m], marker=m_, ms=4, lw=1.4, capsize=2, color=c, label=label)
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set(xlabel="items left in the pool (log scale)", ylabel=f"held-out RMSE, random k = {k} (pp)")
        ax.set_title(_star(ds))
        ax.legend(fontsize=9)
    fig.suptitle(f"Does filtering help a random subset? {k} random items from the filtered pool, GAM on their mean\n"
                 "(mean and 10-90% range over draws; each point's threshold: the table below)")
    return _finish(fig, panels)


def plot_kept_vs_dropped(panels: dict, tau_rank: float):
    """Discrimination of the items the rank filter keeps and drops; ``panels``: dataset -> ``(discrimination
    (n_items,), kept positions)``."""
    n = len(panels)
    fig, axes = _panels(1, n, figsize=(4.2 * n, 3.5))
    edges = np.linspace(-0.2, 1.0, 37)
    for ax, (ds, (disc, kept)) in zip(axes.ravel(), panels.items()):
        disc = np.asarray(disc, dtype=float)
        mask = np.zeros(disc.size, dtype=bool)
        mask[np.asarray(kept, dtype=np.intp)] = True
        ax.hist(disc[mask], bins=edges, color="#4c72b0", alpha=0.7,
                label=f"kept ({mask.sum()}): mean {disc[mask].mean():.2f}")
        if (~mask).any():
            ax.hist(disc[~mask], bins=edges, color="#c44e52", alpha=0.7,
                    label=f"dropped ({(~mask).sum()}): mean {disc[~mask].mean():.2f}")
        ax.set(xlabel="item discrimination (corr. with full score)", ylabel="items", title=_star(ds))
        ax.legend(fontsize=9, loc="upper left")
    fig.suptitle(f"Which items does the rank filter drop? τ_rank = {tau_rank:g}, text check off")
    return _finish(fig, panels)
