"""EssenceBench step 2: a genetic search over k-subsets of a candidate pool.

An individual is a boolean mask over the pool's ``M`` items with exactly ``k`` ones; a population is a
``(P, M)`` boolean matrix. One generation:

1. **elitism**: the ``elites`` fittest individuals pass unchanged;
2. **tournament selection**: each child draws two parents, each the fittest of ``tournament`` individuals
   drawn uniformly (with replacement) from the population;
3. **uniform crossover**: ``m_c = (m_a AND xi) OR (m_b AND NOT xi)``, ``xi ~ Bernoulli(0.5)`` per item;
4. **mutation**: ``m_c XOR lambda``, ``lambda ~ Bernoulli(mutation_rate)`` per item (default ``1/k``);
5. **repair** to exactly ``k`` ones (:func:`repair`);
6. the children are scored in **one vectorised step** (no Python loop over individuals); the elites'
   fitness is carried over.

Fitness is ``-RMSE`` (pp), from :mod:`essence.search.fitness`. Every random draw comes from one
``numpy.random.Generator`` seeded by ``seed``, and products run on one BLAS thread: the same seed gives the
same subset, bit for bit.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import ClassVar

import numpy as np

from ..data._runtime import single_thread
from ..data.checks import Real, Whole, check_params
from ..data.errors import InputError
from ..reconstructors.tables import Table1D

__all__ = ["GAConfig", "GAResult", "genetic_search", "repair", "random_masks", "as_generator"]


def as_generator(seed) -> np.random.Generator:
    """``seed`` (int, None or Generator) -> a Generator (a Generator is used as is, not copied)."""
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(seed)


def repair(masks, k: int, rng) -> np.ndarray:
    """Make every row of ``masks`` ``(P, M)`` hold exactly ``k`` ones, changing as few cells as possible.

    A row with more than ``k`` ones keeps ``k`` of them chosen uniformly at random; a row with fewer keeps
    all of them and gains ``k - ones`` items chosen uniformly among its zeros; a row with exactly ``k``
    is unchanged. Returns a new ``(P, M)`` bool array.
    """
    masks = np.asarray(masks, dtype=bool)
    if masks.ndim != 2:
        raise InputError(f"masks: expected (P, M), got shape {masks.shape}")
    P, M = masks.shape
    if not 1 <= k <= M:
        raise InputError(f"k: {k} must be between 1 and the {M} items of the masks")
    rng = as_generator(rng)
    keys = rng.random((P, M)) + (~masks)
    if k == M:
        return np.ones_like(masks)
    pick = np.argpartition(keys, k - 1, axis=1)[:, :k]
    out = np.zeros_like(masks)
    np.put_along_axis(out, pick, True, axis=1)
    return out


def random_masks(P: int, M: int, k: int, rng) -> np.ndarray:
    """``(P, M)`` bool: ``P`` uniformly random k-subsets of ``M`` items."""
    rng = as_generator(rng)
    keys = rng.random((P, M))
    if k == M:
        return np.ones((P, M), dtype=bool)
    pick = np.argpartition(keys, k - 1, axis=1)[:, :k]
    out = np.zeros((P, M), dtype=bool)
    np.put_along_axis(out, pick, True, axis=1)
    return out


@dataclass
class GAResult:
    """Outcome of :func:`genetic_search` (indices are positions into the pool's ``M`` columns).

    ``best``: ``(k,)`` sorted positions of the fittest subset; ``best_fitness``: its fitness (-RMSE, pp);
    ``population``: final ``(P, M)`` masks, fittest first; ``fitness``: their ``(P,)`` fitness;
    ``history``: best fitness after each generation ``(generations_run + 1,)`` (entry 0 = initial
    population); ``mean_history``: population mean fitness, same shape; ``evaluations``: individuals
    scored; ``seconds``: wall time; ``ruler``: the fixed ``g`` used.
    """

    best: np.ndarray
    best_fitness: float
    population: np.ndarray
    fitness: np.ndarray
    history: np.ndarray
    mean_history: np.ndarray
    generations_run: int
    evaluations: int
    seconds: float
    ruler: Table1D | None = None  # None for fitness objects without a ruler (RidgeFitness)
    stopped_early: bool = False
    extras: dict = field(default_factory=dict)

    def elite_masks(self, n: int) -> np.ndarray:
        """The ``n`` fittest *distinct* masks of the final population, ``(<= n, M)`` bool, fittest first."""
        _, first = np.unique(np.packbits(self.population, axis=1), axis=0, return_index=True)
        first = np.sort(first)  # population is sorted fittest first, keep that order
        return self.population[first[:n]]

    def history_summary(self, every: int = 50) -> dict:
        """JSON-able best / mean fitness every ``every`` generations (and the last one)."""
        idx = np.unique(np.r_[np.arange(0, self.history.size, every), self.history.size - 1])
        return {"generation": idx.tolist(), "best_fitness": [round(float(v), 5) for v in self.history[idx]],
                "mean_fitness": [round(float(v), 5) for v in self.mean_history[idx]]}


@dataclass(frozen=True)
class GAConfig:
    """The genetic search's settings: individuals per generation, generations (0 = score the initial population
    only), individuals per tournament (1 = uniform parent choice), fittest individuals carried unchanged,
    per-item flip probability (None = ``1/k``, the paper's) and early stopping after ``patience``
    generations without improvement (None = never)."""

    population: int = 200
    generations: int = 300
    tournament: int = 3
    elites: int = 20
    mutation_rate: float | None = None
    patience: int | None = None

    _domains: ClassVar[dict] = {"population": Whole(2), "generations": Whole(0), "tournament": Whole(1),
                                "elites": Whole(0), "mutation_rate": Real(0.0, 1.0, open_min=True, none=True),
                                "patience": Whole(1, none=True)}

    def replace(self, **changes) -> "GAConfig":
        """A copy with ``changes`` applied."""
        return replace(self, **changes)

    def check(self) -> "GAConfig":
        """InputError naming the first setting outside its domain (elites must be fewer than the population)."""
        check_params(self)
        if self.elites >= self.population:
            raise InputError(f"elites: {self.elites} must be smaller than population ({self.population})")
        return self


def genetic_search(fitness, k: int, config: GAConfig = GAConfig(), *, init=None, seed=0, progress: bool = False,
                   desc: str = "GA") -> GAResult:
    """Search k-subsets of a pool of ``M`` items for the fittest (lowest-RMSE) under ``fitness``.

    ``fitness``: an object with ``n_items`` (``M``) and ``__call__(masks (P, M) bool) -> (P,)`` fitness (-RMSE,
    pp), e.g. one of :mod:`essence.search.fitness`. ``init``: optional ``(P0, M)`` bool masks (or ``(P0, k)``
    positions) placed in the initial population, repaired to k ones. ``seed``: int or Generator.
    Returns a :class:`GAResult`.
    """
    t0 = time.perf_counter()
    rng = as_generator(seed)
    fit = fitness
    M = fit.n_items
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= M:
        raise InputError(f"k: must be a whole number between 1 and the {M} pool items, got {k!r}; lower k")
    k = int(k)
    population, generations, tournament, elites = (config.population, config.generations, config.tournament,
                                                   config.elites)
    mutation_rate, patience = config.mutation_rate, config.patience
    P, G, T, E = int(population), int(generations), int(tournament), int(elites)
    if P < 2:
        raise InputError(f"population: must be at least 2, got {population}")
    if G < 0:
        raise InputError(f"generations: must be >= 0, got {generations}")
    if T < 1:
        raise InputError(f"tournament: must be at least 1, got {tournament}")
    if not 0 <= E < P:
        raise InputError(f"elites: must be in [0, population), got {elites} with population {P}")
    rate = 1.0 / k if mutation_rate is None else float(mutation_rate)
    if not 0.0 <= rate <= 1.0:
        raise InputError(f"mutation_rate: must be a probability in [0, 1], got {mutation_rate}")

    pop = random_masks(P, M, k, rng)
    if init is not None:
        seeds = _init_masks(init, M)[:P]
        pop[: seeds.shape[0]] = repair(seeds, k, rng)
    fv = fit(pop)
    evaluations = P
    order = np.argsort(-fv, kind="stable")
    pop, fv = pop[order], fv[order]
    history = [fv[0]]
    mean_hist = [float(np.mean(fv[np.isfinite(fv)])) if np.isfinite(fv).any() else -np.inf]
    from tqdm.auto import tqdm

    bar = tqdm(total=G, desc=desc, unit="gen", disable=not progress, leave=False)
    try:
        with single_thread():
            history, mean_hist, pop, fv, evaluations, stopped = _evolve(
                fit, pop, fv, history, mean_hist, rng, k, M, P, G, T, E, rate, patience, evaluations, bar)
    finally:
        bar.close()
    return GAResult(
        best=np.flatnonzero(pop[0]), best_fitness=float(fv[0]), population=pop, fitness=fv,
        history=np.asarray(history, dtype=np.float64), mean_history=np.asarray(mean_hist, dtype=np.float64),
        generations_run=len(history) - 1, evaluations=evaluations, seconds=time.perf_counter() - t0,
        ruler=getattr(fit, "ruler", None), stopped_early=stopped,
    )


def _evolve(fit, pop, fv, history, mean_hist, rng, k, M, P, G, T, E, rate, patience, evaluations, bar):
    n_child = P - E
    stopped = False
    since = 0
    for gen in range(1, G + 1):
        if M == k:  # a single possible subset: nothing to search
            break
        # tournament selection for both parents at once: (2, n_child, T) contestants
        contestants = rng.integers(0, P, size=(2, n_child, T))
        winners = np.take_along_axis(contestants, np.argmax(fv[contestants], axis=2)[..., None], axis=2)[..., 0]
        A, B = pop[winners[0]], pop[winners[1]]
        xi = rng.random((n_child, M)) < 0.5
        child = (A & xi) | (B & ~xi)
        child ^= rng.random((n_child, M)) < rate
        child = repair(child, k, rng)
        cf = fit(child)
        evaluations += n_child
        pop = np.concatenate([pop[:E], child])
        fv = np.concatenate([fv[:E], cf])
        order = np.argsort(-fv, kind="stable")
        pop, fv = pop[order], fv[order]
        since = 0 if fv[0] > history[-1] else since + 1
        history.append(fv[0])
        finite = np.isfinite(fv)
        mean_hist.append(float(np.mean(fv[finite])) if finite.any() else -np.inf)
        bar.update(1)
        if gen % 25 == 0:
            bar.set_postfix(rmse=f"{-fv[0]:.3f}")
        if patience is not None and since >= patience:
            stopped = True
            break
    return history, mean_hist, pop, fv, evaluations, stopped


def _init_masks(init, M: int) -> np.ndarray:
    a = np.asarray(init)
    if a.ndim == 1:
        a = a[None, :]
    if a.dtype == bool:
        if a.shape[1] != M:
            raise InputError(f"init: masks have {a.shape[1]} columns, the pool has {M} items")
        return a
    a = a.astype(np.intp)
    if a.size and (a.min() < 0 or a.max() >= M):
        raise InputError(f"init: positions must be in [0, {M})")
    out = np.zeros((a.shape[0], M), dtype=bool)
    np.put_along_axis(out, a, True, axis=1)
    return out
