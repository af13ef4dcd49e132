"""Each reconstructor kind on the same items and models: test error, rank correlation, fit time, artifact size.

For each dataset, k and seed: ``split_models(data, seed)`` (90 % train + validation, 10 % test, as
``compress``); every kind is fitted on all non-test models (train + validation, as ``Selector.fit`` refits
the CV choice) and scored on the test models, on two item sets:

* ``random``: k items drawn with the seed;
* ``default``: the items EssenceBench (the default method with many models) chose for that dataset, k and
  seed in a sweep run (``--items-from``, e.g. ``build/sweep/runs``); when no run is there, EssenceBench is
  run here with its defaults (slow: minutes per run). On alpaca_eval2 and lcb_codegen ``auto`` would not
  pick EssenceBench (too few models); its items are still the ones used, so the row is "EssenceBench's items".

Kinds: ``line``, ``mean_ridge`` (the few-model pair every method gets), ``gam``, ``ridge``, ``ridge_gam``
(EssenceBench's own candidates), ``latent`` and ``mlp`` (essence.reconstructors.combine), and ``boost`` (essence.reconstructors.boost,
boosted trees on the subset score and the items: offered to suite members only, measured here alone). Two more rows are the CV
choice as ``Selector.fit`` makes it (5-fold CV over the non-test models, then the choice refitted on all):
``cv_old`` among the first five, ``cv_new`` with ``latent`` and ``mlp`` added where
:func:`essence.reconstructors.choose.pool_candidates` offers them (enough models). Figures: test RMSE and MAE (pp),
Kendall's tau, fit seconds (one fit on all non-test models, one BLAS thread), artifact size (bytes of the
reconstructor's JSON). Means over seeds. On the metabench pools the items are pre-selected by metabench
and the target is the whole benchmark's score (the caveat every metabench figure carries). Each
(dataset, k, items, seed) is cached as JSON under ``--out`` (default ``build/predictors``).

``--models M ...`` measures instead the model-count thresholds of ``pool_candidates``: m non-test models
drawn at random (per seed), 50 random items, test RMSE of mean_ridge, latent and mlp.

    python benchmarks/predictors.py --items-from build/sweep/runs
    python benchmarks/predictors.py --models 50 100 300 1000 --datasets arc gsm8k
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from essence.data._runtime import single_thread  # noqa: E402
from essence.reconstructors.boost import BoostReconstructor  # noqa: E402
from essence.data import METABENCH, load, split_models  # noqa: E402
from essence.data.metrics import kendall, mae, rmse  # noqa: E402
from essence.reconstructors.latent import LatentReconstructor  # noqa: E402
from essence.reconstructors.mlp import MLPReconstructor  # noqa: E402
from essence.reconstructors.choose import pool_candidates  # noqa: E402
from essence.reconstructors.simple import GAMReconstructor, LineReconstructor, MeanRidgeReconstructor, RidgeGAMReconstructor, RidgeReconstructor
from essence.reconstructors.choose import cv_rmse
from essence.reconstructors.base import fit_reconstructor

DATASETS = ("arc", "gsm8k", "mmlu", "truthfulqa", "winogrande", "alpaca_eval2", "lcb_codegen")
OLD = ("line", "mean_ridge", "gam", "ridge", "ridge_gam")


def makers(idx, seed: int) -> dict:
    """Label -> zero-argument factory of every kind compared."""
    idx = [int(i) for i in idx]
    return {"line": LineReconstructor, "mean_ridge": MeanRidgeReconstructor, "gam": GAMReconstructor,
            "ridge": RidgeReconstructor, "ridge_gam": RidgeGAMReconstructor,
            "latent": lambda: LatentReconstructor(idx, seed=seed), "mlp": lambda: MLPReconstructor(seed=seed),
            "boost": lambda: BoostReconstructor(seed=seed)}


def default_items(data, name, k, seed, items_from: Path | None) -> np.ndarray:
    """Positions of EssenceBench's items for (name, k, seed): from a sweep run, else by running it."""
    if items_from is not None:
        run = items_from / f"{name}__essence__k{k}__s{seed}.json"
        if run.exists():
            rec = json.loads(run.read_text())
            if rec.get("items"):
                pos = {it: i for i, it in enumerate(data.items)}
                return np.array([pos[i] for i in rec["items"]], dtype=np.intp)
    from essence.methods import make_method

    sp = split_models(data, seed=seed)
    sel = make_method("essence", k=k, seed=seed, progress=False)
    sel.fit(data.subset(models=sp.train), data.subset(models=sp.val))
    return np.asarray(sel.items_, dtype=np.intp)


def run_one(data, name, k, items_kind, seed, items_from, out: Path) -> dict:
    """One cached (dataset, k, item set, seed): every kind's test figures, and the two CV choices."""
    path = out / f"{name}_k{k}_{items_kind}_s{seed}.json"
    if path.exists():
        return json.loads(path.read_text())
    sp = split_models(data, seed=seed)
    fit_rows = np.r_[sp.train, sp.val]
    idx = (np.sort(np.random.default_rng(seed).choice(data.n_items, size=k, replace=False)) if items_kind == "random"
           else default_items(data, name, k, seed, items_from))
    R, y = data.responses[fit_rows], data.target[fit_rows]
    Xte, yte = data.responses[sp.test][:, idx], data.target[sp.test]
    rows = {}
    for label, make in makers(idx, seed).items():
        with single_thread(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                cv, _ = cv_rmse(make, R[:, idx], y, seed=seed, R=R)
                t0 = time.perf_counter()
                rec = fit_reconstructor(make(), R[:, idx], y, R)
                secs = time.perf_counter() - t0
            except (ValueError, np.linalg.LinAlgError) as exc:
                rows[label] = {"error": str(exc)}
                continue
        pred = rec.predict(Xte)
        rows[label] = {"rmse": rmse(yte, pred), "mae": mae(yte, pred), "kendall": kendall(yte, pred),
                       "fit_s": secs, "bytes": len(json.dumps(rec.to_dict())), "cv_rmse": cv}
    offered = set(OLD) | set(pool_candidates(idx, len(fit_rows)))
    for label, pool in (("cv_old", OLD), ("cv_new", tuple(offered))):
        ok = [c for c in pool if "cv_rmse" in rows.get(c, {})]
        pick = min(ok, key=lambda c: rows[c]["cv_rmse"])
        rows[label] = {**rows[pick], "choice": pick}
    res = {"dataset": name, "k": k, "items": items_kind, "seed": seed, "n_fit": int(len(fit_rows)),
           "n_test": int(len(sp.test)), "rows": rows}
    out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(res))
    return res


def table(results: list[dict]) -> str:
    """Markdown table: means over seeds per (dataset, k, items, kind)."""
    import pandas as pd

    recs = []
    for r in results:
        for kind, f in r["rows"].items():
            if "rmse" in f:
                recs.append({"dataset": r["dataset"], "k": r["k"], "items": r["items"], "kind": kind,
                             **{m: f[m] for m in ("rmse", "mae", "kendall", "fit_s", "bytes")},
                             "choice": f.get("choice", "")})
    df = pd.DataFrame(recs)
    g = df.groupby(["dataset", "k", "items", "kind"], sort=False)
    t = g[["rmse", "mae", "kendall", "fit_s", "bytes"]].mean()
    t["chosen"] = g["choice"].agg(lambda s: ",".join(sorted(set(v for v in s if v))))
    return t.round({"rmse": 2, "mae": 2, "kendall": 3, "fit_s": 2, "bytes": 0}).reset_index().to_markdown(index=False)


def summary(results: list[dict]) -> str:
    """One row per (dataset, k, items): the best old kind, latent, mlp and the two CV choices (test RMSE, pp)."""
    import pandas as pd

    recs = []
    for r in results:
        f = r["rows"]
        best_old = min((c for c in OLD if "rmse" in f.get(c, {})), key=lambda c: f[c]["rmse"])
        recs.append({"dataset": r["dataset"], "k": r["k"], "items": r["items"],
                     "best existing (test)": f[best_old]["rmse"], "latent": f.get("latent", {}).get("rmse"),
                     "mlp": f.get("mlp", {}).get("rmse"), "cv_old": f["cv_old"]["rmse"],
                     "cv_new": f["cv_new"]["rmse"], "cv_new MAE": f["cv_new"]["mae"]})
    df = pd.DataFrame(recs).groupby(["dataset", "k", "items"], sort=False).mean().round(2)
    return df.reset_index().to_markdown(index=False)


def models_curve(names, counts, seeds, out: Path) -> str:
    """Test RMSE (pp) of mean_ridge, latent and mlp with m non-test models, 50 random items; mean over seeds."""
    import pandas as pd

    recs = []
    for name in names:
        data = load(name)
        for m in counts:
            for seed in seeds:
                path = out / f"models_{name}_m{m}_s{seed}.json"
                if path.exists():
                    recs.extend(json.loads(path.read_text()))
                    continue
                sp = split_models(data, seed=seed)
                rng = np.random.default_rng(seed)
                pool = np.r_[sp.train, sp.val]
                if m > pool.size:
                    continue
                rows = rng.choice(pool, m, replace=False)
                idx = np.sort(rng.choice(data.n_items, 50, replace=False))
                R, y = data.responses[rows], data.target[rows]
                got = []
                for label in ("mean_ridge", "latent", "mlp"):
                    with single_thread(), warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        rec = fit_reconstructor(makers(idx, seed)[label](), R[:, idx], y, R)
                    got.append({"dataset": name, "models": m, "seed": seed, "kind": label,
                                "rmse": rmse(data.target[sp.test], rec.predict(data.responses[sp.test][:, idx]))})
                out.mkdir(parents=True, exist_ok=True)
                path.write_text(json.dumps(got))
                recs.extend(got)
    df = pd.DataFrame(recs).groupby(["dataset", "models", "kind"])["rmse"].mean().unstack("kind").round(2)
    return df.reset_index().to_markdown(index=False)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--datasets", nargs="+", default=list(DATASETS))
    p.add_argument("--k", nargs="+", type=int, default=[50, 100])
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    p.add_argument("--items", nargs="+", default=["random", "default"], choices=["random", "default"])
    p.add_argument("--items-from", type=Path, default=None, help="folder of sweep runs with EssenceBench's items")
    p.add_argument("--models", nargs="+", type=int, default=None, help="measure the model-count thresholds")
    p.add_argument("--out", type=Path, default=Path("build/predictors"))
    p.add_argument("--quiet", action="store_true")
    a = p.parse_args(argv)
    if a.models:
        print(models_curve(a.datasets, a.models, a.seeds, a.out))
        return
    results = []
    from tqdm import tqdm

    jobs = [(n, k, it, s) for n in a.datasets for k in a.k for it in a.items for s in a.seeds]
    cache = {}
    for name, k, it, s in tqdm(jobs, disable=a.quiet, desc="predictors"):
        if name not in cache:
            cache = {name: load(name)}
        data = cache[name]
        if k >= data.n_items:
            continue
        results.append(run_one(data, name, k, it, s, a.items_from, a.out))
    if any(r["dataset"] in METABENCH for r in results):
        print("metabench pools: items pre-selected by metabench; target = the whole benchmark's score\n")
    print(summary(results))
    print()
    print(table(results))


if __name__ == "__main__":
    from essence.data.pinning import ensure

    ensure()  # the same numbers on any machine (essence/data/pinning.py)
    main()
