"""Planning and running a sweep: check the arguments, load each dataset and split it once per seed, sign
every run, reuse the cached ones, compute the rest on a backend and write the table."""

from __future__ import annotations

import inspect
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .. import data as _data
from .._io import jsonable, write_atomic
from ..checks import whole_number
from ..errors import InputError, UsageError
from .backends import _expected_cost, _run_dask, _run_local
from .records import (COLUMNS, _METRICS, _error_row, _key_name, _read_record, _row, _split_id, _stale_reason,
                      _write_table, run_path)
from .signatures import _core_hash, _source_hash
from .worker import _one_line, _Task

__all__ = ["run_sweep"]

#: ``compress`` parameters whose defaults shape every run's figures (recorded in the signature).
_SETTINGS = ("level", "min_answered")
#: ``compress`` settings the sweep fixes (recorded in the signature too): selectors are compared at equal
#: reconstructors, without the latent and MLP kinds (they add tens of seconds to each of hundreds of runs;
#: what they add on top of any selector is measured by benchmarks/predictors.py)
SWEEP_SETTINGS = {"predictors": "basic"}


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
    return [whole_number(what, v, minimum) for v in values]




@dataclass
class _Plan:
    """Every run of a sweep, in table order: finished rows (cached or error rows) and the runs to compute."""

    order: list = field(default_factory=list)  # (dataset, method, k, seed) in table order
    rows: dict = field(default_factory=dict)  # key -> table row, for runs that need no computing
    todo: list = field(default_factory=list)  # _Task per run to compute
    stale: list = field(default_factory=list)  # "file (reason)" of cached runs that will be recomputed
    n_cached: int = 0
    core_changed: int = 0  # cached runs computed with other core code (reused, with a note)


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
    t_start = time.perf_counter()
    datasets, methods, ks, seeds, method_params = _check_arguments(datasets, methods, ks, seeds, jobs, backend,
                                                                   scheduler, method_params)
    out = Path(out)
    table_parquet, table_csv = _check_out(out, force, update)
    loaded, splits = _load_and_split(datasets, seeds)
    settings, unavailable, method_code = _method_signatures(methods, ks, seeds, method_params)
    plan = _plan_runs(loaded, splits, methods, ks, seeds, method_params, settings, unavailable, method_code, out,
                      force, backend, jobs, keep_artifacts)
    _print_notes(plan, loaded, unavailable)
    _compute(plan, out, backend, scheduler, jobs, progress)
    df = _results_table(plan)
    _write_table(df, table_parquet, table_csv)
    df.attrs["sweep"] = {
        "runs": len(plan.order),
        "computed": len(plan.todo),
        "cached": plan.n_cached,
        "failed": int((df["error"] != "").sum()),
        "wall_seconds": time.perf_counter() - t_start,
        "out": str(out),
    }
    return df


def _check_arguments(datasets, methods, ks, seeds, jobs, backend, scheduler, method_params):
    """The sweep's arguments as plain lists; UsageError / InputError before anything is loaded."""
    from ..methods import METHODS

    datasets = [str(d) for d in _as_list(datasets, "datasets")]
    methods = [str(m) for m in _as_list(methods, "methods")]
    ks = _check_ints(_as_list(ks, "k"), "k", 1)
    seeds = _check_ints(_as_list(seeds, "seeds"), "seeds", 0)
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise UsageError(f"unknown method(s) {', '.join(map(repr, unknown))}; known methods: {', '.join(METHODS)}")
    if isinstance(jobs, bool) or not isinstance(jobs, (int, np.integer)) or jobs == 0 or jobs < -1:
        raise UsageError(f"jobs: {jobs!r} is not a number of workers; give a whole number >= 1, or -1 for all cores")
    if backend not in ("local", "dask"):
        raise UsageError(f"backend: {backend!r} is unknown; choose 'local' or 'dask'")
    if backend == "dask" and scheduler is None:
        raise UsageError("backend 'dask' needs a scheduler address: pass --scheduler tcp://HOST:PORT (or a Client)")
    method_params = dict(method_params or {})
    for m, p in method_params.items():
        if m not in methods:
            raise UsageError(f"method_params: {m!r} is not among the sweep's methods ({', '.join(methods)}); "
                             "add it to the methods or drop its parameters")
        if not isinstance(p, dict):
            raise UsageError(f"method_params[{m!r}]: expected a dict of parameter -> value, got {type(p).__name__}")
    return datasets, methods, ks, seeds, method_params


def _check_out(out: Path, force: bool, update: bool) -> tuple[Path, Path]:
    """The table's two paths; UsageError when ``out`` is a file or a table exists without force/update."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out}: exists and is not a folder; choose another --out")
    table_parquet, table_csv = out / "results.parquet", out / "results.csv"
    existing = [p for p in (table_parquet, table_csv) if p.exists()]
    if existing and not (force or update):
        raise UsageError(
            f"{existing[0]}: a finished table already exists; pass --force to recompute every run and replace it, "
            "--update to recompute only missing or stale runs, or choose another --out"
        )
    return table_parquet, table_csv


def _load_and_split(datasets, seeds):
    """``({name: (Responses, source)}, {(name, seed): ((train, val, test), split_id)})``: each split once."""
    loaded = {}
    for src in datasets:
        d = _data.load(src)
        if d.name in loaded:
            raise UsageError(f"datasets: two datasets are named {d.name!r}; rename one of the files")
        source = src if src in _data.DATASETS else str(Path(src).resolve())
        loaded[d.name] = (d, source)
    splits = {}
    for name, (d, _) in loaded.items():
        for s in seeds:
            sp = _data.split_models(d, seed=s)
            splits[name, s] = (tuple(np.asarray(a, dtype=np.intp) for a in sp), _split_id(sp))
    return loaded, splits


def _method_signatures(methods, ks, seeds, method_params):
    """``(settings, unavailable, method_code)``: the ``compress`` defaults recorded in every signature, the
    methods that do not import (name -> error line) and each method's source hash. A parameter outside
    its domain is the user's error: UsageError before anything runs."""
    from ..compressed import compress
    from ..methods import get_method, make_method

    defaults = inspect.signature(compress).parameters
    settings = {**{n: defaults[n].default for n in _SETTINGS if n in defaults}, **SWEEP_SETTINGS}
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
        except InputError as exc:
            raise UsageError(" ".join(str(exc).split())) from None
        except Exception as exc:  # noqa: BLE001
            unavailable[m] = _one_line(exc)
    return settings, unavailable, method_code


def _plan_runs(loaded, splits, methods, ks, seeds, method_params, settings, unavailable, method_code, out, force,
               backend, jobs, keep_artifacts) -> _Plan:
    """Decide run by run: a cached row, an error row without running, or a task to compute."""
    from ..methods import make_method

    plan = _Plan()
    core_now = _core_hash()
    for name, (d, source) in loaded.items():
        fp = d.fingerprint()
        for m in methods:
            for k in ks:
                for s in seeds:
                    key = (name, m, k, s)
                    plan.order.append(key)
                    split, sid = splits[name, s]
                    meta = {"split_id": sid, "n_test": len(split[2])}
                    if k > d.n_items:
                        plan.rows[key] = _error_row(key, meta, f"k={k} is larger than the {d.n_items} items of "
                                                               f"{name}; choose k <= {d.n_items}")
                        continue
                    if m in unavailable:
                        plan.rows[key] = _error_row(key, meta, f"method unavailable: {unavailable[m]}")
                        continue
                    params = jsonable(make_method(m, k=k, seed=s, progress=False,
                                                  **method_params.get(m, {})).params_dict())
                    signature = {"fingerprint": fp, "split_id": sid, "params": params, "settings": settings,
                                 "method_source": method_code.get(m)}
                    signature = json.loads(json.dumps(signature))
                    path = run_path(out, name, m, k, s)
                    if not force and path.exists():
                        rec = _read_record(path)
                        if rec is not None and not rec.get("error") and rec.get("signature") == signature:
                            plan.rows[key] = _row(rec, meta)
                            plan.n_cached += 1
                            plan.core_changed += rec.get("core_source") != core_now
                            continue
                        plan.stale.append(f"{path.name} ({'unreadable' if rec is None else _stale_reason(rec, signature)})")
                    plan.todo.append(_Task(name, source, fp, m, k, s, dict(method_params.get(m, {})), split, signature,
                                           limit_threads=(backend == "dask" or jobs != 1),
                                           keep_artifact=keep_artifacts,
                                           quiet_worker=(backend == "local" and jobs != 1)))
    return plan


def _print_notes(plan: _Plan, loaded, unavailable) -> None:
    """Notes that must not go unseen (on stderr): k too large, unavailable methods, stale or old cached runs."""
    notes = []
    too_big = sorted({(key[0], key[2]) for key, r in plan.rows.items() if r["error"].startswith("k=")})
    for name, k in too_big:
        notes.append(f"k={k} exceeds the {loaded[name][0].n_items} items of {name}: its runs are error rows")
    for m, why in unavailable.items():
        notes.append(f"method {m!r} is unavailable ({why}): its runs are error rows")
    if plan.stale:
        shown = "; ".join(plan.stale[:3]) + (f"; and {len(plan.stale) - 3} more" if len(plan.stale) > 3 else "")
        notes.append(f"{len(plan.stale)} cached run(s) are stale and will be recomputed: {shown}")
    if plan.core_changed:
        notes.append(f"{plan.core_changed} cached run(s) were computed with other versions of compressed/reconstruct/"
                     "intervals/metrics; they are reused (pass --force to recompute them)")
    for line in notes:
        print(f"note: {line}", file=sys.stderr)


def _compute(plan: _Plan, out: Path, backend, scheduler, jobs, progress: bool) -> None:
    """Run ``plan.todo`` on the backend; cache each finished run, keep each failure's traceback, fill rows."""
    from tqdm.auto import tqdm

    # longest runs first (EssenceBench's search, then the IRT fits; larger k first), so the workers are not
    # left waiting on one long run at the end; runs are independent and seeded, the table keeps its order
    todo = sorted(plan.todo, key=_expected_cost, reverse=True)
    (out / "runs").mkdir(parents=True, exist_ok=True)
    meta_of = {(t.dataset, t.method, t.k, t.seed): t for t in todo}
    done = 0

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
        plan.rows[key] = _row(rec, meta)
        done += 1
        bar.update(1)

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


def _results_table(plan: _Plan):
    """The tidy table (:data:`COLUMNS`), one row per run in ``plan.order``, with fixed dtypes."""
    import pandas as pd

    df = pd.DataFrame([plan.rows[key] for key in plan.order], columns=COLUMNS)
    df = df.astype({"k": "int64", "seed": "int64", "n_test": "int64", "pool_preselected": "bool"})
    for c in _METRICS + ("seconds",):
        df[c] = pd.to_numeric(df[c], errors="coerce").astype("float64")
    return df
