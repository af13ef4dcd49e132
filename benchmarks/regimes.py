"""The regime map: every method at the model counts users have (20-300 models and all) and on whole pools.

For each dataset, model count ``m`` and draw ``d``: ``m`` models are drawn at random (seed ``d``; all
models for ``all`` and for alpaca_eval2 / lcb_codegen, which are used as they are), then split into
``--folds`` folds (cross-validation over models). Each fold is held out once as test models; the method
chooses and fits on the other models (split 90 / 10 into training / validation inside, as ``compress``
does) and predicts the held-out ones. With few models one split of 4 test models says nothing; here every
model is a test model once, and the figures are per draw:

* RMSE (pp) over all ``m`` models' out-of-fold predictions;
* the baseline on the same folds: random items + a least-squares line of the full score on their mean,
  fitted on all non-test models of the fold (what a user tries first). Each fold draws its own items,
  with the seed every method gets in that fold, so ``random`` has the baseline's items and differs
  from it only by its reconstructor;
* ratio = method RMSE / baseline RMSE (:func:`essence.metrics.ratio_to_random`).

The table gives RMSE mean +- sd over draws and the ratio as the geometric mean over draws (the project's
one ratio definition, paired by draw) +- the sd of the per-draw ratios. A method that refuses (e.g. IRT with too few models) is shown
with the reason. Each (dataset, m, draw, method, k) run is cached as JSON under ``--out`` (default
``build/regimes``), so a rerun resumes. k: 50 on the metabench pools, N/20 on the whole pools
(alpaca_eval2 805 items -> 40, lcb_codegen 400 -> 20) unless ``--k`` is given.

    python benchmarks/regimes.py --datasets alpaca_eval2 --methods random auto --draws 1
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

from essence.data import METABENCH, load, split_models  # noqa: E402
from essence.methods import METHODS, make_method  # noqa: E402
from essence.metrics import ratio_to_random  # noqa: E402
from essence.reconstruct import LineReconstructor, model_folds  # noqa: E402

WHOLE_POOLS = ("alpaca_eval2", "lcb_codegen")


def default_k(name: str, n_items: int) -> int:
    """50 on the metabench pools; N/20 (rounded) on whole item pools."""
    return 50 if name in METABENCH else max(1, int(round(n_items / 20)))


def run_one(data, name, m, draw, method, k, folds, out: Path) -> dict:
    """One cached run: ``m`` models of ``data`` (draw ``draw``), ``folds``-fold CV over them."""
    path = out / f"{name}_m{m}_d{draw}_{method}_k{k}_f{folds}.json"
    if path.exists():
        return json.loads(path.read_text())
    rng = np.random.default_rng(1000 + draw)
    sub = data if m == "all" else data.subset(models=np.sort(rng.choice(data.n_models, size=int(m), replace=False)))
    lab = model_folds(sub.n_models, folds, seed=draw)
    y = sub.target
    pred, base = np.full(sub.n_models, np.nan), np.full(sub.n_models, np.nan)
    rec = {"dataset": name, "models": m, "n_models": sub.n_models, "draw": draw, "method": method, "k": k,
           "folds": folds, "choices": []}
    t0 = time.perf_counter()
    for f in np.unique(lab):
        te = lab == f
        rest = sub.subset(models=~te)
        fold_seed = draw * 100 + int(f)  # the baseline's items are what `random` draws with this seed
        b_idx = np.sort(np.random.default_rng(fold_seed).choice(sub.n_items, size=k, replace=False))
        line = LineReconstructor().fit(rest.responses[:, b_idx], rest.target)
        base[te] = line.predict(sub.responses[np.ix_(te, b_idx)])
        tr, va, _ = split_models(rest, test=0.0, val=0.1, seed=draw)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                sel = make_method(method, k=k, seed=fold_seed, progress=False).fit(rest.subset(models=tr),
                                                                             rest.subset(models=va))
        except (ValueError, RuntimeError) as exc:
            rec["refused"] = str(exc).splitlines()[0][:300]
            break
        pred[te] = sel.reconstructor_.predict(sub.responses[np.ix_(te, sel.items_)])
        rec.setdefault("fold_rmse", []).append(float(np.sqrt(np.mean((pred[te] - y[te]) ** 2))))
        rec.setdefault("fold_baseline_rmse", []).append(float(np.sqrt(np.mean((base[te] - y[te]) ** 2))))
        auto = getattr(sel, "info_", {}).get("auto")
        rec["choices"].append(sel.reconstructor_choice_ if auto is None else
                              f"{auto['choice']}/{sel.reconstructor_choice_}")
    rec["seconds"] = round(time.perf_counter() - t0, 2)
    if "refused" not in rec:
        rec["rmse"] = float(np.sqrt(np.mean((pred - y) ** 2)))
        rec["baseline_rmse"] = float(np.sqrt(np.mean((base - y) ** 2)))
        rec["ratio"] = ratio_to_random([rec["rmse"]], [rec["baseline_rmse"]])
    out.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(rec))
    tmp.replace(path)
    return rec


def summarise(rows: list[dict]) -> list[dict]:
    """Mean and sd over draws per (dataset, models, method)."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["dataset"], str(r["models"]), r["method"]), []).append(r)
    out = []
    for (ds, m, meth), rs in groups.items():
        ok = [r for r in rs if "rmse" in r]
        row = {"dataset": ds, "models": m, "method": meth, "draws": len(rs), "n_models": rs[0]["n_models"]}
        if not ok:
            row["refused"] = rs[0].get("refused", "")
        else:
            e, q = np.array([r["rmse"] for r in ok]), np.array([r["ratio"] for r in ok])
            row.update(rmse=e.mean(), rmse_sd=e.std(ddof=1) if e.size > 1 else 0.0,
                       ratio=ratio_to_random(e, [r["baseline_rmse"] for r in ok]),
                       ratio_sd=q.std(ddof=1) if q.size > 1 else 0.0,
                       baseline=float(np.mean([r["baseline_rmse"] for r in ok])))
        out.append(row)
    return out


def print_wide(summary: list[dict], methods: list[str]) -> None:
    """One row per (dataset, models): the baseline's RMSE (pp, mean over draws) and each method's ratio
    (geometric mean over draws ± sd of the per-draw ratios); "refused" where the method refused."""
    cells: dict[tuple, dict] = {}
    for s in summary:
        cells.setdefault((s["dataset"], s["models"], s["n_models"]), {})[s["method"]] = s
    print("\n| dataset | models | random + line (pp) | " + " | ".join(methods) + " |")
    print("|---|---|---|" + "---|" * len(methods))
    for (ds, m, n), row in cells.items():
        base = next((c["baseline"] for c in row.values() if "baseline" in c), float("nan"))
        vals = [("refused" if "refused" in row[x] else f"{row[x]['ratio']:.2f} ± {row[x]['ratio_sd']:.2f}")
                if x in row else "" for x in methods]
        print(f"| {ds} | {m if m != 'all' else f'all ({n})'} | {base:.2f} | " + " | ".join(vals) + " |")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--datasets", nargs="+", default=list(METABENCH) + list(WHOLE_POOLS))
    p.add_argument("--methods", nargs="+", default=list(METHODS))
    p.add_argument("--models", nargs="+", default=["20", "35", "50", "100", "300", "all"],
                   help="model counts for the metabench pools (whole pools always use all their models)")
    p.add_argument("--draws", type=int, default=3, help="random model subsets per count (1 for 'all')")
    p.add_argument("--folds", type=int, default=5, help="folds of the cross-validation over models")
    p.add_argument("--k", type=int, default=None, help="items to keep (default: 50 metabench, N/20 whole pools)")
    p.add_argument("--out", default="build/regimes", help="cache folder of per-run JSON")
    p.add_argument("--wide", action="store_true", help="one row per (dataset, models): each method's ratio")
    args = p.parse_args(argv)
    rows = []
    for name in args.datasets:
        data = load(name)
        k = args.k or default_k(name, data.n_items)
        counts = ["all"] if name in WHOLE_POOLS else args.models
        for m in counts:
            if m != "all" and int(m) >= data.n_models:
                continue
            for draw in range(1 if m == "all" else args.draws):
                for method in args.methods:
                    r = run_one(data, name, m if m == "all" else int(m), draw, method, k, args.folds, Path(args.out))
                    rows.append(r)
                    msg = r.get("refused") or f"rmse {r['rmse']:.2f} ratio {r['ratio']:.2f}"
                    print(f"{name} m={m} draw={draw} {method} k={k}: {msg} ({r['seconds']} s)", flush=True)
    if args.wide:
        print_wide(summarise(rows), args.methods)
        return 0
    print("\n| dataset | models | method | test RMSE (pp), mean ± sd | ratio to random + line (geo. mean ± sd) | draws |")
    print("|---|---|---|---|---|---|")
    for s in summarise(rows):
        if "refused" in s:
            print(f"| {s['dataset']} | {s['models']} | {s['method']} | refused: {s['refused'][:90]} | | {s['draws']} |")
        else:
            print(f"| {s['dataset']} | {s['models']} | {s['method']} | {s['rmse']:.2f} ± {s['rmse_sd']:.2f} "
                  f"| {s['ratio']:.2f} ± {s['ratio_sd']:.2f} | {s['draws']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
