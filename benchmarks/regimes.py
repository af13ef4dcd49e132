"""The regime map: every method at the model counts users have (20-300 models and all) and on whole pools.

The runs, caching and summaries are :mod:`essence.lessons.regimes` (read its docstring for the protocol); this
script is the command line. Each (dataset, m, draw, method, k) run is cached as JSON under ``--out``
(default ``build/regimes``), so a rerun resumes. k: 50 on the metabench pools, N/20 on the whole pools
(alpaca_eval2 805 items -> 40, lcb_codegen 400 -> 20) unless ``--k`` is given.

    python benchmarks/regimes.py --datasets alpaca_eval2 --methods random auto --draws 1
    python benchmarks/regimes.py --datasets none --generated 40x800 --generated-seeds 0 1 --methods random auto
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from essence.data import METABENCH  # noqa: E402
from essence.methods import METHODS  # noqa: E402
from essence.lessons.regimes import WHOLE_POOLS, default_k, regime_map, run_one, summarise, wide_table  # noqa: E402,F401


def print_wide(summary: list[dict], methods: list[str]) -> None:
    """One row per (dataset, models): the baseline's RMSE (pp, mean over draws) and each method's ratio
    (geometric mean over draws ± sd of the per-draw ratios); "refused" where the method refused."""
    print("\n| dataset | models | draws | random + line (pp) | " + " | ".join(methods) + " |")
    print("|---|---|---|---|" + "---|" * len(methods))
    for row in wide_table(summary, methods):
        print("| " + " | ".join(row) + " |")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--datasets", nargs="+", default=list(METABENCH) + list(WHOLE_POOLS))
    p.add_argument("--methods", nargs="+", default=list(METHODS))
    p.add_argument("--models", nargs="+", default=["20", "35", "50", "100", "300", "all"],
                   help="model counts for the metabench pools (whole pools always use all their models)")
    p.add_argument("--draws", type=int, default=3, help="random model subsets per count (1 for 'all')")
    p.add_argument("--folds", type=int, default=5, help="folds of the cross-validation over models")
    p.add_argument("--k", type=int, default=None, help="items to keep (default: 50 metabench, N/20 whole pools)")
    p.add_argument("--out", default="build/regimes", help="cache folder of per-run JSON")
    p.add_argument("--wide", action="store_true", help="one row per (dataset, models): each method's ratio")
    p.add_argument("--generated", nargs="*", default=[], metavar="MODELSxITEMS",
                   help="also GENERATED data (essence.data.synthetic.generate_mirt), e.g. 40x800, used with all its "
                        "models, one matrix per --generated-seeds; named generated-40x800-s0, ...")
    p.add_argument("--generated-seeds", nargs="+", type=int, default=[0])
    p.add_argument("--cached", action="store_true", help="print only the runs already in --out from the current code (compute none)")
    args = p.parse_args(argv)
    gen = {f"generated-{g}-s{s}": (int(g.split("x")[0]), int(g.split("x")[1]), s)
           for g in args.generated for s in args.generated_seeds}

    def load_any(name):
        if name in gen:
            from essence.data.synthetic import generate_mirt

            m, n, seed = gen[name]
            return generate_mirt(m, n, seed=seed)
        from essence.data import load

        return load(name)

    datasets = [d for d in args.datasets if d != "none"]
    rows = regime_map(datasets, args.models, args.methods, args.draws, args.folds, args.k, args.out, load=load_any,
                      cached_only=args.cached)
    if gen:
        rows += regime_map(list(gen), ["all"], args.methods, 1, args.folds, args.k, args.out, load=load_any,
                           cached_only=args.cached)
    if args.wide:
        print_wide(summarise(rows), args.methods)
        return 0
    print("\n| dataset | models | method | test RMSE (pp), mean ± sd | ratio to random + line (geo. mean ± sd) | draws |")
    print("|---|---|---|---|---|---|")
    for s in summarise(rows):
        if "refused" in s:
            print(f"| {s['dataset']} | {s['models']} | {s['method']} | refused: {s['refused'][:90]} | | {s['draws']} |")
        else:
            print(f"| {s['dataset']} | {s['models']} | {s['method']} | {s['rmse']:.2f} ± {s['rmse_sd']:.2f} "
                  f"| {s['ratio']:.2f} ± {s['ratio_sd']:.2f} | {s['draws']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
