"""Quality benchmark: EssenceBench against random items and against the whole pool, on test models.

For each dataset, k and seed (the seed drives the model split and the methods), it runs exactly what a
user runs, :func:`essence.artifact.compressed.compress`, and reads the test-model figures:

* ``random``   : uniform random k items, GAM on the subset score;
* ``essence``  : EssenceBench with its defaults (plus any ``--param``);
* ``paper``    : (with ``--paper``) EssenceBench with the paper's fitness, the fixed GAM ruler on
  validation models, and the port's 1000 generations (``fitness="gam", generations=1000``);
* ``pool``     : the floor: GAM, ridge and ridge + GAM on *all* pool items, chosen on validation models.

It prints test RMSE (pp) and Kendall tau as mean +- sd over seeds, the ratio essence / random, and the
check of the target (essence RMSE <= 0.7 x random at k = 50). Test models are used for these figures only.

    .venv/bin/python benchmarks/quality.py                      # 5 metabench sets x k 25,50,100 x seeds 0,1,2
    .venv/bin/python benchmarks/quality.py --quick              # fewer GA generations, one seed
    .venv/bin/python benchmarks/quality.py --datasets gsm8k --k 50 --seeds 0 --paper
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from essence.artifact.compressed import compress  # noqa: E402
from essence.data import METABENCH, POOL_CAVEAT, load, split_models  # noqa: E402
from essence.data.metrics import kendall, rmse  # noqa: E402
from essence.data.metrics import ratio_to_random  # noqa: E402
from essence.reconstructors.choose import choose_on_validation  # noqa: E402
from essence.reconstructors.simple import reconstructor_makers  # noqa: E402

QUICK = {"generations": 150, "group_generations": 100, "rounds": 1, "ebm_elites": 3}


def pool_floor(data, seed: int) -> dict:
    """Test RMSE / Kendall of the best (on validation) of GAM, ridge and ridge + GAM on all pool items."""
    tr, va, te = split_models(data, seed=seed)
    R, y = data.responses, data.target
    label, rec, _ = choose_on_validation(reconstructor_makers(), R[tr], y[tr], R[va], y[va])
    pred = rec.predict(R[te])
    return {"rmse": rmse(y[te], pred), "kendall": kendall(y[te], pred), "choice": label}


def parse_params(items) -> dict:
    out = {}
    for kv in items or []:
        key, _, val = kv.partition("=")
        try:
            out[key] = json.loads(val)
        except json.JSONDecodeError:
            out[key] = val
    return out


def ms(values) -> str:
    v = np.asarray(values, dtype=float)
    return f"{v.mean():6.3f} ± {v.std(ddof=1) if v.size > 1 else 0.0:5.3f}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default=",".join(METABENCH), help="comma-separated dataset names")
    ap.add_argument("--k", default="25,50,100", help="comma-separated budgets (skipped when k >= pool size)")
    ap.add_argument("--seeds", default=None, help="comma-separated seeds (default 0,1,2; --quick: 0)")
    ap.add_argument("--quick", action="store_true", help=f"smaller GA/refinement budget {QUICK}")
    ap.add_argument("--paper", action="store_true", help="also run the paper's fitness (fixed GAM ruler on validation)")
    ap.add_argument("--param", action="append", metavar="NAME=VALUE", help="an EssenceSelector parameter")
    ap.add_argument("--json", help="also write every row to this JSON file")
    args = ap.parse_args(argv)

    datasets = [d for d in args.datasets.split(",") if d]
    ks = [int(k) for k in args.k.split(",")]
    seeds = [int(s) for s in (args.seeds or ("0" if args.quick else "0,1,2")).split(",")]
    params = {**(QUICK if args.quick else {}), **parse_params(args.param)}
    variants = {"essence": params}
    if args.paper:
        variants["paper"] = {"generations": 1000, **params, "fitness": "gam"}

    rows = []
    t_all = time.perf_counter()
    for name in datasets:
        data = load(name)
        for seed in seeds:
            floor = pool_floor(data, seed)
            for k in ks:
                if k >= data.n_items:
                    continue
                row = {"dataset": name, "k": k, "seed": seed, "pool_rmse": floor["rmse"],
                       "pool_kendall": floor["kendall"], "n_items": data.n_items}
                t0 = time.perf_counter()
                r = compress(data, k, method="random", seed=seed, progress=False)
                row.update(random_rmse=r.figures["test"]["rmse"], random_kendall=r.figures["test"]["kendall"])
                for label, p in variants.items():
                    t0 = time.perf_counter()
                    a = compress(data, k, method="essence", seed=seed, progress=False, **p)
                    row.update({f"{label}_rmse": a.figures["test"]["rmse"],
                                f"{label}_kendall": a.figures["test"]["kendall"],
                                f"{label}_val_rmse": a.figures["validation"]["rmse"],
                                f"{label}_rec": a.selection["reconstructor_choice"],
                                f"{label}_seconds": time.perf_counter() - t0})
                rows.append(row)
                print(f"  {name:10s} k={k:3d} seed={seed}: random {row['random_rmse']:.3f}  "
                      + "  ".join(f"{lb} {row[lb + '_rmse']:.3f} ({row[lb + '_rec']}, {row[lb + '_seconds']:.0f}s)"
                                  for lb in variants)
                      + f"  pool {row['pool_rmse']:.3f}", flush=True)

    labels = ["random", *variants, "pool"]
    print()
    print(f"Test-model RMSE (pp) and Kendall tau, mean ± sd over seeds {seeds}; settings: "
          f"{json.dumps(params) if params else 'defaults'}")
    head = (f"{'dataset':10s} {'k':>4s} | " + " | ".join(f"{lb:>15s}" for lb in labels)
            + " | ratio ess/rnd" + (" | ratio paper/rnd" if "paper" in variants else ""))
    print(head)
    print("-" * len(head))
    verdicts = []
    for name in datasets:
        for k in ks:
            sel = [r for r in rows if r["dataset"] == name and r["k"] == k]
            if not sel:
                continue
            cells = [ms([r[f"{lb}_rmse"] for r in sel]) for lb in labels]
            rnd = [r["random_rmse"] for r in sel]
            ratio = ratio_to_random([r["essence_rmse"] for r in sel], rnd)
            extra = (f" | {ratio_to_random([r['paper_rmse'] for r in sel], rnd):5.2f}"
                     if "paper" in variants else "")
            print(f"{name:10s} {k:4d} | " + " | ".join(f"{c:>15s}" for c in cells) + f" | {ratio:13.2f}" + extra)
            if k == 50:
                verdicts.append((name, ratio))
    print()
    print(f"{'dataset':10s} {'k':>4s} | " + " | ".join(f"{lb + ' tau':>15s}" for lb in labels))
    for name in datasets:
        for k in ks:
            sel = [r for r in rows if r["dataset"] == name and r["k"] == k]
            if sel:
                print(f"{name:10s} {k:4d} | " + " | ".join(f"{ms([r[f'{lb}_kendall'] for r in sel]):>15s}"
                                                        for lb in labels))
    if verdicts:
        print()
        print("Target at k = 50: essence RMSE <= 0.7 x random (essence.data.metrics.ratio_to_random: geometric mean "
              "of per-seed ratios):")
        for name, ratio in verdicts:
            print(f"  {name:10s} {ratio:.2f}  {'met' if ratio <= 0.7 else 'NOT met'}")
    if any(d in METABENCH for d in datasets):
        print()
        print(f"Caveat: {POOL_CAVEAT}.")
    print(f"(total {time.perf_counter() - t_all:.0f} s)")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    from essence.data.pinning import ensure

    ensure()  # the same numbers on any machine (essence/data/pinning.py)
    sys.exit(main())
