"""EssenceBench's attribution-guided refinement across a suite (the joint search's third stage).

One round, as :meth:`essence.methods.essence.EssenceSelector._refine_round` does for one benchmark, but
with every member at once:

1. **Attribution across the suite.** For each of the ``ebm_elites`` fittest distinct candidates of the
   last GA and for each member ``b``, an EBM learns member ``b``'s full score from the candidate's items
   (all members' items: an item of one benchmark may carry another's signal). Item ``l``'s attribution
   for member ``b``, ``A_lb`` (pp, :func:`essence.search.attribution.ebm_attribution`), is divided by the
   standard deviation of member ``b``'s scores over the training models, so that every benchmark counts
   alike whatever its spread (the fitness's ``relative`` weighting does the same for errors); the suite
   attribution is the sum over members, ``A_l = sum_b A_lb / sd(y_b)``.
2. **Groups.** High / Low / Random groups of ``max(k, ceil(group_fraction * M))`` pooled items
   (:func:`essence.search.attribution.attribution_groups`).
3. **A GA in each group** under the joint fitness restricted to the group (:class:`GroupFitness`: the
   group's masks scored as masks of the whole pool, so the per-member floor and the reference errors are
   the pool's), its initial population seeded with the best candidate so far (restricted to the group,
   repaired to k items). The group whose best candidate has the lowest pool fitness gives the round's
   candidate, and the next round's elites come from that group's GA.

The caller keeps the global best by pool fitness (:func:`refine_rounds`).
"""

from __future__ import annotations

import time

import numpy as np

from ..search.attribution import attribution_groups, ebm_attribution

__all__ = ["GroupFitness", "suite_attribution", "refine_rounds"]


class GroupFitness:
    """A fitness over a group of pooled items: ``(P, |group|)`` masks scored by ``fitness`` as ``(P, M)``
    masks of the whole pool (``group`` ``(G,)`` increasing pool positions)."""

    ruler = None

    def __init__(self, fitness, group):
        self.fitness = fitness
        self.group = np.asarray(group, dtype=np.intp)
        self.n_items = int(self.group.size)

    def __call__(self, masks) -> np.ndarray:
        masks = np.asarray(masks, dtype=bool)
        full = np.zeros((masks.shape[0], self.fitness.n_items), dtype=bool)
        full[:, self.group] = masks
        return self.fitness(full)


def suite_attribution(R, Y, masks, *, max_models: int | None = 1000, seed=0, progress: bool = False,
                      **ebm_params) -> tuple[np.ndarray, dict]:
    """``(A (M,), record)``: the suite attribution of every pooled item (module docstring, step 1).

    ``R`` ``(n_train, M)`` the training models' answers on the pool (NaN = missing), ``Y`` ``(n_train, B)``
    their member scores (pp), ``masks`` ``(n_elites, M)`` the elite candidates. ``A`` is unitless (pp over
    pp); 0 for items no elite holds. ``record``: seconds, EBMs fitted and the models each saw."""
    Y = np.asarray(Y, dtype=np.float64)
    sd = Y.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    A = np.zeros(np.asarray(R).shape[1])
    t0 = time.perf_counter()
    n_models = 0
    for b in range(Y.shape[1]):
        att = ebm_attribution(R, Y[:, b], masks, max_models=max_models, seed=seed, progress=progress, **ebm_params)
        A += att.attribution / sd[b]
        n_models = att.n_models
    return A, {"ebms": int(Y.shape[1] * np.asarray(masks).shape[0]), "ebm_models": int(n_models),
               "seconds": round(time.perf_counter() - t0, 3)}


def refine_rounds(fit, R, Y, ga, best, k: int, rounds: int, rng, *, elites_ebm: int = 3, group_fraction: float = 0.75,
                  population: int = 60, generations: int = 100, elites: int = 10, tournament: int = 3,
                  ebm_max_models: int | None = 1000, progress: bool = False) -> tuple[np.ndarray, list]:
    """``rounds`` refinement rounds after the joint GA (module docstring). Returns ``(best (k,) pool
    positions, per-round records)``; the global best is replaced only by a candidate of lower pool fitness
    ``fit.score`` (plus its floor penalty).

    ``fit``: the pool's :class:`~essence.suite.fitness.JointRidgeFitness`; ``R`` ``(n_train, M)``, ``Y``
    ``(n_train, B)``: the training models the EBMs learn from; ``ga``: the joint GA's result (its elites
    start the first round); ``best`` ``(k,)`` its best candidate."""
    from ..search.genetic import genetic_search

    M = fit.n_items

    def pool_error(local) -> float:
        mask = np.zeros((1, M), dtype=bool)
        mask[0, local] = True
        return float(-fit(mask)[0])

    best = np.sort(np.asarray(best, dtype=np.intp))
    best_err = pool_error(best)
    elite_masks = ga.elite_masks(elites_ebm)
    ebm_params = dict(interactions=0, outer_bags=1, learning_rate=0.04, max_rounds=2000, early_stopping_rounds=50,
                      smoothing_rounds=200, n_jobs=1)
    records = []
    for r in range(int(rounds) if M > k else 0):
        A, att = suite_attribution(R, Y, elite_masks, max_models=ebm_max_models, seed=rng, progress=progress,
                                   **ebm_params)
        groups = attribution_groups(A, k, seed=rng, group_fraction=group_fraction)
        t0 = time.perf_counter()
        results = {}
        for gname, g in groups.items():
            res = genetic_search(None, None, None, None, k, population=population, generations=generations,
                                 elites=min(elites, population - 1), tournament=tournament,
                                 init=np.isin(g, best)[None, :], seed=rng, progress=progress,
                                 desc=f"joint GA round {r + 1} ({gname})", fitness=GroupFitness(fit, g))
            results[gname] = (g[res.best], pool_error(g[res.best]), res, g)
        gbest = min(results, key=lambda n: (results[n][1], n))
        cand, err, res, g = results[gbest]
        improved = err < best_err
        if improved:
            best, best_err = np.sort(cand), err
        em = res.elite_masks(elites_ebm)
        elite_masks = np.zeros((em.shape[0], M), dtype=bool)
        elite_masks[:, g] = em
        records.append({"round": r + 1, "best_group": gbest, "candidate_fitness": round(err, 5),
                        "group_fitness": {n: round(v[1], 5) for n, v in results.items()},
                        "improved_global_best": bool(improved), "global_best_fitness": round(best_err, 5),
                        "attribution": att, "group_ga_seconds": round(time.perf_counter() - t0, 3)})
    return best, records
