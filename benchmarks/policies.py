"""Few reference models: the default's own choices taken apart, on the regime map's draws and folds.

With tens of reference models the default (``auto``) makes its choices on one cross-validation: the regression
``G`` for its longest search (by CV RMSE; the search length is not chosen), and whether the shrinkage-free estimate
``D`` answers for a model its own answers place outside the references (the frontier mix). This study fits the
default once per fold of :mod:`regimes` (same draws, folds, seeds and baselines), keeps its out-of-fold residuals
(``AutoSelector.cv_residuals_``), reads the held-out models with every candidate ``(T, G)`` and ``D``, and scores
policies that change one choice at a time: the frontier mix off, the mix on both sides of the references
(``side="both"``; the default mixes only above), a line only when there are fewer models than items, the search
length chosen by the same CV too (``length="cv"``), a fixed ``T = 1000`` read by a line.
Each policy's estimate goes through the same forward pass an artifact runs
(:func:`essence.reconstructors.forward.frontier`).

Writes ``results/policies.csv``: per policy and model count, the ratio to the best baseline (geometric mean over
draws per benchmark, then over benchmarks), the largest per-benchmark ratio, and the 90 % coverage where the
policy has an interval. Runs are cached under ``--out`` with the version of the code.

    .venv/bin/python benchmarks/policies.py                     # openllm_v2, 25, 50 and 100 models, 10 draws
    .venv/bin/python benchmarks/policies.py --models 25 --draws 2 --datasets musr
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from essence.data import OPENLLM_V2, split_models  # noqa: E402
from essence.data._io import jsonable, write_atomic, write_table  # noqa: E402
from essence.methods import make_method  # noqa: E402
from essence.methods.auto import _make, _spec, cv_choice, frontier_calibration  # noqa: E402
from essence.reconstructors import forward  # noqa: E402
from essence.reconstructors.base import fit_reconstructor, model_folds  # noqa: E402
from essence.reconstructors.frontier import _filled, fit_factor, oof_quantiles, pool_map  # noqa: E402
from essence.search.swap import swap_search  # noqa: E402
from essence.sweep.signatures import code_version  # noqa: E402
from regimes import DRAWS, baseline_predictions, default_k, draw_models  # noqa: E402

#: name -> (candidate filter on (T, regression, n, k), frontier mix, side, fixed (T, regression) or None,
#: the length rule of :func:`essence.methods.auto.cv_choice`)
POLICIES = {
    "the default": (None, True, "above", None, "longest"),
    "regression alone (no frontier mix)": (None, False, "above", None, "longest"),
    "frontier mix on both sides of the references": (None, True, "both", None, "longest"),
    "a line only when models < items": ("line", True, "above", None, "longest"),
    "search length chosen by CV too": (None, True, "above", None, "cv"),
    "fixed T = 1000 + line, frontier mix": (None, True, "above", (1000, "line"), "longest"),
    "fixed T = 1000 + line, regression alone": (None, False, "above", (1000, "line"), "longest"),
}


def _allowed(key, rule, n: int, k: int) -> bool:
    return rule is None or n >= k or key[1] == rule


def _policy_predict(fold: dict, policy) -> tuple[np.ndarray, np.ndarray | None]:
    """The held-out estimates (pp) of one fold under ``policy`` and whether each lies in its 90 % interval."""
    rule, mix, side, fixed, length = policy
    cv, n, k = fold["cv"], fold["n"], fold["k"]
    T, r = fixed or cv_choice({key: e for key, e in cv["regression"].items() if _allowed(key, rule, n, k)},
                              length)[0]
    G = fold["G"][(T, r)]
    if not mix:
        return np.clip(G["estimate"], 0.0, 100.0), None
    d, s_inner, c_d = frontier_calibration(cv, T, r)
    state = {**fold["D"][d], "items": fold["items"][T], "inner": G["state"], "prior_prec": 0.01, "c_d": c_d,
             "s_inner": s_inner, "pi_out": 0.5, "level": 0.9, "side": side, "y_quantiles": fold["yq"],
             "d_quantiles": np.round(oof_quantiles(cv["frontier"][(T, d)], fold["ycv"]), 6)}
    out = forward.frontier(state, fold["X"][:, fold["items"][T]])
    y = fold["y"]
    return out["estimate"], (out["lower"] <= y) & (y <= out["upper"])


def _fold(sub, te, k: int, fold_seed: int, draw: int) -> dict:
    """The default fitted on the non-test models of one fold and every candidate's reading of the test models."""
    rest = sub.subset(models=~te)
    tr, va, _ = split_models(rest, test=0.0, val=0.1, seed=draw)
    A, B = rest.subset(models=tr), rest.subset(models=va)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sel = make_method("auto", k=k, seed=fold_seed, progress=False).fit(A, B)
    R, y = _filled(np.vstack([A.responses, B.responses])), np.r_[A.target, B.target]  # auto's order
    X = sub.responses[te]
    cv = sel.cv_residuals_
    Ts = sorted({t for t, _ in cv["regression"]})
    items = {T: swap_search(*sel.search_rows(R, y), k, fold_seed, [T])[T] for T in Ts}  # as auto's final search
    G = {}
    for (T, r) in cv["regression"]:
        g = fit_reconstructor(_make(_spec(r, items[T])), R[:, items[T]], y, R)
        G[(T, r)] = {"estimate": g.predict(X[:, items[T]]), "state": g.state()}
    mapping = pool_map(R, y)
    D = {}
    for d in sorted({d for _, d in cv["frontier"]}):
        fm = fit_factor(R, d, seed=fold_seed)
        D[d] = {"loadings": fm.A_, "easiness": fm.b_, "map": list(mapping)}
    return {"cv": cv, "n": y.size, "k": k, "G": G, "D": D, "items": {T: it.tolist() for T, it in items.items()},
            "X": X, "y": sub.target[te], "yq": np.percentile(y, np.linspace(0, 100, 101)), "ycv": y}


def run_draw(data, name: str, m: int, draw: int, k: int, folds: int, out: Path) -> dict:
    """Every policy's RMSE (pp) and coverage over the ``m`` models of one draw, and the best baseline's RMSE;
    cached under ``out``."""
    path = out / f"{name}_m{m}_d{draw}_k{k}_f{folds}.json"
    if path.exists():
        rec = json.loads(path.read_text())
        if rec.get("code") == code_version("auto"):
            return rec
    sub = draw_models(data, m, draw)
    lab = model_folds(sub.n_models, folds, seed=draw)
    y = sub.target
    pred = {p: np.full(y.size, np.nan) for p in POLICIES}
    inside = {p: np.full(y.size, np.nan) for p in POLICIES}
    base: dict[str, np.ndarray] = {}
    for f in np.unique(lab):
        te = lab == f
        fold_seed = draw * 100 + int(f)
        for b, p in baseline_predictions(sub, te, k, fold_seed).items():
            base.setdefault(b, np.full(y.size, np.nan))[te] = p
        fold = _fold(sub, te, k, fold_seed, draw)
        for name_, policy in POLICIES.items():
            est, cov = _policy_predict(fold, policy)
            pred[name_][te] = est
            if cov is not None:
                inside[name_][te] = cov
    rmse = lambda p: float(np.sqrt(np.mean((p - y) ** 2)))  # noqa: E731
    rec = {"dataset": name, "models": m, "draw": draw, "k": k, "code": code_version("auto"),
           "baseline_rmse": min(rmse(p) for p in base.values()),
           "rmse": {p: rmse(v) for p, v in pred.items()},
           "coverage": {p: (None if np.isnan(v).all() else float(np.nanmean(v))) for p, v in inside.items()}}
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(jsonable(rec)), overwrite=True)
    return rec


def table(records: list[dict]) -> pd.DataFrame:
    """Per policy and model count: the geometric-mean ratio to the best baseline over benchmarks (each the
    geometric mean over its draws), the largest benchmark's ratio, coverage (mean over draws) and draws."""
    rows = []
    for m in sorted({r["models"] for r in records}):
        rs = [r for r in records if r["models"] == m]
        for p in POLICIES:
            per = {}
            for r in rs:
                per.setdefault(r["dataset"], []).append(np.log(r["rmse"][p] / r["baseline_rmse"]))
            ratios = {ds: float(np.exp(np.mean(v))) for ds, v in per.items()}
            cov = [r["coverage"][p] for r in rs if r["coverage"][p] is not None]
            rows.append({"models": m, "policy": p, "benchmarks": len(ratios), "draws": len(rs) // max(len(ratios), 1),
                         "ratio (geometric mean)": round(float(np.exp(np.mean(np.log(list(ratios.values()))))), 3),
                         "ratio (largest)": round(max(ratios.values()), 3),
                         "coverage": round(float(np.mean(cov)), 3) if cov else np.nan})
    return pd.DataFrame(rows)


META = {"order": 13.5, "title": "Few reference models: the default's choices taken apart",
        "command": ".venv/bin/python benchmarks/policies.py",
        "caption": "Open LLM Leaderboard v2 (every item), the regime map's draws (ten per model count m) and folds, "
                   "k = 50. Each policy changes one of the default's choices and reads the same fitted folds: the "
                   "frontier mix off; the mix on both sides of the references (the default mixes only above); "
                   "a line only while the models are fewer than the items; the search length chosen by the same CV "
                   "as the regression (the default runs its longest search); a fixed search length T = 1000 read by "
                   "a line (not a policy a user could "
                   "choose without these results: it shows what a better choice of T would be worth). Ratio: the "
                   "policy's RMSE over the best of random + line, random + ridge and AIPW on the same folds, "
                   "geometric mean over draws per benchmark, then over the four benchmarks (largest: the worst "
                   "benchmark); coverage: the share of models inside the 90 % interval, mean over draws (none "
                   "without the frontier mix here)."}


def main(argv=None) -> int:
    from essence.data import load

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--datasets", nargs="+", default=list(OPENLLM_V2))
    p.add_argument("--models", nargs="+", type=int, default=[25, 50, 100])
    p.add_argument("--draws", type=int, default=DRAWS)
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--out", default=str(ROOT / "build" / "policies"), help="cache folder of per-draw JSON")
    p.add_argument("--results", default=str(ROOT / "results"), help="where the table is written ('' = nowhere)")
    args = p.parse_args(argv)
    records = []
    for name in args.datasets:
        data = load(name)
        k = default_k(name, data.n_items)
        for m in args.models:
            for draw in range(args.draws):
                rec = run_draw(data, name, m, draw, k, args.folds, Path(args.out))
                records.append(rec)
                print(f"{name} m={m} draw={draw}: default {rec['rmse']['the default'] / rec['baseline_rmse']:.2f}",
                      flush=True)
    df = table(records)
    if args.results:
        write_table(df, Path(args.results) / "policies.csv", META)
    print(df.to_markdown(index=False))
    return 0


if __name__ == "__main__":
    from essence.data.pinning import ensure

    ensure()  # the same numbers on any machine (essence/data/pinning.py)
    sys.exit(main())
