"""Analysis helpers behind the EssenceBench lesson notebooks (01 redundancy, 02 coarse filter, 03 genetic
search, 04 EBM refinement), and notebook 10's chance level.

Small pure functions over arrays, each saying its shapes and units; the stages themselves live in
:mod:`essence.search` and :class:`essence.methods.essence.EssenceSelector`, and nothing here changes
what they choose. Conventions as everywhere in the package: responses are ``(n_models, n_items)`` in
[0, 1] with NaN for missing, scores and errors in percentage points (pp), every draw takes a ``seed``.
Functions that report an error take the models to measure it on as separate arguments; the notebooks
pass test models there only to *measure*, never to choose.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..data.errors import InputError
from ..reconstructors.tables import GAM_LAM, GAM_N_SPLINES
from ..search.genetic import GAConfig

__all__ = [
    "off_diagonal",
    "cluster_order",
    "pair_table",
    "item_discrimination",
    "rank_redundancy_halves",
    "kept_counts",
    "random_subset_rmse",
    "random_subset_scores",
    "subset_figures",
    "Trajectory",
    "ga_trajectory",
    "fitness_setup",
    "subset_evaluator",
    "compare_fitnesses",
    "chance_level",
    "ablation",
    "ablation_traces",
]


# ----------------------------------------------------------------------------------------------
# 01 · redundancy matrices
# ----------------------------------------------------------------------------------------------
def _square(M, name: str) -> np.ndarray:
    M = np.asarray(M, dtype=np.float64)
    if M.ndim != 2 or M.shape[0] != M.shape[1]:
        raise InputError(f"{name}: expected a square (n_items, n_items) matrix, got shape {M.shape}")
    return M


def off_diagonal(M, drop_nan: bool = True) -> np.ndarray:
    """The ``n (n - 1) / 2`` values above the diagonal of a symmetric ``(n, n)`` matrix, row by row.

    With ``drop_nan`` the undefined pairs (e.g. rank redundancy with a constant item) are left out.
    """
    M = _square(M, "M")
    v = M[np.triu_indices(M.shape[0], 1)]
    return v[~np.isnan(v)] if drop_nan else v


def cluster_order(S) -> np.ndarray:
    """``(n,)`` item order that puts similar items next to each other (for heatmaps).

    ``S`` is an ``(n, n)`` similarity in [-1, 1] (a redundancy matrix); average-linkage hierarchical
    clustering on the distance ``1 - S`` (undefined pairs count as similarity 0), leaves in dendrogram
    order. Deterministic.
    """
    from scipy.cluster.hierarchy import leaves_list, linkage
    from scipy.spatial.distance import squareform

    S = _square(S, "S")
    if S.shape[0] < 3:
        return np.arange(S.shape[0])
    D = 1.0 - np.nan_to_num(S, nan=0.0)
    D = np.clip((D + D.T) / 2.0, 0.0, 2.0)
    np.fill_diagonal(D, 0.0)
    return leaves_list(linkage(squareform(D, checks=False), method="average")).astype(np.intp)


_ORDERS = {
    "text": lambda t, r: t,
    "rank": lambda t, r: r,
    "text_not_rank": lambda t, r: t - r,
    "rank_not_text": lambda t, r: r - t,
}


def _short(text, width: int) -> str:
    s = " ".join(str(text).replace("\n", " ⏎ ").split())
    return s if len(s) <= width else s[: width - 1] + "…"


def pair_table(R_text, R_rank, by: str = "text", n: int = 10, texts=None, items=None,
               max_per_item: int | None = None, text_range=(None, None), rank_range=(None, None),
               width: int = 110):
    """The ``n`` item pairs that stand out under ``by``, with both redundancies and (shortened) texts.

    Parameters
    ----------
    R_text, R_rank : (n_items, n_items)
        Text redundancy (cosine of MiniLM embeddings) and rank redundancy (Pearson over training models);
        pairs where either is NaN are skipped.
    by : {"text", "rank", "text_not_rank", "rank_not_text"}
        Largest ``R_text``; largest ``R_rank``; largest ``R_text - R_rank`` (worded alike, answered
        differently); largest ``R_rank - R_text`` (unrelated wording, the same models succeed).
    n : pairs to return.
    texts, items : (n_items,) optional item texts and ids for the table.
    max_per_item : at most this many pairs per item (None = no limit), so that one item with many
        partners does not fill the table.
    text_range, rank_range : ``(low, high)`` bounds (inclusive; None = open) on the pairs considered, e.g.
        ``by="text", rank_range=(None, 0.3)``: the pairs worded most alike among those whose results
        correlate at most 0.3.
    width : characters kept of each text.

    Returns
    -------
    pandas.DataFrame with columns ``a``, ``b`` (positions), ``R_text``, ``R_rank`` and, when given,
    ``item_a``, ``item_b``, ``text_a``, ``text_b``; best first.
    """
    import pandas as pd

    T, R = _square(R_text, "R_text"), _square(R_rank, "R_rank")
    if T.shape != R.shape:
        raise InputError(f"R_text {T.shape} and R_rank {R.shape}: must describe the same items")
    if by not in _ORDERS:
        raise InputError(f"by: {by!r} is unknown; choose one of {', '.join(_ORDERS)}")
    iu, ju = np.triu_indices(T.shape[0], 1)
    t, r = T[iu, ju], R[iu, ju]
    score = _ORDERS[by](t, r)
    keep = np.isfinite(score)
    for vals, (lo, hi) in ((t, text_range), (r, rank_range)):
        if lo is not None:
            keep &= vals >= float(lo)
        if hi is not None:
            keep &= vals <= float(hi)
    ok = np.flatnonzero(keep)
    order = ok[np.argsort(-score[ok], kind="stable")]
    used: dict[int, int] = {}
    rows = []
    for q in order:
        a, b = int(iu[q]), int(ju[q])
        if max_per_item is not None and (used.get(a, 0) >= max_per_item or used.get(b, 0) >= max_per_item):
            continue
        used[a] = used.get(a, 0) + 1
        used[b] = used.get(b, 0) + 1
        row = {"a": a, "b": b, "R_text": float(t[q]), "R_rank": float(r[q])}
        if items is not None:
            row.update(item_a=str(items[a]), item_b=str(items[b]))
        if texts is not None:
            row.update(text_a=_short(texts[a], width), text_b=_short(texts[b], width))
        rows.append(row)
        if len(rows) >= n:
            break
    columns = ["a", "b", "R_text", "R_rank"] + (["item_a", "item_b"] if items is not None else []) \
        + (["text_a", "text_b"] if texts is not None else [])
    return pd.DataFrame(rows, columns=columns)


def item_discrimination(R, y) -> np.ndarray:
    """``(n_items,)`` Pearson correlation of each item's scores with the full score over the models.

    ``R`` ``(n_models, n_items)`` in [0, 1] (NaN mean-imputed, as in the rank redundancy), ``y``
    ``(n_models,)`` pp. For 0/1 items this is the point-biserial correlation, MetaBench's item filter.
    Constant items get 0.
    """
    from ..search.redundancy import standardise_items

    R = np.asarray(R, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if R.ndim != 2 or y.shape != (R.shape[0],):
        raise InputError(f"R {R.shape} and y {y.shape}: expected (n_models, n_items) and (n_models,)")
    Z, _ = standardise_items(R)
    yc = y - y.mean()
    ny = np.linalg.norm(yc)
    return Z @ (yc / ny) if ny > 0 else np.zeros(R.shape[1])


def rank_redundancy_halves(R, seed=0) -> tuple[np.ndarray, np.ndarray]:
    """The rank redundancy of every item pair measured twice, on two disjoint random halves of the models.

    ``R`` ``(n_models, n_items)``. Returns two aligned ``(n_pairs,)`` arrays (pairs defined in both
    halves only). How well they agree says how much of a pair's correlation is the pair and how much
    is the particular models: with few models (AlpacaEval 2) a correlation is mostly noise.
    """
    from ..search.redundancy import rank_redundancy

    R = np.asarray(R, dtype=np.float64)
    if R.ndim != 2 or R.shape[0] < 6:
        raise InputError(f"R: expected (n_models >= 6, n_items), got shape {R.shape}")
    perm = np.random.default_rng(seed).permutation(R.shape[0])
    h = R.shape[0] // 2
    a = off_diagonal(rank_redundancy(R[perm[:h]]), drop_nan=False)
    b = off_diagonal(rank_redundancy(R[perm[h:]]), drop_nan=False)
    ok = np.isfinite(a) & np.isfinite(b)
    return a[ok], b[ok]


# ----------------------------------------------------------------------------------------------
# 02 · the coarse filter
# ----------------------------------------------------------------------------------------------
def kept_counts(R_train, embeddings, tau_text, tau_rank, drop_constant: bool = True) -> np.ndarray:
    """Items kept by :func:`~essence.search.redundancy.coarse_filter` over a grid of thresholds.

    ``R_train`` ``(n_train, n_items)``, ``embeddings`` ``(n_items, dim)`` or None (no text check);
    ``tau_text`` ``(a,)`` and ``tau_rank`` ``(b,)`` thresholds (>= 1 switches a check off). Returns an
    ``(a, b)`` int array: entry ``[i, j]`` is the pool size at ``(tau_text[i], tau_rank[j])``.
    """
    from ..search.redundancy import coarse_filter

    tt = np.atleast_1d(np.asarray(tau_text, dtype=np.float64))
    tr = np.atleast_1d(np.asarray(tau_rank, dtype=np.float64))
    out = np.zeros((tt.size, tr.size), dtype=np.intp)
    for i, a in enumerate(tt):
        for j, b in enumerate(tr):
            out[i, j] = coarse_filter(R_train, embeddings, tau_text=a, tau_rank=b,
                                      drop_constant=drop_constant).n_kept
    return out


def random_subset_rmse(R_train, y_train, R_eval, y_eval, k: int, pool=None, n_draws: int = 50, seed=0,
                       n_splines: int = GAM_N_SPLINES, lam: float = GAM_LAM) -> np.ndarray:
    """RMSE (pp) of uniformly random k-subsets of a pool, each reconstructed by a GAM on the subset mean.

    For each draw: ``k`` items drawn without replacement from ``pool`` (positions into the columns; None
    = all), a :class:`~essence.reconstructors.simple.GAMReconstructor` (``n_splines``, ``lam``) fitted on the
    training models ``R_train`` ``(n_train, n_items)`` -> ``y_train`` ``(n_train,)`` pp, and its RMSE on
    the evaluation models ``R_eval`` ``(n_eval, n_items)`` -> ``y_eval`` ``(n_eval,)``. Returns
    ``(n_draws,)`` RMSE in pp. Nothing is chosen with the evaluation models.
    """
    return random_subset_scores(R_train, y_train, R_eval, y_eval, k, pool, n_draws, seed, n_splines, lam)["rmse"]


def random_subset_scores(R_train, y_train, R_eval, y_eval, k: int, pool=None, n_draws: int = 50, seed=0,
                         n_splines: int = GAM_N_SPLINES, lam: float = GAM_LAM) -> dict:
    """As :func:`random_subset_rmse`, returning ``{"rmse": (n_draws,) pp, "kendall": (n_draws,)}`` (the
    Kendall tau between the evaluation models' true and reconstructed scores). Same draws for the same seed."""
    from ..data.metrics import kendall, rmse
    from ..reconstructors.simple import GAMReconstructor

    R_train = np.asarray(R_train, dtype=np.float64)
    R_eval = np.asarray(R_eval, dtype=np.float64)
    if R_train.ndim != 2 or R_eval.ndim != 2 or R_train.shape[1] != R_eval.shape[1]:
        raise InputError(f"R_train {R_train.shape} and R_eval {R_eval.shape}: expected (n_models, n_items) "
                         "over the same items")
    pool = np.arange(R_train.shape[1]) if pool is None else np.asarray(pool, dtype=np.intp)
    if isinstance(k, bool) or not 1 <= int(k) <= pool.size:
        raise InputError(f"k: {k!r} must be between 1 and the {pool.size} pool items")
    rng = np.random.default_rng(seed)
    out = {"rmse": np.empty(int(n_draws)), "kendall": np.empty(int(n_draws))}
    for d in range(int(n_draws)):
        S = np.sort(rng.choice(pool, size=int(k), replace=False))
        g = GAMReconstructor(n_splines=n_splines, lam=lam).fit(R_train[:, S], y_train)
        pred = g.predict(R_eval[:, S])
        out["rmse"][d] = rmse(y_eval, pred)
        out["kendall"][d] = kendall(y_eval, pred)
    return out


# ----------------------------------------------------------------------------------------------
# 03 · the genetic search
# ----------------------------------------------------------------------------------------------
def subset_figures(R, y, split, items, reconstructors=("gam", "ridge", "ridge_gam")) -> dict:
    """What a user gets from a chosen subset: the reconstructor chosen on validation, and its test figures.

    ``R`` ``(n_models, n_items)``, ``y`` ``(n_models,)`` pp, ``split`` an :class:`~essence.data.Split`
    (train, val, test index arrays), ``items`` ``(k,)`` positions. Each reconstructor in
    ``reconstructors`` (``"gam"``: GAM on the subset mean, the paper's; ``"ridge"``: ridge on the items;
    ``"ridge_gam"``: ridge, then a GAM on its index) is fitted on the training models; the one with the
    lowest validation RMSE is kept, as
    :class:`~essence.methods.base.Selector` does. Returns ``{"choice", "val_rmse", "test_rmse" (pp),
    "test_kendall"}``; the test models only measure.
    """
    from ..data.metrics import kendall, rmse
    from ..reconstructors.choose import choose_on_validation
    from ..reconstructors.simple import reconstructor_makers

    makers = reconstructor_makers(reconstructors)
    R = np.asarray(R, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    S = np.asarray(items, dtype=np.intp)
    tr, va, te = (np.asarray(a, dtype=np.intp) for a in split)
    label, rec, scores = choose_on_validation(makers, R[np.ix_(tr, S)], y[tr], R[np.ix_(va, S)], y[va])
    pred = rec.predict(R[np.ix_(te, S)])
    return {"choice": label, "val_rmse": float(scores[label]), "test_rmse": rmse(y[te], pred),
            "test_kendall": kendall(y[te], pred)}


@dataclass
class Trajectory:
    """A genetic search observed at checkpoints (see :func:`ga_trajectory`).

    ``table``: one row per checkpoint: ``generation``, ``fitness_rmse`` (pp, the best individual's
    ``-fitness``) and whatever ``evaluate`` returned for it; ``history`` / ``mean_history``:
    ``(generations + 1,)`` best and population-mean fitness (-RMSE, pp) after each generation;
    ``bests``: the best subset ``(k,)`` at each checkpoint; ``result``: the last
    :class:`~essence.search.genetic.GAResult`; ``seconds``: search time without the evaluations.
    """

    table: object
    history: np.ndarray
    mean_history: np.ndarray
    bests: list
    result: object
    seconds: float


def ga_trajectory(fitness, k: int, checkpoints, evaluate=None, population: int = 200, elites: int = 20,
                  tournament: int = 3, seed=0) -> Trajectory:
    """Run :func:`~essence.search.genetic.genetic_search` and look at its best subset at ``checkpoints``.

    The search runs in segments: each segment continues from the previous one's whole final population
    (``init``), with one random generator shared by all segments, so it is one search that pauses at
    every checkpoint (the draws differ from a single uninterrupted call with the same seed).

    Parameters
    ----------
    fitness : a fitness object over the pool (``GAMRulerFitness``, ``RidgeFitness``: ``n_items`` and
        ``__call__(masks (P, M) bool) -> (P,)``).
    k : subset size.
    checkpoints : increasing generation counts, e.g. ``[0, 30, 100, 300, 1000]`` (0 = the random
        initial population).
    evaluate : optional ``f(best (k,) positions) -> dict`` of numbers, called at each checkpoint (e.g.
        :func:`subset_figures` on held-out models); its keys become columns of ``table``.
    population, elites, tournament, seed : the GA's settings.
    """
    import time

    import pandas as pd

    from ..search.genetic import genetic_search

    cps = [int(c) for c in np.atleast_1d(checkpoints)]
    if not cps or cps[0] < 0 or any(b <= a for a, b in zip(cps, cps[1:])):
        raise InputError(f"checkpoints: {checkpoints!r} must be increasing generation counts >= 0")
    rng = np.random.default_rng(seed) if not isinstance(seed, np.random.Generator) else seed
    rows, bests, hist, mhist = [], [], [], []
    pop, done, secs, res = None, 0, 0.0, None
    for c in cps:
        t0 = time.perf_counter()
        res = genetic_search(fitness, k, GAConfig(population=population, generations=c - done, tournament=tournament, elites=elites), init=pop, seed=rng)
        secs += time.perf_counter() - t0
        skip = 0 if pop is None else 1  # a continuation re-scores the population it starts from
        hist.extend(res.history[skip:].tolist())
        mhist.extend(res.mean_history[skip:].tolist())
        pop, done = res.population, c
        best = res.best.copy()
        bests.append(best)
        row = {"generation": c, "fitness_rmse": float(-res.best_fitness)}
        if evaluate is not None:
            row.update(evaluate(best))
        rows.append(row)
    return Trajectory(table=pd.DataFrame(rows), history=np.asarray(hist), mean_history=np.asarray(mhist),
                      bests=bests, result=res, seconds=secs)


def fitness_setup(data, seed: int = 0, n_splines: int = GAM_N_SPLINES, lam: float = GAM_LAM,
                  ridge_alpha: float = 1.0) -> dict:
    """The two fitness functions notebook 03 compares, on ``split_models(data, seed)``.

    ``data``: a :class:`~essence.data.Responses` or a dataset name. Returns
    ``{"data", "split", "R", "y", "paper", "ridge"}``:
    the split, all responses ``(n_models, n_items)`` and targets (pp), the paper's fixed GAM ruler
    (:class:`~essence.search.fitness.GAMRulerFitness`, fitted on training, scored on validation models)
    and the ridge fitness (:class:`~essence.search.fitness.RidgeFitness`, on training models).
    """
    from ..data import load, split_models
    from ..search.fitness import RidgeFitness, GAMRulerFitness

    data = load(data) if isinstance(data, str) else data
    split = split_models(data, seed=seed)
    tr, va, _ = split
    R, y = data.responses, data.target
    return {"data": data, "split": split, "R": R, "y": y,
            "paper": GAMRulerFitness(R[tr], y[tr], R[va], y[va], n_splines, lam),
            "ridge": RidgeFitness(R[tr], y[tr], alpha=ridge_alpha)}


def subset_evaluator(setup: dict, reconstructors=("gam", "ridge", "ridge_gam")):
    """``best (k,) positions -> dict``: :func:`subset_figures` on ``setup``'s split (a :func:`fitness_setup`
    result), the ``evaluate`` argument of :func:`ga_trajectory`."""
    return lambda best: subset_figures(setup["R"], setup["y"], setup["split"], best, reconstructors)


def compare_fitnesses(data, seed: int, k: int, checkpoints, fitnesses: dict, population: int = 200,
                      elites: int = 20, tournament: int = 3, n_draws: int = 20, n_splines: int = GAM_N_SPLINES,
                      lam: float = GAM_LAM, ridge_alpha: float = 1.0) -> tuple[dict, float, float]:
    """Both GA searches of notebook 03 on one dataset and split seed.

    ``fitnesses``: label -> ``"paper"`` or ``"ridge"`` (keys of :func:`fitness_setup`). Returns
    ``(tables, random_rmse, floor)``: label -> the :func:`ga_trajectory` table (figures on held-out
    models at each checkpoint); the mean test RMSE (pp) of ``n_draws`` random ``k``-subsets with the GAM
    (:func:`random_subset_rmse`, seed ``seed``); and the ruler's validation RMSE (pp) on the whole pool.
    """
    st = fitness_setup(data, seed, n_splines, lam, ridge_alpha)
    tables = {label: ga_trajectory(st[key], k, checkpoints, evaluate=subset_evaluator(st), population=population,
                                   elites=elites, tournament=tournament, seed=seed).table
              for label, key in fitnesses.items()}
    tr, _, te = st["split"]
    rnd = random_subset_rmse(st["R"][tr], st["y"][tr], st["R"][te], st["y"][te], k, n_draws=n_draws,
                             seed=seed).mean()
    floor = float(-st["paper"](np.ones((1, st["data"].n_items), dtype=bool))[0])
    return tables, float(rnd), floor


# ----------------------------------------------------------------------------------------------
# 10 · a new model
# ----------------------------------------------------------------------------------------------
def chance_level(docs, free_form: bool = False) -> float:
    """Expected score of random guessing on harness documents, pp: ``100 * mean(1 / n_options)``.

    ``docs``: the documents of harness ``--log_samples`` files (:func:`essence.lmeval.read_samples`), each
    with ``contexts`` (one request per answer option). ``free_form=True`` (e.g. GSM8K's generated answers):
    0. InputError when there are no documents or one has no option.
    """
    if free_form:
        return 0.0
    n = [len(d.contexts) for d in docs]
    if not n or min(n) < 1:
        raise InputError("docs: need at least one document, each with at least one answer option")
    return 100 * float(np.mean([1 / m for m in n]))


# ----------------------------------------------------------------------------------------------
# 04 · the ablation
# ----------------------------------------------------------------------------------------------
def ablation(dataset: str, variants: dict, ks, seeds, out, jobs: int = 2):
    """EssenceBench under several parameter sets, through the cached comparison sweep.

    Each variant ``label -> {EssenceSelector parameter: value}`` is one
    :func:`essence.sweep.run_sweep` of the ``essence`` method over ``ks`` x ``seeds`` into
    ``out/<label>`` (runs are cached there and reused while the data, split, parameters and method source
    are unchanged). Seed ``s`` means split ``split_models(data, seed=s)`` and selector seed ``s``, the same
    for every variant, so the variants differ only in their parameters. Returns the sweep's tidy table
    (test RMSE and Kendall of each run, pp) with a ``variant`` column, in the order of ``variants``.
    """
    import pandas as pd

    from ..sweep import run_sweep

    if not variants:
        raise InputError("variants: give at least one label -> parameters entry")
    frames = []
    for label, params in variants.items():
        df = run_sweep([dataset], ["essence"], list(ks), list(seeds), out=Path(out) / str(label), jobs=jobs,
                       update=True, progress=False, method_params={"essence": dict(params)})
        frames.append(df.assign(variant=str(label)))
    return pd.concat(frames, ignore_index=True)


def ablation_traces(dataset: str, variant_dir) -> "object":
    """Per-stage fitness and validation RMSE (pp) of every cached run in ``variant_dir`` (one variant of
    :func:`ablation`), from the selectors' ``info_["val_rmse_trace"]``: a DataFrame with columns
    ``k``, ``seed``, ``stage`` ("ga", "round 1", ...), ``step`` (0, 1, ...), ``fitness_rmse``, ``val_rmse``,
    and, per row, the size of the pool the GA searched (``pool``)."""
    import pandas as pd

    from ..sweep import load_runs

    rows = []
    for (ds, _m, k, s), rec in sorted(load_runs(variant_dir).items()):
        if ds != dataset or "artifact" not in rec:
            continue
        sel = rec["artifact"]["selection"]
        for step, t in enumerate(sel.get("val_rmse_trace", [])):
            rows.append({"k": k, "seed": s, "stage": t["stage"], "step": step, "fitness_rmse": t["fitness_rmse"],
                         "val_rmse": t["val_rmse"], "pool": sel.get("ga", {}).get("pool_size")})
    return pd.DataFrame(rows, columns=["k", "seed", "stage", "step", "fitness_rmse", "val_rmse", "pool"])
