"""The comparison sweep: every method x dataset x k x seed on identical splits, parallel, cached, resumable.

One *run* is ``compress(data, k, method, seed, split=split_models(data, seed=seed))``: its split depends
on the dataset and the seed only, and is computed once and handed to every method, so all methods of a
(dataset, seed) pair are scored on the very same test models.

A ``datasets`` entry joining two or more benchmarks with ``+`` is a *suite* (:mod:`~essence.sweep.suites`),
with a table row per member and one for the suite mean (column ``benchmark``).

Layout of an output folder ``DIR``::

    DIR/runs/<dataset>__<method>__k<k>__s<seed>.json    one finished run (the cache; written atomically)
    DIR/errors/<dataset>__<method>__k<k>__s<seed>.txt   traceback of the latest failure of that run
    DIR/results.parquet, DIR/results.csv                the tidy table (one row per run, see COLUMNS)

A finished run's file holds its figures, the chosen item ids, the artifact and a *signature* (data
fingerprint, split id, the method's resolved parameters, the ``compress`` settings, a hash of the method's
source). A cached run is reused only when its signature matches; failed runs are not cached, so an
interrupted sweep resumes where it stopped. An existing table is replaced only with ``force`` (recompute
every run) or ``update`` (recompute missing or stale runs). Runs execute in joblib's loky processes or on
a dask.distributed cluster.

Units: ``rmse``, ``mae`` in percentage points (pp); ``kendall``, ``spearman``, ``pearson`` in [-1, 1];
``rank_err_5``, ``rank_err_10``, ``coverage`` shares in [0, 1]; ``seconds`` wall-clock seconds of the run.
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
