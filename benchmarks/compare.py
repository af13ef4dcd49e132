"""Paired comparisons from the compressed items: is the interval on a difference honest, narrow and decisive?

For each Open LLM Leaderboard v2 benchmark (every item), k = 50, five seeds, on random splits (20 % of the models
held out, stratified) and the top split (the strongest 20 % held out): the default (``auto``) is compressed on the
references, and every pair of held-out models is compared with :func:`essence.artifact.compare.compare`. Against
the truth (the difference of their full scores) it reports the 90 % interval's coverage and mean width (pp), the
same for what a user would do otherwise (both models on the same k random items, a paired t interval on the
mean difference, finite-population corrected), and the verdicts at a margin of 1 pp: the share of pairs whose
true difference exceeds 2 pp that are called ``equivalent``, and the share of all pairs given the wrong
direction. Near-equal pairs (true difference under 1 pp: the gate's real case) get their own coverage and width.

Then refitting (``essence refit``) on the top split: half of the held-out strongest models (every other one by
score) join the references, the other half are the new models; their RMSE before and after.

Writes ``results/compare.csv`` (benchmark x split, pooled over seeds; ``compare_summary.csv``: the README's
columns), ``results/compare_refit.csv`` and prints them.

    .venv/bin/python benchmarks/compare.py
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from essence import compress  # noqa: E402
from essence.artifact.compare import compare  # noqa: E402
from essence.artifact.refit import refit  # noqa: E402
from essence.data import OPENLLM_V2, load, split_models  # noqa: E402

MARGIN = 1.0
def short_table(table: pd.DataFrame) -> pd.DataFrame:
    """The README's table: one row per benchmark (pooled last), random and top side by side."""
    rows = []
    for b, g in table.groupby("benchmark", sort=False):
        r, t = g.set_index("split").loc["random"], g.set_index("split").loc["top"]
        rows.append({"benchmark": b, "random: coverage": r["coverage"], "random: width / random items":
                     r["width / random"], "top: coverage": t["coverage"], "top: width / random items":
                     t["width / random"], "equivalent, apart > 2 pp": max(r["equivalent | >2 pp"],
                                                                          t["equivalent | >2 pp"]),
                     "wrong direction": max(r["wrong direction"], t["wrong direction"])})
    return pd.DataFrame(rows)


def random_pairs(data, ia, ib, k: int, seed: int, level: float = 0.9) -> tuple[np.ndarray, np.ndarray]:
    """``(lower, upper)`` pp of the paired t interval on the difference b - a from the same ``k`` random items."""
    rng = np.random.default_rng(10_000 + seed)
    items = np.sort(rng.choice(data.n_items, k, replace=False))
    D = 100.0 * (data.responses[ib][:, items] - data.responses[ia][:, items])
    n = (~np.isnan(D)).sum(axis=1)
    mean, sd = np.nanmean(D, axis=1), np.nanstd(D, axis=1, ddof=1)
    half = stats.t.ppf(0.5 + level / 2, n - 1) * sd / np.sqrt(n) * np.sqrt(1 - n / data.n_items)
    return mean - half, mean + half


def pair_rows(name: str, kind: str, seed: int, k: int) -> pd.DataFrame:
    data = load(name)
    sp = split_models(data, test=0.2, seed=seed, kind=kind)
    art = compress(data, k=k, method="auto", seed=seed, split=sp, progress=False)
    test = data.subset(models=sp.test)
    df = compare(art, test, margin=MARGIN)
    pos = {m: i for i, m in enumerate(test.models)}
    ia = np.array([pos[m] for m in df["a"]])
    ib = np.array([pos[m] for m in df["b"]])
    df["truth"] = test.target[ib] - test.target[ia]
    df["random_lower"], df["random_upper"] = random_pairs(test, ia, ib, k, seed)
    df["benchmark"], df["split"], df["seed"] = name, kind, seed
    return df


def summary(df: pd.DataFrame) -> pd.DataFrame:
    rows = []
    groups = [((b, s), g) for (b, s), g in df.groupby(["benchmark", "split"], sort=False)]
    groups += [(("pooled", s), g) for s, g in df.groupby("split", sort=False)]
    for (b, s), g in groups:
        cov = (g["lower"] <= g["truth"]) & (g["truth"] <= g["upper"])
        rcov = (g["random_lower"] <= g["truth"]) & (g["truth"] <= g["random_upper"])
        width, rwidth = g["upper"] - g["lower"], g["random_upper"] - g["random_lower"]
        far, close = g["truth"].abs() > 2 * MARGIN, g["truth"].abs() < MARGIN
        wrong = ((g["verdict"] == "better") & (g["truth"] < 0)) | ((g["verdict"] == "worse") & (g["truth"] > 0))
        rows.append({"benchmark": b, "split": s, "pairs": len(g), "coverage": round(cov.mean(), 3),
                     "width": round(width.mean(), 2), "random coverage": round(rcov.mean(), 3),
                     "random width": round(rwidth.mean(), 2), "width / random": round(width.mean() / rwidth.mean(), 3),
                     "equivalent | >2 pp": round((g.loc[far, "verdict"] == "equivalent").mean(), 3),
                     "wrong direction": round(wrong.mean(), 3),
                     "decided": round((g["verdict"] != "undecided").mean(), 3),
                     "close pairs": int(close.sum()), "close coverage": round(cov[close].mean(), 3),
                     "close width": round(width[close].mean(), 2),
                     "close random width": round(rwidth[close].mean(), 2),
                     "paired calibration": round((g["calibration"] != "independent").mean(), 3)})
    return pd.DataFrame(rows)


def refit_rows(name: str, seed: int, k: int) -> dict:
    """RMSE (pp) of half the strongest models before and after the other half join the references."""
    data = load(name)
    sp = split_models(data, test=0.2, seed=seed, kind="top")
    art = compress(data, k=k, method="auto", seed=seed, split=sp, progress=False)
    top = sp.test[np.argsort(data.target[sp.test])]
    added, new = top[::2], top[1::2]
    refs = data.subset(models=np.sort(np.r_[sp.train, sp.val, added]))
    newer = refit(art, refs)
    fresh = data.subset(models=new)
    before, after = art.evaluate(fresh), newer.evaluate(fresh)
    return {"benchmark": name, "seed": seed, "new models": len(new), "rmse before": before["rmse"],
            "rmse after": after["rmse"], "coverage before": before["coverage"], "coverage after": after["coverage"]}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--datasets", nargs="+", default=list(OPENLLM_V2))
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3, 4])
    p.add_argument("--k", type=int, default=50)
    p.add_argument("--results", default=str(ROOT / "results"))
    args = p.parse_args(argv)
    import warnings

    from tqdm.auto import tqdm

    warnings.filterwarnings("ignore")
    runs = [(n, s, sd) for n in args.datasets for s in ("random", "top") for sd in args.seeds]
    pairs = pd.concat([pair_rows(n, s, sd, args.k) for n, s, sd in tqdm(runs, desc="compare")], ignore_index=True)
    table = summary(pairs)
    refits = pd.DataFrame([refit_rows(n, sd, args.k) for n in tqdm(args.datasets, desc="refit") for sd in args.seeds])
    ref = refits.groupby("benchmark", sort=False).agg(
        {"new models": "sum", "rmse before": "mean", "rmse after": "mean", "coverage before": "mean",
         "coverage after": "mean"}).round(3).reset_index()
    out = Path(args.results)
    out.mkdir(parents=True, exist_ok=True)
    table.to_csv(out / "compare.csv", index=False)
    short_table(table).to_csv(out / "compare_summary.csv", index=False)
    ref.to_csv(out / "compare_refit.csv", index=False)
    print(table.to_markdown(index=False))
    print()
    print(ref.to_markdown(index=False))
    return 0


if __name__ == "__main__":
    from essence.data.pinning import ensure

    ensure()  # the same numbers on any machine (essence/data/pinning.py)
    sys.exit(main())
