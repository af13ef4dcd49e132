"""Helpers of notebook 16 (the default, stage by stage): ``auto``'s cross-validation table and two figures."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

__all__ = ["cv_table", "plot_search_length", "plot_frontier_mix"]


def cv_table(cv_rmse: dict) -> pd.DataFrame:
    """``info_["auto"]["cv_rmse"]`` (``{"T=300 line": pp, ...}``) as a table: one row per search length ``T``, one
    column per regression, in the record's order (NaN where the pair was no candidate: AIPW reads random items only)."""
    rows = [(int(name.split()[0].removeprefix("T=")), name.split()[1], float(v)) for name, v in cv_rmse.items()]
    table = pd.DataFrame(rows, columns=["search length T", "regression", "cv rmse"])
    wide = table.pivot(index="search length T", columns="regression", values="cv rmse")
    return wide[list(dict.fromkeys(r for _, r, _ in rows))]


def plot_search_length(lengths, curves: dict, ax=None):
    """One line per ``curves`` entry (label -> RMSE in pp at each of ``lengths``, the search's proposals), on a
    symmetric-log axis so that length 0 (random items) shows. Returns the Figure."""
    fig, ax = (plt.subplots(figsize=(6.4, 4.0)) if ax is None else (ax.figure, ax))
    for (label, values), marker in zip(curves.items(), "osD^"):
        ax.plot(lengths, values, marker=marker, label=label)
    ax.set_xscale("symlog", linthresh=100)
    ax.set_xticks(list(lengths), [str(t) for t in lengths])
    ax.set(xlabel="search length T (proposals; 0 = random items)", ylabel="RMSE (pp)")
    ax.legend(fontsize=9)
    return fig


def plot_frontier_mix(truth, G, D, estimate, lower, upper, ref_max: float, title: str = "", ax=None):
    """The frontier mix on held-out models: the estimate ``(1 - w) G + w D`` with its interval against the true full
    score ``truth`` (pp, each ``(n,)``), ``G`` and ``D`` marked, the diagonal, and the references' range (up to
    ``ref_max``) shaded. Returns the Figure."""
    fig, ax = (plt.subplots(figsize=(6.4, 5.2)) if ax is None else (ax.figure, ax))
    truth, estimate = np.asarray(truth, dtype=float), np.asarray(estimate, dtype=float)
    x_lo = min(truth.min(), ref_max) - 2  # the band's edge shows: the strongest reference
    y_lo = min(np.min(lower), np.min(G), np.min(D)) - 1
    hi = max(truth.max(), np.max(upper), np.max(G), np.max(D)) + 1
    ax.axvspan(x_lo, ref_max, color="0.92", label="references' range")
    ax.plot([min(x_lo, y_lo), hi], [min(x_lo, y_lo), hi], color="0.3", lw=1, ls="--", label="estimate = truth")
    ax.errorbar(truth, estimate, yerr=[estimate - np.asarray(lower), np.asarray(upper) - estimate], fmt="o", ms=4,
                lw=0.6, alpha=0.6, color="C3", label="estimate (1 - w) G + w D, 90 % interval")
    ax.scatter(truth, G, marker="x", s=18, color="C0", label="G (the regression)")
    ax.scatter(truth, D, marker="+", s=30, color="C2", label="D (the factor model's estimate)")
    ax.set(xlim=(x_lo, hi), ylim=(y_lo, hi), xlabel="true full score (pp)", ylabel="estimated full score (pp)",
           title=title)
    ax.legend(loc="lower right", fontsize=9)
    return fig
