"""The reconstructors of notebook 05 side by side -> ``results/reconstruction_grid.csv`` and
``results/reconstruction_coverage.csv``.

* grid (:func:`essence.lessons.reconstruction.error_grid`): test RMSE (pp) of every ladder reconstructor on
  random subsets: GSM8K (metabench pool) at k = 50 against the number of training models (``study`` =
  ``n_train``), and against k on GSM8K with 1,000 training models and on AlpacaEval 2 with all of its
  non-test systems, three splits (``study`` = ``k``);
* coverage (:func:`essence.lessons.reconstruction.coverage_table`): the 90 % interval on test models, CV among
  line, mean_ridge and ridge, k = 50, GSM8K and ARC (3 splits) and AlpacaEval 2 (5 splits).

    .venv/bin/python benchmarks/reconstruction.py
    .venv/bin/python benchmarks/reconstruction.py --quick   # one slice of each, printed, nothing written
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from essence import data as D  # noqa: E402
from essence.data._io import write_table  # noqa: E402
from essence.lessons import reconstruction as LR  # noqa: E402

K, N_TRAINS, KS, N_TRAIN_K, DRAWS = 50, [10, 20, 40, 100, 400, 1600], [5, 10, 25, 50, 100], 1000, 3
META = {
    "reconstruction_grid": {
        "title": "Reconstructors against training models and k (random subsets)", "order": 22,
        "command": ".venv/bin/python benchmarks/reconstruction.py",
        "caption": "Test RMSE in pp of each reconstructor of notebook 05 on random item subsets, one row per draw. "
                   "gsm8k is a metabench pool (pre-selected items)."},
    "reconstruction_coverage": {
        "title": "Coverage of the 90 % interval on held-out models (random subsets, k = 50)", "order": 23,
        "command": ".venv/bin/python benchmarks/reconstruction.py",
        "caption": "One row per dataset, split and draw: test models inside their interval. gsm8k and arc are "
                   "metabench pools (pre-selected items)."},
}


def grid(n_trains=N_TRAINS, ks=KS, draws=DRAWS, alp_splits=(0, 1, 2)) -> pd.DataFrame:
    gsm = D.load("gsm8k")
    sp = D.split_models(gsm, seed=0)
    args = (gsm.responses[sp.train], gsm.target[sp.train], gsm.responses[sp.test], gsm.target[sp.test])
    parts = [LR.error_grid(*args, [K], n_trains, n_draws=draws, seed=0).assign(study="n_train", dataset="gsm8k", split=0),
             LR.error_grid(*args, ks, [N_TRAIN_K], n_draws=draws, seed=0).assign(study="k", dataset="gsm8k", split=0)]
    alp = D.load("alpaca_eval2")
    for s in alp_splits:
        spa = D.split_models(alp, seed=s)
        tr = np.r_[spa.train, spa.val]  # nothing is chosen here: validation models join training
        parts.append(LR.error_grid(alp.responses[tr], alp.target[tr], alp.responses[spa.test], alp.target[spa.test],
                                   ks, [len(tr)], n_draws=2, seed=s).assign(study="k", dataset="alpaca_eval2", split=s))
    cols = ["study", "dataset", "split", "k", "n_train", "draw", "reconstructor", "rmse"]
    return pd.concat(parts, ignore_index=True)[cols].round({"rmse": 3})


def coverage(big_splits=(0, 1, 2), small_splits=(0, 1, 2, 3, 4), big=("gsm8k", "arc")) -> pd.DataFrame:
    cands = LR.ladder_makers(["line", "mean_ridge", "ridge"])
    cov = pd.concat([LR.coverage_table({n: D.load(n) for n in big}, K, big_splits, n_draws=1, candidates=cands),
                     LR.coverage_table({"alpaca_eval2": D.load("alpaca_eval2")}, K, small_splits, n_draws=1,
                                       candidates=cands)], ignore_index=True)
    return cov.drop(columns=["calibration"]).round({"coverage": 4, "width": 3, "test_rmse": 3, "q": 4})


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="one slice of each table, printed only")
    args = ap.parse_args(argv)
    if args.quick:
        print(grid([10, 100], [10], 1, (0,)).to_string(index=False))
        print(coverage((0,), (0,), ("gsm8k",)).to_string(index=False))
        return 0
    for name, df in (("reconstruction_grid", grid()), ("reconstruction_coverage", coverage())):
        write_table(df, ROOT / "results" / f"{name}.csv", META[name])
        print(name, len(df), "rows")
    return 0


if __name__ == "__main__":
    from essence.data.pinning import ensure

    ensure()  # the same numbers on any machine (essence/data/pinning.py)
    raise SystemExit(main())
