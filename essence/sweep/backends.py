"""Where the runs execute: joblib's loky processes in this machine, or a dask.distributed cluster."""

from __future__ import annotations

import traceback

from ..data.errors import UsageError
from ..methods import METHOD_TABLE
from .worker import _base_record, _execute, _one_line, _Task

#: How long ``backend="dask"`` waits to reach the scheduler before giving up.
DASK_CONNECT_TIMEOUT = "15s"

#: Rough relative cost of one run per method (``MethodInfo.cost``), for scheduling.
_METHOD_COST = {m.name: m.cost for m in METHOD_TABLE}


def _expected_cost(task: _Task) -> float:
    """A sort key for scheduling: the method's typical cost times ``k`` (not a prediction in seconds)."""
    return _METHOD_COST.get(task.method, 0.3) * task.k


def _run_local(tasks: list[_Task], jobs: int, handle) -> None:
    if jobs == 1:
        for t in tasks:
            handle(_execute(t))
        return
    from joblib import Parallel, delayed, parallel_config

    # loky workers start with OMP/MKL/OpenBLAS (and torch) limited to one thread each
    with parallel_config(backend="loky", inner_max_num_threads=1):
        results = Parallel(n_jobs=int(jobs), return_as="generator_unordered", batch_size=1)(
            delayed(_execute)(t) for t in tasks
        )
        for rec in results:
            handle(rec)


def _run_dask(tasks: list[_Task], scheduler, handle) -> None:
    try:
        from distributed import Client, as_completed
    except ImportError as exc:  # pragma: no cover - distributed is a pinned dependency
        raise UsageError(f"backend 'dask' needs the distributed package ({exc})") from None

    own = not isinstance(scheduler, Client)
    if own:
        try:
            client = Client(str(scheduler), timeout=DASK_CONNECT_TIMEOUT, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as exc:
            raise UsageError(
                f"cannot reach the dask scheduler at {scheduler!r} ({_one_line(exc)}); start one with "
                "`dask scheduler` and `dask worker ADDRESS`, or check --scheduler"
            ) from None
    else:
        client = scheduler
    futures = {}
    try:
        for t in tasks:
            futures[client.submit(_execute, t, pure=False)] = t
        for fut in as_completed(list(futures), loop=client.loop):
            try:
                rec = fut.result()
            except Exception as exc:  # noqa: BLE001 - e.g. a worker that died: the run becomes an error row
                rec = _base_record(futures[fut])
                rec["error"] = _one_line(exc)
                rec["traceback"] = traceback.format_exc()
            handle(rec)
    except BaseException:
        client.cancel(list(futures))
        raise
    finally:
        if own:
            client.close()
