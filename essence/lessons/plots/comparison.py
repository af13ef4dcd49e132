"""Figures of notebook 08: the method comparison (error against k, error relative to random)."""

from __future__ import annotations

import numpy as np

from ...data import METABENCH
from ...data.errors import InputError
from .style import METHOD_COLORS, _method_label, _starred_caveat

__all__ = ["plot_metric_vs_k", "plot_relative_to_random"]


def plot_metric_vs_k(summary, metric: str = "rmse", methods=None, datasets=None, title: str | None = None):
    """One panel per dataset: ``metric`` (mean ± sd over seeds) against k, one colour per method.

    ``summary``: the output of :func:`essence.sweep.summarise` (columns ``<metric>_mean``,
    ``<metric>_sd``, ``n_failed``, ``n_runs``). ``metric``: ``"rmse"`` (test RMSE, pp; log y axis) or
    ``"kendall"`` (test Kendall tau). Points are shifted slightly left/right per method so error bars do
    not hide each other. A method with no finished run on a dataset is listed in that panel as "no result".
    """
    import matplotlib.pyplot as plt

    if metric not in ("rmse", "kendall"):
        raise InputError(f"metric: {metric!r} is unknown; choose 'rmse' or 'kendall'")
    methods = list(dict.fromkeys(summary["method"])) if methods is None else list(methods)
    datasets = list(dict.fromkeys(summary["dataset"])) if datasets is None else list(datasets)
    ks = sorted(summary["k"].unique())
    n = len(datasets)
    cols = min(4, n + 1)
    rows = int(np.ceil((n + 1) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 3.0 * rows), squeeze=False)
    offsets = np.linspace(-0.06, 0.06, max(len(methods), 1))
    for ax, ds in zip(axes.ravel(), datasets):
        g = summary[summary["dataset"] == ds]
        missing = []
        for off, m in zip(offsets, methods):
            gm = g[g["method"] == m].sort_values("k")
            ok = gm[np.isfinite(gm[f"{metric}_mean"])]
            if len(gm) and ok.empty:
                missing.append(_method_label(m))
                continue
            if ok.empty:
                continue
            x = np.asarray(ok["k"], dtype=float) * np.exp(off)
            ax.errorbar(x, ok[f"{metric}_mean"], yerr=np.nan_to_num(ok[f"{metric}_sd"]), marker="o", ms=4, lw=1.4,
                        capsize=2, color=METHOD_COLORS.get(m, None), label=_method_label(m))
        ax.set_xscale("log")
        ax.set_xticks(ks)
        ax.set_xticklabels([str(k) for k in ks])
        ax.minorticks_off()
        ax.set_xlim(min(ks) * 0.8, max(ks) * 1.25)
        ax.set_xlabel("items kept, k")
        if metric == "rmse":
            from matplotlib.ticker import FormatStrFormatter, LogLocator, NullFormatter

            ax.set_yscale("log")
            ax.set_ylabel("test RMSE (pp, log scale)")
            ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 1.5, 2.0, 3.0, 5.0, 7.0)))
            ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
            ax.yaxis.set_minor_formatter(NullFormatter())
        else:
            ax.set_ylabel("test Kendall tau")
        ax.set_title(f"{ds}{' *' if ds in METABENCH else ''}")
        if missing:
            ax.set_xlabel("items kept, k\nno result: " + ", ".join(missing), color="#222222")
    spare = axes.ravel()[n:]
    handles, labels = [], []
    for ax in axes.ravel()[:n]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    for ax in spare:
        ax.axis("off")
    if len(spare):
        spare[0].legend(handles, labels, loc="center", title="method", fontsize=9)
    else:
        fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 8))
    what = "test RMSE of the reconstructed full score" if metric == "rmse" else "rank agreement (Kendall tau) with the full score"
    fig.suptitle(title or f"{what[0].upper() + what[1:]} against k: mean ± sd over seeds")
    fig.tight_layout()
    _starred_caveat(fig, datasets)
    return fig


def plot_relative_to_random(summary, k: int = 50, methods=None, datasets=None, ax=None):
    """Heatmap at one k: each method's test RMSE relative to random's on the same dataset.

    ``summary``: :func:`essence.sweep.summarise` output with a ``random`` method. Cells read "0.62" (the
    ratio, :func:`essence.data.metrics.ratio_to_random`: geometric mean over seeds of the per-seed ratio;
    < 1 = better than random) over the mean RMSE in pp; runs that all failed read "failed".
    ``ax``: draw into this Axes (no layout, no caveat: the caller's figure); None makes a figure.
    """
    import matplotlib.pyplot as plt
    from matplotlib.colors import TwoSlopeNorm

    s = summary[summary["k"] == k]
    methods = list(dict.fromkeys(s["method"])) if methods is None else list(methods)
    datasets = list(dict.fromkeys(s["dataset"])) if datasets is None else list(datasets)
    rm = s.pivot_table(index="dataset", columns="method", values="rmse_mean", aggfunc="first")
    rm = rm.reindex(index=datasets, columns=methods)
    if "random" not in rm.columns:
        raise InputError("summary: needs runs of the 'random' method at this k to compare against")
    ratio = s.pivot_table(index="dataset", columns="method", values="ratio_to_random", aggfunc="first",
                          dropna=False).reindex(index=datasets, columns=methods)
    own = ax is None
    fig, ax = (plt.subplots(figsize=(1.05 * len(methods) + 2.2, 0.55 * len(datasets) + 1.6)) if own
               else (ax.figure, ax))
    vals = np.log2(ratio.to_numpy(dtype=float))
    lim = max(1.0, np.nanmax(np.abs(vals)) if np.isfinite(vals).any() else 1.0)
    im = ax.imshow(vals, cmap="RdBu_r", norm=TwoSlopeNorm(0.0, -lim, lim), aspect="auto")
    for i in range(len(datasets)):
        for j in range(len(methods)):
            r, v = ratio.iat[i, j], rm.iat[i, j]
            if np.isfinite(r):
                ax.text(j, i, f"{r:.2f}\n{v:.2f} pp", ha="center", va="center", fontsize=9,
                        color="white" if abs(np.log2(r)) > 0.6 * lim else "black")
            else:
                ax.text(j, i, "failed", ha="center", va="center", fontsize=9, color="#aa0000")
    ax.set_xticks(range(len(methods)))
    ax.set_xticklabels([_method_label(m) for m in methods], rotation=30, ha="right")
    ax.set_yticks(range(len(datasets)))
    ax.set_yticklabels([f"{d}{' *' if d in METABENCH else ''}" for d in datasets])
    ax.grid(False)
    cb = fig.colorbar(im, ax=ax, fraction=0.04, pad=0.02)
    ticks = np.arange(-np.floor(lim), np.floor(lim) + 1)
    cb.set_ticks(ticks)
    cb.set_ticklabels([f"{2.0 ** t:g}" for t in ticks])
    cb.set_label("RMSE / random's RMSE (log scale)", fontsize=9)
    ax.set_title(f"Test RMSE relative to random at k = {k}\n(geometric mean of per-seed ratios; < 1 = better; "
                 "cells: ratio and RMSE in pp)")
    if own:
        fig.tight_layout()
        _starred_caveat(fig, datasets)
    return fig
