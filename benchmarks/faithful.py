"""Faithfulness check of K-Means and tinyBenchmarks against their paper's setting -> ``results/faithful.csv``.

tinyBenchmarks (Maia Polo et al., 2024) estimates a model's accuracy on the item pool it clustered, with no
regression (anchor-weighted mean, p-IRT, gp-IRT), and reports MAE against that pool accuracy. The comparison
of this project scores every method against the whole-benchmark target, and a metabench pool is a
pre-selected part of its benchmark. One row per (dataset, k, seed) of
:func:`essence.lessons.selectors.faithful_run` on held-out test models: ``pool: ...`` MAE (pp) against the pool
accuracy, ``target: ...`` RMSE (pp) against the target.

    .venv/bin/python benchmarks/faithful.py                               # arc gsm8k x k 50 100 x seeds 0 1 2
    .venv/bin/python benchmarks/faithful.py --datasets arc --k 50 --seeds 0 --csv ""   # print one slice

Per-run results are cached under ``--out`` (default ``build/faithful/``; delete to recompute).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pandas as pd  # noqa: E402

from essence.data import load  # noqa: E402
from essence.data._io import write_table  # noqa: E402
from essence.lessons.selectors import FAITHFUL_COLUMNS, faithful_run  # noqa: E402

COLUMNS = ["dataset", "k", "seed", *FAITHFUL_COLUMNS, "gp_lambda", "pool minus target (pp)", "kmeans choice",
           "tinybench choice", "random choice"]
META = {"title": "K-Means and tinyBenchmarks in their paper's setting (pool accuracy) and in ours (target)",
        "command": ".venv/bin/python benchmarks/faithful.py", "order": 20,
        "caption": "Held-out test models of each seed's split; metabench pools (pre-selected items). pool: MAE in pp "
                   "against the test models' accuracy on the pool; target: RMSE in pp against the whole-benchmark "
                   "score. Reconstructors chosen by CV among the comparison sweep's basic kinds."}


def table(datasets, ks, seeds, out=None) -> pd.DataFrame:
    """One row per (dataset, k, seed), :data:`COLUMNS`, numbers rounded to 3 decimals."""
    recs = [faithful_run(load(name), k, s, cache_dir=out) for name in datasets for k in ks for s in seeds]
    return pd.DataFrame(recs)[COLUMNS].round(3)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", nargs="+", default=["arc", "gsm8k"])
    ap.add_argument("--k", nargs="+", type=int, default=[50, 100])
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    ap.add_argument("--out", default=str(ROOT / "build" / "faithful"), help="cache folder of per-run JSON")
    ap.add_argument("--csv", default=str(ROOT / "results" / "faithful.csv"), help='"" prints only')
    args = ap.parse_args(argv)
    df = table(args.datasets, args.k, args.seeds, args.out)
    print(df.to_string(index=False))
    if args.csv:
        write_table(df, args.csv, META)
    return 0


if __name__ == "__main__":
    from essence.data.pinning import ensure

    ensure()  # the same numbers on any machine (essence/data/pinning.py)
    raise SystemExit(main())
