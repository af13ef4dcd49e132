"""The frontier protocol on whole benchmarks: the default against the audit's baselines, on random and top splits.

For each Open LLM Leaderboard v2 benchmark (every item; Zhang, Dorner & Hardt's data) and k = 50: the sweep runs
``auto`` (the default) and the baselines (random items + mean, + line, + ridge, AIPW) under five seeds, on random
splits (20 % of the models held out, stratified) and on the top split (the strongest 20 % held out: every test
model is better than every reference model). Writes ``results/frontier.csv`` (one row per benchmark x split x
method: test RMSE mean and sd over seeds in pp, 90 % interval coverage pooled over seeds, the share of test
models judged outside the references) and ``results/frontier_summary.csv`` (the default against AIPW on the top
split and against the best baseline on random splits, per benchmark and as a geometric mean), and prints both.

    .venv/bin/python benchmarks/frontier.py            # the sweep is cached under build/frontier
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
from essence.sweep import run_sweep  # noqa: E402

METHODS = ("auto", "random_mean", "random_line", "random_ridge", "aipw")
BASELINES = ("random_line", "random_ridge", "aipw")


def tables(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(per method, summary)`` from the sweep's table (columns dataset, split, method, seed, rmse, coverage,
    n_test, ...)."""
    ok = df[df["error"].fillna("") == ""].copy()
    rows = []
    for (ds, split, m), g in ok.groupby(["dataset", "split", "method"], sort=False):
        rows.append({"benchmark": ds, "split": split, "method": m, "seeds": len(g),
                     "rmse": round(g["rmse"].mean(), 3), "rmse_sd": round(g["rmse"].std(ddof=1), 3),
                     "coverage": round(float(np.average(g["coverage"], weights=g["n_test"])), 3)})
    per = pd.DataFrame(rows)
    summary = []
    for ds, g in ok.groupby("dataset", sort=False):
        top = g[g["split"] == "top"].groupby("method")["rmse"].mean()
        rnd = g[g["split"] == "random"].pivot_table(index="seed", columns="method", values="rmse")
        summary.append({"benchmark": ds, "top: auto / aipw": round(top["auto"] / top["aipw"], 3),
                        "random: auto / best baseline": round(float((rnd["auto"] / rnd[list(BASELINES)].min(axis=1)).mean()), 3),
                        "top coverage": round(float(np.average(g[(g["split"] == "top") & (g["method"] == "auto")]["coverage"])), 3),
                        "random coverage": round(float(np.average(g[(g["split"] == "random") & (g["method"] == "auto")]["coverage"])), 3)})
    s = pd.DataFrame(summary)
    gm = {"benchmark": "geometric mean (coverage: pooled)"}
    for col in ("top: auto / aipw", "random: auto / best baseline"):
        gm[col] = round(float(np.exp(np.mean(np.log(s[col])))), 3)
    for col, split in (("top coverage", "top"), ("random coverage", "random")):
        a = ok[(ok["split"] == split) & (ok["method"] == "auto")]
        gm[col] = round(float(np.average(a["coverage"], weights=a["n_test"])), 3)
    return per, pd.concat([s, pd.DataFrame([gm])], ignore_index=True)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--datasets", nargs="+", default=list(OPENLLM_V2))
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3, 4])
    p.add_argument("--k", type=int, default=50)
    p.add_argument("--out", default=str(ROOT / "build" / "frontier"), help="the sweep's cache folder")
    p.add_argument("--results", default=str(ROOT / "results"), help="where the tables are written")
    p.add_argument("--jobs", type=int, default=2)
    args = p.parse_args(argv)
    df = run_sweep(args.datasets, list(METHODS), [args.k], args.seeds, args.out, jobs=args.jobs, update=True,
                   progress=True, splits=("random", "top"), test=0.2)
    per, summary = tables(df)
    out = Path(args.results)
    out.mkdir(parents=True, exist_ok=True)
    per.to_csv(out / "frontier.csv", index=False)
    summary.to_csv(out / "frontier_summary.csv", index=False)
    print(per.to_markdown(index=False))
    print()
    print(summary.to_markdown(index=False))
    return 0


if __name__ == "__main__":
    from essence.data.pinning import ensure

    ensure()  # the same numbers on any machine (essence/data/pinning.py)
    sys.exit(main())
