"""The one interface every item-selection method follows.

A method is a scikit-learn-style estimator:

* ``__init__(k, seed=0, progress=True, **params)`` stores parameters only (every parameter is a named
  keyword with a documented default);
* ``fit(train, val)`` sees **only** training and validation models (two :class:`~essence.data.Responses`
  with the same items) and sets

  - ``items_``: ``(k,)`` int, distinct positions into ``train.items``;
  - ``reconstructor_``: the reconstructor for those items, chosen among the method's candidates plus
    ``line`` and ``mean_ridge`` (:data:`essence.reconstruct.FEW_MODEL_CHOICES`) by 5-fold cross-validation
    over all training + validation models (:func:`essence.reconstruct.choose_by_cv`), then refitted on
    all of them (``reconstructor_fitted_on_ = "train+val"``);
  - ``reconstructor_choice_`` and ``reconstructor_scores_``: the label chosen and each candidate's
    cross-validated RMSE (pp);
  - ``info_``: a JSON-able dict of diagnostics (e.g. fitness per generation);

* the test models never reach ``fit``: :func:`essence.compressed.compress` splits them off first.

Subclasses implement :meth:`select` and, when they need other reconstructors than the GAM on the
subset score, :meth:`reconstructor_candidates`.
"""

from __future__ import annotations

import inspect

import numpy as np

from .._io import jsonable
from .._runtime import single_thread
from ..data import Responses
from ..reconstruct import FEW_MODEL_CHOICES, GAMReconstructor, choose_by_cv
from ..errors import InputError

__all__ = ["Selector", "check_k"]


def check_k(k, n_available: int, what: str = "items") -> int:
    """Validate a budget: an int with ``1 <= k <= n_available``; ValueError saying what to do otherwise."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise InputError(f"k: must be a whole number of items, got {k!r}")
    if k <= 0:
        raise InputError(f"k: must be at least 1, got {k}; choose how many items to keep")
    if k > n_available:
        raise InputError(f"k: {k} is larger than the {n_available} {what} available; choose k <= {n_available}")
    return int(k)


class Selector:
    """Base class. ``name`` is the registry name; ``signal`` says what the method chooses from."""

    name = "base"
    #: what the choice is based on: "responses" (training models' results), "texts" (item text only), ...
    signal = "responses"
    #: True when the method can choose without any model's results (Herding, PPL)
    needs_no_models = False

    def __init__(self, k: int, seed: int = 0, progress: bool = True):
        self.k = k
        self.seed = seed
        self.progress = progress

    # -- sklearn-style parameter handling ----------------------------------------------------------
    @classmethod
    def _param_names(cls) -> list[str]:
        names = []
        for klass in cls.__mro__:
            if klass is object or "__init__" not in klass.__dict__:
                continue
            for p in inspect.signature(klass.__init__).parameters.values():
                if p.name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL) and p.name not in names:
                    names.append(p.name)
        return names

    def get_params(self) -> dict:
        """Constructor parameters and their values (``progress`` excluded: it changes nothing chosen)."""
        return {n: jsonable(getattr(self, n)) for n in self._param_names() if n != "progress"}

    # -- the contract --------------------------------------------------------------------------------
    def fit(self, train: Responses, val: Responses) -> "Selector":
        """Choose ``k`` items with training/validation models only; fit and choose the reconstructor."""
        if not isinstance(train, Responses) or not isinstance(val, Responses):
            raise InputError("fit: train and val must be Responses (see essence.data.load)")
        if not np.array_equal(train.items, val.items):
            raise InputError("fit: train and val must hold the same items in the same order")
        check_k(self.k, train.n_items)
        self.info_ = {}
        with single_thread():  # see essence._runtime: faster on shared cores, same items on any machine
            return self._fit(train, val)

    def _fit(self, train: Responses, val: Responses) -> "Selector":
        idx = np.asarray(self.select(train, val), dtype=np.intp)
        if idx.shape != (self.k,) or np.unique(idx).size != self.k or idx.min() < 0 or idx.max() >= train.n_items:
            raise RuntimeError(f"{self.name}: select() returned an invalid subset {idx!r}")  # a bug, not user input
        self.items_ = idx
        # every method also gets the few-model reconstructors; the choice is cross-validated over all
        # non-test models (train + val) and the chosen one is refitted on all of them
        cands = {**self.reconstructor_candidates(train, idx), **FEW_MODEL_CHOICES}
        X = np.vstack([train.responses[:, idx], val.responses[:, idx]])
        label, rec, scores = choose_by_cv(cands, X, np.r_[train.target, val.target], seed=self.seed)
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
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"
