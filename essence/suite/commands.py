"""The suite side of ``essence compress / evaluate / estimate`` (called by :mod:`essence.cli` when a
command names several benchmarks or a suite artifact)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..data._io import check_output
from ..data.checks import parse_params
from ..data.errors import UsageError

__all__ = ["compress_command", "evaluate_command", "estimate_command"]


def _fmt(fig: dict) -> str:
    keys = ("rmse", "mae", "kendall", "spearman", "coverage")
    return " ".join(f"{k}={fig[k]:.3f}" for k in keys if fig.get(k) is not None)


def compress_command(args) -> int:
    from . import compress_suite, load_suite
    from .select import SUITE_METHODS

    method = "essence" if args.method == "auto" else args.method
    if method not in SUITE_METHODS:
        raise UsageError(f"--method {args.method}: does not run on a suite; choose one of: auto (= essence, the "
                         f"joint EssenceBench), {', '.join(SUITE_METHODS)}")
    keep = None
    if args.items_from:
        if len(args.items_from) != len(args.data):
            raise UsageError(f"--items-from: give it once per benchmark of the suite, in the same order as DATA "
                             f"({len(args.data)} here), got {len(args.items_from)}")
        from ..data import items_from

        keep = [lambda m, src=Path(f): items_from(src, m) for f in args.items_from]
    stems = "+".join(Path(str(d)).stem for d in args.data)
    out = Path(args.out) if args.out else Path(f"{stems}-{method}-k{args.k}-s{args.seed}.json")
    check_output(out, overwrite=args.force, flag="--out")
    params = parse_params(args.param)
    suite = load_suite(args.data, keep=keep)
    art = compress_suite(suite, args.k, method=method, seed=args.seed, per_benchmark=args.per_benchmark or 0,
                         progress=not args.quiet, **params)
    art.save(out, overwrite=args.force)
    dropped = ", ".join(f"{n} {c}" for n, c in suite.dropped.items())
    print(f"suite {' + '.join(suite.names)}: {suite.n_models} models in all (dropped per benchmark: {dropped})")
    print(f"{method} k={args.k} seed={args.seed} -> {out}")
    print("budget: " + ", ".join(f"{n} {c}" for n, c in art.selection["budget"].items()))
    for name in [*art.names, "mean"]:
        print(f"test {name:12s} {_fmt(art.figures.get('test', {}).get(name, {}))}")
    print("(errors in pp on held-out test models; coverage of the "
          f"{art.mean_interval.level:.0%} interval)")
    if suite.caveat:
        print(f"note: {suite.caveat}")
    return 0


def evaluate_command(args) -> int:
    from .artifact import SuiteCompressed

    art = SuiteCompressed.load(args.artifact)
    res = art.evaluate(args.data)
    keys = ("n_models", "rmse", "mae", "kendall", "spearman", "rank_err_5", "rank_err_10", "coverage")
    out = {"n_models": res["n_models"],
           "benchmarks": {n: {k: f.get(k) for k in keys} for n, f in res["benchmarks"].items()},
           "mean": {k: res["mean"].get(k) for k in keys}}
    if args.json:
        print(json.dumps(out))
    else:
        print(f"suite {' + '.join(art.names)}: {art.method} k={art.k}: {res['n_models']} models in all files")
        for name, fig in [*out["benchmarks"].items(), ("mean", out["mean"])]:
            print(f"{name:12s} {_fmt(fig)}")
        if art.dataset.get("caveat"):
            print(f"note: {art.dataset['caveat']}")
    return 0


def estimate_command(args) -> int:
    from ..data._io import write_atomic
    from .artifact import SuiteCompressed

    art = SuiteCompressed.load(args.artifact)
    df = art.estimate(args.responses)
    text = df.to_csv(index=False, float_format="%.4f")
    if args.out:
        check_output(Path(args.out), overwrite=args.force, flag="--out")
        write_atomic(Path(args.out), text, overwrite=args.force)
        print(f"{len(df)} model(s) -> {args.out}")
    else:
        sys.stdout.write(text)
    return 0
