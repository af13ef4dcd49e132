"""Figures of notebook 02: the coarse filter (kept counts, error after filtering, kept vs dropped)."""

from __future__ import annotations

import numpy as np

from .style import _grid, _star, _starred_caveat

__all__ = ["plot_kept_counts", "plot_filter_error", "plot_kept_vs_dropped"]


def plot_kept_counts(grids: dict):
    """Pool size left by the coarse filter over a grid of thresholds, one heatmap per dataset.

    ``grids``: dataset -> dict with ``kept`` ``(n_text, n_rank)`` int (see
    :func:`essence.lessons.stages.kept_counts`), ``tau_text`` ``(n_text,)``, ``tau_rank`` ``(n_rank,)`` and
    ``n_items``. Cells show the count; colour is the share of the items kept. A threshold of 1 is "off".
    """
    import matplotlib.pyplot as plt

    n = len(grids)
    width = 0.48 * max(len(g["tau_rank"]) for g in grids.values()) + 1.5  # inches per panel
    # as many panels a row as fit in about 12 inches (a page shows the figure at its width), at most three
    rows, cols = _grid(n, max_cols=int(min(3, max(1, 12 // width))))
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols + 0.8, 3.7 * rows), squeeze=False, layout="constrained")
    for ax in axes.ravel()[n:]:
        ax.axis("off")
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
        ax.set_xticks(range(len(g["tau_rank"])))
        ax.set_xticklabels([lab(v) for v in g["tau_rank"]], fontsize=9)
        ax.set_yticks(range(len(g["tau_text"])))
        ax.set_yticklabels([lab(v) for v in g["tau_text"]], fontsize=9)
        ax.set_xlabel("τ_rank (Pearson threshold)")
        ax.set_ylabel("τ_text (cosine threshold)")
        ax.set_title(f"{_star(ds)}: {g['n_items']} items", fontsize=10.5)
        ax.grid(False)
    cb = fig.colorbar(im, ax=axes.ravel()[:n].tolist(), fraction=0.025, pad=0.01)
    cb.set_label("share of items kept")
    fig.suptitle("Items kept by the coarse filter as the two thresholds vary (cells: items kept)")
    _starred_caveat(fig, grids)
    return fig


def plot_filter_error(panels: dict, k: int):
    """Held-out RMSE of random k-subsets drawn from filtered pools, against the pool size.

    ``panels``: dataset -> dict with ``full`` ``(n_draws,)`` RMSE (pp) from the unfiltered pool, ``n_items``,
    and ``curves``: label -> list of ``(tau, pool_size, rmses (n_draws,))``. Points: mean; bars: the
    10th to 90th percentile over draws; the grey band is the unfiltered pool's 10-90% range.
    """
    import matplotlib.pyplot as plt

    n = len(panels)
    fig, axes = plt.subplots(1, n, figsize=(4.4 * n, 4.0), squeeze=False)
    from matplotlib.ticker import LogLocator, NullFormatter, ScalarFormatter

    colors = ["#dd8452", "#4c72b0", "#55a868", "#c44e52"]
    placed_all = []
    for ax, (ds, p) in zip(axes.ravel(), panels.items()):
        full = np.asarray(p["full"], dtype=float)
        lo, hi = np.percentile(full, [10, 90])
        ax.axhspan(lo, hi, color="#999999", alpha=0.2, lw=0, label="no filter: 10-90% of draws")
        ax.axhline(full.mean(), color="#555555", lw=1.2, ls="--", label=f"no filter ({p['n_items']} items)")
        placed = []
        placed_all.append(placed)
        for ci, (c, (label, pts)) in enumerate(zip(colors, p["curves"].items())):
            pts = sorted(pts, key=lambda t: t[1])
            x = np.array([q[1] for q in pts], dtype=float)
            m = np.array([np.mean(q[2]) for q in pts])
            p10 = np.array([np.percentile(q[2], 10) for q in pts])
            p90 = np.array([np.percentile(q[2], 90) for q in pts])
            ax.errorbar(x, m, yerr=[m - p10, p90 - m], marker="o", ms=4, lw=1.4, capsize=2, color=c, label=label)
            placed.extend(_threshold_labels(ax, [q[0] for q in pts], x, m, c, above=ci % 2 == 0))
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("items left in the pool (log scale)")
        ax.set_ylabel(f"held-out RMSE, random k = {k} (pp)")
        ax.set_title(_star(ds))
        ax.legend(fontsize=9)
    fig.suptitle(f"Does filtering help a random subset? {k} random items from the filtered pool, GAM on their mean\n"
                 "(mean and 10-90% range over draws; labels: the threshold)")
    fig.tight_layout()
    for labels in placed_all:
        _declutter(fig, labels)
    _starred_caveat(fig, panels)
    return fig


def _threshold_labels(ax, taus, x, y, color, above: bool = True) -> list:
    """Label each point ``(x, y)`` of a curve with its threshold; returns the annotations.

    Points closer than 0.06 decades on the log x axis share one label (``0.7-0.9``); one curve's
    labels go above its points, the next one's below. :func:`_declutter` then moves apart any that
    still overlap.
    """
    out, i = [], 0
    while i < len(taus):
        j = i
        while j + 1 < len(taus) and np.log10(x[j + 1]) - np.log10(x[i]) < 0.06:
            j += 1
        text = f"{taus[i]:g}" if j == i else f"{min(taus[i:j + 1]):g}-{max(taus[i:j + 1]):g}"
        xm, ym = float(np.exp(np.mean(np.log(x[i:j + 1])))), float(np.mean(y[i:j + 1]))
        out.append(ax.annotate(text, (xm, ym), textcoords="offset points", xytext=(5, 5 if above else -5),
                               ha="left", va="bottom" if above else "top", fontsize=9, color=color))
        i = j + 1
    return out


def _declutter(fig, labels, step: float = 10.0, tries: int = 6) -> None:
    """Shift annotations (offset points) up or down, ``step`` points at a time, until none overlaps another
    placed before it (at most ``tries`` steps each)."""
    renderer = fig.canvas.get_renderer()
    done = []
    for a in labels:
        sign = 1.0 if a.xyann[1] >= 0 else -1.0
        for _ in range(tries):
            box = a.get_window_extent(renderer)
            if not any(box.overlaps(b) for b in done):
                break
            a.xyann = (a.xyann[0], a.xyann[1] + sign * step)
        done.append(a.get_window_extent(renderer))


def plot_kept_vs_dropped(panels: dict, tau_rank: float):
    """Item discrimination (correlation with the full score over training models) of the items the rank
    filter keeps and drops. ``panels``: dataset -> ``(discrimination (n_items,), kept (n_kept,) positions)``."""
    import matplotlib.pyplot as plt

    n = len(panels)
    fig, axes = plt.subplots(1, n, figsize=(4.2 * n, 3.5), squeeze=False)
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
        ax.set_xlabel("item discrimination (corr. with full score)")
        ax.set_ylabel("items")
        ax.set_title(_star(ds))
        ax.legend(fontsize=9, loc="upper left")
    fig.suptitle(f"Which items does the rank filter drop? τ_rank = {tau_rank:g}, text check off")
    fig.tight_layout()
    _starred_caveat(fig, panels)
    return fig
