"""EssenceBench step 2: a genetic search over k-subsets (``(M,)`` bool masks) of a pool; same seed, same subset."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from tqdm.auto import tqdm

from ..data._runtime import single_thread
from ..data.checks import Real, Whole, check_params
from ..data.errors import InputError
from ..reconstructors.tables import Table1D

__all__ = ["GAConfig", "GAResult", "genetic_search", "repair", "random_masks"]


def _lowest_k(keys: np.ndarray, k: int) -> np.ndarray:
    """``(P, M)`` bool: True at the ``k`` smallest keys of each row."""
    if k == keys.shape[1]:
        return np.ones(keys.shape, dtype=bool)
    out = np.zeros(keys.shape, dtype=bool)
    np.put_along_axis(out, np.argpartition(keys, k - 1, axis=1)[:, :k], True, axis=1)
    return out


def repair(masks, k: int, rng) -> np.ndarray:
    """A new ``(P, M)`` bool array: each row of ``masks`` with exactly ``k`` ones, fewest cells changed at random."""
    masks = np.asarray(masks, dtype=bool)
    if masks.ndim != 2:
        raise InputError(f"masks: expected (P, M), got shape {masks.shape}")
    P, M = masks.shape
    if not 1 <= k <= M:
        raise InputError(f"k: {k} must be between 1 and the {M} items of the masks")
    return _lowest_k(np.random.default_rng(rng).random((P, M)) + (~masks), k)


def random_masks(P: int, M: int, k: int, rng) -> np.ndarray:
    """``(P, M)`` bool: ``P`` uniformly random k-subsets of ``M`` items."""
    return _lowest_k(np.random.default_rng(rng).random((P, M)), k)


@dataclass
class GAResult:
    """Outcome of :func:`genetic_search`: ``best`` ``(k,)`` sorted pool positions, ``best_fitness`` (-RMSE, pp);
    ``population`` ``(P, M)`` fittest first, its ``fitness`` ``(P,)``; ``history`` / ``mean_history``
    ``(generations_run + 1,)`` best / mean fitness per generation; ``ruler``: the GAM ruler, if any."""

    best: np.ndarray
    best_fitness: float
    population: np.ndarray
    fitness: np.ndarray
    history: np.ndarray
    mean_history: np.ndarray
    generations_run: int
    evaluations: int
    seconds: float
    ruler: Table1D | None = None
    stopped_early: bool = False

    def elite_masks(self, n: int) -> np.ndarray:
        """The ``n`` fittest distinct masks of the final population, ``(<= n, M)`` bool, fittest first."""
        _, first = np.unique(np.packbits(self.population, axis=1), axis=0, return_index=True)
        return self.population[np.sort(first)[:n]]

    def history_summary(self, every: int = 50) -> dict:
        """JSON-able best / mean fitness every ``every`` generations (and the last one)."""
        idx = np.unique(np.r_[np.arange(0, self.history.size, every), self.history.size - 1])
        return {"generation": idx.tolist(), "best_fitness": [round(float(v), 5) for v in self.history[idx]],
                "mean_fitness": [round(float(v), 5) for v in self.mean_history[idx]]}


@dataclass(frozen=True)
class GAConfig:
    """The search's settings; ``mutation_rate`` None: ``1/k``; ``patience`` None: no early stop."""

    population: int = 200
    generations: int = 300
    tournament: int = 3
    elites: int = 20
    mutation_rate: float | None = None
    patience: int | None = None

    _domains: ClassVar[dict] = {"population": Whole(2), "generations": Whole(0), "tournament": Whole(1),
                                "elites": Whole(0), "mutation_rate": Real(0.0, 1.0, open_min=True, none=True),
                                "patience": Whole(1, none=True)}

    def check(self) -> "GAConfig":
        """InputError naming the first setting outside its domain (elites must be fewer than the population)."""
        check_params(self)
        if self.elites >= self.population:
            raise InputError(f"elites: {self.elites} must be smaller than population ({self.population})")
        return self


def genetic_search(fitness, k: int, config: GAConfig = GAConfig(), *, init=None, seed=0, progress: bool = False,
                   desc: str = "GA") -> GAResult:
    """The fittest k-subset of a pool under ``fitness`` (``n_items`` ``M`` and ``__call__(masks (P, M)) -> (P,)``).
    ``init``: optional ``(P0, M)`` bool masks or ``(P0, k)`` positions seeding the population."""
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    M = fitness.n_items
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= M:
        raise InputError(f"k: must be a whole number between 1 and the {M} pool items, got {k!r}; lower k")
    k = int(k)
    config.check()
    P, G, T, E = (int(v) for v in (config.population, config.generations, config.tournament, config.elites))
    rate = 1.0 / k if config.mutation_rate is None else float(config.mutation_rate)

    pop = random_masks(P, M, k, rng)
    if init is not None:
        seeds = _init_masks(init, M)[:P]
        pop[: seeds.shape[0]] = repair(seeds, k, rng)
    fv = fitness(pop)
    evaluations, stopped, since = P, False, 0
    order = np.argsort(-fv, kind="stable")
    pop, fv = pop[order], fv[order]
    history, mean_hist = [fv[0]], [_mean_finite(fv)]
    with tqdm(total=G, desc=desc, unit="gen", disable=not progress, leave=False) as bar, single_thread():
        for gen in range(1, G + 1 if M > k else 1):
            contestants = rng.integers(0, P, size=(2, P - E, T))  # both parents' tournaments at once
            winners = np.take_along_axis(contestants, np.argmax(fv[contestants], axis=2)[..., None], axis=2)[..., 0]
            A, B = pop[winners[0]], pop[winners[1]]
            xi = rng.random((P - E, M)) < 0.5
            child = (A & xi) | (B & ~xi)
            child ^= rng.random((P - E, M)) < rate
            child = repair(child, k, rng)
            evaluations += P - E
            pop = np.concatenate([pop[:E], child])
            fv = np.concatenate([fv[:E], fitness(child)])
            order = np.argsort(-fv, kind="stable")
            pop, fv = pop[order], fv[order]
            since = 0 if fv[0] > history[-1] else since + 1
            history.append(fv[0])
            mean_hist.append(_mean_finite(fv))
            bar.update(1)
            if gen % 25 == 0:
                bar.set_postfix(rmse=f"{-fv[0]:.3f}")
            if config.patience is not None and since >= config.patience:
                stopped = True
                break
    return GAResult(
        best=np.flatnonzero(pop[0]), best_fitness=float(fv[0]), population=pop, fitness=fv,
        history=np.asarray(history, dtype=np.float64), mean_history=np.asarray(mean_hist, dtype=np.float64),
        generations_run=len(history) - 1, evaluations=evaluations, seconds=time.perf_counter() - t0,
        ruler=getattr(fitness, "ruler", None), stopped_early=stopped)


def _mean_finite(fv: np.ndarray) -> float:
    finite = np.isfinite(fv)
    return float(np.mean(fv[finite])) if finite.any() else -np.inf


def _init_masks(init, M: int) -> np.ndarray:
    a = np.atleast_2d(np.asarray(init))
    if a.dtype == bool:
        if a.shape[1] != M:
            raise InputError(f"init: masks have {a.shape[1]} columns, the pool has {M} items")
        return a
    pos, a = a.astype(np.intp), np.zeros((a.shape[0], M), dtype=bool)
    if pos.size and (pos.min() < 0 or pos.max() >= M):
        raise InputError(f"init: positions must be in [0, {M})")
    np.put_along_axis(a, pos, True, axis=1)
    return a
