"""The regime map: the default with few reference models, against the audit's best baseline on the same folds.

Each run draws ``m`` models of a benchmark (seeded), cross-validates over them (every model a test model once) and
compares the method with random items read by a line, by ridge and by AIPW on the same folds and items
(:mod:`essence.lessons.regimes`). Writes ``results/regimes.csv`` (one row per benchmark x m x method: RMSE mean
and sd over draws in pp, the ratio to the best baseline as a geometric mean over draws and its sd, coverage of the
method's own interval) and ``results/regimes_summary.csv`` (per m: the geometric mean of the ratios over the
benchmarks, the largest, the lowest and highest single draw), and prints both. Runs are cached under ``--out``.

    .venv/bin/python benchmarks/regimes.py                              # openllm_v2, 25 / 50 / 100 models, auto
    .venv/bin/python benchmarks/regimes.py --datasets arc gsm8k --models 20 50 100 --methods auto random
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from essence.data import OPENLLM_V2  # noqa: E402
from essence.lessons.regimes import regime_map, summarise  # noqa: E402


def tables(rows: list[dict]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(per benchmark x m x method, per m x method summary)`` from :func:`regime_map`'s records."""
    per = pd.DataFrame([{"benchmark": s["dataset"], "models": s["models"], "method": s["method"], "draws": s["draws"],
                         **({"rmse": round(s["rmse"], 3), "rmse_sd": round(s["rmse_sd"], 3),
                             "best_baseline": round(s["baseline"], 3), "ratio": round(s["ratio"], 3),
                             "ratio_sd": round(s["ratio_sd"], 3), "coverage": round(s.get("coverage", np.nan), 3)}
                            if "refused" not in s else {"refused": s["refused"][:80]})}
                        for s in summarise(rows)])
    draw = {(str(r["models"]), r["method"]): [] for r in rows}
    for r in rows:
        if "ratio" in r:
            draw[(str(r["models"]), r["method"])].append(r["ratio"])
    summary = [{"models": m, "method": meth, "benchmarks": len(g), "ratio (geometric mean)":
                round(float(np.exp(np.mean(np.log(g["ratio"])))), 3), "ratio (largest)": round(float(g["ratio"].max()), 3),
                "draw ratio (lowest)": round(float(min(draw[(str(m), meth)])), 3),
                "draw ratio (highest)": round(float(max(draw[(str(m), meth)])), 3),
                "coverage": round(float(g["coverage"].mean()), 3)}
               for (m, meth), g in per.dropna(subset=["ratio"]).groupby(["models", "method"], sort=False)]
    return per, pd.DataFrame(summary)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--datasets", nargs="+", default=list(OPENLLM_V2))
    p.add_argument("--methods", nargs="+", default=["auto"])
    p.add_argument("--models", nargs="+", default=["25", "50", "100"])
    p.add_argument("--draws", type=int, default=3, help="random model subsets per count")
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--k", type=int, default=None, help="items kept (default 50 on metabench and openllm_v2, else N/20)")
    p.add_argument("--out", default=str(ROOT / "build" / "regimes"), help="cache folder of per-run JSON")
    p.add_argument("--results", default=str(ROOT / "results"), help="where the tables are written ('' = nowhere)")
    args = p.parse_args(argv)
    rows = regime_map(args.datasets, args.models, args.methods, args.draws, args.folds, args.k, args.out)
    per, summary = tables(rows)
    if args.results:
        Path(args.results).mkdir(parents=True, exist_ok=True)
        per.to_csv(Path(args.results) / "regimes.csv", index=False)
        summary.to_csv(Path(args.results) / "regimes_summary.csv", index=False)
    print(per.to_markdown(index=False))
    print()
    print(summary.to_markdown(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
