"""Figures of notebook 04: EBM-attribution refinement (attribution, refinement trace, ablation)."""

from __future__ import annotations

import numpy as np
from matplotlib.colors import BoundaryNorm
import matplotlib.pyplot as plt

from .style import METHOD_COLORS, _finish, _panels, _star

__all__ = ["plot_attribution", "plot_refinement_trace", "plot_ablation"]


def plot_attribution(attribution, counts, discrimination, groups: dict, best, k: int, dataset: str = ""):
    """EBM attributions ``(M,)`` (pp) against discrimination ``(M,)`` of the items some elite holds (``counts``), and
    the items ranked by attribution with the ranks of each of ``groups`` (name -> positions); ``best``: best subset."""
    A = np.asarray(attribution, dtype=float)
    c = np.asarray(counts, dtype=int)
    disc = np.asarray(discrimination, dtype=float)
    M = A.size
    fig, axes = plt.subplots(1, 2, figsize=(11.5, 4.3), gridspec_kw={"width_ratios": [1, 1.25]})
    ax = axes[0]
    held = c > 0
    cmax = max(int(c.max()), 1)
    norm = BoundaryNorm(np.arange(0.5, cmax + 1.5), plt.get_cmap("viridis").N)
    sc = ax.scatter(disc[held], A[held], c=c[held], cmap="viridis", norm=norm, s=22, edgecolor="none")
    inb = np.zeros(M, dtype=bool)
    inb[np.asarray(best, dtype=np.intp)] = True
    ax.scatter(disc[inb], A[inb], s=46, facecolor="none", edgecolor="#c44e52", lw=1.0, label=f"in the best subset ({inb.sum()})")
    fig.colorbar(sc, ax=ax, ticks=range(1, cmax + 1), fraction=0.05, pad=0.02, label="elites holding the item")
    ax.set(xlabel="item discrimination (corr. with full score)", ylabel="attribution A_l (pp)")
    ax.set_title(f"{held.sum()} of {M} items are in some elite", fontsize=10.5)
    ax.legend(fontsize=9, loc="upper left")
    ax = axes[1]
    order = np.argsort(-A, kind="stable")
    ax.plot(np.arange(1, M + 1), A[order], color="#222222", lw=1.5, label="attribution, items ranked")
    top = A.max() if A.max() > 0 else 1.0
    colors = {"high": "#c44e52", "low": "#4c72b0", "random": "#8c8c8c"}
    rank_of = np.empty(M, dtype=np.intp)
    rank_of[order] = np.arange(1, M + 1)
    for i, (name, g) in enumerate(groups.items()):
        y0 = -0.12 * top * (i + 1)
        r = np.sort(rank_of[np.asarray(g, dtype=np.intp)])
        ax.scatter(r, np.full(r.size, y0), marker="|", s=60, color=colors.get(name, "#55a868"), lw=0.8)
        ax.text(M * 1.01, y0, f"{name} ({r.size})", va="center", fontsize=9, color=colors.get(name, "#55a868"))
    ax.axvline(held.sum() + 0.5, color="#999999", ls=":", lw=1)
    ax.text(held.sum() + 3, 0.75 * top, "no elite holds\nthe items right\nof this line (A = 0)", fontsize=9, color="#555555")
    ax.set(xlim=(0, M * 1.16), ylim=(-0.12 * top * (len(groups) + 0.8), top * 1.08))
    ax.set_yticks([t for t in ax.get_yticks() if 0 <= t <= top * 1.08])
    ax.set(xlabel="item rank by attribution", ylabel="attribution A_l (pp)")
    ax.set_title("the three groups: which ranks each holds", fontsize=10.5)
    fig.suptitle(f"{_star(dataset)}, k = {k}: EBM attributions from the GA's elite subsets")
    return _finish(fig, [dataset])


def plot_refinement_trace(traces, dataset: str = ""):
    """Validation (solid) and fitness (dashed) RMSE (pp) of the best subset after the GA and each refinement round, one
    panel per k; ``traces``: :func:`essence.lessons.stages.ablation_traces` output."""
    ks = sorted(traces["k"].unique())
    fig, axes = _panels(1, len(ks), figsize=(4.6 * len(ks), 3.9))
    for ax, k in zip(axes.ravel(), ks):
        t = traces[traces["k"] == k]
        stages = t.sort_values("step").drop_duplicates("step")["stage"].tolist()
        for col, color, ls, lab in (("val_rmse", METHOD_COLORS["essence"], "-", "validation RMSE"),
                                    ("fitness_rmse", "#4c72b0", "--", "fitness RMSE")):
            P = t.pivot(index="seed", columns="step", values=col)
            for _, row in P.iterrows():
                ax.plot(P.columns, row.values, color=color, ls=ls, lw=0.8, alpha=0.45)
            ax.plot(P.columns, P.mean(axis=0).values, color=color, ls=ls, lw=2.4, marker="o", label=f"{lab} (mean)")
        ax.set_xticks(range(len(stages)), stages)
        ax.set(xlabel="stage (the best subset so far)", ylabel="RMSE (pp)")
        ax.set_title(f"k = {k} ({t['seed'].nunique()} seeds: thin lines)")
        ax.legend(fontsize=9)
    fig.suptitle(f"{_star(dataset)}: error of the best subset after the GA and after each refinement round")
    return _finish(fig, [dataset])


def plot_ablation(table, variants, metric: str = "rmse", dataset: str = ""):
    """``metric`` of each of ``variants`` (display order), one panel per k: a grey line per seed, mean ± sd marked;
    ``table``: :func:`essence.lessons.stages.ablation` output."""
    ks = sorted(table["k"].unique())
    fig, axes = _panels(1, len(ks), figsize=(5.4 * len(ks), 4.6))
    palette = ["#c44e52", "#dd8452", "#4c72b0", "#8c8c8c", "#55a868"]
    for ax, k in zip(axes.ravel(), ks):
        t = table[table["k"] == k]
        P = t.pivot(index="seed", columns="variant", values=metric).reindex(columns=list(variants))
        x = np.arange(len(variants))
        for _, row in P.iterrows():
            ax.plot(x, row.values, color="#bbbbbb", lw=0.9, marker=".", ms=5, zorder=1)
        m, sd = P.mean(axis=0).values, P.std(axis=0, ddof=1).values if len(P) > 1 else np.zeros(len(variants))
        for i, (v, c) in enumerate(zip(variants, palette)):
            ax.errorbar([i], [m[i]], yerr=[np.nan_to_num(sd[i])], fmt="o", ms=8, color=c, capsize=4, lw=2, zorder=3)
            ax.annotate(f"{m[i]:.2f}", (i, m[i]), textcoords="offset points", xytext=(8, -3), fontsize=9, color=c)
        ax.set_xticks(x, [v.replace(", ", ",\n").replace(" + ", "\n+ ") for v in variants], fontsize=9)
        ax.set(xlim=(-0.5, len(variants) - 0.3), ylabel="test RMSE (pp)" if metric == "rmse" else f"test {metric}")
        ax.set_title(f"k = {k} ({len(P)} seeds)")
    fig.suptitle(f"{_star(dataset)}: ablation of the filter and the refinement (grey: one seed's split across variants)")
    return _finish(fig, [dataset])
