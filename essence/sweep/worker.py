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

from ..data._version import __version__
from .. import data as _data
from ..data._io import jsonable
from ..data._runtime import single_thread
from .records import RUN_SCHEMA, RUN_SCHEMA_VERSION
from .signatures import _core_hash
from .suites import build_suite

@dataclass(frozen=True)
class _Task:
    dataset: str  # name used in keys and the table (a suite's: its members' names joined by "+")
    source: str | tuple  # what the worker passes to essence.data.load (a name or an absolute path); a suite's:
    # one per member
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
    """Load a dataset (a name or path) or a suite (a tuple of them) once per worker process:
    ``(Responses or Suite, fingerprint)``."""
    d = build_suite(source) if isinstance(source, tuple) else _data.load(source)
    return d, d.fingerprint()


def _worker_data(source, fingerprint: str):
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
        **({"members": list(task.members)} if task.members else {}),
    }


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
        with _thread_limit(task.limit_threads):
            data = _worker_data(task.source, task.fingerprint)
            split = _data.Split(*(np.asarray(a, dtype=np.intp) for a in task.split))
            (_compress_suite_run if task.members else _compress_run)(task, data, split, rec)
    except Exception as exc:  # noqa: BLE001 - every failure must become a row
        rec["error"] = _one_line(exc)
        rec["traceback"] = traceback.format_exc()
    return _finish(rec, t0)


def _compress_run(task: _Task, data, split, rec: dict) -> None:
    """One single-dataset run: ``compress`` on the sweep's split with the sweep's settings; fills ``rec``."""
    from ..artifact.compressed import compress

    predictors = task.signature["settings"].get("predictors", "all")  # the sweep's fixed setting
    art = compress(data, task.k, task.method, task.seed, split=split, progress=False, predictors=predictors,
                   **task.params)
    rec["items"] = list(art.items)
    rec["reconstructor"] = art.selection.get("reconstructor_choice", "")
    rec["figures"] = jsonable(art.figures)
    if task.keep_artifact:
        rec["artifact"] = jsonable(art.to_dict())


def _finish(rec: dict, t0: float) -> dict:
    rec["seconds"] = time.perf_counter() - t0
    rec["created"] = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    return rec


def _compress_suite_run(task: _Task, suite, split, rec: dict) -> None:
    """One suite run: ``compress_suite`` on the sweep's split with the sweep's suite settings; fills ``rec``
    (``items``: pooled ids ``member/item``; ``reconstructor``: member -> chosen kind; ``budget``)."""
    from ..suite import compress_suite

    s = task.signature["settings"]
    params = task.params
    art = compress_suite(suite, task.k, method=task.method, seed=task.seed, split=split, level=s["level"],
                         reconstructors=s["reconstructors"], jobs=1,
                         progress=False, **params)
    rec["items"] = art.columns()
    rec["reconstructor"] = {n: c.get("kind", "") for n, c in art.selection.get("reconstructor_choice", {}).items()}
    rec["budget"] = dict(art.selection.get("budget", {}))
    rec["figures"] = jsonable(art.figures)
    if task.keep_artifact:
        rec["artifact"] = jsonable(art.to_dict())
