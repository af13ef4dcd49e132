"""``ppl``: sampling stratified by the item texts' perplexity (:func:`essence.features.lm.perplexity`)."""

from __future__ import annotations

import numpy as np

from ..data import Responses
from ..data.checks import Whole, store_params, whole_number
from ..data.errors import InputError
from .base import TextOnlySelector, check_k, require_texts

__all__ = ["PPLSelector", "quantile_bins", "largest_remainder", "stratified_sample"]

#: default number of perplexity bins (deciles)
DEFAULT_BINS = 10


def _values(values) -> np.ndarray:
    try:
        v = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError("values: expected a 1-D array of numbers (one per item)") from None
    if v.ndim != 1 or v.size == 0:
        raise InputError(f"values: expected a non-empty 1-D array (n_items,), got shape {v.shape}")
    if not np.isfinite(v).all():
        raise InputError(f"values: {int((~np.isfinite(v)).sum())} non-finite value(s); give every item a finite value")
    return v


def _check_bins(n_bins, n: int) -> int:
    n_bins = whole_number("n_bins", n_bins, 1)
    if n_bins > n:
        raise InputError(f"n_bins: {n_bins} bins for {n} items; choose n_bins <= {n}")
    return int(n_bins)


def quantile_bins(values, n_bins: int = DEFAULT_BINS) -> np.ndarray:
    """``(n,)`` bin in ``0..n_bins-1`` (0 = lowest): ``rank * n_bins // n``, ties ordered by position."""
    v = _values(values)
    n_bins = _check_bins(n_bins, v.size)
    rank = np.empty(v.size, dtype=np.int64)
    rank[np.argsort(v, kind="stable")] = np.arange(v.size)
    return (rank * n_bins // v.size).astype(np.intp)


def largest_remainder(sizes, k: int, seed: int = 0) -> np.ndarray:
    """``(n_strata,)`` draws per stratum of ``sizes``, summing to ``k``, proportional by largest remainder."""
    sizes = np.asarray(sizes)
    if sizes.ndim != 1 or sizes.size == 0 or sizes.dtype.kind not in "iu" or (sizes < 0).any():
        raise InputError("sizes: expected a non-empty 1-D array of non-negative whole numbers (items per stratum)")
    sizes = sizes.astype(np.int64)
    total = int(sizes.sum())
    k = check_k(k, total)
    numer = k * sizes  # exact integer arithmetic: quota_b = numer_b / total
    counts = numer // total
    rest = numer % total
    left = k - int(counts.sum())
    if left:
        tiebreak = np.random.default_rng(seed).random(sizes.size)
        order = np.lexsort((tiebreak, -rest))  # largest remainder first
        counts[order[:left]] += 1
    return counts.astype(np.intp)


def stratified_sample(values, k: int, n_bins: int = DEFAULT_BINS, seed: int = 0) -> tuple[np.ndarray, dict]:
    """``(idx, info)``: ``k`` sorted positions drawn stratified by ``values`` into ``n_bins`` quantile bins."""
    v = _values(values)
    k = check_k(k, v.size)
    bins = quantile_bins(v, n_bins)
    sizes = np.bincount(bins, minlength=n_bins)
    draws = largest_remainder(sizes, k, seed=seed)
    rng = np.random.default_rng(seed)
    chosen = [rng.choice(np.flatnonzero(bins == b), size=int(draws[b]), replace=False)
              for b in range(n_bins) if draws[b]]
    idx = np.sort(np.concatenate(chosen)).astype(np.intp)
    edges = [float(v.min())] + [float(v[bins == b].min()) for b in range(1, n_bins)] + [float(v.max())]
    return idx, {"bin_edges": edges, "bin_sizes": sizes.tolist(), "bin_draws": draws.tolist()}


class PPLSelector(TextOnlySelector):
    """Perplexity-stratified random sample (no model results) in ``n_bins`` bins; ``max_length``: tokens per text;
    ``batch_size``: texts per forward pass. Fitted: ``perplexity_`` ``(n_items,)``, ``bin_edges_``."""

    name = "ppl"
    signal = "text (LM perplexity)"
    _domains = {**TextOnlySelector._domains, "n_bins": Whole(1), "max_length": Whole(1), "batch_size": Whole(1)}
    needs_no_models = True

    def __init__(self, k: int, seed: int = 0, progress: bool = True, n_bins: int = DEFAULT_BINS, max_length: int = 1024,
                 batch_size: int = 16):
        store_params(self, locals())

    def select(self, train: Responses, val: Responses) -> np.ndarray:
        texts = require_texts(train, self.name)
        _check_bins(self.n_bins, train.n_items)
        from ..features.lm import MODEL_ID, perplexity

        ppl = perplexity(texts, batch_size=self.batch_size, max_length=self.max_length, progress=self.progress)
        idx, info = stratified_sample(ppl, self.k, n_bins=self.n_bins, seed=self.seed)
        self.perplexity_ = ppl
        self.bin_edges_ = np.asarray(info["bin_edges"])
        self.info_.update({"feature_model": MODEL_ID, **info})
        return idx
