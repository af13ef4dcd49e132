"""``auto``: the default. Chooses the method for the data at hand and says how good it expects it to be.

How much evidence there is decides what can be afforded and what can be trusted:

* **many models** (``n >= many_models_per_item * k`` training + validation models, e.g. gsm8k's 3,670 at
  k = 100): EssenceBench with its defaults (on every metabench pool the most accurate method at k <= 50,
  see the README); nested cross-validation of several GA runs would not fit the one-minute budget.
  The estimated error is the 5-fold CV RMSE of the chosen reconstructor over the non-test models.
* **few models**: the candidates (``candidates``; by default ``random``, ``ruler_best_of``, ``ruler_bagged``
  and ``ruler``, three searches of growing strength for the subset whose plain mean through a least-squares
  line predicts the full score best under closed-form leave-one-out over all non-test models,
  :class:`RulerSelector` and :data:`FEW_MODEL_SELECTORS`) are compared by **nested** ``folds``-fold cross-validation over the non-test
  models: each candidate chooses and fits on the other folds and is scored on the held-out one. The burden
  of proof is on the searches: the first candidate (``fallback``, random items) is kept unless another beats
  it by more than ``margin`` (1) standard errors of the paired per-model squared-error differences; among
  those that do, the lowest pooled out-of-fold RMSE wins. The choice is refitted on all non-test models.
  Every candidate's reconstructor follows the one-standard-error rule of :func:`prefer_line` (the line unless
  another kind beats it clearly). Why: with 16-60 models a full search (``ruler``, 200 x 200 generations,
  the earlier default with the burden on random) fits the models' noise where the pool is large against
  them (GENERATED 40 models x 800 items: 1.14-1.28 x the baseline on 3 of 3 seeds) and misses a test model
  outside the training models' range (20 arc models, draw 2: 1.8 x); the nested CV of 3 folds cannot tell
  such a search's luck from its skill, while random items cannot overfit. Among candidates that all must
  clear the bar against random items the full search is safe to offer and wins where it is real (gsm8k
  35-100 models: 0.84-0.88 x with it, 0.90-0.94 x without; README "Few reference models"). Other registered methods may be
  added as candidates (e.g. ``disco``, or ``essence`` with the short settings of :data:`CANDIDATE_PARAMS`).

In both regimes the same folds also score the baseline a user would try first, random items + a straight
line on their mean (:data:`BASELINE`); when the choice's estimate is above it, a warning says so and
``info_["auto"]["worse_than_baseline"]`` is True. Everything is recorded in ``info_["auto"]``: regime,
every candidate's out-of-fold RMSE (mean and sd over folds), the choice, its estimate and the ratio to the
baseline, and (few models) ``fallback``, ``margin_se`` and each candidate's ``margins`` against the fallback
(``mean_sq_gain``, ``se`` in pp^2, ``clear``). Estimates of the winner are slightly optimistic.

:func:`check_models_for_k` is the request check :func:`essence.artifact.compressed.compress` runs for every method.
"""

from __future__ import annotations

import numpy as np

from ..data import Responses, split_models
from ..data.checks import Flag, Real, Whole
from ..data.errors import InputError, warn
from ..reconstructors.base import model_folds
from ..reconstructors.simple import LineReconstructor
from .base import Selector
from .registry import BASE_METHODS, make_from
from ..search.genetic import GAConfig

__all__ = ["AutoSelector", "RulerSelector", "ScreenedRandomSelector", "few_model_candidate", "check_models_for_k", "MIN_MODELS", "BASELINE"]

#: fewest non-test models (training + validation) a compression is attempted with: 5-fold CV of the
#: reconstructor needs 2 models per fold
MIN_MODELS = 10
#: the yardstick every estimate is compared with
BASELINE = "random items + least-squares line on their mean"

#: candidates of the few-model regime (the default list; the first is the fallback that the others must beat
#: clearly); any registered method or name of :data:`FEW_MODEL_SELECTORS` may be passed (``candidates=``)
FEW_MODEL_CANDIDATES = ("random", "ruler_best_of", "ruler_bagged", "ruler")
#: cheap settings for candidates that are full methods elsewhere
CANDIDATE_PARAMS = {"essence": {"rounds": 0, "generations": 100, "population": 100, "progress": False}}


class RulerSelector(Selector):
    """Few-model candidate of ``auto``: the k-subset whose plain mean, read through a least-squares line,
    best predicts the full score under leave-one-out over all non-test models.

    A genetic search (:func:`essence.search.genetic.genetic_search`, ``population`` x ``generations``) with
    :class:`~essence.search.fitness.LOOLineFitness`: the paper's fixed 1-D ruler with two parameters per
    subset, so its closed-form LOO error stays honest with 20-100 models, where a k-item ridge's fitness
    overfits. ``generations = 0`` keeps the best of ``population`` random subsets (a mild search). With
    ``bags > 0`` the search runs on ``bags`` random halves of the models and the ``k`` items chosen most often
    are kept (stability selection: items that fit one half's noise rarely recur; on GENERATED 40 x 800 the
    most chosen item recurs in 3 of 8 bags, chance level). Reconstructor: ``line`` or ``mean_ridge`` by 5-fold
    CV (the base class). Not a registered method (``auto`` uses it); ``info_["ruler"]`` records the best
    subset's LOO RMSE (pp), or the bag counts.
    """

    name = "ruler"
    _domains = {**Selector._domains, "population": Whole(2), "generations": Whole(0), "bags": Whole(0),
                "strata": Whole(0), "keep": Real(0.0, 1.0, open_min=True)}

    def __init__(self, k, seed=0, progress=False, population: int = 200, generations: int = 200,
                 bags: int = 0, strata: int = 0, keep: float = 1.0):
        super().__init__(k, seed, progress)
        self.population = population
        self.generations = generations
        self.bags = bags
        self.strata = strata
        self.keep = keep

    def _init(self, R, y):
        """The initial population: None (uniform random subsets), or with ``strata > 0`` ``population``
        subsets drawn with the pool's difficulty profile among each stratum's ``keep`` fraction of best
        item-score correlations (:func:`essence.search.screen.stratified_draws`)."""
        if not self.strata:
            return None
        from ..search.screen import item_statistics, stratified_draws

        p, r = item_statistics(R, y)
        return stratified_draws(p, r, self.k, self.population, keep=self.keep, bins=self.strata, seed=self.seed)

    def select(self, train: Responses, val: Responses) -> np.ndarray:
        from ..search.fitness import LOOLineFitness
        from ..search.genetic import genetic_search

        R, y = np.vstack([train.responses, val.responses]), np.r_[train.target, val.target]
        if self.bags:
            return np.sort(self._bagged(R, y))
        fit = LOOLineFitness(R, y)
        ga = genetic_search(fit, self.k, GAConfig(population=self.population, generations=self.generations, elites=max(1, self.population // 10)), init=self._init(R, y), seed=self.seed, progress=self.progress, desc="ruler GA")
        self.info_["ruler"] = {"loo_line_rmse": round(-float(ga.best_fitness), 4), "n_models": fit.n}
        return np.sort(ga.best)

    def _bagged(self, R, y) -> np.ndarray:
        """Stability selection: the GA on ``bags`` random halves of the models; the ``k`` items chosen most
        often (ties broken at random, seeded). ``R`` ``(n, M)``, ``y`` ``(n,)`` pp; returns ``(k,)`` positions."""
        from ..search.fitness import LOOLineFitness
        from ..search.genetic import genetic_search

        rng = np.random.default_rng(self.seed)
        n, M = R.shape
        counts = np.zeros(M)
        for b in range(self.bags):
            rows = np.sort(rng.choice(n, size=max(3, n // 2), replace=False))
            ga = genetic_search(LOOLineFitness(R[rows], y[rows]), self.k, GAConfig(population=self.population, generations=self.generations, elites=max(1, self.population // 10)), seed=int(rng.integers(2**31)), progress=False)
            counts[ga.best] += 1
        order = np.lexsort((rng.random(M), -counts))
        self.info_["ruler"] = {"bags": self.bags, "n_models": n, "pool": M,
                               "top_count": int(counts.max()), "kth_count": int(counts[order[self.k - 1]])}
        return order[:self.k]

    def reconstructor_candidates(self, train, idx) -> dict:
        return {}  # the line it was chosen for, and shrinkage toward it (FEW_MODEL_CHOICES)


class ScreenedRandomSelector(Selector):
    """Few-model candidate of ``auto``: random items among the better-discriminating ones of each difficulty
    stratum (:func:`essence.search.screen.screened_draw`: ``bins`` accuracy bins, the ``keep`` fraction of
    largest item-score correlation per bin over all non-test models, ``k`` drawn with the pool's profile).
    Two statistics per item, no search over subsets. Reconstructor: ``line`` or ``mean_ridge`` by 5-fold CV.
    ``info_["screened"]`` records the screen."""

    name = "screened"
    _domains = {**Selector._domains, "keep": Real(0.0, 1.0, open_min=True), "bins": Whole(1)}

    def __init__(self, k, seed=0, progress=False, keep: float = 0.5, bins: int = 5):
        super().__init__(k, seed, progress)
        self.keep = keep
        self.bins = bins

    def select(self, train: Responses, val: Responses) -> np.ndarray:
        from ..search.screen import screened_draw

        idx, info = screened_draw(np.vstack([train.responses, val.responses]), np.r_[train.target, val.target],
                                  self.k, keep=self.keep, bins=self.bins, seed=self.seed)
        self.info_["screened"] = info
        return idx

    def reconstructor_candidates(self, train, idx) -> dict:
        return {}


#: the few-model candidates that are not registered methods (``auto`` builds them itself): name -> (class,
#: parameters). ``ruler``: the full genetic search (200 x 200); ``ruler_best_of``: the best of 200 random subsets
#: under the same fitness (no evolution: a mild search); ``ruler_bagged``: the k items the search chooses most
#: often on 8 random halves of the models (stability selection).
FEW_MODEL_SELECTORS = {"ruler": (RulerSelector, {}), "ruler_best_of": (RulerSelector, {"generations": 0}),
                       "ruler_bagged": (RulerSelector, {"bags": 8, "population": 100, "generations": 100}),
                       "screened": (ScreenedRandomSelector, {}),
                       "ruler_strat": (RulerSelector, {"generations": 0, "strata": 5})}


def few_model_candidate(name: str, k: int, seed: int = 0, line_rule: bool = True, **params) -> Selector:
    """One of :data:`FEW_MODEL_SELECTORS` as a method on its own (to measure it alone, e.g. in the regime
    map): an unfitted selector whose ``fit`` applies :func:`prefer_line` when ``line_rule`` (as ``auto`` does
    to its candidates). ``params`` override the table's."""
    if name not in FEW_MODEL_SELECTORS:
        raise InputError(f"few-model candidate {name!r}: choose one of {', '.join(FEW_MODEL_SELECTORS)}")
    cls, base = FEW_MODEL_SELECTORS[name]
    sel = cls(k, seed=seed, progress=False, **{**base, **params})
    if line_rule:
        fit = sel.fit
        sel.fit = lambda train, val: prefer_line(fit(train, val), train, val)
    return sel


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


def oof_sq_errors(make, X, y, folds: int = 5, seed: int = 0, R=None) -> np.ndarray:
    """``(n,)`` squared out-of-fold errors (pp^2) of one reconstructor factory on the folds of
    :func:`~essence.reconstructors.choose.choose_by_cv` (:func:`essence.reconstructors.choose.oof_predictions`)."""
    from ..reconstructors.choose import oof_predictions

    y = np.asarray(y, dtype=np.float64)
    return (oof_predictions(make, X, y, folds, seed, R) - y) ** 2


def paired_margin(sq_a: np.ndarray, sq_b: np.ndarray) -> tuple[float, float]:
    """``(mean, se)`` of the per-model differences ``sq_a - sq_b`` (pp^2): positive mean = ``b`` better."""
    d = np.asarray(sq_a, dtype=np.float64) - np.asarray(sq_b, dtype=np.float64)
    return float(d.mean()), float(np.std(d, ddof=1) / np.sqrt(d.size)) if d.size > 1 else float("inf")


def prefer_line(sel: Selector, train: Responses, val: Responses) -> Selector:
    """One-standard-error rule for ``sel``'s reconstructor: keep its cross-validated choice only when it beats
    the plain :class:`~essence.reconstructors.simple.LineReconstructor` on the same 5 folds by more than one standard
    error of the paired per-model squared-error differences; otherwise refit the line on train + val. With
    16-60 models the CV minimum over 3 reconstructors is partly fold luck, and the line is the least able to
    miss a new model by much. Records ``sel.info_["line_rule"]``; returns ``sel``."""
    if sel.reconstructor_choice_ == "line":
        return sel
    from ..reconstructors.base import fit_reconstructor

    R = np.vstack([train.responses, val.responses])
    y = np.r_[train.target, val.target]
    X = R[:, sel.items_]
    rec = sel.reconstructor_
    make = (lambda: type(rec)(**rec.get_params(deep=False)))
    try:
        mean, se = paired_margin(oof_sq_errors(LineReconstructor, X, y, seed=sel.seed),
                                 oof_sq_errors(make, X, y, seed=sel.seed, R=R))
    except (ValueError, np.linalg.LinAlgError):
        return sel
    keep = mean > se
    sel.info_["line_rule"] = {"choice": sel.reconstructor_choice_, "mean_sq_gain": round(mean, 4),
                              "se": round(se, 4), "kept": bool(keep)}
    if not keep:
        sel.reconstructor_ = fit_reconstructor(LineReconstructor(), X, y)
        sel.reconstructor_choice_ = "line"
    return sel


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
        Methods compared in the few-model regime (None: :data:`FEW_MODEL_CANDIDATES`; ``fallback`` is always
        added): a name of :data:`FEW_MODEL_SELECTORS` or any registered method but auto. Each runs with the
        cheap settings of :data:`CANDIDATE_PARAMS` where it has any.
    folds : int, default 3
        Outer folds of the nested cross-validation (and of the baseline's estimate); 3 keeps the default
        within a few minutes on 2 cores for 20-100 models and 400-800 items.
    many_models_per_item : float, default 10.0
        With at least ``many_models_per_item * k`` non-test models, EssenceBench is used directly.
    fallback : str, default "random"
        Few models: the candidate kept unless another beats it clearly (see ``margin``).
    margin : float, default 1.0
        Few models: how many standard errors of the paired per-model squared-error differences (nested CV)
        a candidate must beat ``fallback`` by to displace it (0: the plain CV minimum).
    line_rule : bool, default True
        Few models: apply :func:`prefer_line` to every candidate's reconstructor.
    min_models_to_choose : int, default 24
        With fewer non-test models, nothing is compared: ``fallback`` with a line (random items + a line, the
        baseline) is returned, with its nested-CV estimate, and ``info_["auto"]["too_few_to_choose"]`` says so.
        Below 24 the outer folds of the nested CV hold 7 or fewer models and its inner fits 15 or fewer: at 20
        models (16 non-test) every other choice measured was a gamble (README "Few reference models").
    fallback_draws : int, default 1
        Few models: the fallback's nested-CV error is averaged (per model, squared) over this many seeds
        (``seed``, ``seed + 1``, ...), so that the comparison is with random items in expectation rather than
        with one draw of them; the fallback, when kept, is still refitted with ``seed``.

    After ``fit``: what the chosen method sets (``items_``, ``reconstructor_``, ...), ``chosen_method_``,
    ``chosen_params_``, and ``info_["auto"]`` (see the module docstring).
    """

    name = "auto"
    signal = "responses (chosen by cross-validation)"
    _domains = {**Selector._domains, "folds": Whole(2), "many_models_per_item": Real(0.0, open_min=True),
                "margin": Real(0.0), "line_rule": Flag(), "min_models_to_choose": Whole(0),
                "fallback_draws": Whole(1)}

    def __init__(self, k, seed=0, progress=True, candidates=None, folds: int = 3,
                 many_models_per_item: float = 10.0, fallback: str = "random", margin: float = 1.0,
                 line_rule: bool = True, min_models_to_choose: int = 24, fallback_draws: int = 1):
        super().__init__(k, seed, progress)
        self.candidates = candidates
        self.folds = folds
        self.many_models_per_item = many_models_per_item
        self.fallback = fallback
        self.margin = margin
        self.line_rule = line_rule
        self.min_models_to_choose = min_models_to_choose
        self.fallback_draws = fallback_draws

    def _make(self, name: str, seed: int | None = None):
        seed = self.seed if seed is None else seed
        if name in FEW_MODEL_SELECTORS:
            cls, params = FEW_MODEL_SELECTORS[name]
            return cls(self.k, seed=seed, progress=False, **params), dict(params)
        params = dict(CANDIDATE_PARAMS.get(name, {}))
        progress = params.pop("progress", False)
        return make_from(BASE_METHODS, name, k=self.k, seed=seed, progress=progress, **params), params

    def _fit_candidate(self, name: str, train: Responses, val: Responses, line_only: bool = False,
                       seed: int | None = None) -> Selector:
        """One few-model candidate fitted on ``train`` / ``val`` (with the one-SE line rule when ``line_rule``;
        with ``line_only`` the reconstructor is the line, refitted on train + val); ``seed``: None = ``self.seed``."""
        sel = self._make(name, seed)[0].fit(train, val)
        if line_only:
            X = np.vstack([train.responses, val.responses])[:, sel.items_]
            sel.reconstructor_ = LineReconstructor().fit(X, np.r_[train.target, val.target])
            sel.reconstructor_choice_ = "line"
            return sel
        return prefer_line(sel, train, val) if self.line_rule else sel

    def _fit(self, train: Responses, val: Responses):
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
            sel = make_from(BASE_METHODS, "essence", k=self.k, seed=self.seed, progress=self.progress).fit(train, val)
            folds_rmse = list(getattr(sel.reconstructor_, "cv_folds_", []))
            est = float(sel.reconstructor_scores_[sel.reconstructor_choice_])
            info["estimate_source"] = "5-fold CV of the reconstructor over the non-test models (items chosen on them)"
            info["candidates"] = {"essence": _stats(folds_rmse or [est], est)}
        else:
            names = ([str(c) for c in self.candidates] if self.candidates is not None
                     else list(FEW_MODEL_CANDIDATES))
            if self.fallback not in names:
                names.insert(0, self.fallback)
            # too few models to rank anything: the fallback with a line (the baseline itself when it is random)
            line_only = n < self.min_models_to_choose
            if line_only:
                info["too_few_to_choose"] = {"n_models": n, "needs": self.min_models_to_choose,
                                             "kept": f"{self.fallback} + line"}
                names = [self.fallback]
            allowed = list(FEW_MODEL_SELECTORS) + list(BASE_METHODS)
            unknown = [c for c in names if c not in allowed]
            if unknown:
                raise InputError(f"candidates: unknown or not allowed {unknown}; choose among {allowed}")
            results, sq_err = {}, {}
            for name in names:
                oof_sq, per, err = np.empty(n), [], None  # each model's out-of-fold squared error (pp^2)
                for f in np.unique(lab):
                    te = lab == f
                    inner = pooled.subset(models=~te)
                    tr_i, va_i, _ = split_models(inner, test=0.0, val=0.1, seed=self.seed)
                    # the fallback's expected error over `fallback_draws` seeds (its items are a random draw)
                    draws = self.fallback_draws if name == self.fallback and not line_only else 1
                    sq = np.zeros(int(te.sum()))
                    try:
                        for s in range(draws):
                            sel = self._fit_candidate(name, inner.subset(models=tr_i), inner.subset(models=va_i),
                                                      line_only, seed=self.seed + s)
                            sq += (sel.reconstructor_.predict(pooled.responses[np.ix_(te, sel.items_)])
                                   - pooled.target[te]) ** 2 / draws
                    except (ValueError, RuntimeError, np.linalg.LinAlgError) as exc:
                        err = f"failed: {exc}"
                        break
                    oof_sq[te] = sq
                    per.append(float(np.sqrt(np.mean(sq))))
                results[name] = err if err else _stats(per, float(np.sqrt(np.mean(oof_sq))))
                if not err:
                    sq_err[name] = oof_sq
            info["candidates"] = results
            if self.fallback_draws > 1 and not line_only:
                info["fallback_draws"] = int(self.fallback_draws)
            ok = {c: r for c, r in results.items() if isinstance(r, dict)}
            if not ok:
                raise InputError(f"auto: no candidate could be fitted: {results}")
            chosen = min(ok, key=lambda c: (ok[c]["rmse"], names.index(c)))
            # the burden of proof is on the search: a candidate displaces the fallback (random items) only when
            # the nested CV says it is better by more than `margin` standard errors of the paired per-model
            # squared-error differences. With 16-60 models a search can fit those models' noise (GENERATED
            # 40 x 800: 1.2-1.3 x the baseline) or miss a model outside their range (20 arc models, draw 2:
            # 1.8 x), and the nested CV's minimum is partly fold luck; random items cannot overfit.
            fb = self.fallback
            if fb in ok and chosen != fb:
                margins = {}
                for c in ok:
                    if c != fb:
                        mean, se = paired_margin(sq_err[fb], sq_err[c])
                        margins[c] = {"mean_sq_gain": round(mean, 4), "se": round(se, 4),
                                      "clear": bool(mean > self.margin * se)}
                info["fallback"], info["margin_se"], info["margins"] = fb, self.margin, margins
                clear = [c for c in ok if c in margins and margins[c]["clear"]]
                chosen = min(clear, key=lambda c: (ok[c]["rmse"], names.index(c))) if clear else fb
            sel = self._fit_candidate(chosen, train, val, line_only)
            params = self._make(chosen)[1]
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
