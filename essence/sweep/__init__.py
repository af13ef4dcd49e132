"""The comparison sweep: every method x dataset x k x seed on identical splits, parallel, cached, resumable.

One *run* is ``compress(data, k, method, seed, split=split_models(data, seed=seed))``: its split depends
on the dataset and the seed only, and is computed once and handed to every method, so all methods of a
(dataset, seed) pair are scored on the very same test models.

A ``datasets`` entry joining two or more benchmarks with ``+`` (``arc+gsm8k+mmlu``) is a *suite*
(:mod:`~essence.sweep.suites`): a run is ``compress_suite`` on the split it makes for that seed (its shared
models split on the suite mean), handed to every method that runs on a suite; it gives a table row per
member (column ``benchmark``) and one for the suite mean (``benchmark == "mean"``). Single datasets have
``benchmark == dataset``.

Layout of an output folder ``DIR``::

    DIR/runs/<dataset>__<method>__k<k>__s<seed>.json    one finished run (the cache; written atomically)
    DIR/errors/<dataset>__<method>__k<k>__s<seed>.txt   traceback of the latest failure of that run
    DIR/results.parquet, DIR/results.csv                the tidy table (one row per run, see COLUMNS)

A finished run's file holds its test and validation figures, the chosen item ids, the artifact
(``Compressed.from_dict(record["artifact"])`` rebuilds it) and a *signature*: data fingerprint, split
id, the method's resolved parameters, the ``compress`` defaults that shape the figures, and a hash of
the method's source. A rerun reuses a cached run only when its signature matches; a stale entry is
recomputed with a printed note. Failed runs are not cached: they are retried on the next sweep.
An interrupted sweep therefore resumes where it stopped. The table is written only at the end, and an
existing table is never replaced unless ``force`` (recompute every run) or ``update`` (recompute only
missing or stale runs) is given.

Parallelism: joblib's loky processes (``jobs``; BLAS/OpenMP limited to one thread per worker), or a
dask.distributed cluster (``backend="dask"``, ``scheduler=ADDRESS`` or a ``distributed.Client``).
Workers load each dataset once (``functools.lru_cache``) and check its fingerprint against the one the
sweep computed.

Units: ``rmse``, ``mae`` in percentage points (pp); ``kendall``, ``spearman``, ``pearson`` unitless in
[-1, 1]; ``rank_err_5``, ``rank_err_10``, ``coverage`` shares in [0, 1]; ``seconds`` wall-clock seconds
of the run's ``compress`` call (as recorded when it was computed).

Files: :mod:`~essence.sweep.plan` (``run_sweep`` and its named steps), :mod:`~essence.sweep.records`
(file names, run records, table rows), :mod:`~essence.sweep.signatures` (source hashes that make a
cached run stale), :mod:`~essence.sweep.worker` (one run in a worker), :mod:`~essence.sweep.backends`
(joblib, dask), :mod:`~essence.sweep.tables` (summaries and Markdown tables), :mod:`~essence.sweep.suites`
(suite entries, their settings and rows), :mod:`~essence.sweep.cli` (``essence sweep``).
"""

from __future__ import annotations

from .backends import DASK_CONNECT_TIMEOUT
from .cli import add_subcommand
from .suites import SUITE_SWEEP_SETTINGS
from .plan import SWEEP_SETTINGS, run_sweep
from .records import COLUMNS, RUN_SCHEMA, RUN_SCHEMA_VERSION, SUMMARY_COLUMNS, load_runs, run_path
from .signatures import _core_hash, _source_hash  # noqa: F401  (tests and notes use them)
from .tables import format_summary, format_wide, mean_sd, ratio_table, summarise, verdict

__all__ = [
    "COLUMNS",
    "SUMMARY_COLUMNS",
    "run_sweep",
    "summarise",
    "ratio_table",
    "mean_sd",
    "verdict",
    "format_summary",
    "format_wide",
    "load_runs",
    "run_path",
    "add_subcommand",
]
