"""Mean profiles (notebook 09): per model, ``100 * sum_{j in I} w_j S[m, j] / sum_{j in I} w_j`` (pp) over an item
set ``I`` of ``responses`` ``(n_models, n_items)`` in [0, 1] (NaN missing); two profiles' distance is over models
(pp). The pool's profile is the mean over the item pool, not ``Responses.target``."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..data import split_models
from ..data.checks import whole_number
from ..data.errors import InputError
from ..methods.herding import HerdingSelector
from ..methods.kmeans import KMeansSelector

__all__ = ["mean_profile", "profile_distance", "random_profiles", "choose_kmeans_herding", "profile_lines",
           "distance_row", "weight_shares", "seed_distances", "seed_summary"]


def _responses(responses) -> np.ndarray:
    try:
        R = np.asarray(responses, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError("responses: expected a numeric array (n_models, n_items)") from None
    if R.ndim != 2 or R.shape[0] == 0 or R.shape[1] == 0:
        raise InputError(f"responses: expected a non-empty 2-D array (n_models, n_items), got shape {R.shape}")
    obs = R[~np.isnan(R)]
    if obs.size and (obs.min() < 0 or obs.max() > 1):
        raise InputError("responses: scores must lie in [0, 1] (NaN for missing); divide percentages by 100")
    return R


def _index(idx, n_items: int) -> np.ndarray:
    if idx is None:
        return np.arange(n_items)
    ix = np.asarray(idx)
    if ix.dtype == bool:
        if ix.shape != (n_items,):
            raise InputError(f"idx: boolean mask has shape {ix.shape}, expected ({n_items},)")
        ix = np.flatnonzero(ix)
    if ix.ndim != 1 or ix.size == 0 or ix.dtype.kind not in "iu":
        raise InputError("idx: expected a non-empty 1-D array of item positions (or a boolean mask, or None = all)")
    if ix.min() < 0 or ix.max() >= n_items:
        raise InputError(f"idx: positions must lie in 0..{n_items - 1}")
    return ix.astype(np.intp)


def mean_profile(responses, idx=None, weights=None) -> np.ndarray:
    """Each model's (weighted) mean over the items ``idx``, pp: ``(n_models,)``. ``idx``: positions ``(k,)``, a
    boolean mask ``(n_items,)`` or None (all); ``weights``: ``(k,)`` non-negative, None = equal. Missing cells are
    left out with their weight; a model with none observed gets NaN."""
    R = _responses(responses)
    ix = _index(idx, R.shape[1])
    X = R[:, ix]
    if weights is None:
        w = np.ones(ix.size)
    else:
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != (ix.size,):
            raise InputError(f"weights: expected shape ({ix.size},), one per chosen item, got {w.shape}")
        if not np.isfinite(w).all() or (w < 0).any() or w.sum() <= 0:
            raise InputError("weights: must be finite, non-negative and not all zero")
    obs = ~np.isnan(X)
    num = np.where(obs, X, 0.0) @ w
    den = obs.astype(np.float64) @ w
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, 100.0 * num / np.where(den > 0, den, 1.0), np.nan)


def profile_distance(profile, reference, kind: str = "rmse") -> float:
    """Distance (pp) between two ``(n_models,)`` profiles over the models where both are defined: ``kind`` ``"rmse"``,
    ``"mae"`` or ``"bias"`` (mean of ``profile - reference``; positive = the subset looks easier)."""
    p = np.asarray(profile, dtype=np.float64)
    r = np.asarray(reference, dtype=np.float64)
    if p.ndim != 1 or p.shape != r.shape:
        raise InputError(f"profile, reference: expected two 1-D arrays of the same shape (n_models,), "
                         f"got {p.shape} and {r.shape}")
    ok = ~(np.isnan(p) | np.isnan(r))
    if not ok.any():
        raise InputError("profile, reference: no model has a value in both; nothing to compare")
    d = p[ok] - r[ok]
    stats = {"rmse": lambda: np.sqrt(np.mean(d * d)), "mae": lambda: np.mean(np.abs(d)), "bias": lambda: np.mean(d)}
    if kind not in stats:
        raise InputError(f"kind: {kind!r} is unknown; choose 'rmse', 'mae' or 'bias'")
    return float(stats[kind]())


def random_profiles(responses, k: int, n_draws: int = 50, seed: int = 0) -> np.ndarray:
    """``(n_draws, n_models)`` profiles (pp) of random ``k``-item subsets: draw ``d`` takes
    ``sort(default_rng(seed + d).choice(n_items, k, replace=False))``, the subset
    :class:`essence.methods.random.RandomSelector` with ``seed = seed + d`` chooses."""
    R = _responses(responses)
    n_items = R.shape[1]
    k = whole_number("k", k, 1, n_items)
    n_draws = whole_number("n_draws", n_draws, 1)
    out = np.empty((int(n_draws), R.shape[0]))
    for d in range(int(n_draws)):
        ix = np.sort(np.random.default_rng(seed + d).choice(n_items, size=int(k), replace=False))
        out[d] = mean_profile(R, ix)
    return out


def choose_kmeans_herding(data, k: int, seed: int = 0) -> dict:
    """K-Means and Kernel Herding items of ``data`` as ``compress`` chooses them, on the training and validation models
    of ``split_models(data, seed)``: ``{"split", "held_out" (validation + test rows, sorted), "kmeans" (k,),
    "kmeans_w" (cluster sizes), "herding" (k,)}``. Herding needs the items' texts and SmolLM2."""
    split = split_models(data, seed=seed)
    train, val = data.subset(models=split.train), data.subset(models=split.val)
    km, he = (KMeansSelector(k=k, seed=seed, progress=False, min_models_continuous=0),
              HerdingSelector(k=k, seed=seed, progress=False))
    km.info_, he.info_ = {}, {}  # select() alone: the items, no reconstructor fitted
    items, herding = km.select(train, val), he.select(train, val)
    return {"split": split, "held_out": np.sort(np.concatenate([split.val, split.test])), "kmeans": np.asarray(items),
            "kmeans_w": km.weights_, "herding": np.asarray(herding)}


def profile_lines(responses, chosen: dict, k: int, n_draws: int = 50, seed: int = 0) -> tuple[dict, dict]:
    """``(panel, extra)`` for the models of ``responses`` and ``chosen`` (:func:`choose_kmeans_herding`'s output):
    ``panel`` (:func:`essence.lessons.plots.profile.plot_mean_profile`'s input) holds ``profiles`` (``full``,
    ``kmeans`` weighted, ``herding``; pp), ``random_draws`` (:func:`random_profiles`) and ``distance`` (RMSE from
    full, pp); ``extra`` the unweighted K-Means distance, both biases and the draws' distances ``(n_draws,)``."""
    full = mean_profile(responses)
    draws = random_profiles(responses, k, n_draws=n_draws, seed=seed)
    prof = {"full": full,
            "kmeans": mean_profile(responses, chosen["kmeans"], chosen["kmeans_w"]),
            "herding": mean_profile(responses, chosen["herding"])}
    d_rnd = np.array([profile_distance(p, full) for p in draws])
    dist = {"kmeans": profile_distance(prof["kmeans"], full),
            "herding": profile_distance(prof["herding"], full),
            "random": f"{d_rnd.mean():.2f} ± {d_rnd.std(ddof=1):.2f}"}
    extra = {"kmeans_unweighted": profile_distance(mean_profile(responses, chosen["kmeans"]), full),
             "kmeans_bias": profile_distance(prof["kmeans"], full, "bias"),
             "herding_bias": profile_distance(prof["herding"], full, "bias"),
             "random_draws": d_rnd}
    return {"profiles": prof, "random_draws": draws, "distance": dist}, extra


def distance_row(panel: dict, extra: dict) -> dict:
    """Notebook 09's distance-table row from :func:`profile_lines`' ``(panel, extra)``: distances and biases (pp),
    and the share of random draws farther from the full line than K-Means and than Herding."""
    d, rnd = panel["distance"], np.asarray(extra["random_draws"], dtype=float)
    return {"models": len(panel["profiles"]["full"]),
            "K-Means (weighted)": d["kmeans"], "K-Means (unweighted)": extra["kmeans_unweighted"],
            "Kernel Herding": d["herding"], "random: mean": float(rnd.mean()),
            "random: sd": float(rnd.std(ddof=1)) if rnd.size > 1 else 0.0,
            "K-Means bias": extra["kmeans_bias"], "Herding bias": extra["herding_bias"],
            "draws farther than K-Means": float((rnd > d["kmeans"]).mean()),
            "draws farther than Herding": float((rnd > d["herding"]).mean())}


def weight_shares(weights) -> dict:
    """Percent of the weighted mean held by the largest, the five largest and the smallest of the cluster-size
    ``weights`` ``(k,)``, and an item's share under equal weights."""
    w = np.sort(np.asarray(weights, dtype=float))[::-1]
    if w.ndim != 1 or w.size == 0 or (w < 0).any() or w.sum() <= 0:
        raise InputError("weights: expected a non-empty 1-D array of non-negative cluster sizes")
    share = 100.0 * w / w.sum()
    return {"largest cluster (%)": float(share[0]), "largest 5 clusters (%)": float(share[:5].sum()),
            "smallest cluster (%)": float(share[-1]), "equal weights, each item (%)": 100.0 / w.size}


def seed_distances(data, k: int, seeds, herding_items, n_draws: int = 50) -> list[dict]:
    """Held-out profile distances (pp) per split seed ``s``: K-Means refitted (seed ``s``) on the training models, the
    fixed ``herding_items`` and the mean of ``n_draws`` random subsets (seeds from ``1000 s``), on validation + test
    models; dicts ``seed``, ``K-Means``, ``Kernel Herding``, ``random``."""
    rows = []
    for s in seeds:
        sp = split_models(data, seed=s)
        km = KMeansSelector(k=k, seed=s, progress=False, min_models_continuous=0)
        km.info_ = {}
        items = km.select(data.subset(models=sp.train), data.subset(models=sp.val))
        R = data.responses[np.sort(np.concatenate([sp.val, sp.test]))]
        full = mean_profile(R)
        rnd = [profile_distance(p, full) for p in random_profiles(R, k, n_draws=n_draws, seed=1000 * s)]
        rows.append({"seed": int(s), "K-Means": profile_distance(mean_profile(R, items, km.weights_), full),
                     "Kernel Herding": profile_distance(mean_profile(R, herding_items), full),
                     "random": float(np.mean(rnd))})
    return rows


def seed_summary(rows: list[dict]):
    """Per ``dataset`` of :func:`seed_distances` rows: mean and sd over seeds of each distance (pp) and the seeds where
    K-Means and Herding beat the random mean."""
    df = pd.DataFrame(rows)
    out = []
    for name, g in df.groupby("dataset", sort=False):
        row = {"dataset": name, "seeds": len(g)}
        for col in ("K-Means", "Kernel Herding", "random"):
            row[f"{col}: mean"] = float(g[col].mean())
            row[f"{col}: sd"] = float(g[col].std(ddof=1)) if len(g) > 1 else 0.0
        row["K-Means closer than random (seeds)"] = int((g["K-Means"] < g["random"]).sum())
        row["Herding closer than random (seeds)"] = int((g["Kernel Herding"] < g["random"]).sum())
        out.append(row)
    return pd.DataFrame(out).set_index("dataset")
