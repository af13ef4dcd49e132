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

``--train-fractions`` adds a learning curve: the same GA with in-sample ridge fitness on nested random
fractions of the training models (validation and test models unchanged), its subset's test RMSE next to
random subsets' (ridge fitted on the same fraction), and both extrapolated to unlimited training models by
a least-squares fit ``rmse = a + b / sqrt(n_train)`` (``a`` is printed). The ``1/sqrt(n)`` form is the
rate at which the optimism of picking the best of many subsets on ``n`` models shrinks; a curve that
flattens above a target says more training models would not reach it either.

    .venv/bin/python benchmarks/ceiling.py                          # gsm8k, k = 50, seeds 0,1,2
    .venv/bin/python benchmarks/ceiling.py --datasets gsm8k,mmlu --k 50,100
    .venv/bin/python benchmarks/ceiling.py --datasets gsm8k --train-fractions 0.125,0.25,0.5,1
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from essence.data import POOL_CAVEAT, load, split_models  # noqa: E402
from essence.data.metrics import ratio_to_random  # noqa: E402
from essence.search.fitness import FitnessConfig  # noqa: E402
from essence.search.fitness import RidgeFitness  # noqa: E402
from essence.search.genetic import GAConfig, genetic_search, random_masks  # noqa: E402

SETS = ("train", "val", "test")
DEFAULT_ALPHA = FitnessConfig().ridge_alpha


def _check_k(data, k: int) -> None:
    if k >= data.n_items:
        raise ValueError(f"k: {k} must be smaller than the {data.n_items} items")


def _ga_mask(fitness, k: int, n_items: int, seed: int, population: int, generations: int) -> np.ndarray:
    """``(1, n_items)`` bool: the best k-subset of the GA (20 elites, no progress bar) under ``fitness``."""
    ga = genetic_search(fitness, k, GAConfig(population=int(population), generations=int(generations), elites=20), seed=seed, progress=False)
    mask = np.zeros((1, n_items), dtype=bool)
    mask[0, ga.best] = True
    return mask


def ceiling_rows(data, k: int, seed: int, alpha: float, population: int = 200, generations: int = 300) -> list[dict]:
    """One row per fitness set (``random``, ``train``, ``val``, ``oracle``): RMSE (pp) of the chosen subset's
    ridge on the training, validation and test models."""
    _check_k(data, k)
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
        mask = _ga_mask(judges[judge], k, M, seed, population, generations)
        rows.append({"fitness": label, **{s: float(-judges[s](mask)[0]) for s in SETS}})
    return rows


def learning_curve_rows(data, k: int, seed: int, alpha: float, fractions, population: int = 200,
                        generations: int = 300) -> list[dict]:
    """One row per fraction ``f`` of the training models (nested: each fraction's models contain the smaller
    ones'): ``n_train``, the RMSE (pp) of the GA's subset (in-sample ridge fitness on those models) on them
    (``train``), on the validation models (``val``) and on the test models (``test``), and the mean test RMSE
    of 200 random k-subsets with ridge fitted on the same models (``random``)."""
    _check_k(data, k)
    fractions = [float(f) for f in fractions]
    if not fractions or any(not 0 < f <= 1 for f in fractions):
        raise ValueError(f"fractions: {fractions} must each be in (0, 1]")
    tr, va, te = split_models(data, seed=seed)
    order = np.random.default_rng([seed, 1]).permutation(tr)
    R, y = data.responses, data.target
    M = R.shape[1]
    masks = random_masks(200, M, k, np.random.default_rng(seed))
    rows = []
    for f in fractions:
        sub = np.sort(order[: max(k + 2, int(round(f * tr.size)))])
        fit = RidgeFitness(R[sub], y[sub], alpha=alpha)
        on_val = RidgeFitness(R[sub], y[sub], R[va], y[va], alpha=alpha)
        on_test = RidgeFitness(R[sub], y[sub], R[te], y[te], alpha=alpha)
        mask = _ga_mask(fit, k, M, seed, population, generations)
        rows.append({"fraction": f, "n_train": int(sub.size), "train": float(-fit(mask)[0]),
                     "val": float(-on_val(mask)[0]), "test": float(-on_test(mask)[0]),
                     "random": float(np.mean(-on_test(masks)))})
    return rows


def extrapolate(n_train, rmse) -> float:
    """``a`` of the least-squares fit ``rmse = a + b / sqrt(n_train)``: the RMSE (pp) the curve heads to with
    unlimited training models. Needs at least two distinct ``n_train``."""
    n = np.asarray(n_train, dtype=float)
    if np.unique(n).size < 2:
        raise ValueError("extrapolate: needs at least two distinct training-set sizes")
    A = np.column_stack([np.ones_like(n), 1.0 / np.sqrt(n)])
    return float(np.linalg.lstsq(A, np.asarray(rmse, dtype=float), rcond=None)[0][0])


def print_learning_curve(name: str, k: int, seeds, alpha: float, fractions, population: int, generations: int,
                         data) -> None:
    per_seed = [learning_curve_rows(data, k, s, alpha, fractions, population, generations) for s in seeds]
    print(f"\nLearning curve, {name}, k = {k}: GA (in-sample ridge fitness) on a fraction of the training models; "
          f"mean over seeds {list(seeds)}")
    print(f"{'fraction':>8s} {'n_train':>7s} | {'train':>6s} {'val':>6s} {'test':>6s} | {'random':>6s} {'ratio':>5s}")
    mean = []
    for i, row in enumerate(per_seed[0]):
        vals = {c: float(np.mean([rows[i][c] for rows in per_seed])) for c in ("n_train", "train", "val", "test",
                                                                              "random")}
        mean.append(vals)
        ratio = ratio_to_random([rows[i]["test"] for rows in per_seed], [rows[i]["random"] for rows in per_seed])
        print(f"{row['fraction']:8.3f} {vals['n_train']:7.0f} | {vals['train']:6.3f} {vals['val']:6.3f} "
              f"{vals['test']:6.3f} | {vals['random']:6.3f} {ratio:5.2f}")
    if len(mean) >= 2:
        n = [v["n_train"] for v in mean]
        a_sel = extrapolate(n, [v["test"] for v in mean])
        a_rnd = extrapolate(n, [v["random"] for v in mean])
        print(f"{'inf':>8s} {'(fit)':>7s} | {'':6s} {'':6s} {a_sel:6.3f} | {a_rnd:6.3f} {a_sel / a_rnd:5.2f}   "
              f"(rmse = a + b / sqrt(n_train), least squares over the fractions)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="gsm8k", help="comma-separated dataset names")
    ap.add_argument("--k", default="50", help="comma-separated budgets")
    ap.add_argument("--seeds", default="0,1,2", help="comma-separated seeds")
    ap.add_argument("--alpha", type=float, default=DEFAULT_ALPHA, help="ridge penalty (default: EssenceSelector's)")
    ap.add_argument("--population", type=int, default=200, help="GA population")
    ap.add_argument("--generations", type=int, default=300, help="GA generations")
    ap.add_argument("--train-fractions", default=None,
                    help="comma-separated fractions of the training models, e.g. 0.125,0.25,0.5,1: add a learning "
                         "curve per dataset and k")
    args = ap.parse_args(argv)
    fractions = None
    if args.train_fractions:
        try:
            fractions = [float(f) for f in args.train_fractions.split(",")]
        except ValueError:
            ap.error(f"--train-fractions: {args.train_fractions!r} is not a comma-separated list of numbers")
        if any(not 0 < f <= 1 for f in fractions):
            ap.error(f"--train-fractions: each fraction must be in (0, 1], got {args.train_fractions}")
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
            if fractions:
                print_learning_curve(name, k, seeds, args.alpha, fractions, args.population, args.generations, data)
    print(f"\nCaveat: {POOL_CAVEAT}")
    print(f"(total {time.perf_counter() - t_all:.0f} s)")
    return 0


if __name__ == "__main__":
    from essence.data.pinning import ensure

    ensure()  # the same numbers on any machine (essence/data/pinning.py)
    raise SystemExit(main())
