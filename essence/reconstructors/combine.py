"""A weighted average of reconstructors (``average``) and how out-of-fold predictions of several kinds combine."""

from __future__ import annotations

from itertools import combinations

import numpy as np

from ..data.checks import store_params
from ..data.errors import InputError
from .base import Reconstructor, check_X, fit_reconstructor, reconstructor_class, reconstructor_from_dict

__all__ = ["AverageReconstructor", "greedy_ensemble", "best_equal_average", "combine_oof", "COMBINES", "GREEDY_STEPS"]

#: How :func:`essence.reconstructors.choose.choose_average_by_cv` combines candidates.
COMBINES = ("equal", "greedy")
#: The greedy ensemble's steps: its weights are multiples of 1 / GREEDY_STEPS.
GREEDY_STEPS = 20


class AverageReconstructor(Reconstructor):
    """Full score = the (``part_weights``-weighted, else plain) mean of the clipped estimates of ``parts``
    (``[{"kind", "params"}]``, kinds other than ``average``), each fitted on the same data."""

    kind = "average"

    def __init__(self, parts=(), part_weights=None):
        store_params(self, locals())

    @property
    def needs_pool(self) -> bool:
        return any(bool(getattr(reconstructor_class(p["kind"])(**dict(p.get("params") or {})), "needs_pool", False))
                   for p in self._specs())

    def _specs(self) -> list:
        parts = self.parts
        if (not isinstance(parts, (list, tuple)) or not parts
                or any(not isinstance(p, dict) or not isinstance(p.get("kind"), str) for p in parts)):
            raise InputError("average: parts must be a non-empty list of {'kind': ..., 'params': {...}}, "
                             f"got {parts!r}")
        if any(p["kind"] == self.kind for p in parts):
            raise InputError("average: a part cannot itself be an average; list the kinds to average")
        self._weights(len(parts))
        return list(parts)

    def _weights(self, n: int) -> np.ndarray:
        """``(n,)`` the parts' weights; InputError unless one weight >= 0 per part, summing to 1."""
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
        X = check_X(X)
        self.k_ = X.shape[1]
        self.parts_ = [fit_reconstructor(reconstructor_class(p["kind"])(**dict(p.get("params") or {})), X, y, R)
                       for p in self._specs()]
        return self

    @classmethod
    def of_fitted(cls, fitted, k: int, part_weights=None):
        """The average of reconstructors already fitted on the same ``k`` chosen items."""
        obj = cls([{"kind": p.kind, "params": p.params_dict()} for p in fitted],
                  None if part_weights is None else [float(w) for w in part_weights])
        obj._specs()
        obj.parts_, obj.k_ = list(fitted), int(k)
        return obj

    def to_dict(self) -> dict:
        return {"kind": self.kind, "params": self.params_dict(), "k": self.k_,
                "fitted": [p.to_dict() for p in self.parts_]}

    @classmethod
    def from_dict(cls, d: dict):
        obj = cls(**d["params"])
        obj._specs()
        obj.k_ = int(d["k"])
        if not isinstance(d.get("fitted"), list) or len(d["fitted"]) != len(obj.parts):
            raise InputError("average: 'fitted' must hold one fitted reconstructor per part")
        obj.parts_ = [reconstructor_from_dict(p) for p in d["fitted"]]
        return obj


def greedy_ensemble(oof: dict, y, steps: int = GREEDY_STEPS) -> dict:
    """label -> weight (times chosen / ``steps``) of a greedy ensemble (Caruana et al. 2004) on out-of-fold
    predictions ``oof`` (label -> ``(n,)`` pp) against ``y`` ``(n,)`` pp; ties go to the earlier label."""
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
    """The labels of the best unweighted average of 1..``max_parts`` of ``oof``'s candidates by RMSE against ``y``;
    ties go to fewer parts, then the earlier labels."""
    y = np.asarray(y, dtype=np.float64)
    best = None
    for m in range(1, min(int(max_parts), len(oof)) + 1):
        for combo in combinations(list(oof), m):
            err = float(np.sqrt(np.mean((np.mean([oof[c] for c in combo], axis=0) - y) ** 2)))
            if best is None or err < best[1] - 1e-12:
                best = (combo, err)
    return best[0]


def combine_oof(oof: dict, y, combine: str = "equal", max_parts: int = 3, steps: int = GREEDY_STEPS) -> dict:
    """label -> weight: :func:`best_equal_average`'s parts alike (``"equal"``) or :func:`greedy_ensemble`."""
    if combine == "greedy":
        return greedy_ensemble(oof, y, steps)
    if combine != "equal":
        raise InputError(f"combine: {combine!r} is not one of {', '.join(COMBINES)}")
    combo = best_equal_average(oof, y, max_parts)
    return {c: 1.0 / len(combo) for c in combo}
