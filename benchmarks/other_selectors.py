"""Every other selector against random items at one budget, per seed -> ``results/other_selectors.csv``.

:func:`essence.lessons.selectors.selector_runs`: each method chooses on the training and validation models of
``split_models(data, seed)`` and fits its reconstructor with the comparison sweep's basic kinds; test RMSE (pp)
on the held-out test models, next to the ``random`` method's on the same split.

    .venv/bin/python benchmarks/other_selectors.py                      # arc, k 50, seeds 0 1 2
    .venv/bin/python benchmarks/other_selectors.py --seeds 0 --csv ""   # print one slice
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
from essence.lessons.selectors import selector_runs  # noqa: E402

METHODS = ["kmeans", "tinybench", "herding", "ppl", "disco"]
COLUMNS = ["dataset", "k", "seed", "method", "rmse", "random_rmse", "ratio", "choice", "refused"]
META = {"title": "The other selectors against random items (ARC, k = 50)",
        "command": ".venv/bin/python benchmarks/other_selectors.py", "order": 21,
        "caption": "Test RMSE in pp on the held-out test models of each seed's split of the ARC metabench pool "
                   "(pre-selected items); ratio = RMSE / random's on the same split. Reconstructors chosen by CV "
                   "among the comparison sweep's basic kinds."}


def table(datasets, k: int, seeds, out=None) -> pd.DataFrame:
    """One row per (dataset, seed, method), :data:`COLUMNS`, numbers rounded to 3 decimals."""
    parts = [selector_runs(load(name), METHODS, k, seeds=seeds, cache_dir=out) for name in datasets]
    df = pd.concat(parts, ignore_index=True).reindex(columns=COLUMNS)
    return df.round({"rmse": 3, "random_rmse": 3, "ratio": 3})


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", nargs="+", default=["arc"])
    ap.add_argument("--k", type=int, default=50)
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    ap.add_argument("--out", default=str(ROOT / "build" / "selectors"), help="cache folder of per-run JSON")
    ap.add_argument("--csv", default=str(ROOT / "results" / "other_selectors.csv"), help='"" prints only')
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
