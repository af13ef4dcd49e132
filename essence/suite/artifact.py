"""The compressed suite: k items chosen across several benchmarks, one reconstructor per member fitted on
*all* chosen items, and the suite mean; one JSON file (no pickle).

:func:`compress_suite` splits the shared models once (stratified on the suite mean), chooses with
:func:`~essence.suite.select.select_suite` on training + validation models, and for each member chooses a
reconstructor by 5-fold CV over those models (by default among ridge, ridge + GAM, mean_ridge, the joint
latent model, three MLPs (L2 penalty 1, 3 and 10), a kernel ridge on all chosen items whose distance may
weight the member's own items (:func:`kernel_candidates`), gradient-boosted trees on all chosen items and each
member's sub-score (:func:`boost_candidates`), the same trees trained on the member's models outside the
suite as well, on all chosen items or its own (:func:`outside_candidates`), and two MLPs on the member's own
chosen items, combined by a weighted greedy ensemble (``combine="greedy"``; ``"equal"``: the best plain
average of up to three): :func:`fit_members`; any kind registered in
:data:`essence.reconstructors.base.KINDS` can be named), with a conformal interval as
:func:`essence.artifact.compressed.compress` does. The suite mean's estimate is the mean of the member estimates,
with its own interval calibrated on their cross-fitted means.
"""

from __future__ import annotations

import datetime as _dt
import inspect
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ..data._version import __version__
from ..data._io import jsonable
from ..data._runtime import single_thread
from ..data.checks import whole_number
from ..artifact.base import Artifact, check_same_benchmark, format_figures
from ..artifact.compressed import _figures
from ..data import Responses, split_models
from ..data.errors import InputError
from ..reconstructors.intervals import IntervalModel, cross_fitted_predictions
from ..reconstructors.combine import COMBINES
from ..reconstructors.choose import choose_average_by_cv, pool_candidates
from ..reconstructors.base import KINDS as RECONSTRUCTOR_KINDS
from ..reconstructors.choose import choose_by_cv
from ..reconstructors.base import reconstructor_class
from .data import SEP, Suite
from .select import kernel_candidates, select_suite

__all__ = ["SuiteCompressed", "compress_suite", "SUITE_SCHEMA", "DEFAULT_RECONSTRUCTORS",
           "own_candidates", "kernel_candidates", "boost_candidates", "outside_candidates"]

SUITE_SCHEMA = "essence.suite"
SUITE_SCHEMA_VERSION = 1
#: reconstructor kinds tried per member by default (kinds registered later can be named in ``reconstructors``)
DEFAULT_RECONSTRUCTORS = ("ridge", "ridge_gam", "mean_ridge")
#: How :func:`compress_suite` combines a member's candidates: a weighted greedy ensemble
#: (:func:`essence.reconstructors.combine.greedy_ensemble`). Measured against ``"equal"`` (the best unweighted average of up to
#: three, the default before) on the same chosen items and models (``benchmarks/suite_combine.py --seeds 0 1 2 3
#: 4``, with and without ``--holdout``; README "Suites", "How a member's candidates are combined"): a lower mean
#: per-benchmark RMSE over the five seeds of both (held out of everything 1.650 -> 1.643 pp, lower on four seeds).
COMBINE_DEFAULT = "greedy"


@dataclass
class SuiteCompressed(Artifact):
    """A compressed suite.

    ``names``: member names, in compress order. ``items``: ``{name: [item ids chosen in that member]}``;
    the reconstructors read the chosen items in member order, then in that order (:meth:`columns`).
    ``reconstructors``, ``intervals``: one per member; ``mean_interval``: the suite mean's.
    ``figures``: ``{"validation"|"test": {name|"mean": summary}}``. The suite mean's estimate is the mean of
    the member estimates.
    """

    method: str
    k: int
    seed: int
    params: dict
    names: list
    items: dict
    reconstructors: dict
    intervals: dict
    mean_interval: IntervalModel
    dataset: dict
    figures: dict
    split: dict = field(default_factory=dict)
    selection: dict = field(default_factory=dict)
    created: str = ""
    essence_version: str = __version__

    SCHEMA: ClassVar[str] = SUITE_SCHEMA
    SCHEMA_VERSION: ClassVar[int] = SUITE_SCHEMA_VERSION
    REQUIRED: ClassVar[tuple] = ("method", "k", "seed", "params", "names", "items", "members", "mean_interval",
                                 "dataset", "figures")

    @property
    def n_inputs(self) -> int:
        return len(self.names)

    def columns(self) -> list[str]:
        """The chosen items as pooled ids ``member/item``, in the order every reconstructor reads them."""
        return [f"{n}{SEP}{i}" for n in self.names for i in self.items[n]]

    # -- estimates -------------------------------------------------------------------------------
    def _matrix(self, data) -> tuple[np.ndarray, np.ndarray, list]:
        """``(models (n,), X (n, k), members)``: the chosen items of every member on the models present in
        all of ``data`` (one Responses or path per member, in :attr:`names` order)."""
        from ..data import load

        data = self.inputs(data)
        members = [d if isinstance(d, Responses) else load(d, allow_empty_items=True) for d in data]
        common = set(members[0].models.tolist())
        for m in members[1:]:
            common &= set(m.models.tolist())
        models = [s for s in members[0].models.tolist() if s in common]
        if not models:
            raise InputError(f"no model is in all {len(members)} results files; a suite estimate needs each model's "
                             "results on every member's chosen items")
        blocks = []
        for name, m in zip(self.names, members):
            pos = {s: i for i, s in enumerate(m.items.tolist())}
            missing = [s for s in self.items[name] if s not in pos]
            if missing:
                shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
                raise InputError(f"{name} (file {m.name}): {len(missing)} of its {len(self.items[name])} chosen items "
                                 f"are missing: {shown}; is the file the right benchmark, in the suite's order "
                                 f"({', '.join(self.names)})?")
            sub = m.subset(models=models)
            blocks.append(sub.responses[:, [pos[s] for s in self.items[name]]])
        X = np.hstack(blocks) if blocks else np.zeros((len(models), 0))
        finite = X[~np.isnan(X)]
        if finite.size and (finite.min() < 0 or finite.max() > 1):
            raise InputError("responses: values outside [0, 1] on the chosen items; scores must be fractions")
        empty = np.isnan(X).all(axis=1)
        if empty.any():
            raise InputError(f"{int(empty.sum())} model(s) have no result on any chosen item, e.g. "
                             f"{models[int(np.flatnonzero(empty)[0])]!r}; drop them or run them on the chosen items")
        return np.asarray(models), X, members

    def estimate(self, data):
        """Estimates (pp) with intervals: a DataFrame with ``model`` and, per member and for ``mean``,
        ``NAME``, ``NAME_lower``, ``NAME_upper``."""
        import pandas as pd

        models, X, _ = self._matrix(data)
        est = self._predict(X)
        cols = {"model": models}
        for name, e in est.items():
            iv = self.mean_interval if name == "mean" else self.intervals[name]
            lo, hi = iv.interval(e)
            cols.update({name: e, f"{name}_lower": lo, f"{name}_upper": hi})
        return pd.DataFrame(cols)

    def _predict(self, X) -> dict:
        est = {n: np.asarray(self.reconstructors[n].predict(X), dtype=np.float64) for n in self.names}
        est["mean"] = np.mean([est[n] for n in self.names], axis=0)
        return est

    def evaluate(self, data) -> dict:
        """``{"n_models", "benchmarks": {name: summary + coverage}, "mean": {...}}`` on the models in all files."""
        models, X, members = self._matrix(data)
        check_same_benchmark(X, self.dataset.get("item_means"), "+".join(m.name for m in members))
        est = self._predict(X)
        truth = {n: m.subset(models=models).target for n, m in zip(self.names, members)}
        truth["mean"] = np.mean([truth[n] for n in self.names], axis=0)
        out = {"n_models": int(len(models)), "benchmarks": {}}
        for name in [*self.names, "mean"]:
            iv = self.mean_interval if name == "mean" else self.intervals[name]
            lo, hi = iv.interval(est[name])
            fig = _figures(truth[name], est[name], lo, hi, f"{name} figures")
            if name == "mean":
                out["mean"] = fig
            else:
                out["benchmarks"][name] = fig
        return out

    # -- what the command line prints -------------------------------------------------------------
    def summary_lines(self) -> list[str]:
        """What ``essence compress`` prints about the suite artifact it wrote."""
        lines = ["budget: " + ", ".join(f"{n} {c}" for n, c in self.selection["budget"].items())]
        for name in [*self.names, "mean"]:
            lines.append(f"test {name:12s} {format_figures(self.figures.get('test', {}).get(name, {}))}")
        lines.append(f"(errors in pp on held-out test models; coverage of the {self.mean_interval.level:.0%} interval)")
        if self.dataset.get("caveat"):
            lines.append(f"note: {self.dataset['caveat']}")
        return lines

    def evaluation_lines(self, res: dict, data) -> list[str]:
        """What ``essence evaluate`` prints for :meth:`evaluate`'s ``res``."""
        lines = [f"suite {' + '.join(self.names)}: {self.method} k={self.k}: {res['n_models']} models in all files"]
        for name, fig in [*res["benchmarks"].items(), ("mean", res["mean"])]:
            lines.append(f"{name:12s} {format_figures({k: v for k, v in fig.items() if k != 'n_models'})}")
        if self.dataset.get("caveat"):
            lines.append(f"note: {self.dataset['caveat']}")
        return lines

    # -- persistence -----------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {
            **self.header(), "method": self.method, "k": int(self.k), "seed": int(self.seed),
            "params": self.params, "names": list(self.names), "items": {n: list(self.items[n]) for n in self.names},
            "members": {n: {"reconstructor": self.reconstructors[n].to_dict(),
                            "interval": self.intervals[n].to_dict()} for n in self.names},
            "mean_interval": self.mean_interval.to_dict(), "dataset": self.dataset, "split": self.split,
            "figures": self.figures, "selection": self.selection,
        }

    @classmethod
    def _from_checked(cls, d: dict, source: str) -> "SuiteCompressed":
        from ..artifact.checks import check_artifact

        names = d["names"]
        if (not isinstance(names, list) or len(names) < 2 or not isinstance(d["items"], dict)
                or not isinstance(d["members"], dict) or any(n not in d["items"] or n not in d["members"] for n in names)):
            raise InputError(f"{source}: damaged: names, items and members do not name the same benchmarks")
        cols = [f"{n}{SEP}{i}" for n in names for i in d["items"][n]]
        recs, ivs = {}, {}
        for n in names:  # each member checked as a single artifact over all chosen items
            one = {"k": d["k"], "seed": d["seed"], "params": d["params"], "items": cols, **d["members"][n]}
            recs[n], ivs[n] = check_artifact(one, f"{source} [{n}]")
        try:
            mean_iv = IntervalModel.from_dict(d["mean_interval"])
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"{source}: damaged: mean_interval cannot be rebuilt ({exc})") from None
        return cls(method=d["method"], k=int(d["k"]), seed=int(d["seed"]), params=d["params"], names=list(names),
                   items={n: list(d["items"][n]) for n in names}, reconstructors=recs, intervals=ivs,
                   mean_interval=mean_iv, dataset=d["dataset"], figures=d["figures"], split=d.get("split", {}),
                   selection=d.get("selection", {}), created=d.get("created", ""),
                   essence_version=d.get("essence_version", "unknown"))

    def __repr__(self) -> str:
        t = self.figures.get("test", {}).get("mean", {})
        return (f"SuiteCompressed(method={self.method!r}, k={self.k}, members={self.names}, "
                f"budget={self.selection.get('budget')}, test_mean_rmse={t.get('rmse', float('nan')):.3f} pp)")


def suite_candidates(idx, n_models: int, seed: int = 0) -> dict:
    """The stronger kinds a suite member's CV also weighs: ``latent`` (a factor model of *every* pooled item of
    the suite, so one ability model spans all members), the single-benchmark default ``mlp`` (L2 penalty 1)
    and two MLPs with more penalty (``mlp_a3``, ``mlp_a10``: alpha 3 and 10), each from the model counts of
    :func:`essence.reconstructors.choose.pool_candidates`. On 250 inputs alpha 1 alone overfits (seed 0 of
    ``benchmarks/suite.py``: CV RMSE above ``mlp_a3``'s on every member), but as a partner in the averages
    it lowered both figures on each of seeds 0-2 (with ``own_mlp2``, on the same items)."""
    from ..reconstructors.mlp import MIN_MODELS_MLP, MLPReconstructor

    out = dict(pool_candidates(idx, n_models, seed=seed))
    if n_models >= MIN_MODELS_MLP:
        out["mlp_a3"] = lambda: MLPReconstructor(alpha=3.0, seed=seed)
        out["mlp_a10"] = lambda: MLPReconstructor(alpha=10.0, seed=seed)
    return out


def own_candidates(idx, member_of, b: int, seed: int = 0) -> dict:
    """The candidates that read member ``b``'s *own* chosen items only: ``own_mlp``, the single-benchmark
    default MLP (L2 penalty 1) on them (a :class:`essence.reconstructors.combine.ColumnsReconstructor`), as a separate
    artifact fits, and ``own_mlp2``, the same with the next seed (a second draw of initial weights to
    average with). ``idx`` ``(k,)`` pooled positions, ``member_of`` ``(M,)`` member of each pooled item.
    Alone it loses to the kinds on all items (seed 0 of ``benchmarks/suite.py``, MMLU's 27 own items: CV
    2.18 against 1.92 pp for ``mlp_a3`` on all 250), but averaged with them it is the most complementary
    partner: offered to every member's average (same items, ``benchmarks/suite.py --seeds 0 1 2``) it moved the
    mean per-benchmark RMSE from 0.923 to 0.897 x the separate artifacts' and the suite mean's RMSE from
    1.030 to 1.004 pp, lower on every seed; ``own_mlp2`` and ``mlp`` (:func:`suite_candidates`) together
    added a little more on every seed. Empty when ``b`` has no chosen item."""
    from ..reconstructors.combine import ColumnsReconstructor

    cols = np.flatnonzero(np.asarray(member_of)[np.asarray(idx, dtype=np.intp)] == b).tolist()
    if not cols:
        return {}
    return {"own_mlp": lambda: ColumnsReconstructor(cols, {"kind": "mlp", "params": {"seed": int(seed)}}),
            "own_mlp2": lambda: ColumnsReconstructor(cols, {"kind": "mlp", "params": {"seed": int(seed) + 1}})}


def _member_blocks(idx, member_of) -> list[list[int]]:
    """Positions among the chosen items ``idx`` ``(k,)`` of each member that has any (``member_of`` ``(M,)``:
    member of each pooled item): ``boost``'s sub-score blocks."""
    owner = np.asarray(member_of)[np.asarray(idx, dtype=np.intp)]
    return [np.flatnonzero(owner == b).tolist() for b in np.unique(owner)]


def boost_candidates(idx, member_of, n_models: int) -> dict:
    """``boost``: gradient-boosted trees on all chosen items plus each member's sub-score (the mean answer over
    the items chosen from it: :class:`essence.reconstructors.boost.BoostReconstructor` with one block per member that has
    chosen items), offered with at least :data:`essence.reconstructors.mlp.MIN_MODELS_MLP` models like the MLPs.
    ``idx`` ``(k,)`` pooled positions, ``member_of`` ``(M,)`` member of each pooled item. Measured on the
    five metabench pools (``benchmarks/suite.py --seeds 0 1 2 3 4 --kinds``, README "Suites"): part of 24 of
    the 25 members' CV-chosen averages; both of issue 16's figures fell on every seed (five seeds: 0.867 ->
    0.849 x the separate artifacts, 0.951 -> 0.932 pp for the suite mean). On the suite mean itself it is
    poor (CV 1.01 pp against 0.77 for the mean of the members, seed 0): trees sum sub-scores badly."""
    from ..reconstructors.boost import BoostReconstructor
    from ..reconstructors.mlp import MIN_MODELS_MLP

    if n_models < MIN_MODELS_MLP:
        return {}
    blocks = _member_blocks(idx, member_of)
    return {"boost": lambda: BoostReconstructor(blocks=blocks)}


#: ``boost_pool``'s trees: more rounds and leaves than ``boost``'s 300 x 15, since they learn from the shared plus
#: the outside models (2-3x the models). Measured on the suite's chosen items (``benchmarks/pool_trees.py``, test
#: split; README "Suites"): 600 x 31 lowered boost_pool's CV and test RMSE on every member on seed 0 and on ARC
#: and GSM8K on seed 1; the same trees on the shared models alone did not beat ``boost`` (seed 1), and 1200 x 31
#: or 600 x 63 gained at most 0.01 pp of CV (test RMSE mixed: -0.01 to +0.04 pp) at 1.5-2x the time.
POOL_BOOST = {"trees": 600, "leaves": 31}


def outside_candidates(suite_fit: Suite, idx, b: int, n_models: int) -> dict:
    """Member ``b``'s candidates trained on its models outside the suite too
    (:class:`essence.reconstructors.combine.WithExtraModels`, rows from :meth:`Suite.outside_rows`; they lack some other
    member's items, which the trees route as missing): ``boost_pool``, ``boost`` on all chosen items,
    ``own_pool_boost``, ``boost`` on the member's own chosen items, and ``kernel_pool``: the ``kernel`` of
    :func:`kernel_candidates` with its settings chosen on the shared models, then fitted on the shared and
    the outside models, whose missing members' answers are filled by their conditional mean given the
    members they have (:func:`essence.reconstructors.impute.impute_blocks`, fitted on the shared models of each fold).
    Offered like the MLPs (from :data:`essence.reconstructors.mlp.MIN_MODELS_MLP` shared models) where the member
    has outside models. Folds hold out shared models only, so their CV scores are on models they did not
    see. ``kernel_pool`` measured on the five metabench pools (``benchmarks/suite.py --seeds 0 1 2 3 4
    --separate-pool --kinds``, README "Suites"): CV RMSE 1-8 % below ``kernel`` on every member, in all 25
    chosen averages, and the mean per-benchmark test RMSE 1.727 -> 1.694 pp (suite mean 0.915 -> 0.900).
    Its artifact stores the training rows: about ``(n_shared + n_outside) * k`` bytes (0.84-0.94 MB of
    JSON per member at k = 250)."""
    from ..reconstructors.boost import BoostReconstructor
    from ..reconstructors.kernel import KernelReconstructor
    from ..reconstructors.mlp import MIN_MODELS_MLP
    from ..reconstructors.combine import ColumnsReconstructor, WithExtraModels

    X_out, y_out = suite_fit.outside_rows(b, idx)
    if n_models < MIN_MODELS_MLP or not y_out.size:
        return {}
    blocks = _member_blocks(idx, suite_fit.member_of)
    own = np.flatnonzero(np.asarray(suite_fit.member_of)[np.asarray(idx, dtype=np.intp)] == b).tolist()
    out = {"boost_pool": lambda: WithExtraModels(BoostReconstructor(blocks=blocks, **POOL_BOOST), X_out, y_out)}
    out["kernel_pool"] = lambda: WithExtraModels(KernelReconstructor(own=own), X_out, y_out, impute=blocks,
                                                 tune_on_given=True)
    if own:
        part = {"kind": "boost", "params": {"blocks": [list(range(len(own)))]}}
        out["own_pool_boost"] = lambda: WithExtraModels(ColumnsReconstructor(own, part), X_out, y_out)
    return out


def fit_members(suite_fit: Suite, idx, reconstructors=DEFAULT_RECONSTRUCTORS, n_train: int | None = None,
                level: float = 0.9, seed: int = 0, stronger: bool = False, average: int = 1, own: bool = False,
                combine: str = "equal"):
    """Per member: the reconstructor chosen by 5-fold CV over ``suite_fit``'s models on the pooled items
    ``idx`` and its interval; and the mean's interval. ``stronger``: also offer the latent and MLP kinds
    where there are enough models for them (:func:`essence.reconstructors.choose.pool_candidates`, as a single-benchmark
    ``compress`` does); alone (``average=1``) it did not help a suite (seed 0 of ``benchmarks/suite.py``: mean
    per-benchmark RMSE ratio 0.93 -> 0.95 of the separate artifacts). :func:`compress_suite` uses
    ``stronger=True, average=3`` (README, "Suites"). ``n_train``: the first ``n_train`` models are
    training models, the rest validation (for the interval's calibration; None: all cross-fitted).
    ``average`` >= 2: :func:`essence.reconstructors.choose.choose_average_by_cv` instead, which may also choose the
    unweighted average of up to ``average`` candidates (and the stronger kinds of :func:`suite_candidates`,
    :func:`kernel_candidates`, :func:`boost_candidates` and :func:`outside_candidates` join when ``stronger``); the winner's out-of-fold
    predictions set the intervals. ``own`` (with ``stronger`` and ``average`` >= 2): each member's candidates
    also hold :func:`own_candidates`. ``combine`` (with ``average`` >= 2): ``"equal"``, the best unweighted
    average of up to ``average`` candidates, or ``"greedy"``, a weighted greedy ensemble of any of them
    (:func:`essence.reconstructors.combine.greedy_ensemble`; the weights are recorded in ``choice``).
    Returns ``(recs, intervals, mean_interval, choice, cv_pred (n, B))``."""
    unknown = [r for r in reconstructors if r not in RECONSTRUCTOR_KINDS]
    if unknown or not reconstructors:
        raise InputError(f"reconstructors: unknown kind {unknown[0] if unknown else None!r}; "
                         f"choose among {', '.join(sorted(RECONSTRUCTOR_KINDS))}")
    R = suite_fit.pooled().responses
    X = R[:, idx]
    Y = suite_fit.targets
    cands = _all_items_candidates(idx, X.shape[0], reconstructors, stronger, 1, seed)
    # kinds that model the training models' answers on every pool item get the whole suite's (pooled) items
    pool = {"R": R} if "R" in inspect.signature(choose_by_cv).parameters else {}
    n = X.shape[0]
    nt = n if n_train is None else int(n_train)
    recs, ivs, choice, cv = {}, {}, {}, np.empty_like(Y)
    for b, name in enumerate(suite_fit.names):
        secs = {}
        if int(average) >= 2:
            mine = member_candidates(suite_fit, idx, b, reconstructors, stronger, own, seed)
            label, rec, scores, cv[:, b] = choose_average_by_cv(mine, X, Y[:, b], seed=seed, R=R,
                                                                max_parts=int(average), seconds=secs,
                                                                combine=combine)
        else:
            label, rec, scores = choose_by_cv(cands, X, Y[:, b], seed=seed, **pool)
            cv[:, b] = cross_fitted_predictions(rec, X, Y[:, b], seed=seed, **pool)
        recs[name] = rec
        choice[name] = {"kind": label, "cv_rmse": {k_: (round(v, 5) if isinstance(v, float) else v)
                                                    for k_, v in scores.items()},
                        **({"weights": dict(zip(label.split("+"), rec.part_weights))}
                           if getattr(rec, "part_weights", None) is not None else {}),
                        **({"seconds": secs} if secs else {})}
        ivs[name] = _interval(cv[:, b], Y[:, b], nt, level)
    mean_iv = _interval(cv.mean(axis=1), Y.mean(axis=1), nt, level)
    return recs, ivs, mean_iv, choice, cv


def member_candidates(suite_fit: Suite, idx, b: int, reconstructors=DEFAULT_RECONSTRUCTORS, stronger: bool = True,
                      own: bool = True, seed: int = 0) -> dict:
    """label -> factory: the candidates :func:`fit_members` weighs for member ``b`` when it averages
    (``average`` >= 2), on the pooled items ``idx`` ``(k,)`` of ``suite_fit``'s models: ``reconstructors``; with
    ``stronger`` the kinds of :func:`suite_candidates`, :func:`kernel_candidates`, :func:`boost_candidates` and
    :func:`outside_candidates`; with ``own`` (and ``stronger``) :func:`own_candidates` too."""
    n = suite_fit.n_models
    mine = _all_items_candidates(idx, n, reconstructors, stronger, 2, seed)
    if stronger:
        mine.update({**kernel_candidates(idx, suite_fit.member_of, b, n), **boost_candidates(idx, suite_fit.member_of, n),
                     **outside_candidates(suite_fit, idx, b, n)})
        if own:
            mine.update(own_candidates(idx, suite_fit.member_of, b, seed))
    return mine


def _all_items_candidates(idx, n_models: int, reconstructors, stronger: bool, average: int, seed: int) -> dict:
    """The candidates on all chosen items :func:`fit_members` weighs (label -> factory)."""
    cands = {kind: reconstructor_class(kind) for kind in reconstructors}
    more = (suite_candidates(idx, n_models, seed=seed) if stronger and int(average) >= 2
            else pool_candidates(idx, n_models, seed=seed) if stronger else {})
    cands.update({k_: f for k_, f in more.items() if k_ not in cands})
    return cands


def _interval(pred, y, n_train: int, level: float) -> IntervalModel:
    if n_train >= len(y):
        return IntervalModel(level=level).fit(pred, y, pred[:0], y[:0])
    return IntervalModel(level=level).fit(pred[:n_train], y[:n_train], pred[n_train:], y[n_train:])


def compress_suite(suite: Suite, k: int, method: str = "essence", seed: int = 0, split=None, test: float = 0.1,
                   val: float = 0.1, level: float = 0.9, per_benchmark: int = 0,
                   reconstructors=DEFAULT_RECONSTRUCTORS, stronger: bool = True, average: int = 3,
                   progress: bool = True, own: bool = True,
                   combine: str = COMBINE_DEFAULT, **params) -> SuiteCompressed:
    """Choose ``k`` items across ``suite`` with ``method`` and fit every member's reconstructor on them.

    The shared models are split once (``split_models`` on the suite mean unless ``split`` is given); the
    selection and the reconstructors see training and validation models only; ``figures["test"]`` is
    computed once on the test models. ``params`` go to the method (see :func:`select_suite`).
    ``stronger``, ``average``: how each member's reconstructor is chosen (:func:`fit_members`); by default
    among ``reconstructors``, the joint latent model, three MLPs, the kernel ridge, boosted trees and boosted
    trees trained on the member's models outside the suite too (:func:`outside_candidates`), or a weighted
    average of them (``combine``);
    ``own`` (with ``stronger``): each member's candidates also hold an MLP on its own chosen items
    (:func:`own_candidates`). The suite mean's estimate is the mean of the member estimates. ``combine`` (with
    ``average`` >= 2): ``"greedy"`` (:data:`COMBINE_DEFAULT`: a weighted greedy ensemble of any candidates,
    :func:`essence.reconstructors.combine.greedy_ensemble`) or ``"equal"`` (the best unweighted average of up to ``average``).
    """
    if not isinstance(suite, Suite):
        raise InputError("suite: expected a Suite (see essence.suite.load_suite)")
    seed = whole_number("seed", seed, 0)
    if combine not in COMBINES:
        raise InputError(f"combine: {combine!r} is not one of {', '.join(COMBINES)} (equal: the best "
                         "unweighted average of a few candidates; greedy: a weighted greedy ensemble)")
    kind = split if isinstance(split, str) else "random"
    split = split if not isinstance(split, (str, type(None))) else split_models(suite.mean_target, test=test, val=val,
                                                                                   seed=seed, kind=kind)
    train, valid, testd = (suite.subset(ix) for ix in split)
    with single_thread():
        idx, info = select_suite(train, valid, k, method=method, seed=seed, per_benchmark=per_benchmark,
                                 progress=progress, **params)
        fit_part = suite.subset(np.r_[split.train, split.val])
        recs, ivs, mean_iv, choice, cv = fit_members(fit_part, idx, tuple(reconstructors), train.n_models, level, seed,
                                                     stronger=bool(stronger), average=int(average), own=bool(own),
                                                     combine=combine)
    pooled_ids = suite.pooled().items[idx]
    items = {n: [s.split(SEP, 1)[1] for s in pooled_ids if s.split(SEP, 1)[0] == n] for n in suite.names}
    art = SuiteCompressed(
        method=method, k=int(k), seed=int(seed), params=jsonable(params), names=suite.names, items=items,
        reconstructors=recs, intervals=ivs, mean_interval=mean_iv,
        dataset={"names": suite.names, "n_models": suite.n_models, "dropped": suite.dropped,
                 "n_items": dict(zip(suite.names, suite.n_items)), "fingerprint": suite.fingerprint(),
                 "item_means": np.round(np.nanmean(fit_part.pooled().responses[:, idx], axis=0), 4).tolist(),
                 **({"caveat": suite.caveat} if suite.caveat else {})},
        figures={}, split={"seed": int(seed), "kind": kind, "test": test, "val": val, "n_train": train.n_models,
                           "n_val": valid.n_models, "n_test": testd.n_models},
        selection={**info, "reconstructor_choice": choice},
        created=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"))
    if art.columns() != pooled_ids.tolist():  # a bug, not user input: members keep their pooled order
        raise RuntimeError("suite artifact: chosen columns out of order")
    nt = train.n_models
    val_est = {n: cv[nt:, b] for b, n in enumerate(suite.names)}
    val_est["mean"] = cv[nt:].mean(axis=1)
    figs = {}
    for label, part, est in (("validation", valid, val_est), ("test", testd, None)):
        if not part.n_models:
            continue
        if est is None:
            est = art._predict(part.pooled().responses[:, idx])
        truth = {n: part.targets[:, b] for b, n in enumerate(suite.names)}
        truth["mean"] = part.mean_target
        figs[label] = {}
        for name in [*suite.names, "mean"]:
            iv = mean_iv if name == "mean" else ivs[name]
            lo, hi = iv.interval(est[name])
            figs[label][name] = _figures(truth[name], est[name], lo, hi, f"{label} figures ({name})",
                                         warn_few=label == "test")
    art.figures = figs
    return art
