"""Choosing k items across a suite.

* ``method="essence"`` (joint EssenceBench): the coarse redundancy filter on the pooled items (text and
  rank redundancy over the training models, across members), then the GA of
  :func:`essence.search.genetic.genetic_search` with :class:`~essence.suite.fitness.JointRidgeFitness`:
  every candidate is scored on every member at once, so the split of the budget between members comes
  out of the search. A per-member floor (``per_benchmark``) is kept by seeding the population with
  candidates that meet it and penalising those that do not. ``rounds`` > 0 adds EssenceBench's third stage, attribution-guided
  refinement across the suite (:mod:`essence.suite.refine`; off by default, measured in README "Suites").
* any other registered method (``random``, ``disco``, ``kmeans``, ...): the method runs on the pooled
  items (:meth:`Suite.pooled`) with the suite mean as its target; a floor is met by swapping in random
  items of the short members for random items of the others (seeded).

Every choice uses training and validation models only.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from ..data.checks import whole_number
from ..data.errors import EssenceWarning, InputError
from .data import Suite
from .fitness import WEIGHTINGS, JointRidgeFitness

__all__ = ["select_suite", "SUITE_METHODS", "JOINT_DEFAULTS", "budget_split", "pick_by_cv", "kernel_candidates",
           "SEARCH_SEED_STEP"]

#: search ``i`` of ``searches`` runs under seed ``seed + SEARCH_SEED_STEP * i``
SEARCH_SEED_STEP = 1000

#: the joint EssenceBench's settings (population and generations are smaller than the single-benchmark
#: defaults: a 250-item candidate costs ~8x a 50-item one; see README "Suites" for the measured times).
#: ``ridge_alpha`` 10 (not 1): with ~250 items and ~1,100 training models the in-sample ridge at alpha 1
#: rewards items that fit the training models' noise; on seed 0 of ``benchmarks/suite.py`` alpha 10 cut the
#: suite mean's held-out RMSE from 1.03 to 0.94 pp at the same per-benchmark error (README, "Suites").
#: ``fitness_models="loo"`` (closed-form leave-one-out) was level with it at ~2x the search time.
#: ``fitness_models="train+val"`` (the validation models join the filter's and the fitness's models) was not
#: better: ``benchmarks/suite.py --seeds 0 1 2 3 4 --param fitness_models=train+val`` gave 0.882 x / 0.959 pp against
#: the default's 0.867 x / 0.951, both with the reconstructors before ``boost`` (README, "Suites").
#: ``mean_weight``: the suite mean's term's weight in ``"relative+mean"``; ``init``: ``"random"`` (uniform
#: over the filtered pool) or ``"balanced"`` (each member starts with k / members items); ``own_weight``: the
#: share of the own-items ridges in the fitness (:class:`~essence.suite.fitness.JointRidgeFitness`; each member's
#: ridge on its own chosen items, which the reconstruction's ``own_mlp`` reads). ``benchmarks/suite.py --seeds 0 1 2``
#: (held-out test models; mean per-benchmark RMSE / suite mean's RMSE, pp): own_weight 0 -> 1.875 / 0.993,
#: 0.3 -> 1.853 / 0.985, 0.5 -> 1.842 / 0.981, 0.7 -> 1.867 / 1.016, 1.0 -> 1.891 / 1.019 (0.5 with mean_weight 3:
#: 1.877 / 1.009); at 0.5 the per-benchmark figure fell on every seed and MMLU's from 2.03 to 1.74 pp (it gets 35-37
#: items, not 27-37), the suite mean's on seeds 0 and 1 only: the gain is small against the spread between seeds.
#: ``rounds``: EssenceBench's attribution-guided refinement across the suite (:mod:`essence.suite.refine`; ``ebm_elites``
#: candidates x members EBMs per round, then a GA of ``group_population`` x ``group_generations`` in each of three
#: groups). Off by default: one round (``benchmarks/suite.py --seeds 0 1 2 --param rounds=1``) gave 1.847 pp (0.879 x)
#: / 1.000 pp against the default's 1.842 (0.876 x) / 0.982, at 40-90 s more per suite; more search under the same
#: fitness does not lower the held-out error (README, "Suites").
#: ``own_models``: ``"shared"`` (the own-items term on the training models) or ``"pool"`` (each member's models that
#: the suite dropped, because another member lacks them, join its own-items ridge: 2-3x the models). ``pool`` chose
#: better items for a single member (a ridge-fitness GA, seeds 0-2: lower test RMSE on MMLU and TruthfulQA every
#: seed) but not for the suite: ``benchmarks/suite.py --seeds 0 1 2 3 4 --param own_models=pool`` 0.857 x / 0.928 pp
#: against the default's 0.849 x / 0.932 (README, "Suites").
#: ``searches``: how many joint searches to run (search ``i`` under seed ``seed + 1000 i``; the first is the plain
#: search); with more than one, the one kept is the one whose items the ``kernel`` reconstructor predicts best in
#: a 5-fold CV over the training and validation models (:func:`pick_by_cv`). Why: a second seed of the same search
#: moved the held-out ratio by -0.044 to +0.019 per seed (``benchmarks/suite_floor.py --reseed``, README "Suites").
#: Measured (``benchmarks/suite_floor.py --seeds 0 1 2 3 4 [--holdout] --floors --searches 3``, fixed recipe, ratio
#: to the whole-pool separate artifacts): the pick 0.852 held out of everything / 0.854 on the test split, against
#: 0.864 / 0.864 for the three searches' mean and 0.868 / 0.850 for the first search alone. Full pipeline
#: (``benchmarks/suite.py --seeds 0 1 2 3 4 --separate-pool [--holdout]``): three searches 0.851 x / suite mean
#: 0.828 pp held out of everything, 0.852 x / 0.880 pp on the test split, against one search's 0.866 / 0.860 and
#: 0.848 / 0.884 (README "Suites"). The default is 3: it helps on models the defaults were not chosen on and is
#: level on the test split, at three searches' time; ``searches=1`` for one search (the suite sweep,
#: :data:`essence.sweep.suites.SUITE_SWEEP_JOINT`, keeps one per point).
#: ``min_search_models``: with fewer training + validation models than this, the joint EssenceBench keeps random
#: items across the pooled suite (what ``method="random"`` chooses under the same seed), warns, and records
#: ``fallback`` in its info; 0 always searches. Measured (``benchmarks/suite_regimes.py``: the suite of five
#: compressed from m random shared models, scored on every other shared model; mean per-benchmark / suite mean
#: RMSE against random items, one search / three, 5 draws): m = 20 (18 training + validation) 1.09 / 1.09 x and
#: 1.25 / 1.25 x, worse on every draw; m = 25 (23) 1.06 / 1.06 x and 1.13 / 1.12 x; m = 30 (27) 1.00 / 1.01 x and
#: 1.03 / 1.06 x; m = 35 (31) 0.97 / 0.99 x and 0.96 / 0.98 x; m = 100 (90) 0.90 / 0.91 x and 0.92 x. 24 is
#: where the single-benchmark ``auto`` stops comparing candidates too (README "Few reference models").
JOINT_DEFAULTS = {"population": 100, "generations": 150, "elites": 10, "tournament": 3, "weighting": "relative+mean",
                  "fitness_models": "train", "ridge_alpha": 10.0, "tau_text": 0.95, "tau_rank": 0.9,
                  "patience": None, "mean_weight": 1.0, "init": "random", "own_weight": 0.5,
                  "rounds": 0, "ebm_elites": 3, "group_population": 60, "group_generations": 100,
                  "own_models": "shared", "searches": 3, "min_search_models": 24}

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


def _member_unions(R, Y, member_of, k: int, s: dict, rng, progress: bool, n_starts: int = 10) -> np.ndarray:
    """``(n_starts, M)`` starting candidates for the joint GA: each member's own search (the GA with one ridge,
    the same penalty, on its items only, k / members items, half the generations), and row ``i`` the union of
    every member's ``i``-th fittest final candidate, as if each member were compressed separately."""
    from ..search.genetic import genetic_search

    B = Y.shape[1]
    out = np.zeros((n_starts, R.shape[1]), dtype=bool)
    for b in range(B):
        cols = np.flatnonzero(member_of == b)
        kb = min(k // B, cols.size)
        fit = JointRidgeFitness(R[:, cols], Y[:, [b]], np.zeros(cols.size, dtype=np.intp),
                                alpha=float(s["ridge_alpha"]), weighting="raw")
        ga = genetic_search(None, None, None, None, kb, population=int(s["population"]),
                            generations=max(1, int(s["generations"]) // 2), elites=int(s["elites"]),
                            tournament=int(s["tournament"]), seed=rng, progress=progress,
                            desc=f"member {b + 1}/{B} GA", fitness=fit)
        top = ga.population[:n_starts]
        out[: top.shape[0], cols] |= top
    return out


def select_suite(train: Suite, val: Suite, k: int, method: str = "essence", seed: int = 0, per_benchmark: int = 0,
                 progress: bool = True, **params) -> tuple[np.ndarray, dict]:
    """Choose ``k`` pooled items of the suite with training and validation models only.

    Returns ``(idx, info)``: ``idx`` ``(k,)`` increasing positions into :meth:`Suite.pooled` items;
    ``info`` (JSON values): the method's record and ``budget`` (items per member). ``params`` go to the
    method (joint EssenceBench: the keys of :data:`JOINT_DEFAULTS`).
    """
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
        idx, info = _joint_searches(train, val, k, seed, floor, progress, **params)
    else:  # another method, or the joint EssenceBench's fallback to the random method's items
        from ..methods import make_method

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


def _own_weight(value, fitness_models: str, explicit: bool = True) -> float:
    """``--param own_weight`` checked: a number in [0, 1], and 0 under ``fitness_models=loo`` (the default's
    0.5 becomes 0 there when the user did not set it: ``explicit`` False)."""
    try:
        lam = float(value)
    except (TypeError, ValueError):
        lam = float("nan")
    if not 0.0 <= lam <= 1.0:
        raise InputError(f"--param own_weight={value!r}: the own-items ridges' share must be a number in [0, 1] "
                         f"(0: all-items ridges only; default {JOINT_DEFAULTS['own_weight']})")
    if fitness_models == "loo" and not explicit:
        return 0.0
    if lam > 0 and fitness_models == "loo":
        raise InputError(f"--param own_weight={value!r}: the own-items term is not implemented for "
                         "fitness_models=loo; use fitness_models=train or val, or own_weight=0")
    return lam


def _own_extra(train: Suite, pool, own_models: str, fitness_models: str, own_weight: float):
    """The own-items term's models outside the suite (:class:`~essence.suite.fitness.JointRidgeFitness`
    ``own_extra``) for the filtered pooled positions ``pool``, or None: ``own_models`` ``"pool"`` (each member's
    models that the suite dropped because another member lacks them join its own-items ridge) or ``"shared"``
    (the training models only). Only for in-sample fitness (``fitness_models`` train or train+val) with an
    own-items term; None too when no member has outside models."""
    if own_models not in ("pool", "shared"):
        raise InputError(f"--param own_models={own_models!r}: choose pool (each member's own-items fitness term also "
                         "reads the models the suite dropped from it) or shared (the suite's training models only)")
    if own_models == "shared" or own_weight <= 0 or fitness_models not in ("train", "train+val"):
        return None
    owner = train.member_of[pool]
    extra = [train.outside_rows(b, pool[owner == b]) for b in range(len(train.members))]
    extra = [e if e[1].size else None for e in extra]
    return extra if any(e is not None for e in extra) else None


def kernel_candidates(idx, member_of, b: int | None, n_models: int) -> dict:
    """``kernel``: RBF kernel ridge on all chosen items (:class:`essence.reconstructors.kernel.KernelReconstructor`) whose
    distance may count member ``b``'s own chosen items more (the weight chosen by leave-one-out among 0, 3
    and 9; ``b`` None: every item once), offered with at least :data:`essence.reconstructors.mlp.MIN_MODELS_MLP`
    models like the MLPs. ``idx`` ``(k,)`` pooled positions, ``member_of`` ``(M,)`` member of each pooled item.
    Measured on the five metabench pools (``benchmarks/suite.py --seeds 0 1 2``, README "Suites"): the best
    single kind by CV on ARC, TruthfulQA and WinoGrande, and a partner in most members' averages."""
    from ..reconstructors.kernel import KernelReconstructor
    from ..reconstructors.mlp import MIN_MODELS_MLP

    if n_models < MIN_MODELS_MLP:
        return {}
    own = [] if b is None else np.flatnonzero(np.asarray(member_of)[np.asarray(idx, dtype=np.intp)] == b).tolist()
    return {"kernel": lambda: KernelReconstructor(own=own)}


def pick_by_cv(train: Suite, val: Suite, choices, seed: int = 0, folds: int = 5) -> list[float]:
    """``(len(choices),)`` CV errors (pp): for each choice (``(k,)`` pooled positions), the mean over members of
    the out-of-fold RMSE of one fixed reconstructor on all chosen items, ``folds``-fold over the training and
    validation models together (the same folds for every choice). The reconstructor is the ``kernel`` kind
    (:func:`kernel_candidates`) from :data:`essence.reconstructors.mlp.MIN_MODELS_MLP` models up,
    ridge on all chosen items below that (the kind every suite artifact may choose)."""
    from ..data.metrics import rmse
    from ..reconstructors.choose import oof_predictions
    from ..reconstructors.base import reconstructor_class

    R = np.vstack([train.pooled().responses, val.pooled().responses])
    Y = np.vstack([train.targets, val.targets])
    folds = max(2, min(int(folds), R.shape[0]))
    out = []
    for idx in choices:
        idx = np.asarray(idx, dtype=np.intp)
        X = R[:, idx]
        errs = []
        for b in range(Y.shape[1]):
            make = kernel_candidates(idx, train.member_of, b, X.shape[0]).get("kernel")
            if make is None:
                make = reconstructor_class("ridge")
            errs.append(rmse(Y[:, b], oof_predictions(make, X, Y[:, b], folds, seed, R)))
        out.append(float(np.mean(errs)))
    return out


def _joint_searches(train: Suite, val: Suite, k: int, seed: int, floor: int, progress: bool, **params):
    """``searches`` joint searches (``params``; 3 by default) and the one :func:`pick_by_cv` prefers."""
    n = params["searches"] = whole_number("searches", params.get("searches", JOINT_DEFAULTS["searches"]), 1)
    runs = [_joint_essence(train, val, k, seed + SEARCH_SEED_STEP * i, floor, progress, **params) for i in range(n)]
    if n == 1:
        return runs[0]
    cv = pick_by_cv(train, val, [r[0] for r in runs], seed=seed)
    best = int(np.argmin(cv))
    idx, info = runs[best]
    info["searches"] = [{"seed": seed + SEARCH_SEED_STEP * i, "cv_rmse": round(c, 5),
                         "budget": budget_split(train, r[0]), "fitness_rmse_mean": r[1]["fitness_rmse"]["mean"]}
                        for i, (c, r) in enumerate(zip(cv, runs))]
    info["picked_search"] = best
    return idx, info


def _too_few_to_search(train: Suite, val: Suite, params: dict) -> dict | None:
    """The joint EssenceBench's ``params`` checked (InputError naming the first that is not one of its settings);
    ``None`` when it may search, else its ``fallback`` record, with an EssenceWarning, when the training +
    validation models are fewer than ``min_search_models``."""
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
    from ..search.genetic import genetic_search
    from ..search.redundancy import coarse_filter

    s = {**JOINT_DEFAULTS, **params}
    refine = {"rounds": whole_number("rounds", s["rounds"], 0), "elites_ebm": whole_number("ebm_elites", s["ebm_elites"], 1),
              "population": whole_number("group_population", s["group_population"], 2),
              "generations": whole_number("group_generations", s["group_generations"], 0)}
    if s["weighting"] not in WEIGHTINGS:
        raise InputError(f"--param weighting={s['weighting']!r}: choose one of {', '.join(WEIGHTINGS)}")
    if s["init"] not in ("random", "balanced", "members"):
        raise InputError(f"--param init={s['init']!r}: choose random (uniform over the filtered pool, so each "
                         "member starts with a share in proportion to its pool), balanced (k / members each) or "
                         "members (the union of each member's own search at k / members)")
    if s["fitness_models"] not in ("train", "train+val", "val", "loo"):
        raise InputError(f"--param fitness_models={s['fitness_models']!r}: choose train (in-sample ridge, the "
                         "default), train+val (in-sample on the training and validation models), loo (leave-one-out "
                         "ridge on the training models) or val (validation models)")
    pooled_tr = train.pooled()
    R = pooled_tr.responses
    Y = train.targets
    if s["fitness_models"] == "train+val":  # the search's ridges fitted and scored on both parts
        R = np.vstack([R, val.pooled().responses])
        Y = np.vstack([Y, val.targets])
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
    fm_val = s["fitness_models"] == "val"
    lam = _own_weight(s["own_weight"], s["fitness_models"], "own_weight" in params)
    own_extra = _own_extra(train, pool, s["own_models"], s["fitness_models"], lam)
    fit = JointRidgeFitness(R[:, pool], Y, member_of,
                            R_fit=val.pooled().responses[:, pool] if fm_val else None,
                            Y_fit=val.targets if fm_val else None, alpha=float(s["ridge_alpha"]),
                            weighting=s["weighting"], floor=floor, k_ref=k, seed=seed,
                            loo=s["fitness_models"] == "loo", mean_weight=float(s["mean_weight"]),
                            own_weight=lam, own_extra=own_extra)
    rng = np.random.default_rng(seed)
    P = int(s["population"])
    if s["init"] == "balanced":  # every member starts with an equal share (at least the floor), no penalty beyond it
        share = min(max(floor, k // len(train.members)), int(counts.min()))
        init = _floor_masks(P, pool.size, k, member_of, share, rng)
    elif s["init"] == "members":
        init = _member_unions(R[:, pool], Y, member_of, k, s, rng, progress, n_starts=min(10, P))
    else:
        init = _floor_masks(P, pool.size, k, member_of, floor, rng) if floor else None
    ga = genetic_search(None, None, None, None, k, population=P, generations=int(s["generations"]),
                        elites=int(s["elites"]), tournament=int(s["tournament"]), patience=s["patience"],
                        init=init, seed=rng, progress=progress, desc="joint GA", fitness=fit)
    local, refinement = ga.best, []
    rounds = refine.pop("rounds")
    if rounds:
        from .refine import refine_rounds

        local, refinement = refine_rounds(fit, R[:, pool], Y, ga, ga.best, k, rounds, rng, **refine,
                                          elites=int(s["elites"]), tournament=int(s["tournament"]), progress=progress)
    best = np.sort(pool[local])
    mask = np.zeros((1, pool.size), dtype=bool)
    mask[0, local] = True
    per = fit.member_rmse(mask)[0]
    info = {
        "settings": {**{key: s[key] for key in JOINT_DEFAULTS}, "own_weight": fit.own_weight},
        "pool_size": int(pool.size), "pool_by_benchmark": dict(zip(train.names, counts.tolist())),
        "filter": {"n_dropped": int(R.shape[1] - pool.size)},
        "ga": {"generations_run": ga.generations_run, "evaluations": ga.evaluations, "seconds": round(ga.seconds, 3),
               "history": ga.history_summary(every=max(1, ga.generations_run // 30))},
        **({"refinement": refinement} if rounds else {}),
        "fitness_rmse": {**{n: round(float(v), 5) for n, v in zip(train.names, per[:-1])},
                         "mean": round(float(per[-1]), 5)},
        "reference_rmse": {**{n: round(float(v), 5) for n, v in zip(train.names, fit.ref[:-1])},
                           "mean": round(float(fit.ref[-1]), 5)},
    }
    return best, info
