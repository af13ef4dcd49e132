"""``auto``: the default. Chooses the method for the data at hand and says how good it expects it to be.

How much evidence there is decides what can be afforded and what can be trusted:

* **many models** (``n >= many_models_per_item * k`` training + validation models, e.g. gsm8k's 3,670 at
  k = 100): EssenceBench with its defaults (on every metabench pool the most accurate method at k <= 50,
  see the README); nested cross-validation of several GA runs would not fit the one-minute budget.
  The estimated error is the 5-fold CV RMSE of the chosen reconstructor over the non-test models.
* **few models**: the candidates (``candidates``; by default ``random`` and ``ruler``, a genetic search
  for the subset whose plain mean through a least-squares line predicts the full score best under
  closed-form leave-one-out over all non-test models, :class:`RulerSelector`) are compared by **nested**
  ``folds``-fold cross-validation over the non-test models: each candidate chooses and fits on the
  other folds and is scored on the held-out one. The lowest pooled out-of-fold RMSE wins and is refitted
  on all non-test models, with one guard against fold noise: ``random`` displaces ``ruler`` only when it
  is better by more than one standard error of the paired per-model squared-error differences (the
  search starts from random subsets and its fitness is itself a leave-one-out estimate, so a smaller
  margin is noise of 3 folds of 7-30 models). Other registered methods may be added as candidates (e.g.
  ``disco``, or ``essence`` with the short settings of :data:`CANDIDATE_PARAMS`); with DISCO and a short
  EssenceBench as the candidates the nested CV chose noise at 35 gsm8k models (1.05 x the baseline).

In both regimes the same folds also score the baseline a user would try first, random items + a straight
line on their mean (:data:`BASELINE`); when the choice's estimate is above it, a warning says so and
``info_["auto"]["worse_than_baseline"]`` is True. Everything is recorded in ``info_["auto"]``: regime,
every candidate's out-of-fold RMSE (mean and sd over folds), the choice, its estimate and the ratio to the
baseline, and ``random_margin`` where the guard was consulted. Estimates of the winner are slightly
optimistic (it is usually the minimum over candidates).

:func:`check_models_for_k` is the request check :func:`essence.compressed.compress` runs for every method.
"""

from __future__ import annotations

import numpy as np

from ..data import Responses, split_models
from ..checks import Real, Whole
from ..errors import InputError, warn
from ..reconstruct import LineReconstructor, model_folds
from .base import Selector

__all__ = ["AutoSelector", "RulerSelector", "check_models_for_k", "MIN_MODELS", "BASELINE"]

#: fewest non-test models (training + validation) a compression is attempted with: 5-fold CV of the
#: reconstructor needs 2 models per fold
MIN_MODELS = 10
#: the yardstick every estimate is compared with
BASELINE = "random items + least-squares line on their mean"

#: candidates of the few-model regime (the default list), with the parameters that keep them cheap; any
#: registered method may be passed as a candidate too (``candidates=``), e.g. "disco" or "essence" (then
#: with the short settings of :data:`CANDIDATE_PARAMS`)
FEW_MODEL_CANDIDATES = {
    "random": {},
    "ruler": {},
}
#: cheap settings for candidates that are full methods elsewhere
CANDIDATE_PARAMS = {"essence": {"rounds": 0, "generations": 100, "population": 100, "progress": False}}


class RulerSelector(Selector):
    """Few-model candidate of ``auto``: the k-subset whose plain mean, read through a least-squares line,
    best predicts the full score under leave-one-out over all non-test models.

    A genetic search (:func:`essence.search.genetic.genetic_search`, ``population`` x ``generations``) with
    :class:`~essence.search.fitness_cv.LOOLineFitness`: the paper's fixed 1-D ruler with two parameters per
    subset, so its closed-form LOO error stays honest with 20-100 models, where a k-item ridge's fitness
    overfits. Reconstructor: ``line`` or ``mean_ridge`` by 5-fold CV (the base class). Not a registered
    method (``auto`` uses it); ``info_["ruler"]`` records the best subset's LOO RMSE (pp).
    """

    name = "ruler"
    _domains = {**Selector._domains, "population": Whole(2), "generations": Whole(0)}

    def __init__(self, k, seed=0, progress=False, population: int = 200, generations: int = 200):
        super().__init__(k, seed, progress)
        self.population = population
        self.generations = generations

    def select(self, train: Responses, val: Responses) -> np.ndarray:
        from ..search.fitness_cv import LOOLineFitness
        from ..search.genetic import genetic_search

        fit = LOOLineFitness(np.vstack([train.responses, val.responses]), np.r_[train.target, val.target])
        ga = genetic_search(None, None, None, None, self.k, population=self.population,
                            generations=self.generations, elites=max(1, self.population // 10), seed=self.seed,
                            fitness=fit, progress=self.progress, desc="ruler GA")
        self.info_["ruler"] = {"loo_line_rmse": round(-float(ga.best_fitness), 4), "n_models": fit.n}
        return np.sort(ga.best)

    def reconstructor_candidates(self, train, idx) -> dict:
        return {}  # the line it was chosen for, and shrinkage toward it (FEW_MODEL_CHOICES)


def check_models_for_k(k: int, n_models: int, n_items: int | None = None) -> None:
    """Refuse or warn when ``n_models`` non-test models are too few for a budget of ``k`` items.

    InputError when ``n_models < MIN_MODELS`` (naming how many are needed); a UserWarning when
    ``n_models < k``: per-item weights cannot be learnt from fewer models than items, so the
    cross-validated choice falls back to a line on the subset mean (the message names how many models
    item-level reconstruction needs).
    """
    if n_items is not None and k > n_items:
        return  # the budget itself is wrong: the selector's k check says so
    if n_models < MIN_MODELS:
        raise InputError(f"{n_models} models to learn from (after holding out test models) are too few: "
                         f"compression needs at least {MIN_MODELS} with full results (5-fold CV of the "
                         "reconstructor); add models")
    if n_models < k:
        warn(f"k = {k} items but only {n_models} models to learn from: item weights cannot be learnt "
                      f"from fewer models than items, so expect a line on the subset mean at best; give at "
                      f"least {k} models (10 x k = {10 * k} for the GA's in-sample fitness) or lower k", stacklevel=3)


def _line_baseline(train: Responses, held: Responses, seed: int, k: int) -> np.ndarray:
    """Predictions (pp) of the baseline on ``held``: seeded random items + a line fitted on ``train``."""
    idx = np.sort(np.random.default_rng(seed).choice(train.n_items, size=k, replace=False))
    return LineReconstructor().fit(train.responses[:, idx], train.target).predict(held.responses[:, idx])


def _stats(per_fold: list[float], pooled: float) -> dict:
    return {"rmse": round(pooled, 4), "fold_mean": round(float(np.mean(per_fold)), 4),
            "fold_sd": round(float(np.std(per_fold, ddof=1)) if len(per_fold) > 1 else 0.0, 4)}


class AutoSelector(Selector):
    """The default method: EssenceBench with many models, else the best of a few cheap candidates by nested CV.

    Parameters
    ----------
    k, seed, progress : as every method.
    candidates : tuple of str or None, default None
        Methods compared in the few-model regime (None: random and ruler; ``random`` is always added):
        ``ruler`` or any registered method but auto. Each runs with the cheap settings of
        :data:`CANDIDATE_PARAMS` where it has any.
    folds : int, default 3
        Outer folds of the nested cross-validation (and of the baseline's estimate); 3 keeps the default
        within a few minutes on 2 cores for 20-100 models and 400-800 items.
    many_models_per_item : float, default 10.0
        With at least ``many_models_per_item * k`` non-test models, EssenceBench is used directly.

    After ``fit``: what the chosen method sets (``items_``, ``reconstructor_``, ...), ``chosen_method_``,
    ``chosen_params_``, and ``info_["auto"]`` (see the module docstring).
    """

    name = "auto"
    signal = "responses (chosen by cross-validation)"
    _domains = {**Selector._domains, "folds": Whole(2), "many_models_per_item": Real(0.0, open_min=True)}

    def __init__(self, k, seed=0, progress=True, candidates=None, folds: int = 3,
                 many_models_per_item: float = 10.0):
        super().__init__(k, seed, progress)
        self.candidates = candidates
        self.folds = folds
        self.many_models_per_item = many_models_per_item

    def _make(self, name: str):
        from . import make_method

        params = dict(FEW_MODEL_CANDIDATES.get(name) or CANDIDATE_PARAMS.get(name, {}))
        progress = params.pop("progress", False)
        if name == "ruler":
            return RulerSelector(self.k, seed=self.seed, progress=progress, **params), params
        return make_method(name, k=self.k, seed=self.seed, progress=progress, **params), params

    def _fit(self, train: Responses, val: Responses):
        from . import METHODS, make_method

        pooled = _concat(train, val)
        n = pooled.n_models
        check_models_for_k(self.k, n, pooled.n_items)
        lab = model_folds(n, self.folds, self.seed)
        many = n >= self.many_models_per_item * self.k
        info: dict = {"regime": "many models: EssenceBench" if many else "few models: nested CV",
                      "n_models": n, "baseline": BASELINE}
        # the baseline's cross-validated error, on the same folds as everything else
        base_pred, base_fold = np.empty(n), []
        for f in np.unique(lab):
            te = lab == f
            base_pred[te] = _line_baseline(pooled.subset(models=~te), pooled.subset(models=te), self.seed, self.k)
            base_fold.append(float(np.sqrt(np.mean((base_pred[te] - pooled.target[te]) ** 2))))
        base = _stats(base_fold, float(np.sqrt(np.mean((base_pred - pooled.target) ** 2))))
        info["baseline_cv"] = base
        if many:
            chosen, params = "essence", {}
            sel = make_method("essence", k=self.k, seed=self.seed, progress=self.progress).fit(train, val)
            folds_rmse = list(getattr(sel.reconstructor_, "cv_folds_", []))
            est = float(sel.reconstructor_scores_[sel.reconstructor_choice_])
            info["estimate_source"] = "5-fold CV of the reconstructor over the non-test models (items chosen on them)"
            info["candidates"] = {"essence": _stats(folds_rmse or [est], est)}
        else:
            names = ([str(c) for c in self.candidates] if self.candidates is not None
                     else list(FEW_MODEL_CANDIDATES))
            if "random" not in names:
                names.insert(0, "random")
            allowed = ["ruler"] + [m for m in METHODS if m != "auto"]
            unknown = [c for c in names if c not in allowed]
            if unknown:
                raise InputError(f"candidates: unknown or not allowed {unknown}; choose among {allowed}")
            results, sq_err = {}, {}
            for name in names:
                pred, per, err = np.empty(n), [], None
                for f in np.unique(lab):
                    te = lab == f
                    inner = pooled.subset(models=~te)
                    tr_i, va_i, _ = split_models(inner, test=0.0, val=0.1, seed=self.seed)
                    try:
                        sel, _ = self._make(name)
                        sel.fit(inner.subset(models=tr_i), inner.subset(models=va_i))
                    except (ValueError, RuntimeError, np.linalg.LinAlgError) as exc:
                        err = f"failed: {exc}"
                        break
                    pred[te] = sel.reconstructor_.predict(pooled.responses[np.ix_(te, sel.items_)])
                    per.append(float(np.sqrt(np.mean((pred[te] - pooled.target[te]) ** 2))))
                results[name] = err if err else _stats(per, float(np.sqrt(np.mean((pred - pooled.target) ** 2))))
                if not err:
                    sq_err[name] = (pred - pooled.target) ** 2
            info["candidates"] = results
            ok = {c: r for c, r in results.items() if isinstance(r, dict)}
            if not ok:
                raise InputError(f"auto: no candidate could be fitted: {results}")
            chosen = min(ok, key=lambda c: (ok[c]["rmse"], names.index(c)))
            # the search is kept unless random is better by more than one standard error of the paired
            # per-model differences: its fitness is already a leave-one-out estimate over all these models
            # and its initial population is random subsets, so a smaller margin for random is fold noise
            if chosen == "random" and "ruler" in ok:
                d = sq_err["random"] - sq_err["ruler"]
                se = float(np.std(d, ddof=1) / np.sqrt(d.size))
                info["random_margin"] = {"mean_sq_diff": round(float(d.mean()), 4), "se": round(se, 4)}
                if d.mean() + se > 0:
                    chosen = "ruler"
            sel, params = self._make(chosen)
            sel.fit(train, val)
            est = ok[chosen]["rmse"]
            info["estimate_source"] = f"nested {len(np.unique(lab))}-fold CV over the non-test models"
        self.chosen_method_, self.chosen_params_ = chosen, params
        stats = info["candidates"][chosen]
        info.update(choice=chosen, choice_params=params, estimate_rmse=round(est, 4),
                    estimate_sd=stats["fold_sd"], ratio_to_baseline=round(est / base["rmse"], 4)
                    if base["rmse"] > 0 else None, worse_than_baseline=bool(est > base["rmse"]))
        if info["worse_than_baseline"]:
            warn(f"auto: the best method found ({chosen}, estimated {est:.2f} pp) is estimated worse than "
                          f"{BASELINE} ({base['rmse']:.2f} pp) on these models", stacklevel=3)
        for attr in ("items_", "reconstructor_", "reconstructor_choice_", "reconstructor_scores_",
                     "reconstructor_fitted_on_"):
            if hasattr(sel, attr):
                setattr(self, attr, getattr(sel, attr))
        self.info_ = {**getattr(sel, "info_", {}), "auto": info}
        return self


def _concat(a: Responses, b: Responses) -> Responses:
    """Training and validation models as one :class:`Responses` (same items)."""
    return Responses(np.vstack([a.responses, b.responses]), np.r_[a.models, b.models], a.items,
                     np.r_[a.target, b.target], texts=a.texts, name=a.name, target_source=a.target_source)
