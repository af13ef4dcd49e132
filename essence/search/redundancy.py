"""EssenceBench step 1: the coarse redundancy filter. Text redundancy: cosine similarity of item embeddings; rank
redundancy: Pearson correlation of item scores over the training models, missing cells mean-imputed."""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numpy as np
from tqdm.auto import tqdm

from ..data.checks import as_matrix, real_number, whole_number
from ..data.errors import InputError

__all__ = ["FilterResult", "coarse_filter", "standardise_items", "normalise_rows", "rank_redundancy",
           "text_redundancy", "item_prefilter"]


def standardise_items(R, dtype=np.float64) -> tuple[np.ndarray, np.ndarray]:
    """``(Z, constant)`` of ``R`` ``(n_models, n_items)`` (NaN = missing, at the item mean): ``Z`` ``(n_items,
    n_models)`` centred unit rows, so ``Z[i] @ Z[j]`` is the Pearson correlation (rows of constant items are 0),
    and ``constant`` ``(n_items,)`` bool."""
    R = np.asarray(R)
    if R.ndim != 2:
        raise InputError(f"R: expected (n_models, n_items), got shape {R.shape}")
    n_models, n_items = R.shape
    Z = np.zeros((n_items, n_models), dtype=dtype)
    constant = np.zeros(n_items, dtype=bool)
    for a in range(0, n_items, 2048):  # column chunks keep float64 temporaries small
        X = np.asarray(R[:, a:a + 2048], dtype=np.float64)
        obs = ~np.isnan(X)
        n_obs = obs.sum(axis=0)
        Xz = np.where(obs, X, 0.0)
        mean = Xz.sum(axis=0) / np.maximum(n_obs, 1)
        C = np.where(obs, X - mean, 0.0)
        norm = np.sqrt((C * C).sum(axis=0))
        # relative tolerance: a column of identical values can leave rounding noise of ~1e-16 * n
        const = (n_obs < 2) | (norm <= 1e-12 * np.sqrt(np.maximum(n_obs, 1)))
        ok = ~const
        Z[a:a + X.shape[1]][ok] = (C[:, ok] / norm[ok]).T
        constant[a:a + X.shape[1]] = const
    return Z, constant


def normalise_rows(E, dtype=np.float64) -> np.ndarray:
    """Rows of ``E`` ``(n_items, dim)`` scaled to unit L2 norm (zero rows stay zero)."""
    E = np.asarray(E, dtype=np.float64)
    if E.ndim != 2:
        raise InputError(f"embeddings: expected (n_items, dim), got shape {E.shape}")
    if not np.isfinite(E).all():
        raise InputError("embeddings: contain NaN or inf; recompute them (delete the feature cache entry)")
    n = np.linalg.norm(E, axis=1, keepdims=True)
    return (E / np.where(n > 0, n, 1.0)).astype(dtype)


def rank_redundancy(R) -> np.ndarray:
    """Dense ``(n_items, n_items)`` rank redundancy of ``R`` ``(n_models, n_items)``; NaN for constant items."""
    Z, constant = standardise_items(R)
    out = Z @ Z.T
    out[constant, :] = np.nan
    out[:, constant] = np.nan
    return out


def text_redundancy(E) -> np.ndarray:
    """Dense ``(n_items, n_items)`` text redundancy (cosine similarity) of embeddings ``E`` ``(n_items, dim)``."""
    V = normalise_rows(E)
    return V @ V.T


@dataclass
class FilterResult:
    """What :func:`coarse_filter` kept and why it dropped the rest: ``kept`` / ``dropped`` positions; per drop,
    ``dropped_by`` (-1: constant), ``reason`` (``"text"``, ``"rank"``, ``"text+rank"``, ``"constant"``) and the
    pair's ``text_value`` / ``rank_value`` (NaN where not computed); ``constant``: constant items' positions."""

    n_items: int
    kept: np.ndarray
    dropped: np.ndarray
    dropped_by: np.ndarray
    reason: np.ndarray
    text_value: np.ndarray
    rank_value: np.ndarray
    constant: np.ndarray
    tau_text: float
    tau_rank: float
    drop_constant: bool
    text_checked: bool
    rank_checked: bool
    missing: str = "mean-imputed"
    notes: list = field(default_factory=list)
    seconds: float = 0.0

    @property
    def n_kept(self) -> int:
        return int(self.kept.size)

    def counts(self) -> dict:
        """Number of dropped items per reason."""
        r, c = np.unique(self.reason, return_counts=True)
        return {str(a): int(b) for a, b in zip(r, c)}

    def to_info(self, item_ids=None) -> dict:
        """A JSON-able summary with the first 50 drops and constant items (by ``item_ids`` when given)."""
        max_listed = 50
        name = (lambda i: str(item_ids[i])) if item_ids is not None else (lambda i: int(i))
        value = (lambda v: None if np.isnan(v) else round(float(v), 4))
        rows = list(zip(self.dropped, self.dropped_by, self.reason, self.text_value, self.rank_value))[:max_listed]
        drops = [{"item": name(d), "by": None if by < 0 else name(by), "reason": str(why), "text": value(tv),
                  "rank": value(rv)} for d, by, why, tv, rv in rows]
        return {
            "n_items": int(self.n_items), "n_kept": self.n_kept, "n_dropped": int(self.dropped.size),
            "dropped_by_reason": self.counts(), "tau_text": float(self.tau_text), "tau_rank": float(self.tau_rank),
            "text_checked": bool(self.text_checked), "rank_checked": bool(self.rank_checked),
            "rank_missing_cells": self.missing, "drop_constant": bool(self.drop_constant),
            "constant_items": [name(i) for i in self.constant[:max_listed]], "n_constant": int(self.constant.size),
            "drops": drops, "drops_listed": len(drops), "notes": list(self.notes),
            "seconds": round(float(self.seconds), 3)}


def coarse_filter(R_train, embeddings=None, tau_text: float = 0.9, tau_rank: float = 0.9,
                  drop_constant: bool = True, block_size: int = 1024, progress: bool = False,
                  texts_available: bool | None = None) -> FilterResult:
    """Keeps item ``i`` of ``R_train`` ``(n_models, n_items)`` only if, against every earlier kept item, text redundancy
    <= ``tau_text`` and rank redundancy <= ``tau_rank`` (>= 1: off), and it is not constant (unless
    ``drop_constant=False``). ``embeddings`` ``(n_items, dim)`` or None; ``texts_available``: for the notes only."""
    t0 = time.perf_counter()
    R = as_matrix(R_train, "R_train")
    n_models, n = R.shape
    if n == 0:
        raise InputError("R_train: no items; give at least one item")
    tau_text, tau_rank = real_number("tau_text", tau_text, -1.0), real_number("tau_rank", tau_rank, -1.0)
    block_size = whole_number("block_size", block_size, 1)
    notes: list[str] = []

    Z, constant = standardise_items(R, dtype=np.float32)
    rank_on = tau_rank < 1.0
    if n_models < 3 and rank_on:
        notes.append(f"rank redundancy off: {n_models} training model(s) cannot define a correlation")
        rank_on = False
    if not rank_on and tau_rank >= 1.0:
        notes.append("rank redundancy off (tau_rank >= 1)")
    if constant.any():
        notes.append(f"{int(constant.sum())} item(s) constant over the training models: rank redundancy undefined, "
                     + ("dropped as uninformative" if drop_constant else "kept (drop_constant=False)"))

    text_on = embeddings is not None and tau_text < 1.0
    T = None
    if embeddings is None and not texts_available:
        notes.append("no item texts: text redundancy skipped")
    elif embeddings is None and tau_text < 1.0:
        notes.append("no embeddings given: text redundancy skipped")
    elif tau_text >= 1.0:
        notes.append("text redundancy off (tau_text >= 1)")
    if embeddings is not None:
        E = np.asarray(embeddings)
        if E.ndim != 2 or E.shape[0] != n:
            raise InputError(f"embeddings: shape {E.shape}, expected ({n}, dim): one embedding per item of R_train")
        T = normalise_rows(E, dtype=np.float32) if text_on else None
    if not rank_on:
        Z = None

    kept_mask = np.zeros(n, dtype=bool)
    dropped_by = np.full(n, -2, dtype=np.intp)  # -2 = kept, -1 = constant
    reason = np.empty(n, dtype=object)
    tval = np.full(n, np.nan)
    rval = np.full(n, np.nan)
    for start in tqdm(range(0, n, block_size), desc="redundancy filter", unit="block", disable=not progress):
        stop = min(n, start + block_size)
        active = ~constant[start:stop] if drop_constant else np.ones(stop - start, dtype=bool)
        dropped_by[start:stop][~active] = -1
        reason[start:stop][~active] = "constant"
        if not (text_on or rank_on):
            kept_mask[start:stop] = active
            continue
        # (block, stop) products against every earlier item and the block itself
        Gt = T[start:stop] @ T[:stop].T if text_on else None
        Gr = Z[start:stop] @ Z[:stop].T if rank_on else None

        def over(rows, cols):  # (len(rows), len(cols)) bool each: text / rank redundancy above its threshold
            shape = (len(rows), len(cols))
            return (Gt[np.ix_(rows, cols)] > tau_text if text_on else np.zeros(shape, bool),
                    Gr[np.ix_(rows, cols)] > tau_rank if rank_on else np.zeros(shape, bool))

        def drop(a, cols, vt, vr):  # block row a, redundant with the earliest of the kept items cols it exceeds
            jj = int(np.argmax(vt | vr))
            i, j = start + a, cols[jj]
            dropped_by[i] = j
            reason[i] = "text+rank" if (vt[jj] and vr[jj]) else ("text" if vt[jj] else "rank")
            if text_on:
                tval[i] = float(Gt[a, j])
            if rank_on:
                rval[i] = float(Gr[a, j])

        earlier = np.flatnonzero(kept_mask[:start])  # 1) against the items kept in earlier blocks, at once
        vt, vr = over(np.arange(stop - start), earlier)
        for a in np.flatnonzero(active & (vt | vr).any(axis=1)):
            drop(a, earlier, vt[a], vr[a])
            active[a] = False
        for a in np.flatnonzero(active):  # 2) in order, against the items kept in this block
            cols = start + np.flatnonzero(kept_mask[start:start + a])
            vt, vr = over([a], cols)
            if (vt | vr).any():
                drop(a, cols, vt[0], vr[0])
            else:
                kept_mask[start + a] = True

    kept = np.flatnonzero(kept_mask)
    dropped = np.flatnonzero(~kept_mask)
    return FilterResult(
        n_items=n, kept=kept, dropped=dropped, dropped_by=dropped_by[dropped],
        reason=np.array([str(r) for r in reason[dropped]], dtype=str) if dropped.size else np.array([], dtype=str),
        text_value=tval[dropped], rank_value=rval[dropped], constant=np.flatnonzero(constant),
        tau_text=tau_text, tau_rank=tau_rank, drop_constant=bool(drop_constant), text_checked=bool(text_on),
        rank_checked=bool(rank_on), notes=notes, seconds=time.perf_counter() - t0)


def item_prefilter(R_train, y_train, max_mean: float | None = None, min_pbis: float | None = None) -> dict:
    """MetaBench-style pre-filter by item mean and |point-biserial|: ``{"keep", "too_easy", "low_pbis"}``."""
    R = np.asarray(R_train, dtype=np.float64)
    y = np.asarray(y_train, dtype=np.float64)
    if R.ndim != 2 or y.shape != (R.shape[0],):
        raise InputError(f"R_train / y_train: shapes {R.shape} and {y.shape}; expected (n_models, n_items) and (n_models,)")
    easy = np.zeros(R.shape[1], dtype=bool)
    low = np.zeros(R.shape[1], dtype=bool)
    if max_mean is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # unanswered items: NaN > x is False
            easy = np.nanmean(R, axis=0) > float(max_mean)
    if min_pbis is not None:
        Z, _ = standardise_items(R)
        yc = y - y.mean()
        ny = np.linalg.norm(yc)
        r = Z @ (yc / ny) if ny > 0 else np.zeros(R.shape[1])
        low = np.abs(r) < float(min_pbis)
    return {"keep": ~(easy | low), "too_easy": np.flatnonzero(easy), "low_pbis": np.flatnonzero(low & ~easy)}
