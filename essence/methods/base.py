"""The one interface every item-selection method follows: a scikit-learn-style estimator (:class:`Selector`)."""

from __future__ import annotations

from dataclasses import asdict, fields, is_dataclass

import numpy as np
from sklearn.base import BaseEstimator

from ..data import Responses
from ..data._io import jsonable
from ..data._runtime import single_thread
from ..data.checks import Flag, Whole, check_params, store_params, whole_number
from ..data.errors import InputError
from ..features.irt import fit_item_params
from ..reconstructors.choose import choose_by_cv, pool_candidates
from ..reconstructors.simple import FEW_MODEL_CHOICES, GAMReconstructor

__all__ = ["Selector", "check_k", "require_texts", "require_models", "irt_item_params", "pick_candidates"]


def check_k(k, n_available: int, what: str = "items") -> int:
    """``k`` as an int with ``1 <= k <= n_available``; InputError saying what to do otherwise."""
    k = whole_number("k", k)
    if k <= 0:
        raise InputError(f"k: must be at least 1, got {k}; choose how many items to keep")
    if k > n_available:
        raise InputError(f"k: {k} is larger than the {n_available} {what} available; choose k <= {n_available}")
    return int(k)


def require_texts(data: Responses, method: str) -> np.ndarray:
    """The item texts ``(n_items,)`` of ``data``; InputError when it has none (or some are empty)."""
    if data.texts is None:
        raise InputError(f"dataset {data.name!r} has no item texts; {method} chooses by item text: use a dataset "
                         "with texts or another method (random, kmeans, essence, irt, ...)")
    empty = np.flatnonzero(np.char.str_len(np.char.strip(data.texts.astype(str))) == 0)
    if empty.size:
        raise InputError(f"dataset {data.name!r}: {empty.size} item(s) have an empty text, e.g. "
                         f"{', '.join(map(repr, data.items[empty[:3]].tolist()))}; {method} chooses by item text: "
                         "fill in those texts or drop the items")
    return data.texts


def pick_candidates(names, makers: dict) -> dict:
    """The entries of ``makers`` (label -> reconstructor factory) named by ``names`` (one label or several)."""
    return {str(c): makers[str(c)] for c in ([names] if isinstance(names, str) else list(names))}


def require_models(selector, train: Responses) -> None:
    """InputError when ``train`` has fewer models than ``selector.min_models`` for its 2PL fit."""
    if train.n_models < selector.min_models:
        raise InputError(f"{selector.name}: {train.n_models} training models are too few for a 2PL fit of "
                         f"{train.n_items} items (needs at least min_models={selector.min_models}); use method "
                         "'auto' or 'random'")


def irt_item_params(selector, train: Responses):
    """``(params, Rb)`` of :func:`essence.features.irt.fit_item_params` on ``train`` with ``selector.irt``."""
    cfg = selector.irt
    params, Rb, record = fit_item_params(train, method=selector.name, binarize=cfg.binarize, cache=cfg.cache,
                                         progress=selector.progress, seed=selector.seed, **cfg.fit_settings())
    selector.info_["irt_fit"] = record
    return params, Rb


class Selector(BaseEstimator):
    """Base class (a scikit-learn ``BaseEstimator``): ``fit(train, val)`` sets ``items_`` ``(k,)``, ``reconstructor_``
    (by CV), ``reconstructor_choice_``, ``reconstructor_scores_`` (pp), ``info_``; subclasses implement :meth:`select`.
    ``item_limit``: most pool items taken; ``plain_mean_choices``: plain-mean candidates too; ``_configs``: parameter ->
    settings class; ``_domains``: parameter -> allowed values (:mod:`essence.data.checks`)."""

    name = "base"
    signal = "responses"
    needs_no_models = False
    item_limit: int | None = None
    item_limit_reason = ""
    plain_mean_choices = True
    _configs: dict[str, type] = {}

    def __init__(self, k: int, seed: int = 0, progress: bool = True):
        store_params(self, locals())

    _domains = {"seed": Whole(0), "progress": Flag()}

    @classmethod
    def _param_names(cls) -> list[str]:
        """The constructor's parameter names, in signature order."""
        return list(cls._get_param_names())

    @classmethod
    def route_params(cls, params: dict) -> dict:
        """Constructor keywords from ``params``: a settings object whole, a dict, or ``field`` / ``group.field``."""
        out, changes = {}, {g: {} for g in cls._configs}
        for name, value in params.items():
            group, _, field_ = name.rpartition(".")
            if name in cls._configs:
                cfg = cls._configs[name]
                out[name] = value if isinstance(value, cfg) else _config_from(cfg, name, value)
            elif group in cls._configs:
                changes[group][field_] = value
            else:
                owner = next((g for g, c in cls._configs.items() if name in {f.name for f in fields(c)}), None)
                (out if owner is None else changes[owner])[name] = value
        for group, ch in changes.items():
            if ch:
                base = out.get(group, cls._configs[group]())
                out[group] = _config_from(cls._configs[group], group, {**asdict(base), **ch})
        return out

    def params_dict(self) -> dict:
        """Constructor parameters as JSON values (settings objects as dicts), without ``progress``."""
        return {n: jsonable(asdict(v) if is_dataclass(v) else v) for n, v in self.get_params(deep=False).items()
                if n != "progress"}

    def check_params(self) -> "Selector":
        """``self``; InputError naming the first parameter outside its domain (``_domains``, each settings object)."""
        check_params(self)
        for group in self._configs:
            try:
                getattr(self, group).check()
            except InputError as exc:
                raise InputError(f"{group}.{exc}") from None
        return self

    def fit(self, train: Responses, val: Responses, predictors: str = "all") -> "Selector":
        """Choose ``k`` items and the reconstructor (``predictors="all"``: with the stronger kinds too)."""
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
        with single_thread():  # faster on shared cores, same items on any machine
            return self._fit(train, val)

    def _fit(self, train: Responses, val: Responses) -> "Selector":
        idx = np.asarray(self.select(train, val), dtype=np.intp)
        if idx.shape != (self.k,) or np.unique(idx).size != self.k or idx.min() < 0 or idx.max() >= train.n_items:
            raise RuntimeError(f"{self.name}: select() returned an invalid subset {idx!r}")  # a bug, not user input
        self.items_ = idx
        R = np.vstack([train.responses, val.responses])
        stronger = pool_candidates(idx, R.shape[0], seed=self.seed) if self.predictors_ == "all" else {}
        extra = {**FEW_MODEL_CHOICES, **stronger} if self.plain_mean_choices else {}
        cands = {**self.reconstructor_candidates(train, idx), **extra}
        label, rec, scores = choose_by_cv(cands, R[:, idx], np.r_[train.target, val.target], seed=self.seed, R=R)
        self.reconstructor_fitted_on_ = "train+val"
        self.reconstructor_choice_, self.reconstructor_, self.reconstructor_scores_ = label, rec, scores
        return self

    def select(self, train: Responses, val: Responses) -> np.ndarray:
        """``(k,)`` distinct item positions into ``train.items``."""
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
    """A selector that chooses from the item texts alone; its GAM extrapolates with the least-squares slope."""

    def reconstructor_candidates(self, train: Responses, idx: np.ndarray) -> dict:
        return {"gam": lambda: GAMReconstructor(extrapolate="line")}
