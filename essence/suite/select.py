"""Choosing k items across a suite, with training and validation models only: the joint EssenceBench (redundancy
filter, :func:`essence.search.genetic.genetic_search` with :class:`~essence.suite.fitness.JointRidgeFitness`,
optional :mod:`essence.search.refine`), or any other method on the pooled items (a floor met by seeded swaps)."""

from __future__ import annotations

import time
import warnings

import numpy as np

from ..data.checks import real_number, whole_number
from ..data.errors import EssenceWarning, InputError
from ..methods import make_method
from ..search.genetic import GAConfig, genetic_search
from ..search.redundancy import coarse_filter
from ..search.refine import GroupFitness, RefineConfig, refine, suite_attribution
from .data import Suite
from .fitness import WEIGHTINGS, JointRidgeFitness

__all__ = ["select_suite", "SUITE_METHODS", "JOINT_DEFAULTS", "budget_split"]

#: the joint EssenceBench's settings (``--param NAME=VALUE``): the GA's, the fitness's
#: (:class:`~essence.suite.fitness.JointRidgeFitness`), the redundancy filter's, the refinement's and
#: ``min_search_models`` (fewer training + validation models: random items, with a warning).
JOINT_DEFAULTS = {"population": 100, "generations": 150, "elites": 10, "tournament": 3, "patience": None,
                  "weighting": "relative+mean", "ridge_alpha": 10.0, "mean_weight": 1.0, "own_weight": 0.5,
                  "tau_text": 0.95, "tau_rank": 0.9, "rounds": 0, "ebm_elites": 3, "group_population": 60,
                  "group_generations": 100, "min_search_models": 24}

#: methods that run on a suite: the joint EssenceBench plus every registered single-benchmark method
SUITE_METHODS = ("essence", "random", "disco", "kmeans", "herding", "ppl", "irt", "tinybench")


def budget_split(suite: Suite, idx) -> dict[str, int]:
    """Chosen items per member for pooled positions ``idx``."""
    counts = np.bincount(suite.member_of[np.asarray(idx, dtype=np.intp)], minlength=len(suite.members))
    return {n: int(c) for n, c in zip(suite.names, counts)}


def _floor_masks(P: int, M: int, k: int, member_of: np.ndarray, floor: int, rng) -> np.ndarray:
    """``(P, M)`` random masks of k items with at least ``floor`` of each member."""
    out = np.zeros((P, M), dtype=bool)
    B = int(member_of.max()) + 1
    for p in range(P):
        take = [rng.choice(np.flatnonzero(member_of == b), size=floor, replace=False) for b in range(B)]
        chosen = np.concatenate(take) if floor else np.array([], dtype=np.intp)
        rest = np.setdiff1d(np.arange(M), chosen)
        out[p, np.r_[chosen, rng.choice(rest, size=k - chosen.size, replace=False)].astype(np.intp)] = True
    return out


def _meet_floor(idx: np.ndarray, member_of: np.ndarray, floor: int, rng) -> np.ndarray:
    """Swap random items of members above the floor for random unchosen items of members below it."""
    idx = list(np.asarray(idx, dtype=np.intp))
    B = int(member_of.max()) + 1
    for b in range(B):
        while (member_of[idx] == b).sum() < floor:
            counts = np.bincount(member_of[idx], minlength=B)
            donors = [i for i in idx if counts[member_of[i]] > floor]
            idx.remove(donors[int(rng.integers(len(donors)))])
            spare = np.setdiff1d(np.flatnonzero(member_of == b), idx)
            idx.append(int(rng.choice(spare)))
    return np.sort(np.asarray(idx, dtype=np.intp))


def select_suite(train: Suite, val: Suite, k: int, method: str = "essence", seed: int = 0, per_benchmark: int = 0,
                 progress: bool = True, **params) -> tuple[np.ndarray, dict]:
    """``(idx, info)``: ``k`` increasing positions into :meth:`Suite.pooled` items and the JSON record."""
    k = whole_number("k", k, 1)
    floor = whole_number("per_benchmark", per_benchmark, 0)
    B = len(train.members)
    if floor * B > k:
        raise InputError(f"--per-benchmark {floor}: {B} benchmarks x {floor} = {floor * B} items exceed k = {k}; "
                         f"lower the floor to at most {k // B}")
    short = [f"{m.name} ({m.n_items})" for m in train.members if m.n_items < floor]
    if short:
        raise InputError(f"--per-benchmark {floor}: more than the items of {', '.join(short)}; lower the floor")
    M = sum(train.n_items)
    if k > M:
        raise InputError(f"k: {k} is more than the suite's {M} items; lower k")
    if method not in SUITE_METHODS:
        raise InputError(f"method {method!r} does not run on a suite; choose one of: {', '.join(SUITE_METHODS)}")
    t0 = time.perf_counter()
    fallback = _too_few_to_search(train, val, params) if method == "essence" else None
    if method == "essence" and fallback is None:
        idx, info = _joint_essence(train, val, k, seed, floor, progress, **params)
    else:  # another method, or the joint EssenceBench's fallback to the random method's items
        chooser, options = ("random", {}) if fallback else (method, params)
        sel = make_method(chooser, k=k, seed=seed, progress=progress, **options)
        sel.fit(train.pooled(), val.pooled())
        idx = np.sort(sel.items_)
        info = {"target": "suite mean (pooled items)"}
        if floor:
            before = budget_split(train, idx)
            idx = _meet_floor(idx, train.member_of, floor, np.random.default_rng([int(seed), 17]))
            if budget_split(train, idx) != before:
                info["floor_swaps"] = {"before": before}
    if fallback is not None:
        info["fallback"] = fallback
    info.update({"method": method, "per_benchmark": floor, "budget": budget_split(train, idx),
                 "seconds": round(time.perf_counter() - t0, 3)})
    return idx, info


def _too_few_to_search(train: Suite, val: Suite, params: dict) -> dict | None:
    """``None`` when the joint EssenceBench may search, else its ``fallback`` record; InputError: unknown params."""
    unknown = sorted(set(params) - set(JOINT_DEFAULTS))
    if unknown:
        raise InputError(f"--param {unknown[0]}: not a setting of the joint EssenceBench; its settings: "
                         f"{', '.join(JOINT_DEFAULTS)}")
    least = whole_number("min_search_models", params.get("min_search_models", JOINT_DEFAULTS["min_search_models"]), 0)
    n_fit = train.n_models + val.n_models
    if n_fit >= least:
        return None
    warnings.warn(f"joint EssenceBench: {n_fit} training + validation models, fewer than min_search_models = "
                  f"{least}: random items across the suite are kept instead of a search (with this few models "
                  "the search chose worse items than random ones, README 'Suites'); add models, or "
                  "--param min_search_models=0 to search anyway", EssenceWarning, stacklevel=3)
    return {"reason": "too_few_models", "models": n_fit, "min_search_models": least}


def _joint_essence(train: Suite, val: Suite, k: int, seed: int, floor: int, progress: bool, **params):
    """One joint search; ``params`` already checked by :func:`_too_few_to_search`."""
    s = {**JOINT_DEFAULTS, **params}
    if s["weighting"] not in WEIGHTINGS:
        raise InputError(f"--param weighting={s['weighting']!r}: choose one of {', '.join(WEIGHTINGS)}")
    ga_config = GAConfig(population=whole_number("population", s["population"], 2),
                         generations=whole_number("generations", s["generations"], 0),
                         tournament=whole_number("tournament", s["tournament"], 1),
                         elites=whole_number("elites", s["elites"], 0), patience=s["patience"])
    refine_config = RefineConfig(rounds=whole_number("rounds", s["rounds"], 0),
                                 ebm_elites=whole_number("ebm_elites", s["ebm_elites"], 1),
                                 group_population=whole_number("group_population", s["group_population"], 2),
                                 group_generations=whole_number("group_generations", s["group_generations"], 0))
    pooled_tr = train.pooled()
    R, Y = pooled_tr.responses, train.targets
    emb = None
    if pooled_tr.texts is not None and float(s["tau_text"]) < 1.0:
        from ..features.text import embed_texts

        emb = embed_texts(pooled_tr.texts, progress=progress)
    filt = coarse_filter(R, emb, tau_text=float(s["tau_text"]), tau_rank=float(s["tau_rank"]), progress=progress,
                         texts_available=pooled_tr.texts is not None)
    pool = np.asarray(filt.kept, dtype=np.intp)
    member_of = train.member_of[pool]
    counts = np.bincount(member_of, minlength=len(train.members))
    if k > pool.size or (floor and counts.min() < floor):
        raise InputError(f"k={k} / per_benchmark={floor}: the redundancy filter left {pool.size} items "
                         f"({dict(zip(train.names, counts.tolist()))}); lower k or raise --param tau_rank / tau_text")
    fit = JointRidgeFitness(R[:, pool], Y, member_of, alpha=float(s["ridge_alpha"]), weighting=s["weighting"],
                            floor=floor, k_ref=k, seed=seed, mean_weight=real_number("mean_weight", s["mean_weight"], 0),
                            own_weight=real_number("own_weight", s["own_weight"], 0.0, 1.0))
    rng = np.random.default_rng(seed)
    init = _floor_masks(ga_config.population, pool.size, k, member_of, floor, rng) if floor else None
    ga = genetic_search(fit, k, ga_config, init=init, seed=rng, progress=progress, desc="joint GA")
    local, refinement = refine(fit, lambda g: GroupFitness(fit, g),
                               suite_attribution(R[:, pool], Y, refine_config, seed=rng, progress=progress), ga, ga.best, k,
                               refine_config, ga_config, rng, progress=progress)
    best = np.sort(pool[local])
    mask = np.zeros((1, pool.size), dtype=bool)
    mask[0, local] = True
    per = fit.member_rmse(mask)[0]
    return best, {
        "settings": {key: s[key] for key in JOINT_DEFAULTS},
        "pool_size": int(pool.size), "pool_by_benchmark": dict(zip(train.names, counts.tolist())),
        "filter": {"n_dropped": int(R.shape[1] - pool.size)},
        "ga": {"generations_run": ga.generations_run, "evaluations": ga.evaluations, "seconds": round(ga.seconds, 3),
               "history": ga.history_summary(every=max(1, ga.generations_run // 30))},
        **({"refinement": refinement} if refinement else {}),
        "fitness_rmse": {n: round(float(v), 5) for n, v in zip([*train.names, "mean"], per)},
        "reference_rmse": {n: round(float(v), 5) for n, v in zip([*train.names, "mean"], fit.ref)}}
