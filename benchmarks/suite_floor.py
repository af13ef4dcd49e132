"""Does a per-benchmark floor help the joint search? The split of the budget against the search's noise.

For each seed the joint EssenceBench chooses k = 250 items across the five metabench pools with each floor of
``--floors`` (``--per-benchmark``: at least that many items of every benchmark; 0 = no floor), each one search
(``searches=1``: the floors are compared search for search, not through the default's pick of three), and,
with ``--reseed``, once more without a floor under another seed of the search (seed + 1000): how much the
figures move when only the search's randomness changes. With ``--searches N`` the search runs under N
seeds (seed + 1000 i, the first is the one-search run's) and the one :func:`essence.suite.select.pick_by_cv` keeps
(the kernel's 5-fold CV on training + validation models: what ``--param searches=N`` does) is reconstructed
(every search too with ``--each``). Each choice is then reconstructed with one fixed
recipe, the mean of ``kernel``, ``boost_pool`` and ``kernel_pool`` (no CV over kinds, so that every choice is
reconstructed alike and each costs about two minutes instead of twenty; on the default's items of the held-out
runs of ``benchmarks/suite.py`` the CV-chosen averages' mean per-benchmark RMSE is within 0.013 pp of it),
and scored on the models held out of everything (``--holdout``, as ``benchmarks/suite.py --holdout``) or on
the test split. Printed per seed and choice: items per benchmark,
per-benchmark RMSE, their mean, its ratio to the five separate artifacts trained on whole pools (the
``--separate-pool`` baseline of ``benchmarks/suite.py``, computed and cached under ``build/suite`` when
missing) and the suite mean's RMSE (pp); then the mean over seeds.

    .venv/bin/python benchmarks/suite_floor.py --seeds 0 1 2 3 4 --holdout --floors 0 40 45 --reseed
    .venv/bin/python benchmarks/suite_floor.py --seeds 0 1 2 3 4 --holdout --floors --searches 3

The metabench pools are pre-selected items: optimistic. One thread; about 2-4 minutes per seed and choice.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from essence.data._runtime import single_thread  # noqa: E402
from essence.data import POOL_CAVEAT  # noqa: E402
from essence.data.metrics import rmse  # noqa: E402
from essence.reconstructors.base import fit_reconstructor  # noqa: E402
from essence.suite import load_suite  # noqa: E402
from essence.suite.select import kernel_candidates  # noqa: E402
from essence.suite.artifact import outside_candidates  # noqa: E402
from essence.suite.select import SEARCH_SEED_STEP, budget_split, pick_by_cv, select_suite  # noqa: E402
from essence.suite.study import leave_out_models, run_pair, suite_split  # noqa: E402

NAMES = ("arc", "gsm8k", "mmlu", "truthfulqa", "winogrande")


def fixed_recipe(fit, idx, Xe) -> np.ndarray:
    """``(n_eval, members)`` estimates (pp): per member the mean of kernel, boost_pool and kernel_pool fitted on
    ``fit`` (a Suite) at pooled positions ``idx`` ``(k,)``; ``Xe`` ``(n_eval, k)`` the evaluation models' answers
    to those items."""
    R = fit.pooled().responses
    X = R[:, idx]
    out = []
    for b in range(len(fit.members)):
        y = fit.targets[:, b]
        makes = dict(kernel_candidates(idx, fit.member_of, b, X.shape[0]))
        pool = outside_candidates(fit, idx, b, X.shape[0])
        makes.update({k: pool[k] for k in ("boost_pool", "kernel_pool")})
        out.append(np.mean([fit_reconstructor(m(), X, y, R).predict(Xe) for m in makes.values()], axis=0))
    return np.column_stack(out)


def _search(kept, train, val, seed: int, i: int, args) -> np.ndarray:
    """Pooled positions ``(250,)`` of search ``i`` (seed ``seed + SEARCH_SEED_STEP i``, no floor), cached as JSON
    (item ids) under ``args.cache``."""
    path = Path(args.cache) / (f"search-{'holdout-' if args.holdout else ''}{'+'.join(NAMES)}-n{kept.n_models}-"
                               f"s{seed}-i{i}.json")
    if path.exists():
        pos = {c: j for j, c in enumerate(kept.pooled().items.tolist())}
        return np.sort(np.array([pos[c] for c in json.loads(path.read_text())], dtype=np.intp))
    with single_thread():
        idx, _ = select_suite(train, val, 250, seed=seed + SEARCH_SEED_STEP * i, progress=False, searches=1)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(kept.pooled().items[idx].tolist()))
    return idx


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--floors", type=int, nargs="*", default=[0, 40])
    ap.add_argument("--reseed", action="store_true", help="also the default search under seed + 1000")
    ap.add_argument("--searches", type=int, default=0,
                    help="also N searches without a floor (seeds seed + 1000 i) and the one essence.suite.select."
                         "pick_by_cv keeps (what --param searches=N does); each search's items cached under --cache")
    ap.add_argument("--each", action="store_true", help="with --searches: reconstruct every search, not only "
                    "the picked one")
    ap.add_argument("--holdout", action="store_true", help="score on 20%% of the models held out of everything")
    ap.add_argument("--cache", default="build/suite", help="where benchmarks/suite.py caches the separate artifacts")
    args = ap.parse_args(argv)
    suite = load_suite(NAMES)
    choices = [(f"floor {f}", f, 0) for f in args.floors] + ([("reseed", 0, SEARCH_SEED_STEP)] if args.reseed else [])
    rows = []
    for seed in args.seeds:
        if args.holdout:
            kept, evald = leave_out_models(suite, 0.2, seed)
            sp = suite_split(kept, seed, 0.1, 0.1)
            base = run_pair(kept, seed=seed, test=0.1, val=0.1, cache=Path(args.cache), evaluate_on=evald,
                            tag="holdout-", approaches=("separate_pool",))["separate_pool"]
        else:
            kept = suite
            sp = suite_split(kept, seed)
            evald = kept.subset(sp.test)
            base = run_pair(kept, seed=seed, cache=Path(args.cache), approaches=("separate_pool",))["separate_pool"]
        base_avg = np.mean([rmse(np.asarray(base["truth"][n]), np.asarray(base["estimate"][n])) for n in NAMES])
        fit, train, val = (kept.subset(ix) for ix in (np.r_[sp.train, sp.val], sp.train, sp.val))
        Re = evald.pooled().responses
        todo = [(label, floor, shift, None) for label, floor, shift in choices]
        if args.searches > 1:
            idxs = [_search(kept, train, val, seed, i, args) for i in range(args.searches)]
            with single_thread():
                cv = pick_by_cv(train, val, idxs, seed=seed)
            print(f"seed {seed}: CV (mean per-benchmark, pp) of the {args.searches} searches: "
                  + " ".join(f"{c:.4f}" for c in cv), flush=True)
            if args.each:
                todo += [(f"search {i}", 0, 0, ix) for i, ix in enumerate(idxs)]
            todo.append((f"picked of {args.searches}", 0, 0, idxs[int(np.argmin(cv))]))
        for label, floor, shift, idx in todo:
            with single_thread():
                if idx is None:
                    idx, _ = select_suite(train, val, 250, seed=seed + shift, per_benchmark=floor, progress=False,
                                          searches=1)
                est = fixed_recipe(fit, idx, Re[:, idx])
            per = {n: rmse(evald.targets[:, b], est[:, b]) for b, n in enumerate(NAMES)}
            avg = float(np.mean(list(per.values())))
            row = {"seed": seed, "choice": label, **per, "avg": avg, "ratio to pool": avg / base_avg,
                   "suite mean": rmse(evald.mean_target, est.mean(axis=1)),
                   "budget": " ".join(str(c) for c in budget_split(kept, idx).values())}
            rows.append(row)
            print(pd.DataFrame([row]).round(3).to_markdown(index=False), flush=True)
    df = pd.DataFrame(rows)
    where = "models held out of everything" if args.holdout else "the test split (20%)"
    print(f"\nMean over seeds {args.seeds}, {where}; RMSE in pp (avg = mean of the five; ratio to the separate "
          f"artifacts trained on whole pools; budget = items of arc gsm8k mmlu truthfulqa winogrande, per seed):")
    print(df.drop(columns=["seed", "budget"]).groupby("choice", sort=False).mean().round(4).to_markdown())
    print(f"note: {POOL_CAVEAT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
