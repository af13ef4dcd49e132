"""The one interface every item-selection method follows.

A method is a scikit-learn-style estimator:

* ``__init__(k, seed=0, progress=True, **params)`` stores parameters only (every parameter is a named
  keyword with a documented default);
* ``fit(train, val)`` sees **only** training and validation models (two :class:`~essence.data.Responses`
  with the same items) and sets

  - ``items_``: ``(k,)`` int, distinct positions into ``train.items``;
  - ``reconstructor_``: the reconstructor for those items, chosen among the method's candidates plus
    ``line`` and ``mean_ridge`` (:data:`essence.reconstructors.simple.FEW_MODEL_CHOICES`) by 5-fold cross-validation
    over all training + validation models (:func:`essence.reconstructors.choose.choose_by_cv`), then refitted on
    all of them (``reconstructor_fitted_on_ = "train+val"``);
  - ``reconstructor_choice_`` and ``reconstructor_scores_``: the label chosen and each candidate's
    cross-validated RMSE (pp);
  - ``info_``: a JSON-able dict of diagnostics (e.g. fitness per generation);

* the test models never reach ``fit``: :func:`essence.artifact.compressed.compress` splits them off first.

Subclasses implement :meth:`select` and, when they need other reconstructors than the GAM on the
subset score, :meth:`reconstructor_candidates`.
"""

from __future__ import annotations

from dataclasses import asdict, fields, is_dataclass

import numpy as np
from sklearn.base import BaseEstimator

from ..data import Responses
from ..data._io import jsonable
from ..data._runtime import single_thread
from ..data.checks import Flag, Whole, check_params, whole_number
from ..data.errors import InputError
from ..features.irt import fit_item_params
from ..reconstructors.choose import choose_by_cv
from ..reconstructors.choose import pool_candidates
from ..reconstructors.simple import FEW_MODEL_CHOICES, GAMReconstructor

__all__ = ["Selector", "check_k", "require_texts", "irt_item_params"]


def check_k(k, n_available: int, what: str = "items") -> int:
    """Validate a budget: an int with ``1 <= k <= n_available``; ValueError saying what to do otherwise."""
    k = whole_number("k", k)
    if k <= 0:
        raise InputError(f"k: must be at least 1, got {k}; choose how many items to keep")
    if k > n_available:
        raise InputError(f"k: {k} is larger than the {n_available} {what} available; choose k <= {n_available}")
    return int(k)


def require_texts(data: Responses, method: str) -> np.ndarray:
    """The item texts ``(n_items,)`` of ``data``; ValueError when the dataset has none (or some are empty)."""
    if data.texts is None:
        raise InputError(
            f"dataset {data.name!r} has no item texts; {method} chooses by item text: use a dataset with texts "
            "or another method (random, kmeans, essence, irt, ...)"
        )
    empty = np.flatnonzero(np.char.str_len(np.char.strip(data.texts.astype(str))) == 0)
    if empty.size:
        raise InputError(
            f"dataset {data.name!r}: {empty.size} item(s) have an empty text, e.g. "
            f"{', '.join(map(repr, data.items[empty[:3]].tolist()))}; {method} chooses by item text: "
            "fill in those texts or drop the items"
        )
    return data.texts


def irt_item_params(selector, train: Responses):
    """2PL parameters of all items with ``selector.irt`` (:class:`essence.features.irt.IRTConfig`).

    The one call the ``irt`` and ``tinybench`` selectors share (they share the cached fit too): returns
    ``(params, Rb)`` from :func:`essence.features.irt.fit_item_params` and records the fit in
    ``selector.info_["irt_fit"]``.
    """
    cfg = selector.irt
    params, Rb, record = fit_item_params(train, method=selector.name, binarize=cfg.binarize, cache=cfg.cache,
                                         progress=selector.progress, seed=selector.seed, **cfg.fit_settings())
    selector.info_["irt_fit"] = record
    return params, Rb


class Selector(BaseEstimator):
    """Base class. ``name`` is the registry name; ``signal`` says what the method chooses from.

    A scikit-learn ``BaseEstimator``: ``get_params``/``set_params`` and ``sklearn.base.clone`` come from
    there. ``_domains`` maps a parameter to its allowed values (:mod:`essence.data.checks`); :meth:`fit` and
    :func:`essence.methods.make_method` check them before any work. ``k`` is checked against the items.
    """

    name = "base"
    #: what the choice is based on: "responses" (training models' results), "texts" (item text only), ...
    signal = "responses"
    #: True when the method can choose without any model's results (Herding, PPL)
    needs_no_models = False
    #: most pool items the method takes (None = no limit): above it ``fit`` refuses up front, naming
    #: ``item_limit_reason`` (what was measured), before any work (whole benchmarks: README "Whole benchmarks")
    item_limit: int | None = None
    item_limit_reason = ""
    #: False where the plain mean of the chosen items is the wrong summary (K-Means anchors carry weights)
    plain_mean_choices = True
    #: constructor parameters that hold a settings object (a frozen dataclass with ``check()`` and ``replace()``),
    #: name -> its class; :meth:`route_params` sends a flat setting (``generations=100``) to the one that has it
    _configs: dict[str, type] = {}

    def __init__(self, k: int, seed: int = 0, progress: bool = True):
        self.k = k
        self.seed = seed
        self.progress = progress

    #: parameter -> allowed values, checked by :func:`essence.data.checks.check_params` (subclasses extend it)
    _domains = {"seed": Whole(0), "progress": Flag()}

    # -- parameters ----------------------------------------------------------------------------------
    @classmethod
    def _param_names(cls) -> list[str]:
        """The constructor's parameter names (scikit-learn's ``_get_param_names``, in signature order)."""
        return list(cls._get_param_names())

    @classmethod
    def route_params(cls, params: dict) -> dict:
        """Constructor keyword arguments from ``params``: a settings object of :attr:`_configs` may be given whole
        (the object, or a dict of its fields), or field by field, as ``field`` (when one settings object has it)
        or ``group.field``. InputError for a field no settings object has."""
        out, changes = {}, {g: {} for g in cls._configs}
        for name, value in params.items():
            group, _, field_ = name.rpartition(".")
            if name in cls._configs:
                out[name] = value if isinstance(value, cls._configs[name]) else _config_from(cls._configs[name], name,
                                                                                              value)
            elif group in cls._configs:
                changes[group][field_] = value
            else:
                owners = [g for g, c in cls._configs.items() if name in {f.name for f in fields(c)}]
                if owners:
                    changes[owners[0]][name] = value
                else:
                    out[name] = value
        for group, ch in changes.items():
            if ch:
                base = out.get(group, cls._configs[group]())
                out[group] = _config_from(cls._configs[group], group, {**asdict(base), **ch})
        return out

    def params_dict(self) -> dict:
        """Constructor parameters as JSON values (settings objects as dicts), ``progress`` left out (it changes
        nothing chosen): what an artifact and a sweep signature record."""
        return {n: jsonable(asdict(v) if is_dataclass(v) else v) for n, v in self.get_params(deep=False).items()
                if n != "progress"}

    def check_params(self) -> "Selector":
        """InputError naming the first parameter outside its domain (see ``_domains`` and each settings object's
        ``check``); returns ``self``."""
        check_params(self)
        for group in self._configs:
            try:
                getattr(self, group).check()
            except InputError as exc:
                raise InputError(f"{group}.{exc}") from None
        return self

    # -- the contract --------------------------------------------------------------------------------
    def fit(self, train: Responses, val: Responses, predictors: str = "all") -> "Selector":
        """Choose ``k`` items with training/validation models only; fit and choose the reconstructor.

        ``predictors``: ``"all"`` lets the reconstructor's CV also weigh the stronger kinds of
        :func:`essence.reconstructors.choose.pool_candidates`; ``"basic"`` keeps to the method's own kinds plus
        the line and shrinkage ones (the comparison sweep: selectors compared at equal reconstructors)."""
        if predictors not in ("all", "basic"):
            raise InputError(f"predictors: {predictors!r} is not a choice; use 'all' or 'basic'")
        self.predictors_ = predictors
        if not isinstance(train, Responses) or not isinstance(val, Responses):
            raise InputError("fit: train and val must be Responses (see essence.data.load)")
        if not np.array_equal(train.items, val.items):
            raise InputError("fit: train and val must hold the same items in the same order")
        self.check_params()
        check_k(self.k, train.n_items)
        if self.item_limit is not None and train.n_items > self.item_limit:
            raise InputError(f"{self.name}: {train.n_items} items are more than the {self.item_limit} it takes "
                             f"({self.item_limit_reason}); use method 'essence' (it pre-screens big pools) or "
                             f"'random', or give a pool of at most {self.item_limit} items")
        self.info_ = {}
        with single_thread():  # see essence.data._runtime: faster on shared cores, same items on any machine
            return self._fit(train, val)

    def _fit(self, train: Responses, val: Responses) -> "Selector":
        idx = np.asarray(self.select(train, val), dtype=np.intp)
        if idx.shape != (self.k,) or np.unique(idx).size != self.k or idx.min() < 0 or idx.max() >= train.n_items:
            raise RuntimeError(f"{self.name}: select() returned an invalid subset {idx!r}")  # a bug, not user input
        self.items_ = idx
        # every method also gets the few-model reconstructors; the choice is cross-validated over all
        # non-test models (train + val) and the chosen one is refitted on all of them
        # (and, with enough models, the stronger ones of essence.reconstructors.combine), unless the method keeps to its own
        R = np.vstack([train.responses, val.responses])
        stronger = pool_candidates(idx, R.shape[0], seed=self.seed) if self.predictors_ == "all" else {}
        extra = {**FEW_MODEL_CHOICES, **stronger} if self.plain_mean_choices else {}
        cands = {**self.reconstructor_candidates(train, idx), **extra}
        label, rec, scores = choose_by_cv(cands, R[:, idx], np.r_[train.target, val.target], seed=self.seed, R=R)
        self.reconstructor_fitted_on_ = "train+val"
        self.reconstructor_choice_ = label
        self.reconstructor_ = rec
        self.reconstructor_scores_ = scores
        return self

    def select(self, train: Responses, val: Responses) -> np.ndarray:
        """Return ``(k,)`` distinct item positions. Subclasses implement this."""
        raise NotImplementedError

    def reconstructor_candidates(self, train: Responses, idx: np.ndarray) -> dict:
        """Label -> zero-argument factory of an unfitted reconstructor. Default: the GAM on the subset score."""
        return {"gam": GAMReconstructor}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params_dict().items())
        return f"{type(self).__name__}({args})"


def _config_from(cls: type, group: str, values) -> object:
    """A settings object of class ``cls`` from a dict of its fields; InputError naming an unknown field."""
    known = {f.name for f in fields(cls)}
    if isinstance(values, str) and "kind" in known:  # fitness="gam": the kind alone
        values = {"kind": values}
    if not isinstance(values, dict):
        raise InputError(f"{group}: give a {cls.__name__} or a dict of its settings, not {values!r}")
    unknown = sorted(set(values) - known)
    if unknown:
        raise InputError(f"{group}: unknown setting(s) {unknown}; its settings: {', '.join(sorted(known))}")
    values = {n: tuple(v) if isinstance(v, list) else v for n, v in values.items()}
    return cls(**values)


class TextOnlySelector(Selector):
    """A selector that chooses from the item texts alone (Herding, PPL). Its reconstructor candidate is the
    GAM on the subset score extrapolating with the least-squares slope beyond the fitted models' range
    (``GAMReconstructor(extrapolate="line")``): the subset is chosen without model results, so nothing keeps
    the strongest models inside the range the GAM's end slope was fitted on."""

    def reconstructor_candidates(self, train: Responses, idx: np.ndarray) -> dict:
        return {"gam": lambda: GAMReconstructor(extrapolate="line")}
