"""Figure functions the notebooks call: one consistent style, stable file names, PNG + SVG.

Every function returns the matplotlib Figure it drew; :func:`savefig` writes it as
``<figures_dir>/<name>.png`` (150 dpi) and ``<name>.svg`` with deterministic metadata, so
regenerating an unchanged figure rewrites identical SVG files.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .data import METABENCH

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


def savefig(fig, name: str, figures_dir="figures") -> list[Path]:
    """Write ``fig`` as ``<figures_dir>/<name>.png`` and ``.svg``; returns the paths."""
    d = Path(figures_dir)
    d.mkdir(parents=True, exist_ok=True)
    paths = [d / f"{name}.png", d / f"{name}.svg"]
    # dense scatter clouds are embedded as images in the SVG (keeps files small; text stays vector)
    for ax in fig.axes:
        for coll in ax.collections:
            if len(coll.get_offsets()) > 500:
                coll.set_rasterized(True)
    fig.savefig(paths[0], metadata={"Software": None})
    fig.savefig(paths[1], metadata={"Date": None, "Creator": None})
    return paths


def caveat_note(fig, text: str | None = None) -> None:
    """Print the metabench pre-selected-pool caveat at the bottom of a figure."""
    from .data import POOL_CAVEAT

    fig.text(0.01, -0.02, f"Note: {text or POOL_CAVEAT}.", fontsize=8, style="italic", ha="left", va="top",
             color="#444444", wrap=True)


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
        raise ValueError(f"metric: {metric!r} is unknown; choose 'rmse' or 'kendall'")
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
    if any(d in METABENCH for d in datasets):
        caveat_note(fig, f"* {_pool_caveat()}")
    return fig


def _pool_caveat() -> str:
    from .data import POOL_CAVEAT

    return POOL_CAVEAT


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
        raise ValueError("summary: needs runs of the 'random' method at this k to compare against")
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
    if any(d in METABENCH for d in datasets):
        caveat_note(fig, f"* {_pool_caveat()}")
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
    if any(r.dataset in METABENCH for r in rows):
        fig.text(0.01, -0.13, f"Note: * {_pool_caveat()}.", fontsize=8, style="italic", ha="left", va="top",
                 color="#444444")
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
    if any(ds in METABENCH for ds in panels):
        caveat_note(fig, f"* {_pool_caveat()}")
    return fig


__all__ += [
    "plot_metric_vs_k",
    "plot_relative_to_random",
    "plot_mean_profile",
    "plot_new_model_estimates",
    "plot_reconstructor_range",
]
