"""The frontier protocol on whole benchmarks: the default against the audit's baselines, random and extrapolation
splits.

For each Open LLM Leaderboard v2 benchmark (every item; Zhang, Dorner & Hardt's data) and k = 50: the sweep runs
``auto`` (the default) and the baselines (random items + mean, + line, + ridge, AIPW) under five seeds, on random
splits (20 % of the models held out, stratified) and on the extrapolation splits of ``--splits``
(:func:`essence.data.split_models`): ``top`` (the strongest 20 % held out: every test model is better than every
reference model), ``bottom`` (the weakest 20 %), ``far`` (the strongest 20 %, references only the weakest 60 %) and
``chance`` (the strongest 20 %, references only the models near the benchmark's floor). Writes
``RESULTS/frontier.csv`` (one row per benchmark x split x method: test RMSE mean and sd over seeds in pp, 90 %
interval coverage pooled over seeds) and ``RESULTS/frontier_summary.csv`` (the default against AIPW on each
extrapolation split and against the best baseline on random splits, per benchmark and as a geometric mean; the
default's coverage per split, pooled in the last row), and prints both.

    .venv/bin/python benchmarks/frontier.py            # random top bottom far; the sweep is cached under build/frontier
    .venv/bin/python benchmarks/frontier.py --splits random top bottom far chance
    .venv/bin/python benchmarks/frontier.py --splits bottom random --param side=both --out build/frontier-both
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from essence.data import OPENLLM_V2, SPLIT_KINDS  # noqa: E402
from essence.data.checks import parse_params  # noqa: E402
from essence.sweep import run_sweep  # noqa: E402

METHODS = ("auto", "random_mean", "random_line", "random_ridge", "aipw")
BASELINES = ("random_line", "random_ridge", "aipw")


def _pooled(a: pd.DataFrame) -> float:
    """Coverage pooled over the runs ``a`` (weighted by their test models); NaN for none."""
    return round(float(np.average(a["coverage"], weights=a["n_test"])), 3) if len(a) else np.nan


def tables(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(per method, summary)`` from the sweep's table (columns dataset, split, method, seed, rmse, coverage,
    n_test, ...). Summary: per benchmark, ``SPLIT: auto / aipw`` (mean RMSE over seeds) for every extrapolation split,
    ``random: auto / best baseline`` (mean over seeds of the per-seed ratio), ``SPLIT coverage`` of auto (pooled over
    seeds); the last row: geometric means of the ratios and the coverage pooled over benchmarks."""
    ok = df[df["error"].fillna("") == ""].copy()
    rows = []
    for (ds, split, m), g in ok.groupby(["dataset", "split", "method"], sort=False):
        rows.append({"benchmark": ds, "split": split, "method": m, "seeds": len(g),
                     "rmse": round(g["rmse"].mean(), 3), "rmse_sd": round(g["rmse"].std(ddof=1), 3),
                     "coverage": round(float(np.average(g["coverage"], weights=g["n_test"])), 3)})
    per = pd.DataFrame(rows)
    splits = list(dict.fromkeys(ok["split"]))
    extrap = [sp for sp in splits if sp != "random"]
    ratio_cols = [f"{sp}: auto / aipw" for sp in extrap]
    ratio_cols += ["random: auto / best baseline"] if "random" in splits else []
    summary = []
    for ds, g in ok.groupby("dataset", sort=False):
        row = {"benchmark": ds}
        for sp in extrap:
            m = g[g["split"] == sp].groupby("method")["rmse"].mean()
            row[f"{sp}: auto / aipw"] = round(m["auto"] / m["aipw"], 3) if {"auto", "aipw"} <= set(m.index) else np.nan
        if "random" in splits:
            rnd = g[g["split"] == "random"].pivot_table(index="seed", columns="method", values="rmse")
            best = rnd[list(BASELINES)].min(axis=1)
            row["random: auto / best baseline"] = round(float((rnd["auto"] / best).mean()), 3)
        for sp in splits:
            a = g[(g["split"] == sp) & (g["method"] == "auto")]
            row[f"{sp} coverage"] = _pooled(a)
        summary.append(row)
    s = pd.DataFrame(summary)
    gm = {"benchmark": "geometric mean (coverage: pooled)"}
    for col in ratio_cols:
        v = s[col].dropna()
        gm[col] = round(float(np.exp(np.mean(np.log(v)))), 3) if len(v) else np.nan
    for sp in splits:
        a = ok[(ok["split"] == sp) & (ok["method"] == "auto")]
        gm[f"{sp} coverage"] = _pooled(a)
    return per, pd.concat([s, pd.DataFrame([gm])], ignore_index=True)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--datasets", nargs="+", default=list(OPENLLM_V2))
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3, 4])
    p.add_argument("--k", type=int, default=50)
    p.add_argument("--out", default=str(ROOT / "build" / "frontier"), help="the sweep's cache folder")
    p.add_argument("--results", default=str(ROOT / "results"), help="where the tables are written")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--splits", nargs="+", choices=SPLIT_KINDS, default=["random", "top", "bottom", "far"],
                   help="the split kinds (default: random top bottom far; chance too when named); each holds out "
                        "20 %% of the models")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="a parameter of the default (auto), e.g. side=both (repeatable; use its own --out)")
    args = p.parse_args(argv)
    auto_params = parse_params(args.param) if args.param else {}
    df = run_sweep(args.datasets, list(METHODS), [args.k], args.seeds, args.out, jobs=args.jobs, update=True,
                   progress=True, method_params={"auto": auto_params} if auto_params else None,
                   splits=tuple(args.splits), test=0.2)
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
