"""The work of one run, executed in a worker process: load the data once, ``compress``, return a record."""

from __future__ import annotations

import contextlib
import datetime as _dt
import functools
import os
import time
import traceback
from dataclasses import dataclass

import numpy as np

from .. import __version__
from .. import data as _data
from .._io import jsonable
from .._runtime import single_thread
from .records import RUN_SCHEMA, RUN_SCHEMA_VERSION
from .signatures import _core_hash

@dataclass(frozen=True)
class _Task:
    dataset: str  # name used in keys and the table
    source: str  # what the worker passes to essence.data.load (a name or an absolute path)
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


#: set in our own loky workers so that libraries the methods use (tqdm, huggingface) draw no progress bars
_QUIET_ENV = {"TQDM_DISABLE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1"}


@functools.lru_cache(maxsize=8)
def _load_cached(source: str):
    """Load a dataset once per worker process: ``(Responses, fingerprint)``."""
    d = _data.load(source)
    return d, d.fingerprint()


def _worker_data(source: str, fingerprint: str):
    d, fp = _load_cached(source)
    if fp != fingerprint:  # the file changed since this worker loaded it: load again once
        _load_cached.cache_clear()
        d, fp = _load_cached(source)
    if fp != fingerprint:
        raise RuntimeError(
            f"dataset {source!r} on this worker has fingerprint {fp}, the sweep expected {fingerprint}; "
            "give every worker the same data files"
        )
    return d


@contextlib.contextmanager
def _thread_limit(on: bool):
    if not on:
        yield
        return
    with single_thread():
        yield


def _base_record(task: _Task) -> dict:
    return {
        "schema": RUN_SCHEMA,
        "schema_version": RUN_SCHEMA_VERSION,
        "dataset": task.dataset,
        "method": task.method,
        "k": int(task.k),
        "seed": int(task.seed),
        "signature": task.signature,
        "n_test": int(len(task.split[2])),
        "essence_version": __version__,
        "core_source": _core_hash(),
        "error": "",
        "seconds": 0.0,
    }


def _one_line(exc: BaseException) -> str:
    msg = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__


def _execute(task: _Task) -> dict:
    """Run one combination; never raises an ``Exception`` (it becomes ``record["error"]``)."""
    from ..compressed import compress

    if task.quiet_worker:
        for name, value in _QUIET_ENV.items():
            os.environ.setdefault(name, value)
    rec = _base_record(task)
    t0 = time.perf_counter()
    try:
        with _thread_limit(task.limit_threads):
            data = _worker_data(task.source, task.fingerprint)
            split = _data.Split(*(np.asarray(a, dtype=np.intp) for a in task.split))
            predictors = task.signature["settings"].get("predictors", "all")  # the sweep's fixed setting
            art = compress(data, task.k, task.method, task.seed, split=split, progress=False, predictors=predictors,
                           **task.params)
        rec["items"] = list(art.items)
        rec["reconstructor"] = art.selection.get("reconstructor_choice", "")
        rec["figures"] = jsonable(art.figures)
        if task.keep_artifact:
            rec["artifact"] = jsonable(art.to_dict())
    except Exception as exc:  # noqa: BLE001 - every failure must become a row
        rec["error"] = _one_line(exc)
        rec["traceback"] = traceback.format_exc()
    rec["seconds"] = time.perf_counter() - t0
    rec["created"] = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    return rec


