"""Smooth 1-D functions as lookup tables (:class:`Table1D`), and the GAM settings every reconstructor shares."""

from __future__ import annotations

import warnings

import numpy as np
from pygam import LinearGAM, s

from ..data.errors import InputError

__all__ = ["GAM_N_SPLINES", "GAM_LAM", "Table1D", "fit_gam_table", "round_list"]

#: Spline basis size of every 1-D GAM term (``s(0, n_splines=...)``) unless a caller chooses another.
GAM_N_SPLINES = 25
#: Smoothing penalty of every GAM term unless a caller chooses another.
GAM_LAM = 5.0


def round_list(a, digits: int = 10) -> list[float]:
    """``a`` (any shape, flattened) as a list of Python floats rounded to ``digits`` decimals (JSON-ready)."""
    return [float(v) for v in np.round(np.asarray(a, dtype=np.float64), digits)]


class Table1D:
    """A 1-D function as values ``y`` on a sorted grid ``x`` (``(n_grid,)`` each); linear interpolation, constant
    beyond the ends; evaluating keeps the input's shape."""

    def __init__(self, x, y):
        self.x = np.asarray(x, dtype=np.float64)
        self.y = np.asarray(y, dtype=np.float64)
        if self.x.ndim != 1 or self.x.shape != self.y.shape or self.x.size < 2:
            raise InputError("Table1D: x and y must be 1-D of the same length >= 2")
        if np.any(np.diff(self.x) <= 0):
            raise InputError("Table1D: x must be strictly increasing")

    def __call__(self, v) -> np.ndarray:
        v = np.asarray(v, dtype=np.float64)
        return np.interp(v.ravel(), self.x, self.y).reshape(v.shape)

    def to_dict(self) -> dict:
        return {"x": round_list(self.x), "y": round_list(self.y)}

    @classmethod
    def from_dict(cls, d: dict) -> "Table1D":
        return cls(d["x"], d["y"])


def fit_gam_table(x, y, n_splines: int = GAM_N_SPLINES, lam: float = GAM_LAM, lo: float = 0.0, hi: float = 100.0,
                  n_grid: int = 2001) -> Table1D:
    """``y ~ s(x)`` (``(n,)`` each, pp) by pygam's LinearGAM as a :class:`Table1D` on ``[lo, hi]``; with fewer
    than 4 distinct ``x``, a least-squares line (one distinct value: the mean)."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    grid = np.linspace(lo, hi, n_grid)
    n_distinct = np.unique(x).size
    if n_distinct < 4:
        if n_distinct == 1:
            return Table1D(grid, np.full_like(grid, y.mean()))
        slope, icpt = np.polyfit(x, y, 1)
        return Table1D(grid, icpt + slope * grid)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gam = LinearGAM(s(0, n_splines=n_splines, lam=lam)).fit(x[:, None], y)
        vals = gam.predict(grid[:, None])
    return Table1D(grid, vals)
