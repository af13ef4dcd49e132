"""Figures of notebook 14: item information curves and one model's adaptive test, item by item."""

from __future__ import annotations

import numpy as np
import matplotlib.pyplot as plt

from .style import METHOD_COLORS

__all__ = ["plot_information", "plot_trajectory"]


def plot_information(bank, items, theta=np.linspace(-4, 4, 161), ax=None):
    """Fisher information ``a^2 P (1 - P)`` of the bank's ``items`` (indices) over abilities ``theta``."""
    fig, ax = (ax.figure, ax) if ax is not None else plt.subplots(figsize=(7, 3.8))
    info = bank.fisher(theta)
    colors = plt.get_cmap("tab10").colors
    for c, j in zip(colors, items):
        b = -bank.d[j] / bank.a[j]
        ax.plot(theta, info[:, j], color=c, lw=2, label=f"item {j}: a = {bank.a[j]:.2f}, b = {b:.2f}")
    ax.set(xlabel="ability θ (standardised on the reference models)", ylabel="Fisher information")
    ax.set_title("Item information: sharp items inform near their difficulty b")
    ax.legend(fontsize=9, loc="upper left")
    return fig


def plot_trajectory(traj, row: int, truth: float, bank, model: str = "model"):
    """Two panels for test ``row`` of a :class:`~essence.methods.adaptive.Trajectory`: the estimate with its
    interval against the true score (pp), and the ability estimate with each given item's difficulty."""
    n = int(traj.n_items[row, -1])
    steps = np.arange(n + 1)
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
    color = METHOD_COLORS.get("irt", "#4c72b0")
    a1.fill_between(steps, traj.lower[row, : n + 1], traj.upper[row, : n + 1], color=color, alpha=0.2,
                    label="90 % interval")
    a1.plot(steps, traj.estimate[row, : n + 1], color=color, lw=2, label="estimate")
    a1.axhline(truth, color="#222222", ls="--", lw=1.2, label="true full score")
    a1.set(xlabel="items given", ylabel="full score (pp)", ylim=(0, 100), title=f"{model}: the estimate, item by item")
    a1.legend(fontsize=9, loc="lower right")
    items = traj.items[row, :n]
    a2.plot(steps, traj.theta[row, : n + 1], color=color, lw=2, label="ability estimate (EAP)")
    a2.scatter(steps[1:], -bank.d[items] / np.maximum(bank.a[items], 1e-9), s=14, color="#dd8452",
               label="difficulty b of the item given at that step", zorder=3)
    a2.set(xlabel="items given", ylabel="ability θ", title="Each next item sits where the ability estimate is")
    a2.set_ylim(min(-4, float(np.nanmin(traj.theta[row, : n + 1])) - 0.5), 6)
    a2.legend(fontsize=9, loc="lower right")
    fig.tight_layout()
    return fig
