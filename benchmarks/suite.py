"""A suite compressed jointly against its members compressed separately, on the same held-out models.

For each seed and split the ~1,807 models present in all five metabench pools are split once (20% test, 10%
validation; ``random``: stratified on the suite mean; ``top``: the strongest 20% by suite mean are the test models).
The suite approach chooses ``--k`` (250) items across the five with the joint EssenceBench and reconstructs every
benchmark from all of them (:func:`essence.suite.compress_suite`, its defaults); the separate approach is the five
default artifacts (``essence compress NAME --k 50``, method ``auto``: equal total items) on the same split, whose
suite mean is the mean of their five estimates. Both are scored on the test models only.

Writes ``suite_runs.csv`` (one row per split x seed x approach x benchmark: test RMSE, MAE in pp, Kendall tau) and
``suite.csv`` (per split and benchmark, and for the mean of the per-benchmark RMSE and the RMSE of the suite mean:
mean and sd over seeds of each approach's RMSE, and the mean over seeds of the ratio suite / separate) under
``--results`` (not with ``--holdout`` or a study option).

``--holdout``: 20% of the shared models are held out of everything and both approaches are scored on them.
``--outside``, ``--weightings``, ``--search-curve``: the studies behind the suite's defaults (their help).

The metabench pools are pre-selected informative items; every figure is optimistic relative to compressing whole
benchmarks. Runs are cached as JSON under ``--cache`` (default ``build/suite``).

    .venv/bin/python benchmarks/suite.py --seeds 0 1 --splits random top     # results/suite*.csv
    .venv/bin/python benchmarks/suite.py --quick                             # a small slice; writes nothing
    .venv/bin/python benchmarks/suite.py --seeds 0 --holdout
    .venv/bin/python benchmarks/suite.py --seeds 0 --weightings              # which weighting, and why
    .venv/bin/python benchmarks/suite.py --seeds 0 1 --search-curve          # more search, lower error?
    .venv/bin/python benchmarks/suite.py --outside        # would training on the models outside the suite help?
    .venv/bin/python benchmarks/suite.py --seeds 0 --kinds                   # each candidate's CV figures
    .venv/bin/python benchmarks/suite.py --seeds 0 --separate-pool           # separate artifacts on whole pools too
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# not benchmarks/ itself: its selectors.py would shadow the standard library's in joblib's workers
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != ROOT / "benchmarks"]

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from essence.data import POOL_CAVEAT  # noqa: E402
from essence.data.metrics import summary  # noqa: E402
from essence.suite import Suite, load_suite  # noqa: E402
from essence.suite.study import suite_split  # noqa: E402

NAMES = ("arc", "gsm8k", "mmlu", "truthfulqa", "winogrande")
#: the quick slice: every 6th shared model, a short search (the tests regenerate it)
QUICK = {"every": 6, "k": 60, "k_each": 12, "params": {"generations": 5, "population": 20, "elites": 2}}


def with_outside(suite: Suite, b: int, split):
    """``(data, split)`` for member ``b`` trained on its whole pool: the shared models' training and validation
    parts of ``split`` plus the member's models outside the suite as more training models; no test models."""
    from essence.data import Responses, Split

    m = suite.members[b]
    out = suite.outside_of(b)
    keep = np.r_[split.train, split.val]
    parts = [m.subset(models=keep)] + ([out] if out is not None else [])
    data = Responses(np.vstack([p.responses for p in parts]), np.concatenate([p.models for p in parts]), m.items,
                     np.concatenate([p.target for p in parts]), m.texts, m.name, m.item_extras, {}, m.target_source)
    nt, nv = split.train.size, split.val.size
    extra = data.n_models - nt - nv
    return data, Split(np.r_[np.arange(nt), np.arange(nt + nv, nt + nv + extra)], np.arange(nt, nt + nv),
                       np.array([], dtype=np.intp))


def run_pair(suite: Suite, seed: int = 0, k: int = 250, k_each: int = 50, method: str = "essence",
             separate_method: str = "auto", test: float = 0.2, val: float = 0.1, cache: Path | None = None,
             progress: bool = False, approaches=("suite", "separate"), evaluate_on: Suite | None = None,
             tag: str = "", reconstructors="default", split_kind: str = "random", **params) -> dict:
    """``{approach: {"models", "truth": {name: [...]}, "estimate": {name: [...]}, "budget", ...}}`` on the test
    models of seed ``seed`` (or on ``evaluate_on``, models kept out of ``suite`` altogether). ``approaches``: any of
    ``"suite"``, ``"separate"`` and ``"separate_pool"`` (separate, trained on each member's whole pool too,
    :func:`with_outside`). Each approach is cached as JSON in ``cache`` when given, keyed by its settings + ``tag``."""
    from essence.artifact.compressed import compress
    from essence.suite import compress_suite

    split = suite_split(suite, seed, test, val, kind=split_kind)
    testd = suite.subset(split.test) if evaluate_on is None else evaluate_on
    pos = {c: i for i, c in enumerate(suite.pooled().items.tolist())}
    out = {}
    for approach in approaches:
        key = (f"{tag}{approach}-{'+'.join(suite.names)}-n{suite.n_models}-s{seed}-{split_kind}-t{test}-v{val}-"
               + (f"{method}-k{k}-{reconstructors if isinstance(reconstructors, str) else '+'.join(reconstructors)}"
                  + "-" + "-".join(f"{a}={b}" for a, b in sorted(params.items()))
                  if approach == "suite" else f"{separate_method}-k{k_each}"
                  + ("-pool" if approach == "separate_pool" else "")))
        path = Path(cache) / f"{key}.json" if cache else None
        if path is not None and path.exists():
            out[approach] = json.loads(path.read_text())
            continue
        t0 = time.perf_counter()
        if approach == "suite":
            art = compress_suite(suite, k, method=method, seed=seed, split=split, progress=progress,
                                 reconstructors=reconstructors, **params)
            est = art._predict(testd.pooled().responses[:, [pos[c] for c in art.columns()]])
            rec = {"budget": art.selection["budget"], "items": art.columns(),
                   "kinds": {n: art.selection["reconstructor_choice"][n]["kind"] for n in art.names},
                   "choice": art.selection["reconstructor_choice"]}
        else:
            est, rec = {}, {"budget": {}, "kinds": {}}
            for b, m in enumerate(suite.members):
                data, sp = m, split
                if approach == "separate_pool":
                    data, sp = with_outside(suite, b, split)
                    rec.setdefault("n_train", {})[m.name] = int(sp.train.size)
                a = compress(data, k=k_each, method=separate_method, seed=seed, split=sp, progress=progress)
                est[m.name] = a.reconstructor.predict(testd.members[b].subset(items=a.items).responses)
                rec["budget"][m.name] = k_each
                rec["kinds"][m.name] = a.selection.get("reconstructor_choice")
            est["mean"] = np.mean([est[n] for n in suite.names], axis=0)
        rec.update({"seconds": round(time.perf_counter() - t0, 1), "models": testd.models.tolist(),
                    "truth": {**{n: testd.targets[:, b].tolist() for b, n in enumerate(suite.names)},
                              "mean": testd.mean_target.tolist()},
                    "estimate": {n: np.asarray(v, dtype=float).tolist() for n, v in est.items()}})
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(rec))
        out[approach] = rec
    return out


def figure_rows(results: dict, seed: int) -> pd.DataFrame:
    """One row per approach x benchmark (and ``mean``): n_models, rmse, mae (pp), kendall, spearman."""
    rows = []
    for approach, rec in results.items():
        for name, est in rec["estimate"].items():
            s = summary(np.asarray(rec["truth"][name]), np.asarray(est))
            rows.append({"seed": seed, "approach": approach, "benchmark": name,
                         **{k: s[k] for k in ("n_models", "rmse", "mae", "kendall", "spearman")}})
    return pd.DataFrame(rows)


def leave_out_models(suite: Suite, fraction: float = 0.2, seed: int = 0) -> tuple[Suite, Suite]:
    """``(kept, left_out)``: a random ``fraction`` of the suite's models held out of everything."""
    rng = np.random.default_rng([int(seed), 99])
    out = np.zeros(suite.n_models, dtype=bool)
    out[rng.choice(suite.n_models, size=int(round(fraction * suite.n_models)), replace=False)] = True
    return suite.subset(np.flatnonzero(~out)), suite.subset(np.flatnonzero(out))

def outside_models(suite: Suite, pools, seeds=(0,), k_each: int = 50, test: float = 0.2, val: float = 0.1) -> pd.DataFrame:
    """Would the models *outside* the suite help? Each member's pool (``pools``: the members as loaded, before
    the suite kept only the shared models) has models that some other member lacks. For ``k_each`` random
    items of each member, a ridge (penalty by CV, :class:`essence.reconstructors.simple.RidgeReconstructor`) is fitted
    on the suite's training + validation models (``suite``) and on every model of the member's pool except the
    suite's test models (``pool``); both are scored on the suite's test models of each seed's split.

    Returns one row per seed x member: ``n_suite``, ``n_pool`` (training models), ``suite``, ``pool`` (RMSE,
    pp) and ``change = pool / suite - 1``.
    """
    from essence.data._runtime import single_thread
    from essence.data.errors import InputError
    from essence.reconstructors.simple import RidgeReconstructor

    pools = list(pools)
    if len(pools) != len(suite.members):
        raise InputError(f"outside_models: {len(pools)} pools for a suite of {len(suite.members)} members; "
                         "pass each member's full data, in the suite's order")
    rows = []
    for seed in seeds:
        sp = suite_split(suite, seed, test, val)
        test_models = suite.models[sp.test]
        fit_models = suite.models[np.r_[sp.train, sp.val]]
        rng = np.random.default_rng([int(seed), 11])
        with single_thread():
            for b, (name, pool) in enumerate(zip(suite.names, pools)):
                member = suite.members[b]
                cols = np.sort(rng.choice(member.n_items, size=min(k_each, member.n_items), replace=False))
                where = {i: j for j, i in enumerate(pool.items.tolist())}
                missing = [i for i in member.items[cols].tolist() if i not in where]
                if missing:
                    raise InputError(f"outside_models: {name}'s pool lacks items {missing[:3]}; pass the data the "
                                     "suite was made from")
                pc = np.array([where[i] for i in member.items[cols].tolist()])
                row = {m: j for j, m in enumerate(pool.models.tolist())}
                te = np.array([row[m] for m in test_models.tolist()])
                fits = {"suite": np.array([row[m] for m in fit_models.tolist()]),
                        "pool": np.setdiff1d(np.arange(pool.n_models), te)}
                err, n = {}, {}
                for label, tr in fits.items():
                    pred = RidgeReconstructor().fit(pool.responses[tr][:, pc], pool.target[tr]).predict(
                        pool.responses[te][:, pc])
                    err[label] = float(np.sqrt(np.mean((pred - pool.target[te]) ** 2)))
                    n[f"n_{label}"] = int(tr.size)
                rows.append({"seed": seed, "benchmark": name, **n, **err, "change": err["pool"] / err["suite"] - 1})
    return pd.DataFrame(rows)


def _ridge_test_rmse(suite: Suite, sp, idx) -> tuple[list[float], float]:
    """``(per-member test RMSE, the suite mean's test RMSE)`` in pp of the pooled items ``idx`` read by a ridge per
    member (penalty by CV) fitted on the training + validation models of split ``sp``."""
    from essence.reconstructors.simple import RidgeReconstructor

    R, fit, te = suite.pooled().responses, np.r_[sp.train, sp.val], suite.subset(sp.test)
    preds = [RidgeReconstructor().fit(R[fit][:, idx], suite.targets[fit, b]).predict(R[sp.test][:, idx])
             for b in range(len(suite.names))]
    per = [float(np.sqrt(np.mean((p - te.targets[:, b]) ** 2))) for b, p in enumerate(preds)]
    return per, float(np.sqrt(np.mean((np.mean(preds, axis=0) - te.mean_target) ** 2)))


def weighting_study(suite: Suite, seed: int = 0, configs=("random", "raw", "relative", "relative+mean"),
                    generations: int = 100, k: int = 250, test: float = 0.2, val: float = 0.1) -> pd.DataFrame:
    """How the joint fitness's weighting changes the held-out error.

    Each config is ``"random"`` or a weighting of :data:`essence.suite.fitness.WEIGHTINGS`; the chosen items are
    reconstructed per member by a ridge (penalty by CV) fitted on training + validation models; RMSE (pp) on the
    test models, per member, ``avg`` (their mean) and ``mean`` (the suite mean's RMSE). One row per config."""
    from essence.data._runtime import single_thread
    from essence.suite.select import select_suite

    sp = suite_split(suite, seed, test, val)
    tr, va = suite.subset(sp.train), suite.subset(sp.val)
    rows = []
    for cfg in configs:
        with single_thread():
            if cfg == "random":
                idx, info = select_suite(tr, va, k, method="random", seed=seed, progress=False)
            else:
                idx, info = select_suite(tr, va, k, seed=seed, progress=False, weighting=cfg,
                                         generations=generations, tau_text=1.0)
            per, mean = _ridge_test_rmse(suite, sp, idx)
        row = {"config": cfg, **dict(zip(suite.names, per)), "avg": float(np.mean(per)), "mean": mean}
        row["budget"] = " ".join(str(info["budget"][n]) for n in suite.names)
        rows.append(row)
    return pd.DataFrame(rows).set_index("config")


def search_curve(suite: Suite, seed: int = 0, generations=(0, 25, 50, 100, 150, 300), k: int = 250,
                 test: float = 0.2, val: float = 0.1, **params) -> pd.DataFrame:
    """Does more search lower the held-out error? The joint EssenceBench's best candidate after each number of
    ``generations`` (the same seed, so a shorter run is the start of a longer one), its fitness (the combined
    relative error the GA minimises, unitless) and, with a ridge per member (penalty by CV) fitted on training +
    validation models, its test RMSE (pp): ``avg`` (mean of the members') and ``mean`` (the suite mean's).
    ``params``: other joint settings. One row per number of generations."""
    from essence.data._runtime import single_thread
    from essence.suite.select import select_suite

    sp = suite_split(suite, seed, test, val)
    tr, va = suite.subset(sp.train), suite.subset(sp.val)
    rows = []
    for g in generations:
        with single_thread():
            idx, info = select_suite(tr, va, k, seed=seed, progress=False, generations=int(g), **params)
            per, mean = _ridge_test_rmse(suite, sp, idx)
        fr = info["fitness_rmse"]
        rows.append({"generations": int(g), "fitness": float(-info["ga"]["history"]["best_fitness"][-1]),
                     "train mean RMSE": fr["mean"], "avg": float(np.mean(per)), "mean": mean,
                     "budget": " ".join(str(info["budget"][n]) for n in suite.names)})
    return pd.DataFrame(rows).set_index("generations")


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


def results_table(runs: pd.DataFrame) -> pd.DataFrame:
    """``suite.csv`` from ``suite_runs.csv``'s rows: per split, each benchmark, ``mean of members`` (the mean of the
    per-benchmark RMSE) and ``suite mean`` (the RMSE of the suite mean): seeds, mean and sd over seeds of each
    approach's RMSE (pp) and the mean over seeds of the ratio suite / separate."""
    piv = runs.pivot_table(index=["split", "seed", "benchmark"], columns="approach", values="rmse").reset_index()
    per = piv[piv.benchmark != "mean"]
    avg = per.groupby(["split", "seed"], as_index=False)[["separate", "suite"]].mean().assign(
        benchmark="mean of members")
    both = pd.concat([per, avg, piv[piv.benchmark == "mean"].assign(benchmark="suite mean")], ignore_index=True)
    order = {n: i for i, n in enumerate([*NAMES, "mean of members", "suite mean"])}
    rows = []
    for (split, name), g in both.groupby(["split", "benchmark"], sort=False):
        rows.append({"split": split, "benchmark": name, "seeds": len(g),
                     "separate": round(g.separate.mean(), 3), "separate_sd": round(g.separate.std(ddof=0), 3),
                     "suite": round(g.suite.mean(), 3), "suite_sd": round(g.suite.std(ddof=0), 3),
                     "ratio": round((g.suite / g.separate).mean(), 3)})
    out = pd.DataFrame(rows)
    out["_o"] = out.benchmark.map(order)
    return out.sort_values(["split", "_o"], key=lambda s: s.map({"random": 0, "top": 1}) if s.name == "split"
                           else s).drop(columns="_o").reset_index(drop=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--splits", nargs="+", default=["random", "top"], choices=["random", "top"])
    ap.add_argument("--k", type=int, default=250)
    ap.add_argument("--k-each", type=int, default=50)
    ap.add_argument("--method", default="essence", help="the suite's selector (default: joint EssenceBench)")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help="a joint EssenceBench setting")
    ap.add_argument("--reconstructors", default="default", help="the suite's: default (greedy ensemble) or basic")
    ap.add_argument("--per-benchmark", type=int, default=0, help="the suite's floor of items per benchmark")
    ap.add_argument("--quick", action="store_true", help="a small slice (QUICK), seed 0, random split; writes nothing")
    ap.add_argument("--holdout", action="store_true", help="score on 20%% of the models held out of everything")
    ap.add_argument("--weightings", action="store_true",
                    help="instead: the joint fitness's weightings (GA 100 generations, ridge reconstruction), on the "
                         "first seed's test models")
    ap.add_argument("--search-curve", action="store_true",
                    help="instead: the joint GA's best candidate after 0-300 generations, its fitness and its test "
                         "RMSE with a ridge per benchmark, per seed")
    ap.add_argument("--outside", action="store_true",
                    help="instead: a ridge on k-each random items of each benchmark fitted on the suite's training "
                         "models against every model of the benchmark's pool except the test models, per seed")
    ap.add_argument("--separate-pool", action="store_true",
                    help="also: the separate artifacts trained on each benchmark's whole pool")
    ap.add_argument("--kinds", action="store_true",
                    help="also: each candidate's 5-fold CV RMSE per benchmark and how often the ensemble uses it")
    ap.add_argument("--cache", default="build/suite")
    ap.add_argument("--results", default=str(ROOT / "results"))
    ap.add_argument("--progress", action="store_true")
    args = ap.parse_args(argv)
    from essence.data.checks import parse_params

    params = parse_params(args.param)
    if args.per_benchmark:
        params["per_benchmark"] = args.per_benchmark
    suite = load_suite(NAMES)
    print(f"suite: {suite.n_models} models in all five; dropped per benchmark: "
          + ", ".join(f"{n} {c}" for n, c in suite.dropped.items()))
    if args.quick:
        suite = suite.subset(np.arange(0, suite.n_models, QUICK["every"]))
        args.k, args.k_each, args.seeds, args.splits = QUICK["k"], QUICK["k_each"], [0], ["random"]
        params = {**QUICK["params"], **params}
    if args.weightings:
        t = weighting_study(suite, seed=args.seeds[0], k=args.k)
        print(f"Joint fitness settings, seed {args.seeds[0]}: test RMSE (pp), ridge on the chosen items; avg = mean of "
              f"the five; mean = the suite mean's RMSE; budget = items per benchmark")
        print(t.round(3).to_markdown())
        print(f"note: {POOL_CAVEAT}")
        return 0
    if args.outside:
        from essence.data import load

        t = outside_models(suite, [load(n) for n in NAMES], seeds=args.seeds, k_each=args.k_each)
        print(f"Models outside the suite: test RMSE (pp) of a ridge on {args.k_each} random items of each benchmark, "
              f"fitted on the suite's training models (suite) or on every model of its pool but the test models "
              f"(pool); n_* = training models; seeds {args.seeds}")
        print(t.round(3).to_markdown(index=False))
        print(f"note: {POOL_CAVEAT}")
        return 0
    if args.search_curve:
        for seed in args.seeds:
            t = search_curve(suite, seed=seed, k=args.k, **params)
            print(f"\nSeed {seed}: the joint GA's best candidate after G generations; fitness = the combined relative "
                  f"error it minimises; avg / mean = test RMSE (pp) of a ridge per benchmark on the chosen items")
            print(t.round(3).to_markdown())
        print(f"note: {POOL_CAVEAT}")
        return 0
    approaches = ("suite", "separate", "separate_pool") if args.separate_pool else ("suite", "separate")
    frames, suite_runs = [], []
    for split_kind in args.splits:
        for seed in args.seeds:
            common = dict(seed=seed, k=args.k, k_each=args.k_each, method=args.method, cache=Path(args.cache),
                          progress=args.progress, approaches=approaches, reconstructors=args.reconstructors,
                          split_kind=split_kind, **params)
            if args.holdout:
                kept, out = leave_out_models(suite, 0.2, seed)
                res = run_pair(kept, test=0.1, val=0.1, evaluate_on=out, tag="holdout-", **common)
            else:
                res = run_pair(suite, **common)
            frames.append(figure_rows(res, seed).assign(split=split_kind))
            suite_runs.append(res["suite"])
            print(f"{split_kind} seed {seed}: {len(res['suite']['models'])} evaluation models; suite budget "
                  + ", ".join(f"{n} {c}" for n, c in res["suite"]["budget"].items()) + "; seconds "
                  + ", ".join(f"{a} {r.get('seconds')}" for a, r in res.items()), flush=True)
    df = pd.concat(frames, ignore_index=True)
    if args.kinds:
        print("\nEach candidate on the suite's chosen items: 5-fold CV RMSE (pp) per benchmark (mean over runs), and "
              "in how many benchmark x run choices the ensemble uses it")
        print(kinds_table([r.get("choice", {}) for r in suite_runs]).to_markdown())
    runs = df[["split", "seed", "approach", "benchmark", "n_models", "rmse", "mae", "kendall"]].copy()
    for c in ("rmse", "mae", "kendall"):
        runs[c] = runs[c].astype(float).round(6)
    table = results_table(runs[runs.approach.isin(["suite", "separate"])])
    where = "models held out of everything" if args.holdout else "held-out test models (20%)"
    print(f"\nRMSE (pp) on {where}, mean and sd over seeds {args.seeds}; suite = {args.method} k={args.k} across "
          f"the five, separate = five default artifacts at k={args.k_each}; ratio = suite / separate")
    print(table.to_markdown(index=False))
    if args.separate_pool:
        piv = df.pivot_table(index=["seed", "benchmark"], columns="approach", values="rmse").reset_index()
        print(pool_table(piv).to_markdown())
    print(f"note: {POOL_CAVEAT}")
    if not (args.quick or args.holdout or args.param or args.per_benchmark or args.method != "essence"
            or args.reconstructors != "default" or args.k != 250 or args.k_each != 50):
        res_dir = Path(args.results)
        runs.to_csv(res_dir / "suite_runs.csv", index=False)
        table.to_csv(res_dir / "suite.csv", index=False)
        seeds = " ".join(map(str, args.seeds))
        cmd = (f"nice -n 5 .venv/bin/python benchmarks/suite.py --seeds {seeds} --splits {' '.join(args.splits)}")
        meta = {"suite": {"title": "A suite of five against five separate artifacts at equal total items",
                          "command": cmd, "order": 30,
                          "caption": "Test RMSE in pp on the held-out 20 % of the models present in all five metabench "
                                     "pools (pre-selected items: optimistic against whole benchmarks); suite = "
                                     "compress_suite's defaults at k = 250 across arc gsm8k mmlu truthfulqa winogrande, "
                                     "separate = five default artifacts (auto) at k = 50 each on the same split; mean "
                                     "and sd over seeds; ratio = suite / separate, mean over seeds. Random split: test "
                                     "models stratified on the suite mean; top: the strongest 20 % by suite mean."},
                "suite_runs": {"title": "The suite comparison's runs", "command": cmd, "order": 31,
                               "caption": "One row per split x seed x approach x benchmark (mean: the suite mean): test "
                                          "RMSE and MAE in pp, Kendall tau. Metabench pools: pre-selected items."}}
        for name, m in meta.items():
            (res_dir / f"{name}.json").write_text(json.dumps(m, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    from essence.data.pinning import ensure

    ensure()  # the same numbers on any machine (essence/data/pinning.py)
    sys.exit(main())
