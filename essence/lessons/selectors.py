"""Analysis helpers behind notebook 07 (the other selectors) and ``benchmarks/faithful.py``.

Small functions over :class:`~essence.data.Responses`; the selectors themselves live in
:mod:`essence.methods` and nothing here changes what they choose. Errors are in percentage points (pp)
and are measured on the held-out **test** models of :func:`essence.data.split_models` only: the
selectors see training and validation models, never the test ones.

* :func:`toy_matrix`: a hand-sized piece of a real dataset (e.g. 8 models x 12 items) for the toy examples;
* :func:`faithful_run`: tinyBenchmarks' and K-Means' estimators in the paper's setting (error against the
  pool's own accuracy) and in ours (error against the whole-benchmark target);
* :func:`selector_runs`: each selector at one budget on held-out models, with its fit time in seconds (kept in the runs, not shown: it depends on the machine);
* :func:`decision_guide`: the "which method when" table from those runs and the methods' cards.
"""

from __future__ import annotations

import inspect
import json
import time
import warnings
from pathlib import Path

import numpy as np

from ..data.errors import InputError
from ..sweep.signatures import code_version

__all__ = ["toy_matrix", "FAITHFUL_COLUMNS", "faithful_run", "faithful_table", "selector_runs",
           "decision_guide"]

#: The figures of :func:`faithful_run`: MAE (pp) against the test models' pool accuracy (the paper's
#: quantity) and RMSE (pp) against their whole-benchmark target (ours).
FAITHFUL_COLUMNS = ("pool: random mean", "pool: anchor mean", "pool: p-IRT", "pool: gp-IRT",
                    "target: random+line", "target: random (CV)", "target: anchor mean", "target: gp-IRT",
                    "target: kmeans (CV)", "target: tinybench (CV)")


def toy_matrix(data, n_models: int = 8, n_items: int = 12, seed: int = 0):
    """A hand-sized :class:`~essence.data.Responses` cut from ``data``: ``n_models`` x ``n_items``.

    Models: one from each of ``n_models`` equal-count strata of the target (the lowest-positioned model of
    each stratum after a seeded shuffle), so weak and strong models are both there, sorted by target.
    Items: ``n_items`` drawn (seeded) among the items on which those models disagree (not all equal) and
    have no missing cell, sorted by position. Same seed, same matrix. InputError when there are too few.
    """
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
    items = np.sort(rng.choice(ok, size=n_items, replace=False))
    return data.subset(models=models, items=items)


def _split_parts(data, seed: int):
    from ..data import split_models

    sp = split_models(data, seed=seed)
    return sp, data.subset(models=sp.train), data.subset(models=sp.val)


def faithful_run(data, k: int, seed: int = 0, cache_dir=None, tinybench_params=None) -> dict:
    """tinyBenchmarks' and K-Means' estimators on held-out test models, in the paper's setting and ours.

    The split is :func:`essence.data.split_models` (``seed``); ``kmeans`` and ``tinybench`` choose ``k``
    anchors (the same ones: same K-Means, same seed) on training + validation models. Returns a dict with
    every :data:`FAITHFUL_COLUMNS` entry (pp):

    * ``pool: ...`` MAE against each test model's accuracy on the pool (the quantity tinyBenchmarks
      estimates and reports): the plain mean of ``k`` random items, the cluster-weighted anchor mean,
      p-IRT and gp-IRT (``lambda`` set on validation models);
    * ``target: ...`` RMSE against the whole-benchmark target: random items + a least-squares line, the
      ``random`` method (its reconstructor chosen by CV), the anchor mean and gp-IRT as they are, and the
      ``kmeans`` / ``tinybench`` methods with their CV-chosen reconstructors;

    plus the choices, ``gp_lambda`` and sizes. With ``cache_dir`` the dict is stored there as JSON and read
    back on the next call with the same dataset, ``k`` and ``seed``. ``tinybench_params``: extra
    :class:`~essence.methods.tinybench.TinyBenchSelector` parameters (e.g. fewer IRT epochs in tests).
    """
    path = None if cache_dir is None else Path(cache_dir) / f"{data.name}_k{k}_s{seed}.json"
    if path is not None and path.exists():
        rec = json.loads(path.read_text())
        if all(c in rec for c in FAITHFUL_COLUMNS):
            return rec
    from ..methods.kmeans import KMeansSelector
    from ..methods.random import RandomSelector
    from ..methods.tinybench import TinyBenchSelector
    from ..reconstructors.irt import gpirt_components
    from ..data.metrics import mae, rmse
    from ..reconstructors.simple import LineReconstructor
    from ..reconstructors.base import subset_score

    sp, tr, va = _split_parts(data, seed)
    R, y = np.asarray(data.responses, dtype=np.float64), data.target
    nv, te = np.r_[sp.train, sp.val], sp.test
    pool_te = 100 * np.nanmean(R[te], axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rs = RandomSelector(k, seed=seed, progress=False).fit(tr, va)
        km = KMeansSelector(k, seed=seed, progress=False).fit(tr, va)
        tb = TinyBenchSelector(k, seed=seed, progress=False,
                               **TinyBenchSelector.route_params(tinybench_params or {})).fit(tr, va)
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
    """Mean over seeds of :func:`faithful_run` records: a DataFrame indexed by (dataset, k), columns
    :data:`FAITHFUL_COLUMNS` plus ``gp_lambda``, ``pool minus target (pp)`` and ``seeds``."""
    import pandas as pd

    df = pd.DataFrame(list(records))
    if df.empty:
        raise InputError("records: no faithful_run results to tabulate")
    cols = list(FAITHFUL_COLUMNS) + ["gp_lambda", "pool minus target (pp)"]
    out = df.groupby(["dataset", "k"], sort=False)[cols].mean()
    out["seeds"] = df.groupby(["dataset", "k"], sort=False)["seed"].nunique()
    return out


def selector_runs(data, methods, k: int, seeds=(0,), cache_dir=None, params=None):
    """Each method in ``methods`` at budget ``k`` on the held-out test models of each seed's split.

    Returns a DataFrame, one row per (method, seed): ``rmse`` (pp, test models), ``random_rmse`` (the
    ``random`` method on the same split and seed), ``ratio`` = rmse / random_rmse, ``seconds`` (wall time of
    ``fit``: choosing the items and the reconstructor; a warm feature cache for Herding and PPL),
    ``choice`` (the reconstructor) or ``refused`` (the method's one-line refusal). ``params``: optional
    ``{method: {param: value}}``. With ``cache_dir`` each run is stored as JSON and reused while the method's
    code is the same (:func:`essence.sweep.signatures.code_version`).
    """
    import pandas as pd

    from ..methods import make_method
    from ..data.metrics import rmse

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
            t0 = time.perf_counter()
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    sel = make_method(name, k=k, seed=seed, progress=False, **params.get(name, {})).fit(tr, va)
            except (ValueError, RuntimeError) as exc:
                row["refused"] = str(exc).splitlines()[0][:200]
            else:
                row["seconds"] = time.perf_counter() - t0
                row["rmse"] = rmse(te.target, sel.reconstructor_.predict(te.responses[:, sel.items_]))
                row["choice"] = sel.reconstructor_choice_
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(json.dumps(row))
            rows.append(row)
    df = pd.DataFrame(rows)
    base = df[df.method == "random"].set_index("seed")["rmse"]
    df["random_rmse"] = df["seed"].map(base)
    df["ratio"] = df["rmse"] / df["random_rmse"] if "rmse" in df else np.nan
    return df


def decision_guide(runs):
    """The "which method when" table from :func:`selector_runs` output.

    One row per method: what it reads to choose (``signal``: item texts, model results or nothing), the
    GPU note of its card, the fewest training models it accepts (its ``min_models`` parameter where it has
    one, else "any"), what has to exist before it can choose (its card's ``prior_cost``), the ratio of its
    test RMSE to random's (geometric mean over seeds, :func:`essence.data.metrics.ratio_to_random`)
    and its reconstructor choices. Refusing methods show the refusal.
    """
    import pandas as pd

    from ..methods import get_method
    from .cards import card
    from ..data.metrics import ratio_to_random

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
