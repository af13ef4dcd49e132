"""A weighted average of reconstructors (``average``) and how out-of-fold predictions of several kinds are
combined (the best unweighted average, or a greedy ensemble)."""

from __future__ import annotations

import numpy as np

from ..data.errors import InputError
from .base import Reconstructor, check_X

__all__ = ["AverageReconstructor", "greedy_ensemble",
           "best_equal_average", "combine_oof", "COMBINES", "GREEDY_STEPS"]


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
    """Full score = the mean of several reconstructors' estimates (each clipped to [0, 100]), unweighted or weighted.

    ``parts``: ``[{"kind", "params"}]``, kinds of :data:`essence.reconstructors.base.KINDS` except ``average``,
    each fitted on the same ``X``, ``y`` (and ``R`` when it needs the pool); ``part_weights``: one non-negative
    weight per part summing to 1 (the greedy ensemble), or None (the plain mean). The artifact stores every fitted
    part's JSON under ``"fitted"``.
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
        made it); the same as ``fit`` on their specs. ``part_weights``: as the constructor's (None: unweighted)."""
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


