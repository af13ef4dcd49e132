"""The comparison table: every registered method on the seven shipped datasets, k in {25, 50, 100}, 3 seeds.

    .venv/bin/python benchmarks/comparison.py [--out build/sweep] [--jobs 2] [--methods ...] [--data ...]
                                              [--k 25 50 100] [--seeds 0 1 2] [--force] [--quiet]

Runs :func:`essence.sweep.run_sweep` into ``--out`` (default ``build/sweep``), reusing its cache: a rerun
computes only the runs that are missing or stale and rewrites the table from the cache, so it is cheap.
``--force`` recomputes everything. Prints mean ± sd over seeds of test RMSE (pp) and Kendall tau for
every dataset x method x k, the failures with their errors (a method that is registered but not
importable yet shows up as failed runs: nothing is skipped silently), the metabench pool caveat, and the
total wall time. This is a benchmark script, not a test: nothing here is timed against a threshold.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from essence.data import DATASETS, POOL_CAVEAT  # noqa: E402
from essence.methods import COMPARED  # noqa: E402
from essence.sweep import format_summary, format_wide, ratio_table, run_sweep, summarise  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=str(ROOT / "build" / "sweep"), help="sweep folder (cache + table)")
    p.add_argument("--jobs", type=int, default=2, help="worker processes (default 2, -1 = all cores)")
    p.add_argument("--methods", nargs="+", default=list(COMPARED), help="default: every method but auto (essence.methods.COMPARED)")
    p.add_argument("--data", nargs="+", default=list(DATASETS), help="default: the seven shipped datasets")
    p.add_argument("--k", nargs="+", type=int, default=[25, 50, 100])
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    p.add_argument("--force", action="store_true", help="recompute every run (default: reuse the cache)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--wide", nargs="*", type=int, default=[50], metavar="K",
                   help="also print dataset x method tables of RMSE and Kendall tau at these k (default 50)")
    args = p.parse_args(argv)

    t0 = time.perf_counter()
    df = run_sweep(args.data, args.methods, args.k, args.seeds, args.out, jobs=args.jobs, force=args.force,
                   update=True, progress=not args.quiet)
    wall = time.perf_counter() - t0
    info = df.attrs["sweep"]

    s = summarise(df)
    order_m = {m: i for i, m in enumerate(args.methods)}
    order_d = {d: i for i, d in enumerate(s["dataset"].drop_duplicates())}
    s = s.sort_values(["dataset", "k", "method"], key=lambda c: c.map(order_d) if c.name == "dataset"
                      else (c.map(order_m) if c.name == "method" else c), kind="stable")

    print(f"# Comparison sweep: {len(args.data)} datasets x {len(args.methods)} methods x k {args.k} x seeds {args.seeds}")
    print("Test models only; RMSE in percentage points; mean ± sample sd over seeds; identical splits for every "
          "method of a dataset x seed.\n")
    print(format_summary(s))
    for k in args.wide:
        if k in set(s["k"]):
            for metric, label in (("rmse", "test RMSE, pp"), ("kendall", "test Kendall tau")):
                print(f"\n## k = {k}: {label} (mean ± sd over seeds)\n")
                print(format_wide(s, k, metric, methods=[m for m in args.methods if m in set(s["method"])]))
            if "random" in set(s["method"]):
                print(f"\n## k = {k}: test RMSE / random's (essence.data.metrics.ratio_to_random: geometric mean of "
                      "per-seed ratios; < 1 = better than random)\n")
                ratios = ratio_table(df, k, methods=[m for m in args.methods if m in set(s["method"])])
                print(ratios.to_markdown(floatfmt=".2f"))
    failed = df[df["error"] != ""]
    if len(failed):
        print(f"\n## Failed runs: {len(failed)} of {len(df)}")
        for (m, err), g in failed.groupby(["method", "error"], sort=False):
            print(f"- {m}: {len(g)} run(s): {err[:200]}")
    if s["pool_preselected"].any() and POOL_CAVEAT not in format_summary(s):  # pragma: no cover - belt and braces
        print(f"\n* {POOL_CAVEAT}")
    print(f"\n{info['runs']} runs: {info['computed']} computed, {info['cached']} from cache, {info['failed']} failed. "
          f"Total wall time {wall:.1f} s (jobs={args.jobs}). Table: {Path(args.out) / 'results.parquet'} (and .csv)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
