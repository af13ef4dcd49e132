"""The fallback sample: what a second stage of random items buys a model the references say nothing about.

For each Open LLM Leaderboard v2 benchmark (every item), k = 50, five seeds and the splits of
:func:`essence.data.split_models` (``random``, ``top``, ``bottom``, ``far``, ``chance``; 20 % held out): the default
(``auto``) is compressed on the references and every held-out model answers the chosen items (stage one). A model
the estimate places outside the references also answers the fallback sample (``k`` items drawn uniformly at random
from the others, recorded in the artifact) and gets its first estimate combined with the sample's design-based one
(stage two; :meth:`essence.reconstructors.frontier.FrontierReconstructor.predict_interval`).
Reported per benchmark and split: the test RMSE (pp, mean over seeds) of stage one alone, of the two stages, of AIPW
on ``k`` random items (the audit's baseline at the same first budget) and on ``2 k`` (the same items as a model that
runs both stages), the share of test models that ran the second stage, the items a test model answered on average,
and the 90 % coverage of stage one and of both (pooled over seeds).

Writes ``RESULTS/fallback.csv`` and ``RESULTS/fallback_summary.csv`` (per split: geometric means of the ratios over
the benchmarks, the largest, the means of the rest) and prints both. Runs are cached under ``--out`` (keyed by the
code behind them).

    .venv/bin/python benchmarks/fallback.py
    .venv/bin/python benchmarks/fallback.py --datasets ifeval --splits far --seeds 0
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from essence.data import OPENLLM_V2, SPLIT_KINDS, load, split_models  # noqa: E402
from essence.data._io import write_atomic  # noqa: E402
from essence.methods import AIPWSelector, AutoSelector  # noqa: E402
from essence.sweep.signatures import code_version, module_version  # noqa: E402


def run_one(d, split: str, seed: int, k: int) -> dict:
    """One benchmark x split x seed: per test model (lists) the truth, stage one's and both stages' estimate and
    bounds (pp), whether the second stage ran, and AIPW's estimate on ``k`` and ``2 k`` random items."""
    tr, va, te = split_models(d, seed=seed, kind=split, test=0.2)
    train, val = d.subset(tr), d.subset(va)
    sel = AutoSelector(k=k, seed=seed, progress=False).fit(train, val)
    rec = sel.reconstructor_
    R = d.responses[te]
    one = rec.predict_interval(R[:, sel.items_])
    two = rec.predict_interval(R[:, sel.items_], R[:, np.asarray(rec.fallback, dtype=np.intp)])
    out = {"y": d.target[te], "est1": one["estimate"], "lo1": one["lower"], "hi1": one["upper"],
           "est2": two["estimate"], "lo2": two["lower"], "hi2": two["upper"], "stage2": two["fallback"]}
    for name, kk in (("aipw_k", k), ("aipw_2k", 2 * k)):
        a = AIPWSelector(k=kk, seed=seed, progress=False).fit(train, val)
        out[name] = a.reconstructor_.predict(R[:, a.items_])
    return {key: np.asarray(v, dtype=np.float64).round(6).tolist() for key, v in out.items()}


def table(runs: dict, k: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(per benchmark, summary)`` from ``runs`` ``{(benchmark, split, seed): run_one's dict}``: one row per
    benchmark x split; one row per split with the geometric means of the ratios over the benchmarks, the largest
    ratio of the two stages to AIPW, and the other columns' means over the benchmarks."""
    rows = []
    rm = lambda e: float(np.sqrt(np.mean(np.square(e))))  # noqa: E731
    for (b, sp) in dict.fromkeys((b, sp) for b, sp, _ in runs):
        rs = [{key: np.asarray(v) for key, v in r.items()} for (b_, sp_, _), r in runs.items() if (b_, sp_) == (b, sp)]
        e = {m: np.mean([rm(r[m] - r["y"]) for r in rs]) for m in ("est1", "est2", "aipw_k", "aipw_2k")}
        cat = {key: np.concatenate([r[key] for r in rs]) for key in ("y", "lo1", "hi1", "lo2", "hi2", "stage2")}
        share = float(cat["stage2"].mean())
        rows.append({"benchmark": b, "split": sp, "stage one": round(e["est1"], 3), "two stages": round(e["est2"], 3),
                     "aipw k": round(e["aipw_k"], 3), "aipw 2k": round(e["aipw_2k"], 3),
                     "stage one / aipw k": round(e["est1"] / e["aipw_k"], 3),
                     "two stages / aipw k": round(e["est2"] / e["aipw_k"], 3),
                     "two stages / aipw 2k": round(e["est2"] / e["aipw_2k"], 3),
                     "stage two share": round(share, 3), "items per model": round(k * (1 + share), 1),
                     **{f"coverage {name}": round(float(np.mean((cat[lo] <= cat["y"]) & (cat["y"] <= cat[hi]))), 3)
                        for name, lo, hi in (("stage one", "lo1", "hi1"), ("two stages", "lo2", "hi2"))}})
    df = pd.DataFrame(rows)
    gm = []
    for sp, g in df.groupby("split", sort=False):
        row = {"split": sp}
        for col in ("stage one / aipw k", "two stages / aipw k", "two stages / aipw 2k"):
            row[col] = round(float(np.exp(np.log(g[col]).mean())), 3)
        row["worst two stages / aipw k"] = float(g["two stages / aipw k"].max())
        for col in ("stage two share", "items per model", "coverage stage one", "coverage two stages"):
            row[col] = round(float(g[col].mean()), 3 if "items" not in col else 1)
        gm.append(row)
    return df, pd.DataFrame(gm)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--datasets", nargs="+", default=list(OPENLLM_V2))
    p.add_argument("--splits", nargs="+", choices=SPLIT_KINDS, default=["random", "top", "bottom", "far", "chance"])
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3, 4])
    p.add_argument("--k", type=int, default=50)
    p.add_argument("--out", default=str(ROOT / "build" / "fallback"), help="the runs' cache folder")
    p.add_argument("--results", default=str(ROOT / "results"), help="where fallback.csv is written")
    args = p.parse_args(argv)
    from tqdm.auto import tqdm

    version = f"{code_version('auto')}|{module_version('essence.reconstructors.forward')}"
    cache = Path(args.out)
    cache.mkdir(parents=True, exist_ok=True)
    runs = {}
    todo = [(b, sp, s) for b in args.datasets for sp in args.splits for s in args.seeds]
    data = {}
    for b, sp, s in tqdm(todo, desc="fallback"):
        path = cache / f"{b}-{sp}-k{args.k}-seed{s}.json"
        rec = json.loads(path.read_text()) if path.exists() else None
        if rec is None or rec.get("version") != version:
            d = data.setdefault(b, load(b))
            rec = {"version": version, **run_one(d, sp, s, args.k)}
            write_atomic(path, json.dumps(rec), overwrite=True)
        runs[b, sp, s] = {key: v for key, v in rec.items() if key != "version"}
    per, summary = table(runs, args.k)
    out = Path(args.results)
    out.mkdir(parents=True, exist_ok=True)
    per.to_csv(out / "fallback.csv", index=False)
    summary.to_csv(out / "fallback_summary.csv", index=False)
    print(per.to_markdown(index=False))
    print()
    print(summary.to_markdown(index=False))
    return 0


if __name__ == "__main__":
    from essence.data.pinning import ensure

    ensure()  # the same numbers on any machine (essence/data/pinning.py)
    sys.exit(main())
