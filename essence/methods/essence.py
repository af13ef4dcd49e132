"""``essence``: EssenceBench (arXiv 2510.10457) from the stages of :mod:`essence.search`."""

from __future__ import annotations

import time

import numpy as np

from ..data.checks import store_params
from ..reconstructors.choose import choose_on_validation
from ..reconstructors.simple import reconstructor_makers
from ..search.filter import FilterConfig, build_pool
from ..search.fitness import FitnessConfig, pool_fitness
from ..search.genetic import GAConfig, genetic_search
from ..search.refine import RefineConfig, benchmark_attribution, refine
from .base import Selector

__all__ = ["EssenceSelector"]


class EssenceSelector(Selector):
    """EssenceBench item selection; ``seed`` seeds every draw. ``filter``, ``fitness``, ``ga``, ``refine``: the
    stages' settings (``make_method("essence", k, generations=100)`` sets one field of one of them). ``info_``
    records the filter, the GA's fitness history, each refinement round and the seconds per stage."""

    name = "essence"
    signal = "responses+texts"
    _configs = {"filter": FilterConfig, "fitness": FitnessConfig, "ga": GAConfig, "refine": RefineConfig}

    def __init__(self, k: int, seed: int = 0, progress: bool = True, filter: FilterConfig = FilterConfig(),
                 fitness: FitnessConfig = FitnessConfig(), ga: GAConfig = GAConfig(),
                 refine: RefineConfig = RefineConfig()):
        store_params(self, locals())

    def select(self, train, val) -> np.ndarray:
        k = int(self.k)
        rng = np.random.default_rng(self.seed)
        pool, record = build_pool(train, k, self.filter, seed=self.seed, progress=self.progress)
        seconds = record.pop("seconds")
        self.info_.update(record)
        R_tr, R_va = train.responses[:, pool], val.responses[:, pool]
        make, models = pool_fitness(self.fitness, R_tr, train.target, R_va, val.target, k)
        fit = make(np.arange(pool.size))
        t0 = time.perf_counter()
        ga = genetic_search(fit, k, self.ga, seed=rng, progress=self.progress, desc="GA (pool)")
        self.info_["ga"] = {
            "fitness": self.fitness.kind, "fitness_models": models, "pool_size": int(pool.size), "k": k,
            "generations_run": ga.generations_run, "stopped_early": ga.stopped_early, "evaluations": ga.evaluations,
            "seconds": round(ga.seconds, 3), "best_fitness_rmse": round(-ga.best_fitness, 5),
            "history": ga.history_summary(every=max(1, ga.generations_run // 40))}
        if pool.size == k and self.refine.rounds:
            self.info_["refinement_note"] = "pool size equals k: nothing to refine"

        def val_rmse(local) -> dict:  # what the user would get: the best candidate reconstructor's validation RMSE
            _, _, scores = choose_on_validation(self.reconstructor_candidates(train, local), R_tr[:, local],
                                                train.target, R_va[:, local], val.target)
            return {"val_rmse": round(min(v for v in scores.values() if isinstance(v, float)), 5)}

        attribute = benchmark_attribution(R_tr, train.target, self.refine, seed=rng, progress=self.progress)
        best, rounds = refine(fit, make, attribute, ga, ga.best, k, self.refine, self.ga, rng, progress=self.progress,
                              describe=val_rmse)
        trace = [{"stage": "ga", "fitness_rmse": round(-ga.best_fitness, 5), **val_rmse(ga.best)}]
        for r in rounds:  # the global best after each round, by the pool fitness
            val = r["val_rmse"] if r["improved_global_best"] else trace[-1]["val_rmse"]
            trace.append({"stage": f"round {r['round']}", "fitness_rmse": r["global_best_fitness_rmse"], "val_rmse": val})
        self.info_.update(rounds=rounds, val_rmse_trace=trace)
        self.info_["seconds"] = {**seconds, "search": round(time.perf_counter() - t0, 3)}
        return np.sort(pool[best])

    def reconstructor_candidates(self, train, idx) -> dict:
        return reconstructor_makers(n_splines=self.fitness.gam_splines, lam=self.fitness.gam_lam)
