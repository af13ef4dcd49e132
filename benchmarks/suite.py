"""A suite compressed jointly against its members compressed separately, on the same held-out models.

For each seed the ~1,807 models present in all five metabench pools are split once (20% test, 10%
validation, stratified on the suite mean). The suite approach chooses ``--k`` (250) items across the
five with the joint EssenceBench and reconstructs every benchmark from all of them
(:func:`essence.suite.compress_suite`); the separate approach is the five default artifacts
(``essence compress NAME --k 50``, method ``auto``) on the same split, whose suite mean is the mean of
their five estimates. Both are scored on the test models only. Printed: the per-benchmark table, the mean
table (mean of the per-benchmark RMSE, and the RMSE of the suite mean) and the done-when check of issue 16
(mean per-benchmark RMSE <= 0.85 x separate; suite mean RMSE <= 0.9 pp).

``--holdout`` checks on models outside the data the artifacts were built from: 20% of the shared models
are held out of everything (split, selection, reconstructors), both approaches are built on the rest,
and both are scored on the held-out models. ``--method random`` (or another suite method) runs the same
comparison with that selector.

The metabench pools are pre-selected informative items; every figure is optimistic relative to
compressing whole benchmarks. Runs are cached as JSON under ``build/suite/`` (delete it to recompute).

    .venv/bin/python benchmarks/suite.py                      # seeds 0 1 2
    .venv/bin/python benchmarks/suite.py --seeds 0 --holdout
    .venv/bin/python benchmarks/suite.py --seeds 0 --weightings   # which weighting, and why
    .venv/bin/python benchmarks/suite.py --seeds 0 1 --search-curve   # does more search lower the held-out error?
    .venv/bin/python benchmarks/suite.py --seeds 0 1 2 --param rounds=1   # one round of refinement across the suite
    .venv/bin/python benchmarks/suite.py --seeds 0 --plain --average 1   # one reconstructor kind per benchmark
    .venv/bin/python benchmarks/suite.py --seeds 0 --no-own              # no MLP on each member's own items
    .venv/bin/python benchmarks/suite.py --seeds 0 --param init=members  # a joint GA setting (JOINT_DEFAULTS)
    .venv/bin/python benchmarks/suite.py --param own_weight=0            # the fitness without the own-items ridges
    .venv/bin/python benchmarks/suite.py --param suite_mean=cv           # the suite mean's own reconstructor, by CV
    .venv/bin/python benchmarks/suite.py --outside        # would training on the models outside the suite help?
    .venv/bin/python benchmarks/suite.py --seeds 0 1 2 3 4 --kinds   # each reconstructor kind's CV figures and cost
    .venv/bin/python benchmarks/suite.py --seeds 0 1 2 3 4 --separate-pool   # separate artifacts on whole pools too

The suite's reconstruction (``--average``, ``--plain``, ``--no-own``) and its settings are part of each run's cache key.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from essence.data import POOL_CAVEAT  # noqa: E402
from essence.suite import load_suite  # noqa: E402
from essence.suite.study import figure_rows, leave_out_models, run_pair  # noqa: E402

NAMES = ("arc", "gsm8k", "mmlu", "truthfulqa", "winogrande")


def tables(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(per_benchmark, mean)`` tables from :func:`figure_rows` rows over seeds (mean +- sd of RMSE, pp)."""
    piv = df.pivot_table(index=["seed", "benchmark"], columns="approach", values="rmse").reset_index()
    per = piv[piv.benchmark != "mean"]
    rows = []
    for name, g in per.groupby("benchmark", sort=False):
        rows.append({"benchmark": name, "separate k=50 each": f"{g.separate.mean():.2f} ± {g.separate.std(ddof=0):.2f}",
                     "suite k=250": f"{g.suite.mean():.2f} ± {g.suite.std(ddof=0):.2f}",
                     "ratio": f"{(g.suite / g.separate).mean():.2f}"})
    t1 = pd.DataFrame(rows).set_index("benchmark").loc[[n for n in NAMES if n in set(per.benchmark)]]
    avg = per.groupby("seed")[["separate", "suite"]].mean()
    mean = piv[piv.benchmark == "mean"].set_index("seed")
    t2 = pd.DataFrame({
        "figure": ["mean of the per-benchmark RMSE", "RMSE of the suite mean"],
        "separate": [f"{avg.separate.mean():.3f} ± {avg.separate.std(ddof=0):.3f}",
                     f"{mean.separate.mean():.3f} ± {mean.separate.std(ddof=0):.3f}"],
        "suite": [f"{avg.suite.mean():.3f} ± {avg.suite.std(ddof=0):.3f}",
                  f"{mean.suite.mean():.3f} ± {mean.suite.std(ddof=0):.3f}"],
        "ratio": [f"{(avg.suite / avg.separate).mean():.3f}", f"{(mean.suite / mean.separate).mean():.3f}"],
    }).set_index("figure")
    return t1, t2


def pool_table(piv: pd.DataFrame) -> pd.DataFrame:
    """Rows: each benchmark, the mean of the per-benchmark RMSE and the suite mean; columns: mean over seeds of
    the separate artifacts on the shared models and on the whole pools, the suite, and the suite's ratio to each
    (per seed, then averaged). ``piv``: seed x benchmark rows, one RMSE column per approach."""
    per = piv[piv.benchmark != "mean"]
    rows = {}
    for name, g in per.groupby("benchmark", sort=False):
        rows[name] = g
    rows["mean of the per-benchmark RMSE"] = per.groupby("seed")[["separate", "separate_pool", "suite"]].mean()
    rows["RMSE of the suite mean"] = piv[piv.benchmark == "mean"]
    out = {name: {"separate, shared models": g.separate.mean(), "separate, whole pool": g.separate_pool.mean(),
                  "suite": g.suite.mean(), "ratio to shared": (g.suite / g.separate).mean(),
                  "ratio to pool": (g.suite / g.separate_pool).mean()} for name, g in rows.items()}
    return pd.DataFrame(out).T.round(3)


def kinds_table(choices: list) -> pd.DataFrame:
    """Rows: every single reconstructor kind a suite run weighed; columns: its CV RMSE (pp) per benchmark and
    CV seconds (both means over runs), and how many of the benchmark x run choices it is part of. ``choices``:
    one ``{benchmark: {"kind", "cv_rmse", "seconds"}}`` per run (a suite run's ``choice`` record)."""
    rows = {}
    n_choices = 0
    for ch in choices:
        for name, c in ch.items():
            if name == "mean":
                continue
            n_choices += 1
            parts = set(c["kind"].split("+"))
            for kind, v in c["cv_rmse"].items():
                if "+" in kind or not isinstance(v, float):
                    continue
                r = rows.setdefault(kind, {"cv": {}, "sec": [], "chosen": 0})
                r["cv"].setdefault(name, []).append(v)
                r["sec"].append(c.get("seconds", {}).get(kind, np.nan))
                r["chosen"] += kind in parts
    out = []
    for kind, r in rows.items():
        out.append({"kind": kind, **{n: round(float(np.mean(v)), 3) for n, v in r["cv"].items()},
                    "CV s": round(float(np.nanmean(r["sec"])), 1), "chosen": f"{r['chosen']} of {n_choices}"})
    return pd.DataFrame(out).set_index("kind")


def error_shares(runs: list) -> tuple[pd.Series, float, float]:
    """How the suite mean's squared error splits over the benchmarks: for each run (a suite run's record with
    ``truth`` and ``estimate`` per benchmark), the covariance matrix ``C`` of the benchmarks' test errors; a
    benchmark's share is its row sum of ``C`` over the sum of ``C`` (the shares add to 1). Returns the shares
    (mean over runs), and the smallest and largest correlation between two benchmarks' errors over all runs."""
    shares, corrs = [], []
    for rec in runs:
        names = [n for n in rec["estimate"] if n != "mean"]
        E = np.array([np.asarray(rec["estimate"][n]) - np.asarray(rec["truth"][n]) for n in names])
        C = np.cov(E)
        shares.append(pd.Series(C.sum(axis=1) / C.sum(), index=names))
        R = np.corrcoef(E)
        corrs.extend(R[np.triu_indices(len(names), 1)].tolist())
    return pd.concat(shares, axis=1).mean(axis=1), float(min(corrs)), float(max(corrs))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--k", type=int, default=250)
    ap.add_argument("--k-each", type=int, default=50)
    ap.add_argument("--method", default="essence", help="the suite's selector (default: joint EssenceBench)")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help="a suite method setting")
    ap.add_argument("--average", type=int, default=3,
                    help="the suite's reconstructors: average of up to this many kinds chosen by CV (1: one kind)")
    ap.add_argument("--plain", action="store_true",
                    help="the suite's reconstructors among ridge, ridge + GAM and mean_ridge only (no latent, no MLP)")
    ap.add_argument("--no-own", action="store_true",
                    help="the suite's reconstructors without the MLP on each member's own chosen items")
    ap.add_argument("--per-benchmark", type=int, default=0, help="the suite's floor of items per benchmark")
    ap.add_argument("--holdout", action="store_true", help="score on 20%% of the models held out of everything")
    ap.add_argument("--weightings", action="store_true",
                    help="instead: the joint fitness's weightings and fitness models (GA 100 generations, ridge "
                         "reconstruction), on the first seed's test models")
    ap.add_argument("--search-curve", action="store_true",
                    help="instead: the joint GA's best candidate after 0-300 generations, its fitness and its test "
                         "RMSE with a ridge per benchmark, per seed")
    ap.add_argument("--outside", action="store_true",
                    help="instead: a ridge on k-each random items of each benchmark fitted on the suite's training "
                         "models against every model of the benchmark's pool except the test models, per seed")
    ap.add_argument("--separate-pool", action="store_true",
                    help="also: the separate artifacts trained on each benchmark's whole pool (the shared models' "
                         "training and validation parts plus the models the suite dropped from it)")
    ap.add_argument("--kinds", action="store_true",
                    help="also: each reconstructor kind's 5-fold CV RMSE and CV seconds per benchmark, and how often "
                         "it is part of the chosen reconstructor (from the suite runs of --seeds)")
    ap.add_argument("--cache", default="build/suite")
    ap.add_argument("--progress", action="store_true")
    args = ap.parse_args(argv)
    from essence.data.checks import parse_params

    params = parse_params(args.param)
    given = set(params)
    # the own-items share and the number of searches are in every run's cache key, so a changed default recomputes
    # (under fitness_models=loo the search drops the share unless it is given: not set here, so that setting runs)
    if args.method == "essence":
        from essence.suite.select import JOINT_DEFAULTS

        params.setdefault("searches", JOINT_DEFAULTS["searches"])
        if params.get("fitness_models") != "loo":
            params.setdefault("own_weight", JOINT_DEFAULTS["own_weight"])
    params.update(stronger=not args.plain, average=args.average, own=not args.no_own)
    if args.per_benchmark:
        params["per_benchmark"] = args.per_benchmark
    suite = load_suite(NAMES)
    print(f"suite: {suite.n_models} models in all five; dropped per benchmark: "
          + ", ".join(f"{n} {c}" for n, c in suite.dropped.items()))
    if args.weightings:
        from essence.suite.study import weighting_study

        t = weighting_study(suite, seed=args.seeds[0], k=args.k)
        print(f"Joint fitness settings, seed {args.seeds[0]}: test RMSE (pp), ridge on the chosen items; avg = mean of "
              f"the five; mean = the suite mean's RMSE; budget = items per benchmark")
        print(t.round(3).to_markdown())
        print(f"note: {POOL_CAVEAT}")
        return 0
    if args.outside:
        from essence.data import load
        from essence.suite.study import outside_models

        t = outside_models(suite, [load(n) for n in NAMES], seeds=args.seeds, k_each=args.k_each)
        print(f"Models outside the suite: test RMSE (pp) of a ridge on {args.k_each} random items of each benchmark, "
              f"fitted on the suite's training models (suite) or on every model of its pool but the test models "
              f"(pool); n_* = training models; seeds {args.seeds}")
        print(t.round(3).to_markdown(index=False))
        g = t.groupby("benchmark", sort=False)[["suite", "pool"]].mean()
        print("\nMean over seeds")
        print(g.assign(change=g["pool"] / g["suite"] - 1).round(3).to_markdown())
        print(f"note: {POOL_CAVEAT}")
        return 0
    if args.search_curve:
        from essence.suite.study import search_curve

        # one search per curve unless --param searches=N is given (search_curve's default)
        joint = {k_: v for k_, v in params.items() if k_ not in ("stronger", "average", "own", "per_benchmark")
                 and (k_ != "searches" or k_ in given)}
        for seed in args.seeds:
            t = search_curve(suite, seed=seed, k=args.k, **joint)
            print(f"\nSeed {seed}: the joint GA's best candidate after G generations; fitness = the combined relative "
                  f"error it minimises; train mean RMSE = the suite mean's in-sample fitness RMSE (pp); avg / mean = "
                  f"test RMSE (pp) of a ridge per benchmark on the chosen items (mean of the five / the suite mean)")
            print(t.round(3).to_markdown())
        print(f"note: {POOL_CAVEAT}")
        return 0
    frames, budgets, suite_runs = [], [], []
    if args.separate_pool:
        params["approaches"] = ("suite", "separate", "separate_pool")
    for seed in args.seeds:
        if args.holdout:
            kept, out = leave_out_models(suite, 0.2, seed)
            res = run_pair(kept, seed=seed, k=args.k, k_each=args.k_each, method=args.method, test=0.1, val=0.1,
                           cache=Path(args.cache), progress=args.progress, evaluate_on=out, tag="holdout-", **params)
        else:
            res = run_pair(suite, seed=seed, k=args.k, k_each=args.k_each, method=args.method,
                           cache=Path(args.cache), progress=args.progress, **params)
        frames.append(figure_rows(res, seed))
        suite_runs.append(res["suite"])
        budgets.append({"seed": seed, **res["suite"]["budget"]})
        print(f"seed {seed}: {len(res['suite']['models'])} evaluation models; suite budget "
              + ", ".join(f"{n} {c}" for n, c in res["suite"]["budget"].items()), flush=True)
    df = pd.concat(frames, ignore_index=True)
    if args.kinds:
        print("\nEach kind on the suite's chosen items (train + validation models; mean over seeds): 5-fold CV RMSE "
              "(pp) per benchmark, CV seconds per benchmark (one thread), and in how many of the benchmark x seed "
              "choices it is a part of the chosen reconstructor")
        print(kinds_table([r.get("choice", {}) for r in suite_runs]).to_markdown())
    t1, t2 = tables(df)
    shares, lo, hi = error_shares(suite_runs)
    print("\nThe suite mean's squared error by benchmark (share of the covariance of the suite's test errors, mean "
          "over seeds): " + ", ".join(f"{n} {v:.2f}" for n, v in shares.items())
          + f"; correlation between two benchmarks' errors {lo:.2f} to {hi:.2f}")
    where = "models held out of everything" if args.holdout else "held-out test models (20%)"
    print(f"\nPer benchmark: RMSE (pp) on {where}, mean ± sd over seeds {args.seeds}; "
          f"suite = {args.method} k={args.k} across the five, separate = five default artifacts at k={args.k_each}")
    print(t1.to_markdown())
    print("\nMean")
    print(t2.to_markdown())
    piv = df.pivot_table(index=["seed", "benchmark"], columns="approach", values="rmse").reset_index()
    if args.separate_pool:
        print("\nSeparate artifacts trained on the shared models (as above) or on each benchmark's whole pool (its "
              "models outside the suite join the training models); RMSE (pp), mean over seeds; ratio = suite / that")
        print(pool_table(piv).to_markdown())
    per = piv[piv.benchmark != "mean"].groupby("seed")[["separate", "suite"]].mean()
    ratio = float((per.suite / per.separate).mean())
    mean_rmse = float(piv[piv.benchmark == "mean"].suite.mean())
    print(f"\ndone-when: mean per-benchmark RMSE ratio {ratio:.3f} (target <= 0.85: "
          f"{'met' if ratio <= 0.85 else 'NOT met'}); suite mean RMSE {mean_rmse:.3f} pp (target <= 0.9: "
          f"{'met' if mean_rmse <= 0.9 else 'NOT met'})")
    print(f"note: {POOL_CAVEAT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
