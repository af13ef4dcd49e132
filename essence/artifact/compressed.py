"""The compressed benchmark: chosen items + fitted reconstructor + interval + provenance, as one JSON artifact."""

from __future__ import annotations

import datetime as _dt
import warnings
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd
from scipy.stats import ConstantInputWarning

from ..data import METABENCH, POOL_CAVEAT, Responses, Split, split_models
from ..data._runtime import single_thread
from ..data.checks import whole_number
from ..data.errors import InputError, warn
from ..data.metrics import summary
from ..data.split import default_test
from ..methods import make_method
from ..methods.auto import check_models_for_k
from ..reconstructors.intervals import IntervalModel, cross_fitted_predictions
from ..reconstructors.pairs import PairInterval
from .base import Artifact, items_hash, check_answers, check_same_benchmark, format_figures, missing_items
from .checks import check_artifact

__all__ = ["Compressed", "compress", "SCHEMA", "SCHEMA_VERSION"]

SCHEMA = "essence.compressed"
SCHEMA_VERSION = 1


@dataclass
class Compressed(Artifact):
    """A compressed benchmark: ``items`` the chosen item ids ``(k,)``; ``reconstructor`` maps results on them (in
    that order) to full scores (pp); ``interval`` its :class:`IntervalModel`; ``dataset``: name, fingerprint,
    sizes, reference quantiles; ``figures``: ``{"validation", "test"}`` of :func:`essence.data.metrics.summary`."""

    items: list[str]
    reconstructor: object
    interval: IntervalModel
    pairs: dict | None = None
    lineage: list = field(default_factory=list)
    #: ids of the fallback sample (items not chosen, drawn at random) a model outside the references may answer too
    fallback_items: list = field(default_factory=list)

    SCHEMA: ClassVar[str] = SCHEMA
    SCHEMA_VERSION: ClassVar[int] = SCHEMA_VERSION
    REQUIRED: ClassVar[tuple] = ("method", "k", "seed", "params", "items", "dataset", "reconstructor", "interval",
                                 "figures")

    def _matrix(self, data, fallback: bool = False) -> tuple:
        """``(models (n,), X (n, k))``: the results of ``data`` on the chosen items, in artifact order; with
        ``fallback``, also ``Xf`` ``(n, m)`` on the fallback sample (NaN where a column is absent), or None when
        ``data`` holds none of it."""
        ids, models, R = self._table(data)
        pos = {s: i for i, s in enumerate(ids)}
        missing = [s for s in self.items if s not in pos]
        if missing:
            raise InputError(
                f"{len(missing)} of the artifact's {self.k} items are missing from the responses: "
                f"{missing_items(missing)}; run the new model on every chosen item (see `essence export-lmeval`); "
                "a result a model lacks may be an empty cell, but every chosen item needs its column")
        X = R[:, [pos[s] for s in self.items]]
        check_answers(X, models)
        if not fallback:
            return models, X
        if not any(s in pos for s in self.fallback_items):
            return models, X, None
        Xf = np.column_stack([R[:, pos[s]] if s in pos else np.full(len(models), np.nan) for s in self.fallback_items])
        return models, X, Xf

    def estimates(self, X, Xf=None) -> dict:
        """``{"estimate", "lower", "upper", "outside", "answered_by"}``, each ``(n,)``, for answers ``X`` ``(n, k)``
        (and ``Xf`` ``(n, m)`` on the fallback sample, NaN where not run: a model outside the references that answered
        it gets the sample's estimate, ``answered_by="fallback sample"``)."""
        return estimates(self.reconstructor, self.interval, self.dataset.get("subset_quantiles"), X, Xf)

    def estimate(self, data, fallback: bool = False):
        """A DataFrame ``model`` + :meth:`estimates`' columns for ``data`` (Responses, wide DataFrame or path) from
        the chosen items; with ``fallback``, also from the fallback sample's answers where ``data`` holds them (a
        second stage for the models outside the references: ``essence estimate`` and ``essence run`` do so)."""
        if not fallback:
            models, X = self._matrix(data)
            return pd.DataFrame({"model": models, **self.estimates(X)})
        models, X, Xf = self._matrix(data, fallback=True)
        return pd.DataFrame({"model": models, **self.estimates(X, Xf)})

    def evaluate(self, data) -> dict:
        """:func:`essence.data.metrics.summary` of the estimates on ``data`` against its true full scores."""
        data = self._data(data, evaluate=True)
        X = self._matrix(data)[1]
        every = self.dataset.get("reference_item_means")  # every item's (or a sample's) reference mean, if recorded
        pos = {s: i for i, s in enumerate(data.items.tolist())}
        if every and any(s in pos for s in every["items"]):
            both = [(pos[s], m) for s, m in zip(every["items"], every["means"]) if s in pos]
            check_same_benchmark(data.responses[:, [j for j, _ in both]], [m for _, m in both], data.name)
        else:
            check_same_benchmark(X, self.dataset.get("item_means"), data.name)
        est = self.estimates(X)
        return _figures(data.target, est["estimate"], est["lower"], est["upper"], f"{data.name}")

    def summary_lines(self) -> list[str]:
        """What ``essence compress`` prints about the artifact it wrote."""
        lines = []
        auto = self.selection.get("auto")
        if auto:
            lines.append(f"auto: {auto['regime']}; chose {auto['choice']}, estimated RMSE {auto['estimate_rmse']:.2f} "
                         f"+- {auto['estimate_sd']:.2f} pp ({auto['ratio_to_baseline']:.2f} x {auto['baseline']})")
        lines.append(f"validation: {format_figures(self.figures.get('validation', {}))}")
        lines.append(f"test:       {format_figures(self.figures.get('test', {}))}   (errors in pp; coverage of the "
                     f"{self.interval.level:.0%} interval)")
        if "caveat" in self.dataset:
            lines.append(f"note: {self.dataset['caveat']}")
        return lines

    def evaluation_lines(self, res: dict, data) -> list[str]:
        """What ``essence evaluate`` prints for :meth:`evaluate`'s ``res`` on ``data`` (a Responses)."""
        lines = [f"{data.name}: {self.method} k={self.k}: {format_figures(res)}"]
        if data.fingerprint() == self.dataset.get("fingerprint"):
            lines.append("note: DATA is the data the artifact was fitted on; its training and validation models chose "
                         "the items, so these figures are optimistic. The artifact's own test figures: "
                         + format_figures(self.figures.get("test", {})))
        return lines

    def to_dict(self) -> dict:
        return {**self.header(), "method": self.method, "k": int(self.k), "seed": int(self.seed), "params": self.params,
                "items": list(self.items), "dataset": self.dataset, "split": self.split,
                "items_hash": items_hash(self.items), "reconstructor": self.reconstructor.to_dict(),
                "interval": self.interval.to_dict(),
                **({"pairs": {kind: pi.to_dict() for kind, pi in self.pairs.items()}} if self.pairs else {}),
                "lineage": self.lineage, "figures": self.figures, "selection": self.selection,
                **({"fallback_items": list(self.fallback_items)} if self.fallback_items else {})}

    @classmethod
    def _from_checked(cls, d: dict, source: str) -> "Compressed":
        rec, interval = check_artifact(d, source)
        return cls(
            method=d["method"], k=int(d["k"]), seed=int(d["seed"]), params=d["params"], items=list(d["items"]),
            reconstructor=rec, interval=interval, dataset=d["dataset"], figures=d["figures"],
            pairs=_pairs_from_dict(d.get("pairs")), lineage=list(d.get("lineage", [])),
            split=d.get("split", {}), selection=d.get("selection", {}), created=d.get("created", ""),
            fallback_items=list(d.get("fallback_items", [])),
            essence_version=d.get("essence_version", "unknown"))

    def __repr__(self) -> str:
        t = self.figures.get("test", {})
        return (f"Compressed(method={self.method!r}, k={self.k}, dataset={self.dataset.get('name')!r}, "
                f"test_rmse={t.get('rmse', float('nan')):.3f} pp, test_kendall={t.get('kendall', float('nan')):.3f})")


def estimates(rec, interval, subset_quantiles, X, Xf=None) -> dict:
    """:meth:`Compressed.estimates` of ``rec`` and ``interval`` on answers ``X`` ``(n, k)`` (``Xf``: on the
    fallback sample, for a reconstructor that has one)."""
    X = np.asarray(X, dtype=np.float64)
    if getattr(rec, "has_interval", False):
        out = rec.predict_interval(X) if Xf is None or not len(getattr(rec, "fallback", ())) else \
            rec.predict_interval(X, np.asarray(Xf, dtype=np.float64))
        by = np.where(out["weight"] > 0.5, "frontier", "regression").astype(object)
        return {"estimate": out["estimate"], "lower": out["lower"], "upper": out["upper"],
                "outside": np.asarray(out["outside"], dtype=bool),
                "answered_by": np.where(out.get("fallback", False), "fallback sample", by)}
    est = rec.predict(X)
    lo, hi = interval.interval(est)
    if subset_quantiles is None:
        outside = np.zeros(est.shape, dtype=bool)
    else:
        with np.errstate(invalid="ignore"):
            mean = 100 * np.nanmean(X, axis=1)
        outside = (mean < subset_quantiles[0]) | (mean > subset_quantiles[-1])
    return {"estimate": est, "lower": lo, "upper": hi, "outside": outside,
            "answered_by": np.full(est.shape, "regression", dtype=object)}


def _pairs_from_dict(d) -> dict | None:
    return {kind: PairInterval.from_dict(v) for kind, v in d.items()} if d else None


def calibrate(rec, R, y, idx, n_train: int, seed: int = 0, level: float = 0.9, oof=None, oof_frontier=None,
              items_fitted: bool = True):
    """``(interval, pairs, pred_cf)`` for ``rec``, fitted on reference answers ``R`` ``(n, N)`` (chosen columns ``idx``
    ``(k,)``) and full scores ``y`` ``(n,)`` pp, the first ``n_train`` models training, the rest validation: the
    :class:`IntervalModel` of one model and the ``pairs`` (``{"regression": PairInterval, ...}``) of a difference,
    calibrated on cross-fitted predictions ``pred_cf`` ``(n,)`` pp (of the regression, for a kind with its own
    interval). ``oof`` ``(n,)`` pp: out-of-fold residuals (estimate - truth) of a cross-validation that chose the
    items inside its folds (a method's ``oof_residuals_``), which the pairs then calibrate on; ``oof_frontier``: the
    frontier estimate's (``oof_frontier_residuals_``), adding ``"frontier"`` and ``"mixed"`` pairs; ``items_fitted``:
    whether the items were chosen on these models (recorded: cross-fitted residuals then read them optimistically)."""
    calibrated = getattr(rec, "inner_", rec) if getattr(rec, "has_interval", False) else rec
    pred_cf = cross_fitted_predictions(calibrated, R[:, idx], y, seed=seed, R=R)
    interval = IntervalModel(level=level).fit(pred_cf[:n_train], y[:n_train], pred_cf[n_train:], y[n_train:])
    r_g = pred_cf - y if oof is None else np.asarray(oof, dtype=np.float64)
    X = R[:, idx]
    source = "nested" if oof is not None else ("fixed-items" if items_fitted else "independent-items")
    pairs = {"regression": PairInterval(level=level, residuals=source).fit_residuals(r_g, r_g, X, n_train, seed)}
    if oof_frontier is not None:
        r_d = np.asarray(oof_frontier, dtype=np.float64)
        pairs["frontier"] = PairInterval(level=level, residuals=source).fit_residuals(r_d, r_d, X, n_train, seed)
        pairs["mixed"] = PairInterval(level=level, residuals=source).fit_residuals(r_g, r_d, X, n_train, seed)
    return interval, pairs, pred_cf


#: fewer models than this make figures too noisy to read: a warning says so
MIN_FIGURE_MODELS = 10


def _figures(y, est, lo, hi, what: str, warn_few: bool = True, quiet: bool = False) -> dict:
    """:func:`essence.data.metrics.summary`; warns (unless ``quiet``) on equal true scores or few models."""
    y = np.asarray(y, dtype=np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConstantInputWarning)
        fig = summary(y, est, lo, hi)
    if quiet:
        pass
    elif y.size > 1 and np.ptp(y) == 0:
        warn(f"{what}: all {y.size} models have the same true score ({y[0]:g} pp): RMSE and coverage say nothing "
             "about telling models apart, and rank correlations are undefined")
    elif warn_few and y.size < MIN_FIGURE_MODELS:
        warn(f"{what}: computed on only {y.size} model(s); with fewer than {MIN_FIGURE_MODELS} the figures are "
             "noise (add models)")
    return fig


def _warn_constant(data: Responses) -> bool:
    """Whether it warned (one line) that every observed result, or every full score, is the same value."""
    obs = data.responses[~np.isnan(data.responses)]
    if obs.size and np.ptp(obs) == 0:
        warn(f"{data.name}: every observed result is {obs[0]:g} (constant data); the chosen items cannot tell "
             "models apart, and the figures (RMSE, coverage) cannot show an error")
        return True
    if data.n_models > 1 and np.ptp(data.target) == 0:
        warn(f"{data.name}: every model has the same full score ({data.target[0]:g} pp); the figures (RMSE, "
             "coverage) cannot show an error and rank correlations are undefined")
        return True
    return False


def dataset_record(data: Responses, source: Responses, X, **extra) -> dict:
    """An artifact's ``dataset``: ``data``'s name, sizes and target quantiles (pp), ``source``'s fingerprint and items
    (the data before items were left out), the item means and the quantiles of the mean (pp) of the references'
    answers ``X`` ``(n, k)`` on the chosen items, ``extra``, and the metabench caveat."""
    with np.errstate(invalid="ignore"):
        subset_q = np.round(np.nanpercentile(100 * np.nanmean(X, axis=1), np.arange(101)), 4)
    out = {"name": data.name, "fingerprint": source.fingerprint(), "n_models": data.n_models,
           "n_items": source.n_items, "target_source": data.target_source, "binary": data.is_binary,
           "target_quantiles": np.round(np.nanpercentile(data.target, np.arange(101)), 4).tolist(),
           "item_means": np.round(np.nanmean(X, axis=0), 4).tolist(), "subset_quantiles": subset_q.tolist(), **extra}
    return {**out, "caveat": POOL_CAVEAT} if data.name in METABENCH else out


#: most items whose reference means an artifact keeps for evaluate's same-benchmark check (a seeded sample beyond)
MAX_CHECK_ITEMS = 2000


def _item_means(data: Responses, R, idx, seed: int) -> dict:
    """``{"items", "means"}``: the reference models' (rows of ``R``) mean answer on every item of ``data``, or on the
    chosen ``idx`` and a seeded sample up to :data:`MAX_CHECK_ITEMS` items, for :meth:`Compressed.evaluate`."""
    keep = np.arange(data.n_items)
    if keep.size > MAX_CHECK_ITEMS:
        rest = np.setdiff1d(keep, idx)
        keep = np.union1d(idx, np.random.default_rng([seed, 7]).choice(rest, MAX_CHECK_ITEMS - len(idx), replace=False))
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        means = np.nanmean(R[:, keep], axis=0)
    return {"items": data.items[keep].tolist(), "means": np.round(means, 4).tolist()}


def compress(data: Responses, k: int, method: str = "auto", seed: int = 0, split: Split | str | None = None,
             test: float | None = None, val: float = 0.1, level: float = 0.9, min_answered: int = 5,
             progress: bool = True, predictors: str = "all", **params) -> Compressed:
    """Choose ``k`` items of ``data`` with ``method`` (``params``) on the training and validation models of ``split``
    (a kind of :data:`~essence.data.SPLIT_KINDS`: ``"random"``, ``"top"``, ``"bottom"``, ``"far"``, ``"chance"``, or
    a :class:`~essence.data.Split`), fit the reconstructor and its ``level`` interval; ``test``: the held-out fraction,
    None for the kind's default (0.1 random, 0.2 the extrapolation kinds: :func:`~essence.data.split.default_test`);
    items answered by fewer than ``min_answered`` training models are left out with a warning."""
    if not isinstance(data, Responses):
        raise InputError("data: expected a Responses (see essence.data.load)")
    seed = whole_number("seed", seed, 0)
    min_answered = whole_number("min_answered", min_answered, 1)
    constant = _warn_constant(data)
    if predictors not in ("all", "basic"):
        raise InputError(f"predictors: {predictors!r} is not a choice; use 'all' (with the MLP kind from 300 models) "
                         "or 'basic' (without them)")
    selector = make_method(method, k=k, seed=seed, progress=progress, **params)
    kind = split if isinstance(split, str) else "random"
    if test is None and not isinstance(split, Split):
        test = default_test(kind)
    split = split if isinstance(split, Split) else split_models(data, test=test, val=val, seed=seed, kind=kind)
    train, valid, testd = (data.subset(models=ix) for ix in split)
    source, left_out = data, []
    answered = (~np.isnan(train.responses)).sum(axis=0)
    few = np.flatnonzero(answered < min_answered)
    if few.size:
        if few.size == data.n_items:
            raise InputError(f"every item was answered by fewer than {min_answered} training models; "
                             "add models or lower min_answered")
        warn(f"{few.size} item(s) were answered by fewer than {min_answered} training models and are left out, e.g. "
             f"{', '.join(map(repr, data.items[few[:3]].tolist()))} ({data.n_items - few.size} items remain; lower "
             "min_answered to keep them)")
        keep = np.setdiff1d(np.arange(data.n_items), few)
        left_out = data.items[few].tolist()
        data = data.subset(items=keep)
        train, valid, testd = (part.subset(items=keep) for part in (train, valid, testd))
    check_models_for_k(k, train.n_models + valid.n_models, data.n_items)
    with single_thread():
        selector.fit(train, valid, predictors=predictors)
        idx, rec = selector.items_, selector.reconstructor_
        R = np.vstack([train.responses, valid.responses])
        interval, pairs, pred_cf = calibrate(rec, R, np.r_[train.target, valid.target], idx, train.n_models, seed,
                                             level, getattr(selector, "oof_residuals_", None),
                                             getattr(selector, "oof_frontier_residuals_", None),
                                             not getattr(selector, "needs_no_models", False))
        pred_val = pred_cf[train.n_models:]
    reason = f"answered by fewer than {min_answered} training models"
    left = {"items_left_out": {"reason": reason, "items": left_out}} if left_out else {}
    dataset = dataset_record(data, source, R[:, idx], **left, reference_item_means=_item_means(data, R, idx, seed))
    figures = {}
    for label, part in (("validation", valid), ("test", testd)):
        if part.n_models:
            out = estimates(rec, interval, dataset["subset_quantiles"], part.responses[:, idx])
            est = pred_val if label == "validation" and not getattr(rec, "has_interval", False) else out["estimate"]
            lo, hi = interval.interval(est) if est is pred_val else (out["lower"], out["upper"])
            figures[label] = _figures(part.target, est, lo, hi, f"{label} figures", warn_few=label == "test",
                                     quiet=constant)
            figures[label]["outside"] = float(np.mean(out["outside"]))
    selection = {"reconstructor_choice": selector.reconstructor_choice_,
                 "reconstructor_val_rmse": selector.reconstructor_scores_, "predictors": predictors, **selector.info_}
    return Compressed(
        method=method, k=int(k), seed=int(seed), params=selector.params_dict(),
        items=data.items[idx].tolist(), reconstructor=rec, interval=interval, pairs=pairs, dataset=dataset,
        fallback_items=data.items[np.asarray(getattr(rec, "fallback", ()), dtype=np.intp)].tolist(),
        figures=figures,
        split={"seed": int(seed), "kind": kind, "test": test, "val": val, "n_train": train.n_models,
               "n_val": valid.n_models, "n_test": testd.n_models},
        selection=selection, created=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"))
