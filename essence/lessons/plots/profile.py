"""Figure of notebook 09: mean profiles of the chosen items against the full pool."""

from __future__ import annotations

import numpy as np

from .style import METHOD_COLORS, _panels

__all__ = ["plot_mean_profile"]


def plot_mean_profile(panels: dict, title: str, smooth: int = 1):
    """Per model (sorted by the full line) the mean score over each item set (top) and its difference from the full line
    (bottom); ``panels``: title -> ``{"profiles": {name: (n_models,) pp, "full" required}, "random_draws"?: (n_draws,
    n_models) pp, "distance"?: {name: pp or str}}``; ``smooth`` > 1: running mean / RMS over ``smooth`` models."""
    labels = {"full": "Full item set", "kmeans": "K-Means representatives (cluster-weighted)",
              "herding": "Kernel Herding", "random": "Random"}
    short = {"kmeans": "K-Means", "herding": "Herding", "random": "one random draw"}

    def run(y, axis=-1):
        if smooth <= 1:
            return y
        pad = [(0, 0)] * np.ndim(y)
        pad[axis] = (smooth // 2, smooth - 1 - smooth // 2)
        c = np.cumsum(np.pad(y, pad, mode="edge"), axis=axis)
        c = np.concatenate([np.zeros_like(np.take(c, [0], axis=axis)), c], axis=axis)
        n = np.shape(y)[axis]
        return (np.take(c, np.arange(smooth, smooth + n), axis=axis) - np.take(c, np.arange(n), axis=axis)) / smooth

    def local(dev, axis=-1):  # bottom-row transform of (line - full)
        return dev if smooth <= 1 else np.sqrt(run(dev**2, axis=axis))

    def thin(y):  # smoothed curves are drawn at every (smooth // 8)-th model and the ends: the SVG stays small
        y, stride = np.asarray(y), max(1, smooth // 8)
        return y if stride == 1 else y[np.unique(np.r_[np.arange(0, len(y), stride), len(y) - 1])]

    n = len(panels)
    fig, axes = _panels(2, n, figsize=(6.4 * n, 6.4), sharex="col",
                             gridspec_kw={"height_ratios": [2.1, 1]})
    for j, (ptitle, p) in enumerate(panels.items()):
        prof = {name: np.asarray(v, dtype=float) for name, v in p["profiles"].items()}
        order = np.argsort(prof["full"], kind="stable")
        x = np.arange(1, len(order) + 1)
        top, bot = axes[0, j], axes[1, j]
        full = prof["full"][order]
        dist = p.get("distance", {})
        line = ", ".join(f"{short.get(nm, nm)} {d if isinstance(d, str) else f'{d:.2f}'}" for nm, d in dist.items())

        if "random_draws" in p:
            draws = np.asarray(p["random_draws"], dtype=float)[:, order]
            c = METHOD_COLORS["random"]
            lo, hi = np.percentile(draws, [5, 95], axis=0)
            top.fill_between(thin(x), thin(run(lo)), thin(run(hi)), color=c, alpha=0.2, lw=0, label="Random: 5-95% of single draws")
            top.plot(thin(x), thin(run(draws.mean(axis=0))), color=c, ls="--", lw=1.3, label=f"Random: mean of {len(draws)} draws")
            dev = local(draws - full, axis=1)
            blo, bhi = np.percentile(dev, [5, 95], axis=0)
            bot.fill_between(thin(x), thin(blo), thin(bhi), color=c, alpha=0.2, lw=0)
            bot.plot(thin(x), thin(np.median(dev, axis=0) if smooth > 1 else draws.mean(axis=0) - full), color=c, ls="--", lw=1.3)
        for name, y in prof.items():
            y = y[order]
            style = dict(color=METHOD_COLORS.get(name), lw=2.2 if name == "full" else 1.4,
                         zorder=5 if name == "full" else 3)
            top.plot(thin(x), thin(run(y)), label=labels.get(name, name), **style)
            if name != "full":
                bot.plot(thin(x), thin(local(y - full)), **style)
        bot.axhline(0, color=METHOD_COLORS["full"], lw=1.2)
        top.set_title(ptitle + (f"\nRMSE from full (pp): {line}" if line else ""), fontsize=9.5)
        top.set_ylabel("mean score (pp)")
        bot.set_ylabel("line minus full (pp)" if smooth <= 1 else "local RMS (pp)")
        bot.set_xlabel("model (sorted by its mean over the full item set)")
    sub = (f"\n(top: running mean over {smooth} neighbouring models; bottom: running RMS of the difference over "
           f"the same window)" if smooth > 1 else "")
    fig.suptitle(title + sub)
    handles, names = axes[0, 0].get_legend_handles_labels()
    fig.tight_layout(rect=(0, 0.11, 1, 1))
    fig.align_ylabels(axes[:, 0])
    fig.legend(handles, names, loc="lower center", bbox_to_anchor=(0.5, 0.0), ncol=3, fontsize=9, frameon=False)
    return fig
