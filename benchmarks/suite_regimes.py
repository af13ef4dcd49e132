"""Few reference models: a suite compressed from tens of models, with the joint search or random items.

A user's own suite has tens of models, not the ~1,807 the five metabench pools share. For each model count
``m`` of ``--models`` and draw ``d`` of ``--draws``, ``m`` of the shared models are drawn at random (seed
``[m, d]``) and the suite is compressed from them alone, as ``essence compress A B C ... --k K`` would on
files holding only those models: ``compress_suite`` with its defaults (its own split of the ``m`` models, the
default reconstructors) and no models outside the suite (a user's files hold none). Every other shared model
(~1,750) is then estimated from its answers on the chosen items alone: held out of everything. Approaches:
``random`` (random items across the pooled suite), ``essence`` (the joint search whatever the model count,
``min_search_models=0``) and ``default`` (``compress_suite``'s defaults: random items below
``min_search_models`` = 24 training + validation models, the joint search above).

Printed per (m, approach): the mean over draws of the mean per-benchmark RMSE and of the suite mean's RMSE
(pp), their spread over draws, and the ratio of each approach to ``random`` (geometric mean over draws).
Each run is cached as JSON under ``--cache`` (default ``build/suite_regimes``).

    .venv/bin/python benchmarks/suite_regimes.py --models 20 35 50 100 --draws 3 --approaches random essence
    .venv/bin/python benchmarks/suite_regimes.py --models 20 25 30 --draws 5 --approaches random default

The metabench pools are pre-selected items: optimistic against a whole benchmark. One thread per run.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# not benchmarks/ itself: its selectors.py would shadow the standard library's in joblib's workers
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != ROOT / "benchmarks"]

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from essence.data import POOL_CAVEAT, split_models  # noqa: E402
from essence.suite import compress_suite, load_suite, make_suite  # noqa: E402

NAMES = ("arc", "gsm8k", "mmlu", "truthfulqa", "winogrande")
APPROACHES = {"random": ("random", {}), "essence": ("essence", {"min_search_models": 0}), "default": ("essence", {})}


def one_run(suite, m: int, draw: int, approach: str, k: int) -> dict:
    """Compress ``m`` drawn models' suite with ``approach``; RMSE (pp) per member and of the suite mean on every
    other shared model."""
    rng = np.random.default_rng([m, draw])
    chosen = np.zeros(suite.n_models, dtype=bool)
    chosen[rng.choice(suite.n_models, size=m, replace=False)] = True
    few = make_suite(list(suite.subset(np.flatnonzero(chosen)).members))  # no models outside the suite
    rest = suite.subset(np.flatnonzero(~chosen))
    method, params = APPROACHES[approach]
    split = split_models(few.mean_target, test=0.1, val=0.1, seed=draw)  # compress_suite's own default split
    t0 = time.perf_counter()
    with warnings.catch_warnings():  # the artifact's own test part of m models is tiny, and it says so
        warnings.filterwarnings("ignore", message=".*figures are noise.*")
        art = compress_suite(few, k, method=method, seed=draw, split=split, progress=False, **params)
    seconds = time.perf_counter() - t0
    pooled = rest.pooled()
    pos = {c: i for i, c in enumerate(pooled.items.tolist())}
    est = art._predict(pooled.responses[:, [pos[c] for c in art.columns()]])
    truth = {**{n: rest.targets[:, b] for b, n in enumerate(rest.names)}, "mean": rest.mean_target}
    rmse = {n: float(np.sqrt(np.mean((np.asarray(est[n]) - truth[n]) ** 2))) for n in truth}
    sel = art.selection
    return {"m": m, "draw": draw, "approach": approach, "k": k, "n_test": int(rest.n_models), "rmse": rmse,
            "budget": dict(sel.get("budget", {})), "fallback": sel.get("fallback"), "n_fit": int(split.train.size + split.val.size),
            "kinds": {n: c.get("kind", "") for n, c in sel.get("reconstructor_choice", {}).items()},
            "seconds": round(seconds, 1)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", nargs="+", type=int, default=[20, 35, 50, 100])
    ap.add_argument("--draws", type=int, default=3)
    ap.add_argument("--draw-ids", nargs="+", type=int, default=None,
                    help="run only these draws (default: 0 .. --draws - 1); to spread the runs over processes")
    ap.add_argument("--k", type=int, default=250)
    ap.add_argument("--approaches", nargs="+", default=["random", "default"], choices=list(APPROACHES))
    ap.add_argument("--cache", default="build/suite_regimes")
    ap.add_argument("--cached-only", action="store_true", help="summarise the runs already cached; compute none")
    args = ap.parse_args(argv)
    suite = load_suite(NAMES)
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    recs = []
    for m in args.models:
        if not 10 <= m < suite.n_models:
            ap.error(f"--models {m}: choose between 10 and {suite.n_models - 1} (the suite has {suite.n_models})")
        for d in (args.draw_ids if args.draw_ids is not None else range(args.draws)):
            for a in args.approaches:
                path = cache / f"{'+'.join(NAMES)}-m{m}-d{d}-{a}-k{args.k}.json"
                if path.exists():
                    recs.append(json.loads(path.read_text()))
                    continue
                if args.cached_only:
                    continue
                rec = one_run(suite, m, d, a, args.k)
                tmp = path.with_suffix(".tmp")
                tmp.write_text(json.dumps(rec))
                tmp.replace(path)
                recs.append(rec)
                print(f"m={m} draw={d} {a}: mean per-benchmark {np.mean([rec['rmse'][n] for n in NAMES]):.3f} pp, "
                      f"suite mean {rec['rmse']['mean']:.3f} pp ({rec['seconds']:.0f} s)", flush=True)
    if not recs:
        print(f"no runs in {cache}")
        return 1
    rows = [{"models": r["m"], "draw": r["draw"], "approach": r["approach"],
             "per_benchmark": float(np.mean([r["rmse"][n] for n in NAMES])), "suite_mean": r["rmse"]["mean"],
             "seconds": r["seconds"]} for r in recs]
    df = pd.DataFrame(rows)
    base = df[df.approach == "random"].set_index(["models", "draw"])
    out = []
    for (m, a), g in df.groupby(["models", "approach"], sort=False):
        row = {"models": m, "approach": a, "draws": len(g),
               "per-benchmark RMSE (pp)": f"{g.per_benchmark.mean():.3f} ± {g.per_benchmark.std(ddof=0):.3f}",
               "suite mean RMSE (pp)": f"{g.suite_mean.mean():.3f} ± {g.suite_mean.std(ddof=0):.3f}",
               "seconds": round(g.seconds.mean())}
        if not base.empty and a != "random":
            b = base.loc[[(m, d) for d in g.draw if (m, d) in base.index]]
            if len(b) == len(g):
                row["x random, per-benchmark"] = round(float(np.exp(np.mean(np.log(g.per_benchmark.values
                                                                                   / b.per_benchmark.values)))), 3)
                row["x random, suite mean"] = round(float(np.exp(np.mean(np.log(g.suite_mean.values
                                                                                / b.suite_mean.values)))), 3)
        out.append(row)
    print(f"\nSuite of five compressed from m models (k = {args.k}), scored on every other shared model "
          f"(held out of everything); mean ± sd over draws")
    table = pd.DataFrame(out)
    print(table.astype(object).where(table.notna(), "").to_markdown(index=False))
    print(f"note: {POOL_CAVEAT}")
    return 0


if __name__ == "__main__":
    from essence.data.pinning import ensure

    ensure()  # the same numbers on any machine (essence/data/pinning.py)
    sys.exit(main())
