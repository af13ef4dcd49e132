"""Mean profiles: how well a chosen item set keeps each model's average score.

The survey's "mean profile" picture (K-Means section, 2.6) compares, feature by feature, the mean of
the full item set with the mean of a representative subset and of a random subset. Here a *feature*
is a model: item ``j`` is the vector of every model's score on it, and the profile of an item set
``I`` is, for every model ``m``,

    profile_I[m] = 100 * sum_{j in I} w_j S[m, j] / sum_{j in I} w_j          (pp),

the (weighted) mean of model ``m``'s scores over the items of ``I``. A subset that represents the
pool well has a profile close to the pool's (``I`` = all items) for every model; the distance of two
profiles is the root-mean-square difference over models, in percentage points.

Note that the pool profile is the mean over the *item pool*, not the model's full-benchmark score
(``Responses.target``): on the metabench pools these differ (see :data:`essence.data.POOL_CAVEAT`).
The profile asks whether a subset looks like the pool it was drawn from; reconstructing the full score
is the reconstructor's job.

The first three functions are pure: arrays in, arrays out; ``responses`` is ``(n_models, n_items)`` in
[0, 1] with NaN for missing cells. :func:`choose_kmeans_herding` and :func:`profile_lines` are notebook
09's two steps: choose the items with the real selectors, then every line of its figure and its distance.
"""

from __future__ import annotations

import numpy as np

from ..data.checks import whole_number
from ..data.errors import InputError

__all__ = ["mean_profile", "profile_distance", "random_profiles", "choose_kmeans_herding", "profile_lines"]


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
    """Each model's (weighted) mean score over the items ``idx``, in percentage points.

    Parameters
    ----------
    responses : array, shape (n_models, n_items)
        Scores in [0, 1]; NaN = missing (left out of that model's mean, with its weight).
    idx : array of int, shape (k,), boolean mask (n_items,), or None
        The item set; None = every item (the pool's profile).
    weights : array, shape (k,), optional
        Non-negative item weights (e.g. K-Means cluster sizes); None = equal weights.

    Returns
    -------
    ndarray, shape (n_models,)
        ``100 * sum_j w_j S[m, j] / sum_j w_j`` over the observed items of ``idx``; NaN for a model with
        no observed score on them.
    """
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
    """Distance between two profiles ``(n_models,)`` (pp), over the models where both are defined.

    ``kind``: ``"rmse"`` (root-mean-square difference, pp), ``"mae"`` (mean absolute difference, pp) or
    ``"bias"`` (mean of ``profile - reference``, pp; positive = the subset looks easier than the reference).
    """
    p = np.asarray(profile, dtype=np.float64)
    r = np.asarray(reference, dtype=np.float64)
    if p.ndim != 1 or p.shape != r.shape:
        raise InputError(f"profile, reference: expected two 1-D arrays of the same shape (n_models,), "
                         f"got {p.shape} and {r.shape}")
    ok = ~(np.isnan(p) | np.isnan(r))
    if not ok.any():
        raise InputError("profile, reference: no model has a value in both; nothing to compare")
    d = p[ok] - r[ok]
    if kind == "rmse":
        return float(np.sqrt(np.mean(d * d)))
    if kind == "mae":
        return float(np.mean(np.abs(d)))
    if kind == "bias":
        return float(np.mean(d))
    raise InputError(f"kind: {kind!r} is unknown; choose 'rmse', 'mae' or 'bias'")


def random_profiles(responses, k: int, n_draws: int = 50, seed: int = 0) -> np.ndarray:
    """Profiles of ``n_draws`` uniformly random ``k``-item subsets: ``(n_draws, n_models)``, pp.

    Draw ``d`` uses the items ``numpy.random.default_rng(seed + d).choice(n_items, k, replace=False)``,
    exactly the subset :class:`essence.methods.random.RandomSelector` with ``seed = seed + d`` chooses
    (sorted), so every line of a random band is a real random-method subset.
    """
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
    """K-Means and Kernel Herding items of ``data`` (a :class:`~essence.data.Responses`), fitted as ``compress``
    fits them: on the training and validation models of ``split_models(data, seed)``.

    Returns ``{"split", "held_out", "kmeans", "kmeans_w", "herding"}``: the split, the held-out model rows
    (validation + test, sorted; no selection saw them), K-Means' ``(k,)`` items and cluster sizes, and
    Herding's ``(k,)`` items (it reads item texts only). Herding needs the items' texts and SmolLM2.
    """
    from ..data import split_models
    from ..methods.herding import HerdingSelector
    from ..methods.kmeans import KMeansSelector

    split = split_models(data, seed=seed)
    train, val = data.subset(models=split.train), data.subset(models=split.val)
    km = KMeansSelector(k=k, seed=seed, progress=False, min_models_continuous=0).fit(train, val)
    he = HerdingSelector(k=k, seed=seed, progress=False).fit(train, val)
    held_out = np.sort(np.concatenate([split.val, split.test]))
    return {"split": split, "held_out": held_out, "kmeans": km.items_, "kmeans_w": km.weights_,
            "herding": he.items_}


def profile_lines(responses, chosen: dict, k: int, n_draws: int = 50, seed: int = 0) -> tuple[dict, dict]:
    """Every line of a mean-profile figure and its distance from the full line, for the models in ``responses``.

    ``responses``: ``(n_models, n_items)``; ``chosen``: :func:`choose_kmeans_herding`'s output (``kmeans``,
    ``kmeans_w``, ``herding``); ``k``, ``n_draws``, ``seed``: the random subsets (:func:`random_profiles`).
    Returns ``(panel, extra)``. ``panel`` is what :func:`essence.lessons.plots.profile.plot_mean_profile` draws:
    ``profiles`` (``full``, ``kmeans`` weighted by cluster size, ``herding``; each ``(n_models,)`` pp),
    ``random_draws`` ``(n_draws, n_models)`` and ``distance`` (RMSE from the full line, pp; random as a
    "one draw: mean ± sd" label). ``extra``: unweighted K-Means' distance, the two biases (pp) and the
    random draws' distances ``(n_draws,)``.
    """
    full = mean_profile(responses)
    draws = random_profiles(responses, k, n_draws=n_draws, seed=seed)
    prof = {"full": full,
            "kmeans": mean_profile(responses, chosen["kmeans"], chosen["kmeans_w"]),
            "herding": mean_profile(responses, chosen["herding"])}
    d_rnd = np.array([profile_distance(p, full) for p in draws])
    dist = {"kmeans": profile_distance(prof["kmeans"], full),
            "herding": profile_distance(prof["herding"], full),
            "random": f"one draw: RMSE {d_rnd.mean():.2f} ± {d_rnd.std(ddof=1):.2f} pp"}
    extra = {"kmeans_unweighted": profile_distance(mean_profile(responses, chosen["kmeans"]), full),
             "kmeans_bias": profile_distance(prof["kmeans"], full, "bias"),
             "herding_bias": profile_distance(prof["herding"], full, "bias"),
             "random_draws": d_rnd}
    return {"profiles": prof, "random_draws": draws, "distance": dist}, extra
