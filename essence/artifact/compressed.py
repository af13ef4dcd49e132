"""The compressed benchmark: chosen items + fitted reconstructor + provenance, as one JSON artifact.

:func:`compress` runs a method on a dataset (train / validation / test split of the models, selection
on train + validation only, figures on test) and returns a :class:`Compressed`. ``save`` writes it
atomically as plain JSON (no pickle); ``load`` refuses files of another schema version or with fields
missing; ``estimate`` turns new models' results on the chosen items into full-score estimates with
intervals.
"""

from __future__ import annotations

import datetime as _dt
import warnings
from dataclasses import dataclass, field
from typing import ClassVar
from pathlib import Path

import numpy as np

from ..data._version import __version__
from ..data._runtime import single_thread
from .base import Artifact, check_same_benchmark, format_figures
from ..data import METABENCH, POOL_CAVEAT, Responses, Split, split_models
from ..reconstructors.intervals import IntervalModel, cross_fitted_predictions
from ..data.metrics import summary

from ..data.checks import whole_number
from ..data.errors import InputError, warn
from ..methods.auto import check_models_for_k

__all__ = ["Compressed", "compress", "SCHEMA", "SCHEMA_VERSION"]

SCHEMA = "essence.compressed"
SCHEMA_VERSION = 1
_REQUIRED = ("schema", "schema_version", "method", "k", "seed", "params", "items", "dataset",
             "reconstructor", "interval", "figures")


@dataclass
class Compressed(Artifact):
    """A compressed benchmark.

    ``items``: the chosen item ids ``(k,)``. ``reconstructor``: fitted, maps results on those items
    (in that order) to full scores in pp. ``interval``: the fitted :class:`IntervalModel`.
    ``dataset``: name, fingerprint, sizes, target source, caveat. ``figures``: ``{"validation": {...},
    "test": {...}}`` from :func:`essence.data.metrics.summary`.
    """

    method: str
    k: int
    seed: int
    params: dict
    items: list[str]
    reconstructor: object
    interval: IntervalModel
    dataset: dict
    figures: dict
    split: dict = field(default_factory=dict)
    selection: dict = field(default_factory=dict)
    created: str = ""
    essence_version: str = __version__

    SCHEMA: ClassVar[str] = SCHEMA
    SCHEMA_VERSION: ClassVar[int] = SCHEMA_VERSION
    REQUIRED: ClassVar[tuple] = _REQUIRED

    # -- estimates -------------------------------------------------------------------------------
    def _matrix(self, data) -> tuple[np.ndarray, np.ndarray]:
        """Responses of ``data`` on the chosen items, in artifact order: ``(models (n,), X (n, k))``."""
        import pandas as pd

        if isinstance(data, (list, tuple)):
            (data,) = self.inputs(data)
        if isinstance(data, (str, Path)):
            from ..data import load

            data = load(data, allow_empty_items=True)
        if isinstance(data, Responses):
            ids, models, R = data.items, data.models, data.responses
        elif isinstance(data, pd.DataFrame):
            df = data.set_index("model") if "model" in data.columns else data
            ids = np.asarray([str(c) for c in df.columns])
            models = df.index.to_numpy(dtype=str)
            R = df.apply(pd.to_numeric, errors="coerce").to_numpy(dtype=np.float64)
        else:
            raise InputError("estimate: give a Responses, a wide DataFrame (a 'model' column + item columns) or a path")
        pos = {s: i for i, s in enumerate(ids)}
        missing = [s for s in self.items if s not in pos]
        if missing:
            shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
            raise InputError(
                f"{len(missing)} of the artifact's {self.k} items are missing from the responses: {shown}; "
                "run the new model on every chosen item (see `essence export-lmeval`); a result a model lacks may "
                "be an empty cell, but every chosen item needs its column"
            )
        X = R[:, [pos[s] for s in self.items]]
        finite = X[~np.isnan(X)]
        if finite.size and (finite.min() < 0 or finite.max() > 1):
            raise InputError("responses: values outside [0, 1] on the chosen items; scores must be fractions")
        empty = np.isnan(X).all(axis=1)
        if empty.any():
            raise InputError(
                f"{int(empty.sum())} model(s) have no result on any chosen item, e.g. {str(models[empty][0])!r}; "
                "drop them or run them on the chosen items"
            )
        return models, X

    def estimates(self, X) -> dict:
        """``{"estimate", "lower", "upper", "outside", "answered_by"}``, each ``(n,)``, for answers ``X`` ``(n, k)``
        on the chosen items: the estimate and its interval (pp); whether the model lies outside the reference
        models, judged from its own answers (the frontier reconstructor's posterior, else its plain mean on the
        chosen items beyond the references' range of it); and which estimate answered."""
        return estimates(self.reconstructor, self.interval, self.dataset.get("subset_quantiles"), X)

    def estimate(self, data):
        """Estimated full scores (pp) with intervals for the models in ``data``.

        ``data``: a :class:`Responses`, a wide DataFrame, or a path; it must hold every chosen item
        (matched by item id; extra items are ignored). Returns a DataFrame with columns
        ``model, estimate, lower, upper`` (pp; the interval's nominal level is ``interval.level``),
        ``outside`` and ``answered_by`` (:meth:`estimates`).
        """
        import pandas as pd

        models, X = self._matrix(data)
        return pd.DataFrame({"model": models, **self.estimates(X)})

    def evaluate(self, data) -> dict:
        """Compare estimates on ``data`` with its true full scores: :func:`essence.data.metrics.summary` + coverage."""
        if isinstance(data, (list, tuple)):
            (data,) = self.inputs(data)
        if isinstance(data, (str, Path)):
            from ..data import load

            data = load(data, allow_empty_items=True)
        if not isinstance(data, Responses):
            raise InputError("evaluate: data must be a Responses or a dataset name/path with true scores")
        check_same_benchmark(self._matrix(data)[1], self.dataset.get("item_means"), data.name)
        est = self.estimate(data)
        return _figures(data.target, est["estimate"].to_numpy(), est["lower"].to_numpy(), est["upper"].to_numpy(),
                        f"{data.name}")

    # -- what the command line prints -------------------------------------------------------------
    def summary_lines(self) -> list[str]:
        """What ``essence compress`` prints about the artifact it wrote."""
        lines = []
        auto = self.selection.get("auto")
        if auto:  # the default: what it chose and how good it expects it to be
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

    # -- persistence -----------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {
            **self.header(),
            "method": self.method,
            "k": int(self.k),
            "seed": int(self.seed),
            "params": self.params,
            "items": list(self.items),
            "dataset": self.dataset,
            "split": self.split,
            "reconstructor": self.reconstructor.to_dict(),
            "interval": self.interval.to_dict(),
            "figures": self.figures,
            "selection": self.selection,
        }

    @classmethod
    def _from_checked(cls, d: dict, source: str) -> "Compressed":
        from .checks import check_artifact

        rec, interval = check_artifact(d, source)
        return cls(
            method=d["method"], k=int(d["k"]), seed=int(d["seed"]), params=d["params"], items=list(d["items"]),
            reconstructor=rec, interval=interval, dataset=d["dataset"], figures=d["figures"],
            split=d.get("split", {}), selection=d.get("selection", {}), created=d.get("created", ""),
            essence_version=d.get("essence_version", "unknown"),
        )

    def __repr__(self) -> str:
        t = self.figures.get("test", {})
        return (f"Compressed(method={self.method!r}, k={self.k}, dataset={self.dataset.get('name')!r}, "
                f"test_rmse={t.get('rmse', float('nan')):.3f} pp, test_kendall={t.get('kendall', float('nan')):.3f})")


def estimates(rec, interval, subset_quantiles, X) -> dict:
    """The rows of :meth:`Compressed.estimates` for reconstructor ``rec``, its conformal ``interval`` and the
    references' plain-mean percentiles ``subset_quantiles`` (pp, or None) on answers ``X`` ``(n, k)``."""
    X = np.asarray(X, dtype=np.float64)
    if getattr(rec, "has_interval", False):
        out = rec.predict_interval(X)
        return {"estimate": out["estimate"], "lower": out["lower"], "upper": out["upper"],
                "outside": np.asarray(out["outside"], dtype=bool),
                "answered_by": np.where(out["weight"] > 0.5, "frontier", "regression")}
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


#: fewer models than this make figures (RMSE, rank correlation, coverage) too noisy to read: a warning says so
MIN_FIGURE_MODELS = 10


def _figures(y, est, lo, hi, what: str, warn_few: bool = True, quiet: bool = False) -> dict:
    """:func:`essence.data.metrics.summary` of estimates against true scores (pp), with a one-line warning (not
    scipy's raw ConstantInputWarning) when the true scores are all equal and when there are very few models
    (``warn_few``); ``quiet``: no warning (one was given already)."""
    from scipy.stats import ConstantInputWarning

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
    """Warn (one line) when every observed result, or every full score, is the same value: no item can tell
    models apart. Returns whether it warned."""
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


def compress(
    data: Responses,
    k: int,
    method: str = "auto",
    seed: int = 0,
    split: Split | str | None = None,
    test: float = 0.1,
    val: float = 0.1,
    level: float = 0.9,
    min_answered: int = 5,
    progress: bool = True,
    predictors: str = "all",
    **params,
) -> Compressed:
    """Choose ``k`` items of ``data`` with ``method`` and fit the reconstructor and its interval.

    The models are split (``split_models(data, test, val, seed, kind=split)`` with ``split`` ``"random"`` (the
    default) or ``"top"`` (the strongest models are the test models); a :class:`~essence.data.Split` is used as
    given); the method
    sees the training and validation models only; the test models are used once, for ``figures['test']``.
    Items answered by fewer than ``min_answered`` training models are left out with a warning that
    counts them. Too few models for ``k`` get a warning or an InputError saying how many are needed
    (:func:`essence.methods.auto.check_models_for_k`). Missing cells elsewhere are left out of subset means and
    filled with training item means in ridge (see :mod:`essence.reconstructors.simple`).
    ``predictors``: ``"all"`` lets the reconstructor's CV also weigh the stronger kinds of
    :mod:`essence.reconstructors.combine` (latent from 100, MLP from 300 non-test models; they add tens of seconds on
    thousands of models); ``"basic"`` keeps to the method's own kinds plus the line and shrinkage ones (what
    the comparison sweep uses, so selectors are compared at equal reconstructors).
    ``params`` go to the method's constructor.
    """
    from ..methods import make_method

    if not isinstance(data, Responses):
        raise InputError("data: expected a Responses (see essence.data.load)")
    seed = whole_number("seed", seed, 0)
    min_answered = whole_number("min_answered", min_answered, 1)
    constant = _warn_constant(data)
    if predictors not in ("all", "basic"):
        raise InputError(f"predictors: {predictors!r} is not a choice; use 'all' (with the latent and MLP kinds) "
                         "or 'basic' (without them)")
    selector = make_method(method, k=k, seed=seed, progress=progress, **params)
    kind = split if isinstance(split, str) else "random"
    split = split if isinstance(split, Split) else split_models(data, test=test, val=val, seed=seed, kind=kind)
    train, valid, testd = (data.subset(models=ix) for ix in split)
    source, left_out = data, []
    answered = (~np.isnan(train.responses)).sum(axis=0)
    few = np.flatnonzero(answered < min_answered)
    if few.size:  # sparse cells (agentic suites): leave those items out, say how many, keep the benchmark
        if few.size == data.n_items:
            raise InputError(f"every item was answered by fewer than {min_answered} training models; "
                             "add models or lower min_answered")
        warn(f"{few.size} item(s) were answered by fewer than {min_answered} training models and are "
                      f"left out, e.g. {', '.join(map(repr, data.items[few[:3]].tolist()))} "
                      f"({data.n_items - few.size} items remain; lower min_answered to keep them)")
        keep = np.setdiff1d(np.arange(data.n_items), few)
        left_out = data.items[few].tolist()
        data = data.subset(items=keep)
        train, valid, testd = (part.subset(items=keep) for part in (train, valid, testd))
    check_models_for_k(k, train.n_models + valid.n_models, data.n_items)
    with single_thread():  # see essence.data._runtime
        selector.fit(train, valid, predictors=predictors)
        idx = selector.items_
        rec = selector.reconstructor_
        pooled = getattr(selector, "reconstructor_fitted_on_", "train") == "train+val"
        fit_part = Responses(np.vstack([train.responses, valid.responses]), np.r_[train.models, valid.models],
                             train.items, np.r_[train.target, valid.target]) if pooled else train
        # the conformal interval; a kind with its own interval (frontier) calibrates it on its regression
        calibrated = getattr(rec, "inner_", rec) if getattr(rec, "has_interval", False) else rec
        pred_cf = cross_fitted_predictions(calibrated, fit_part.responses[:, idx], fit_part.target, seed=seed,
                                           R=fit_part.responses)
        # a reconstructor refitted on train + val has no held-out validation models: calibrate on cross-fits
        pred_val = pred_cf[train.n_models:] if pooled else calibrated.predict(valid.responses[:, idx])
        interval = IntervalModel(level=level).fit(pred_cf[:train.n_models] if pooled else pred_cf, train.target,
                                                  pred_val, valid.target)
    with np.errstate(invalid="ignore"):
        subset_q = np.round(np.nanpercentile(100 * np.nanmean(fit_part.responses[:, idx], axis=1), np.arange(101)), 4)
    figures = {}
    for label, part in (("validation", valid), ("test", testd)):
        if part.n_models:
            out = estimates(rec, interval, subset_q, part.responses[:, idx])
            est = pred_val if label == "validation" and not getattr(rec, "has_interval", False) else out["estimate"]
            lo, hi = interval.interval(est) if est is pred_val else (out["lower"], out["upper"])
            figures[label] = _figures(part.target, est, lo, hi, f"{label} figures", warn_few=label == "test",
                                     quiet=constant)
            figures[label]["outside"] = float(np.mean(out["outside"]))
    dataset = {
        "name": data.name, "fingerprint": source.fingerprint(), "n_models": data.n_models,
        "n_items": source.n_items, "target_source": data.target_source, "binary": data.is_binary,
        "target_quantiles": np.round(np.nanpercentile(data.target, np.arange(101)), 4).tolist(),  # essence.artifact.report
        "item_means": np.round(np.nanmean(fit_part.responses[:, idx], axis=0), 4).tolist(),  # check_same_benchmark
        "subset_quantiles": subset_q.tolist(),  # the references' plain mean on the chosen items: who is outside
    }
    if left_out:
        dataset["items_left_out"] = {"reason": f"answered by fewer than {min_answered} training models",
                                     "items": left_out}
    if data.name in METABENCH:
        dataset["caveat"] = POOL_CAVEAT
    selection = {
        "reconstructor_choice": selector.reconstructor_choice_,
        "reconstructor_val_rmse": selector.reconstructor_scores_,
        "predictors": predictors,
        **getattr(selector, "info_", {}),
    }
    return Compressed(
        method=method, k=int(k), seed=int(seed), params=selector.params_dict(),
        items=data.items[idx].tolist(), reconstructor=rec, interval=interval, dataset=dataset, figures=figures,
        split={"seed": int(seed), "kind": kind, "test": test, "val": val, "n_train": train.n_models, "n_val": valid.n_models,
               "n_test": testd.n_models},
        selection=selection, created=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    )
