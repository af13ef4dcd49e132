"""``essence``: EssenceBench (arXiv 2510.10457): coarse redundancy filter, genetic search, and
EBM-attribution-guided refinement.

Stages (see :mod:`essence.search` for each one's definition):

0. **pre-screen** (:func:`~essence.search.screen.screen_pool`), only for pools above ``max_pool`` items
   (whole benchmarks; never on the shipped pools): keep the ``max_pool`` most discriminating items,
   stratified by accuracy. Recorded in ``info_["screen"]`` (what was dropped) and ``info_["pool_size"]``.
1. **filter** (:func:`~essence.search.redundancy.coarse_filter`): drop items text-redundant
   (MiniLM cosine > ``tau_text``) or rank-redundant (Pearson over training models > ``tau_rank``) with an
   earlier kept item, and items constant over the training models; optionally a MetaBench-style
   pre-filter first (``max_item_mean``, ``min_item_pbis``).
2. **GA** (:func:`~essence.search.genetic.genetic_search`) over k-subsets of the kept pool.
3. **refinement** (``rounds`` times): EBM attributions from the ``ebm_elites`` best distinct subsets of
   the last GA (:func:`~essence.search.attribution.ebm_attribution`) split the pool into High / Low /
   Random groups; a GA runs in each group; the group whose best subset does best becomes the candidate and
   supplies the elites for the next round; the best subset over all stages is kept (by fitness, or by
   validation RMSE with ``keep_best="validation"``).

**Fitness.** ``fitness="gam"`` is the paper's: -RMSE on validation models of a GAM ruler on the subset
accuracy, fitted once per GA run on training models (:class:`~essence.search.genetic.SubsetFitness`).
``fitness="ridge"`` (the default) is our extension: -RMSE of a ridge regression on the subset's items
fitted on the training models (:class:`~essence.search.genetic.RidgeFitness`), scored in-sample on the
training models when there are at least ``10 k`` of them, else on validation models
(``fitness_models="auto"``). Why the default differs from the paper (measured with
``benchmarks/quality.py`` and with nested splits that never touch test models): the fixed ruler is learnt
on the *pool* mean, so it only rewards subsets whose plain mean tracks the pool mean, and scoring ~400
validation models over 10^5 candidate subsets overfits them; at k = 50 on the metabench pools it stays
near random's error, while ridge fitness on the training models gets 0.6-0.8 x random's.

**Comparing candidates.** Group GAs search different sub-pools; under ``fitness="gam"`` each fits its own
ruler, so their fitness values are not comparable. Every candidate is therefore re-scored by the pool
GA's fitness function (one ruler for all); ridge fitness gives a subset the same value in any sub-pool.
Validation RMSE of the refitted reconstructors is recorded in ``info_`` (``val_rmse_trace``) and used by
the base class to choose among the reconstructors: the GAM on the subset score (the paper's), ridge on
the items, and ridge followed by a GAM on its index (ours; it bends the linear index where the full
score floors or saturates, e.g. mmlu 2.37 -> 2.10 pp test RMSE at k = 50). Only training and validation
models influence any choice.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..data.checks import Flag, ListOf, OneOf, Real, Whole, check_params
from ..data.errors import InputError
from ..reconstructors.choose import choose_on_validation
from ..reconstructors.simple import reconstructor_makers
from ..reconstructors.tables import GAM_LAM, GAM_N_SPLINES
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
    tau_text : float, default 0.95
        Text-redundancy threshold (MiniLM cosine similarity). ``>= 1`` switches text redundancy off and
        loads no embedding model. Items without texts skip it regardless. A near-duplicate threshold: on
        the metabench pools the largest pairwise similarity is 0.93 (gsm8k), so nothing is dropped there.
    tau_rank : float, default 0.9
        Rank-redundancy threshold (Pearson correlation over training models, missing cells mean-imputed;
        the port's 0.9). ``>= 1`` switches it off. Drops 1 arc item and none of the other metabench pools;
        on alpaca_eval2 (46 training systems) it keeps 284 of 805 items.
    drop_constant : bool, default True
        Drop items constant over the training models: they say nothing about which model is stronger and
        have no rank correlation (lcb_codegen: 112 of 400 items).
    max_item_mean, min_item_pbis : float or None, default None
        Optional MetaBench pre-filter on training models (the port's 0.95 and 0.05): drop items with mean
        score above ``max_item_mean`` or |point-biserial| with the full score below ``min_item_pbis``.
        Off by default: the metabench pools already passed this filter on all models.
    max_pool : int or None, default 2000
        Pre-screen (:func:`~essence.search.screen.screen_pool`): a pool of more items than this (after the
        pre-filter) is shrunk to ``max_pool`` items before the redundancy filter, so that whole benchmarks
        (10^4 - 10^5 items) stay in the regime the GA works in (see :mod:`essence.search.screen` for why and
        ``benchmarks/speed.py --part screen`` for the measured loss). The shipped pools (at most 805 items)
        are never screened. None = no pre-screen (the ridge fitness then refuses pools above 8,000 items).
    screen : {"stratified", "pbis", "random"}, default "stratified"
        Pre-screen criterion: the most discriminating items (|point-biserial| with the full score) within
        each of ``screen_bins`` equal-count bins of item accuracy, the most discriminating overall, or a
        seeded uniform draw.
    screen_bins : int, default 10
        Accuracy bins of the "stratified" pre-screen.
    fitness : {"ridge", "gam"}, default "ridge"
        GA fitness: ridge on the subset's items, or the paper's fixed GAM ruler on the subset accuracy.
        See the module docstring for why the default is "ridge".
    fitness_models : {"auto", "train", "val", "train+val", "loo"}, default "auto"
        Models the fitness RMSE is computed on. "auto": in-sample training models for ridge fitness when
        ``n_train >= 10 k``, else "loo" (always validation for "gam", as in the paper). "loo": closed-form
        leave-one-out RMSE over training + validation models, best over ``loo_alphas``
        (:class:`~essence.search.fitness_cv.LOORidgeFitness`): 2-7 validation models cannot score 10^5 subsets.
    loo_alphas : tuple of float, default (1, 10, 100)
        Ridge penalties the "loo" fitness tries per subset (it keeps the best LOO RMSE).
    ridge_alpha : float, default 1.0
        Penalty of the ridge fitness (responses in [0, 1], scores in pp); 10 gave the same figures.
    population, generations, tournament, elites : int, default 200, 300, 3, 20
        The main GA: individuals per generation, generations, tournament size, individuals carried
        unchanged. The port runs 1000 generations; with nested validation splits 300 did as well or
        better (more search overfits the fitness models) at a third of the time.
    mutation_rate : float or None, default None
        Per-item flip probability; None = 1/k (the paper's).
    patience : int or None, default None
        Stop a GA run after this many generations without improvement (None = run all generations).
    rounds : int, default 2
        Attribution-guided refinement rounds (0 = plain GA); the port's 2. On gsm8k (nested splits,
        k = 50) 2 rounds lowered the error from 3.18 to 3.01 pp; 3 rounds with 10 EBM elites did not help.
    group_fraction : float, default 0.75
        Each attribution group holds ``max(k, ceil(group_fraction * pool))`` items (the port's 3/4).
    group_population, group_generations : int or None, default None
        GA settings inside a group; None = ``max(60, population // 3)`` and ``max(200, generations // 2)``
        (the port's rule).
    seed_groups_with_best : bool, default True
        Put the best subset so far (restricted to the group, repaired to k items) into each group GA's
        initial population, so that refinement starts from it.
    keep_best : {"fitness", "validation"}, default "fitness"
        How the global best is kept across refinement rounds: a round's candidate replaces it when its
        fitness is lower, or, with "validation", when the validation RMSE of its reconstructor (the best of
        those below, refitted on the training models) is lower. Under the paper's fitness, scored on
        validation models, "fitness" *is* keeping the global best on validation. Under the default ridge
        fitness on training models the two differ; "validation" was measured and is not the default: on
        gsm8k (k = 50, 3 seeds) it gave 3.17 pp test RMSE against 3.14, and on alpaca_eval2, whose splits
        leave 5 validation models, it blocked every refinement round and raised the test RMSE at k = 25
        from 3.51 to 5.78 pp and at k = 50 from 2.15 to 3.95 pp.
    ebm_elites : int, default 6
        Distinct elite subsets of the last GA that get an EBM each (one EBM costs 1-3 s here).
    ebm_max_models : int or None, default 1000
        Training models fed to each EBM (seeded subsample; None = all). An EBM's cost hardly depends on it
        (gsm8k, 100 items: 1.39 s with 400 models, 1.45 s with 1000), but attributions from 400 models
        agree with those from 1000 only at Spearman 0.55.
    ebm_learning_rate, ebm_max_rounds, ebm_early_stopping_rounds, ebm_smoothing_rounds :
        default 0.04, 2000, 50, 200. interpret's boosting settings (its defaults are 0.04, 50000, 100,
        500); ``interactions=0`` and ``outer_bags=1`` always (attribution needs main effects only).
    gam_splines, gam_lam : int, float, default 25, 5.0
        GAM settings of the GA ruler and of the "gam" reconstructor (the port's).

    After ``fit``: ``items_``, ``reconstructor_`` (GAM on the subset score, ridge on the items or ridge
    + GAM on its index, chosen on validation), ``info_`` (JSON-able: prefilter and filter reports, GA fitness history,
    per-round groups / best group / fitness and validation RMSE, ``val_rmse_trace``, seconds per stage).
    """

    name = "essence"
    signal = "responses+texts"
    _domains = {
        **Selector._domains, "tau_text": Real(-1.0, 1.0), "tau_rank": Real(-1.0, 1.0), "drop_constant": Flag(),
        "max_item_mean": Real(0.0, 1.0, none=True), "min_item_pbis": Real(0.0, 1.0, none=True),
        "population": Whole(2), "generations": Whole(0), "tournament": Whole(1), "elites": Whole(0),
        "mutation_rate": Real(0.0, 1.0, open_min=True, none=True), "patience": Whole(1, none=True),
        "rounds": Whole(0), "group_fraction": Real(0.0, 1.0, open_min=True), "group_population": Whole(2, none=True),
        "group_generations": Whole(0, none=True), "seed_groups_with_best": Flag(), "ebm_elites": Whole(1),
        "ebm_max_models": Whole(10, none=True), "ebm_learning_rate": Real(0.0, open_min=True),
        "ebm_max_rounds": Whole(1), "ebm_early_stopping_rounds": Whole(0), "ebm_smoothing_rounds": Whole(0),
        "gam_splines": Whole(4), "gam_lam": Real(0.0), "fitness": OneOf("gam", "ridge"),
        "fitness_models": OneOf("auto", "val", "train", "train+val", "loo"), "ridge_alpha": Real(0.0, open_min=True),
        "keep_best": OneOf("validation", "fitness"), "max_pool": Whole(1, none=True),
        "screen": OneOf("stratified", "pbis", "random"), "screen_bins": Whole(1),
        "loo_alphas": ListOf(Real(0.0, open_min=True)),
    }

    def __init__(self, k: int, seed: int = 0, progress: bool = True, tau_text: float = 0.95, tau_rank: float = 0.9,
                 drop_constant: bool = True, max_item_mean: float | None = None, min_item_pbis: float | None = None,
                 population: int = 200, generations: int = 300, tournament: int = 3, elites: int = 20,
                 mutation_rate: float | None = None, patience: int | None = None, rounds: int = 2,
                 group_fraction: float = 0.75, group_population: int | None = None,
                 group_generations: int | None = None, seed_groups_with_best: bool = True, ebm_elites: int = 6,
                 ebm_max_models: int | None = 1000, ebm_learning_rate: float = 0.04, ebm_max_rounds: int = 2000,
                 ebm_early_stopping_rounds: int = 50, ebm_smoothing_rounds: int = 200, gam_splines: int = GAM_N_SPLINES,
                 gam_lam: float = GAM_LAM, fitness: str = "ridge", fitness_models: str = "auto",
                 ridge_alpha: float = 1.0, keep_best: str = "fitness", max_pool: int | None = 2000,
                 screen: str = "stratified", screen_bins: int = 10, loo_alphas=(1.0, 10.0, 100.0)):
        super().__init__(k, seed, progress)
        self.loo_alphas = loo_alphas
        self.max_pool = max_pool
        self.screen = screen
        self.screen_bins = screen_bins
        self.keep_best = keep_best
        self.fitness = fitness
        self.fitness_models = fitness_models
        self.ridge_alpha = ridge_alpha
        self.tau_text = tau_text
        self.tau_rank = tau_rank
        self.drop_constant = drop_constant
        self.max_item_mean = max_item_mean
        self.min_item_pbis = min_item_pbis
        self.population = population
        self.generations = generations
        self.tournament = tournament
        self.elites = elites
        self.mutation_rate = mutation_rate
        self.patience = patience
        self.rounds = rounds
        self.group_fraction = group_fraction
        self.group_population = group_population
        self.group_generations = group_generations
        self.seed_groups_with_best = seed_groups_with_best
        self.ebm_elites = ebm_elites
        self.ebm_max_models = ebm_max_models
        self.ebm_learning_rate = ebm_learning_rate
        self.ebm_max_rounds = ebm_max_rounds
        self.ebm_early_stopping_rounds = ebm_early_stopping_rounds
        self.ebm_smoothing_rounds = ebm_smoothing_rounds
        self.gam_splines = gam_splines
        self.gam_lam = gam_lam

    # ------------------------------------------------------------------------------------------
    def _check_params(self) -> None:
        check_params(self)  # every parameter against _domains
        if self.elites >= self.population:
            raise InputError(f"elites: {self.elites} must be smaller than population ({self.population})")

    def _fitness_models(self, n_train: int, k: int) -> str:
        """Resolve ``fitness_models="auto"``: in-sample training models for ridge fitness when there are
        at least ``10 k`` of them (the in-sample optimism of a k-item ridge is then small), else validation."""
        if self.fitness_models != "auto":
            return self.fitness_models
        if self.fitness == "ridge":  # few models: closed-form LOO over train + val (search/fitness_cv.py)
            return "train" if n_train >= 10 * k else "loo"
        return "val"

    def _group_settings(self) -> tuple[int, int]:
        gp = self.group_population if self.group_population is not None else max(60, self.population // 3)
        gg = self.group_generations if self.group_generations is not None else max(200, self.generations // 2)
        return int(gp), int(gg)

    # ------------------------------------------------------------------------------------------
    def select(self, train, val) -> np.ndarray:
        """The three stages: :meth:`_build_pool` (pre-filter, pre-screen, redundancy filter),
        :meth:`_pool_ga` and ``rounds`` x :meth:`_refine_round`. Returns the best subset over all stages:
        ``(k,)`` increasing positions into ``train.items``."""
        self._check_params()
        k = int(self.k)
        rng = np.random.default_rng(self.seed)
        seconds: dict[str, float] = {}
        pool = self._build_pool(train, k, seconds)
        run = self._prepare_run(train, val, pool, k, rng)
        t0 = time.perf_counter()
        ga, best = self._pool_ga(run)
        seconds["ga"] = time.perf_counter() - t0
        best_score, best_rmse = run.yardstick(best), run.common_rmse(best)
        self.info_["ga"] = {
            "fitness": self.fitness, "fitness_models": run.fm, "pool_size": int(run.M), "k": k,
            "population": int(self.population), "generations_run": ga.generations_run,
            "stopped_early": ga.stopped_early, "evaluations": ga.evaluations, "seconds": round(ga.seconds, 3),
            "individuals_per_second": round(ga.evaluations / max(ga.seconds, 1e-9), 1),
            "best_fitness_rmse": round(-ga.best_fitness, 5), "best_val_rmse": round(best_rmse, 5),
            "history": ga.history_summary(every=max(1, ga.generations_run // 40)),
        }
        trace = [{"stage": "ga", "fitness_rmse": round(best_score, 5), "val_rmse": round(best_rmse, 5)}]

        rounds_info = []
        elite_masks = ga.elite_masks(self.ebm_elites)
        times = {"ebm": 0.0, "group_ga": 0.0}
        if run.M == k and self.rounds:
            self.info_["refinement_note"] = "pool size equals k: nothing to refine"
        for r in range(self.rounds if run.M > k else 0):
            rinfo, elite_masks, cand, score, cand_rmse = self._refine_round(run, r, elite_masks, best, times)
            improved = cand_rmse < best_rmse if self.keep_best == "validation" else score < best_score
            if improved:
                best, best_score, best_rmse = np.sort(cand), score, cand_rmse
            rinfo.update({"improved_global_best": bool(improved), "global_best_fitness_rmse": round(best_score, 5),
                          "global_best_val_rmse": round(best_rmse, 5)})
            rounds_info.append(rinfo)
            trace.append({"stage": f"round {r + 1}", "fitness_rmse": round(best_score, 5),
                          "val_rmse": round(best_rmse, 5)})
        seconds.update(times)
        self.info_.update({
            "rounds": rounds_info, "val_rmse_trace": trace, "best_fitness_rmse": round(best_score, 5),
            "best_val_rmse": round(best_rmse, 5), "seconds": {k_: round(v, 3) for k_, v in seconds.items()},
        })
        return np.sort(pool[best])

    # -- stage 1: the candidate pool ---------------------------------------------------------------
    def _build_pool(self, train, k: int, seconds: dict) -> np.ndarray:
        """Pre-filter, pre-screen (pools above ``max_pool``) and coarse redundancy filter, on the training
        models only. Returns the pool: increasing positions into ``train.items``. Records ``prefilter``,
        ``screen``, ``filter`` and ``pool_size`` in ``info_``."""
        from ..search.redundancy import coarse_filter, item_prefilter
        from ..search.screen import screen_pool

        info = self.info_
        R_tr, y_tr = train.responses, train.target
        pre = item_prefilter(R_tr, y_tr, self.max_item_mean, self.min_item_pbis)
        cand = np.flatnonzero(pre["keep"])
        info["prefilter"] = {
            "max_item_mean": self.max_item_mean, "min_item_pbis": self.min_item_pbis,
            "n_dropped_too_easy": int(pre["too_easy"].size), "n_dropped_low_pbis": int(pre["low_pbis"].size),
            "dropped_too_easy": train.items[pre["too_easy"][:50]].tolist(),
            "dropped_low_pbis": train.items[pre["low_pbis"][:50]].tolist(),
        }
        t0 = time.perf_counter()
        if self.max_pool is not None:
            scr = screen_pool(R_tr[:, cand] if cand.size < train.n_items else R_tr, y_tr, int(self.max_pool),
                              self.screen, bins=self.screen_bins, seed=[int(self.seed), 13])
            info["screen"] = {**scr["info"], "dropped": train.items[cand[scr["dropped"][:50]]].tolist()}
            cand = cand[scr["keep"]]
        else:
            info["screen"] = {"applied": False, "max_items": None, "n_items": int(cand.size)}
        seconds["screen"] = time.perf_counter() - t0
        emb = None
        t0 = time.perf_counter()
        if train.texts is not None and float(self.tau_text) < 1.0 and cand.size > 1:
            from ..features.text import embed_texts

            emb = embed_texts(train.texts[cand], progress=self.progress)
        seconds["embed"] = time.perf_counter() - t0
        filt = coarse_filter(R_tr[:, cand], emb, tau_text=self.tau_text, tau_rank=self.tau_rank,
                             drop_constant=self.drop_constant, progress=self.progress,
                             texts_available=train.texts is not None)
        info["filter"] = filt.to_info(item_ids=train.items[cand])
        pool = cand[filt.kept]
        seconds["filter"] = filt.seconds
        info["pool_size"] = int(pool.size)
        if k > pool.size:
            screened = info["screen"].get("applied")
            raise InputError(
                f"k: {k} is larger than the {pool.size} items left after the redundancy filter "
                f"(of {train.n_items}; tau_text={self.tau_text}, tau_rank={self.tau_rank}, "
                f"drop_constant={self.drop_constant}); lower k or raise tau_text / tau_rank"
                + (f" (or keep the {filt.constant.size} constant items with drop_constant=False)"
                   if self.drop_constant and filt.constant.size else "")
                + (f" (or raise max_pool={self.max_pool})" if screened else "")
            )
        return pool

    # -- shared state of the GA stages -------------------------------------------------------------
    def _prepare_run(self, train, val, pool: np.ndarray, k: int, rng) -> "_Run":
        """The pool's responses, the fitness models and the three scoring functions every GA stage uses."""
        from ..search.genetic import RidgeFitness, SubsetFitness

        M = pool.size
        Rp_tr, Rp_va = train.responses[:, pool], val.responses[:, pool]
        y_tr, y_va = train.target, val.target
        fm = self._fitness_models(train.n_models, k)
        if fm in ("val", "loo"):
            Rf, yf = Rp_va, y_va
        elif fm == "train":
            Rf, yf = Rp_tr, y_tr
        else:
            Rf, yf = np.vstack([Rp_tr, Rp_va]), np.r_[y_tr, y_va]
        ridge_base = None
        if self.fitness == "ridge" and fm == "loo":
            from ..search.fitness_cv import LOORidgeFitness

            ridge_base = LOORidgeFitness(np.vstack([Rp_tr, Rp_va]), np.r_[y_tr, y_va], alphas=tuple(np.atleast_1d(self.loo_alphas)))
        elif self.fitness == "ridge":
            ridge_base = RidgeFitness(Rp_tr, y_tr, None if fm == "train" else Rf, None if fm == "train" else yf,
                                      alpha=float(self.ridge_alpha))

        def make_fitness(cols: np.ndarray):
            """The fitness of one GA run on the sub-pool ``cols`` (positions into the pool)."""
            if ridge_base is not None:
                return ridge_base if cols.size == M else ridge_base.restrict(cols)
            return SubsetFitness(Rp_tr[:, cols], y_tr, Rf[:, cols], yf, self.gam_splines, self.gam_lam)

        fit_pool = make_fitness(np.arange(M))

        def yardstick(local: np.ndarray) -> float:
            """RMSE (pp) of a subset under the pool GA's fitness: one ruler for every candidate of every stage
            (group GAs fit their own ruler on their own pool, so their fitness values are not comparable)."""
            mask = np.zeros((1, M), dtype=bool)
            mask[0, local] = True
            return float(-fit_pool(mask)[0])

        def common_rmse(local: np.ndarray) -> float:
            """Validation RMSE (pp) of the best reconstructor candidate (see ``reconstructor_candidates``)
            refitted on this subset over the training models: what the user would get."""
            _, _, scores = choose_on_validation(self.reconstructor_candidates(train, local), Rp_tr[:, local],
                                                y_tr, Rp_va[:, local], y_va)
            return float(min(v for v in scores.values() if isinstance(v, float)))

        return _Run(train=train, pool=pool, M=M, k=k, rng=rng, fm=fm, Rp_tr=Rp_tr, y_tr=y_tr,
                    make_fitness=make_fitness, fit_pool=fit_pool, yardstick=yardstick, common_rmse=common_rmse,
                    ga_kw=dict(tournament=self.tournament, mutation_rate=self.mutation_rate,
                               patience=self.patience))

    # -- stage 2: GA over the whole pool -----------------------------------------------------------
    def _pool_ga(self, run: "_Run"):
        """``(GAResult, best)``: the main GA over the pool; ``best`` is ``(k,)`` pool positions."""
        from ..search.genetic import genetic_search

        ga = genetic_search(None, None, None, None, run.k, population=self.population, generations=self.generations,
                            elites=self.elites, seed=run.rng, progress=self.progress, desc="GA (pool)",
                            fitness=run.fit_pool, **run.ga_kw)
        return ga, ga.best.copy()

    # -- stage 3: one attribution-guided refinement round ------------------------------------------
    def _refine_round(self, run: "_Run", r: int, elite_masks: np.ndarray, best: np.ndarray, times: dict):
        """EBM attributions from ``elite_masks`` ``(n, M)`` -> High / Low / Random groups -> a GA in each;
        the group whose best subset scores best under the pool fitness gives the candidate.

        Returns ``(round_info, next_elite_masks (n', M), candidate (k,) pool positions, its fitness RMSE,
        its validation RMSE)``; adds seconds to ``times["ebm"]`` and ``times["group_ga"]``."""
        from ..search.attribution import attribution_groups, ebm_attribution
        from ..search.genetic import genetic_search

        gp, gg = self._group_settings()
        ebm_params = dict(interactions=0, outer_bags=1, learning_rate=self.ebm_learning_rate,
                          max_rounds=self.ebm_max_rounds, early_stopping_rounds=self.ebm_early_stopping_rounds,
                          smoothing_rounds=self.ebm_smoothing_rounds, n_jobs=1)
        t0 = time.perf_counter()
        att = ebm_attribution(run.Rp_tr, run.y_tr, elite_masks, max_models=self.ebm_max_models, seed=run.rng,
                              progress=self.progress, **ebm_params)
        groups = attribution_groups(att.attribution, run.k, seed=run.rng, group_fraction=self.group_fraction)
        times["ebm"] += time.perf_counter() - t0
        t0 = time.perf_counter()
        per_group, results = {}, {}
        for gname, g in groups.items():
            init = np.isin(g, best)[None, :] if self.seed_groups_with_best else None
            res = genetic_search(None, None, None, None, run.k, population=gp, generations=gg,
                                 elites=min(self.elites, gp - 1), init=init, seed=run.rng, progress=self.progress,
                                 desc=f"GA round {r + 1} ({gname})", fitness=run.make_fitness(g), **run.ga_kw)
            cand_local = g[res.best]
            score = run.yardstick(cand_local)
            results[gname] = (cand_local, score, res, g)
            per_group[gname] = {
                "size": int(g.size), "best_group_fitness_rmse": round(-res.best_fitness, 5),
                "best_fitness_rmse": round(score, 5), "generations_run": res.generations_run,
                "history": res.history_summary(every=max(1, res.generations_run // 20)),
            }
        times["group_ga"] += time.perf_counter() - t0
        gbest = min(results, key=lambda n: (results[n][1], n))
        cand_local, score, res, g = results[gbest]
        cand_rmse = run.common_rmse(cand_local)
        # next round's elites come from the winning group's GA, mapped back to the whole pool
        em = res.elite_masks(self.ebm_elites)
        next_elites = np.zeros((em.shape[0], run.M), dtype=bool)
        next_elites[:, g] = em
        top = np.argsort(-att.attribution, kind="stable")[:10]
        rinfo = {
            "round": r + 1, "best_group": gbest, "candidate_fitness_rmse": round(score, 5),
            "candidate_val_rmse": round(cand_rmse, 5), "groups": per_group, "ebm_models": att.n_models,
            "ebm_elites": int(att.per_elite.shape[0]), "ebm_seconds": round(att.seconds, 3),
            "items_with_attribution": int((att.counts > 0).sum()),
            "top_attribution_items": run.train.items[run.pool[top]].tolist(),
            "top_attribution": [round(float(a), 4) for a in att.attribution[top]],
        }
        return rinfo, next_elites, cand_local, score, cand_rmse

    def reconstructor_candidates(self, train, idx) -> dict:
        """The GAM on the subset score, ridge on the chosen items' responses, and ridge followed by a GAM on
        its index (our extension, :class:`~essence.reconstructors.simple.RidgeGAMReconstructor`); the base class keeps
        the one with the lowest validation RMSE."""
        return reconstructor_makers(n_splines=self.gam_splines, lam=self.gam_lam)


@dataclass
class _Run:
    """What the GA stages of one :meth:`EssenceSelector.select` call share: the pool (``(M,)`` positions
    into the training items), its training responses ``(n_train, M)`` and scores, the fitness-models choice,
    the fitness factory for sub-pools, the pool fitness, the two subset scores (``yardstick``: pool-fitness
    RMSE; ``common_rmse``: validation RMSE of the refitted reconstructor) and the GA settings."""

    train: object
    pool: np.ndarray
    M: int
    k: int
    rng: np.random.Generator
    fm: str
    Rp_tr: np.ndarray
    y_tr: np.ndarray
    make_fitness: Callable
    fit_pool: Callable
    yardstick: Callable
    common_rmse: Callable
    ga_kw: dict
