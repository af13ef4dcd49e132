"""``auto``: the default. Items and reconstructor chosen by cross-validation over the non-test models, and an
estimate that stays honest on a model better than every reference model.

1. **Items.** A swap search for the ``k`` items whose plain mean, read through a least-squares line, predicts the
   full score best under leave-one-out (:func:`essence.search.swap.swap_search`) over the references and
   ``augment`` synthetic models drawn from a factor model of them (:mod:`essence.search.augment`: with tens of
   references the search would otherwise fit their noise). The synthetic models are the search's regulariser,
   so it runs its longest length ``T = max(checkpoints)``; the shorter lengths (0 = random items) are scored by
   ``folds``-fold cross-validation over the non-test models (each fold searches on the others and their
   synthetic models) as yardsticks. ``length="cv"`` lets that cross-validation choose ``T`` as well: with tens
   of models, choosing among many noisy candidates often picks a worse one.
2. **Inside the references.** A regression ``G`` chosen on the same folds among the candidates of that length: a
   line on the subset mean, ridge on the answers (penalty by leave-one-out), their average, or AIPW (random items
   only).
3. **Above them.** :class:`essence.reconstructors.frontier.FrontierReconstructor`: a shrinkage-free factor-model
   estimate weighted by the posterior probability (prior ``pi_out``) that the model's own answers lie above the
   references (``side="both"``: above or below; on the ``bottom`` split of ``benchmarks/frontier.py`` it reads the
   models weaker than every reference better, but costs a little with tens of references), with its own interval,
   wide wherever the model lies outside the references; rank, calibrations and the posterior's inside density
   (what D reads for the references, out of fold) from the same folds.

4. **Where the references say nothing.** A fallback sample of ``fallback * k`` items drawn uniformly at random
   from those not chosen rides along in the artifact. A model the estimate places outside the references may answer
   it too (a second stage: ``essence run`` does so by itself); the sample's design-based estimate
   (:func:`essence.reconstructors.forward.frontier_fallback`), valid whatever the references say, is then combined
   with the first by their precisions, the interval widened where the two disagree beyond their spreads. It costs
   nothing for a model that does not answer it.

``frontier=False`` keeps the regression alone (conformal interval). ``info_["auto"]`` records each candidate's
cross-validated RMSE (pp), the choice, its estimated RMSE and the ratio to random items + a line (``T = 0``,
``line``). :func:`check_models_for_k` is the request check every method runs.
"""

from __future__ import annotations

import numpy as np

from ..data.checks import Flag, ListOf, OneOf, Real, Whole
from ..data.errors import InputError, warn
from ..reconstructors.base import fit_reconstructor, model_folds
from ..reconstructors.frontier import (FrontierReconstructor, calibration, d_estimates, fit_factor, oof_quantiles,
                                       pool_map)
from ..search.augment import augmented
from ..search.swap import swap_search
from .base import Selector

__all__ = ["AutoSelector", "check_models_for_k", "cv_choice", "frontier_calibration", "MIN_MODELS", "BASELINE",
           "REGRESSIONS"]

#: fewest non-test models (training + validation) a compression is attempted with: 5-fold CV needs 2 per fold
MIN_MODELS = 10
#: the yardstick every estimate is compared with
BASELINE = "random items + least-squares line on their mean"
#: the regressions ``G`` auto chooses among, as reconstructor specs (``aipw`` needs the item positions)
REGRESSIONS = {
    "line": {"kind": "line", "params": {}},
    "ridge": {"kind": "ridge", "params": {"alphas": np.logspace(-2, 4, 13).round(6).tolist()}},
    "average": {"kind": "average", "params": {"parts": [
        {"kind": "line", "params": {}}, {"kind": "ridge", "params": {"alphas": np.logspace(-2, 4, 13).round(6).tolist()}}]}},
    "aipw": {"kind": "aipw", "params": {}},
}


def _spec(name: str, items) -> dict:
    spec = {"kind": REGRESSIONS[name]["kind"], "params": dict(REGRESSIONS[name]["params"])}
    if name == "aipw":
        spec["params"]["items"] = [int(i) for i in items]
    return spec


def _make(spec: dict):
    from ..reconstructors.base import reconstructor_class

    return reconstructor_class(spec["kind"])(**spec["params"])


def cv_choice(residuals: dict, length: str = "longest") -> tuple[tuple[int, str], dict]:
    """``((T, regression), rmse)``: of ``residuals`` ``{(T, regression): (n,) out-of-fold residuals, pp}``, the
    candidate with the lowest RMSE (ties: the shorter search) among those of the longest search
    (``length="longest"``) or among all (``"cv"``), and every candidate's RMSE (pp)."""
    if length not in ("longest", "cv"):
        raise InputError(f"length: must be 'longest' or 'cv', got {length!r}")
    rmse = {key: float(np.sqrt(np.mean(e ** 2))) for key, e in residuals.items()}
    T_max = max(key[0] for key in rmse)
    pool = [key for key in rmse if length == "cv" or key[0] == T_max]
    return min(pool, key=lambda key: (rmse[key], key[0])), rmse


def frontier_calibration(cv: dict, T: int, r: str) -> tuple[int, float, float]:
    """``(d, s_inner, c_d)`` of the frontier estimate for the choice ``(T, r)``, from out-of-fold residuals in the
    form of :attr:`AutoSelector.cv_residuals_` (:func:`essence.reconstructors.frontier.calibration` at 90 %)."""
    per_rank = lambda e: {d: v for (t, d), v in e.items() if t == T}  # noqa: E731
    return calibration(cv["regression"][(T, r)], per_rank(cv["frontier"]), per_rank(cv["frontier_z"]))


class AutoSelector(Selector):
    """The default method (module docstring).

    Parameters
    ----------
    checkpoints : swap-search lengths cross-validated (0 = random items); the longest is the search's length.
    length : ``"longest"``: the search runs ``max(checkpoints)`` steps and the CV chooses the regression only;
        ``"cv"``: the CV chooses the length too.
    regressions : names of :data:`REGRESSIONS` compared for ``G``.
    dims : factor-model ranks compared for the frontier estimate (ranks above a fold's models / 5 skipped).
    pi_out : prior probability that a new model lies outside the references.
    folds : cross-validation folds over the non-test models.
    frontier : False keeps the regression alone.
    side : where the frontier estimate may answer: only ``"above"`` the references (the default), or on ``"both"``
        sides.
    augment : synthetic models added to the rows the item search fits (:mod:`essence.search.augment`; 0 = none).
    augment_dim : the rank of the factor model they are drawn from.
    control : the fraction of the ``k`` items drawn uniformly at random (seeded) before the search, which fills the
        rest (0: every item searched; 1: random items). Random items serve the frontier estimate far from the
        references; searched ones the regression inside them.
    fallback : the fallback sample's size as a multiple of ``k`` (0: none; at most the items not chosen).

    After ``fit``, ``cv_residuals_`` holds the out-of-fold residuals (estimate - truth, pp, ``(n,)`` over the
    non-test models) behind every choice: ``"regression"`` ``{(T, name): ...}``, ``"frontier"`` ``{(T, d): ...}``
    and ``"frontier_z"`` (the same over D's standard error; both empty with ``frontier=False``), with ``"folds"``
    ``(n,)`` the fold labels.
    """

    name = "auto"
    signal = "responses (chosen by cross-validation)"
    _domains = {**Selector._domains, "checkpoints": ListOf(Whole(0)),
                "regressions": ListOf(OneOf(*REGRESSIONS)), "dims": ListOf(Whole(0)),
                "pi_out": Real(0.0, 1.0), "folds": Whole(2), "frontier": Flag(),
                "side": OneOf("both", "above"), "augment": Whole(0), "augment_dim": Whole(1),
                "length": OneOf("longest", "cv"), "control": Real(0.0, 1.0), "fallback": Real(0.0, 10.0)}

    def __init__(self, k, seed=0, progress=True, checkpoints=(0, 300, 1000, 3000, 10000),
                 regressions=("line", "ridge", "average", "aipw"), dims=(1, 2, 3, 5, 8), pi_out: float = 0.5,
                 folds: int = 5, frontier: bool = True, side: str = "above", augment: int = 1000,
                 augment_dim: int = 2, length: str = "longest", control: float = 0.0,
                 fallback: float = 1.0):
        super().__init__(k, seed, progress)
        self.checkpoints = checkpoints
        self.regressions = regressions
        self.dims = dims
        self.pi_out = pi_out
        self.folds = folds
        self.frontier = frontier
        self.side = side
        self.augment = augment
        self.augment_dim = augment_dim
        self.length = length
        self.control = control
        self.fallback = fallback

    def control_items(self, n_items: int) -> np.ndarray:
        """``(m,)`` sorted positions of the control part: ``m = round(control * k)`` items drawn uniformly at random
        from the ``n_items`` of the pool (seeded), held in every subset the search tries."""
        m = int(round(float(self.control) * int(self.k)))
        return np.sort(np.random.default_rng([int(self.seed), 59]).choice(n_items, size=m, replace=False))

    def search_rows(self, R, y, factors: dict | None = None):
        """The search's rows: the references ``R`` ``(n, N)``, ``y`` ``(n,)``, with ``augment`` synthetic models
        below them (:func:`essence.search.augment.augmented`; rank at most ``n // 5``). ``factors``: factor models
        of ``R`` already fitted, by rank (``fit_factor(R, d, seed=self.seed)``); the one of the rank used is reused."""
        d = min(int(self.augment_dim), max(1, R.shape[0] // 5))
        return augmented(R, y, int(self.augment), d, self.seed, (factors or {}).get(d))

    def _fit(self, train, val):
        from tqdm.auto import tqdm

        R = np.vstack([train.responses, val.responses])
        y = np.r_[train.target, val.target]
        R = np.where(np.isnan(R), np.nanmean(np.where(np.isnan(R).all(axis=0), 0.5, R), axis=0), R)
        n, k = y.size, int(self.k)
        check_models_for_k(k, n, R.shape[1])
        Ts = sorted({int(t) for t in np.atleast_1d(self.checkpoints)})
        regs = [str(r) for r in np.atleast_1d(self.regressions)]
        lab = model_folds(n, self.folds, self.seed)
        n_fit = min(int((lab != f).sum()) for f in np.unique(lab))
        dims = [int(d) for d in self.dims if int(d) <= max(1, n_fit // 5)] or [min(int(d) for d in self.dims)]
        mapping = pool_map(R, y)
        ctrl = self.control_items(R.shape[1])
        keys = [(T, r) for T in Ts for r in regs if r != "aipw" or T == 0]  # AIPW reads random items only
        eG = {key: np.empty(n) for key in keys}
        eD = {(T, d): np.empty(n) for T in Ts for d in dims} if self.frontier else {}
        zD = {(T, d): np.empty(n) for T in Ts for d in dims} if self.frontier else {}
        for f in tqdm(np.unique(lab), desc="auto: cross-validation", disable=not self.progress, leave=False):
            te = lab == f
            Rf, Rt = R[~te], R[te]  # once per fold: each is a copy of the rows
            factors = {d: fit_factor(Rf, d, seed=self.seed) for d in dims} if self.frontier else {}
            paths = swap_search(*self.search_rows(Rf, y[~te], factors), k, self.seed, Ts, fixed=ctrl)
            for T in Ts:
                it = paths[T]
                for r in regs:
                    if (T, r) in eG:
                        G = fit_reconstructor(_make(_spec(r, it)), Rf[:, it], y[~te], Rf)
                        eG[(T, r)][te] = G.predict(Rt[:, it]) - y[te]
                for d, fm in factors.items():
                    D, s = d_estimates(fm, Rt[:, it], it, mapping)
                    eD[(T, d)][te], zD[(T, d)][te] = D - y[te], (D - y[te]) / s
        self.cv_residuals_ = {"regression": eG, "frontier": eD, "frontier_z": zD, "folds": lab}
        (T, r), rmse = cv_choice(eG, self.length)
        self.oof_residuals_ = eG[(T, r)]  # the choice's, items chosen inside the folds: honest for new models
        items = swap_search(*self.search_rows(R, y), k, self.seed, [T], fixed=ctrl)[T]
        X = R[:, items]
        record = {"regime": ("cross-validated search" if self.length == "cv" else "longest search")
                  + ", regression inside the references"
                  + (", frontier estimate outside" if self.frontier else ""),
                  "n_models": n, "baseline": BASELINE, "search_length": T, "regression": r, "control": int(ctrl.size),
                  "cv_rmse": {f"T={t} {g}": round(v, 5) for (t, g), v in rmse.items()}}
        base = rmse.get((0, "line"))
        fold_rmse = [float(np.sqrt(np.mean(eG[(T, r)][lab == f] ** 2))) for f in np.unique(lab)]
        record.update(choice=f"{'searched' if T else 'random'} items + {r}", estimate_rmse=rmse[(T, r)],
                      estimate_sd=float(np.std(fold_rmse)),
                      ratio_to_baseline=float(rmse[(T, r)] / base) if base else float("nan"))
        if self.frontier:
            d, s_inner, c_d = frontier_calibration(self.cv_residuals_, T, r)
            self.oof_frontier_residuals_ = eD[(T, d)]  # the frontier estimate's, same folds
            dq = oof_quantiles(eD[(T, d)], y)
            rest = np.setdiff1d(np.arange(R.shape[1]), items)
            m = min(int(round(float(self.fallback) * k)), rest.size)
            fb = np.sort(np.random.default_rng([int(self.seed), 61]).choice(rest, size=m, replace=False))
            rec = FrontierReconstructor(items=items.tolist(), inner=_spec(r, items), dims=dims, pi_out=self.pi_out,
                                        seed=self.seed, d=d, s_inner=s_inner, c_d=c_d, side=self.side,
                                        d_quantiles=np.round(dq, 6).tolist(), fallback=fb.tolist())
            record.update(factor_rank=d, s_inner=round(s_inner, 4), c_d=round(c_d, 4), fallback=int(m),
                          cv_rmse_frontier={f"d={d_}": round(float(np.sqrt(np.mean(eD[(T, d_)] ** 2))), 5)
                                            for d_ in dims})
            label = f"frontier({r})"
        else:
            rec, label = _make(_spec(r, items)), r
        self.items_ = np.sort(items)
        self.control_ = ctrl  # positions (among all items) of the uniformly random part of items_
        self.reconstructor_ = fit_reconstructor(rec, X, y, R)
        self.reconstructor_fitted_on_ = "train+val"
        self.reconstructor_choice_ = label
        self.reconstructor_scores_ = {f"T={t} {g}": v for (t, g), v in rmse.items()}
        self.info_["auto"] = record
        if base and rmse[(T, r)] > base:
            warn(f"auto: the choice's cross-validated RMSE {rmse[(T, r)]:.2f} pp is above the baseline's "
                 f"({BASELINE}: {base:.2f} pp)", stacklevel=3)
        return self


def check_models_for_k(k: int, n_models: int, n_items: int | None = None) -> None:
    """Refuse or warn when ``n_models`` non-test models are too few for a budget of ``k`` items: InputError under
    :data:`MIN_MODELS`; a warning under ``k`` (per-item weights cannot be learnt from fewer models than items)."""
    if n_items is not None and k > n_items:
        return  # the budget itself is wrong: the selector's k check says so
    if n_models < MIN_MODELS:
        raise InputError(f"{n_models} models to learn from (after holding out test models) are too few: "
                         f"compression needs at least {MIN_MODELS} with full results (5-fold CV of the "
                         "reconstructor); add models")
    if n_models < k:
        warn(f"k = {k} items but only {n_models} models to learn from: item weights cannot be learnt from fewer "
             f"models than items, so expect a line on the subset mean at best; give at least {k} models or lower k",
             stacklevel=3)
