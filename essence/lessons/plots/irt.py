"""Figures of notebook 06 (IRT): item curves and information, MetaBench's ability bins, the GSM8K test."""

from __future__ import annotations

import numpy as np
import matplotlib.pyplot as plt

from .style import _star_note

__all__ = ["plot_item_curves", "plot_bins", "plot_hypothesis"]

_SEL_COLORS = {"irt": "#8c564b", "above_floor_bins": "#bcbd22", "score_levels": "#e377c2", "random": "#7f7f7f"}


def plot_item_curves(theta, P, info, labels, test_info: dict | None = None):
    """Curves ``P`` and information ``info`` ``(g, m)`` of ``m`` items (``labels``) on the grid ``theta`` ``(g,)``;
    ``test_info`` {label: ``(g,)``} in a third panel."""
    n = 3 if test_info else 2
    fig, axes = plt.subplots(1, n, figsize=(5.0 * n, 4.2))
    for j, lab in enumerate(labels):
        axes[0].plot(theta, P[:, j], lw=2, label=lab)
        axes[1].plot(theta, info[:, j], lw=2, label=lab)
    axes[0].set(xlabel="ability θ", ylabel="P(correct)", title="item characteristic curves")
    axes[1].set(xlabel="ability θ", ylabel="Fisher information", title="item information")
    axes[0].legend(fontsize=9, loc="upper left")
    if test_info:
        for lab, v in test_info.items():
            axes[2].plot(theta, v, lw=2, label=lab, color=_SEL_COLORS.get(lab.split()[0]))
        axes[2].set(xlabel="ability θ", ylabel="test information", title="test information of k items")
        axes[2].legend(fontsize=9)
    fig.tight_layout()
    return fig


def plot_bins(theta, y, curve, table, floor: float, title: str = ""):
    """Full score ``y`` against ability ``theta`` ``(n_models,)``, ``curve`` (Table1D), the bins and items of
    ``table`` (:func:`essence.lessons.irt.bin_table`), the floor (pp) shaded."""
    fig, ax = plt.subplots(figsize=(8.0, 4.6))
    ax.axhspan(0, floor, color="#fde0dd", alpha=0.6, lw=0, label=f"floor (< {floor:g} pp)")
    ax.scatter(theta, y, s=4, alpha=0.3, color="#555555", linewidths=0, label="training models")
    g = np.linspace(np.min(theta), np.max(theta), 400)
    ax.plot(g, curve(g), color="#d62728", lw=2, label="full score vs ability (GAM)")
    for edge in table["theta_lo"].to_numpy()[1:]:
        ax.axvline(edge, color="#1f77b4", lw=0.6, alpha=0.5)
    ax.plot(table["b"], np.full(len(table), -3.0), "|", color="#8c564b", ms=14, mew=1.5,
            label="difficulty b of the item each bin takes")
    ax.set(xlabel="ability θ (blue lines: bin edges, equal numbers of models)", ylabel="full score (pp)",
           ylim=(-6, 100))
    if title:
        ax.set_title(title)
    ax.legend(fontsize=9, loc="upper left")
    fig.tight_layout()
    _star_note(fig, [title])
    return fig


def plot_hypothesis(df, title: str = ""):
    """Test RMSE per split and selection of :func:`essence.lessons.irt.hypothesis_runs` output (random: mean ± sd)."""
    cols = [("rmse", "all test models"), ("rmse_floor", "test models at the floor"),
            ("rmse_above", "test models above the floor")]
    fig, axes = plt.subplots(1, 3, figsize=(14.0, 4.2), sharey=False)
    seeds = sorted(df["split_seed"].unique())
    sels = [s for s in _SEL_COLORS if s in set(df["selection"])]
    for ax, (col, name) in zip(axes, cols):
        for i, sel in enumerate(sels):
            sub = df[df["selection"] == sel]
            g = sub.groupby("split_seed")[col].agg(["mean", "std"]).reindex(seeds)
            xs = np.arange(len(seeds)) + (i - (len(sels) - 1) / 2) * 0.18
            ax.errorbar(xs, g["mean"], yerr=g["std"].fillna(0), fmt="o", ms=6, capsize=3,
                        color=_SEL_COLORS[sel], label=sel)
        ax.set_xticks(np.arange(len(seeds)), [f"split {s}" for s in seeds])
        ax.set(ylabel="test RMSE (pp)", title=name)
    axes[0].legend(fontsize=9)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    _star_note(fig, [title])
    return fig
