"""The comparison sweep: every method x dataset x k x seed on identical splits, parallel, cached, resumable.

A run is ``compress(data, k, method, seed, split=split_models(data, seed=seed))``, the split computed once per
(dataset, seed) and shared by every method. A ``datasets`` entry joining benchmarks with ``+`` is a suite
(:mod:`~essence.sweep.suites`): a row per member and one for the mean (column ``benchmark``). Output ``DIR``::

    DIR/runs/<dataset>__<method>__k<k>__s<seed>.json    a finished run (the cache; written atomically)
    DIR/errors/<dataset>__<method>__k<k>__s<seed>.txt   the traceback of its latest failure
    DIR/results.parquet, DIR/results.csv                the table, one row per run (COLUMNS)

A cached run is reused while its signature (data fingerprint, split id, resolved parameters, ``compress``
settings, the method's source hash) matches; failed runs are not cached, so a sweep resumes. Units: ``rmse``,
``mae`` pp; ``kendall``, ``spearman``, ``pearson`` in [-1, 1]; ``rank_err_5``, ``rank_err_10``, ``coverage``
shares in [0, 1]; ``seconds`` wall-clock.
"""

from __future__ import annotations

from .plan import add_subcommand, run_sweep
from .records import COLUMNS, SUMMARY_COLUMNS, load_runs, run_path
from .signatures import _source_hash  # noqa: F401  (tests use it)
from .tables import format_summary, format_wide, mean_sd, ratio_table, summarise, verdict

__all__ = ["COLUMNS", "SUMMARY_COLUMNS", "run_sweep", "summarise", "ratio_table", "mean_sd", "verdict",
           "format_summary", "format_wide", "load_runs", "run_path", "add_subcommand"]
