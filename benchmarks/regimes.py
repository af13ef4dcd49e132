"""The regime map: the default with few reference models, against the audit's best baseline on the same folds.

Each run draws ``m`` models of a benchmark (seeded), cross-validates over them (every model a test model once) and
compares the method with random items read by a line, by ridge and by AIPW on the same folds and items
(the functions below). Writes ``results/regimes.csv`` (one row per benchmark x m x method: RMSE mean
and sd over draws in pp, the ratio to the best baseline as a geometric mean over draws and its sd, coverage of the
method's own interval) and ``results/regimes_summary.csv`` (per m: the geometric mean of the ratios over the
benchmarks, the largest, the lowest and highest single draw), and prints both. Runs are cached under ``--out``.

    .venv/bin/python benchmarks/regimes.py                              # openllm_v2, 25 / 50 / 100 models, auto
    .venv/bin/python benchmarks/regimes.py --datasets arc gsm8k --models 20 50 100 --methods auto random
    .venv/bin/python benchmarks/regimes.py --models 25 --draws 5 --param auto.frontier=false   # a variant

How each method does with few reference models (tens to hundreds) and on whole item pools.

For one dataset, model count ``m`` and draw ``d``: ``m`` models are drawn at random (seed ``1000 + d``;
``"all"`` keeps every model), then split into ``folds`` folds (cross-validation over models). Each fold is
held out once as test models; the method chooses and fits on the other models (split 90 / 10 into training
/ validation inside, as ``compress`` does) and predicts the held-out ones. With few models one split of 4
test models says nothing; here every model is a test model once. Per run (:func:`run_one`):

* RMSE (pp) over all ``m`` models' out-of-fold predictions (and the coverage of the method's own interval,
  where it has one);
* the audit's baselines on the same folds and items: random items read by a least-squares line on their mean,
  by ridge (penalty among 0.1, 1, 10) and by AIPW, each fitted on the fold's non-test models. Each fold draws
  its items with the seed every method gets in that fold, so ``random`` has the baselines' items;
* ratio = method RMSE / the best baseline's RMSE (:func:`essence.data.metrics.ratio_to_random`).

:func:`summarise` gives, per (dataset, models, method), the RMSE mean +- sd over draws and the ratio as the
geometric mean over draws +- the sd of the per-draw ratios; a method that refuses (e.g. IRT with too few
models) keeps its reason. Each run is cached as JSON under ``out`` with the version of the code that produced
it (:func:`code_version`); a cached run of other code is recomputed, or, with ``cached_only``, left out.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from essence.data import METABENCH, OPENLLM_V2, Responses, split_models  # noqa: E402
from essence.data.metrics import ratio_to_random  # noqa: E402
from essence.methods import make_method  # noqa: E402
from essence.reconstructors.audit import AIPWReconstructor  # noqa: E402
from essence.reconstructors.base import model_folds  # noqa: E402
from essence.reconstructors.simple import LineReconstructor, RidgeReconstructor  # noqa: E402
from essence.sweep.signatures import code_version  # noqa: E402

#: datasets used with all their models (whole item pools, tens of systems)
WHOLE_POOLS = ("alpaca_eval2", "lcb_codegen")
#: random model subsets per count in the committed map (and in :mod:`policies`, which reads the same draws)
DRAWS = 10


#: the audit's baselines every run is compared with: random items and these reconstructors
BASELINES = {"random_line": LineReconstructor, "random_ridge": lambda: RidgeReconstructor(alphas=(0.1, 1.0, 10.0)),
             "aipw": None}


def default_k(name: str, n_items: int) -> int:
    """50 on the metabench pools and the whole openllm_v2 benchmarks; N/20 (rounded) on the small whole pools."""
    return 50 if name in METABENCH or name in OPENLLM_V2 else max(1, int(round(n_items / 20)))


def _code(method: str) -> str:
    return code_version(method)


def _make(method: str, k: int, seed: int, params: dict | None):
    return make_method(method, k=k, seed=seed, progress=False, **(params or {}))


def _cached(path: Path, method: str) -> dict | None:
    """The cached run at ``path`` when it was produced by the current code of ``method``; else None."""
    if not path.exists():
        return None
    rec = json.loads(path.read_text())
    return rec if rec.get("code") == _code(method) else None


def run_path(out, name: str, m, draw: int, method: str, k: int, folds: int, params: dict | None = None) -> Path:
    """The cache file of one run under ``out``."""
    tag = "" if not params else "_" + "_".join(f"{a}{b}" for a, b in sorted(params.items()))
    return Path(out) / f"{name}_m{m}_d{draw}_{method}{tag}_k{k}_f{folds}.json"


def baseline_predictions(sub: Responses, te, k: int, fold_seed: int) -> dict[str, np.ndarray]:
    """Each of :data:`BASELINES`' estimates (pp) of the test models ``te`` (boolean ``(n,)``) of ``sub``: ``k``
    random items (``fold_seed``, what ``random`` draws with that seed), fitted on the other models."""
    rest = sub.subset(models=~te)
    b_idx = np.sort(np.random.default_rng(fold_seed).choice(sub.n_items, size=k, replace=False))
    out = {}
    for b, make in BASELINES.items():
        rb = (make() if make else AIPWReconstructor(items=b_idx.tolist())).fit(
            rest.responses[:, b_idx], rest.target, **({} if make else {"R": rest.responses}))
        out[b] = rb.predict(sub.responses[np.ix_(te, b_idx)])
    return out


def draw_models(data: Responses, m, draw: int) -> Responses:
    """The ``m`` models (int, or ``"all"``) of draw ``draw`` (seed ``1000 + draw``)."""
    if m == "all":
        return data
    rng = np.random.default_rng(1000 + draw)
    return data.subset(models=np.sort(rng.choice(data.n_models, size=int(m), replace=False)))


def run_one(data: Responses, name: str, m, draw: int, method: str, k: int, folds: int, out: Path,
            params: dict | None = None) -> dict:
    """One cached run: ``m`` models (int or ``"all"``) of ``data``, draw ``draw``, ``folds``-fold CV over them.

    Returns (and caches under ``out``) a dict with ``rmse`` (pp), ``ratio``, the per-fold
    RMSEs, the reconstructor (or auto's method/reconstructor) choice per fold and ``seconds``; or
    ``refused`` with the method's first error line; ``baselines``: each baseline's RMSE (pp), and ``baseline`` /
    ``baseline_rmse`` the best of them. ``params``: extra method parameters (part of the cache
    name when given).
    """
    path = run_path(out, name, m, draw, method, k, folds, params)
    cached = _cached(path, method)
    if cached is not None:
        return cached
    sub = draw_models(data, m, draw)
    lab = model_folds(sub.n_models, folds, seed=draw)
    y = sub.target
    pred, inside = np.full(sub.n_models, np.nan), np.full(sub.n_models, np.nan)
    base = {b: np.full(sub.n_models, np.nan) for b in BASELINES}
    rec = {"dataset": name, "models": m, "n_models": sub.n_models, "draw": draw, "method": method, "k": k,
           "folds": folds, "code": _code(method), "choices": []}
    t0 = time.perf_counter()
    for f in np.unique(lab):
        te = lab == f
        rest = sub.subset(models=~te)
        fold_seed = draw * 100 + int(f)  # the baseline's items are what `random` draws with this seed
        for b, p in baseline_predictions(sub, te, k, fold_seed).items():
            base[b][te] = p
        tr, va, _ = split_models(rest, test=0.0, val=0.1, seed=draw)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                sel = _make(method, k, fold_seed, params).fit(rest.subset(models=tr), rest.subset(models=va))
        except (ValueError, RuntimeError) as exc:
            rec["refused"] = str(exc).splitlines()[0][:300]
            break
        X_te = sub.responses[np.ix_(te, sel.items_)]
        if getattr(sel.reconstructor_, "has_interval", False):
            out_ = sel.reconstructor_.predict_interval(X_te)
            pred[te], inside[te] = out_["estimate"], (out_["lower"] <= y[te]) & (y[te] <= out_["upper"])
        else:
            pred[te] = sel.reconstructor_.predict(X_te)
        rec.setdefault("fold_rmse", []).append(float(np.sqrt(np.mean((pred[te] - y[te]) ** 2))))
        auto = getattr(sel, "info_", {}).get("auto")
        rec["choices"].append(sel.reconstructor_choice_ if auto is None else
                              f"{auto['choice']}/{sel.reconstructor_choice_}")
    rec["seconds"] = round(time.perf_counter() - t0, 2)
    if "refused" not in rec:
        rec["rmse"] = float(np.sqrt(np.mean((pred - y) ** 2)))
        rec["baselines"] = {b: float(np.sqrt(np.mean((p - y) ** 2))) for b, p in base.items()}
        rec["baseline"] = min(rec["baselines"], key=rec["baselines"].get)
        rec["baseline_rmse"] = rec["baselines"][rec["baseline"]]
        rec["ratio"] = ratio_to_random([rec["rmse"]], [rec["baseline_rmse"]])
        if not np.isnan(inside).all():
            rec["coverage"] = float(np.nanmean(inside))
    out.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(rec))
    tmp.replace(path)
    return rec


def regime_map(datasets, models=("20", "35", "50", "100", "300", "all"), methods=("random", "auto"), draws: int = DRAWS,
               folds: int = 5, k: int | None = None, out="build/regimes", method_params: dict | None = None,
               load=None, progress: bool = True, cached_only: bool = False) -> list[dict]:
    """Every (dataset, model count, draw, method) run of the map, cached: a list of :func:`run_one` records.

    ``models``: counts for the metabench pools (a count not below the dataset's models is skipped; the
    whole pools of :data:`WHOLE_POOLS` always use all theirs); ``"all"`` gets one draw. ``k``: None =
    :func:`default_k`. ``method_params``: method -> extra parameters. ``load``: dataset name ->
    Responses (default :func:`essence.data.load`). ``progress``: one line per run. ``cached_only``: only
    the runs already in the cache from the current code (nothing is computed; a dataset is loaded only to
    know its size).
    """
    from essence.data import load as load_data

    load = load or load_data
    rows = []
    for name in datasets:
        data = load(name)
        kk = k or default_k(name, data.n_items)
        counts = ["all"] if name in WHOLE_POOLS else [str(m) for m in models]
        for m in counts:
            if m != "all" and int(m) >= data.n_models:
                continue
            for draw in range(1 if m == "all" else draws):
                for method in methods:
                    mm = m if m == "all" else int(m)
                    if cached_only and _cached(run_path(out, name, mm, draw, method, kk, folds,
                                                        (method_params or {}).get(method)), method) is None:
                        continue
                    r = run_one(data, name, m if m == "all" else int(m), draw, method, kk, folds, Path(out),
                                (method_params or {}).get(method))
                    rows.append(r)
                    if progress:
                        msg = r.get("refused") or f"rmse {r['rmse']:.2f} ratio {r['ratio']:.2f}"
                        print(f"{name} m={m} draw={draw} {method} k={kk}: {msg} ({r['seconds']} s)", flush=True)
    return rows


def summarise(rows: list[dict]) -> list[dict]:
    """Mean and sd over draws per (dataset, models, method); ``refused`` (the reason) when no draw ran."""
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
            if all("coverage" in r for r in ok):
                row["coverage"] = float(np.mean([r["coverage"] for r in ok]))
        out.append(row)
    return out


def wide_table(summary: list[dict], methods) -> list[list[str]]:
    """Rows ``[dataset, models, draws, baseline pp, one cell per method]`` of the wide table: each cell the
    ratio to the baseline (geometric mean over draws) ± the sd of the per-draw ratios, ``refused`` or empty;
    a cell over fewer draws than the row's (the most any method has) says how many, e.g. ``(1 draw)``."""
    cells: dict[tuple, dict] = {}
    for s in summary:
        cells.setdefault((s["dataset"], s["models"], s["n_models"]), {})[s["method"]] = s
    rows = []
    for (ds, m, n), row in cells.items():
        base = next((c["baseline"] for c in row.values() if "baseline" in c), float("nan"))
        most = max(c["draws"] for c in row.values())
        vals = [("refused" if "refused" in row[x] else f"{row[x]['ratio']:.2f} ± {row[x]['ratio_sd']:.2f}"
                 + ("" if row[x]["draws"] == most else f" ({row[x]['draws']} draw{'s' * (row[x]['draws'] > 1)})"))
                if x in row else "" for x in methods]
        rows.append([ds, m if m != "all" else f"all ({n})", str(most), f"{base:.2f}", *vals])
    return rows



def tables(rows: list[dict]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(per benchmark x m x method, per m x method summary)`` from :func:`regime_map`'s records."""
    per = pd.DataFrame([{"benchmark": s["dataset"], "models": s["models"], "method": s["method"], "draws": s["draws"],
                         **({"rmse": round(s["rmse"], 3), "rmse_sd": round(s["rmse_sd"], 3),
                             "best_baseline": round(s["baseline"], 3), "ratio": round(s["ratio"], 3),
                             "ratio_sd": round(s["ratio_sd"], 3), "coverage": round(s.get("coverage", np.nan), 3)}
                            if "refused" not in s else {"refused": s["refused"][:80]})}
                        for s in summarise(rows)])
    draw = {(str(r["models"]), r["method"]): [] for r in rows}
    for r in rows:
        if "ratio" in r:
            draw[(str(r["models"]), r["method"])].append(r["ratio"])
    summary = [{"models": m, "method": meth, "benchmarks": len(g), "ratio (geometric mean)":
                round(float(np.exp(np.mean(np.log(g["ratio"])))), 3), "ratio (largest)": round(float(g["ratio"].max()), 3),
                "draw ratio (lowest)": round(float(min(draw[(str(m), meth)])), 3),
                "draw ratio (highest)": round(float(max(draw[(str(m), meth)])), 3),
                "coverage": round(float(g["coverage"].mean()), 3)}
               for (m, meth), g in per.dropna(subset=["ratio"]).groupby(["models", "method"], sort=False)]
    return per, pd.DataFrame(summary)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--datasets", nargs="+", default=list(OPENLLM_V2))
    p.add_argument("--methods", nargs="+", default=["auto"])
    p.add_argument("--models", nargs="+", default=["25", "50", "100"])
    p.add_argument("--draws", type=int, default=DRAWS, help="random model subsets per count")
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--k", type=int, default=None, help="items kept (default 50 on metabench and openllm_v2, else N/20)")
    p.add_argument("--out", default=str(ROOT / "build" / "regimes"), help="cache folder of per-run JSON")
    p.add_argument("--param", action="append", default=[], metavar="METHOD.KEY=VALUE",
                   help="an extra method parameter, VALUE as JSON (e.g. auto.checkpoints=[1000]); repeatable")
    p.add_argument("--results", default=None,
                   help="where the tables are written ('' = nowhere; default results/, nowhere with --param)")
    args = p.parse_args(argv)
    params: dict = {}
    for spec in args.param:
        try:
            head, value = spec.split("=", 1)
            method, key = head.split(".", 1)
            params.setdefault(method, {})[key] = json.loads(value)
        except ValueError:
            p.error(f"--param {spec!r}: expected METHOD.KEY=VALUE with VALUE as JSON (e.g. auto.frontier=false)")
    results = args.results if args.results is not None else ("" if params else str(ROOT / "results"))
    rows = regime_map(args.datasets, args.models, args.methods, args.draws, args.folds, args.k, args.out,
                      method_params=params or None)
    per, summary = tables(rows)
    if results:
        Path(results).mkdir(parents=True, exist_ok=True)
        per.to_csv(Path(results) / "regimes.csv", index=False)
        summary.to_csv(Path(results) / "regimes_summary.csv", index=False)
    print(per.to_markdown(index=False))
    print()
    print(summary.to_markdown(index=False))
    return 0


if __name__ == "__main__":
    from essence.data.pinning import ensure

    ensure()  # the same numbers on any machine (essence/data/pinning.py)
    sys.exit(main())
