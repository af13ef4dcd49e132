"""Figures of notebook 01: text and rank redundancy (heatmaps, distributions, text vs rank, split half)."""

from __future__ import annotations

import numpy as np

from .style import _finish, _panels, _star

__all__ = ["plot_redundancy_heatmaps", "plot_redundancy_distributions", "plot_text_vs_rank", "plot_split_half"]


def plot_redundancy_heatmaps(matrices: dict, orders: dict, title: str, vmin: float = -0.2, vmax: float = 1.0):
    """Redundancy heatmaps, one column per ``matrices`` label -> ``(n_items, n_items)``, one row per ``orders`` label
    -> ``(n_items,)`` item order; one colour scale ``[vmin, vmax]``."""
    nr, nc = len(orders), len(matrices)
    fig, axes = _panels(nr, nc, figsize=(4.3 * nc + 0.8, 4.1 * nr))
    im = None
    for i, (olab, order) in enumerate(orders.items()):
        o = np.asarray(order, dtype=np.intp)
        for j, (mlab, M) in enumerate(matrices.items()):
            A = np.array(M, dtype=np.float64)[np.ix_(o, o)]
            np.fill_diagonal(A, np.nan)
            ax = axes[i, j]
            im = ax.imshow(A, cmap="magma", vmin=vmin, vmax=vmax, interpolation="nearest")
            ax.grid(False)
            ax.set_title(f"{mlab}\nitems ordered by {olab}", fontsize=10.5)
            ax.set(xlabel=f"item (ordered by {olab})", ylabel=f"item (ordered by {olab})")
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0, 0.92, 1))
    fig.colorbar(im, cax=fig.add_axes((0.93, 0.25, 0.015, 0.5)), label="redundancy (cosine / Pearson)")
    return fig


def plot_redundancy_distributions(values: dict, thresholds: dict | None = None, null: dict | None = None,
                                  bins: int = 80):
    """Histograms (share of pairs, log scale) of off-diagonal redundancies: ``values`` kind -> {dataset ->
    ``(n_pairs,)``}; ``thresholds`` kind -> threshold; ``null`` kind -> {dataset -> ``(n_pairs,)``} dashed."""
    kinds = list(values)
    n_lines = max(len(v) * (2 if (null or {}).get(kind) else 1) for kind, v in values.items())
    fig, axes = _panels(1, len(kinds), figsize=(5.9 * len(kinds), 4.0 + 0.25 * n_lines))
    palette = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3"]
    edges = np.linspace(-1, 1, bins + 1)
    for ax, kind in zip(axes.ravel(), kinds):
        tau = (thresholds or {}).get(kind)
        for c, (ds, v) in zip(palette, values[kind].items()):
            v = np.asarray(v, dtype=np.float64)
            w = np.full(v.size, 1.0 / max(v.size, 1))
            above = (f"; {int((v > tau).sum()):,} pairs above τ = {tau:g}" if tau is not None and tau < 1 else "")
            ax.hist(v, bins=edges, weights=w, histtype="step", lw=1.6, color=c,
                    label=f"{_star(ds)}: {v.size:,} item pairs, median {np.median(v):.2f}{above}")
            nv = (null or {}).get(kind, {}).get(ds)
            if nv is not None:
                nv = np.asarray(nv, dtype=np.float64)
                ax.hist(nv, bins=edges, weights=np.full(nv.size, 1.0 / nv.size), histtype="step", lw=1.0, ls="--",
                        color=c, label=f"{_star(ds)}: item scores shuffled over models (no redundancy)")
        if tau is not None and tau < 1:
            ax.axvline(tau, color="#222222", lw=1, ls=":")
            ax.text(tau, 0.66, f"τ = {tau:g} ", transform=ax.get_xaxis_transform(), va="bottom", ha="right", fontsize=9)
        ax.set(yscale="log", xlim=(-0.6, 1.02), xlabel=f"{kind} of an item pair")
        ax.set(ylabel="share of pairs per bin (log scale)", title=kind)
        lo = ax.get_ylim()[0]
        ax.set_ylim(lo, 10 ** (0.15 * -np.log10(lo)))  # a little room above the data (shares <= 1)
        ax.set_yticks([10.0 ** e for e in range(int(np.ceil(np.log10(lo))), 1)])
        # below the panel, one entry a line: the spelled-out entries are wider than the data leave room for
        ax.legend(fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.2), frameon=False)
    fig.suptitle("How redundant are item pairs? Distribution of the off-diagonal redundancies")
    return _finish(fig, (ds for v in values.values() for ds in v))


def plot_text_vs_rank(panels: dict, tau_text: float | None = None, tau_rank: float | None = None,
                      max_points: int = 40000, seed: int = 0):
    """Text (x) against rank (y) redundancy of every item pair, one panel per dataset -> ``(r_text, r_rank)``
    ``(n_pairs,)``; dashed lines at the thresholds."""
    n = len(panels)
    cols = 2 if n == 4 else min(n, 3)
    rows = int(np.ceil(n / cols))
    fig, axes = _panels(rows, cols, figsize=(4.6 * cols, 4.0 * rows), n=n)
    rng = np.random.default_rng(seed)
    for ax, (ds, (t, r)) in zip(axes.ravel(), panels.items()):
        t, r = np.asarray(t, dtype=np.float64), np.asarray(r, dtype=np.float64)
        ok = np.isfinite(t) & np.isfinite(r)
        t, r = t[ok], r[ok]
        sel = rng.permutation(t.size)[:max_points]
        ax.scatter(t[sel], r[sel], s=3 if sel.size < 10000 else 2, alpha=0.35 if sel.size < 10000 else 0.15,
                   color="#4c72b0", lw=0)
        out = ((t > tau_text) if tau_text is not None else False) | ((r > tau_rank) if tau_rank is not None else False)
        out = np.flatnonzero(out)
        if 0 < out.size <= 200:  # the few pairs the filter would act on, drawn so that they can be seen
            ax.scatter(t[out], r[out], s=18, facecolor="none", edgecolor="#c44e52", lw=1.0,
                       label=f"beyond a threshold ({out.size})")
        if tau_text is not None and tau_text < 1:
            ax.axvline(tau_text, color="#c44e52", lw=1, ls="--", label=f"τ_text = {tau_text:g}")
        if tau_rank is not None and tau_rank < 1:
            ax.axhline(tau_rank, color="#dd8452", lw=1, ls="--", label=f"τ_rank = {tau_rank:g}")
        rho = np.corrcoef(t, r)[0, 1] if t.size > 2 else np.nan
        shown = f"{sel.size:,} of {t.size:,} pairs" if sel.size < t.size else f"{t.size:,} pairs"
        ax.set_title(f"{_star(ds)}: r = {rho:.2f} ({shown})", fontsize=10.5)
        ax.set(xlabel="R_text (MiniLM cosine)", ylabel="R_rank (Pearson over training models)")
        ax.set(xlim=(-0.3, 1.02), ylim=(-0.6, 1.02))
        ax.legend(fontsize=9, loc="lower right")
    fig.suptitle("Do the two redundancies agree? Each point is one pair of items")
    return _finish(fig, panels)


def plot_split_half(panels: dict, max_points: int = 30000, seed: int = 0):
    """Rank redundancy of each pair on two halves of the models, one panel per dataset -> ``(a, b, n_models)``
    (:func:`essence.lessons.stages.rank_redundancy_halves`)."""
    n = len(panels)
    fig, axes = _panels(1, n, figsize=(4.1 * n, 4.0))
    rng = np.random.default_rng(seed)
    for ax, (ds, (a, b, m)) in zip(axes.ravel(), panels.items()):
        a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
        sel = rng.permutation(a.size)[:max_points]
        ax.scatter(a[sel], b[sel], s=2, alpha=0.15, color="#55a868", lw=0)
        ax.plot([-1, 1], [-1, 1], color="#999999", lw=1, ls="--", label="y = x")
        h = m // 2
        halves = f"two halves of {h} models each" if 2 * h == m else f"halves of {h} and {m - h} models"
        ax.set_title(f"{_star(ds)}: {halves}\nagreement r = {np.corrcoef(a, b)[0, 1]:.2f}", fontsize=10.5)
        ax.set(xlabel="R_rank on half A", ylabel="R_rank on half B", xlim=(-1, 1.02), ylim=(-1, 1.02))
        ax.legend(fontsize=9, loc="lower right")
    fig.suptitle("Is a pair's rank redundancy a property of the items? Measure it twice")
    return _finish(fig, panels)
