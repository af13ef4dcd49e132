"""Per-item results of many models: the `Responses` container, loading, validation and splits.

``responses`` is ``(n_models, n_items)`` float64 in [0, 1], ``NaN`` = missing. ``target`` ``(n_models,)`` is the
full-benchmark score in pp: ``full_score`` where the file has it (metabench pools), else ``100 * nanmean(responses,
axis=1)``; subsetting items never changes it.
"""

from __future__ import annotations

from .loading import (DATASETS, METABENCH, OPENLLM_V2, POOL_CAVEAT, data_roots, describe, full_benchmark_size,
                      items_from, link_shared_data, load, resolve_dataset, verify_checksum)
from .responses import Responses
from .split import SPLIT_KINDS, Split, split_models
from .validation import from_arrays

__all__ = ["DATASETS", "METABENCH", "OPENLLM_V2", "Responses", "Split", "load", "from_arrays", "resolve_dataset",
           "split_models", "SPLIT_KINDS", "verify_checksum", "link_shared_data", "describe", "full_benchmark_size",
           "items_from", "POOL_CAVEAT", "data_roots"]
