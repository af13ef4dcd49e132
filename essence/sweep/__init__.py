"""The comparison sweep (:func:`run_sweep`): every method x dataset x k x seed on identical splits, parallel, cached,
resumable; a ``datasets`` entry joining benchmarks with ``+`` is a suite (:mod:`~essence.sweep.suites`). Output
``DIR``: ``runs/KEY.json`` (a finished run, reused while its signature matches), ``errors/KEY.txt`` (the latest
failure's traceback) and ``results.parquet`` / ``results.csv`` (:data:`COLUMNS`), KEY being
``<dataset>__<method>__k<k>__s<seed>``.
"""

from __future__ import annotations

from .plan import add_subcommand, run_sweep
from .records import COLUMNS, SUMMARY_COLUMNS, load_runs, run_path
from .signatures import _source_hash  # noqa: F401  (tests use it)
from .tables import format_summary, format_wide, mean_sd, ratio_table, summarise, verdict

__all__ = ["COLUMNS", "SUMMARY_COLUMNS", "run_sweep", "summarise", "ratio_table", "mean_sd", "verdict",
           "format_summary", "format_wide", "load_runs", "run_path", "add_subcommand"]
