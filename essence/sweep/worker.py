"""The work of one run in a worker process (load the data once, ``compress``, return a record), and where the runs
execute: joblib's loky processes on this machine, or a dask.distributed cluster."""

from __future__ import annotations

import contextlib
import datetime as _dt
import functools
import os
import time
import traceback
from dataclasses import dataclass

import numpy as np
from joblib import Parallel, delayed, parallel_config

from ..data._version import __version__
from .. import data as _data
from ..artifact.compressed import compress
from ..data._io import jsonable
from ..data._runtime import single_thread
from ..data.errors import UsageError
from ..methods import METHOD_INFO
from .records import RUN_SCHEMA, RUN_SCHEMA_VERSION
from .signatures import _core_hash
from .suites import build_suite

#: How long ``backend="dask"`` waits to reach the scheduler before giving up.
DASK_CONNECT_TIMEOUT = "15s"


@dataclass(frozen=True)
class _Task:
    dataset: str  # name in keys and the table (a suite's: its members' names joined by "+")
    source: str | tuple  # what the worker loads (a name or an absolute path; a suite's: one per member)
    fingerprint: str
    method: str
    k: int
    seed: int
    params: dict  # user parameters for the method's constructor
    split: tuple  # (train, val, test) index arrays
    signature: dict
    limit_threads: bool
    keep_artifact: bool
    quiet_worker: bool = False  # a loky worker of ours: switch library progress bars off in its environment
    members: tuple = ()  # a suite's member names, in order (empty for a single dataset)


#: set in our own loky workers so that libraries the methods use (tqdm, huggingface) draw no progress bars
_QUIET_ENV = {"TQDM_DISABLE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1"}


@functools.lru_cache(maxsize=8)
def _load_cached(source):
    """``(Responses or Suite, fingerprint)`` of a name or path (a suite: a tuple of them), once per process."""
    d = build_suite(source) if isinstance(source, tuple) else _data.load(source)
    return d, d.fingerprint()


def _worker_data(source, fingerprint: str):
    d, fp = _load_cached(source)
    if fp != fingerprint:  # the file changed since this worker loaded it: load again once
        _load_cached.cache_clear()
        d, fp = _load_cached(source)
    if fp != fingerprint:
        raise RuntimeError(f"dataset {source!r} on this worker has fingerprint {fp}, the sweep expected {fingerprint}; "
                           "give every worker the same data files")
    return d


def _base_record(task: _Task) -> dict:
    return {"schema": RUN_SCHEMA, "schema_version": RUN_SCHEMA_VERSION, "dataset": task.dataset, "method": task.method,
            "k": int(task.k), "seed": int(task.seed), "signature": task.signature, "n_test": int(len(task.split[2])),
            "essence_version": __version__, "core_source": _core_hash(), "error": "", "seconds": 0.0,
            **({"members": list(task.members)} if task.members else {})}


def _one_line(exc: BaseException) -> str:
    msg = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__


def _execute(task: _Task) -> dict:
    """Run one combination; never raises an ``Exception`` (it becomes ``record["error"]``)."""
    if task.quiet_worker:
        for name, value in _QUIET_ENV.items():
            os.environ.setdefault(name, value)
    rec = _base_record(task)
    t0 = time.perf_counter()
    try:
        with single_thread() if task.limit_threads else contextlib.nullcontext():
            data = _worker_data(task.source, task.fingerprint)
            split = _data.Split(*(np.asarray(a, dtype=np.intp) for a in task.split))
            art = (_compress_suite_run if task.members else _compress_run)(task, data, split, rec)
            rec["figures"] = jsonable(art.figures)
            if task.keep_artifact:
                rec["artifact"] = jsonable(art.to_dict())
    except Exception as exc:  # noqa: BLE001 - every failure must become a row
        rec["error"] = _one_line(exc)
        rec["traceback"] = traceback.format_exc()
    rec["seconds"] = time.perf_counter() - t0
    rec["created"] = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    return rec


def _compress_run(task: _Task, data, split, rec: dict):
    """``compress`` on the sweep's split with its fixed ``predictors``; sets ``items``, ``reconstructor``."""
    art = compress(data, task.k, task.method, task.seed, split=split, progress=False,
                   predictors=task.signature["settings"].get("predictors", "all"), **task.params)
    rec["items"] = list(art.items)
    rec["reconstructor"] = art.selection.get("reconstructor_choice", "")
    return art


def _compress_suite_run(task: _Task, suite, split, rec: dict):
    """``compress_suite`` on the sweep's split with its suite settings; sets ``items`` (``member/item``),
    ``reconstructor`` (member -> kind) and ``budget``."""
    from ..suite import compress_suite  # looked up at run time (tests spy on it)

    s = task.signature["settings"]
    art = compress_suite(suite, task.k, method=task.method, seed=task.seed, split=split, level=s["level"],
                         reconstructors=s["reconstructors"], jobs=1, progress=False, **task.params)
    rec["items"] = art.columns()
    rec["reconstructor"] = {n: c.get("kind", "") for n, c in art.selection.get("reconstructor_choice", {}).items()}
    rec["budget"] = dict(art.selection.get("budget", {}))
    return art


def _expected_cost(task: _Task) -> float:
    """A sort key for scheduling: the method's typical cost (``MethodInfo.cost``) times ``k`` (not seconds)."""
    return (METHOD_INFO[task.method].cost if task.method in METHOD_INFO else 0.3) * task.k


def _run_local(tasks: list[_Task], jobs: int, handle) -> None:
    if jobs == 1:
        for t in tasks:
            handle(_execute(t))
        return
    # loky workers start with OMP/MKL/OpenBLAS (and torch) limited to one thread each
    with parallel_config(backend="loky", inner_max_num_threads=1):
        results = Parallel(n_jobs=int(jobs), return_as="generator_unordered", batch_size=1)(
            delayed(_execute)(t) for t in tasks)
        for rec in results:
            handle(rec)


def _run_dask(tasks: list[_Task], scheduler, handle) -> None:
    try:
        from distributed import Client, as_completed
    except ImportError as exc:  # pragma: no cover - distributed is a pinned dependency
        raise UsageError(f"backend 'dask' needs the distributed package ({exc})") from None

    own, client = not isinstance(scheduler, Client), scheduler
    if own:
        try:
            client = Client(str(scheduler), timeout=DASK_CONNECT_TIMEOUT, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as exc:
            raise UsageError(f"cannot reach the dask scheduler at {scheduler!r} ({_one_line(exc)}); start one with "
                             "`dask scheduler` and `dask worker ADDRESS`, or check --scheduler") from None
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
