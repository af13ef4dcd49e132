"""Helpers behind notebook 07 (the other selectors), ``benchmarks/faithful.py`` and ``benchmarks/other_selectors.py``:
errors in pp on the test models of :func:`essence.data.split_models`; selectors fit with ``predictors="basic"``."""

from __future__ import annotations

import inspect
import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from .cards import card
from ..data import split_models
from ..data.errors import InputError
from ..data.metrics import mae, ratio_to_random, rmse
from ..methods import get_method, make_method
from ..methods.kmeans import KMeansSelector
from ..methods.random import RandomSelector
from ..methods.tinybench import TinyBenchSelector
from ..reconstructors.base import subset_score
from ..reconstructors.irt import gpirt_components
from ..reconstructors.simple import LineReconstructor
from ..sweep.signatures import code_version

__all__ = ["toy_matrix", "FAITHFUL_COLUMNS", "faithful_run", "faithful_table", "selector_runs",
           "decision_guide"]

#: :func:`faithful_run`'s figures: MAE (pp) against the pool accuracy, RMSE (pp) against the target
FAITHFUL_COLUMNS = ("pool: random mean", "pool: anchor mean", "pool: p-IRT", "pool: gp-IRT",
                    "target: random+line", "target: random (CV)", "target: anchor mean", "target: gp-IRT",
                    "target: kmeans (CV)", "target: tinybench (CV)")


def toy_matrix(data, n_models: int = 8, n_items: int = 12, seed: int = 0):
    """``n_models`` x ``n_items`` of ``data``: one model per equal-count target stratum (sorted by target),
    items drawn (seeded) among those the models disagree on with no missing cell. InputError when too few."""
    R = np.asarray(data.responses, dtype=np.float64)
    if not 2 <= n_models <= data.n_models:
        raise InputError(f"n_models: {n_models} must be between 2 and the {data.n_models} models")
    rng = np.random.default_rng(seed)
    perm = rng.permutation(data.n_models)
    by_target = perm[np.argsort(data.target[perm], kind="stable")]
    models = np.sort([g[0] for g in np.array_split(by_target, n_models)])
    models = models[np.argsort(data.target[models], kind="stable")]
    sub = R[models]
    ok = np.flatnonzero(~np.isnan(sub).any(axis=0) & (np.nanmax(sub, axis=0) > np.nanmin(sub, axis=0)))
    if not 1 <= n_items <= ok.size:
        raise InputError(f"n_items: {n_items}; only {ok.size} items separate the {n_models} chosen models")
    return data.subset(models=models, items=np.sort(rng.choice(ok, size=n_items, replace=False)))


def _split_parts(data, seed: int):
    sp = split_models(data, seed=seed)
    return sp, data.subset(models=sp.train), data.subset(models=sp.val)


def faithful_run(data, k: int, seed: int = 0, cache_dir=None, tinybench_params=None) -> dict:
    """tinyBenchmarks' and K-Means' estimators at budget ``k`` on the test models of split ``seed``: the
    :data:`FAITHFUL_COLUMNS` (pp; ``pool: ...`` MAE against the pool accuracy, ``target: ...`` RMSE), the choices,
    ``gp_lambda``, sizes; cached as JSON in ``cache_dir``; ``tinybench_params``: extra TinyBenchSelector parameters."""
    path = None if cache_dir is None else Path(cache_dir) / f"{data.name}_k{k}_s{seed}.json"
    if path is not None and path.exists():
        rec = json.loads(path.read_text())
        if all(c in rec for c in FAITHFUL_COLUMNS):
            return rec
    sp, tr, va = _split_parts(data, seed)
    R, y = np.asarray(data.responses, dtype=np.float64), data.target
    nv, te = np.r_[sp.train, sp.val], sp.test
    pool_te = 100 * np.nanmean(R[te], axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rs = RandomSelector(k, seed=seed, progress=False).fit(tr, va, predictors="basic")
        km = KMeansSelector(k, seed=seed, progress=False).fit(tr, va, predictors="basic")
        tb = TinyBenchSelector(k, seed=seed, progress=False,
                               **TinyBenchSelector.route_params(tinybench_params or {})).fit(tr, va, predictors="basic")
    line = LineReconstructor().fit(R[nv][:, rs.items_], y[nv])
    A, P = gpirt_components(R[te][:, tb.items_], tb.params_, tb.items_, tb.weights_, tb.irt.binarize, tb.irt.prior_sd)
    A, P = 100 * A, 100 * P
    G = tb.gp_lambda_ * A + (1 - tb.gp_lambda_) * P
    rec = {
        "pool: random mean": mae(pool_te, subset_score(R[te][:, rs.items_])),
        "pool: anchor mean": mae(pool_te, A),
        "pool: p-IRT": mae(pool_te, P),
        "pool: gp-IRT": mae(pool_te, G),
        "target: random+line": rmse(y[te], line.predict(R[te][:, rs.items_])),
        "target: random (CV)": rmse(y[te], rs.reconstructor_.predict(R[te][:, rs.items_])),
        "target: anchor mean": rmse(y[te], A),
        "target: gp-IRT": rmse(y[te], G),
        "target: kmeans (CV)": rmse(y[te], km.reconstructor_.predict(R[te][:, km.items_])),
        "target: tinybench (CV)": rmse(y[te], tb.reconstructor_.predict(R[te][:, tb.items_])),
        "kmeans choice": km.reconstructor_choice_, "tinybench choice": tb.reconstructor_choice_,
        "random choice": rs.reconstructor_choice_, "gp_lambda": float(tb.gp_lambda_),
        "pool minus target (pp)": float(np.mean(np.abs(pool_te - y[te]))),
        "dataset": data.name, "k": int(k), "seed": int(seed), "n_items": int(data.n_items), "n_test": int(te.size),
    }
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(rec, indent=1))
    return rec


def faithful_table(records):
    """Mean over seeds of :func:`faithful_run` records, indexed by (dataset, k): :data:`FAITHFUL_COLUMNS`,
    ``gp_lambda``, ``pool minus target (pp)``, ``seeds``."""
    df = pd.DataFrame(list(records))
    if df.empty:
        raise InputError("records: no faithful_run results to tabulate")
    cols = list(FAITHFUL_COLUMNS) + ["gp_lambda", "pool minus target (pp)"]
    out = df.groupby(["dataset", "k"], sort=False)[cols].mean()
    out["seeds"] = df.groupby(["dataset", "k"], sort=False)["seed"].nunique()
    return out


def selector_runs(data, methods, k: int, seeds=(0,), cache_dir=None, params=None):
    """``random`` and each of ``methods`` at budget ``k`` per seed's split: one row per (method, seed) with ``rmse``
    (pp), ``random_rmse``, ``ratio``, ``choice`` or ``refused`` (first line); ``params``: ``{method: {param:
    value}}``; ``cache_dir``: runs stored as JSON, reused while :func:`~essence.sweep.signatures.code_version` holds."""
    params = params or {}
    rows = []
    names = list(dict.fromkeys(["random", *methods]))
    for seed in seeds:
        sp, tr, va = _split_parts(data, seed)
        te = data.subset(models=sp.test)
        for name in names:
            path = None if cache_dir is None else Path(cache_dir) / f"{data.name}_{name}_k{k}_s{seed}.json"
            if path is not None and path.exists():
                cached = json.loads(path.read_text())
                if cached.get("code") == code_version(name):  # a run of other code is recomputed
                    rows.append(cached)
                    continue
            row = {"method": name, "seed": int(seed), "dataset": data.name, "k": int(k), "code": code_version(name)}
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    sel = make_method(name, k=k, seed=seed, progress=False, **params.get(name, {})).fit(tr, va, predictors="basic")
            except (ValueError, RuntimeError) as exc:
                row["refused"] = str(exc).splitlines()[0][:200]
            else:
                row["rmse"] = rmse(te.target, sel.reconstructor_.predict(te.responses[:, sel.items_]))
                row["choice"] = sel.reconstructor_choice_
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(json.dumps(row))
            rows.append(row)
    df = pd.DataFrame(rows)
    df["random_rmse"] = df["seed"].map(df[df.method == "random"].set_index("seed")["rmse"])
    df["ratio"] = df["rmse"] / df["random_rmse"] if "rmse" in df else np.nan
    return df


def decision_guide(runs):
    """Per method of :func:`selector_runs` output: what it reads, its card's ``gpu`` and ``prior_cost``, ``min_models``,
    its RMSE over random's (geometric mean over seeds, or ``refused``) and reconstructor choices."""
    out = []
    for name, g in runs.groupby("method", sort=False):
        cls = get_method(name)
        c = card(name)
        ok = g[g["rmse"].notna()] if "rmse" in g else g.iloc[:0]
        sig = inspect.signature(cls.__init__).parameters
        mm = sig["min_models"].default if "min_models" in sig else None
        row = {"method": name, "reads": cls.signal,
               "GPU": c["gpu"], "fewest training models": "any" if mm is None else f"{mm} (refuses below)",
               "needs before choosing": c["prior_cost"]}
        if ok.empty:
            row.update({"ratio to random": "refused", "reconstructor": "-"})
        else:
            row["ratio to random"] = round(ratio_to_random(ok["rmse"].to_numpy(), ok["random_rmse"].to_numpy()), 2)
            row["reconstructor"] = ", ".join(sorted(set(ok["choice"])))
        out.append(row)
    return pd.DataFrame(out).set_index("method")
