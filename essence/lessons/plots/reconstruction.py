"""Figures of notebook 05 (reconstruction and intervals); each function returns its Figure."""

from __future__ import annotations

import numpy as np
import matplotlib.pyplot as plt

from .style import _panels, _star_note

__all__ = ["RECON_COLORS", "plot_subset_fits", "plot_error_grid", "plot_intervals", "interval_order"]

#: one colour, marker and line style per reconstructor of :data:`essence.lessons.reconstruction.LADDER`, so that
#: curves that coincide stay told apart
RECON_COLORS = {"mean": "#7f7f7f", "line": "#1f77b4", "mean_ridge": "#17becf", "gam": "#d62728",
                "ridge": "#2ca02c", "ridge_gam": "#9467bd"}
_STYLE = {"mean": ("o", ":"), "line": ("s", "-"), "mean_ridge": ("D", "--"), "gam": ("^", "-"),
          "ridge": ("v", "-."), "ridge_gam": ("P", "--")}


def plot_subset_fits(m, y, curves: dict, title: str = "", ax=None):
    """Subset mean ``m`` against full score ``y`` (pp) of ``(n,)`` models, with ``curves`` {label: (grid, values)}
    (pp, clipped to the axes [0, 100])."""
    fig, ax = plt.subplots(figsize=(6.4, 4.6)) if ax is None else (ax.figure, ax)
    ax.scatter(m, y, s=6, alpha=0.35, color="#555555", label="training models", linewidths=0)
    for label, (gx, gv) in curves.items():
        ax.plot(gx, np.clip(gv, 0, 100), lw=2.2, color=RECON_COLORS.get(label), ls=_STYLE.get(label, "o-")[1],
                label=label)
    ax.set(xlim=(0, 100), ylim=(0, 100))
    ax.set(xlabel="score on the chosen items (pp)", ylabel="full score (pp)")
    if title:
        ax.set_title(title)
    ax.legend(fontsize=10, loc="upper left")
    _star_note(fig, [title], prefix="")
    return fig


def plot_error_grid(panels: dict, x: str, logx: bool = False, ylabel: str = "test RMSE (pp)"):
    """One panel per ``{title: error_grid DataFrame}``: mean test RMSE over draws of each reconstructor against
    column ``x`` (``"n_train"`` or ``"k"``), log y so that a reconstructor failing with few models stays inside."""
    fig, axes = _panels(1, len(panels), figsize=(max(7.5, 5.6 * len(panels)), 4.4))
    for ax, (title, df) in zip(axes[0], panels.items()):
        g = df.groupby(["reconstructor", x], sort=False)["rmse"].agg(["mean", "std"]).reset_index()
        for label in df["reconstructor"].unique():
            s = g[g["reconstructor"] == label].sort_values(x)
            mk, ls = _STYLE.get(label, ("o", "-"))
            ax.plot(s[x], s["mean"], marker=mk, ms=6, lw=1.6, ls=ls, color=RECON_COLORS.get(label), label=label,
                    alpha=0.9)
        lo, hi = 0.8 * np.nanmin(g["mean"]), 1.25 * np.nanmax(g["mean"])
        ticks = [t for t in (1, 2, 3, 4, 6, 10, 15, 20, 30, 40, 60, 100) if lo <= t <= hi]
        ax.set(xscale="log" if logx else "linear", yscale="log", ylim=(lo, hi))
        ax.set_yticks(ticks, [f"{t:g}" for t in ticks], minor=False)
        ax.set_yticks([], minor=True)
        ax.set(xlabel={"n_train": "training models", "k": "items k"}.get(x, x), ylabel=ylabel + ", log scale",
               title=title)
    axes[0][0].legend(fontsize=10)
    fig.tight_layout()
    _star_note(fig, panels, prefix="")
    return fig


def interval_order(estimate, y_true, decimals: int = 2) -> np.ndarray:
    """``(n,)`` indices of the test models by estimate rounded to ``decimals`` (so that float noise cannot reorder
    tied estimates), then true score, then position."""
    return np.lexsort((np.asarray(y_true, dtype=float), np.round(np.asarray(estimate, dtype=float), decimals)))


def plot_intervals(panels: dict, level: float = 0.9):
    """One panel per title -> :func:`essence.lessons.reconstruction.interval_for_subset` output: test models by
    estimate (:func:`interval_order`), intervals (red: misses) and true scores."""
    fig, axes = _panels(1, len(panels), figsize=(5.4 * len(panels), 4.4))
    for ax, (title, out) in zip(axes[0], panels.items()):
        o = interval_order(out["estimate"], out["y_test"])
        yt, lo, hi = out["y_test"][o], out["lower"][o], out["upper"][o]
        inside = (yt >= lo) & (yt <= hi)
        xs = np.arange(yt.size)
        ax.vlines(xs[inside], lo[inside], hi[inside], color="#bbbbbb", lw=1.2, label=f"{level:.0%} interval")
        ax.vlines(xs[~inside], lo[~inside], hi[~inside], color="#d62728", lw=1.6, label="misses the true score")
        ax.scatter(xs, yt, s=5 if yt.size > 60 else 18, color="#222222", zorder=3, label="true full score")
        ax.set(xlabel="test models, by estimate", ylabel="full score (pp)", title=f"{title}: {inside.mean():.0%} covered")
    axes[0][0].legend(fontsize=10, loc="upper left")
    fig.tight_layout()
    _star_note(fig, panels, prefix="")
    return fig
