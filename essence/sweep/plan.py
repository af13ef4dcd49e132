"""Planning and running a sweep (check, load and split once per seed, sign every run, reuse the cached ones, compute
the rest, write the table), and its command line ``essence sweep``."""

from __future__ import annotations

import inspect
import itertools
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from .. import data as _data
from ..artifact.compressed import compress
from ..data._io import jsonable, write_atomic
from ..data.checks import cli_whole_number, parse_params, whole_number
from ..data.errors import InputError, UsageError
from ..methods import METHODS, get_method, make_method
from ..suite import SUITE_METHODS
from .records import (COLUMNS, _METRICS, _error_rows, _key_name, _read_record, _rows, _split_id, _stale_reason,
                      _write_table, run_path)
from .signatures import _core_hash, _source_hash
from .suites import SUITE_SWEEP_SETTINGS, load_suite_entry, n_items, suite_members, suite_params, suite_settings
from .tables import format_summary, summarise
from .worker import _expected_cost, _one_line, _run_dask, _run_local, _Task

__all__ = ["run_sweep", "SWEEP_SETTINGS", "SUITE_SWEEP_SETTINGS", "add_subcommand"]

#: ``compress`` parameters whose defaults shape every run's figures (recorded in the signature).
_SETTINGS = ("level", "min_answered")
#: ``compress`` settings the sweep fixes (recorded in the signature too): selectors are compared at equal,
#: basic reconstructors (suite runs: SUITE_SWEEP_SETTINGS)
SWEEP_SETTINGS = {"predictors": "basic"}


def _as_list(x, what: str) -> list:
    if x is None:
        raise InputError(f"{what}: nothing given; name at least one")
    out = list(dict.fromkeys([x] if isinstance(x, (str, int, np.integer)) else x))
    if not out:
        raise InputError(f"{what}: empty list; name at least one")
    return out


@dataclass
class _Plan:
    """Every run of a sweep, in table order: finished rows (cached or error rows) and the runs to compute."""

    order: list = field(default_factory=list)  # (dataset, method, k, seed) in table order
    rows: dict = field(default_factory=dict)  # key -> table rows (one; a suite's: per member + mean)
    todo: list = field(default_factory=list)  # _Task per run to compute
    stale: list = field(default_factory=list)  # "file (reason)" of cached runs that will be recomputed
    n_cached: int = 0
    core_changed: int = 0  # cached runs computed with other core code (reused, with a note)


def run_sweep(datasets, methods, ks, seeds=(0, 1, 2), out="build/sweep", jobs: int = 2, force: bool = False,
              progress: bool = True, backend: str = "local", scheduler=None, method_params: dict | None = None,
              update: bool = False, keep_artifacts: bool = True, splits=("random",), test: float | None = None):
    """Run every dataset x method x k x seed (reusing cached runs) and return the table (:data:`COLUMNS`, test
    figures), also written to ``out/results.parquet`` and ``.csv``; ``df.attrs["sweep"]``: ``runs``, ``computed``,
    ``cached``, ``failed``, ``wall_seconds``. ``datasets``: names or paths (``a+b``: a suite); ``methods``: registry
    names (one that does not import or run on a suite, or a k above a dataset's items, gives error rows); ``jobs``:
    loky workers (-1 all cores, 1 in process); ``force``: recompute all, ``update``: missing or stale runs (either
    replaces a table); ``backend="dask"``: submit to ``scheduler`` (address or Client); ``method_params``:
    ``{method: {name: value}}``; ``keep_artifacts``: artifacts in the cache files; ``splits``: kinds of
    :data:`~essence.data.SPLIT_KINDS` (``random``, ``top``, ``bottom``, ``far``, ``chance``; any but random keyed
    ``NAME@kind``); ``test``: the test fraction (None: each kind's default, 0.1 random, 0.2 the others).
    UsageError / InputError before anything is written;
    after a KeyboardInterrupt the same call resumes."""
    t_start = time.perf_counter()
    datasets, methods, ks, seeds, method_params = _check_arguments(datasets, methods, ks, seeds, jobs, backend,
                                                                   scheduler, method_params)
    out = Path(out)
    table_parquet, table_csv = _check_out(out, force, update)
    splits = [str(k) for k in _as_list(splits, "splits")]
    bad = [k for k in splits if k not in _data.SPLIT_KINDS]
    if bad:
        raise UsageError(f"splits: {bad[0]!r} is not one of {', '.join(_data.SPLIT_KINDS)}")
    loaded, splits = _load_and_split(datasets, seeds, splits, test)
    kinds = {"suite" if members else "single" for _, _, members in loaded.values()}
    settings, unavailable, method_code = _method_signatures(methods, ks, seeds, method_params, kinds)
    plan = _plan_runs(loaded, splits, methods, ks, seeds, method_params, settings, unavailable, method_code, out,
                      force, backend, jobs, keep_artifacts)
    _print_notes(plan, loaded, unavailable)
    _compute(plan, out, backend, scheduler, jobs, progress)
    df = _results_table(plan)
    _write_table(df, table_parquet, table_csv)
    failed = sum(bool(plan.rows[key][0]["error"]) for key in plan.order)  # runs (a suite run has several rows)
    df.attrs["sweep"] = {"runs": len(plan.order), "computed": len(plan.todo), "cached": plan.n_cached,
                         "failed": failed, "wall_seconds": time.perf_counter() - t_start, "out": str(out)}
    return df


def _check_arguments(datasets, methods, ks, seeds, jobs, backend, scheduler, method_params):
    """The sweep's arguments as plain lists; UsageError / InputError before anything is loaded."""
    datasets = [str(d) for d in _as_list(datasets, "datasets")]
    methods = [str(m) for m in _as_list(methods, "methods")]
    ks = [whole_number("k", v, 1) for v in _as_list(ks, "k")]
    seeds = [whole_number("seeds", v, 0) for v in _as_list(seeds, "seeds")]
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
        raise UsageError(f"{existing[0]}: a finished table already exists; pass --force to recompute every run and "
                         "replace it, --update to recompute only missing or stale runs, or choose another --out")
    return table_parquet, table_csv


def _load_and_split(datasets, seeds, kinds=("random",), test: float | None = None):
    """``({name: (Responses or Suite, source, members)}, {(name, seed): ((train, val, test), split_id)})``, each
    split once (a suite's: of its mean score, as ``compress_suite`` makes it), one of kind ``top`` keyed ``NAME@top``
    (the same for every kind but random)."""
    loaded = {}
    for src in datasets:
        members = suite_members(src)
        if members:
            d, source = load_suite_entry(src, members)
            name, members = "+".join(d.names), tuple(d.names)
        else:
            d = _data.load(src)
            name, source, members = d.name, (src if src in _data.DATASETS else str(Path(src).resolve())), ()
        if name in loaded:
            raise UsageError(f"datasets: two datasets are named {name!r}; rename one of the files")
        for kind in kinds:
            loaded[name if kind == "random" else f"{name}@{kind}"] = (d, source, members)
    splits = {}
    for name, (d, _, members) in loaded.items():
        kind = name.rpartition("@")[2] if "@" in name else "random"
        for s in seeds:
            sp = _data.split_models(d.mean_target if members else d, test=test, seed=s, kind=kind)
            splits[name, s] = (tuple(np.asarray(a, dtype=np.intp) for a in sp), _split_id(sp))
    return loaded, splits


def _method_signatures(methods, ks, seeds, method_params, kinds=("single",)):
    """``(settings, unavailable, method_code)``: the ``compress`` settings of every signature (``"suite"``: a
    suite's), the methods that do not import (name -> error) and source hashes (``"essence.suite"``: the suite
    code's). UsageError for a parameter outside its domain."""
    defaults = inspect.signature(compress).parameters
    settings = {**{n: defaults[n].default for n in _SETTINGS if n in defaults}, **SWEEP_SETTINGS}
    unavailable: dict[str, str] = {}
    method_code: dict[str, str | None] = {}
    if "suite" in kinds:
        settings["suite"] = suite_settings()
        method_code["essence.suite"] = _source_hash("essence.suite")
    for m in methods:
        try:
            cls = get_method(m)
        except Exception as exc:  # noqa: BLE001 - a method that does not import is a row with the error
            unavailable[m] = _one_line(exc)
            continue
        method_code[m] = _source_hash(cls.__module__)
        try:  # unknown parameters are the user's error: stop before running anything
            if "single" in kinds:
                make_method(m, k=ks[0], seed=seeds[0], progress=False, **method_params.get(m, {}))
            if "suite" in kinds and m in SUITE_METHODS:
                suite_params(m, ks[0], seeds[0], method_params.get(m, {}))
        except InputError as exc:
            raise UsageError(" ".join(str(exc).split())) from None
        except Exception as exc:  # noqa: BLE001
            unavailable[m] = _one_line(exc)
    return settings, unavailable, method_code


def _plan_runs(loaded, splits, methods, ks, seeds, method_params, settings, unavailable, method_code, out, force,
               backend, jobs, keep_artifacts) -> _Plan:
    """Decide run by run: cached rows, error rows without running, or a task to compute."""
    plan = _Plan()
    core_now = _core_hash()
    for name, (d, source, members) in loaded.items():
        fp = d.fingerprint()
        for m, k, s in itertools.product(methods, ks, seeds):
            key = (name, m, k, s)
            plan.order.append(key)
            split, sid = splits[name, s]
            meta = {"split_id": sid, "n_test": len(split[2])}
            signature, error = _signature(d, fp, members, m, k, s, sid, method_params, settings, unavailable, method_code)
            if error:
                plan.rows[key] = _error_rows(key, meta, error, members)
                continue
            path = run_path(out, name, m, k, s)
            if not force and path.exists():
                rec = _read_record(path)
                if rec is not None and not rec.get("error") and rec.get("signature") == signature:
                    plan.rows[key] = _rows(rec, meta)
                    plan.n_cached += 1
                    plan.core_changed += rec.get("core_source") != core_now
                    continue
                plan.stale.append(f"{path.name} ({'unreadable' if rec is None else _stale_reason(rec, signature)})")
            plan.todo.append(_Task(name, source, fp, m, k, s, dict(method_params.get(m, {})), split, signature,
                                   limit_threads=(backend == "dask" or jobs != 1), keep_artifact=keep_artifacts,
                                   quiet_worker=(backend == "local" and jobs != 1), members=members))
    return plan


def _signature(d, fp, members, m, k, s, sid, method_params, settings, unavailable, method_code):
    """``(signature, "")`` of one run, or ``(None, error)`` when it cannot run; a suite run's signature adds
    ``members`` (name -> fingerprint) and ``suite_source``."""
    size = n_items(d)
    if k > size:
        what = f"the {size} items of {'the suite ' if members else ''}{'+'.join(members) or d.name}"
        return None, f"k={k} is larger than {what}; choose k <= {size}"
    if m in unavailable:
        return None, f"method unavailable: {unavailable[m]}"
    if members:
        try:
            params = jsonable(suite_params(m, k, s, method_params.get(m, {})))
        except InputError as exc:
            return None, " ".join(str(exc).split())
        sig = {"fingerprint": fp, "members": {n: x.fingerprint() for n, x in zip(members, d.members)},
               "split_id": sid, "params": params, "settings": {**settings["suite"]},
               "method_source": method_code.get(m), "suite_source": method_code.get("essence.suite")}
    else:
        params = jsonable(make_method(m, k=k, seed=s, progress=False, **method_params.get(m, {})).params_dict())
        sig = {"fingerprint": fp, "split_id": sid, "params": params,
               "settings": {n: v for n, v in settings.items() if n != "suite"}, "method_source": method_code.get(m)}
    return json.loads(json.dumps(sig)), ""


def _print_notes(plan: _Plan, loaded, unavailable) -> None:
    """Notes on stderr: k too large, unavailable methods, stale or old cached runs."""
    errors = [(key, r[0]["error"]) for key, r in plan.rows.items()]
    notes = [f"k={k} exceeds the {n_items(loaded[name][0])} items of {name}: its runs are error rows"
             for name, k in sorted({(key[0], key[2]) for key, e in errors if e.startswith("k=")})]
    notes += [f"method {m!r} does not run on a suite: its runs on {name} are error rows"
              for m, name in sorted({(key[1], key[0]) for key, e in errors if "does not run on a suite" in e})]
    notes += [f"method {m!r} is unavailable ({why}): its runs are error rows" for m, why in unavailable.items()]
    if plan.stale:
        shown = "; ".join(plan.stale[:3]) + (f"; and {len(plan.stale) - 3} more" if len(plan.stale) > 3 else "")
        notes.append(f"{len(plan.stale)} cached run(s) are stale and will be recomputed: {shown}")
    if plan.core_changed:
        notes.append(f"{plan.core_changed} cached run(s) were computed with another version of the shared core (the "
                     "artifact, reconstructors, metrics); they are reused (pass --force to recompute them)")
    for line in notes:
        print(f"note: {line}", file=sys.stderr)


def _compute(plan: _Plan, out: Path, backend, scheduler, jobs, progress: bool) -> None:
    """Run ``plan.todo`` on the backend; cache each finished run, keep each failure's traceback, fill rows."""
    # longest runs first, so the workers are not left waiting on one long run at the end
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
            write_atomic(err_path, rec.get("traceback", rec["error"]), overwrite=True)
            bar.write(f"failed: {_key_name(*key)}: {rec['error'][:300]}", file=sys.stderr)
        else:
            write_atomic(run_path(out, *key), json.dumps(jsonable(rec), allow_nan=False), overwrite=True)
            err_path.unlink(missing_ok=True)
        plan.rows[key] = _rows(rec, {"split_id": task.signature["split_id"], "n_test": len(task.split[2])})
        done += 1
        bar.update(1)

    with tqdm(total=len(todo), desc="sweep", unit="run", disable=not progress or not todo) as bar:
        try:
            if todo and backend == "dask":
                _run_dask(todo, scheduler, lambda rec: handle(rec, bar))
            elif todo:
                _run_local(todo, jobs, lambda rec: handle(rec, bar))
        except KeyboardInterrupt:
            print(f"\nnote: interrupted after {done} of {len(todo)} run(s); finished runs are cached in "
                  f"{out / 'runs'}; run the same sweep again to resume (no table was written)", file=sys.stderr)
            raise


def _results_table(plan: _Plan):
    """The tidy table (:data:`COLUMNS`), one row per run in ``plan.order``, with fixed dtypes."""
    df = pd.DataFrame([row for key in plan.order for row in plan.rows[key]], columns=COLUMNS)
    df = df.astype({"k": "int64", "seed": "int64", "n_test": "int64", "pool_preselected": "bool"})
    for c in _METRICS + ("seconds",):
        df[c] = pd.to_numeric(df[c], errors="coerce").astype("float64")
    return df


def add_subcommand(subparsers) -> None:
    """Register ``essence sweep`` on the CLI's subparsers."""
    p = subparsers.add_parser(
        "sweep", help="run every method x dataset x k x seed on identical splits (parallel, cached, resumable)",
        description="Run every method x dataset x k x seed on identical model splits and write one table "
                    "(OUT/results.parquet and .csv). Finished runs are cached in OUT/runs, so a sweep resumes; a "
                    "failed run is a row with its error. A DATA entry joining benchmarks with + is a suite: a row "
                    "per member and one for the mean (column benchmark). Reconstructors are the basic kinds.")
    p.add_argument("--data", nargs="+", required=True, metavar="DATA",
                   help="dataset names (arc, gsm8k, ...) or paths; join two or more with + for a suite "
                        "(arc+gsm8k+mmlu); suites and single datasets may be mixed")
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
                   help="a method parameter, e.g. essence.generations=200 (repeatable; on a suite, essence "
                        "takes the joint EssenceBench's settings: population, generations, weighting, ...)")
    p.add_argument("--splits", nargs="+", choices=_data.SPLIT_KINDS, default=["random"],
                   help="how the test models are chosen: random (stratified, the default), top / bottom (the "
                        "strongest / weakest --test fraction: a new model better / worse than every reference), far "
                        "(the strongest, references only the weakest 60 %%), chance (the strongest, references only "
                        "near the floor); several: each")
    p.add_argument("--test", type=float, default=None,
                   help="fraction of the models held out as test models (default 0.1 for random, 0.2 for the others)")
    p.add_argument("--no-artifacts", action="store_true", help="do not keep each run's artifact in its cache file")
    p.set_defaults(func=_cmd_sweep)


def _cmd_sweep(args) -> int:
    if args.scheduler and args.backend != "dask":
        raise UsageError("--scheduler is only used with --backend dask; add --backend dask")
    params = parse_params(args.param, qualified=True,
                          reserved={"k": "--k", "seed": "--seeds", "method": "--methods", "progress": "--quiet"})
    df = run_sweep(args.data, args.methods, args.k, args.seeds, args.out, jobs=args.jobs, force=args.force,
                   progress=not args.quiet, backend=args.backend, scheduler=args.scheduler,
                   method_params=params, update=args.update, keep_artifacts=not args.no_artifacts,
                   splits=args.splits, test=args.test)
    info = df.attrs["sweep"]
    if not args.quiet:
        print(format_summary(summarise(df)))
    print(f"{info['runs']} run(s): {info['computed']} computed, {info['cached']} from cache, {info['failed']} failed; "
          f"{info['wall_seconds']:.1f} s -> {Path(args.out) / 'results.parquet'} (and .csv)")
    return 0
