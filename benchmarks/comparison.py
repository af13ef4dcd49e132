"""The method comparison: the survey's five methods, the default and the audit's baselines, random and top splits.

Every method of :data:`METHODS` chooses ``k`` items on each dataset of :data:`GROUPS` (metabench's pre-selected
pools, and the four whole Open LLM Leaderboard v2 benchmarks) through :func:`essence.sweep.run_sweep`: random splits
(20 % of the models held out, stratified by score) and the top split (the strongest 20 % held out: every test model
is better than every reference model); every method of a dataset x split x seed gets the same split, and the
reconstructors are the sweep's fixed basic kinds. Runs are cached under ``--out``.

Writes under ``--results``:

* ``comparison_runs.csv``: one row per run (:data:`RUN_COLUMNS`; test RMSE in pp, Kendall tau, coverage of the
  90 % interval, the reconstructor, the first line of a refusal's message);
* ``comparison.csv``: one row per group x split x k x method (:func:`group_table`);
* ``comparison_summary.csv``: per method at the first ``k``, its RMSE over the best baseline per group and split.

    .venv/bin/python benchmarks/comparison.py                 # the table: k = 50, seed 0, DATASETS
    .venv/bin/python benchmarks/comparison.py --quick         # baselines on the openllm_v2 group; nothing written
    .venv/bin/python benchmarks/comparison.py --from-cache    # the tables from the cached runs, stale or not
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# this folder off the path: a script here named like a standard module (selectors.py) must not shadow it
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "benchmarks"]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from essence.data import METABENCH, OPENLLM_V2  # noqa: E402
from essence.methods import METHOD_INFO  # noqa: E402
from essence.sweep import load_runs, run_sweep  # noqa: E402

#: dataset groups, in table order (metabench pools: pre-selected items; openllm_v2: every item of a benchmark)
GROUPS: dict[str, tuple[str, ...]] = {"metabench pools": tuple(METABENCH), "openllm_v2": tuple(OPENLLM_V2)}
GROUP_OF = {d: g for g, ds in GROUPS.items() for d in ds}
#: the committed table's datasets
DATASETS = (*OPENLLM_V2, *METABENCH)
#: the survey's five methods, the default, the audit's baselines (table order)
METHODS = ("kmeans", "herding", "ppl", "irt", "essence", "auto", "random_mean", "random_line", "random_ridge", "aipw")
#: the baselines a method's ratio is taken against (random + mean is never the best of them)
BASELINES = ("random_line", "random_ridge", "aipw")
SPLITS = ("random", "top")
TEST = 0.2
RUN_COLUMNS = ["dataset", "group", "split", "method", "k", "seed", "n_test", "rmse", "kendall", "coverage",
               "reconstructor", "error"]


def run_table(df: pd.DataFrame) -> pd.DataFrame:
    """The per-run table (:data:`RUN_COLUMNS`) from the sweep's table; metrics rounded to 6 decimals."""
    out = df.assign(group=df["dataset"].map(GROUP_OF).fillna("other"), error=df["error"].fillna(""),
                    reconstructor=df["reconstructor"].fillna(""))[RUN_COLUMNS].copy()
    for c in ("rmse", "kendall", "coverage"):
        out[c] = out[c].astype(float).round(6)
    out["error"] = [e.strip().splitlines()[0][:200] if e else "" for e in out["error"]]
    order = {m: i for i, m in enumerate(METHODS)}
    out = out.sort_values(["dataset", "split", "k", "seed", "method"], key=lambda c: c.map(order) if c.name == "method"
                          else c, kind="stable")
    return out.reset_index(drop=True)


def with_ratio(runs: pd.DataFrame) -> pd.DataFrame:
    """``runs`` with ``best_baseline`` (the lowest RMSE of :data:`BASELINES` on the same dataset, split, k and
    seed) and ``ratio`` = rmse / best_baseline (NaN for a refused run)."""
    ok = runs[runs["error"] == ""]
    best = (ok[ok["method"].isin(BASELINES)].groupby(["dataset", "split", "k", "seed"])["rmse"].min()
            .rename("best_baseline"))
    out = runs.join(best, on=["dataset", "split", "k", "seed"])
    out["ratio"] = np.where(out["error"] == "", out["rmse"] / out["best_baseline"], np.nan)
    return out


def _gmean(x) -> float:
    x = np.asarray(x, dtype=float)
    x = x[np.isfinite(x)]
    return float(np.exp(np.mean(np.log(x)))) if len(x) else np.nan


def group_table(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per group x split x k x method: ``datasets`` finished (of those run), ``runs`` finished, mean
    test ``rmse`` (pp) and ``kendall`` over them, ``coverage`` pooled over test models, ``ratio`` (geometric mean
    of :func:`with_ratio`'s ratios) and ``refused`` (the first refusal's message, else empty)."""
    r = with_ratio(runs)
    rows = []
    for group in GROUPS:
        members = set(r.loc[r["group"] == group, "dataset"])
        for split in SPLITS:
            for k in sorted(set(r["k"])):
                for m in METHODS:
                    g = r[(r["group"] == group) & (r["split"] == split) & (r["k"] == k) & (r["method"] == m)]
                    if g.empty:
                        continue
                    ok = g[g["error"] == ""]
                    rows.append({
                        "group": group, "split": split, "k": int(k), "method": m,
                        "datasets": f"{ok['dataset'].nunique()}/{len(members)}", "runs": len(ok),
                        "rmse": round(ok["rmse"].mean(), 3) if len(ok) else np.nan,
                        "kendall": round(ok["kendall"].mean(), 3) if len(ok) else np.nan,
                        "coverage": (round(float(np.average(ok["coverage"], weights=ok["n_test"])), 3)
                                     if len(ok) and ok["coverage"].notna().all() else np.nan),
                        "ratio": round(_gmean(ok["ratio"]), 3),
                        "refused": "" if len(ok) == len(g) else g.loc[g["error"] != "", "error"].iloc[0][:100],
                    })
    return pd.DataFrame(rows)


def summary_table(runs: pd.DataFrame, k: int) -> pd.DataFrame:
    """One row per method (its label) at ``k``: :func:`group_table`'s ``ratio`` per group and split (columns
    ``"<group>, <split>"``)."""
    t = group_table(runs[runs["k"] == k])
    wide = t.pivot(index="method", columns=["group", "split"], values="ratio")
    wide.columns = [f"{g}, {s}" for g, s in wide.columns]
    wide = wide.reindex([m for m in METHODS if m in wide.index])
    wide.index = [METHOD_INFO[m].label for m in wide.index]
    return wide.rename_axis("method").reset_index()


def from_cache(out, datasets, methods, ks, seeds) -> pd.DataFrame:
    """The per-run table of ``datasets`` x ``methods`` x ``ks`` x ``seeds`` from what a sweep left under ``out``, as
    it is (no staleness check, nothing run): finished runs from ``runs/``, refusals from ``errors/``."""
    rows = []
    for (ds, m, k, s), rec in load_runs(out).items():
        test = (rec.get("figures") or {}).get("test") or {}
        rows.append({"dataset": ds, "method": m, "k": k, "seed": s, "n_test": rec.get("n_test"),
                     "rmse": test.get("rmse", np.nan), "kendall": test.get("kendall", np.nan),
                     "coverage": test.get("coverage", np.nan), "reconstructor": rec.get("reconstructor") or "",
                     "error": rec.get("error") or ""})
    for f in sorted((Path(out) / "errors").glob("*.txt")):
        ds, m, k, s = re.fullmatch(r"(.+?)__(.+)__k(\d+)__s(\d+)", f.stem).groups()
        last = [ln for ln in f.read_text().splitlines() if ln.strip()][-1]
        rows.append({"dataset": ds.replace("-top", "@top"), "method": m, "k": int(k), "seed": int(s),
                     "n_test": np.nan, "error": re.sub(r"^(\w+\.)+(?=\w+: )", "", last)})
    df = pd.DataFrame(rows).drop_duplicates(["dataset", "method", "k", "seed"])  # a finished run first
    parts = df["dataset"].str.partition("@")
    df["dataset"], df["split"] = parts[0], parts[2].replace("", "random")
    df["n_test"] = df.groupby(["dataset", "split"])["n_test"].transform("max").astype(int)
    df = df[df["dataset"].isin(datasets) & df["method"].isin(methods) & df["k"].isin(ks) & df["seed"].isin(seeds)]
    return run_table(df)


def sweep(datasets, methods, ks, seeds, out, jobs: int = 1, progress: bool = True) -> pd.DataFrame:
    """The runs (:func:`essence.sweep.run_sweep` on :data:`SPLITS`, test share :data:`TEST`) as :func:`run_table`."""
    df = run_sweep(list(datasets), list(methods), list(ks), list(seeds), out, jobs=jobs, update=True,
                   progress=progress, splits=SPLITS, test=TEST)
    return run_table(df)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--datasets", nargs="+", default=list(DATASETS))
    p.add_argument("--methods", nargs="+", default=list(METHODS))
    p.add_argument("--k", nargs="+", type=int, default=[50])
    p.add_argument("--seeds", nargs="+", type=int, default=[0])
    p.add_argument("--out", default=str(ROOT / "build" / "comparison"), help="the sweep's cache folder")
    p.add_argument("--results", default=str(ROOT / "results"), help="where the tables go ('' = nowhere)")
    p.add_argument("--jobs", type=int, default=1, help="worker processes (1 = this process)")
    p.add_argument("--quick", action="store_true", help="the baselines on openllm_v2, seed 0; nothing written")
    p.add_argument("--from-cache", action="store_true",
                   help="the tables from what the sweep left under --out (stale or not); nothing is run")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    args = p.parse_args(argv)
    if args.quick:
        args.datasets, args.methods, args.seeds, args.results = list(OPENLLM_V2), list(BASELINES), [0], ""
    if args.from_cache:
        runs = from_cache(args.out, args.datasets, args.methods, args.k, args.seeds)
    else:
        runs = sweep(args.datasets, args.methods, args.k, args.seeds, args.out, args.jobs, not args.quiet)
    per, summary = group_table(runs), summary_table(runs, args.k[0])
    if args.results:
        out = Path(args.results)
        runs.to_csv(out / "comparison_runs.csv", index=False)
        per.to_csv(out / "comparison.csv", index=False)
        summary.to_csv(out / "comparison_summary.csv", index=False)
    pd.set_option("display.width", 250)
    print(per.drop(columns="refused").to_string(index=False))
    print()
    print(summary.to_string(index=False))
    print(f"\n{len(runs)} runs, {(runs['error'] != '').sum()} refused")
    return 0


if __name__ == "__main__":
    from essence.data.pinning import ensure

    ensure()  # the same numbers on any machine (essence/data/pinning.py)
    sys.exit(main())
