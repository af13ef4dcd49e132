"""``essence``: EssenceBench (arXiv 2510.10457): coarse redundancy filter, genetic search, and
EBM-attribution-guided refinement.

Stages (each one's definition lives in :mod:`essence.search`):

1. **filter** (:func:`~essence.search.filter.build_pool`, :class:`~essence.search.filter.FilterConfig`):
   pre-filter and pre-screen (whole benchmarks above ``max_pool`` items), then drop items text- or
   rank-redundant with an earlier kept item and items constant over the training models.
2. **GA** (:func:`~essence.search.genetic.genetic_search`, :class:`~essence.search.genetic.GAConfig`) over
   k-subsets of the pool, under the fitness of :class:`~essence.search.fitness.FitnessConfig`.
3. **refinement** (:func:`~essence.search.refine.refine`, :class:`~essence.search.refine.RefineConfig`): EBM
   attributions from the GA's elites split the pool into High / Low / Random groups; a GA in each; the best
   subset over all stages is kept by the pool fitness.

**Fitness.** ``kind="gam"`` is the paper's: -RMSE on validation models of a GAM ruler on the subset accuracy,
fitted once per GA run on training models. ``kind="ridge"`` (the default) scores a ridge regression on the
subset's items fitted on the training models, in-sample when there are at least ``10 k`` of them, else by
leave-one-out over training + validation models. The paper's ruler only rewards subsets whose plain mean tracks
the pool mean, and scoring ~400 validation models over 10^5 candidates overfits them (docs/architecture.md,
"Where we depart from the papers"). Only training and validation models influence any choice.
"""

from __future__ import annotations

import time

import numpy as np

from ..reconstructors.choose import choose_on_validation
from ..reconstructors.simple import reconstructor_makers
from ..search.filter import FilterConfig
from ..search.fitness import FitnessConfig
from ..search.genetic import GAConfig
from ..search.refine import RefineConfig
from .base import Selector

__all__ = ["EssenceSelector"]


class EssenceSelector(Selector):
    """EssenceBench item selection.

    Parameters
    ----------
    k : int
        Items to keep.
    seed : int
        Seeds every random draw (GA, EBM model subsample, EBM fits, random group).
    progress : bool
        tqdm bars for the filter, GA runs and EBM fits.
    filter, fitness, ga, refine : the stages' settings (:class:`~essence.search.filter.FilterConfig`,
        :class:`~essence.search.fitness.FitnessConfig`, :class:`~essence.search.genetic.GAConfig`,
        :class:`~essence.search.refine.RefineConfig`). ``make_method("essence", k, generations=100)`` sets one
        field of one of them.

    After ``fit``: ``items_``, ``reconstructor_`` (chosen by cross-validation, see
    :meth:`essence.methods.base.Selector.fit`), ``info_`` (JSON-able: the filter's record, the GA's fitness
    history, each refinement round, seconds per stage).
    """

    name = "essence"
    signal = "responses+texts"
    _configs = {"filter": FilterConfig, "fitness": FitnessConfig, "ga": GAConfig, "refine": RefineConfig}

    def __init__(self, k: int, seed: int = 0, progress: bool = True, filter: FilterConfig = FilterConfig(),
                 fitness: FitnessConfig = FitnessConfig(), ga: GAConfig = GAConfig(),
                 refine: RefineConfig = RefineConfig()):
        super().__init__(k, seed, progress)
        self.filter = filter
        self.fitness = fitness
        self.ga = ga
        self.refine = refine

    def select(self, train, val) -> np.ndarray:
        """The three stages; returns the best subset, ``(k,)`` increasing positions into ``train.items``."""
        from ..search.filter import build_pool
        from ..search.fitness import pool_fitness
        from ..search.genetic import genetic_search
        from ..search.refine import benchmark_attribution, refine

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
            "history": ga.history_summary(every=max(1, ga.generations_run // 40)),
        }
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
        """The GAM on the subset score (the paper's), ridge on the chosen items' responses, and ridge followed by
        a GAM on its index (ours, :class:`~essence.reconstructors.simple.RidgeGAMReconstructor`)."""
        return reconstructor_makers(n_splines=self.fitness.gam_splines, lam=self.fitness.gam_lam)
