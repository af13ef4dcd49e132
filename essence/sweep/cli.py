"""``essence sweep``: the command line of the sweep (registered by :func:`add_subcommand`)."""

from __future__ import annotations

from pathlib import Path

from ..data.checks import cli_whole_number, parse_params
from ..data.errors import UsageError
from .plan import run_sweep
from .tables import format_summary, summarise

__all__ = ["add_subcommand"]


def add_subcommand(subparsers) -> None:
    """Register ``essence sweep`` on the CLI's subparsers."""
    p = subparsers.add_parser(
        "sweep",
        help="run every method x dataset x k x seed on identical splits (parallel, cached, resumable)",
        description="Run every method x dataset x k x seed on identical model splits and write one tidy "
                    "table (OUT/results.parquet and OUT/results.csv). Finished runs are cached in OUT/runs, "
                    "so an interrupted sweep resumes; a failed run is a row with its error. A DATA entry that "
                    "joins benchmarks with + (arc+gsm8k+mmlu+truthfulqa+winogrande) is a suite: each method "
                    "chooses k items across its members (essence compress on several benchmarks) on the "
                    "suite's split of its shared models, and the table gets a row per member and one for the "
                    "suite mean (column benchmark). Methods that do not run on a suite (auto) give error rows. "
                    "Reconstructors are fixed for a fair comparison: the basic kinds (single runs: predictors "
                    "basic; suites: no latent / MLP kinds, no averages).",
    )
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
    p.add_argument("--splits", nargs="+", choices=("random", "top"), default=["random"],
                   help="how the test models are chosen: random (stratified, the default) and/or top (the strongest "
                        "--test fraction: a new model better than every reference)")
    p.add_argument("--test", type=float, default=0.1, help="fraction of the models held out as test models (default 0.1)")
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
