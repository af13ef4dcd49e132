"""Normalised split-conformal intervals ``y_hat +/- q * s(y_hat)`` (pp): ``s`` a kernel RMS of cross-fitted
training residuals, ``q`` the conformal quantile of ``|y - y_hat| / s(y_hat)`` on validation models."""

from __future__ import annotations

import math

import numpy as np
from sklearn.base import clone

from ..data.errors import InputError
from .choose import oof_predictions
from .tables import Table1D

__all__ = ["IntervalModel", "cross_fitted_predictions", "kernel_scale", "conformal_quantile"]


def kernel_scale(grid, x, r2, bandwidth: float, global_ms: float, prior: float) -> Table1D:
    """A residual scale curve on ``grid``: the Gaussian-kernel (``bandwidth``) RMS of squared residuals ``r2`` at
    positions ``x`` (``(n,)`` each), shrunk towards ``global_ms`` (a mean square) with the weight of ``prior``
    residuals where few lie nearby, floored at ``max(0.05, 0.1 sqrt(global_ms))``."""
    w = np.exp(-0.5 * ((grid[:, None] - x[None, :]) / bandwidth) ** 2)  # (n_grid, n)
    ms = (w @ r2 + prior * global_ms) / (w.sum(axis=1) + prior)
    floor = max(0.05, 0.1 * math.sqrt(global_ms))
    return Table1D(grid, np.maximum(np.sqrt(ms), floor))


def conformal_quantile(scores, level: float) -> float:
    """The split-conformal quantile of ``scores`` ``(n,)``: the ``ceil((n + 1) level)``-th smallest (the largest
    when that exceeds ``n``); infinite for no scores."""
    n = scores.size
    rank = math.ceil((n + 1) * level)
    return float(np.sort(scores)[min(rank, n) - 1]) if n else float("inf")


class IntervalModel:
    """``level``: nominal coverage (0-1). ``bandwidth``: kernel width of the scale curve, pp."""

    def __init__(self, level: float = 0.9, bandwidth: float = 5.0):
        if not 0 < level < 1:
            raise InputError(f"level: {level} must be in (0, 1), e.g. 0.9 for a 90% interval")
        self.level = float(level)
        self.bandwidth = float(bandwidth)

    def fit(self, pred_train, y_train, pred_val, y_val) -> "IntervalModel":
        """``pred_train`` are cross-fitted training predictions ``(n_train,)``; ``pred_val`` validation ones; pp."""
        pt, yt = np.asarray(pred_train, float), np.asarray(y_train, float)
        pv, yv = np.asarray(pred_val, float), np.asarray(y_val, float)
        rt = yt - pt
        global_ms = float(np.mean(rt**2)) if rt.size else float(np.mean((yv - pv) ** 2))
        # shrink towards the global scale where few training predictions lie nearby
        self.scale_ = kernel_scale(np.linspace(0.0, 100.0, 201), pt, rt**2, self.bandwidth, global_ms, 5.0)

        scores = np.abs(yv - pv) / self.scale_(pv)
        self.calibration_ = "validation"
        if scores.size < 1.0 / (1.0 - self.level) - 1:
            scores = np.concatenate([scores, np.abs(rt) / self.scale_(pt)])
            self.calibration_ = "validation+cross-fitted-train"
        self.q_ = conformal_quantile(scores, self.level)
        self.n_calibration_ = int(scores.size)
        return self

    def interval(self, pred) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper bounds (pp, clipped to [0, 100]) for estimates ``pred`` ``(n,)``."""
        pred = np.asarray(pred, dtype=np.float64)
        half = self.q_ * self.scale_(pred)
        return np.clip(pred - half, 0.0, 100.0), np.clip(pred + half, 0.0, 100.0)

    def to_dict(self) -> dict:
        return {
            "kind": "normalised_split_conformal", "level": self.level, "bandwidth": self.bandwidth,
            "q": self.q_, "scale": self.scale_.to_dict(), "calibration": self.calibration_,
            "n_calibration": self.n_calibration_,
        }

    @classmethod
    def from_dict(cls, d: dict) -> "IntervalModel":
        obj = cls(level=d["level"], bandwidth=d["bandwidth"])
        obj.q_ = float(d["q"])
        obj.scale_ = Table1D.from_dict(d["scale"])
        obj.calibration_ = d.get("calibration", "validation")
        obj.n_calibration_ = int(d.get("n_calibration", 0))
        return obj


def cross_fitted_predictions(reconstructor, X, y, n_folds: int = 5, seed: int = 0, R=None) -> np.ndarray:
    """Out-of-fold predictions ``(n,)`` (pp) of clones of ``reconstructor``:
    :func:`essence.reconstructors.choose.oof_predictions`."""
    return oof_predictions(lambda: clone(reconstructor), X, y, n_folds, seed, R)
