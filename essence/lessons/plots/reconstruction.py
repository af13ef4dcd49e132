"""Figures of notebook 05 (reconstruction and intervals): fitted curves, error against models and k, intervals.

All text is at least 9 pt (the style's defaults are larger). Each function returns its Figure.
"""

from __future__ import annotations

import numpy as np

__all__ = ["RECON_COLORS", "plot_subset_fits", "plot_error_grid", "plot_intervals", "interval_order"]

#: one colour per reconstructor of :data:`essence.lessons.reconstruction.LADDER`
RECON_COLORS = {"mean": "#999999", "line": "#1f77b4", "mean_ridge": "#17becf", "gam": "#d62728",
                "ridge": "#2ca02c", "ridge_gam": "#9467bd"}


def plot_subset_fits(m, y, curves: dict, title: str = "", ax=None):
    """Scatter of subset mean ``m`` (pp) against full score ``y`` (pp) of ``(n,)`` models, with curves.

    ``curves`` maps a label to ``(grid (g,), values (g,))`` in pp, drawn in :data:`RECON_COLORS` when the
    label is a ladder name.
    """
    import matplotlib.pyplot as plt

    if ax is None:
        fig, ax = plt.subplots(figsize=(6.4, 4.6))
    else:
        fig = ax.figure
    ax.scatter(m, y, s=6, alpha=0.35, color="#555555", label="training models", linewidths=0)
    for label, (gx, gv) in curves.items():
        ax.plot(gx, gv, lw=2.2, color=RECON_COLORS.get(label), label=label)
    ax.set_xlabel("score on the chosen items (pp)")
    ax.set_ylabel("full score (pp)")
    if title:
        ax.set_title(title)
    ax.legend(fontsize=10, loc="upper left")
    _star_note(fig, [title])
    return fig


def plot_error_grid(panels: dict, x: str, logx: bool = False, ylabel: str = "test RMSE (pp)"):
    """One panel per entry of ``panels`` (title -> DataFrame of :func:`essence.lessons.reconstruction.error_grid`):
    mean test RMSE over draws of each reconstructor against column ``x`` (``"n_train"`` or ``"k"``)."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(panels), figsize=(max(7.5, 5.6 * len(panels)), 4.4), squeeze=False)
    for ax, (title, df) in zip(axes[0], panels.items()):
        g = df.groupby(["reconstructor", x], sort=False)["rmse"].agg(["mean", "std"]).reset_index()
        for label in df["reconstructor"].unique():
            s = g[g["reconstructor"] == label].sort_values(x)
            c = RECON_COLORS.get(label)
            ax.plot(s[x], s["mean"], marker="o", ms=5, lw=1.8, color=c, label=label)
        if logx:
            ax.set_xscale("log")
        ax.set_xlabel({"n_train": "training models", "k": "items k"}.get(x, x))
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        hi = np.nanpercentile(g["mean"], 90)
        ax.set_ylim(0.0, hi * 1.3)  # a reconstructor that explodes with few models runs off the top
    axes[0][0].legend(fontsize=10)
    fig.tight_layout()
    _star_note(fig, panels)
    return fig


def _star_note(fig, titles) -> None:
    """The metabench pool caveat (9 pt) under a figure with a starred title."""
    if any("*" in t for t in titles):
        from ...data import POOL_CAVEAT

        fig.text(0.01, -0.02, f"* {POOL_CAVEAT}.", fontsize=9, style="italic", ha="left", va="top", color="#444444",
                 wrap=True)


def interval_order(estimate, y_true, decimals: int = 2) -> np.ndarray:
    """The order in which :func:`plot_intervals` draws ``(n,)`` test models: by estimate (pp) rounded to
    ``decimals`` places, ties broken by true score (pp), then by position (``np.lexsort`` is stable).

    A plain ``argsort`` of the estimates lets float noise (which differs between CPUs) reorder models whose
    estimates are tied, e.g. several clipped at the floor, so the figure would change from machine to machine.
    Returns ``(n,)`` int indices.
    """
    est = np.round(np.asarray(estimate, dtype=float), decimals)
    yt = np.asarray(y_true, dtype=float)
    return np.lexsort((yt, est))


def plot_intervals(panels: dict, level: float = 0.9):
    """One panel per entry of ``panels`` (title -> output of :func:`essence.lessons.reconstruction.interval_for_subset`):
    test models sorted by estimate (see :func:`interval_order`), their intervals (grey if the true score is
    inside, red if not) and true scores."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(panels), figsize=(5.4 * len(panels), 4.4), squeeze=False)
    for ax, (title, out) in zip(axes[0], panels.items()):
        o = interval_order(out["estimate"], out["y_test"])
        yt, lo, hi = out["y_test"][o], out["lower"][o], out["upper"][o]
        inside = (yt >= lo) & (yt <= hi)
        xs = np.arange(yt.size)
        ax.vlines(xs[inside], lo[inside], hi[inside], color="#bbbbbb", lw=1.2, label=f"{level:.0%} interval")
        ax.vlines(xs[~inside], lo[~inside], hi[~inside], color="#d62728", lw=1.6, label="misses the true score")
        ax.scatter(xs, yt, s=5 if yt.size > 60 else 18, color="#222222", zorder=3, label="true full score")
        ax.set_xlabel("test models, by estimate")
        ax.set_ylabel("full score (pp)")
        ax.set_title(f"{title}: {inside.mean():.0%} covered")
    axes[0][0].legend(fontsize=10, loc="upper left")
    fig.tight_layout()
    _star_note(fig, panels)
    return fig
