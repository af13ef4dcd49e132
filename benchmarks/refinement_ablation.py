"""EssenceBench's ablation on GSM8K: filter (tau_rank = 0.7) and refinement, each on or off, at k = 25 and 100.

Four variants of ``essence`` (:func:`essence.lessons.stages.ablation_variants`, reduced search settings) over five
seeds (seed s: split s and selector seed s, the same for every variant). Writes ``results/refinement_ablation.csv``
(one row per variant x k x seed: test RMSE in pp and Kendall tau) and ``results/refinement_rounds.csv`` (the
variant without the filter: the fitness and the validation RMSE of the best subset after the GA and after each
refinement round, pp). Notebook 04 reads both and reruns one seed.

    .venv/bin/python benchmarks/refinement_ablation.py     # the runs are cached under build/refinement_ablation
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from essence.lessons import stages as L  # noqa: E402

DATASET = "gsm8k"
TRACED = "no filter + refinement"


def run(ks, seeds, variants, out, jobs: int = 1) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(runs, rounds)``: the two tables for ``variants`` (labels of :func:`ablation_variants`)."""
    chosen = {v: p for v, p in L.ablation_variants().items() if v in variants}
    table = L.ablation(DATASET, chosen, ks, seeds, Path(out), jobs=jobs)
    failed = table[table["error"].fillna("") != ""]
    if not failed.empty:
        raise SystemExit(failed[["variant", "k", "seed", "error"]].to_string())
    runs = table[["variant", "k", "seed", "rmse", "kendall"]].round({"rmse": 4, "kendall": 4})
    rounds = pd.DataFrame(columns=["k", "seed", "stage", "step", "fitness_rmse", "val_rmse"])
    if TRACED in chosen:
        t = L.ablation_traces(DATASET, Path(out) / TRACED)
        rounds = t[t["k"].isin(ks) & t["seed"].isin(seeds)].drop(columns="pool").round({"fitness_rmse": 4, "val_rmse": 4})
    return runs.reset_index(drop=True), rounds.reset_index(drop=True)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ks", nargs="+", type=int, default=[25, 100])
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3, 4])
    p.add_argument("--variants", nargs="+", default=list(L.ablation_variants()))
    p.add_argument("--out", default=str(ROOT / "build" / "refinement_ablation"), help="the sweep's cache folder")
    p.add_argument("--results", default=str(ROOT / "results"), help="where the tables are written")
    p.add_argument("--jobs", type=int, default=1)
    args = p.parse_args(argv)
    runs, rounds = run(args.ks, args.seeds, args.variants, args.out, args.jobs)
    out = Path(args.results)
    out.mkdir(parents=True, exist_ok=True)
    runs.to_csv(out / "refinement_ablation.csv", index=False)
    rounds.to_csv(out / "refinement_rounds.csv", index=False)
    print(runs.to_markdown(index=False))
    return 0


if __name__ == "__main__":
    from essence.data.pinning import ensure

    ensure()  # the same numbers on any machine (essence/data/pinning.py)
    sys.exit(main())
