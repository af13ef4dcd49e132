"""Does MetaBench's IRT selection lose to random items on GSM8K because it spends items at the floor?
-> ``results/irt_hypothesis.csv``.

:func:`essence.lessons.irt.hypothesis_runs` on the GSM8K metabench pool (pre-selected items) at k = 50: per
split, the items of MetaBench's rule, of two variants that spend no item at the floor, and of random draws,
each read by the same GAM; test RMSE (pp) overall and split at the floor (5 pp).

    .venv/bin/python benchmarks/irt_hypothesis.py                    # splits 0 1 2, 10 random draws each
    .venv/bin/python benchmarks/irt_hypothesis.py --splits 0 --random 3 --csv ""   # print one slice
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from essence.data import load  # noqa: E402
from essence.data._io import write_table  # noqa: E402
from essence.lessons.irt import hypothesis_runs  # noqa: E402

META = {"title": "MetaBench's IRT items against random ones under the same GAM (GSM8K, k = 50)", "order": 24,
        "command": ".venv/bin/python benchmarks/irt_hypothesis.py",
        "caption": "Test RMSE in pp per split and selection (random: one row per draw), overall, for test models "
                   "scoring below 5 pp (floor) and the rest (above). gsm8k is a metabench pool (pre-selected items)."}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--splits", nargs="+", type=int, default=[0, 1, 2])
    ap.add_argument("--random", type=int, default=10, help="random draws per split")
    ap.add_argument("--csv", default=str(ROOT / "results" / "irt_hypothesis.csv"), help='"" prints only')
    args = ap.parse_args(argv)
    df = hypothesis_runs(load("gsm8k"), 50, args.splits, n_random=args.random, floor=5.0)
    df = df.round({"rmse": 3, "rmse_floor": 3, "rmse_above": 3})
    print(df.to_string(index=False))
    if args.csv:
        write_table(df, args.csv, META)
    return 0


if __name__ == "__main__":
    from essence.data.pinning import ensure

    ensure()  # the same numbers on any machine (essence/data/pinning.py)
    raise SystemExit(main())
