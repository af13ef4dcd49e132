"""Helpers of the EssenceBench lesson notebooks 01-04 (and notebook 10's chance level). Responses are
``(n_models, n_items)`` in [0, 1] with NaN for missing; scores and errors in pp; every draw takes a ``seed``.
Models passed to measure an error are never used to choose."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.cluster.hierarchy import leaves_list, linkage
from scipy.spatial.distance import squareform

from ..data import load, split_models
from ..data._runtime import single_thread
from ..data.errors import InputError
from ..data.metrics import kendall, rmse
from ..reconstructors.choose import choose_on_validation
from ..reconstructors.simple import GAMReconstructor, reconstructor_makers
from ..reconstructors.tables import GAM_LAM, GAM_N_SPLINES
from ..search.fitness import GAMRulerFitness, RidgeFitness
from ..search.genetic import GAConfig, genetic_search
from ..search.redundancy import coarse_filter, rank_redundancy, standardise_items
from ..sweep import load_runs, run_sweep

__all__ = ["off_diagonal", "cluster_order", "pair_table", "item_discrimination", "rank_redundancy_halves",
           "kept_counts", "random_subset_rmse", "random_subset_scores", "subset_figures", "Trajectory", "ga_trajectory",
           "fitness_setup", "subset_evaluator", "compare_fitnesses", "chance_level", "ablation", "ablation_traces",
           "ablation_variants"]


# 01 · redundancy matrices
def _square(M, name: str) -> np.ndarray:
    M = np.asarray(M, dtype=np.float64)
    if M.ndim != 2 or M.shape[0] != M.shape[1]:
        raise InputError(f"{name}: expected a square (n_items, n_items) matrix, got shape {M.shape}")
    return M


def off_diagonal(M, drop_nan: bool = True) -> np.ndarray:
    """The ``n (n - 1) / 2`` values above the diagonal of an ``(n, n)`` matrix, row by row (NaN left out with
    ``drop_nan``)."""
    M = _square(M, "M")
    v = M[np.triu_indices(M.shape[0], 1)]
    return v[~np.isnan(v)] if drop_nan else v


def cluster_order(S) -> np.ndarray:
    """``(n,)`` leaf order of average-linkage clustering on ``1 - S`` for an ``(n, n)`` similarity ``S`` (NaN
    counts as 0): similar items next to each other."""
    S = _square(S, "S")
    if S.shape[0] < 3:
        return np.arange(S.shape[0])
    D = 1.0 - np.nan_to_num(S, nan=0.0)
    D = np.clip((D + D.T) / 2.0, 0.0, 2.0)
    np.fill_diagonal(D, 0.0)
    return leaves_list(linkage(squareform(D, checks=False), method="average")).astype(np.intp)


_ORDERS = {"text": lambda t, r: t, "rank": lambda t, r: r, "text_not_rank": lambda t, r: t - r,
           "rank_not_text": lambda t, r: r - t}


def _short(text, width: int) -> str:
    s = " ".join(str(text).replace("\n", " ⏎ ").split())
    return s if len(s) <= width else s[: width - 1] + "…"


def pair_table(R_text, R_rank, by: str = "text", n: int = 10, texts=None, items=None,
               max_per_item: int | None = None, text_range=(None, None), rank_range=(None, None),
               width: int = 110):
    """The ``n`` item pairs (positions ``a``, ``b``) of ``(n_items, n_items)`` ``R_text`` and ``R_rank`` with the
    largest ``R_text`` (``by="text"``), ``R_rank`` ("rank"), ``R_text - R_rank`` ("text_not_rank") or ``R_rank -
    R_text`` ("rank_not_text"), best first, NaN pairs skipped: a DataFrame ``a, b, R_text, R_rank`` (+ ``item_a,
    item_b``, ``text_a, text_b`` cut to ``width`` when given). ``max_per_item``: pairs per item at most;
    ``text_range``, ``rank_range``: inclusive ``(low, high)`` bounds, None open."""
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
    """``(n_items,)`` Pearson correlation of each item of ``R`` ``(n_models, n_items)`` (NaN mean-imputed) with
    ``y`` ``(n_models,)`` pp; 0 for constant items."""
    R = np.asarray(R, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if R.ndim != 2 or y.shape != (R.shape[0],):
        raise InputError(f"R {R.shape} and y {y.shape}: expected (n_models, n_items) and (n_models,)")
    Z, _ = standardise_items(R)
    yc = y - y.mean()
    ny = np.linalg.norm(yc)
    return Z @ (yc / ny) if ny > 0 else np.zeros(R.shape[1])


def rank_redundancy_halves(R, seed=0) -> tuple[np.ndarray, np.ndarray]:
    """The rank redundancy of every item pair on two disjoint random halves of the models of ``R``
    ``(n_models, n_items)``: two aligned ``(n_pairs,)`` arrays (pairs defined in both halves only)."""
    R = np.asarray(R, dtype=np.float64)
    if R.ndim != 2 or R.shape[0] < 6:
        raise InputError(f"R: expected (n_models >= 6, n_items), got shape {R.shape}")
    perm = np.random.default_rng(seed).permutation(R.shape[0])
    h = R.shape[0] // 2
    a = off_diagonal(rank_redundancy(R[perm[:h]]), drop_nan=False)
    b = off_diagonal(rank_redundancy(R[perm[h:]]), drop_nan=False)
    ok = np.isfinite(a) & np.isfinite(b)
    return a[ok], b[ok]


# 02 · the coarse filter
def kept_counts(R_train, embeddings, tau_text, tau_rank, drop_constant: bool = True) -> np.ndarray:
    """``(a, b)`` int: items :func:`~essence.search.redundancy.coarse_filter` keeps at ``(tau_text[i], tau_rank[j])``
    for ``R_train`` ``(n_train, n_items)`` and ``embeddings`` ``(n_items, dim)`` or None (>= 1: check off)."""
    tt = np.atleast_1d(np.asarray(tau_text, dtype=np.float64))
    tr = np.atleast_1d(np.asarray(tau_rank, dtype=np.float64))
    out = np.zeros((tt.size, tr.size), dtype=np.intp)
    with single_thread():
        for i, a in enumerate(tt):
            for j, b in enumerate(tr):
                out[i, j] = coarse_filter(R_train, embeddings, tau_text=a, tau_rank=b,
                                          drop_constant=drop_constant).n_kept
    return out


def random_subset_rmse(R_train, y_train, R_eval, y_eval, k: int, pool=None, n_draws: int = 50, seed=0,
                       n_splines: int = GAM_N_SPLINES, lam: float = GAM_LAM) -> np.ndarray:
    """``(n_draws,)`` RMSE (pp) of :func:`random_subset_scores`."""
    return random_subset_scores(R_train, y_train, R_eval, y_eval, k, pool, n_draws, seed, n_splines, lam)["rmse"]


def random_subset_scores(R_train, y_train, R_eval, y_eval, k: int, pool=None, n_draws: int = 50, seed=0,
                         n_splines: int = GAM_N_SPLINES, lam: float = GAM_LAM) -> dict:
    """``{"rmse": (n_draws,) pp, "kendall": (n_draws,)}`` of random ``k``-subsets ``sort(rng.choice(pool, k,
    replace=False))`` (``rng = default_rng(seed)``, ``pool`` None = all) read by a GAM on the subset mean fitted on
    ``R_train`` -> ``y_train``, measured on ``R_eval`` -> ``y_eval``."""
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
    with single_thread():  # many small pygam fits: threads only wait for each other
        for d in range(int(n_draws)):
            S = np.sort(rng.choice(pool, size=int(k), replace=False))
            g = GAMReconstructor(n_splines=n_splines, lam=lam).fit(R_train[:, S], y_train)
            pred = g.predict(R_eval[:, S])
            out["rmse"][d] = rmse(y_eval, pred)
            out["kendall"][d] = kendall(y_eval, pred)
    return out


# 03 · the genetic search
def subset_figures(R, y, split, items, reconstructors=("gam", "ridge", "ridge_gam")) -> dict:
    """``{"choice", "val_rmse", "test_rmse" (pp), "test_kendall"}`` of the subset ``items`` ``(k,)``: the
    ``reconstructors`` fitted on the training models of ``split``, lowest validation RMSE kept, measured on the test
    models."""
    makers = reconstructor_makers(reconstructors)
    R = np.asarray(R, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    S = np.asarray(items, dtype=np.intp)
    tr, va, te = (np.asarray(a, dtype=np.intp) for a in split)
    with single_thread():
        label, rec, scores = choose_on_validation(makers, R[np.ix_(tr, S)], y[tr], R[np.ix_(va, S)], y[va])
        pred = rec.predict(R[np.ix_(te, S)])
    return {"choice": label, "val_rmse": float(scores[label]), "test_rmse": rmse(y[te], pred),
            "test_kendall": kendall(y[te], pred)}


@dataclass
class Trajectory:
    """``table``: per checkpoint ``generation``, ``fitness_rmse`` (pp) and ``evaluate``'s columns; ``history`` /
    ``mean_history``: ``(generations + 1,)`` best and mean fitness (-RMSE, pp); ``bests``: ``(k,)`` per checkpoint."""

    table: object
    history: np.ndarray
    mean_history: np.ndarray
    bests: list

def ga_trajectory(fitness, k: int, checkpoints, evaluate=None, population: int = 200, elites: int = 20,
                  tournament: int = 3, seed=0) -> Trajectory:
    """:func:`~essence.search.genetic.genetic_search` on ``fitness`` paused at the increasing generation counts
    ``checkpoints`` (0 = the initial population), one generator throughout; ``evaluate``: ``best (k,) -> dict`` of
    extra table columns."""
    cps = [int(c) for c in np.atleast_1d(checkpoints)]
    if not cps or cps[0] < 0 or any(b <= a for a, b in zip(cps, cps[1:])):
        raise InputError(f"checkpoints: {checkpoints!r} must be increasing generation counts >= 0")
    rng = np.random.default_rng(seed) if not isinstance(seed, np.random.Generator) else seed
    rows, bests, hist, mhist = [], [], [], []
    pop, done = None, 0
    for c in cps:
        res = genetic_search(fitness, k, GAConfig(population=population, generations=c - done, tournament=tournament,
                                                  elites=elites), init=pop, seed=rng)
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
                      bests=bests)


def fitness_setup(data, seed: int = 0, n_splines: int = GAM_N_SPLINES, lam: float = GAM_LAM,
                  ridge_alpha: float = 1.0) -> dict:
    """``{"data", "split", "R", "y", "paper", "ridge"}`` on ``split_models(data, seed)`` (``data``: Responses or
    name): the :class:`~essence.search.fitness.GAMRulerFitness` (training -> validation) and the in-sample
    :class:`~essence.search.fitness.RidgeFitness` on the training models."""
    data = load(data) if isinstance(data, str) else data
    split = split_models(data, seed=seed)
    tr, va, _ = split
    R, y = data.responses, data.target
    with single_thread():
        paper = GAMRulerFitness(R[tr], y[tr], R[va], y[va], n_splines, lam)
    return {"data": data, "split": split, "R": R, "y": y, "paper": paper,
            "ridge": RidgeFitness(R[tr], y[tr], alpha=ridge_alpha)}


def subset_evaluator(setup: dict, reconstructors=("gam", "ridge", "ridge_gam")):
    """``best (k,) -> dict``: :func:`subset_figures` on a :func:`fitness_setup` result's split."""
    return lambda best: subset_figures(setup["R"], setup["y"], setup["split"], best, reconstructors)


def compare_fitnesses(data, seed: int, k: int, checkpoints, fitnesses: dict, population: int = 200,
                      elites: int = 20, tournament: int = 3, n_draws: int = 20, n_splines: int = GAM_N_SPLINES,
                      lam: float = GAM_LAM, ridge_alpha: float = 1.0) -> tuple[dict, float, float]:
    """``(tables, random_rmse, floor)`` for split ``seed``: label -> :func:`ga_trajectory` table per ``fitnesses``
    (label -> ``"paper"`` or ``"ridge"``); the mean test RMSE (pp) of ``n_draws`` random ``k``-subsets; the ruler's
    validation RMSE (pp) on the whole pool."""
    st = fitness_setup(data, seed, n_splines, lam, ridge_alpha)
    tables = {label: ga_trajectory(st[key], k, checkpoints, evaluate=subset_evaluator(st), population=population,
                                   elites=elites, tournament=tournament, seed=seed).table
              for label, key in fitnesses.items()}
    tr, _, te = st["split"]
    rnd = random_subset_rmse(st["R"][tr], st["y"][tr], st["R"][te], st["y"][te], k, n_draws=n_draws,
                             seed=seed).mean()
    floor = float(-st["paper"](np.ones((1, st["data"].n_items), dtype=bool))[0])
    return tables, float(rnd), floor


# 10 · a new model
def chance_level(docs, free_form: bool = False) -> float:
    """Random guessing's expected score (pp), ``100 * mean(1 / n_options)`` over harness ``docs`` (each with
    ``contexts``, one per option); 0 when ``free_form``. InputError without documents or options."""
    if free_form:
        return 0.0
    n = [len(d.contexts) for d in docs]
    if not n or min(n) < 1:
        raise InputError("docs: need at least one document, each with at least one answer option")
    return 100 * float(np.mean([1 / m for m in n]))


# 04 · the ablation
def ablation(dataset: str, variants: dict, ks, seeds, out, jobs: int = 2):
    """:func:`essence.sweep.run_sweep`'s tidy table (plus ``variant``) of ``essence`` under each variant ``label ->
    {parameter: value}`` over ``ks`` x ``seeds`` (seed = split = selector seed), cached in ``out/<label>``."""
    if not variants:
        raise InputError("variants: give at least one label -> parameters entry")
    frames = []
    for label, params in variants.items():
        df = run_sweep([dataset], ["essence"], list(ks), list(seeds), out=Path(out) / str(label), jobs=jobs,
                       update=True, progress=False, method_params={"essence": dict(params)})
        frames.append(df.assign(variant=str(label)))
    return pd.concat(frames, ignore_index=True)


def ablation_traces(dataset: str, variant_dir) -> "object":
    """DataFrame ``k``, ``seed``, ``stage``, ``step``, ``fitness_rmse``, ``val_rmse`` (pp), ``pool`` of every cached
    run of one :func:`ablation` variant, from ``info_["val_rmse_trace"]``."""
    rows = []
    for (ds, _m, k, s), rec in sorted(load_runs(variant_dir).items()):
        if ds != dataset or "artifact" not in rec:
            continue
        sel = rec["artifact"]["selection"]
        for step, t in enumerate(sel.get("val_rmse_trace", [])):
            rows.append({"k": k, "seed": s, "stage": t["stage"], "step": step, "fitness_rmse": t["fitness_rmse"],
                         "val_rmse": t["val_rmse"], "pool": sel.get("ga", {}).get("pool_size")})
    return pd.DataFrame(rows, columns=["k", "seed", "stage", "step", "fitness_rmse", "val_rmse", "pool"])


def ablation_variants(quick: bool = False) -> dict:
    """Notebook 04's four variants (filter at ``tau_rank=0.7`` or off, x refinement or ``rounds=0``), label ->
    EssenceSelector parameters, with reduced search settings (smaller still with ``quick``)."""
    reduced = dict(population=100, generations=150, group_population=40, group_generations=60, ebm_elites=3)
    if quick:
        reduced = dict(population=30, generations=10, group_population=20, group_generations=5, ebm_elites=2,
                       ebm_max_rounds=100)
    on, off = dict(tau_rank=0.7), dict(tau_text=1.0, tau_rank=1.0, drop_constant=False)
    return {"filter + refinement": {**reduced, **on}, "filter, no refinement": {**reduced, **on, "rounds": 0},
            "no filter + refinement": {**reduced, **off}, "neither": {**reduced, **off, "rounds": 0}}
