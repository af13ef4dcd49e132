"""Figure functions the notebooks call: one consistent style, stable file names, PNG + SVG.

Every function returns the matplotlib Figure it drew; :func:`savefig` writes it as
``<figures_dir>/<name>.png`` (150 dpi) and ``<name>.svg`` with deterministic metadata, so
regenerating an unchanged figure rewrites identical SVG files.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .data import METABENCH, POOL_CAVEAT
from .errors import InputError

__all__ = [
    "use_style",
    "savefig",
    "caveat_note",
    "METHOD_COLORS",
    "plot_score_distributions",
    "plot_item_difficulty",
    "plot_pool_vs_full",
]

#: one colour per method, used by every figure
METHOD_COLORS = {
    "full": "#222222",
    "random": "#8c8c8c",
    "essence": "#d62728",
    "kmeans": "#1f77b4",
    "herding": "#2ca02c",
    "ppl": "#9467bd",
    "irt": "#ff7f0e",
    "tinybench": "#17becf",
    "disco": "#e377c2",
}


def use_style() -> None:
    """Seaborn whitegrid, readable font sizes, deterministic SVG output."""
    import matplotlib as mpl
    import seaborn as sns

    mpl.use("Agg", force=False)
    sns.set_theme(style="whitegrid", context="notebook")
    mpl.rcParams.update({
        "figure.dpi": 100,
        "savefig.dpi": 150,
        "savefig.bbox": "tight",
        "svg.hashsalt": "essence",
        "axes.titlesize": 12,
        "axes.titleweight": "bold",
        "figure.titlesize": 13,
        "legend.frameon": True,
    })


def savefig(fig, name: str, figures_dir="figures", dpi: float | None = None) -> list[Path]:
    """Write ``fig`` as ``<figures_dir>/<name>.png`` and ``.svg``; returns the paths.

    ``dpi`` overrides the style's 150 dpi for both files (the resolution of the PNG and of the images
    embedded in the SVG): large pixel-level heatmaps use a lower one to stay small on disk.
    """
    d = Path(figures_dir)
    d.mkdir(parents=True, exist_ok=True)
    paths = [d / f"{name}.png", d / f"{name}.svg"]
    # dense scatter clouds are embedded as images in the SVG (keeps files small; text stays vector)
    for ax in fig.axes:
        for coll in ax.collections:
            if len(coll.get_offsets()) > 500:
                coll.set_rasterized(True)
    kw = {} if dpi is None else {"dpi": dpi}
    fig.savefig(paths[0], metadata={"Software": None}, **kw)
    fig.savefig(paths[1], metadata={"Date": None, "Creator": None}, **kw)
    return paths


def caveat_note(fig, text: str | None = None, y: float = -0.02, wrap: bool = True) -> None:
    """Print the metabench pre-selected-pool caveat (or ``text``) at the bottom of a figure.

    ``y``: height in figure coordinates (lower it for figures with a legend below the axes).
    """
    fig.text(0.01, y, f"Note: {text or POOL_CAVEAT}.", fontsize=8, style="italic", ha="left", va="top",
             color="#444444", wrap=wrap)


def _starred_caveat(fig, names, y: float = -0.02, wrap: bool = True) -> None:
    """The caveat, starred like the titles, when one of the dataset ``names`` is a metabench pool."""
    if any(name in METABENCH for name in names):
        caveat_note(fig, f"* {POOL_CAVEAT}", y=y, wrap=wrap)


def plot_score_distributions(datasets: dict):
    """Histogram of each dataset's full-benchmark scores (pp). ``datasets``: name -> Responses."""
    import matplotlib.pyplot as plt

    n = len(datasets)
    cols = min(4, n)
    rows = int(np.ceil(n / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(3.4 * cols, 2.8 * rows), squeeze=False)
    for ax, (name, r) in zip(axes.ravel(), datasets.items()):
        ax.hist(r.target, bins=40, color="#4c72b0")
        ax.set_title(f"{name} ({r.n_models} models)")
        ax.set_xlabel("full score (pp)")
        ax.set_ylabel("models")
    for ax in axes.ravel()[n:]:
        ax.axis("off")
    fig.suptitle("How the models score: distribution of full-benchmark scores")
    fig.tight_layout()
    if any(name in METABENCH for name in datasets):
        caveat_note(fig)
    return fig


def plot_item_difficulty(datasets: dict):
    """Distribution of item mean scores (share of models that get the item right, 0-1) per dataset."""
    import matplotlib.pyplot as plt

    n = len(datasets)
    cols = min(4, n)
    rows = int(np.ceil(n / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(3.4 * cols, 2.8 * rows), squeeze=False)
    for ax, (name, r) in zip(axes.ravel(), datasets.items()):
        p = np.nanmean(r.responses, axis=0)
        ax.hist(p, bins=np.linspace(0, 1, 26), color="#55a868")
        const = int((np.nanstd(r.responses, axis=0) == 0).sum())
        ax.set_title(f"{name} ({r.n_items} items)")
        ax.set_xlabel("item mean score over models")
        ax.set_ylabel("items")
        if const:
            ax.text(0.97, 0.95, f"{const} constant", transform=ax.transAxes, ha="right", va="top", fontsize=8)
    for ax in axes.ravel()[n:]:
        ax.axis("off")
    fig.suptitle("Item difficulty: mean score of each item over all models")
    fig.tight_layout()
    if any(name in METABENCH for name in datasets):
        caveat_note(fig)
    return fig


def plot_pool_vs_full(datasets: dict, max_points: int = 2000, seed: int = 0):
    """Pool mean (pp) against the whole-benchmark score (pp) for datasets whose target is ``full_score``."""
    import matplotlib.pyplot as plt

    items = [(k, r) for k, r in datasets.items() if r.target_source == "full_score"]
    fig, axes = plt.subplots(1, len(items), figsize=(3.3 * len(items), 3.3), squeeze=False)
    rng = np.random.default_rng(seed)
    for ax, (name, r) in zip(axes.ravel(), items):
        pool = 100 * np.nanmean(r.responses, axis=1)
        sel = rng.permutation(r.n_models)[:max_points]
        ax.scatter(pool[sel], r.target[sel], s=3, alpha=0.4, color="#4c72b0")
        ax.plot([0, 100], [0, 100], color="#999999", lw=1, ls="--", label="y = x")
        rho = np.corrcoef(pool, r.target)[0, 1]
        ax.set_title(f"{name}: r = {rho:.3f}")
        ax.set_xlabel("mean over the pool (pp)")
        ax.set_ylabel("full-benchmark score (pp)")
        ax.set_xlim(0, 100)
        ax.set_ylim(0, 100)
        ax.legend(loc="upper left", fontsize=8)
    fig.suptitle("The pool mean is not the full score: a reconstructor must learn the map")
    fig.tight_layout()
    caveat_note(fig)
    return fig


# ----------------------------------------------------------------------------------------------
# 05 · method comparison
# ----------------------------------------------------------------------------------------------
def _method_label(m: str) -> str:
    try:
        from .methods.cards import CARDS

        return CARDS[m]["label"]
    except Exception:  # noqa: BLE001 - a label is cosmetic
        return m


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


def plot_relative_to_random(summary, k: int = 50, methods=None, datasets=None):
    """Heatmap at one k: each method's mean test RMSE divided by random's on the same dataset.

    ``summary``: :func:`essence.sweep.summarise` output with a ``random`` method. Cells read "0.62" (the
    ratio; < 1 = better than random) over the RMSE in pp; runs that all failed read "failed".
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
    ratio = rm.div(rm["random"], axis=0)
    fig, ax = plt.subplots(figsize=(1.05 * len(methods) + 2.2, 0.55 * len(datasets) + 1.6))
    vals = np.log2(ratio.to_numpy(dtype=float))
    lim = max(1.0, np.nanmax(np.abs(vals)) if np.isfinite(vals).any() else 1.0)
    im = ax.imshow(vals, cmap="RdBu_r", norm=TwoSlopeNorm(0.0, -lim, lim), aspect="auto")
    for i in range(len(datasets)):
        for j in range(len(methods)):
            r, v = ratio.iat[i, j], rm.iat[i, j]
            if np.isfinite(r):
                ax.text(j, i, f"{r:.2f}\n{v:.2f} pp", ha="center", va="center", fontsize=7.5,
                        color="white" if abs(np.log2(r)) > 0.6 * lim else "black")
            else:
                ax.text(j, i, "failed", ha="center", va="center", fontsize=7.5, color="#aa0000")
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
    ax.set_title(f"Test RMSE relative to random at k = {k}\n(mean over seeds; < 1 = better than random; "
                 "cells: ratio and RMSE in pp)")
    fig.tight_layout()
    _starred_caveat(fig, datasets)
    return fig


# ----------------------------------------------------------------------------------------------
# 06 · mean profiles
# ----------------------------------------------------------------------------------------------
def plot_mean_profile(panels: dict, title: str, smooth: int = 1, legend_loc: str = "upper left"):
    """The survey's mean-profile plot: per model (x, sorted by the full line), the mean score over each item set.

    ``panels``: panel title -> dict with ``"profiles"`` (line name -> ``(n_models,)`` profile in pp; must
    include ``"full"``; ``full``, ``kmeans``, ``herding`` get their method colours), optional
    ``"random_draws"`` (``(n_draws, n_models)`` profiles of random subsets, pp: drawn as their mean line
    and a 5-95% band) and ``"distance"`` (line name -> RMSE to the full line in pp, or a ready string;
    shown in the legend; ``"random"`` for the random line).

    Top row: the profiles. Bottom row: each line minus the full line (pp). With ``smooth`` > 1 (for
    thousands of models) the top row shows a centred running mean over ``smooth`` neighbouring models and
    the bottom row the running RMS of (line - full) over the same window, i.e. the local profile
    distance; the random band there is the 5-95% range of single draws' local distance and the random
    line their median (a typical single draw). Distances in the legend are always computed on the
    unsmoothed profiles. ``legend_loc``: where the top panels' legends go (matplotlib ``loc``).
    """
    import matplotlib.pyplot as plt

    labels = {"full": "Full item set", "kmeans": "K-Means representatives (cluster-weighted)",
              "herding": "Kernel Herding", "random": "Random"}

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

    # smoothed curves need not be drawn at every model (keeps the SVG small); the ends are always drawn
    stride = max(1, smooth // 8)

    def thin(y):
        y = np.asarray(y)
        if stride == 1:
            return y
        keep = np.unique(np.r_[np.arange(0, len(y), stride), len(y) - 1])
        return y[keep]

    n = len(panels)
    fig, axes = plt.subplots(2, n, figsize=(5.8 * n, 6.4), squeeze=False, sharex="col",
                             gridspec_kw={"height_ratios": [2.1, 1]})
    for j, (ptitle, p) in enumerate(panels.items()):
        prof = {name: np.asarray(v, dtype=float) for name, v in p["profiles"].items()}
        order = np.argsort(prof["full"], kind="stable")
        x = np.arange(1, len(order) + 1)
        top, bot = axes[0, j], axes[1, j]
        full = prof["full"][order]
        dist = p.get("distance", {})

        def lab(name, extra=""):
            d = dist.get(name)
            text = labels.get(name, name) + extra
            if d is None:
                return text
            return text + (f" ({d})" if isinstance(d, str) else f" (RMSE {d:.2f} pp)")

        if "random_draws" in p:
            draws = np.asarray(p["random_draws"], dtype=float)[:, order]
            c = METHOD_COLORS["random"]
            lo, hi = np.percentile(draws, [5, 95], axis=0)
            top.fill_between(thin(x), thin(run(lo)), thin(run(hi)), color=c, alpha=0.2, lw=0, label="Random: 5-95% of single draws")
            top.plot(thin(x), thin(run(draws.mean(axis=0))), color=c, ls="--", lw=1.3, label=lab("random", f": mean of {len(draws)} draws"))
            dev = local(draws - full, axis=1)
            blo, bhi = np.percentile(dev, [5, 95], axis=0)
            bot.fill_between(thin(x), thin(blo), thin(bhi), color=c, alpha=0.2, lw=0)
            bot.plot(thin(x), thin(np.median(dev, axis=0) if smooth > 1 else draws.mean(axis=0) - full), color=c, ls="--", lw=1.3)
        for name, y in prof.items():
            y = y[order]
            style = dict(color=METHOD_COLORS.get(name), lw=2.2 if name == "full" else 1.4,
                         zorder=5 if name == "full" else 3)
            top.plot(thin(x), thin(run(y)), label=lab(name), **style)
            if name != "full":
                bot.plot(thin(x), thin(local(y - full)), **style)
        bot.axhline(0, color=METHOD_COLORS["full"], lw=1.2)
        top.set_title(ptitle, fontsize=10.5)
        top.set_ylabel("mean score over the item set (pp)")
        bot.set_ylabel("line minus full (pp)" if smooth <= 1 else "local RMS of\nline minus full (pp)")
        bot.set_xlabel("model (sorted by its mean over the full item set)")
        top.legend(loc=legend_loc, fontsize=8)
    sub = (f"\n(top: running mean over {smooth} neighbouring models; bottom: running RMS of the difference over "
           f"the same window)" if smooth > 1 else "")
    fig.suptitle(title + sub)
    fig.tight_layout()
    return fig


# ----------------------------------------------------------------------------------------------
# 07 · a new model
# ----------------------------------------------------------------------------------------------
def plot_new_model_estimates(estimates, train_targets: dict, chance: dict | None = None, model: str = "new model",
                             reference: dict | None = None):
    """One panel per benchmark: training models' full scores (violin, range) and the new model's estimate.

    ``estimates``: DataFrame with columns ``dataset``, ``estimate``, ``lower``, ``upper`` (pp; one row per
    benchmark). ``train_targets``: dataset -> ``(n_train,)`` full scores (pp) of the models the
    reconstructor was fitted on (their min-max range is shaded). ``chance``: dataset -> chance-level
    score (pp), drawn as a dotted line. ``reference``: dataset -> a second estimate to show (e.g. from
    every logged item), drawn as an open diamond.
    """
    import matplotlib.pyplot as plt

    rows = list(estimates.itertuples(index=False))
    fig, axes = plt.subplots(1, len(rows), figsize=(2.3 * len(rows) + 0.8, 4.4), squeeze=False, sharey=True)
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
        ax.set_title(f"{r.dataset}{' *' if r.dataset in METABENCH else ''}")
        ax.text(0.5, -0.06, f"{below:.0f}% of training\nmodels below", transform=ax.transAxes, ha="center", va="top",
                fontsize=8)
        ax.set_xticks([])
        ax.set_xlim(-0.7, 0.7)
        ax.set_ylim(-2, 102)
    axes[0, 0].set_ylabel("full-benchmark score (pp)")
    h, lab = [], []
    for ax in axes.ravel():
        for hh, ll in zip(*ax.get_legend_handles_labels()):
            if ll not in lab:
                h.append(hh)
                lab.append(ll)
    from matplotlib.patches import Patch

    h.append(Patch(color="#4c72b0", alpha=0.35))
    lab.append("training models' full scores (shade: their range)")
    fig.legend(h, lab, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=2, fontsize=8.5)
    fig.suptitle(f"{model}: estimated full scores with 90% intervals, against the models the reconstructors learnt from")
    fig.tight_layout()
    _starred_caveat(fig, (r.dataset for r in rows), y=-0.13, wrap=False)
    return fig


def plot_reconstructor_range(panels: dict, model: str = "new model"):
    """Where a new model sits on each reconstructor's input: subset score (x) against full score (y).

    ``panels``: dataset -> dict with ``train_x`` (training models' mean over the chosen items, pp),
    ``train_y`` (their full scores, pp), ``train_fit`` (the reconstructor's estimate for them, pp),
    ``x`` (the new model's mean over the chosen items, pp), ``estimate``, ``lower``, ``upper`` (pp).
    Panel titles give the share of training models with a lower (and with an equal) subset score.
    """
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    n = len(panels)
    cols = min(n + 1, 3)
    rows = int(np.ceil((n + 1) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(3.9 * cols, 3.5 * rows), squeeze=False)
    for ax, (ds, p) in zip(axes.ravel(), panels.items()):
        tx, ty = np.asarray(p["train_x"]), np.asarray(p["train_y"])
        ax.scatter(tx, ty, s=4, alpha=0.25, color="#4c72b0")
        order = np.argsort(tx)
        fit = np.asarray(p["train_fit"], dtype=float)
        _, inv = np.unique(np.round(tx, 9), return_inverse=True)
        spread = max((np.ptp(fit[inv == g]) for g in np.unique(inv)), default=0.0)
        if spread < 1e-6:  # the reconstructor is a function of the subset mean: draw it as a curve
            ax.plot(tx[order], fit[order], color="#333333", lw=1.2)
        else:  # it uses more than the mean (e.g. ridge on the items): one estimate per model
            ax.scatter(tx, fit, s=3, alpha=0.35, color="#333333", marker="x", lw=0.6)
        ax.errorbar([p["x"]], [p["estimate"]], yerr=[[p["estimate"] - p["lower"]], [p["upper"] - p["estimate"]]],
                    fmt="o", color=METHOD_COLORS["essence"], ms=7, capsize=4, lw=2, zorder=5)
        lower = float((tx < p["x"] - 1e-9).mean() * 100)
        equal = float((np.abs(tx - p["x"]) <= 1e-9).mean() * 100)
        ax.set_title(f"{ds}{' *' if ds in METABENCH else ''}: {lower:.0f}% lower, {equal:.0f}% equal", fontsize=10.5)
        ax.set_xlabel("mean over the chosen items (pp)")
        ax.set_ylabel("full-benchmark score (pp)")
        ax.set_xlim(-3, 103)
        ax.set_ylim(-3, 103)
    for ax in axes.ravel()[n:]:
        ax.axis("off")
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
    fig.tight_layout()
    _starred_caveat(fig, panels)
    return fig


__all__ += [
    "plot_metric_vs_k",
    "plot_relative_to_random",
    "plot_mean_profile",
    "plot_new_model_estimates",
    "plot_reconstructor_range",
]


# ----------------------------------------------------------------------------------------------
# 01-04 · the EssenceBench lessons (redundancy, coarse filter, genetic search, EBM refinement)
# ----------------------------------------------------------------------------------------------
def _star(name: str) -> str:
    return f"{name} *" if name in METABENCH else name


def plot_redundancy_heatmaps(matrices: dict, orders: dict, title: str, vmin: float = -0.2, vmax: float = 1.0):
    """A grid of redundancy heatmaps: one column per matrix, one row per item order.

    ``matrices``: column label -> ``(n_items, n_items)`` redundancy (the diagonal is blanked);
    ``orders``: row label -> ``(n_items,)`` item order used for every matrix of that row. One shared
    colour scale ``[vmin, vmax]`` (unitless: cosine or Pearson).
    """
    import matplotlib.pyplot as plt

    nr, nc = len(orders), len(matrices)
    fig, axes = plt.subplots(nr, nc, figsize=(4.3 * nc + 0.8, 4.1 * nr), squeeze=False)
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
            ax.set_xlabel(f"item (ordered by {olab})")
            ax.set_ylabel(f"item (ordered by {olab})")
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0, 0.92, 1))
    cax = fig.add_axes((0.93, 0.25, 0.015, 0.5))
    cb = fig.colorbar(im, cax=cax)
    cb.set_label("redundancy (cosine / Pearson)")
    return fig


def plot_redundancy_distributions(values: dict, thresholds: dict | None = None, null: dict | None = None,
                                  bins: int = 80):
    """Histograms of the off-diagonal redundancies, one panel per kind, one line per dataset.

    ``values``: kind (e.g. ``"R_text"``) -> {dataset -> ``(n_pairs,)`` values}; ``thresholds``: kind ->
    the filter's threshold (a vertical line); ``null``: kind -> {dataset -> ``(n_pairs,)`` values under
    no redundancy at all} drawn dashed in the dataset's colour. Share of pairs per bin on a log scale, so
    that the few pairs in the tail stay visible. The legend gives each dataset's pairs above the threshold.
    """
    import matplotlib.pyplot as plt

    kinds = list(values)
    fig, axes = plt.subplots(1, len(kinds), figsize=(5.8 * len(kinds), 4.2), squeeze=False)
    palette = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3"]
    edges = np.linspace(-1, 1, bins + 1)
    for ax, kind in zip(axes.ravel(), kinds):
        tau = (thresholds or {}).get(kind)
        for c, (ds, v) in zip(palette, values[kind].items()):
            v = np.asarray(v, dtype=np.float64)
            w = np.full(v.size, 1.0 / max(v.size, 1))
            above = f"; {int((v > tau).sum())} > {tau:g}" if tau is not None and tau < 1 else ""
            ax.hist(v, bins=edges, weights=w, histtype="step", lw=1.6, color=c,
                    label=f"{_star(ds)}: {v.size:,} pairs, median {np.median(v):.2f}{above}")
            nv = (null or {}).get(kind, {}).get(ds)
            if nv is not None:
                nv = np.asarray(nv, dtype=np.float64)
                ax.hist(nv, bins=edges, weights=np.full(nv.size, 1.0 / nv.size), histtype="step", lw=1.0, ls="--",
                        color=c, label=f"{_star(ds)}: shuffled models (no redundancy)")
        if tau is not None and tau < 1:
            ax.axvline(tau, color="#222222", lw=1, ls=":")
            ax.text(tau, 0.66, f"τ = {tau:g} ", transform=ax.get_xaxis_transform(), va="bottom", ha="right", fontsize=9)
        ax.set_yscale("log")
        ax.set_xlim(-0.6, 1.02)
        ax.set_xlabel(f"{kind} of an item pair")
        ax.set_ylabel("share of pairs per bin (log scale)")
        ax.set_title(kind)
        lo = ax.get_ylim()[0]
        ax.set_ylim(lo, 10 ** (0.45 * -np.log10(lo)))  # room above the data (shares <= 1) for the legend
        ax.set_yticks([10.0 ** e for e in range(int(np.ceil(np.log10(lo))), 1)])
        ax.legend(fontsize=7.5, loc="upper left")
    fig.suptitle("How redundant are item pairs? Distribution of the off-diagonal redundancies")
    fig.tight_layout()
    _starred_caveat(fig, (ds for v in values.values() for ds in v))
    return fig


def plot_text_vs_rank(panels: dict, tau_text: float | None = None, tau_rank: float | None = None,
                      max_points: int = 40000, seed: int = 0):
    """Every item pair as a point: text redundancy (x) against rank redundancy (y), one panel per dataset.

    ``panels``: dataset -> ``(r_text, r_rank)`` aligned ``(n_pairs,)`` arrays. Dashed lines at the
    thresholds; the title gives the Pearson correlation between the two redundancies over pairs.
    """
    import matplotlib.pyplot as plt

    n = len(panels)
    cols = 2 if n == 4 else min(n, 3)
    rows = int(np.ceil(n / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 4.0 * rows), squeeze=False)
    for ax in axes.ravel()[n:]:
        ax.axis("off")
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
        ax.set_xlabel("R_text (MiniLM cosine)")
        ax.set_ylabel("R_rank (Pearson over training models)")
        ax.set_xlim(-0.3, 1.02)
        ax.set_ylim(-0.6, 1.02)
        ax.legend(fontsize=8, loc="lower right")
    fig.suptitle("Do the two redundancies agree? Each point is one pair of items")
    fig.tight_layout()
    _starred_caveat(fig, panels)
    return fig


def plot_split_half(panels: dict, max_points: int = 30000, seed: int = 0):
    """Rank redundancy of each item pair on one half of the models (x) against the other half (y).

    ``panels``: dataset -> ``(a, b, n_models)`` with ``a``, ``b`` aligned ``(n_pairs,)`` arrays (see
    :func:`essence.lessons.rank_redundancy_halves`) and the number of models split in two. The title
    gives their correlation: 1 = each pair's correlation is a property of the pair; 0 = pure noise.
    """
    import matplotlib.pyplot as plt

    n = len(panels)
    fig, axes = plt.subplots(1, n, figsize=(4.1 * n, 4.0), squeeze=False)
    rng = np.random.default_rng(seed)
    for ax, (ds, (a, b, m)) in zip(axes.ravel(), panels.items()):
        a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
        sel = rng.permutation(a.size)[:max_points]
        ax.scatter(a[sel], b[sel], s=2, alpha=0.15, color="#55a868", lw=0)
        ax.plot([-1, 1], [-1, 1], color="#999999", lw=1, ls="--", label="y = x")
        ax.set_title(f"{_star(ds)}: two halves of {m} models\nagreement r = {np.corrcoef(a, b)[0, 1]:.2f}",
                     fontsize=10.5)
        ax.set_xlabel("R_rank on half A")
        ax.set_ylabel("R_rank on half B")
        ax.set_xlim(-1, 1.02)
        ax.set_ylim(-1, 1.02)
        ax.legend(fontsize=8, loc="lower right")
    fig.suptitle("Is a pair's rank redundancy a property of the items? Measure it twice")
    fig.tight_layout()
    _starred_caveat(fig, panels)
    return fig


__all__ += ["plot_redundancy_heatmaps", "plot_redundancy_distributions", "plot_text_vs_rank", "plot_split_half"]


def plot_kept_counts(grids: dict):
    """Pool size left by the coarse filter over a grid of thresholds, one heatmap per dataset.

    ``grids``: dataset -> dict with ``kept`` ``(n_text, n_rank)`` int (see
    :func:`essence.lessons.kept_counts`), ``tau_text`` ``(n_text,)``, ``tau_rank`` ``(n_rank,)`` and
    ``n_items``. Cells show the count; colour is the share of the items kept. A threshold of 1 is "off".
    """
    import matplotlib.pyplot as plt

    n = len(grids)
    fig, axes = plt.subplots(1, n, figsize=(0.55 * max(len(g["tau_rank"]) for g in grids.values()) * n + 1.5 * n, 3.9),
                             squeeze=False)
    im = None
    for ax, (ds, g) in zip(axes.ravel(), grids.items()):
        K = np.asarray(g["kept"], dtype=float)
        share = K / g["n_items"]
        im = ax.imshow(share, cmap="viridis", vmin=0, vmax=1, aspect="auto", origin="lower")
        for i in range(K.shape[0]):
            for j in range(K.shape[1]):
                ax.text(j, i, f"{int(K[i, j])}", ha="center", va="center", fontsize=7.5,
                        color="white" if share[i, j] < 0.55 else "black")
        lab = lambda v: "off" if v >= 1 else f"{v:g}"  # noqa: E731
        ax.set_xticks(range(len(g["tau_rank"])))
        ax.set_xticklabels([lab(v) for v in g["tau_rank"]], fontsize=8.5)
        ax.set_yticks(range(len(g["tau_text"])))
        ax.set_yticklabels([lab(v) for v in g["tau_text"]], fontsize=8.5)
        ax.set_xlabel("τ_rank (Pearson threshold)")
        ax.set_ylabel("τ_text (cosine threshold)")
        ax.set_title(f"{_star(ds)}: {g['n_items']} items", fontsize=10.5)
        ax.grid(False)
    cb = fig.colorbar(im, ax=axes.ravel().tolist(), fraction=0.025, pad=0.02)
    cb.set_label("share of items kept")
    fig.suptitle("Items kept by the coarse filter as the two thresholds vary (cells: items kept)")
    _starred_caveat(fig, grids)
    return fig


def plot_filter_error(panels: dict, k: int):
    """Held-out RMSE of random k-subsets drawn from filtered pools, against the pool size.

    ``panels``: dataset -> dict with ``full`` ``(n_draws,)`` RMSE (pp) from the unfiltered pool, ``n_items``,
    and ``curves``: label -> list of ``(tau, pool_size, rmses (n_draws,))``. Points: mean; bars: the
    10th to 90th percentile over draws; the grey band is the unfiltered pool's 10-90% range.
    """
    import matplotlib.pyplot as plt

    n = len(panels)
    fig, axes = plt.subplots(1, n, figsize=(4.4 * n, 4.0), squeeze=False)
    from matplotlib.ticker import LogLocator, NullFormatter, ScalarFormatter

    colors = ["#dd8452", "#4c72b0", "#55a868", "#c44e52"]
    for ax, (ds, p) in zip(axes.ravel(), panels.items()):
        full = np.asarray(p["full"], dtype=float)
        lo, hi = np.percentile(full, [10, 90])
        ax.axhspan(lo, hi, color="#999999", alpha=0.2, lw=0)
        ax.axhline(full.mean(), color="#555555", lw=1.2, ls="--", label=f"no filter ({p['n_items']} items)")
        for c, (label, pts) in zip(colors, p["curves"].items()):
            pts = sorted(pts, key=lambda t: t[1])
            x = np.array([q[1] for q in pts], dtype=float)
            m = np.array([np.mean(q[2]) for q in pts])
            p10 = np.array([np.percentile(q[2], 10) for q in pts])
            p90 = np.array([np.percentile(q[2], 90) for q in pts])
            ax.errorbar(x, m, yerr=[m - p10, p90 - m], marker="o", ms=4, lw=1.4, capsize=2, color=c, label=label)
            for (tau, xx, _), mm in zip(pts, m):
                ax.annotate(f"{tau:g}", (xx, mm), textcoords="offset points", xytext=(4, 4), fontsize=7, color=c)
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("items left in the pool (log scale)")
        ax.set_ylabel(f"held-out RMSE, random k = {k} (pp)")
        ax.set_title(_star(ds))
        ax.legend(fontsize=8)
    fig.suptitle(f"Does filtering help a random subset? {k} random items from the filtered pool, GAM on their mean\n"
                 "(mean and 10-90% range over draws; labels: the threshold)")
    fig.tight_layout()
    _starred_caveat(fig, panels)
    return fig


def plot_kept_vs_dropped(panels: dict, tau_rank: float):
    """Item discrimination (correlation with the full score over training models) of the items the rank
    filter keeps and drops. ``panels``: dataset -> ``(discrimination (n_items,), kept (n_kept,) positions)``."""
    import matplotlib.pyplot as plt

    n = len(panels)
    fig, axes = plt.subplots(1, n, figsize=(4.2 * n, 3.5), squeeze=False)
    edges = np.linspace(-0.2, 1.0, 37)
    for ax, (ds, (disc, kept)) in zip(axes.ravel(), panels.items()):
        disc = np.asarray(disc, dtype=float)
        mask = np.zeros(disc.size, dtype=bool)
        mask[np.asarray(kept, dtype=np.intp)] = True
        ax.hist(disc[mask], bins=edges, color="#4c72b0", alpha=0.7,
                label=f"kept ({mask.sum()}): mean {disc[mask].mean():.2f}")
        if (~mask).any():
            ax.hist(disc[~mask], bins=edges, color="#c44e52", alpha=0.7,
                    label=f"dropped ({(~mask).sum()}): mean {disc[~mask].mean():.2f}")
        ax.set_xlabel("item discrimination (corr. with full score)")
        ax.set_ylabel("items")
        ax.set_title(_star(ds))
        ax.legend(fontsize=8, loc="upper left")
    fig.suptitle(f"Which items does the rank filter drop? τ_rank = {tau_rank:g}, text check off")
    fig.tight_layout()
    _starred_caveat(fig, panels)
    return fig


__all__ += ["plot_kept_counts", "plot_filter_error", "plot_kept_vs_dropped"]


def plot_ruler(train_x, train_y, ruler, candidates: dict, dataset: str = "", max_points: int = 2000, seed: int = 0):
    """The GA's fixed ruler ``g`` and how it judges candidates.

    Left: training models' mean over the whole pool (pp, x) against their full score (pp, y), and ``g``
    fitted on them. One more panel per candidate: ``label -> (x_val, y_val, rmse)``, the validation
    models' mean over the candidate's items (pp) against their full score, with the *same* ``g``; the
    title gives the candidate's fitness (validation RMSE of ``g``, pp). ``ruler``: a callable on pp
    (:class:`~essence.reconstruct.Table1D`).
    """
    import matplotlib.pyplot as plt

    n = 1 + len(candidates)
    fig, axes = plt.subplots(1, n, figsize=(4.3 * n, 4.1), squeeze=False, sharey=True)
    grid = np.linspace(0, 100, 401)
    rng = np.random.default_rng(seed)
    tx, ty = np.asarray(train_x, dtype=float), np.asarray(train_y, dtype=float)
    sel = rng.permutation(tx.size)[:max_points]
    ax = axes[0, 0]
    ax.scatter(tx[sel], ty[sel], s=4, alpha=0.3, color="#4c72b0", lw=0, label="training models")
    ax.plot(grid, ruler(grid), color="#222222", lw=1.6, label="ruler g (GAM)")
    ax.set_title("g: fitted once, training models", fontsize=10.5)
    ax.set_xlabel("mean over the whole pool (pp)")
    ax.set_ylabel("full-benchmark score (pp)")
    ax.legend(fontsize=8, loc="upper left")
    for ax, (label, (x, y, err)) in zip(axes.ravel()[1:], candidates.items()):
        ax.scatter(x, y, s=6, alpha=0.45, color="#dd8452", lw=0, label="validation models")
        ax.plot(grid, ruler(grid), color="#222222", lw=1.6, label="the same g")
        ax.set_title(f"{label}\nfitness: validation RMSE {err:.2f} pp", fontsize=10.5)
        ax.set_xlabel("mean over the subset's items (pp)")
        ax.legend(fontsize=8, loc="upper left")
    for ax in axes.ravel():
        ax.set_xlim(-2, 102)
        ax.set_ylim(-2, 102)
    fig.suptitle(f"The paper's fixed ruler on {_star(dataset)}: every candidate subset is judged by the same g")
    fig.tight_layout()
    _starred_caveat(fig, [dataset])
    return fig


def plot_ga_history(history, mean_history, refs: dict | None = None, title: str = "", dataset: str = ""):
    """Fitness over generations: the best individual's and the population mean's fitness RMSE (pp).

    ``history``, ``mean_history``: ``(generations + 1,)`` fitness values (-RMSE, pp), as in
    :class:`~essence.search.genetic.GAResult`. ``refs``: label -> a horizontal reference (pp).
    """
    import matplotlib.pyplot as plt

    h, m = -np.asarray(history, dtype=float), -np.asarray(mean_history, dtype=float)
    fig, ax = plt.subplots(figsize=(6.4, 3.9))
    gen = np.arange(h.size)
    ax.plot(gen, m, color="#8c8c8c", lw=1.4, label="population mean")
    ax.plot(gen, h, color=METHOD_COLORS["essence"], lw=1.8, label="best individual")
    styles = [":", "--", "-."]
    for st, (label, v) in zip(styles * 3, (refs or {}).items()):
        ax.axhline(v, color="#222222", lw=1, ls=st, label=f"{label}: {v:.2f} pp")
    from matplotlib.ticker import ScalarFormatter

    ax.set_xscale("symlog", linthresh=10)
    ax.set_xlim(0, max(gen[-1], 1))
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.set_xlabel("generation (linear to 10, then log scale)")
    ax.set_ylabel("fitness: validation RMSE of g (pp)")
    ax.legend(fontsize=8)
    ax.set_title(title or "Fitness over generations")
    fig.tight_layout()
    _starred_caveat(fig, [dataset])
    return fig


def plot_subset_vs_random(random: dict, marks: dict, k: int, dataset: str = ""):
    """Test RMSE (pp) and Kendall tau of chosen subsets against random k-subsets.

    ``random``: ``{"rmse": (n_draws,), "kendall": (n_draws,)}`` (see
    :func:`essence.lessons.random_subset_scores`); ``marks``: label -> ``{"rmse", "kendall"}`` of a
    chosen subset (vertical lines). Each line's label gives the share of random draws it beats.
    """
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    colors = [METHOD_COLORS["essence"], "#4c72b0", "#55a868", "#8172b3"]
    for ax, key, xl, better in ((axes[0], "rmse", "test RMSE (pp)", np.less),
                                (axes[1], "kendall", "test Kendall tau", np.greater)):
        v = np.asarray(random[key], dtype=float)
        ax.hist(v, bins=20, color=METHOD_COLORS["random"], alpha=0.6,
                label=f"random {k}-subsets ({v.size}), mean {v.mean():.3f}")
        for c, (label, mk) in zip(colors, marks.items()):
            beat = float(np.mean(better(mk[key], v)))
            ax.axvline(mk[key], color=c, lw=2, label=f"{label}: {mk[key]:.3f} (beats {100 * beat:.0f}% of random)")
        ax.set_xlabel(xl)
        ax.set_ylabel("random draws")
        ax.set_ylim(0, ax.get_ylim()[1] * 1.3)  # room for the legend
        ax.legend(fontsize=7.5, loc="upper right" if key == "rmse" else "upper left")
    fig.suptitle(f"{_star(dataset)}: the GA's subset against random subsets of the same size, k = {k}, on test models")
    fig.tight_layout()
    _starred_caveat(fig, [dataset])
    return fig


def plot_fitness_vs_heldout(panels: dict, refs: dict | None = None):
    """What the GA optimises against what a user gets, over generations, for two fitness functions.

    ``panels``: dataset -> {fitness label -> list over seeds of DataFrames with columns ``generation``,
    ``fitness_rmse`` and ``test_rmse`` (pp)}. Solid lines: held-out (test) RMSE of the best subset,
    reconstructor chosen on validation; dashed: the fitness RMSE the GA minimises. Mean over seeds with
    a band from the lowest to the highest seed. ``refs``: dataset -> {label -> horizontal line (pp)}.
    """
    import matplotlib.pyplot as plt

    n = len(panels)
    fig, axes = plt.subplots(1, n, figsize=(5.2 * n, 4.3), squeeze=False)
    colors = [METHOD_COLORS["essence"], "#4c72b0", "#55a868"]
    for ax, (ds, fits) in zip(axes.ravel(), panels.items()):
        for c, (label, tables) in zip(colors, fits.items()):
            gen = np.asarray(tables[0]["generation"], dtype=float)
            for col, ls, what in (("fitness_rmse", "--", "fitness (what the GA minimises)"),
                                  ("test_rmse", "-", "held-out test RMSE")):
                Y = np.vstack([np.asarray(t[col], dtype=float) for t in tables])
                ax.plot(gen, Y.mean(axis=0), color=c, ls=ls, lw=1.8, marker="o", ms=3.5, label=f"{label}: {what}")
                if Y.shape[0] > 1:
                    ax.fill_between(gen, Y.min(axis=0), Y.max(axis=0), color=c, alpha=0.12, lw=0)
        for st, (label, v) in zip([":", "-."], ((refs or {}).get(ds) or {}).items()):
            ax.axhline(v, color="#555555", lw=1.1, ls=st, label=label)
            ax.text(0.99, v, f"{v:.2f} pp", transform=ax.get_yaxis_transform(), ha="right", va="bottom",
                    fontsize=8, color="#555555")
        ax.set_xscale("symlog", linthresh=30)
        from matplotlib.ticker import ScalarFormatter

        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.set_xlim(0, float(max(np.max(np.asarray(t["generation"], dtype=float)) for ts in fits.values() for t in ts)))
        ax.set_xlabel("generation (linear to 30, then log scale)")
        ax.set_ylabel("RMSE (pp)")
        ax.set_title(_star(ds))
    from matplotlib.lines import Line2D

    first = next(iter(panels.values()))
    handles = [Line2D([], [], color=c, lw=2.2) for c, _ in zip(colors, first)]
    labels = list(first)
    handles += [Line2D([], [], color="#222222", ls="--", lw=1.8),
                Line2D([], [], color="#222222", ls="-", lw=1.8)]
    labels += ["dashed: the fitness the GA minimises", "solid: held-out test RMSE of its best subset"]
    for st, label in zip([":", "-."], ((refs or {}).get(next(iter(panels))) or {})):
        handles.append(Line2D([], [], color="#555555", ls=st, lw=1.1))
        labels.append(label)
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.02), ncol=2, fontsize=8.5)
    fig.suptitle("Fitness against held-out error during the search (mean over seeds; band: min to max)")
    fig.tight_layout()
    _starred_caveat(fig, panels, y=-0.2, wrap=False)
    return fig


__all__ += ["plot_ruler", "plot_ga_history", "plot_subset_vs_random", "plot_fitness_vs_heldout"]


def plot_attribution(attribution, counts, discrimination, groups: dict, best, k: int, dataset: str = ""):
    """EBM attributions of the pool items and the High / Low / Random groups built from them.

    ``attribution`` ``(M,)`` A_l (pp), ``counts`` ``(M,)`` elites holding each item, ``discrimination``
    ``(M,)`` each item's correlation with the full score, ``groups``: name -> positions (see
    :func:`essence.search.attribution.attribution_groups`), ``best`` ``(k,)`` positions of the best subset.
    Left: attribution against discrimination for the items some elite holds. Right: the items ranked by
    attribution (ties, e.g. the items no elite holds, in position order) and which group each rank falls in.
    """
    import matplotlib.pyplot as plt
    from matplotlib.colors import BoundaryNorm

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
    cb = fig.colorbar(sc, ax=ax, ticks=range(1, cmax + 1), fraction=0.05, pad=0.02)
    cb.set_label("elites holding the item")
    ax.set_xlabel("item discrimination (corr. with full score)")
    ax.set_ylabel("attribution A_l (pp)")
    ax.set_title(f"{held.sum()} of {M} items are in some elite", fontsize=10.5)
    ax.legend(fontsize=8, loc="upper left")
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
        ax.text(M * 1.01, y0, f"{name} ({r.size})", va="center", fontsize=8.5, color=colors.get(name, "#55a868"))
    ax.axvline(held.sum() + 0.5, color="#999999", ls=":", lw=1)
    ax.text(held.sum() + 3, 0.75 * top, "no elite holds\nthe items right\nof this line (A = 0)", fontsize=8, color="#555555")
    ax.set_xlim(0, M * 1.16)
    ax.set_ylim(-0.12 * top * (len(groups) + 0.8), top * 1.08)
    ax.set_yticks([t for t in ax.get_yticks() if 0 <= t <= top * 1.08])
    ax.set_xlabel("item rank by attribution")
    ax.set_ylabel("attribution A_l (pp)")
    ax.set_title("the three groups: which ranks each holds", fontsize=10.5)
    fig.suptitle(f"{_star(dataset)}, k = {k}: EBM attributions from the GA's elite subsets")
    fig.tight_layout()
    _starred_caveat(fig, [dataset])
    return fig


def plot_refinement_trace(traces, dataset: str = ""):
    """Per-stage RMSE of EssenceBench runs: the GA stage, then each refinement round.

    ``traces``: :func:`essence.lessons.ablation_traces` output (columns ``k``, ``seed``, ``stage``,
    ``step``, ``fitness_rmse``, ``val_rmse``, pp). One panel per k; one thin line per seed for the
    validation RMSE of the best subset so far (solid) and its fitness RMSE (dashed); thick: their means.
    """
    import matplotlib.pyplot as plt

    ks = sorted(traces["k"].unique())
    fig, axes = plt.subplots(1, len(ks), figsize=(4.6 * len(ks), 3.9), squeeze=False)
    for ax, k in zip(axes.ravel(), ks):
        t = traces[traces["k"] == k]
        stages = t.sort_values("step").drop_duplicates("step")["stage"].tolist()
        for col, color, ls, lab in (("val_rmse", METHOD_COLORS["essence"], "-", "validation RMSE"),
                                    ("fitness_rmse", "#4c72b0", "--", "fitness RMSE")):
            P = t.pivot(index="seed", columns="step", values=col)
            for _, row in P.iterrows():
                ax.plot(P.columns, row.values, color=color, ls=ls, lw=0.8, alpha=0.45)
            ax.plot(P.columns, P.mean(axis=0).values, color=color, ls=ls, lw=2.4, marker="o", label=f"{lab} (mean)")
        ax.set_xticks(range(len(stages)))
        ax.set_xticklabels(stages)
        ax.set_xlabel("stage (the best subset so far)")
        ax.set_ylabel("RMSE (pp)")
        ax.set_title(f"k = {k} ({t['seed'].nunique()} seeds: thin lines)")
        ax.legend(fontsize=8)
    fig.suptitle(f"{_star(dataset)}: error of the best subset after the GA and after each refinement round")
    fig.tight_layout()
    _starred_caveat(fig, [dataset])
    return fig


def plot_ablation(table, variants, metric: str = "rmse", dataset: str = ""):
    """Test RMSE (pp) of each ablation variant, one panel per k; each seed is a grey line across the
    variants (the same split for every variant), the coloured marker is the mean ± sd over seeds.

    ``table``: :func:`essence.lessons.ablation` output (columns ``variant``, ``k``, ``seed``, ``rmse``, ...);
    ``variants``: the variant labels in display order.
    """
    import matplotlib.pyplot as plt

    ks = sorted(table["k"].unique())
    fig, axes = plt.subplots(1, len(ks), figsize=(5.4 * len(ks), 4.6), squeeze=False)
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
            ax.annotate(f"{m[i]:.2f}", (i, m[i]), textcoords="offset points", xytext=(8, -3), fontsize=8.5, color=c)
        ax.set_xticks(x)
        ax.set_xticklabels([v.replace(", ", ",\n").replace(" + ", "\n+ ") for v in variants], fontsize=8.5)
        ax.set_xlim(-0.5, len(variants) - 0.3)
        ax.set_ylabel("test RMSE (pp)" if metric == "rmse" else f"test {metric}")
        ax.set_title(f"k = {k} ({len(P)} seeds)")
    fig.suptitle(f"{_star(dataset)}: ablation of the filter and the refinement (grey: one seed's split across variants)")
    fig.tight_layout()
    _starred_caveat(fig, [dataset])
    return fig


__all__ += ["plot_attribution", "plot_refinement_trace", "plot_ablation"]
