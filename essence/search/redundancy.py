"""EssenceBench step 1: the coarse redundancy filter.

Two redundancies between items ``i`` and ``j``:

* **text**: ``R_text(i, j) = <e_i, e_j>``, the inner product of the L2-normalised embeddings of the two
  item texts (all-MiniLM-L6-v2, see :func:`essence.features.text.embed_texts`), i.e. cosine similarity.
* **rank**: ``R_rank(i, j)`` = Pearson correlation of the two items' score vectors over the *training*
  models.

Missing cells in the rank computation are **mean-imputed**: they add nothing to the covariance and pull |r|
towards 0, so a pair is never called redundant on the strength of a few shared models.

**Constant items** (one score, or fewer than two answers, over the training models) have a zero
standardised vector, so they are never rank-redundant; :func:`coarse_filter` drops them as uninformative
(reason ``"constant"``) unless ``drop_constant=False``.

The filter scans items in their given order and keeps item ``i`` only if, against every earlier *kept*
item ``j``, ``R_text(j, i) <= tau_text`` and ``R_rank(j, i) <= tau_rank`` (the paper keeps the first of a
redundant pair). It works on blocks of ``block_size`` items, so no dense ``(n_items, n_items)`` matrix is
formed. A threshold ``>= 1`` switches that redundancy off.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Iterator

import numpy as np

from ..data.errors import InputError

__all__ = [
    "FilterResult",
    "coarse_filter",
    "standardise_items",
    "normalise_rows",
    "rank_redundancy",
    "text_redundancy",
    "redundancy_blocks",
    "item_prefilter",
]


def standardise_items(R, dtype=np.float64) -> tuple[np.ndarray, np.ndarray]:
    """Item vectors whose inner products are the rank redundancies (Pearson, mean-imputed).

    ``R`` ``(n_models, n_items)`` in [0, 1], NaN = missing. Returns ``(Z, constant)``: ``Z`` ``(n_items,
    n_models)``, ``Z[i] = (x_i - mean_i) / ||x_i - mean_i||`` with missing cells at the item mean (so
    ``Z[i] @ Z[j]`` is the Pearson correlation; rows of constant items are 0), and ``constant``
    ``(n_items,)`` bool.
    """
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


def redundancy_blocks(V: np.ndarray, block_size: int = 1024, upto_diagonal: bool = False
                      ) -> Iterator[tuple[int, int, np.ndarray]]:
    """Blocks of the Gram matrix ``V @ V.T`` without forming it.

    ``V`` is ``(n_items, d)`` (rows from :func:`standardise_items` or :func:`normalise_rows`). Yields
    ``(start, stop, G)`` with ``G = V[start:stop] @ V[:n].T`` of shape ``(stop - start, n)`` where ``n`` is
    ``n_items``, or ``stop`` when ``upto_diagonal`` (only the columns of earlier items and the block itself).
    """
    n = V.shape[0]
    if block_size < 1:
        raise InputError(f"block_size: must be >= 1, got {block_size}")
    for start in range(0, n, block_size):
        stop = min(n, start + block_size)
        cols = stop if upto_diagonal else n
        yield start, stop, V[start:stop] @ V[:cols].T


def rank_redundancy(R, block_size: int = 1024) -> np.ndarray:
    """Dense ``(n_items, n_items)`` rank redundancy (Pearson over the rows of ``R``, mean-imputed), built
    block by block. For small inputs, inspection and tests: it is O(n_items^2) memory. Pairs with a
    constant item are NaN (undefined); the diagonal of non-constant items is 1.
    """
    Z, constant = standardise_items(R)
    out = np.empty((Z.shape[0], Z.shape[0]))
    for a, b, G in redundancy_blocks(Z, block_size):
        out[a:b] = G
    out[constant, :] = np.nan
    out[:, constant] = np.nan
    return out


def text_redundancy(E, block_size: int = 1024) -> np.ndarray:
    """Dense ``(n_items, n_items)`` text redundancy: inner products of L2-normalised embeddings ``E``
    ``(n_items, dim)``, built block by block. For small inputs, inspection and tests."""
    V = normalise_rows(E)
    out = np.empty((V.shape[0], V.shape[0]))
    for a, b, G in redundancy_blocks(V, block_size):
        out[a:b] = G
    return out


@dataclass
class FilterResult:
    """What :func:`coarse_filter` kept and why it dropped the rest.

    Attributes
    ----------
    kept : (n_kept,) int, increasing positions into the items.
    dropped : (n_dropped,) int, increasing positions of the dropped items.
    dropped_by : (n_dropped,) int, the earliest kept item that made it redundant (-1 for "constant").
    reason : (n_dropped,) str: ``"text"``, ``"rank"``, ``"text+rank"`` (which threshold(s) that pair
        exceeded) or ``"constant"``.
    text_value, rank_value : (n_dropped,) float, the pair's R_text and R_rank (NaN where not computed).
    constant : (n_constant,) int, items constant over the training models (dropped or not, see
        ``drop_constant``).
    """

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

    def to_info(self, item_ids=None, max_listed: int = 50) -> dict:
        """A JSON-able summary: counts, thresholds, notes and the first ``max_listed`` drops (by item id
        when ``item_ids`` ``(n_items,)`` is given, else by position)."""
        name = (lambda i: str(item_ids[i])) if item_ids is not None else (lambda i: int(i))
        drops = []
        for d, by, why, tv, rv in list(zip(self.dropped, self.dropped_by, self.reason, self.text_value,
                                           self.rank_value))[:max_listed]:
            drops.append({
                "item": name(d), "by": None if by < 0 else name(by), "reason": str(why),
                "text": None if np.isnan(tv) else round(float(tv), 4),
                "rank": None if np.isnan(rv) else round(float(rv), 4),
            })
        return {
            "n_items": int(self.n_items), "n_kept": self.n_kept, "n_dropped": int(self.dropped.size),
            "dropped_by_reason": self.counts(), "tau_text": float(self.tau_text), "tau_rank": float(self.tau_rank),
            "text_checked": bool(self.text_checked), "rank_checked": bool(self.rank_checked),
            "rank_missing_cells": self.missing, "drop_constant": bool(self.drop_constant),
            "constant_items": [name(i) for i in self.constant[:max_listed]], "n_constant": int(self.constant.size),
            "drops": drops, "drops_listed": len(drops), "notes": list(self.notes),
            "seconds": round(float(self.seconds), 3),
        }


def _check_tau(tau, name: str) -> float:
    try:
        t = float(tau)
    except (TypeError, ValueError):
        raise InputError(f"{name}: must be a number in [-1, 1] (>= 1 switches the check off), got {tau!r}") from None
    if not np.isfinite(t) or t < -1:
        raise InputError(f"{name}: must be a number >= -1 (>= 1 switches the check off), got {tau!r}")
    return t


def coarse_filter(R_train, embeddings=None, tau_text: float = 0.9, tau_rank: float = 0.9,
                  drop_constant: bool = True, block_size: int = 1024, progress: bool = False,
                  texts_available: bool | None = None) -> FilterResult:
    """Keep each item unless it is text- or rank-redundant with an earlier kept item.

    ``R_train`` ``(n_train_models, n_items)`` in [0, 1] (NaN = missing) defines ``R_rank``; ``embeddings``
    ``(n_items, dim)`` or None (text redundancy skipped, with a note). ``block_size``: items per blockwise
    product (memory ~ ``block_size * n_items * 4`` bytes). ``texts_available``: for the report only, True when
    the items have texts but were not embedded. Returns a :class:`FilterResult`.
    """
    t0 = time.perf_counter()
    R = np.asarray(R_train, dtype=np.float64)
    if R.ndim != 2:
        raise InputError(f"R_train: expected (n_models, n_items), got shape {R.shape}")
    n_models, n = R.shape
    if n == 0:
        raise InputError("R_train: no items; give at least one item")
    tau_text = _check_tau(tau_text, "tau_text")
    tau_rank = _check_tau(tau_rank, "tau_rank")
    block_size = int(block_size)
    if block_size < 1:
        raise InputError(f"block_size: must be >= 1, got {block_size}")
    notes: list[str] = []

    Z, constant = standardise_items(R, dtype=np.float32)
    rank_on = tau_rank < 1.0
    if n_models < 3 and rank_on:
        notes.append(f"rank redundancy off: {n_models} training model(s) cannot define a correlation")
        rank_on = False
    if not rank_on and tau_rank >= 1.0:
        notes.append("rank redundancy off (tau_rank >= 1)")
    if constant.any():
        notes.append(
            f"{int(constant.sum())} item(s) constant over the training models: rank redundancy undefined, "
            + ("dropped as uninformative" if drop_constant else "kept (drop_constant=False)")
        )

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

    from tqdm.auto import tqdm

    starts = range(0, n, block_size)
    for start in tqdm(starts, desc="redundancy filter", unit="block", disable=not progress):
        stop = min(n, start + block_size)
        b = stop - start
        active = np.ones(b, dtype=bool)
        if drop_constant:
            c = constant[start:stop]
            for a in np.flatnonzero(c):
                dropped_by[start + a] = -1
                reason[start + a] = "constant"
            active &= ~c
        # (b, stop) products against every earlier item and the block itself
        Gt = T[start:stop] @ T[:stop].T if text_on else None
        Gr = Z[start:stop] @ Z[:stop].T if rank_on else None
        # 1) against items kept in earlier blocks
        earlier = np.flatnonzero(kept_mask[:start])
        if earlier.size and (text_on or rank_on):
            vt = Gt[:, earlier] > tau_text if text_on else np.zeros((b, earlier.size), bool)
            vr = Gr[:, earlier] > tau_rank if rank_on else np.zeros((b, earlier.size), bool)
            viol = (vt | vr) & active[:, None]
            hit = viol.any(axis=1)
            for a in np.flatnonzero(hit):
                jj = int(np.argmax(viol[a]))  # earliest offending kept item
                _record(a + start, earlier[jj], vt[a, jj], vr[a, jj], Gt, Gr, a, earlier[jj],
                        dropped_by, reason, tval, rval)
            active &= ~hit
        # 2) sequential scan inside the block
        local_kept: list[int] = []
        for a in range(b):
            if not active[a]:
                continue
            if local_kept and (text_on or rank_on):
                cols = np.asarray(local_kept) + start
                vt = Gt[a, cols] > tau_text if text_on else np.zeros(cols.size, bool)
                vr = Gr[a, cols] > tau_rank if rank_on else np.zeros(cols.size, bool)
                viol = vt | vr
                if viol.any():
                    jj = int(np.argmax(viol))
                    _record(a + start, cols[jj], vt[jj], vr[jj], Gt, Gr, a, cols[jj],
                            dropped_by, reason, tval, rval)
                    continue
            local_kept.append(a)
            kept_mask[start + a] = True

    kept = np.flatnonzero(kept_mask)
    dropped = np.flatnonzero(~kept_mask)
    return FilterResult(
        n_items=n, kept=kept, dropped=dropped, dropped_by=dropped_by[dropped],
        reason=np.array([str(r) for r in reason[dropped]], dtype=str) if dropped.size else np.array([], dtype=str),
        text_value=tval[dropped], rank_value=rval[dropped], constant=np.flatnonzero(constant),
        tau_text=tau_text, tau_rank=tau_rank, drop_constant=bool(drop_constant), text_checked=bool(text_on),
        rank_checked=bool(rank_on), notes=notes, seconds=time.perf_counter() - t0,
    )


def _record(i, j, vt, vr, Gt, Gr, row, col, dropped_by, reason, tval, rval) -> None:
    dropped_by[i] = j
    reason[i] = "text+rank" if (vt and vr) else ("text" if vt else "rank")
    if Gt is not None:
        tval[i] = float(Gt[row, col])
    if Gr is not None:
        rval[i] = float(Gr[row, col])


def item_prefilter(R_train, y_train, max_mean: float | None = None, min_pbis: float | None = None) -> dict:
    """MetaBench-style item pre-filter on the training models (optional step before :func:`coarse_filter`).

    ``R_train`` ``(n_models, n_items)`` in [0, 1] (NaN = missing), ``y_train`` ``(n_models,)`` pp.
    An item is dropped when its mean score exceeds ``max_mean`` (too easy, e.g. 0.95) or when the absolute
    point-biserial correlation between its scores and the full score is below ``min_pbis`` (e.g. 0.05;
    mean-imputed as in the rank redundancy; a constant item has correlation 0). ``None`` switches a rule off.

    Returns ``{"keep": (n_items,) bool, "too_easy": int positions, "low_pbis": int positions}``.
    """
    R = np.asarray(R_train, dtype=np.float64)
    y = np.asarray(y_train, dtype=np.float64)
    if R.ndim != 2 or y.shape != (R.shape[0],):
        raise InputError(f"R_train / y_train: shapes {R.shape} and {y.shape}; expected (n_models, n_items) and (n_models,)")
    keep = np.ones(R.shape[1], dtype=bool)
    easy = np.zeros(R.shape[1], dtype=bool)
    low = np.zeros(R.shape[1], dtype=bool)
    if max_mean is not None:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # unanswered items: NaN > x is False
            easy = np.nanmean(R, axis=0) > float(max_mean)
    if min_pbis is not None:
        Z, _ = standardise_items(R)
        yc = y - y.mean()
        ny = np.linalg.norm(yc)
        r = Z @ (yc / ny) if ny > 0 else np.zeros(R.shape[1])
        low = np.abs(r) < float(min_pbis)
    keep = ~(easy | low)
    return {"keep": keep, "too_easy": np.flatnonzero(easy), "low_pbis": np.flatnonzero(low & ~easy)}
