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

Fitness is ``-RMSE`` (pp). The paper's is :class:`SubsetFitness`: a fixed GAM ruler ``g`` on the subset
accuracy, fitted once per GA run on the training models, scored on the validation models.
:class:`RidgeFitness` (not in the paper) scores a ridge regression on the subset's items instead. Every
random draw comes from one ``numpy.random.Generator`` seeded by ``seed``: the same seed gives the same
subset, bit for bit (the products run on one BLAS thread, so their summation order is fixed too).
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..data._runtime import single_thread

from ..reconstructors.tables import GAM_LAM, GAM_N_SPLINES, Table1D, fit_gam_table
from ..data.errors import InputError

__all__ = ["SubsetFitness", "RidgeFitness", "GAResult", "genetic_search", "repair", "random_masks", "as_generator"]


def as_generator(seed) -> np.random.Generator:
    """``seed`` (int, None or Generator) -> a Generator (a Generator is used as is, not copied)."""
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(seed)


def repair(masks, k: int, rng) -> np.ndarray:
    """Make every row of ``masks`` ``(P, M)`` hold exactly ``k`` ones, changing as few cells as possible.

    A row with more than ``k`` ones keeps ``k`` of them chosen uniformly at random; a row with fewer keeps
    all of them and gains ``k - ones`` items chosen uniformly among its zeros; a row with exactly ``k``
    is unchanged. One vectorised step: every cell gets a uniform key, ones get key in [0, 1) and zeros in
    [1, 2), and each row keeps its ``k`` smallest keys. Returns a new ``(P, M)`` bool array.
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


class SubsetFitness:
    """The GA's fixed ruler: ``fitness(m) = -RMSE_val(g(s(m)), y)`` in pp, for a whole population at once.

    ``s_i(m)`` is model i's accuracy on the items of mask ``m`` (pp, NaN cells left out of the mean).
    ``g`` is a GAM (``y ~ s(x)``, pygam via :func:`~essence.reconstructors.tables.fit_gam_table`, exported as a
    lookup table) fitted **once**, on the training models, with input ``x`` = each training model's mean
    accuracy over **all items of the candidate pool** (x 100) and target its full score (pp). Why the pool
    mean (as in the public port): a uniformly random k-subset's mean is an unbiased estimate of the pool
    mean, so ``g`` learnt on the pool mean is a fair ruler that does not depend on the candidate being
    judged; it is then held fixed, so every candidate of the run is judged by the same function, and the
    GA rewards subsets whose accuracy tracks the pool accuracy in the way ``g`` needs.

    Parameters
    ----------
    R_train : (n_train, M) scores in [0, 1] of the training models on the pool; NaN = missing.
    y_train : (n_train,) full scores, pp.
    R_val : (n_val, M) validation models' scores on the pool.
    y_val : (n_val,) full scores, pp.
    n_splines, lam : the GAM's spline count and penalty.
    """

    def __init__(self, R_train, y_train, R_val, y_val, n_splines: int = GAM_N_SPLINES, lam: float = GAM_LAM):
        R_train = _matrix(R_train, "R_train")
        R_val = _matrix(R_val, "R_val")
        y_train = _vector(y_train, R_train.shape[0], "y_train")
        y_val = _vector(y_val, R_val.shape[0], "y_val")
        if R_train.shape[1] != R_val.shape[1]:
            raise InputError(f"R_val: {R_val.shape[1]} items, but R_train has {R_train.shape[1]}; give both on the same pool")
        if R_val.shape[0] == 0:
            raise InputError("R_val: no validation models; the GA's fitness needs at least one")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a model with no answer: NaN, dropped below
            x = 100.0 * np.nanmean(R_train, axis=1)
        ok = np.isfinite(x)
        if ok.sum() < 2:
            raise InputError("R_train: fewer than two training models answered any pool item; cannot fit the ruler g")
        self.ruler: Table1D = fit_gam_table(x[ok], y_train[ok], n_splines=n_splines, lam=lam)
        self._interp = _uniform_interp(self.ruler.x, self.ruler.y)
        self.n_items = R_train.shape[1]
        self.y_val = y_val
        obs = ~np.isnan(R_val)
        self.has_missing = not bool(obs.all())
        # 0/1 data: float32 sums of at most 2^24 ones are exact and the product is twice as fast
        binary = bool(np.all((R_val[obs] == 0) | (R_val[obs] == 1)))
        self._dtype = np.float32 if binary and R_val.shape[1] < 2**24 else np.float64
        self._Rt = np.ascontiguousarray(np.where(obs, R_val, 0.0).T, dtype=self._dtype)  # (M, n_val)
        self._Ot = np.ascontiguousarray(obs.T, dtype=self._dtype) if self.has_missing else None  # (M, n_val)

    def subset_means(self, masks) -> np.ndarray:
        """``(P, n_val)``: each validation model's accuracy (pp) on each mask's items; NaN where a model
        answered none of them. ``masks`` is ``(P, M)`` bool. Two matrix products at most: sums
        ``masks @ R_val.T`` and, when cells are missing, counts ``masks @ observed.T``."""
        masks = np.asarray(masks)
        if masks.ndim != 2 or masks.shape[1] != self.n_items:
            raise InputError(f"masks: expected (P, {self.n_items}) bool, got shape {masks.shape}")
        W = masks.astype(self._dtype)
        S = (W @ self._Rt).astype(np.float64)
        if self.has_missing:
            cnt = (W @ self._Ot).astype(np.float64)
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.where(cnt > 0, 100.0 * S / cnt, np.nan)
        return S * (100.0 / masks.sum(axis=1, keepdims=True))

    def predict(self, masks) -> np.ndarray:
        """``(P, n_val)`` full-score estimates (pp): ``g`` of the subset means, clipped to [0, 100]."""
        means = self.subset_means(masks)
        pred = np.clip(self._interp(means), 0.0, 100.0)
        if self.has_missing:
            pred[np.isnan(means)] = np.nan
        return pred

    def rmse(self, masks) -> np.ndarray:
        """``(P,)`` validation RMSE (pp) of each mask; models with no answer on a mask are left out
        (``inf`` when no model is left)."""
        err = self.predict(masks) - self.y_val
        if self.has_missing:
            sq = np.where(np.isnan(err), 0.0, err * err)
            n = (~np.isnan(err)).sum(axis=1)
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.where(n > 0, np.sqrt(sq.sum(axis=1) / np.maximum(n, 1)), np.inf)
        return np.sqrt(np.mean(err * err, axis=1))

    def __call__(self, masks) -> np.ndarray:
        """``(P,)`` fitness = ``-rmse(masks)`` (higher is better)."""
        return -self.rmse(masks)


def mask_positions(masks, n_items: int) -> np.ndarray:
    """``(P, k)`` sorted item positions of each row of ``masks`` (``(P, n_items)`` bool, k items per row);
    InputError when the shape is wrong or the rows hold different numbers of items."""
    masks = np.asarray(masks, dtype=bool)
    if masks.ndim != 2 or masks.shape[1] != n_items:
        raise InputError(f"masks: expected (P, {n_items}) bool, got shape {masks.shape}")
    k = int(masks[0].sum()) if masks.shape[0] else 0
    if not (masks.sum(axis=1) == k).all():
        raise InputError("masks: every row must hold the same number of items")
    return np.nonzero(masks)[1].reshape(masks.shape[0], k)  # row-major: sorted positions per row


class RidgeFitness:
    """Alternative fitness (not the paper's): ``-RMSE`` (pp) of a ridge regression on the candidate's items.

    For each mask ``m`` a ridge ``y ~ b + X_m w`` (penalty ``alpha``, intercept unpenalised) is fitted on
    the training models, exactly like :class:`~essence.reconstructors.simple.RidgeReconstructor` with a fixed
    penalty (missing cells filled with the item's training mean), and scored on the fitness models:

    * ``R_fit is None``: in-sample on the training models, computed from the Gram matrix alone:
      ``SSE = y'y - 2 w'b + w'G_m w`` (no clipping), so a generation costs ``O(P k^3)`` whatever the
      number of models;
    * else: on the given models (e.g. validation), predictions ``W @ X_fit.T`` with ``W`` the ``(P, M)``
      matrix holding each mask's weights (clipped to [0, 100], like the reconstructor).

    Whole population at once: the ``(P, k, k)`` Gram blocks are gathered from the pool's ``(M, M)`` Gram
    matrix and solved in one batched ``numpy.linalg.solve`` (LU; batched conjugate gradients were tried
    and were slower at k = 100). Memory: ``8 M^2`` bytes for the Gram matrix
    (M = 5,000 pool items: 200 MB), so pools above ``max_items`` are refused.

    Why offer it: the GA's subset is reconstructed at the end by the better (on validation) of a GAM on
    the subset mean and ridge on the items. The paper's fixed ruler only rewards subsets whose plain mean
    tracks the pool mean; ridge fitness rewards subsets that predict the full score with item weights,
    which is what the ridge reconstructor then uses.
    """

    ruler = None

    def __init__(self, R_train, y_train, R_fit=None, y_fit=None, alpha: float = 1.0, max_items: int = 8000):
        X = _matrix(R_train, "R_train")
        y = _vector(y_train, X.shape[0], "y_train")
        if X.shape[1] > max_items:
            raise InputError(f"R_train: {X.shape[1]} pool items need a {X.shape[1]}^2 Gram matrix for ridge fitness; "
                             f"use fitness='gam' or shrink the pool below {max_items} items "
                             "(EssenceSelector: max_pool)")
        if not alpha > 0:
            raise InputError(f"alpha: the ridge penalty must be > 0, got {alpha}")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # an item no training model answered: filled with 0
            fill = np.nanmean(X, axis=0)
        fill = np.where(np.isnan(fill), 0.0, fill)
        X = np.where(np.isnan(X), fill, X)
        self.fill = fill
        self.mu = X.mean(axis=0)
        Xc = X - self.mu
        self.ym = float(y.mean())
        yc = y - self.ym
        self.alpha = float(alpha)
        self.n_train = X.shape[0]
        self.G = Xc.T @ Xc  # (M, M)
        self.b = Xc.T @ yc  # (M,)
        self.yy = float(yc @ yc)
        self.n_items = X.shape[1]
        self.in_sample = R_fit is None
        if not self.in_sample:
            Rf = _matrix(R_fit, "R_fit")
            if Rf.shape[1] != self.n_items:
                raise InputError(f"R_fit: {Rf.shape[1]} items, but R_train has {self.n_items}; give both on the same pool")
            self.y_fit = _vector(y_fit, Rf.shape[0], "y_fit")
            self._Xt = np.ascontiguousarray((np.where(np.isnan(Rf), fill, Rf) - self.mu).T)  # (M, n_fit)

    def restrict(self, cols) -> "RidgeFitness":
        """The same fitness on a sub-pool (``cols`` positions): slices the Gram matrix, no refit of anything."""
        cols = np.asarray(cols, dtype=np.intp)
        new = object.__new__(RidgeFitness)
        new.__dict__.update(self.__dict__)
        new.G = np.ascontiguousarray(self.G[np.ix_(cols, cols)])
        new.b = self.b[cols]
        new.fill, new.mu = self.fill[cols], self.mu[cols]
        new.n_items = cols.size
        if not self.in_sample:
            new._Xt = self._Xt[cols]
        return new

    def weights(self, masks) -> tuple[np.ndarray, np.ndarray]:
        """``(idx, w)``: ``(P, k)`` sorted item positions of each mask and their ridge weights (float64)."""
        idx = mask_positions(masks, self.n_items)
        k = idx.shape[1]
        M = self.n_items
        A = self.G.ravel().take(idx[:, :, None] * M + idx[:, None, :])  # (P, k, k) Gram blocks
        A[:, np.arange(k), np.arange(k)] += self.alpha
        w = np.linalg.solve(A, self.b[idx][:, :, None])[:, :, 0]
        return idx, w

    def rmse(self, masks) -> np.ndarray:
        """``(P,)`` RMSE (pp) of each mask's ridge on the fitness models (in-sample training models when
        no fitness models were given)."""
        idx, w = self.weights(masks)
        if self.in_sample:
            # at the ridge solution (G + aI) w = b:  SSE = y'y - w'b - a w'w
            sse = self.yy - np.einsum("pi,pi->p", w, self.b[idx]) - self.alpha * np.einsum("pi,pi->p", w, w)
            return np.sqrt(np.maximum(sse, 0.0) / self.n_train)
        W = np.zeros((idx.shape[0], self.n_items))
        np.put_along_axis(W, idx, w, axis=1)
        pred = np.clip(W @ self._Xt + self.ym, 0.0, 100.0)
        return np.sqrt(np.mean((pred - self.y_fit) ** 2, axis=1))

    def __call__(self, masks) -> np.ndarray:
        return -self.rmse(masks)


def _uniform_interp(x: np.ndarray, y: np.ndarray):
    """A function equal to ``np.interp(v, x, y)`` (constant beyond the ends); on a uniform grid it indexes
    directly instead of searching (several times faster on the GA's ``(P, n_val)`` arrays)."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    step = (x[-1] - x[0]) / (x.size - 1)
    if not np.allclose(np.diff(x), step, rtol=1e-9, atol=0):
        return lambda v: np.interp(v.ravel(), x, y).reshape(v.shape)
    x0, n, inv = x[0], x.size, 1.0 / step
    slope = np.r_[np.diff(y), 0.0]

    def f(v):
        pos = np.clip((np.asarray(v, dtype=np.float64) - x0) * inv, 0.0, n - 1.0)
        bad = np.isnan(pos)
        if bad.any():
            pos = np.where(bad, 0.0, pos)
        i = np.minimum(pos.astype(np.intp), n - 1)
        out = y[i] + (pos - i) * slope[i]
        if bad.any():
            out[bad] = np.nan
        return out

    return f


def _matrix(R, name: str) -> np.ndarray:
    R = np.asarray(R, dtype=np.float64)
    if R.ndim != 2:
        raise InputError(f"{name}: expected (n_models, n_items), got shape {R.shape}")
    return R


def _vector(y, n: int, name: str) -> np.ndarray:
    y = np.asarray(y, dtype=np.float64)
    if y.shape != (n,):
        raise InputError(f"{name}: shape {y.shape}, expected ({n},): one full score (pp) per model")
    if not np.isfinite(y).all():
        raise InputError(f"{name}: contains NaN or inf; give every model a finite full score")
    return y


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


def genetic_search(R_train, y_train, R_val, y_val, k: int, *, population: int = 200, generations: int = 1000,
                   tournament: int = 3, elites: int = 20, mutation_rate: float | None = None,
                   init=None, patience: int | None = None, seed=0, n_splines: int = GAM_N_SPLINES, lam: float = GAM_LAM,
                   progress: bool = False, desc: str = "GA", fitness=None) -> GAResult:
    """Search k-subsets of a pool of ``M`` items for the lowest validation RMSE under a fixed GAM ruler.

    Parameters
    ----------
    R_train : (n_train, M) training models' scores on the pool, [0, 1], NaN = missing (fits the ruler).
    y_train : (n_train,) full scores, pp.
    R_val : (n_val, M) validation models' scores on the pool (the fitness is computed on them).
    y_val : (n_val,) full scores, pp.
    k : subset size, ``1 <= k <= M``.
    population : individuals per generation ``P`` (>= 2).
    generations : number of generations (0 = score the initial population only).
    tournament : individuals per tournament (>= 1; 1 = uniform parent choice).
    elites : fittest individuals copied unchanged into the next generation (0 <= elites < population).
    mutation_rate : per-item flip probability; None = ``1/k`` (the paper's).
    init : optional ``(P0, M)`` bool masks (or ``(P0, k)`` int positions) placed in the initial
        population (repaired to k ones; the rest is uniformly random). Lets a refinement start from a
        known good subset.
    patience : stop when the best fitness has not improved for this many generations (None = never).
    seed : int or numpy Generator; all randomness comes from it.
    n_splines, lam : the ruler GAM's settings.
    fitness : a prebuilt fitness on the same pool (:class:`SubsetFitness`, :class:`RidgeFitness` or any
        object with ``n_items`` and ``__call__(masks (P, M) bool) -> (P,)``); then R_train, y_train, R_val,
        y_val are not used.
    progress : tqdm bar over generations. desc : its label.

    Returns
    -------
    GAResult
    """
    t0 = time.perf_counter()
    rng = as_generator(seed)
    fit = fitness if fitness is not None else SubsetFitness(R_train, y_train, R_val, y_val, n_splines, lam)
    M = fit.n_items
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= M:
        raise InputError(f"k: must be a whole number between 1 and the {M} pool items, got {k!r}; lower k")
    k = int(k)
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
