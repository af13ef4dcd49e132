"""Figure of notebook 08: every method's test RMSE over the best baseline's, per dataset and split."""

from __future__ import annotations

import numpy as np
from matplotlib.colors import TwoSlopeNorm

from ...data.errors import InputError
from .style import _finish, _method_label, _panels, _star

__all__ = ["plot_ratio_to_baseline"]


def plot_ratio_to_baseline(runs, methods=None, datasets=None, splits=("random", "top"), k: int = 50):
    """Per split, datasets x methods: the geometric mean over seeds of ``ratio`` (test RMSE over the best baseline's) at
    ``k``, or "refused"; ``runs``: ``dataset, split, method, k, seed, ratio, error`` ("" when the run finished)."""
    missing = {"dataset", "split", "method", "k", "ratio", "error"} - set(runs.columns)
    if missing:
        raise InputError(f"runs: missing column(s) {sorted(missing)}")
    r = runs[runs["k"] == k]
    methods = list(dict.fromkeys(r["method"])) if methods is None else list(methods)
    datasets = list(dict.fromkeys(r["dataset"])) if datasets is None else list(datasets)
    size = (0.95 * len(methods) + 2.6, (0.42 * len(datasets) + 1.1) * len(splits))
    fig, axes = _panels(len(splits), 1, figsize=size)
    with np.errstate(divide="ignore"):
        logs = np.log2(r.loc[r["error"] == "", "ratio"].astype(float))
    lim = max(1.0, float(np.nanmax(np.abs(logs[np.isfinite(logs)])))) if np.isfinite(logs).any() else 1.0
    norm = TwoSlopeNorm(0.0, -lim, lim)
    for ax, split in zip(axes[:, 0], splits):
        s = r[r["split"] == split]
        vals = np.full((len(datasets), len(methods)), np.nan)
        for i, d in enumerate(datasets):
            for j, m in enumerate(methods):
                g = s[(s["dataset"] == d) & (s["method"] == m)]
                ok = g.loc[g["error"] == "", "ratio"].astype(float)
                if len(ok):
                    vals[i, j] = float(np.mean(np.log2(ok)))
                if np.isfinite(vals[i, j]):
                    ax.text(j, i, f"{2.0 ** vals[i, j]:.2f}", ha="center", va="center", fontsize=9,
                            color="white" if abs(vals[i, j]) > 0.6 * lim else "black")
                elif len(g) > 0 and ok.empty:
                    ax.text(j, i, "refused", ha="center", va="center", fontsize=9, color="#666666")
        im = ax.imshow(vals, cmap="RdBu_r", norm=norm, aspect="auto")
        ax.set_xticks(range(len(methods)), [_method_label(m) for m in methods], rotation=30, ha="right")
        ax.set_yticks(range(len(datasets)), [_star(d) for d in datasets])
        ax.grid(False)
        ax.set_title(f"{split} split" + (": the strongest 20 % are the test models" if split == "top" else
                                          ": 20 % of the models held out at random"))
        cb = fig.colorbar(im, ax=ax, fraction=0.035, pad=0.02)
        ticks = np.arange(-np.floor(lim), np.floor(lim) + 1)
        cb.set_ticks(ticks)
        cb.set_ticklabels([f"{2.0 ** t:g}" for t in ticks])
        cb.set_label("RMSE / best baseline's", fontsize=9)
    fig.suptitle(f"Test RMSE over the best of random + line, random + ridge and AIPW at k = {k} (< 1: better)")
    return _finish(fig, datasets)
