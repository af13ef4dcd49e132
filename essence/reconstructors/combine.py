"""Reconstructors built from other reconstructors: one on some columns only (``columns``), a weighted average
(``average``) and a kind trained with extra models (:class:`WithExtraModels`); how out-of-fold predictions
of several kinds are combined (the best unweighted average, or a greedy ensemble)."""

from __future__ import annotations

import numpy as np

from ..data.errors import InputError
from .base import Reconstructor, check_X

__all__ = ["AverageReconstructor", "ColumnsReconstructor", "WithExtraModels", "greedy_ensemble",
           "best_equal_average", "combine_oof", "COMBINES", "GREEDY_STEPS"]


# ----------------------------------------------------------------------------------------------
# A reconstructor on some of the chosen items only
# ----------------------------------------------------------------------------------------------
class ColumnsReconstructor(Reconstructor):
    """Full score from a subset of the chosen items: ``part`` fitted and applied on ``X[:, columns]``.

    Parameters
    ----------
    columns : list of int
        Positions (0-based, distinct) into the ``k`` chosen items that the inner reconstructor reads; in a
        suite, a member's *own* chosen items (:func:`essence.suite.artifact.own_candidates`), so the CV can
        fall back to what a separate artifact fits where the other members' items add noise.
    part : {"kind": str, "params": dict}
        The inner kind (any of :data:`essence.reconstructors.base.KINDS` except ``columns`` and
        ``average``) and its constructor parameters. A kind that needs the pool gets ``R`` unchanged.

    The artifact stores the inner reconstructor's own JSON under ``"fitted"``.
    """

    kind = "columns"

    def __init__(self, columns=(), part=None):
        self.columns = columns
        self.part = part

    def _spec(self) -> tuple[np.ndarray, dict]:
        cols, part = self.columns, self.part
        if (not isinstance(cols, (list, tuple, np.ndarray)) or len(cols) == 0
                or any(isinstance(c, bool) or int(c) != c or c < 0 for c in cols) or len(set(cols)) != len(cols)):
            raise InputError(f"columns: expected a non-empty list of distinct item positions >= 0, got {cols!r}")
        if not isinstance(part, dict) or not isinstance(part.get("kind"), str):
            raise InputError(f"columns: part must be {{'kind': ..., 'params': {{...}}}}, got {part!r}")
        if part["kind"] in (self.kind, "average"):
            raise InputError(f"columns: the inner kind cannot be {part['kind']!r}; name a single kind")
        return np.asarray(cols, dtype=np.intp), part

    @property
    def needs_pool(self) -> bool:
        from .base import reconstructor_class

        return bool(getattr(reconstructor_class(self._spec()[1]["kind"]), "needs_pool", False))

    def fit(self, X, y, R=None):
        from .base import reconstructor_class
        from .base import fit_reconstructor

        X = check_X(X)
        cols, part = self._spec()
        if cols.max() >= X.shape[1]:
            raise InputError(f"columns: position {int(cols.max())} is beyond the {X.shape[1]} chosen items")
        self.k_, self.columns_ = X.shape[1], cols
        self.part_ = fit_reconstructor(reconstructor_class(part["kind"])(**dict(part.get("params") or {})),
                                       X[:, cols], y, R)
        return self

    def to_dict(self) -> dict:
        return {"kind": self.kind, "params": self.params_dict(), "k": self.k_, "fitted": self.part_.to_dict()}

    @classmethod
    def from_dict(cls, d: dict):
        from .base import reconstructor_from_dict

        obj = cls(**d["params"])
        cols, _ = obj._spec()
        obj.k_, obj.columns_ = int(d["k"]), cols
        if cols.max() >= obj.k_:
            raise InputError(f"columns: position {int(cols.max())} is beyond the {obj.k_} chosen items")
        if not isinstance(d.get("fitted"), dict):
            raise InputError("columns: 'fitted' must hold the fitted inner reconstructor")
        obj.part_ = reconstructor_from_dict(d["fitted"])
        return obj


# ----------------------------------------------------------------------------------------------
# An average of several kinds, chosen by the same cross-validation
# ----------------------------------------------------------------------------------------------
def _part_spec(rec) -> dict:
    return {"kind": rec.kind, "params": rec.params_dict()}


#: How :func:`essence.reconstructors.choose.choose_average_by_cv` combines candidates: ``equal`` (the best unweighted average of a few) or
#: ``greedy`` (a weighted greedy ensemble, :func:`greedy_ensemble`).
COMBINES = ("equal", "greedy")
#: The greedy ensemble's steps: its weights are multiples of 1 / GREEDY_STEPS.
GREEDY_STEPS = 20


class AverageReconstructor(Reconstructor):
    """Full score = the mean of several reconstructors' estimates (each clipped to [0, 100]), unweighted or
    weighted.

    Parameters
    ----------
    parts : list of {"kind": str, "params": dict}
        The kinds averaged (any of :data:`essence.reconstructors.base.KINDS` except ``average``) with
        their constructor parameters; each is fitted on the same ``X``, ``y`` (and ``R`` when it needs the
        pool). Chosen by :func:`essence.reconstructors.choose.choose_average_by_cv`.
    part_weights : list of float, optional
        One non-negative weight per part, summing to 1 (the greedy ensemble of :func:`essence.reconstructors.choose.choose_average_by_cv`);
        None (as in every artifact written before weights existed): the unweighted mean.

    The artifact stores every fitted part's own JSON under ``"fitted"``.
    """

    kind = "average"

    def __init__(self, parts=(), part_weights=None):
        self.parts = parts
        self.part_weights = part_weights

    @property
    def needs_pool(self) -> bool:
        from .base import reconstructor_class

        return any(bool(getattr(reconstructor_class(p["kind"])(**dict(p.get("params") or {})), "needs_pool", False))
                   for p in self._specs())

    def _specs(self) -> list:
        parts = self.parts
        if (not isinstance(parts, (list, tuple)) or not parts
                or any(not isinstance(p, dict) or not isinstance(p.get("kind"), str) for p in parts)):
            raise InputError(f"average: parts must be a non-empty list of {{'kind': ..., 'params': {{...}}}}, got {parts!r}")
        bad = [p["kind"] for p in parts if p["kind"] == self.kind]
        if bad:
            raise InputError("average: a part cannot itself be an average; list the kinds to average")
        self._weights(len(parts))
        return list(parts)

    def _weights(self, n: int) -> np.ndarray:
        """``(n,)`` the parts' weights (equal when ``part_weights`` is None); InputError unless one finite,
        non-negative weight per part, summing to 1."""
        if self.part_weights is None:
            return np.full(n, 1.0 / n)
        try:
            w = np.asarray(self.part_weights, dtype=np.float64)
        except (TypeError, ValueError):
            w = np.array([np.nan])
        if w.shape != (n,) or not np.isfinite(w).all() or (w < 0).any() or abs(w.sum() - 1.0) > 1e-6:
            raise InputError(f"average: part_weights must be {n} non-negative numbers (one per part) summing to 1, "
                             f"got {self.part_weights!r}; leave them out for the unweighted mean")
        return w

    def fit(self, X, y, R=None):
        from .base import reconstructor_class
        from .base import fit_reconstructor

        X = check_X(X)
        self.k_ = X.shape[1]
        self.parts_ = [fit_reconstructor(reconstructor_class(p["kind"])(**dict(p.get("params") or {})), X, y, R)
                       for p in self._specs()]
        return self

    @classmethod
    def of_fitted(cls, fitted, k: int, part_weights=None):
        """The average of reconstructors already fitted on the same ``k`` chosen items (each as its factory
        made it, e.g. with extra training models, :class:`WithExtraModels`); for plain kinds the same as
        ``fit`` on their specs. ``part_weights``: as the constructor's (None: unweighted)."""
        obj = cls([_part_spec(p) for p in fitted], None if part_weights is None else [float(w) for w in part_weights])
        obj._specs()
        obj.parts_, obj.k_ = list(fitted), int(k)
        return obj

    def to_dict(self) -> dict:
        return {"kind": self.kind, "params": self.params_dict(), "k": self.k_,
                "fitted": [p.to_dict() for p in self.parts_]}

    @classmethod
    def from_dict(cls, d: dict):
        from .base import reconstructor_from_dict

        obj = cls(**d["params"])
        obj._specs()
        obj.k_ = int(d["k"])
        if not isinstance(d.get("fitted"), list) or len(d["fitted"]) != len(obj.parts):
            raise InputError("average: 'fitted' must hold one fitted reconstructor per part")
        obj.parts_ = [reconstructor_from_dict(p) for p in d["fitted"]]
        return obj


class WithExtraModels:
    """A reconstructor fitted on the models it is given *plus* fixed extra training models.

    ``inner``: an unfitted reconstructor (a kind that does not need the pool); ``X_extra`` ``(m, k)`` the extra
    models' answers on the same chosen items (NaN = missing), ``y_extra`` ``(m,)`` their full scores, pp.
    ``fit(X, y)`` fits a copy of ``inner`` on the rows of ``X`` and ``X_extra`` together; everything else is
    that fitted copy's, so the artifact stores the fitted inner kind alone. In a suite the extra models are a
    member's models that lack another member (:meth:`essence.suite.data.Suite.outside_rows`): cross-validation
    folds hold out only the given models, so a CV score stays one on models the fit did not see.

    ``impute``: None (the inner kind handles the missing cells itself, as ``boost`` does), or the column
    blocks (a suite: each member's chosen items) whose all-missing cells are filled, at each fit, with their
    conditional mean given the row's other blocks, fitted on the given models only
    (:func:`essence.reconstructors.impute.impute_blocks`). ``tune_on_given``: the inner kind chooses its settings on the
    given models alone (``inner.fit``, then ``inner.tuned()``: an unfitted copy fixed to the choice), and
    that copy is fitted on the given plus the extra models: the choice stays one made on the models the
    CV folds hold out, and the big fit is a single solve (``kernel``). A ``kernel`` inner stores its
    training rows, so its artifact then holds the extra models' (imputed) answers on the chosen items too.
    """

    def __init__(self, inner, X_extra, y_extra, impute=None, tune_on_given: bool = False):
        if getattr(inner, "needs_pool", False):
            raise InputError(f"{inner.kind}: a kind that reads the whole pool cannot take extra models")
        if tune_on_given and not hasattr(inner, "tuned"):
            raise InputError(f"{inner.kind}: tune_on_given needs a kind that can fix its choice (kernel)")
        self.inner = inner
        self.X_extra = np.asarray(X_extra, dtype=np.float64)
        self.y_extra = np.asarray(y_extra, dtype=np.float64)
        self.impute = impute
        self.tune_on_given = bool(tune_on_given)
        if self.X_extra.ndim != 2 or self.y_extra.shape != (self.X_extra.shape[0],):
            raise InputError(f"extra models: answers {self.X_extra.shape} and scores {self.y_extra.shape} do not "
                             "match; give (m, k) and (m,)")
        if not np.isfinite(self.y_extra).all():
            raise InputError("extra models: every extra model needs a finite full score")

    kind = property(lambda self: self.inner.kind)
    needs_pool = False

    def params_dict(self) -> dict:
        return getattr(self, "fitted_", self.inner).params_dict()

    def fit(self, X, y):
        import copy

        from .impute import impute_blocks

        X = check_X(X)
        y = np.asarray(y, dtype=np.float64)
        if self.X_extra.shape[1] != X.shape[1]:
            raise InputError(f"extra models: answers on {self.X_extra.shape[1]} items, the models on {X.shape[1]}")
        Xe = self.X_extra if self.impute is None else impute_blocks(X, self.X_extra, self.impute)
        inner = copy.deepcopy(self.inner)
        if self.tune_on_given:
            inner = inner.fit(X, y).tuned()
        self.fitted_ = inner.fit(np.vstack([X, Xe]), np.r_[y, self.y_extra])
        return self

    def predict(self, X) -> np.ndarray:
        return self.fitted_.predict(X)

    def to_dict(self) -> dict:
        return self.fitted_.to_dict()


def greedy_ensemble(oof: dict, y, steps: int = GREEDY_STEPS) -> dict:
    """Weights of a greedy ensemble (forward selection with replacement, Caruana et al. 2004) on out-of-fold
    predictions: ``steps`` times, add the candidate whose addition gives the lowest RMSE of the running
    (equally weighted) sum; a candidate may be added again. ``oof`` label -> ``(n,)`` pp, ``y`` ``(n,)`` pp.
    Returns label -> weight (the times chosen / ``steps``), for the labels chosen at least once, in the order
    of ``oof``; ties go to the earlier label."""
    y = np.asarray(y, dtype=np.float64)
    labels = list(oof)
    P = np.array([oof[c] for c in labels], dtype=np.float64)
    counts = np.zeros(len(labels), dtype=int)
    total = np.zeros_like(y)
    for t in range(int(steps)):
        err = np.sqrt(np.mean(((total[None, :] + P) / (t + 1) - y[None, :]) ** 2, axis=1))
        j = int(np.argmin(err))
        counts[j] += 1
        total += P[j]
    return {c: counts[i] / int(steps) for i, c in enumerate(labels) if counts[i]}


def best_equal_average(oof: dict, y, max_parts: int = 3) -> tuple:
    """The labels of the unweighted average of 1..``max_parts`` distinct candidates whose averaged out-of-fold
    predictions (``oof`` label -> ``(n,)`` pp) have the lowest RMSE against ``y`` ``(n,)`` pp; ties go to
    fewer parts, then the earlier labels (in the order of ``oof``)."""
    from itertools import combinations

    y = np.asarray(y, dtype=np.float64)
    best = None
    for m in range(1, min(int(max_parts), len(oof)) + 1):
        for combo in combinations(list(oof), m):
            err = float(np.sqrt(np.mean((np.mean([oof[c] for c in combo], axis=0) - y) ** 2)))
            if best is None or err < best[1] - 1e-12:
                best = (combo, err)
    return best[0]


def combine_oof(oof: dict, y, combine: str = "equal", max_parts: int = 3, steps: int = GREEDY_STEPS) -> dict:
    """label -> weight of the candidates :func:`essence.reconstructors.choose.choose_average_by_cv` combines, from their out-of-fold
    predictions ``oof`` (label -> ``(n,)`` pp) and the targets ``y`` ``(n,)`` pp: ``"equal"`` weights
    :func:`best_equal_average`'s parts alike, ``"greedy"`` is :func:`greedy_ensemble` over ``steps`` steps.
    Labels in the order of ``oof``."""
    if combine == "greedy":
        return greedy_ensemble(oof, y, steps)
    if combine != "equal":
        raise InputError(f"combine: {combine!r} is not one of {', '.join(COMBINES)}")
    combo = best_equal_average(oof, y, max_parts)
    return {c: 1.0 / len(combo) for c in combo}


