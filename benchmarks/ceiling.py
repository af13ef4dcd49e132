"""How far can item selection go? The GA with ridge fitness scored on different model sets, and an oracle.

For each dataset, k and seed (the seed drives the model split and the GA), the same genetic search
(:func:`essence.search.genetic.genetic_search`, population 200, 300 generations) runs with ridge fitness
(:class:`essence.search.genetic.RidgeFitness`, ridge fitted on the training models) scored on

* ``train``  : the training models, in sample (EssenceBench's default fitness);
* ``val``    : the validation models;
* ``oracle`` : the **test** models themselves. Not a method: it shows how much of a low test error is
  reachable only by tuning the subset to the very models it is measured on.

and, for reference, ``random``: the mean over 200 uniform random k-subsets. Each chosen subset is then
scored on all three model sets (ridge fitted on the training models, the same penalty). A subset chosen on
one set and measured on another is an honest figure; one measured on the set it was chosen on is not.
If the oracle's test error is far below its validation error, the gap between an honest selection and the
oracle is selection noise (which models happen to be in the set), not a search that stopped too early.

    .venv/bin/python benchmarks/ceiling.py                          # gsm8k, k = 50, seeds 0,1,2
    .venv/bin/python benchmarks/ceiling.py --datasets gsm8k,mmlu --k 50,100
"""

from __future__ import annotations

import argparse
import inspect
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from essence.data import POOL_CAVEAT, load, split_models  # noqa: E402
from essence.methods.essence import EssenceSelector  # noqa: E402
from essence.search.genetic import RidgeFitness, genetic_search, random_masks  # noqa: E402

SETS = ("train", "val", "test")
DEFAULT_ALPHA = inspect.signature(EssenceSelector).parameters["ridge_alpha"].default


def ceiling_rows(data, k: int, seed: int, alpha: float, population: int = 200, generations: int = 300) -> list[dict]:
    """One row per fitness set (``random``, ``train``, ``val``, ``oracle``): RMSE (pp) of the chosen subset's
    ridge on the training, validation and test models."""
    if k >= data.n_items:
        raise ValueError(f"k: {k} must be smaller than the {data.n_items} items")
    split = dict(zip(SETS, split_models(data, seed=seed)))
    R, y = data.responses, data.target
    tr = split["train"]
    judges = {name: RidgeFitness(R[tr], y[tr], None if name == "train" else R[ix], None if name == "train" else y[ix],
                                 alpha=alpha)
              for name, ix in split.items()}
    M = R.shape[1]
    masks = random_masks(200, M, k, np.random.default_rng(seed))
    rows = [{"fitness": "random", **{s: float(np.mean(-judges[s](masks))) for s in SETS}}]
    for label, judge in (("train", "train"), ("val", "val"), ("oracle", "test")):
        ga = genetic_search(None, None, None, None, k, population=int(population), generations=int(generations),
                            elites=20, seed=seed, progress=False, fitness=judges[judge])
        mask = np.zeros((1, M), dtype=bool)
        mask[0, ga.best] = True
        rows.append({"fitness": label, **{s: float(-judges[s](mask)[0]) for s in SETS}})
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="gsm8k", help="comma-separated dataset names")
    ap.add_argument("--k", default="50", help="comma-separated budgets")
    ap.add_argument("--seeds", default="0,1,2", help="comma-separated seeds")
    ap.add_argument("--alpha", type=float, default=DEFAULT_ALPHA, help="ridge penalty (default: EssenceSelector's)")
    ap.add_argument("--population", type=int, default=200, help="GA population")
    ap.add_argument("--generations", type=int, default=300, help="GA generations")
    args = ap.parse_args(argv)
    t_all = time.perf_counter()
    seeds = [int(s) for s in args.seeds.split(",")]
    print(f"Ridge RMSE (pp) of the GA's subset, fitted on training models, by the models it is measured on; "
          f"mean over seeds {seeds}, ridge_alpha={args.alpha}")
    print(f"{'dataset':12s} {'k':>4s} {'chosen on':>10s} | {'train':>6s} {'val':>6s} {'test':>6s}")
    for name in args.datasets.split(","):
        data = load(name)
        for k in (int(v) for v in args.k.split(",")):
            if k >= data.n_items:
                continue
            per_seed = [ceiling_rows(data, k, s, args.alpha, args.population, args.generations) for s in seeds]
            for i, row in enumerate(per_seed[0]):
                vals = {s: np.mean([rows[i][s] for rows in per_seed]) for s in SETS}
                honest = {"random": "", "train": "val, test honest", "val": "train, test honest",
                          "oracle": "train, val honest"}[row["fitness"]]
                print(f"{name:12s} {k:4d} {row['fitness']:>10s} | {vals['train']:6.3f} {vals['val']:6.3f} "
                      f"{vals['test']:6.3f}   {honest}")
    print(f"\nCaveat: {POOL_CAVEAT}")
    print(f"(total {time.perf_counter() - t_all:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
