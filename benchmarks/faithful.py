"""Faithfulness check of the K-Means and tinyBenchmarks methods against their paper's setting.

tinyBenchmarks (Maia Polo et al., 2024) estimates a model's accuracy on the **item pool** it clustered,
with no regression: the anchor-weighted mean, p-IRT and gp-IRT. It reports MAE against that pool
accuracy (1-2 pp at k = 100 on pools of 1,000-14,000 items). Our comparison scores every method
against the **whole-benchmark** target (on the metabench pools a pre-selected 100-486-item pool is not
the benchmark) and against random items *with* a fitted reconstructor. This script measures both, on
held-out test models (the split of :func:`essence.data.split_models`), with
:func:`essence.lessons.selectors.faithful_run`:

* ``pool`` columns: MAE (pp) against each test model's pool accuracy, the paper's quantity: random items'
  plain mean, the K-Means anchors' cluster-weighted mean, p-IRT and gp-IRT;
* ``target`` columns: RMSE (pp) against the benchmark target: random items + a line (the baseline), the
  ``random`` method (CV-chosen reconstructor), the anchor-weighted mean and gp-IRT as they are
  (uncalibrated), and what the methods ``kmeans`` and ``tinybench`` choose by cross-validation.

    .venv/bin/python benchmarks/faithful.py                         # 5 pools x k 50 100 x seeds 0 1 2
    .venv/bin/python benchmarks/faithful.py --datasets arc --k 50 --seeds 0

Per-run results are cached under ``--out`` (default ``build/faithful/``; delete to recompute).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from essence.data import METABENCH, POOL_CAVEAT, load  # noqa: E402
from essence.lessons.selectors import FAITHFUL_COLUMNS, faithful_run, faithful_table  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", nargs="+", default=list(METABENCH))
    ap.add_argument("--k", nargs="+", type=int, default=[50, 100])
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    ap.add_argument("--out", default="build/faithful", help="cache folder of per-run JSON")
    args = ap.parse_args(argv)
    print(f"note: {POOL_CAVEAT}\nMAE against the pool accuracy and RMSE against the target, pp, held-out test "
          f"models, mean over seeds {args.seeds}")
    recs = []
    for k in args.k:
        for name in args.datasets:
            t0 = time.time()
            data = load(name)
            recs += [faithful_run(data, k, s, cache_dir=args.out) for s in args.seeds]
            print(f"  {name} k={k} ({time.time() - t0:.0f} s)", file=sys.stderr, flush=True)
    tab = faithful_table(recs)
    print("| dataset | k | " + " | ".join(FAITHFUL_COLUMNS) + " | gp lambda | mean abs(pool - target) |")
    print("|---|---|" + "---|" * (len(FAITHFUL_COLUMNS) + 2))
    for (name, k), row in tab.iterrows():
        cells = " | ".join(f"{row[c]:.2f}" for c in FAITHFUL_COLUMNS)
        print(f"| {name} | {k} | {cells} | {row['gp_lambda']:.2f} | {row['pool minus target (pp)']:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
