"""Intervals for the difference of two models' estimates, calibrated on pairs of reference models.

Two models answer the same chosen items, so their estimates' errors are not independent: where they agree item for
item, the difference of the estimates is close to the difference of the full scores. The interval for ``d_hat =
est_b - est_a`` is ``d_hat +/- q * s(delta)``, scaled by the pair's :func:`discordance` ``delta``: ``s`` a kernel RMS
(:func:`~essence.reconstructors.intervals.kernel_scale`) of the differences of out-of-fold residuals over pairs of
training models, ``q`` the split-conformal quantile of ``|residual difference| / s(delta)`` over the pairs that
involve a validation model.
"""

from __future__ import annotations

import numpy as np

from ..data.errors import InputError
from .intervals import conformal_quantile, kernel_scale
from .tables import Table1D

__all__ = ["PairInterval", "discordance"]


def discordance(Xa, Xb) -> np.ndarray:
    """``(n,)``: the mean absolute difference of rows ``Xa`` and ``Xb`` ``(n, k)`` (results in [0, 1]) over the items
    both answered; 1 (the most conservative) where they share no answered item."""
    Xa, Xb = np.atleast_2d(np.asarray(Xa, dtype=np.float64)), np.atleast_2d(np.asarray(Xb, dtype=np.float64))
    diff = np.abs(Xa - Xb)
    both = ~np.isnan(diff)
    n_both = both.sum(axis=1)
    return np.where(n_both > 0, np.where(both, diff, 0.0).sum(axis=1) / np.maximum(n_both, 1), 1.0)


class PairInterval:
    """``level``: nominal coverage of the difference's interval (0-1); ``bandwidth``: kernel width of the scale
    curve in discordance units; ``max_pairs``: reference pairs drawn (seeded) when there are more; ``residuals``:
    where the residuals come from, recorded for the reader: ``"nested"`` (a cross-validation that chose the items
    inside its folds: honest for new models), ``"independent-items"`` (cross-fitted on items chosen without these
    models' results: honest too), ``"fixed-items"`` (cross-fitted on items chosen to fit these very models:
    optimistic) or ``"refit (... parent)"`` (an ``essence refit``: cross-fitted, never narrower than the
    parent's)."""

    def __init__(self, level: float = 0.9, bandwidth: float = 0.05, max_pairs: int = 40000,
                 residuals: str = "fixed-items"):
        if not 0 < level < 1:
            raise InputError(f"level: {level} must be in (0, 1), e.g. 0.9 for a 90% interval")
        self.level = float(level)
        self.bandwidth = float(bandwidth)
        self.max_pairs = int(max_pairs)
        self.residuals = str(residuals)

    def fit(self, pred, y, X, n_train: int, seed: int = 0) -> "PairInterval":
        """``pred`` ``(n,)`` cross-fitted estimates (pp) of the reference models, ``y`` ``(n,)`` their full scores
        (pp), ``X`` ``(n, k)`` their results on the chosen items; the first ``n_train`` are training models, the
        rest validation models."""
        pred, y = np.asarray(pred, dtype=np.float64), np.asarray(y, dtype=np.float64)
        if pred.shape != y.shape:
            raise InputError(f"pairs: {pred.size} predictions for {y.size} scores; give one per reference model")
        return self.fit_residuals(y - pred, y - pred, X, n_train, seed)

    def fit_residuals(self, resid_a, resid_b, X, n_train: int, seed: int = 0) -> "PairInterval":
        """The same from out-of-fold residuals (pp, ``(n,)`` each, truth - estimate or its negative, the same sign
        for both): ``resid_a`` of the estimate model a gets, ``resid_b`` of model b's (two kinds of estimate, e.g.
        the regression for a and the frontier estimate for b; the same array for one kind). Pairs ``(i, j)``,
        ``i < j``, contribute ``resid_b[j] - resid_a[i]``, and ``resid_b[i] - resid_a[j]`` when the two differ."""
        ra, rb = np.asarray(resid_a, dtype=np.float64), np.asarray(resid_b, dtype=np.float64)
        X = np.asarray(X, dtype=np.float64)
        n = ra.size
        if n < 3 or rb.shape != (n,) or X.ndim != 2 or X.shape[0] != n:
            raise InputError(f"pairs: need at least 3 reference models with one residual of each kind and one row of "
                             f"results each (got {ra.size} and {rb.size} residuals, {X.shape[0]} rows)")
        i, j = np.triu_indices(n, 1)
        if ra is not rb and not np.array_equal(ra, rb):
            i, j = np.r_[i, j], np.r_[j, i]
        if i.size > self.max_pairs:
            pick = np.sort(np.random.default_rng(seed).choice(i.size, self.max_pairs, replace=False))
            i, j = i[pick], j[pick]
        de = rb[j] - ra[i]
        delta = discordance(X[i], X[j])
        in_train = (i < n_train) & (j < n_train)
        scale_pairs = in_train if in_train.sum() >= 10 else np.ones_like(in_train)
        et = de[scale_pairs]
        self.scale_ = kernel_scale(np.linspace(0.0, 1.0, 101), delta[scale_pairs], et**2, self.bandwidth,
                                   float(np.mean(et**2)), 20.0)
        cal = ~in_train if (~in_train).sum() >= 1.0 / (1.0 - self.level) - 1 else np.ones_like(in_train)
        self.q_ = conformal_quantile(np.abs(de[cal]) / self.scale_(delta[cal]), self.level)
        self.n_pairs_ = int(cal.sum())
        return self

    def half_width(self, delta) -> np.ndarray:
        """Half-widths (pp) of the difference's interval for pairs of discordance ``delta`` ``(n,)``."""
        return self.q_ * self.scale_(np.asarray(delta, dtype=np.float64))

    def to_dict(self) -> dict:
        return {"kind": "pair_conformal_discordance", "level": self.level, "bandwidth": self.bandwidth,
                "q": self.q_, "scale": self.scale_.to_dict(), "n_pairs": self.n_pairs_, "residuals": self.residuals}

    @classmethod
    def from_dict(cls, d: dict) -> "PairInterval":
        obj = cls(level=d["level"], bandwidth=d["bandwidth"], residuals=d.get("residuals", "fixed-items"))
        obj.q_ = float(d["q"])
        obj.scale_ = Table1D.from_dict(d["scale"])
        obj.n_pairs_ = int(d.get("n_pairs", 0))
        return obj
