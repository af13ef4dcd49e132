"""The comparison sweep: every method x dataset x k x seed on identical splits, parallel, cached, resumable.

One *run* is ``compress(data, k, method, seed, split=split_models(data, seed=seed))``: its split depends
on the dataset and the seed only, and is computed once and handed to every method, so all methods of a
(dataset, seed) pair are scored on the very same test models.

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
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import functools
import hashlib
import inspect
import json
import os
import re
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import __version__
from . import data as _data
from ._io import atomic_path, jsonable, write_atomic
from ._runtime import single_thread
from .checks import cli_whole_number, parse_params
from .errors import InputError, UsageError

__all__ = [
    "COLUMNS",
    "SUMMARY_COLUMNS",
    "run_sweep",
    "summarise",
    "format_summary",
    "format_wide",
    "load_runs",
    "run_path",
    "add_subcommand",
]

RUN_SCHEMA = "essence.sweep.run"
RUN_SCHEMA_VERSION = 1

#: Columns of the results table, in order. Metrics are the run's *test* figures.
COLUMNS = [
    "dataset",  # dataset name (file stem for paths)
    "method",  # registry name
    "k",  # items kept
    "seed",  # seed of the split and of the method
    "rmse",  # test RMSE, pp
    "mae",  # test MAE, pp
    "kendall",  # test Kendall tau-b
    "spearman",  # test Spearman rho
    "pearson",  # test Pearson r
    "rank_err_5",  # share of test models whose estimated rank is within 5% of n of the true rank
    "rank_err_10",  # same within 10%
    "coverage",  # share of test models whose true score lies in the interval
    "seconds",  # wall time of the run, s
    "n_test",  # number of test models (same for every method of a dataset x seed)
    "error",  # "" when the run finished, else "ExceptionType: message"
    "reconstructor",  # reconstructor chosen on validation ("" on error)
    "split_id",  # hash of the (train, val, test) split: equal across methods of a dataset x seed
    "pool_preselected",  # True for the metabench pools (see essence.data.POOL_CAVEAT)
    "caveat",  # POOL_CAVEAT for the metabench pools, else ""
]
_METRICS = ("rmse", "mae", "kendall", "spearman", "pearson", "rank_err_5", "rank_err_10", "coverage")

#: Columns of :func:`summarise`.
SUMMARY_COLUMNS = [
    "dataset", "method", "k", "n_runs", "n_failed", "rmse_mean", "rmse_sd", "kendall_mean", "kendall_sd",
    "pool_preselected", "error",
]

#: How long ``backend="dask"`` waits to reach the scheduler before giving up.
DASK_CONNECT_TIMEOUT = "15s"

#: ``compress`` parameters whose defaults shape every run's figures (recorded in the signature).
_SETTINGS = ("level", "min_answered")


def _usage_error(msg: str) -> Exception:
    return UsageError(msg)


# ----------------------------------------------------------------------------------------------
# Small helpers: file names, hashes, atomic writes
# ----------------------------------------------------------------------------------------------
def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.+-]", "-", str(name))


def _key_name(dataset: str, method: str, k: int, seed: int) -> str:
    return f"{_safe(dataset)}__{_safe(method)}__k{int(k)}__s{int(seed)}"


def run_path(out, dataset: str, method: str, k: int, seed: int) -> Path:
    """Cache file of one run: ``out/runs/<dataset>__<method>__k<k>__s<seed>.json``."""
    return Path(out) / "runs" / f"{_key_name(dataset, method, k, seed)}.json"


def _split_id(split) -> str:
    h = hashlib.sha256()
    for part in split:
        h.update(np.asarray(part, dtype=np.int64).tobytes())
        h.update(b"|")
    return h.hexdigest()[:12]


#: modules whose changes are reported by the core-code note instead of making cached runs stale
_CORE_MODULES = frozenset({
    "essence", "essence.data", "essence.compressed", "essence.reconstruct", "essence.intervals",
    "essence.metrics", "essence.methods", "essence.methods.base", "essence.cli", "essence.sweep",
})


def _module_file(name: str) -> Path | None:
    """Source file of an ``essence.*`` module, found without importing it; None if there is none."""
    parts = name.split(".")
    if parts[0] != "essence":
        return None
    base = Path(__file__).parent.joinpath(*parts[1:])
    for cand in ((base.with_suffix(".py"),) if len(parts) > 1 else ()) + (base / "__init__.py",):
        if cand.is_file():
            return cand
    return None


def _essence_imports(name: str, path: Path) -> set[str]:
    """``essence.*`` modules that a source file imports anywhere (including imports inside functions)."""
    import ast
    import importlib.util

    try:
        tree = ast.parse(path.read_text())
    except (OSError, SyntaxError, UnicodeDecodeError):
        return set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            try:
                mod = (importlib.util.resolve_name("." * node.level + (node.module or ""), package)
                       if node.level else node.module)
            except (ImportError, ValueError):
                continue
            found.add(mod)
            found.update(f"{mod}.{a.name}" for a in node.names)  # `from pkg import submodule`
    return {m for m in found if m == "essence" or m.startswith("essence.")}


def _source_hash(module_name: str) -> str | None:
    """SHA-256 (16 hex) of a method's code: its module and every ``essence`` module it imports, transitively,
    except the shared core (:data:`_CORE_MODULES`). None when the module has no source file here."""
    if _module_file(module_name) is None:
        return None
    seen: set[str] = set()
    stack = [module_name]
    files = []
    while stack:
        m = stack.pop()
        if m in seen or (m in _CORE_MODULES and m != module_name):
            continue
        seen.add(m)
        f = _module_file(m)
        if f is None:
            continue
        files.append((m, f))
        stack.extend(_essence_imports(m, f))
        stack.extend(m.rsplit(".", i)[0] for i in range(1, m.count(".")))  # parent packages run too
    h = hashlib.sha256()
    for m, f in sorted(files):
        h.update(m.encode())
        try:
            h.update(f.read_bytes())
        except OSError:
            pass
    return h.hexdigest()[:16]


def _core_hash() -> str:
    """Hash of the shared code that turns chosen items into figures (compressed, reconstruct, intervals, metrics)."""
    h = hashlib.sha256()
    here = Path(__file__).parent
    for name in ("compressed.py", "reconstruct.py", "intervals.py", "metrics.py", "methods/base.py"):
        try:
            h.update((here / name).read_bytes())
        except OSError:
            h.update(name.encode())
    return h.hexdigest()[:16]


# ----------------------------------------------------------------------------------------------
# The work of one run (executed in a worker)
# ----------------------------------------------------------------------------------------------
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
    from .compressed import compress

    if task.quiet_worker:
        for name, value in _QUIET_ENV.items():
            os.environ.setdefault(name, value)
    rec = _base_record(task)
    t0 = time.perf_counter()
    try:
        with _thread_limit(task.limit_threads):
            data = _worker_data(task.source, task.fingerprint)
            split = _data.Split(*(np.asarray(a, dtype=np.intp) for a in task.split))
            art = compress(data, task.k, task.method, task.seed, split=split, progress=False, **task.params)
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


# ----------------------------------------------------------------------------------------------
# Cache
# ----------------------------------------------------------------------------------------------
def _read_record(path: Path) -> dict | None:
    try:
        rec = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(rec, dict) or rec.get("schema") != RUN_SCHEMA or rec.get("schema_version") != RUN_SCHEMA_VERSION:
        return None
    return rec


def load_runs(out) -> dict:
    """Every cached run under ``out/runs``: ``{(dataset, method, k, seed): record}``.

    A record holds ``figures`` (``{"test": {...}, "validation": {...}}``, see :func:`essence.metrics.summary`),
    ``items`` (the chosen item ids, ``(k,)``), ``seconds``, ``signature`` and, unless the sweep was run
    with ``keep_artifacts=False``, ``artifact`` (``Compressed.from_dict(record["artifact"])``).
    """
    runs = {}
    for p in sorted((Path(out) / "runs").glob("*.json")):
        rec = _read_record(p)
        if rec is not None:
            runs[(rec["dataset"], rec["method"], int(rec["k"]), int(rec["seed"]))] = rec
    return runs


def _stale_reason(rec: dict, signature: dict) -> str:
    old = rec.get("signature", {})
    diff = [name for name in signature if old.get(name) != signature[name]]
    return ", ".join(diff) or "signature"


# ----------------------------------------------------------------------------------------------
# Input checks
# ----------------------------------------------------------------------------------------------
def _as_list(x, what: str) -> list:
    if x is None:
        raise InputError(f"{what}: nothing given; name at least one")
    if isinstance(x, (str, int, np.integer)):
        x = [x]
    out = []
    for v in x:
        if v not in out:
            out.append(v)
    if not out:
        raise InputError(f"{what}: empty list; name at least one")
    return out


def _check_ints(values, what: str, minimum: int) -> list[int]:
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise InputError(f"{what}: {v!r} is not a whole number")
        if v < minimum:
            raise InputError(f"{what}: {v} is below {minimum}; give values >= {minimum}")
        out.append(int(v))
    return out


def _parse_param(kv: str) -> tuple[str, str, object]:
    if "=" not in kv or "." not in kv.split("=", 1)[0]:
        raise _usage_error(f"--param {kv!r}: expected METHOD.NAME=VALUE, e.g. --param essence.generations=200")
    name, val = kv.split("=", 1)
    method, pname = name.split(".", 1)
    try:
        value = json.loads(val)
    except json.JSONDecodeError:
        value = val
    return method, pname, value


# ----------------------------------------------------------------------------------------------
# The sweep
# ----------------------------------------------------------------------------------------------
def run_sweep(
    datasets,
    methods,
    ks,
    seeds=(0, 1, 2),
    out="build/sweep",
    jobs: int = 2,
    force: bool = False,
    progress: bool = True,
    backend: str = "local",
    scheduler=None,
    method_params: dict | None = None,
    update: bool = False,
    keep_artifacts: bool = True,
):
    """Run every dataset x method x k x seed, reuse cached runs, write and return the results table.

    Parameters
    ----------
    datasets : list of str
        Dataset names (``essence.data.DATASETS``) or paths (.npz, .csv, .parquet).
    methods : list of str
        Method registry names (``essence.methods.METHODS``). A method whose module cannot be imported
        gives error rows (it is never silently skipped).
    ks : list of int
        Budgets (items kept), each >= 1. A k larger than a dataset's item pool gives error rows.
    seeds : list of int
        Seeds (>= 0); seed s uses ``split_models(data, seed=s)`` for every method and ``seed=s`` in the method.
    out : path
        Output folder (see the module docstring for its layout).
    jobs : int
        Worker processes for ``backend="local"`` (joblib/loky); -1 = all cores; 1 = in this process.
    force : bool
        Recompute every run and replace an existing table.
    update : bool
        Replace an existing table, recomputing only runs that are missing or stale in the cache.
    progress : bool
        A tqdm bar over runs (the methods' own bars are always off inside the sweep).
    backend : {"local", "dask"}
        ``"dask"`` submits the runs to a dask.distributed cluster; ``scheduler`` is its address
        (``tcp://host:8786``) or a ``distributed.Client``. Workers must be able to import essence and
        to load the datasets by the same names/paths.
    method_params : dict, optional
        ``{method: {parameter: value}}`` for the methods' constructors.
    keep_artifacts : bool
        Store each run's artifact in its cache file (about 50 kB each).

    Returns
    -------
    pandas.DataFrame
        One row per run, columns :data:`COLUMNS` (metrics are test figures; errors in pp), in the order
        dataset, method, k, seed. ``df.attrs["sweep"]`` holds counts (``runs``, ``computed``, ``cached``,
        ``failed``) and ``wall_seconds``. The same table is written to ``out/results.parquet`` and
        ``out/results.csv``.

    Raises
    ------
    UsageError / ValueError
        Unknown dataset or method, k <= 0, bad parameters, an existing table without ``force``/``update``,
        an unreachable scheduler. Nothing is written in that case.
    KeyboardInterrupt
        Propagated after a note; the runs finished so far stay cached, and the same call resumes.
    """
    import pandas as pd

    from .compressed import compress
    from .methods import METHODS, get_method, make_method

    t_start = time.perf_counter()
    datasets = [str(d) for d in _as_list(datasets, "datasets")]
    methods = [str(m) for m in _as_list(methods, "methods")]
    ks = _check_ints(_as_list(ks, "k"), "k", 1)
    seeds = _check_ints(_as_list(seeds, "seeds"), "seeds", 0)
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise _usage_error(f"unknown method(s) {', '.join(map(repr, unknown))}; known methods: {', '.join(METHODS)}")
    if isinstance(jobs, bool) or not isinstance(jobs, (int, np.integer)) or jobs == 0 or jobs < -1:
        raise _usage_error(f"jobs: {jobs!r} is not a number of workers; give a whole number >= 1, or -1 for all cores")
    if backend not in ("local", "dask"):
        raise _usage_error(f"backend: {backend!r} is unknown; choose 'local' or 'dask'")
    if backend == "dask" and scheduler is None:
        raise _usage_error("backend 'dask' needs a scheduler address: pass --scheduler tcp://HOST:PORT (or a Client)")
    method_params = dict(method_params or {})
    for m, p in method_params.items():
        if m not in methods:
            raise _usage_error(f"method_params: {m!r} is not among the sweep's methods ({', '.join(methods)}); "
                               "add it to the methods or drop its parameters")
        if not isinstance(p, dict):
            raise _usage_error(f"method_params[{m!r}]: expected a dict of parameter -> value, got {type(p).__name__}")

    out = Path(out)
    if out.exists() and not out.is_dir():
        raise _usage_error(f"{out}: exists and is not a folder; choose another --out")
    table_parquet, table_csv = out / "results.parquet", out / "results.csv"
    existing = [p for p in (table_parquet, table_csv) if p.exists()]
    if existing and not (force or update):
        raise _usage_error(
            f"{existing[0]}: a finished table already exists; pass --force to recompute every run and replace it, "
            "--update to recompute only missing or stale runs, or choose another --out"
        )

    # -- datasets, splits (once per dataset x seed), fingerprints ----------------------------------
    loaded = {}
    for src in datasets:
        d = _data.load(src)
        if d.name in loaded:
            raise _usage_error(f"datasets: two datasets are named {d.name!r}; rename one of the files")
        source = src if src in _data.DATASETS else str(Path(src).resolve())
        loaded[d.name] = (d, source)
    splits = {}
    for name, (d, _) in loaded.items():
        for s in seeds:
            sp = _data.split_models(d, seed=s)
            splits[name, s] = (tuple(np.asarray(a, dtype=np.intp) for a in sp), _split_id(sp))

    # -- what each method would be run with ------------------------------------------------------
    defaults = inspect.signature(compress).parameters
    settings = {n: defaults[n].default for n in _SETTINGS if n in defaults}
    unavailable: dict[str, str] = {}
    method_code: dict[str, str | None] = {}
    for m in methods:
        try:
            cls = get_method(m)
        except Exception as exc:  # noqa: BLE001 - a method that does not import is a row with the error
            unavailable[m] = _one_line(exc)
            continue
        method_code[m] = _source_hash(cls.__module__)
        try:  # unknown parameters are the user's error: stop before running anything
            make_method(m, k=ks[0], seed=seeds[0], progress=False, **method_params.get(m, {}))
        except ValueError as exc:
            raise _usage_error(" ".join(str(exc).split())) from None
        except Exception as exc:  # noqa: BLE001
            unavailable[m] = _one_line(exc)

    # -- decide run by run: cached, to compute, or an error row without running ---------------------
    rows_by_key: dict[tuple, dict] = {}
    order: list[tuple] = []
    todo: list[_Task] = []
    notes: list[str] = []
    stale: list[str] = []
    core_changed = 0
    n_cached = 0
    core_now = _core_hash()
    for name, (d, source) in loaded.items():
        fp = d.fingerprint()
        for m in methods:
            for k in ks:
                for s in seeds:
                    key = (name, m, k, s)
                    order.append(key)
                    split, sid = splits[name, s]
                    meta = {"split_id": sid, "n_test": len(split[2])}
                    if k > d.n_items:
                        rows_by_key[key] = _error_row(key, meta, f"k={k} is larger than the {d.n_items} items of "
                                                                 f"{name}; choose k <= {d.n_items}")
                        continue
                    if m in unavailable:
                        rows_by_key[key] = _error_row(key, meta, f"method unavailable: {unavailable[m]}")
                        continue
                    params = jsonable(make_method(m, k=k, seed=s, progress=False,
                                                   **method_params.get(m, {})).get_params())
                    signature = {"fingerprint": fp, "split_id": sid, "params": params, "settings": settings,
                                 "method_source": method_code.get(m)}
                    signature = json.loads(json.dumps(signature))
                    path = run_path(out, name, m, k, s)
                    if not force and path.exists():
                        rec = _read_record(path)
                        if rec is not None and not rec.get("error") and rec.get("signature") == signature:
                            rows_by_key[key] = _row(rec, meta)
                            n_cached += 1
                            core_changed += rec.get("core_source") != core_now
                            continue
                        stale.append(f"{path.name} ({'unreadable' if rec is None else _stale_reason(rec, signature)})")
                    todo.append(_Task(name, source, fp, m, k, s, dict(method_params.get(m, {})), split, signature,
                                      limit_threads=(backend == "dask" or jobs != 1),
                                      keep_artifact=keep_artifacts,
                                      quiet_worker=(backend == "local" and jobs != 1)))
    # -- notes that must not go unseen -----------------------------------------------------------------
    too_big = sorted({(key[0], key[2]) for key, r in rows_by_key.items() if r["error"].startswith("k=")})
    for name, k in too_big:
        notes.append(f"k={k} exceeds the {loaded[name][0].n_items} items of {name}: its runs are error rows")
    for m, why in unavailable.items():
        notes.append(f"method {m!r} is unavailable ({why}): its runs are error rows")
    if stale:
        shown = "; ".join(stale[:3]) + (f"; and {len(stale) - 3} more" if len(stale) > 3 else "")
        notes.append(f"{len(stale)} cached run(s) are stale and will be recomputed: {shown}")
    if core_changed:
        notes.append(f"{core_changed} cached run(s) were computed with other versions of compressed/reconstruct/"
                     "intervals/metrics; they are reused (pass --force to recompute them)")
    for line in notes:
        print(f"note: {line}", file=sys.stderr)

    # -- compute --------------------------------------------------------------------------------------
    # longest runs first (EssenceBench's search, then the IRT fits; larger k first), so the workers are not
    # left waiting on one long run at the end; runs are independent and seeded, the table keeps its order
    todo.sort(key=_expected_cost, reverse=True)
    (out / "runs").mkdir(parents=True, exist_ok=True)
    done = 0
    meta_of = {(t.dataset, t.method, t.k, t.seed): t for t in todo}

    def handle(rec: dict, bar) -> None:
        nonlocal done
        key = (rec["dataset"], rec["method"], int(rec["k"]), int(rec["seed"]))
        task = meta_of[key]
        err_path = out / "errors" / f"{_key_name(*key)}.txt"
        if rec["error"]:
            write_atomic(err_path, rec.get("traceback", rec["error"]))
            bar.write(f"failed: {_key_name(*key)}: {rec['error'][:300]}", file=sys.stderr)
        else:
            write_atomic(run_path(out, *key), json.dumps(jsonable(rec), allow_nan=False))
            err_path.unlink(missing_ok=True)
        meta = {"split_id": task.signature["split_id"], "n_test": len(task.split[2])}
        rows_by_key[key] = _row(rec, meta)
        done += 1
        bar.update(1)

    from tqdm.auto import tqdm

    with tqdm(total=len(todo), desc="sweep", unit="run", disable=not progress or not todo) as bar:
        try:
            if todo:
                if backend == "dask":
                    _run_dask(todo, scheduler, lambda rec: handle(rec, bar))
                else:
                    _run_local(todo, jobs, lambda rec: handle(rec, bar))
        except KeyboardInterrupt:
            print(f"\nnote: interrupted after {done} of {len(todo)} run(s); finished runs are cached in "
                  f"{out / 'runs'}; run the same sweep again to resume (no table was written)", file=sys.stderr)
            raise

    # -- the table ----------------------------------------------------------------------------------------
    df = pd.DataFrame([rows_by_key[key] for key in order], columns=COLUMNS)
    df = df.astype({"k": "int64", "seed": "int64", "n_test": "int64", "pool_preselected": "bool"})
    for c in _METRICS + ("seconds",):
        df[c] = pd.to_numeric(df[c], errors="coerce").astype("float64")
    _write_table(df, table_parquet, table_csv)
    df.attrs["sweep"] = {
        "runs": len(order),
        "computed": len(todo),
        "cached": n_cached,
        "failed": int((df["error"] != "").sum()),
        "wall_seconds": time.perf_counter() - t_start,
        "out": str(out),
    }
    return df


def _error_row(key: tuple, meta: dict, error: str) -> dict:
    rec = {"dataset": key[0], "method": key[1], "k": key[2], "seed": key[3], "error": error, "seconds": 0.0}
    return _row(rec, meta)


def _row(rec: dict, meta: dict) -> dict:
    test = (rec.get("figures") or {}).get("test") or {}
    name = rec["dataset"]
    pre = name in _data.METABENCH
    row = {
        "dataset": name,
        "method": rec["method"],
        "k": int(rec["k"]),
        "seed": int(rec["seed"]),
        **{m: (np.nan if test.get(m) is None else float(test[m])) for m in _METRICS},
        "seconds": float(rec.get("seconds") or 0.0),
        "n_test": int(meta["n_test"]),
        "error": rec.get("error") or "",
        "reconstructor": rec.get("reconstructor") or "",
        "split_id": meta["split_id"],
        "pool_preselected": pre,
        "caveat": _data.POOL_CAVEAT if pre else "",
    }
    return row


def _write_table(df, parquet: Path, csv: Path) -> None:
    """Write both files via temp files + rename, so neither is ever half-written."""
    with atomic_path(parquet) as tmp_parquet, atomic_path(csv) as tmp_csv:
        df.to_parquet(tmp_parquet, index=False)
        df.to_csv(tmp_csv, index=False)


# ----------------------------------------------------------------------------------------------
# Backends
# ----------------------------------------------------------------------------------------------
#: Rough relative cost of one run per method (measured mean seconds per run in the comparison sweep).
_METHOD_COST = {"essence": 20.0, "irt": 3.0, "tinybench": 1.0, "kmeans": 0.5, "disco": 0.5}


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
        raise _usage_error(f"backend 'dask' needs the distributed package ({exc})") from None

    own = not isinstance(scheduler, Client)
    if own:
        try:
            client = Client(str(scheduler), timeout=DASK_CONNECT_TIMEOUT, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as exc:
            raise _usage_error(
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


# ----------------------------------------------------------------------------------------------
# Summaries
# ----------------------------------------------------------------------------------------------
def summarise(df):
    """Mean and sd over seeds of test RMSE (pp) and Kendall tau per dataset x method x k.

    ``df``: a results table (:data:`COLUMNS`). Failed runs are left out of the means and counted in
    ``n_failed``; ``error`` repeats the first failure's message ("" if none). The sd is the sample sd
    (ddof=1): NaN with fewer than two finished seeds. Returns columns :data:`SUMMARY_COLUMNS`, one row
    per dataset x method x k in the order they first appear in ``df``.
    """
    import pandas as pd

    rows = []
    for (ds, m, k), g in df.groupby(["dataset", "method", "k"], sort=False):
        ok = g[g["error"].fillna("") == ""]
        errs = g.loc[g["error"].fillna("") != "", "error"]
        rows.append({
            "dataset": ds, "method": m, "k": int(k), "n_runs": len(g), "n_failed": len(g) - len(ok),
            "rmse_mean": ok["rmse"].mean() if len(ok) else np.nan,
            "rmse_sd": ok["rmse"].std(ddof=1) if len(ok) > 1 else np.nan,
            "kendall_mean": ok["kendall"].mean() if len(ok) else np.nan,
            "kendall_sd": ok["kendall"].std(ddof=1) if len(ok) > 1 else np.nan,
            "pool_preselected": bool(ds in _data.METABENCH),
            "error": errs.iloc[0] if len(errs) else "",
        })
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def format_summary(summary, max_error: int = 70) -> str:
    """A markdown table of :func:`summarise` output: RMSE (pp) and Kendall tau as mean ± sd over seeds.

    Metabench pools are marked ``*`` and the table ends with :data:`essence.data.POOL_CAVEAT` whenever
    one of them is present. Failed runs show as ``failed n/m`` with the first error, shortened.
    """

    def pm(mean, sd, digits):
        if not np.isfinite(mean):
            return "-"
        return f"{mean:.{digits}f} ± {sd:.{digits}f}" if np.isfinite(sd) else f"{mean:.{digits}f}"

    header = ["dataset", "method", "k", "RMSE pp (mean ± sd)", "Kendall tau (mean ± sd)", "failed", "error"]
    body = []
    for r in summary.itertuples(index=False):
        err = str(r.error)
        err = err if len(err) <= max_error else err[: max_error - 3] + "..."
        body.append([
            f"{r.dataset}{'*' if r.pool_preselected else ''}", r.method, str(r.k),
            pm(r.rmse_mean, r.rmse_sd, 2), pm(r.kendall_mean, r.kendall_sd, 3),
            f"{r.n_failed}/{r.n_runs}", err.replace("|", "/"),
        ])
    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(header)]
    lines = ["| " + " | ".join(h.ljust(w) for h, w in zip(header, widths)) + " |",
             "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    lines += ["| " + " | ".join(c.ljust(w) for c, w in zip(b, widths)) + " |" for b in body]
    if summary["pool_preselected"].any():
        lines.append("")
        lines.append(f"* {_data.POOL_CAVEAT}")
    return "\n".join(lines)


def format_wide(summary, k: int, metric: str = "rmse", methods=None) -> str:
    """A markdown table at one ``k``: one row per dataset, one column per method, ``mean ± sd`` over seeds.

    ``summary``: :func:`summarise` output; ``metric``: ``"rmse"`` (pp, 2 decimals) or ``"kendall"``
    (3 decimals); ``methods``: column order (default: order of first appearance). A cell whose runs all
    failed reads ``failed``; a missing combination ``-``. Metabench pools are marked ``*`` and the table
    ends with :data:`essence.data.POOL_CAVEAT` when one of them is present.
    """
    if metric not in ("rmse", "kendall"):
        raise InputError(f"metric: expected 'rmse' or 'kendall', got {metric!r}")
    s = summary[summary["k"] == int(k)]
    if s.empty:
        raise InputError(f"k: no runs with k = {k} in the summary (it has k = {sorted(set(summary['k']))})")
    methods = list(dict.fromkeys(s["method"])) if methods is None else list(methods)
    digits = 2 if metric == "rmse" else 3
    cells = {(r.dataset, r.method): r for r in s.itertuples(index=False)}
    header = ["dataset"] + methods
    body = []
    for ds in dict.fromkeys(s["dataset"]):
        pre = bool(s.loc[s["dataset"] == ds, "pool_preselected"].any())
        row = [f"{ds}{'*' if pre else ''}"]
        for m in methods:
            r = cells.get((ds, m))
            mean = np.nan if r is None else getattr(r, f"{metric}_mean")
            sd = np.nan if r is None else getattr(r, f"{metric}_sd")
            if r is None:
                row.append("-")
            elif not np.isfinite(mean):
                row.append("failed")
            else:
                row.append(f"{mean:.{digits}f} ± {sd:.{digits}f}" if np.isfinite(sd) else f"{mean:.{digits}f}")
        body.append(row)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(b) + " |" for b in body]
    if s["pool_preselected"].any():
        lines += ["", f"* {_data.POOL_CAVEAT}"]
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------
# CLI
# ----------------------------------------------------------------------------------------------
def add_subcommand(subparsers) -> None:
    """Register ``essence sweep`` on the CLI's subparsers."""
    p = subparsers.add_parser(
        "sweep",
        help="run every method x dataset x k x seed on identical splits (parallel, cached, resumable)",
        description="Run every method x dataset x k x seed on identical model splits and write one tidy "
                    "table (OUT/results.parquet and OUT/results.csv). Finished runs are cached in OUT/runs, "
                    "so an interrupted sweep resumes; a failed run is a row with its error.",
    )
    p.add_argument("--data", nargs="+", required=True, metavar="DATA",
                   help="dataset names (arc, gsm8k, ...) or paths")
    p.add_argument("--methods", nargs="+", required=True, metavar="METHOD", help="method names (random, essence, ...)")
    p.add_argument("--k", nargs="+", type=cli_whole_number(1), required=True, metavar="K", help="budgets (items kept)")
    p.add_argument("--seeds", nargs="+", type=cli_whole_number(0), default=[0, 1, 2], metavar="S", help="seeds (default 0 1 2)")
    p.add_argument("--out", required=True, help="output folder (runs/ cache + results.parquet/.csv)")
    p.add_argument("--jobs", type=int, default=2, help="worker processes (default 2; -1 = all cores; 1 = serial)")
    p.add_argument("--force", action="store_true", help="recompute every run and replace an existing table")
    p.add_argument("--update", action="store_true",
                   help="replace an existing table, recomputing only missing or stale runs")
    p.add_argument("--quiet", action="store_true", help="no progress bar, no summary table")
    p.add_argument("--backend", choices=("local", "dask"), default="local",
                   help="local: joblib processes; dask: a dask.distributed cluster (needs --scheduler)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="dask scheduler address, e.g. tcp://10.0.0.1:8786")
    p.add_argument("--param", action="append", metavar="METHOD.NAME=VALUE",
                   help="a method parameter, e.g. essence.generations=200 (repeatable)")
    p.add_argument("--no-artifacts", action="store_true", help="do not keep each run's artifact in its cache file")
    p.set_defaults(func=_cmd_sweep)


def _cmd_sweep(args) -> int:
    if args.scheduler and args.backend != "dask":
        raise _usage_error("--scheduler is only used with --backend dask; add --backend dask")
    params = parse_params(args.param, qualified=True, reserved={"k": "--k", "seed": "--seeds", "method": "--methods", "progress": "--quiet"})
    df = run_sweep(args.data, args.methods, args.k, args.seeds, args.out, jobs=args.jobs, force=args.force,
                   progress=not args.quiet, backend=args.backend, scheduler=args.scheduler,
                   method_params=params, update=args.update, keep_artifacts=not args.no_artifacts)
    info = df.attrs["sweep"]
    if not args.quiet:
        print(format_summary(summarise(df)))
    print(f"{info['runs']} run(s): {info['computed']} computed, {info['cached']} from cache, {info['failed']} failed; "
          f"{info['wall_seconds']:.1f} s -> {Path(args.out) / 'results.parquet'} (and .csv)")
    return 0
