"""Figures of notebook 07 (the other selectors): method colours, the pool caveat under a metabench dataset."""

from __future__ import annotations

import numpy as np
import matplotlib.pyplot as plt

from .style import METHOD_COLORS, _finish, _star

__all__ = ["plot_toy_choices", "plot_herding_mmd", "plot_ppl_strata", "plot_guide"]


def plot_toy_choices(R, chosen: dict, dataset: str = ""):
    """The toy ``R`` ``(n_models, n_items)`` as a grid; under it one row per ``chosen`` positions or float weights."""
    R, rows = np.asarray(R, dtype=float), list(chosen.items())
    (n_models, n_items), kinds = R.shape, ("kmeans", "herding", "ppl", "disco")
    fig, (ax, bx) = plt.subplots(2, 1, figsize=(0.55 * n_items + 2.5, 0.32 * (n_models + len(rows)) + 1.6),
                                 gridspec_kw={"height_ratios": [n_models, max(1, len(rows))]}, sharex=True)
    ax.imshow(R, cmap="Greys", vmin=0, vmax=1, aspect="auto")
    for (i, j), v in np.ndenumerate(R):
        ax.text(j, i, f"{v:.0f}" if v in (0.0, 1.0) else f"{v:.1f}", ha="center", va="center", fontsize=9,
                color="white" if v > 0.5 else "black")
    ax.set_yticks(range(n_models), [f"m{i}" for i in range(n_models)])
    ax.set_title(f"toy: {_star(dataset)}, which items each selector keeps", fontsize=10)
    ax.grid(False)
    for r, (label, sel) in enumerate(rows):
        sel, size = np.asarray(sel), np.zeros(n_items)
        if sel.shape == (n_items,) and sel.dtype.kind == "f":
            size = np.where(sel > 0, 30 + 200 * sel / max(sel.max(), 1e-12), 0)
        else:
            size[sel.astype(int)] = 80
        js = np.flatnonzero(size > 0)
        bx.scatter(js, np.full(js.size, r), s=size[js], color=METHOD_COLORS[kinds[r % 4]])
    bx.set_yticks(range(len(rows)), [lab for lab, _ in rows], fontsize=9)
    bx.set_xticks(range(n_items), [f"i{j}" for j in range(n_items)], fontsize=9)
    bx.set(ylim=(len(rows) - 0.5, -0.5), xlabel="item")
    return _done(fig, None, dataset)


def plot_herding_mmd(mmd_herding, mmd_random, dataset: str = ""):
    """MMD (kernel units) of the first t items: Herding ``(k,)``, random orders ``(n_draws, k)`` (mean, 10-90%)."""
    h, r = np.asarray(mmd_herding, float), np.atleast_2d(np.asarray(mmd_random, float))
    (fig, ax), t, c = plt.subplots(figsize=(6.2, 3.6)), np.arange(1, h.size + 1), METHOD_COLORS["random"]
    ax.plot(t, h, color=METHOD_COLORS["herding"], label="Kernel Herding (greedy)")
    ax.plot(t, r.mean(axis=0), color=c, ls=":", label=f"random order (mean of {r.shape[0]})")
    ax.fill_between(t, np.quantile(r, 0.1, axis=0), np.quantile(r, 0.9, axis=0), color=c, alpha=0.25)
    ax.set(xscale="log", yscale="log", xlabel="items chosen, t", ylabel="MMD(first t items, pool)")
    ax.set_title(f"Herding tracks the pool's kernel mean faster ({_star(dataset)})", fontsize=10)
    return _done(fig, ax, dataset)


def plot_ppl_strata(ppl, accuracy, bins, chosen, dataset: str = ""):
    """Perplexity ``(n,)`` against accuracy ``(n,)`` (pp); edges of the ``bins`` ``(n,)`` dotted; ``chosen`` marked."""
    ppl, acc, bins = np.asarray(ppl, float), np.asarray(accuracy, float), np.asarray(bins)
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    ax.scatter(ppl, acc, s=10, color="#bbbbbb", label="item of the pool")
    ax.scatter(ppl[chosen], acc[chosen], s=22, color=METHOD_COLORS["ppl"], label=f"{len(chosen)} drawn by PPL strata")
    for b in range(1, bins.max() + 1):
        ax.axvline(np.sqrt(ppl[bins == b - 1].max() * ppl[bins == b].min()), color="#555555", ls=":", lw=1)
    ticks = [t for t in (2, 5, 10, 20, 50, 100, 200, 500) if ppl.min() <= t <= ppl.max()]
    ax.set(xscale="log", ylim=(-3, 103), xlabel="perplexity under SmolLM2 (log scale)",
           ylabel="accuracy over training models (pp)")
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks], minor=False)
    ax.set_xticks([], minor=True)
    ax.set_title(f"Perplexity strata ({_star(dataset)}): equal-count bins of perplexity", fontsize=10)
    return _done(fig, ax, dataset, loc="lower left")


def plot_guide(guide, dataset: str = "", k: int | None = None):
    """Bars of the ``ratio to random`` column of a decision guide (refusing methods named in the title)."""
    ok = guide[guide["ratio to random"] != "refused"]
    fig, ax, refused = *plt.subplots(figsize=(6.2, 0.42 * len(guide) + 1.2)), [m for m in guide.index if m not in ok.index]
    ax.barh(range(len(ok)), ok["ratio to random"].astype(float), color=[METHOD_COLORS.get(m, "#444444") for m in ok.index])
    ax.set_yticks(range(len(ok)), list(ok.index))
    ax.axvline(1.0, color="k", ls="--", lw=1)
    ax.set(xlabel="test RMSE / random's (geometric mean over seeds); < 1 is better", ylim=(len(ok) - 0.5, -0.5))
    ax.set_title(f"{_star(dataset)}{', k = ' + str(k) if k else ''}{'; refused: ' + ', '.join(refused) if refused else ''}")
    return _done(fig, None, dataset)


def _done(fig, ax, dataset, loc="best"):
    if ax is not None:
        ax.legend(fontsize=9, loc=loc)
    return _finish(fig, [dataset])
