"""Figures of notebook 07: the other selectors on a toy matrix and on real data."""

from __future__ import annotations

import numpy as np

__all__ = ["plot_toy_choices", "plot_herding_mmd", "plot_guide"]


def plot_toy_choices(R, chosen: dict, model_labels=None, title: str = ""):
    """The toy matrix ``R`` ``(n_models, n_items)`` (0/1 or scores in [0, 1]) as a grid, and under it one
    row per selector marking the items it chose.

    ``chosen``: selector label -> item positions (or a ``(n_items,)`` weight per item, drawn as the mark's
    size, e.g. K-Means cluster sizes on the anchors and 0 elsewhere). Returns the figure.
    """
    import matplotlib.pyplot as plt

    R = np.asarray(R, dtype=float)
    n_models, n_items = R.shape
    rows = list(chosen.items())
    fig, (ax, bx) = plt.subplots(2, 1, figsize=(0.55 * n_items + 2.5, 0.32 * (n_models + len(rows)) + 1.6),
                                 gridspec_kw={"height_ratios": [n_models, max(1, len(rows))]}, sharex=True)
    ax.imshow(R, cmap="Greys", vmin=0, vmax=1, aspect="auto")
    for i in range(n_models):
        for j in range(n_items):
            if not np.isnan(R[i, j]):
                ax.text(j, i, f"{R[i, j]:.0f}" if R[i, j] in (0.0, 1.0) else f"{R[i, j]:.1f}", ha="center",
                        va="center", fontsize=7, color="white" if R[i, j] > 0.5 else "black")
    ax.set_yticks(range(n_models))
    ax.set_yticklabels(model_labels if model_labels is not None else [f"m{i}" for i in range(n_models)], fontsize=7)
    ax.set_title(title or "toy matrix: models (rows) x items (columns)", fontsize=10)
    for r, (label, sel) in enumerate(rows):
        sel = np.asarray(sel)
        if sel.shape == (n_items,) and sel.dtype.kind == "f":
            size = np.where(sel > 0, 30 + 200 * sel / max(sel.max(), 1e-12), 0)
        else:
            size = np.zeros(n_items)
            size[sel.astype(int)] = 80
        js = np.flatnonzero(size > 0)
        bx.scatter(js, np.full(js.size, r), s=size[js], color="C0")
    bx.set_yticks(range(len(rows)))
    bx.set_yticklabels([lab for lab, _ in rows], fontsize=8)
    bx.set_ylim(len(rows) - 0.5, -0.5)
    bx.set_xticks(range(n_items))
    bx.set_xticklabels([f"i{j}" for j in range(n_items)], fontsize=7)
    bx.set_xlabel("item")
    fig.tight_layout()
    return fig


def plot_herding_mmd(mmd_herding, mmd_random, dataset: str = ""):
    """MMD between the first t chosen items and the pool, against t: Kernel Herding's greedy steps
    (``mmd_herding`` ``(k,)``) and random orders (``mmd_random`` ``(n_draws, k)``: mean and 10-90% band).
    Kernel units (RBF, median-heuristic bandwidth). Returns the figure."""
    import matplotlib.pyplot as plt

    h = np.asarray(mmd_herding, dtype=float)
    r = np.atleast_2d(np.asarray(mmd_random, dtype=float))
    t = np.arange(1, h.size + 1)
    fig, ax = plt.subplots(figsize=(6.2, 3.6))
    ax.plot(t, h, color="C3", label="Kernel Herding (greedy)")
    ax.plot(t, r.mean(axis=0), color="C7", label=f"random order (mean of {r.shape[0]})")
    ax.fill_between(t, np.quantile(r, 0.1, axis=0), np.quantile(r, 0.9, axis=0), color="C7", alpha=0.25)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("items chosen, t")
    ax.set_ylabel("MMD(first t items, pool)")
    ax.set_title(f"Herding tracks the pool's kernel mean faster{' (' + dataset + ')' if dataset else ''}", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_guide(guide, dataset: str = "", k: int | None = None):
    """Each method's test RMSE relative to random's (from :func:`essence.lessons.selectors.decision_guide`,
    column ``ratio to random``) as horizontal bars; refusing methods are listed without a bar. The dashed
    line at 1 is random's level. Returns the figure."""
    import matplotlib.pyplot as plt

    ok = guide[guide["ratio to random"] != "refused"]
    vals = ok["ratio to random"].astype(float)
    fig, ax = plt.subplots(figsize=(6.2, 0.42 * len(guide) + 1.2))
    ax.barh(range(len(ok)), vals, color=["C7" if m == "random" else "C0" for m in ok.index])
    ax.set_yticks(range(len(ok)))
    ax.set_yticklabels(list(ok.index), fontsize=9)
    ax.axvline(1.0, color="k", ls="--", lw=1)
    ax.invert_yaxis()
    ax.set_xlabel("test RMSE / random's (geometric mean over seeds); < 1 is better")
    refused = [m for m in guide.index if m not in ok.index]
    note = f"; refused: {', '.join(refused)}" if refused else ""
    ax.set_title(f"{dataset}{', k = ' + str(k) if k else ''}{note}", fontsize=9)
    fig.tight_layout()
    return fig
