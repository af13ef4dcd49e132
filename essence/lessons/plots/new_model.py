"""Figures of notebook 10: a new model's estimates and where they sit in the reconstructors' range."""

from __future__ import annotations

import numpy as np
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from .style import METHOD_COLORS, _finish, _panels, _star

__all__ = ["plot_new_model_estimates", "plot_reconstructor_range"]


def plot_new_model_estimates(estimates, train_targets: dict, chance: dict | None = None, model: str = "new model",
                             reference: dict | None = None):
    """Per benchmark, training models' full scores (violin) and the new model's estimate: ``estimates`` DataFrame
    ``dataset, estimate, lower, upper``; ``train_targets``, ``chance`` (dotted), ``reference`` (diamond): by dataset."""
    rows = list(estimates.itertuples(index=False))
    fig, axes = _panels(1, len(rows), figsize=(2.3 * len(rows) + 0.8, 4.4), sharey=True)
    for ax, r in zip(axes.ravel(), rows):
        y = np.asarray(train_targets[r.dataset], dtype=float)
        ax.axhspan(y.min(), y.max(), color="#4c72b0", alpha=0.08, lw=0)
        vp = ax.violinplot(y, positions=[0], widths=0.8, showextrema=False)
        for b in vp["bodies"]:
            b.set_facecolor("#4c72b0")
            b.set_alpha(0.35)
        ax.errorbar([0], [r.estimate], yerr=[[r.estimate - r.lower], [r.upper - r.estimate]], fmt="o",
                    color=METHOD_COLORS["essence"], ms=7, capsize=5, lw=2, zorder=5, label=f"{model}: estimate, interval")
        if reference and r.dataset in reference:
            ax.plot([0.25], [reference[r.dataset]], marker="D", mfc="white", mec="#333333", ms=6, ls="none",
                    zorder=6, label=f"{model}: estimate from every logged item")
        if chance and r.dataset in chance:
            ax.axhline(chance[r.dataset], color="#333333", ls=":", lw=1.2, label="chance level")
        below = float((y < r.estimate).mean() * 100)
        ax.set_title(_star(r.dataset))
        ax.text(0.5, -0.06, f"{below:.0f}% of training\nmodels below", transform=ax.transAxes, ha="center", va="top",
                fontsize=9)
        ax.set_xticks([])
        ax.set(xlim=(-0.7, 0.7), ylim=(-2, 102))
    axes[0, 0].set_ylabel("full-benchmark score (pp)")
    first = {}  # each legend entry once, from the first panel that has it
    for ax in axes.ravel():
        for hh, ll in zip(*ax.get_legend_handles_labels()):
            first.setdefault(ll, hh)
    first["training models' full scores (shade: their range)"] = Patch(color="#4c72b0", alpha=0.35)
    fig.legend(list(first.values()), list(first), loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=2, fontsize=9)
    fig.suptitle(f"{model}: estimated full scores with 90% intervals, against the models the reconstructors learnt from")
    return _finish(fig, (r.dataset for r in rows), y=-0.13, wrap=False)


def plot_reconstructor_range(panels: dict, model: str = "new model"):
    """Subset score (x) against full score (y) of the training models and the new model's estimate, one panel per
    dataset -> ``train_x``, ``train_y``, ``train_fit``, ``x``, ``estimate``, ``lower``, ``upper`` (pp)."""
    n = len(panels)
    cols = min(n + 1, 3)
    rows = int(np.ceil((n + 1) / cols))
    fig, axes = _panels(rows, cols, figsize=(3.9 * cols, 3.5 * rows), n=n)
    for ax, (ds, p) in zip(axes.ravel(), panels.items()):
        tx, ty = np.asarray(p["train_x"]), np.asarray(p["train_y"])
        ax.scatter(tx, ty, s=4, alpha=0.25, color="#4c72b0", zorder=1)
        order = np.argsort(tx)
        fit = np.asarray(p["train_fit"], dtype=float)
        _, inv = np.unique(np.round(tx, 9), return_inverse=True)
        spread = max((np.ptp(fit[inv == g]) for g in np.unique(inv)), default=0.0)
        if spread < 1e-6:  # the reconstructor is a function of the subset mean: draw it as a curve
            ax.plot(tx[order], fit[order], color="#333333", lw=1.2, zorder=2)
        else:  # it uses more than the mean (e.g. ridge on the items): one estimate per model
            ax.scatter(tx, fit, s=3, alpha=0.35, color="#333333", marker="x", lw=0.6, zorder=2)
        ax.errorbar([p["x"]], [p["estimate"]], yerr=[[p["estimate"] - p["lower"]], [p["upper"] - p["estimate"]]],
                    fmt="o", color=METHOD_COLORS["essence"], mec="white", mew=1.2, ms=8, capsize=4, lw=2,
                    zorder=10)  # the estimate on top of the training models' cloud
        lower = float((tx < p["x"] - 1e-9).mean() * 100)
        equal = float((np.abs(tx - p["x"]) <= 1e-9).mean() * 100)
        ax.set_title(f"{_star(ds)}: {lower:.0f}% lower, {equal:.0f}% equal", fontsize=10.5)
        ax.set(xlabel="mean over the chosen items (pp)", ylabel="full-benchmark score (pp)")
        ax.set(xlim=(-3, 103), ylim=(-3, 103))
    handles = [Line2D([], [], ls="none", marker="o", ms=5, color="#4c72b0", alpha=0.6),
               Line2D([], [], color="#333333", lw=1.2, marker="x", ms=4),
               Line2D([], [], ls="-", marker="o", ms=7, lw=2, color=METHOD_COLORS["essence"])]
    labels = ["training models (true full score)", "reconstructor's estimate for them",
              f"{model}: estimate and 90% interval"]
    spare = axes.ravel()[n:]
    if len(spare):
        spare[0].legend(handles, labels, loc="center", fontsize=9)
    else:
        fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=3, fontsize=9)
    fig.suptitle(f"Where {model} falls on each reconstructor's input\n(title: share of training models with a "
                 "lower / equal mean over the chosen items)")
    return _finish(fig, panels)
