"""``signature_knn``: DISCO's estimate, the nearest reference models' full score in PCA space of the answers."""

from __future__ import annotations

import numpy as np

from ..data.checks import Whole, check_params, store_params
from ..data.errors import InputError
from .base import Reconstructor, fill_means
from .tables import round_list

__all__ = ["SignatureKNNReconstructor"]


class SignatureKNNReconstructor(Reconstructor):
    """Full score = the ``1 / distance``-weighted mean target of the ``n_neighbors`` nearest training models on
    ``n_components`` PCA components (at most ``k`` and ``n_train - 1``); NaN: the item's training mean."""

    kind = "signature_knn"
    _domains = {"n_components": Whole(1), "n_neighbors": Whole(1)}

    def __init__(self, n_components: int = 10, n_neighbors: int = 10):
        store_params(self, locals())

    def transform(self, X) -> np.ndarray:
        """PCA coordinates ``(n_models, n_components_)`` of signatures ``X`` ``(n_models, k)``."""
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.fill_.size:
            raise InputError(f"X: expected (n_models, {self.fill_.size}) responses on the chosen items, got {X.shape}")
        return (np.where(np.isnan(X), self.fill_[None, :], X) - self.mean_) @ self.components_.T

    def fit(self, X, y):
        check_params(self)
        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        if X.ndim != 2 or y.shape != (X.shape[0],):
            raise InputError(f"X, y: expected (n, k) and (n,), got {X.shape} and {y.shape}")
        if X.shape[0] < 2:
            raise InputError("X: need at least 2 training models for PCA + kNN")
        # rounded as to_dict writes it: a reloaded artifact predicts bit for bit the same
        self.fill_ = np.round(fill_means(X)[1], 10)
        F = np.where(np.isnan(X), self.fill_[None, :], X)
        self.mean_ = np.round(F.mean(axis=0), 10)
        _, _, Vt = np.linalg.svd(F - self.mean_, full_matrices=False)
        c = int(min(self.n_components, X.shape[1], X.shape[0] - 1))
        comps = Vt[:c]
        # deterministic sign: the largest-magnitude loading of each component is positive
        signs = np.sign(comps[np.arange(c), np.abs(comps).argmax(axis=1)])
        signs[signs == 0] = 1.0
        self.components_ = np.round(comps * signs[:, None], 10)
        self.train_z_ = np.round((F - self.mean_) @ self.components_.T, 5)
        self.train_y_ = np.round(y, 7)
        return self

    def to_dict(self) -> dict:
        return {
            "kind": self.kind, "params": self.params_dict(), "fill": round_list(self.fill_, 10),
            "mean": round_list(self.mean_, 10), "components": [round_list(r, 10) for r in self.components_],
            "train_z": [round_list(r, 5) for r in self.train_z_], "train_y": round_list(self.train_y_, 7),
        }

    @classmethod
    def from_dict(cls, d: dict):
        obj = cls(**d["params"])
        obj.fill_ = np.asarray(d["fill"], dtype=np.float64)
        obj.mean_ = np.asarray(d["mean"], dtype=np.float64)
        obj.components_ = np.asarray(d["components"], dtype=np.float64).reshape(-1, obj.fill_.size)
        obj.train_z_ = np.asarray(d["train_z"], dtype=np.float64).reshape(-1, obj.components_.shape[0])
        obj.train_y_ = np.asarray(d["train_y"], dtype=np.float64)
        return obj
