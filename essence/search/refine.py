"""EssenceBench step 3: attribution-guided refinement, one loop for a benchmark and a suite."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Callable, ClassVar

import numpy as np

from ..data.checks import Flag, Real, Settings, Whole
from .attribution import attribution_groups, ebm_attribution
from .genetic import GAConfig, GAResult, genetic_search

__all__ = ["RefineConfig", "refine", "suite_attribution", "benchmark_attribution", "GroupFitness"]


@dataclass(frozen=True)
class RefineConfig(Settings):
    """Refinement settings (``rounds`` 0: plain GA; group GA sizes None: derived from the main GA's)."""

    rounds: int = 2
    group_fraction: float = 0.75
    group_population: int | None = None
    group_generations: int | None = None
    seed_groups_with_best: bool = True
    ebm_elites: int = 6
    ebm_max_models: int | None = 1000
    ebm_max_rounds: int = 2000

    _domains: ClassVar[dict] = {"rounds": Whole(0), "group_fraction": Real(0.0, 1.0, open_min=True),
                                "group_population": Whole(2, none=True), "group_generations": Whole(0, none=True),
                                "seed_groups_with_best": Flag(), "ebm_elites": Whole(1),
                                "ebm_max_models": Whole(10, none=True), "ebm_max_rounds": Whole(1)}


class GroupFitness:
    """``fitness`` on the items ``group`` ``(G,)`` of the pool: ``(P, G)`` masks scored as ``(P, M)`` pool masks."""

    def __init__(self, fitness, group):
        self.fitness = fitness
        self.group = np.asarray(group, dtype=np.intp)
        self.n_items = int(self.group.size)

    def __call__(self, masks) -> np.ndarray:
        masks = np.asarray(masks, dtype=bool)
        full = np.zeros((masks.shape[0], self.fitness.n_items), dtype=bool)
        full[:, self.group] = masks
        return self.fitness(full)


def suite_attribution(R, Y, config: RefineConfig, seed=0, progress: bool = False) -> Callable:
    """A suite's ``attribute``: the sum over members of their EBM attributions over the score's sd; ``Y`` ``(n, B)``."""
    Y = np.asarray(Y, dtype=np.float64)
    sd = np.where(Y.std(axis=0) > 0, Y.std(axis=0), 1.0)

    def attribute(masks):
        A = np.zeros(np.asarray(R).shape[1])
        t0 = time.perf_counter()
        for b in range(Y.shape[1]):
            att = ebm_attribution(R, Y[:, b], masks, max_models=config.ebm_max_models, seed=seed, progress=progress,
                                  max_rounds=config.ebm_max_rounds)
            A += att.attribution / sd[b]
        return A, {"ebms": int(Y.shape[1] * np.asarray(masks).shape[0]), "seconds": round(time.perf_counter() - t0, 3)}

    return attribute


def benchmark_attribution(R, y, config: RefineConfig, seed=0, progress: bool = False) -> Callable:
    """One benchmark's ``attribute``: elite masks -> ``(A (M,) pp, record)`` on ``R`` ``(n, M)``, ``y`` ``(n,)``."""

    def attribute(masks):
        att = ebm_attribution(R, y, masks, max_models=config.ebm_max_models, seed=seed, progress=progress,
                              max_rounds=config.ebm_max_rounds)
        return att.attribution, {"ebm_models": att.n_models, "ebm_elites": int(att.per_elite.shape[0]),
                                 "seconds": round(att.seconds, 3)}

    return attribute


def refine(pool_fitness, group_fitness: Callable, attribute: Callable, ga: GAResult, best, k: int,
           config: RefineConfig, ga_config: GAConfig, rng, progress: bool = False,
           describe: Callable | None = None) -> tuple[np.ndarray, list]:
    """``(best (k,) sorted pool positions, per-round records)``; the global best changes only for a higher pool
    fitness. ``group_fitness``: group positions -> a fitness on them; ``attribute``: elite masks -> ``(A (M,),
    record)``; ``ga``: the main GA's result; ``describe``: optional ``candidate -> dict`` for each record."""
    M = pool_fitness.n_items

    def error(local) -> float:
        mask = np.zeros((1, M), dtype=bool)
        mask[0, local] = True
        return float(-pool_fitness(mask)[0])

    best = np.sort(np.asarray(best, dtype=np.intp))
    best_err = error(best)
    elite_masks = ga.elite_masks(config.ebm_elites)
    gp = config.group_population if config.group_population is not None else max(60, ga_config.population // 3)
    gg = config.group_generations if config.group_generations is not None else max(200, ga_config.generations // 2)
    group_ga = replace(ga_config, population=int(gp), generations=int(gg), elites=min(ga_config.elites, int(gp) - 1))
    records = []
    for r in range(int(config.rounds) if M > k else 0):
        A, att = attribute(elite_masks)
        groups = attribution_groups(A, k, seed=rng, group_fraction=config.group_fraction)
        t0 = time.perf_counter()
        results = {}
        for name, g in groups.items():
            init = np.isin(g, best)[None, :] if config.seed_groups_with_best else None
            res = genetic_search(group_fitness(g), k, group_ga, init=init, seed=rng, progress=progress,
                                 desc=f"GA round {r + 1} ({name})")
            results[name] = (g[res.best], error(g[res.best]), res, g)
        winner = min(results, key=lambda n: (results[n][1], n))
        cand, err, res, g = results[winner]
        improved = err < best_err
        if improved:
            best, best_err = np.sort(cand), err
        em = res.elite_masks(config.ebm_elites)
        elite_masks = np.zeros((em.shape[0], M), dtype=bool)
        elite_masks[:, g] = em
        records.append({"round": r + 1, "best_group": winner, "candidate_fitness_rmse": round(err, 5),
                        "group_fitness_rmse": {n: round(v[1], 5) for n, v in results.items()},
                        "improved_global_best": bool(improved), "global_best_fitness_rmse": round(best_err, 5),
                        "attribution": att, "group_ga_seconds": round(time.perf_counter() - t0, 3),
                        **(describe(cand) if describe else {})})
    return best, records
