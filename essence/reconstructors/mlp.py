"""``mlp``: scikit-learn's ``MLPRegressor`` (one tanh hidden layer, L-BFGS) on the chosen items' answers."""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ..data.checks import Real, Whole, check_params, store_params
from .base import _DIGITS, Reconstructor, _rounded, check_X, fill_means

__all__ = ["MIN_MODELS_MLP", "MLPReconstructor"]

MIN_MODELS_MLP = 300


class MLPReconstructor(Reconstructor):
    """Full score = ``ybar + sd * (tanh(x W1 + b1) W2 + b2)``: ``hidden`` tanh units, ``alpha`` L2 penalty,
    ``max_iter`` L-BFGS iterations; a missing cell counts as its item's training mean."""

    kind = "mlp"
    _domains = {"hidden": Whole(1), "alpha": Real(0.0), "max_iter": Whole(1), "seed": Whole(0)}

    def __init__(self, hidden: int = 16, alpha: float = 1.0, max_iter: int = 500, seed: int = 0):
        store_params(self, locals())

    def fit(self, X, y):
        from sklearn.neural_network import MLPRegressor

        check_params(self)
        X = check_X(X)
        y = np.asarray(y, dtype=np.float64)
        self.k_ = X.shape[1]
        self.fill_ = _rounded(fill_means(X)[1])
        self.y_mean_ = float(np.round(y.mean(), _DIGITS))
        self.y_sd_ = float(np.round(y.std() if y.std() > 0 else 1.0, _DIGITS))
        net = MLPRegressor(hidden_layer_sizes=(int(self.hidden),), activation="tanh", solver="lbfgs",
                           alpha=float(self.alpha), max_iter=int(self.max_iter), random_state=int(self.seed))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            net.fit(np.where(np.isnan(X), self.fill_, X), (y - self.y_mean_) / self.y_sd_)
        self.W1_, self.W2_ = _rounded(net.coefs_[0]), _rounded(net.coefs_[1][:, 0])
        self.b1_, self.b2_ = _rounded(net.intercepts_[0]), float(_rounded(net.intercepts_[1][0]))
        return self

    def to_dict(self) -> dict:
        return {"kind": self.kind, "params": self.params_dict(), "k": self.k_, "fill": self.fill_.tolist(),
                "W1": self.W1_.ravel().tolist(), "b1": self.b1_.tolist(), "W2": self.W2_.tolist(), "b2": self.b2_,
                "y_mean": self.y_mean_, "y_sd": self.y_sd_}

    @classmethod
    def from_dict(cls, d: dict):
        obj = cls(**d["params"])
        obj.k_ = int(d["k"])
        f = lambda v: np.asarray(v, dtype=np.float64)  # noqa: E731
        obj.fill_, obj.b1_, obj.W2_ = f(d["fill"]), f(d["b1"]), f(d["W2"])
        obj.W1_ = f(d["W1"]).reshape(obj.k_, -1)
        obj.b2_, obj.y_mean_, obj.y_sd_ = float(d["b2"]), float(d["y_mean"]), float(d["y_sd"])
        return obj
