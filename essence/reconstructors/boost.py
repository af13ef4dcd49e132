"""Gradient-boosted trees on the chosen items (``boost``): scikit-learn's ``HistGradientBoostingRegressor`` on
``[block means, answers]``, its trees stored as plain node arrays that the forward pass walks."""

from __future__ import annotations

import warnings

import numpy as np

from ..data.checks import Real, Whole, check_params, store_params
from ..data.errors import InputError
from .base import _DIGITS, Reconstructor, check_X

__all__ = ["BoostReconstructor", "block_means"]


def block_means(X: np.ndarray, blocks) -> np.ndarray:
    """``(n, len(blocks))``: each model's mean answer over each block's columns of ``X`` ``(n, k)`` (NaN: none)."""
    out = np.empty((X.shape[0], len(blocks)))
    obs = ~np.isnan(X)
    for j, cols in enumerate(blocks):
        cnt = obs[:, cols].sum(axis=1)
        tot = np.where(obs[:, cols], X[:, cols], 0.0).sum(axis=1)
        out[:, j] = np.where(cnt > 0, tot / np.maximum(cnt, 1), np.nan)
    return out


class BoostReconstructor(Reconstructor):
    """Boosted trees on ``[block means, answers]``: ``blocks`` lists of positions among the ``k`` chosen items
    (empty: one block of all); ``trees`` rounds, ``leaves`` per tree, ``min_leaf`` models per leaf, ``l2`` penalty.
    """

    kind = "boost"
    _domains = {"trees": Whole(1), "learning_rate": Real(0.0, open_min=True), "leaves": Whole(2),
                "min_leaf": Whole(1), "l2": Real(0.0), "seed": Whole(0)}

    def __init__(self, blocks=(), trees: int = 300, learning_rate: float = 0.05, leaves: int = 15,
                 min_leaf: int = 20, l2: float = 1.0, seed: int = 0):
        store_params(self, locals())

    def _blocks(self, k: int) -> list[np.ndarray]:
        blocks = self.blocks
        if not isinstance(blocks, (list, tuple)):
            raise InputError(f"boost: blocks must be a list of lists of item positions, got {blocks!r}")
        if not len(blocks):
            return [np.arange(k)]
        out = []
        for b in blocks:
            if (not isinstance(b, (list, tuple, np.ndarray)) or len(b) == 0
                    or any(isinstance(c, bool) or int(c) != c or c < 0 for c in b) or len(set(b)) != len(b)):
                raise InputError(f"boost: each block must be a non-empty list of distinct item positions >= 0, "
                                 f"got {b!r}")
            b = np.asarray(b, dtype=np.intp)
            if b.max() >= k:
                raise InputError(f"boost: block position {int(b.max())} is beyond the {k} chosen items")
            out.append(b)
        return out

    def _features(self, X: np.ndarray) -> np.ndarray:
        return np.column_stack([block_means(X, self._blocks(X.shape[1])), X])

    def fit(self, X, y):
        from sklearn.ensemble import HistGradientBoostingRegressor

        check_params(self)
        X = check_X(X)
        y = np.asarray(y, dtype=np.float64)
        if X.shape[0] < 2:
            raise InputError(f"boost: needs at least 2 training models, got {X.shape[0]}")
        F = self._features(X)
        gb = HistGradientBoostingRegressor(max_iter=int(self.trees), learning_rate=float(self.learning_rate),
                                           max_leaf_nodes=int(self.leaves), min_samples_leaf=int(self.min_leaf),
                                           l2_regularization=float(self.l2), early_stopping=False,
                                           random_state=int(self.seed))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            gb.fit(F, y)
        parts, off = [], 0
        for (tree,) in gb._predictors:  # one tree per round (a single output)
            nodes = tree.nodes
            leaf = nodes["is_leaf"].astype(bool)
            # a split that sends every answered model one way has an infinite threshold: a finite stand-in
            thr = np.clip(nodes["num_threshold"], -1e9, 1e9)
            parts.append((off, np.where(leaf, -1, nodes["feature_idx"]), np.where(leaf, nodes["value"], thr),
                          np.where(leaf, -1, nodes["left"].astype(np.int64) + off),
                          np.where(leaf, -1, nodes["right"].astype(np.int64) + off), nodes["missing_go_to_left"]))
            off += len(nodes)
        roots, feature, value, left, right, missing = zip(*parts)
        self.k_, self.n_features_ = X.shape[1], F.shape[1]
        self.baseline_ = float(np.round(np.ravel(gb._baseline_prediction)[0], _DIGITS))
        self._store(np.concatenate(feature), np.round(np.concatenate(value).astype(np.float64), _DIGITS),
                    np.concatenate(left), np.concatenate(right), np.concatenate(missing), np.asarray(roots))
        return self

    def _store(self, feature, value, left, right, missing, roots):
        self.feature_ = np.asarray(feature, dtype=np.intp)
        self.value_ = np.asarray(value, dtype=np.float64)
        self.left_ = np.asarray(left, dtype=np.intp)
        self.right_ = np.asarray(right, dtype=np.intp)
        self.missing_left_ = np.asarray(missing, dtype=bool)
        self.roots_ = np.asarray(roots, dtype=np.intp)

    def to_dict(self) -> dict:
        return {"kind": self.kind, "params": self.params_dict(), "k": self.k_, "n_features": self.n_features_,
                "baseline": self.baseline_, "roots": self.roots_.tolist(), "feature": self.feature_.tolist(),
                "value": self.value_.tolist(), "left": self.left_.tolist(), "right": self.right_.tolist(),
                "missing_left": "".join("1" if m else "0" for m in self.missing_left_)}

    @classmethod
    def from_dict(cls, d: dict):
        obj = cls(**d["params"])
        obj.k_, obj.n_features_ = int(d["k"]), int(d["n_features"])
        if obj.n_features_ != obj.k_ + len(obj._blocks(obj.k_)):
            raise InputError(f"boost: {obj.n_features_} features cannot come from {obj.k_} items and "
                             f"{len(obj._blocks(obj.k_))} blocks")
        miss = d["missing_left"]
        if not isinstance(miss, str) or set(miss) - {"0", "1"}:
            raise InputError("boost: missing_left must be a string of '0'/'1' characters, one per node")
        obj.baseline_ = float(d["baseline"])
        obj._store(d["feature"], d["value"], d["left"], d["right"], [c == "1" for c in miss], d["roots"])
        m = obj.feature_.size
        if not (obj.value_.size == obj.left_.size == obj.right_.size == obj.missing_left_.size == m):
            raise InputError(f"boost: the stored trees' node arrays differ in length ({m} features, "
                             f"{obj.value_.size} values, {obj.left_.size} left, {obj.right_.size} right, "
                             f"{obj.missing_left_.size} missing)")
        inner = obj.feature_ >= 0
        if (obj.feature_ >= obj.n_features_).any() or ((obj.roots_ < 0) | (obj.roots_ >= m)).any() or (
                inner & ((obj.left_ <= np.arange(m)) | (obj.right_ <= np.arange(m)) | (obj.left_ >= m)
                         | (obj.right_ >= m))).any():
            raise InputError("boost: a stored tree points outside its nodes or features (damaged artifact)")
        return obj
