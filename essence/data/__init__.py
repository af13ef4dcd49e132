"""Per-item results of many models: the `Responses` container, loading, validation and splits."""

from __future__ import annotations

from .loading import (DATASETS, METABENCH, OPENLLM_V2, POOL_CAVEAT, data_roots, describe, full_benchmark_size,
                      items_from, link_shared_data, load, resolve_dataset, verify_checksum)
from .responses import Responses
from .split import SPLIT_KINDS, Split, split_models
from .validation import from_arrays

__all__ = ["DATASETS", "METABENCH", "OPENLLM_V2", "Responses", "Split", "load", "from_arrays", "resolve_dataset",
           "split_models", "SPLIT_KINDS", "verify_checksum", "link_shared_data", "describe", "full_benchmark_size",
           "items_from", "POOL_CAVEAT", "data_roots"]
