"""The `Responses` container: per-item results of many models, read-only, with subsetting by id, index or mask."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Iterable

import numpy as np

from .errors import InputError

__all__ = ["Responses"]


@dataclass(frozen=True, eq=False)
class Responses:
    """Per-item results (read-only): ``responses`` ``(n_models, n_items)`` float64 in [0, 1], NaN = missing; ``models``,
    ``items`` unique str ids; ``target`` ``(n_models,)`` full scores in pp; ``texts`` ``(n_items,)`` or None;
    ``item_extras`` / ``model_extras``: per-item / per-model arrays; ``target_source`` ``"full_score"`` or
    ``"row_mean"``. Built by :func:`essence.data.load` or :func:`essence.data.from_arrays`."""

    responses: np.ndarray
    models: np.ndarray
    items: np.ndarray
    target: np.ndarray
    texts: np.ndarray | None = None
    name: str = "responses"
    item_extras: dict = field(default_factory=dict)
    model_extras: dict = field(default_factory=dict)
    target_source: str = "row_mean"

    def __post_init__(self):
        # shared by reference between subsets and callers: never let anyone write into them
        for arr in (self.responses, self.target):
            arr.setflags(write=False)

    @property
    def n_models(self) -> int:
        return int(self.responses.shape[0])

    @property
    def n_items(self) -> int:
        return int(self.responses.shape[1])

    @property
    def shape(self) -> tuple[int, int]:
        return self.responses.shape  # type: ignore[return-value]

    @property
    def is_binary(self) -> bool:
        """True when every observed cell is exactly 0 or 1."""
        r = self.responses[~np.isnan(self.responses)]
        return bool(np.all((r == 0) | (r == 1)))

    @property
    def missing_fraction(self) -> float:
        return float(np.isnan(self.responses).mean())

    def __repr__(self) -> str:
        return (f"Responses(name={self.name!r}, n_models={self.n_models}, n_items={self.n_items}, "
                f"binary={self.is_binary}, missing={self.missing_fraction:.2%}, target={self.target_source})")

    # -- subsetting ------------------------------------------------------------------------------
    def subset(self, models=None, items=None) -> "Responses":
        """Restricted to ``models`` / ``items`` (indices, a mask or ids, in that order); ``target`` kept."""
        mi = _as_index(models, self.models, "models")
        ii = _as_index(items, self.items, "items")
        return Responses(responses=self.responses[np.ix_(mi, ii)], models=self.models[mi], items=self.items[ii],
                         target=self.target[mi], texts=None if self.texts is None else self.texts[ii], name=self.name,
                         item_extras={k: v[ii] for k, v in self.item_extras.items()},
                         model_extras={k: v[mi] for k, v in self.model_extras.items()},
                         target_source=self.target_source)

    def item_index(self, ids: Iterable[str]) -> np.ndarray:
        """Integer positions of item ids; ValueError naming the ids that are not present."""
        return _as_index(np.asarray(list(ids), dtype=str), self.items, "items")

    def fingerprint(self) -> str:
        """SHA-256 (hex, 16 chars) of responses, ids and target: identifies the data an artifact was fitted on."""
        h = hashlib.sha256()
        h.update(np.ascontiguousarray(self.responses, dtype=np.float64))  # the buffer itself: no copy
        for arr in (self.models, self.items):
            h.update("\x1f".join(map(str, arr)).encode())
        h.update(np.ascontiguousarray(self.target, dtype=np.float64))
        return h.hexdigest()[:16]


def _as_index(sel, ids: np.ndarray, what: str) -> np.ndarray:
    n = len(ids)
    if sel is None:
        return np.arange(n)
    sel = np.asarray(sel)
    if sel.dtype == bool:
        if sel.shape != (n,):
            raise InputError(f"{what}: boolean mask has shape {sel.shape}, expected ({n},)")
        return np.flatnonzero(sel)
    if sel.dtype.kind in "US":
        pos = {m: i for i, m in enumerate(ids)}
        missing = [s for s in sel.tolist() if s not in pos]
        if missing:
            shown = ", ".join(map(repr, missing[:5]))
            raise InputError(f"{what}: {len(missing)} id(s) not found, e.g. {shown}; check the ids against `.{what}`")
        return np.array([pos[s] for s in sel.tolist()], dtype=np.intp)
    if sel.dtype.kind in "iu":
        sel = sel.astype(np.intp).ravel()
        if sel.size and (sel.min() < -n or sel.max() >= n):
            raise InputError(f"{what}: index out of range for {n} {what}")
        return sel
    raise InputError(f"{what}: cannot select with an array of dtype {sel.dtype}; pass indices, a mask or ids")
