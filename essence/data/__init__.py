"""Per-item results of many models: the `Responses` container, loading, validation and splits.

Conventions (see ``docs/architecture.md``):

* ``responses`` is always ``(n_models, n_items)`` float64 in [0, 1]; ``NaN`` marks a missing cell.
* ``target`` is each model's full-benchmark score in percentage points (0-100). For the metabench
  pools it is the genuine accuracy over the *whole* original benchmark (``full_score``); elsewhere it
  is ``100 * nanmean(responses, axis=1)``. Subsetting items never changes ``target``: the job of a
  compressed benchmark is to reconstruct the full score from fewer items.
"""

from __future__ import annotations

from .loading import (
    DATASETS,
    MANIFEST,
    METABENCH,
    OPENLLM_V2,
    POOL_CAVEAT,
    PROJECT_ROOT,
    data_roots,
    describe,
    full_benchmark_size,
    items_from,
    link_shared_data,
    load,
    resolve_dataset,
    sha256_file,
    verify_checksum,
)
from .responses import Responses
from .split import SPLIT_KINDS, Split, split_models
from .validation import from_arrays

__all__ = [
    "DATASETS",
    "METABENCH",
    "OPENLLM_V2",
    "Responses",
    "Split",
    "load",
    "from_arrays",
    "resolve_dataset",
    "split_models",
    "SPLIT_KINDS",
    "verify_checksum",
    "link_shared_data",
    "describe",
    "full_benchmark_size",
    "items_from",
]
