"""Suite against separate artifacts on the same held-out models (``benchmarks/suite.py``, notebook 11).

:func:`run_pair` compresses a suite jointly (k items across all members) and every member separately
(``k_each`` items each, the single-benchmark default method) on one split of the shared models, and
returns each approach's test estimates; :func:`figure_rows` turns those into per-benchmark and mean
figures. The separate approach's suite mean is the mean of its five estimates.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ..data import split_models
from ..data.metrics import summary
from .data import Suite

__all__ = ["run_pair", "with_outside", "figure_rows", "suite_split", "leave_out_models", "cross_prediction", "target_correlations", "weighting_study",
           "search_curve", "outside_models", "restrict_to_logged", "new_model_check"]


def with_outside(suite: Suite, b: int, split):
    """``(data, split)`` for member ``b`` trained on its whole pool: the shared models' training and validation
    parts of ``split`` plus the member's models outside the suite (:meth:`Suite.outside_of`) as more
    training models; no test models (the suite's test models are scored by the caller)."""
    from ..data import Responses, Split

    m = suite.members[b]
    out = suite.outside_of(b)
    keep = np.r_[split.train, split.val]
    parts = [m.subset(models=keep)] + ([out] if out is not None else [])
    data = Responses(np.vstack([p.responses for p in parts]), np.concatenate([p.models for p in parts]), m.items,
                     np.concatenate([p.target for p in parts]), m.texts, m.name, m.item_extras, {}, m.target_source)
    nt, nv = split.train.size, split.val.size
    extra = data.n_models - nt - nv
    return data, Split(np.r_[np.arange(nt), np.arange(nt + nv, nt + nv + extra)], np.arange(nt, nt + nv),
                       np.array([], dtype=np.intp))


def suite_split(suite: Suite, seed: int, test: float = 0.2, val: float = 0.1):
    """The split every approach shares: stratified on the suite mean (:func:`essence.data.split_models`)."""
    return split_models(suite.mean_target, test=test, val=val, seed=seed)


def run_pair(suite: Suite, seed: int = 0, k: int = 250, k_each: int = 50, method: str = "essence",
             separate_method: str = "auto", test: float = 0.2, val: float = 0.1, cache: Path | None = None,
             progress: bool = False, approaches=("suite", "separate"), evaluate_on: Suite | None = None,
             tag: str = "", reconstructors="default", **params) -> dict:
    """``{approach: {"models": [...], "truth": {name: [...]}, "estimate": {name: [...]}, "budget": {...}}}``
    on the test models of seed ``seed`` (or on ``evaluate_on``, models kept out of ``suite`` altogether).
    ``approaches``: any of ``"suite"``, ``"separate"`` (each member's default artifact on the same split of the
    shared models) and ``"separate_pool"`` (the same, its training models joined by the member's models outside
    the suite, :func:`with_outside`: what ``essence compress NAME`` on the member's whole file would train on).
    Each approach is cached as JSON in ``cache`` (a folder) when given, keyed by everything that changes it
    plus ``tag``. ``reconstructors``: the suite's reconstructor choice (:func:`essence.suite.artifact.compress_suite`)."""
    from ..artifact.compressed import compress
    from .artifact import compress_suite

    split = suite_split(suite, seed, test, val)
    testd = suite.subset(split.test) if evaluate_on is None else evaluate_on
    pos = {c: i for i, c in enumerate(suite.pooled().items.tolist())}
    out = {}
    for approach in approaches:
        key = (f"{tag}{approach}-{'+'.join(suite.names)}-n{suite.n_models}-s{seed}-t{test}-v{val}-"
               + (f"{method}-k{k}-{reconstructors if isinstance(reconstructors, str) else '+'.join(reconstructors)}"
                  + "-" + "-".join(f"{a}={b}" for a, b in sorted(params.items()))
                  if approach == "suite" else f"{separate_method}-k{k_each}"
                  + ("-pool" if approach == "separate_pool" else "")))
        path = Path(cache) / f"{key}.json" if cache else None
        if path is not None and path.exists():
            out[approach] = json.loads(path.read_text())
            continue
        if approach == "suite":
            t0 = time.perf_counter()
            art = compress_suite(suite, k, method=method, seed=seed, split=split, progress=progress,
                                 reconstructors=reconstructors, **params)
            total = round(time.perf_counter() - t0, 1)
            est = art._predict(testd.pooled().responses[:, [pos[c] for c in art.columns()]])
            rec = {"budget": art.selection["budget"], "items": art.columns(),
                   "kinds": {n: art.selection["reconstructor_choice"][n]["kind"] for n in art.names},
                   "choice": art.selection["reconstructor_choice"],
                   "seconds": {"selection": art.selection.get("seconds"), "total": total}}
        else:
            est, rec = {}, {"budget": {}, "kinds": {}}
            for b, m in enumerate(suite.members):
                data, sp = m, split
                if approach == "separate_pool":
                    data, sp = with_outside(suite, b, split)
                    rec.setdefault("n_train", {})[m.name] = int(sp.train.size)
                a = compress(data, k=k_each, method=separate_method, seed=seed, split=sp, progress=progress)
                est[m.name] = a.reconstructor.predict(testd.members[b].subset(items=a.items).responses)
                rec["budget"][m.name] = k_each
                rec["kinds"][m.name] = a.selection.get("reconstructor_choice")
            est["mean"] = np.mean([est[n] for n in suite.names], axis=0)
        rec.update({"models": testd.models.tolist(),
                    "truth": {**{n: testd.targets[:, b].tolist() for b, n in enumerate(suite.names)},
                              "mean": testd.mean_target.tolist()},
                    "estimate": {n: np.asarray(v, dtype=float).tolist() for n, v in est.items()}})
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(rec))
        out[approach] = rec
    return out


def figure_rows(results: dict, seed: int) -> pd.DataFrame:
    """One row per approach x benchmark (and ``mean``): rmse, mae, kendall, spearman (pp / rank)."""
    rows = []
    for approach, rec in results.items():
        for name, est in rec["estimate"].items():
            s = summary(np.asarray(rec["truth"][name]), np.asarray(est))
            rows.append({"seed": seed, "approach": approach, "benchmark": name,
                         **{k: s[k] for k in ("n_models", "rmse", "mae", "kendall", "spearman")}})
    return pd.DataFrame(rows)


def leave_out_models(suite: Suite, fraction: float = 0.2, seed: int = 0) -> tuple[Suite, Suite]:
    """``(kept, left_out)``: a random ``fraction`` of the suite's models held out of *everything* (the split,
    the selection, the reconstructors and every cache), to check an artifact on models that were not in the
    data it was built from."""
    rng = np.random.default_rng([int(seed), 99])
    out = np.zeros(suite.n_models, dtype=bool)
    out[rng.choice(suite.n_models, size=int(round(fraction * suite.n_models)), replace=False)] = True
    return suite.subset(np.flatnonzero(~out)), suite.subset(np.flatnonzero(out))


def cross_prediction(suite: Suite, seeds=(0,), k_each: int = 50, test: float = 0.2, val: float = 0.1) -> pd.DataFrame:
    """Why joint compression helps, before any selection: each member predicted by a ridge (penalty by
    CV, :class:`essence.reconstructors.simple.RidgeReconstructor`) from ``k_each`` random items of its own, from the
    same random items of *every* member (``k_each x members``), and from every item of its own pool.

    Fitted on training + validation models, scored on the test models of each seed's split. Returns one row
    per seed x member: ``own``, ``all``, ``own_pool`` (RMSE, pp) and ``gain = 1 - all / own``.
    """
    from ..data._runtime import single_thread
    from ..reconstructors.simple import RidgeReconstructor

    rows = []
    R = suite.pooled().responses
    for seed in seeds:
        sp = suite_split(suite, seed, test, val)
        fit, te = np.r_[sp.train, sp.val], sp.test
        rng = np.random.default_rng([int(seed), 11])
        own = [rng.choice(b, size=min(k_each, b.size), replace=False) for b in suite.blocks]
        every = np.concatenate(own)
        Y = suite.targets
        with single_thread():
            for b, name in enumerate(suite.names):
                err = {}
                for label, cols in (("own", own[b]), ("all", every), ("own_pool", suite.blocks[b])):
                    pred = RidgeReconstructor().fit(R[fit][:, cols], Y[fit, b]).predict(R[te][:, cols])
                    err[label] = float(np.sqrt(np.mean((pred - Y[te, b]) ** 2)))
                rows.append({"seed": seed, "benchmark": name, **err, "gain": 1 - err["all"] / err["own"]})
    return pd.DataFrame(rows)


def outside_models(suite: Suite, pools, seeds=(0,), k_each: int = 50, test: float = 0.2, val: float = 0.1) -> pd.DataFrame:
    """Would the models *outside* the suite help? Each member's pool (``pools``: the members as loaded, before
    the suite kept only the shared models) has models that some other member lacks. For ``k_each`` random
    items of each member, a ridge (penalty by CV, :class:`essence.reconstructors.simple.RidgeReconstructor`) is fitted
    on the suite's training + validation models (``suite``) and on every model of the member's pool except the
    suite's test models (``pool``); both are scored on the suite's test models of each seed's split.

    Returns one row per seed x member: ``n_suite``, ``n_pool`` (training models), ``suite``, ``pool`` (RMSE,
    pp) and ``change = pool / suite - 1``.
    """
    from ..data._runtime import single_thread
    from ..data.errors import InputError
    from ..reconstructors.simple import RidgeReconstructor

    pools = list(pools)
    if len(pools) != len(suite.members):
        raise InputError(f"outside_models: {len(pools)} pools for a suite of {len(suite.members)} members; "
                         "pass each member's full data, in the suite's order")
    rows = []
    for seed in seeds:
        sp = suite_split(suite, seed, test, val)
        test_models = suite.models[sp.test]
        fit_models = suite.models[np.r_[sp.train, sp.val]]
        rng = np.random.default_rng([int(seed), 11])
        with single_thread():
            for b, (name, pool) in enumerate(zip(suite.names, pools)):
                member = suite.members[b]
                cols = np.sort(rng.choice(member.n_items, size=min(k_each, member.n_items), replace=False))
                where = {i: j for j, i in enumerate(pool.items.tolist())}
                missing = [i for i in member.items[cols].tolist() if i not in where]
                if missing:
                    raise InputError(f"outside_models: {name}'s pool lacks items {missing[:3]}; pass the data the "
                                     "suite was made from")
                pc = np.array([where[i] for i in member.items[cols].tolist()])
                row = {m: j for j, m in enumerate(pool.models.tolist())}
                te = np.array([row[m] for m in test_models.tolist()])
                fits = {"suite": np.array([row[m] for m in fit_models.tolist()]),
                        "pool": np.setdiff1d(np.arange(pool.n_models), te)}
                err, n = {}, {}
                for label, tr in fits.items():
                    pred = RidgeReconstructor().fit(pool.responses[tr][:, pc], pool.target[tr]).predict(
                        pool.responses[te][:, pc])
                    err[label] = float(np.sqrt(np.mean((pred - pool.target[te]) ** 2)))
                    n[f"n_{label}"] = int(tr.size)
                rows.append({"seed": seed, "benchmark": name, **n, **err, "change": err["pool"] / err["suite"] - 1})
    return pd.DataFrame(rows)


def restrict_to_logged(suite: Suite, new) -> Suite:
    """The suite with each member kept to the items a new model has answers for (``new``: one
    :class:`essence.data.Responses` per member, in the suite's order, e.g. imported lm-evaluation-harness
    logs that cover part of a pool), so that an artifact compressed on it chooses only items the model has.
    The models outside the suite (:attr:`Suite.outside`) and the dropped counts are kept, on the kept items.
    InputError when the counts differ or a member keeps no item."""
    from ..data.errors import InputError
    from .data import make_suite

    new = list(new)
    if len(new) != len(suite.members):
        raise InputError(f"restrict_to_logged: {len(new)} results for a suite of {len(suite.members)} members; "
                         "give one per member, in the suite's order")
    kept = []
    for member, r in zip(suite.members, new):
        have = set(r.items.tolist())
        cols = np.array([i for i, c in enumerate(member.items.tolist()) if c in have], dtype=np.intp)
        if not cols.size:
            raise InputError(f"restrict_to_logged: the new model has no answer on any of {member.name}'s items; "
                             "check that its results belong to that benchmark")
        kept.append(member.subset(items=cols))
    out = make_suite(kept, suite.names)
    # the models outside the suite stay (on the kept items): the trees of outside_candidates train on them
    outside = tuple(None if o is None else o.subset(items=m.items.astype(str)) for o, m in zip(suite.outside, kept))
    return Suite(out.members, dict(suite.dropped), outside)


def new_model_check(art, new, reference: dict, chance: dict | None = None) -> pd.DataFrame:
    """A suite artifact's estimate for one new model against a reference, per member and for the suite mean.

    ``art`` a :class:`essence.suite.SuiteCompressed`; ``new`` one data per member (its answers on at least the
    chosen items) for **one** model; ``reference`` member name -> the score the estimate is compared with (pp;
    e.g. a reconstructor on every item the model answered, when its full score is unknown); the mean's
    reference is the mean of the members'. ``chance``: optional member name -> chance level (pp).
    Returns one row per member and ``mean``: ``estimate``, ``lower``, ``upper``, ``reference``,
    ``difference`` (estimate - reference), ``inside`` (the reference within the interval), and ``chance``."""
    from ..data.errors import InputError

    est = art.estimate(new)
    if len(est) != 1:
        raise InputError(f"new_model_check: expected the results of one model, got {len(est)}")
    missing = [n for n in art.names if n not in reference]
    if missing:
        raise InputError(f"new_model_check: no reference for {', '.join(missing)}")
    ref = {n: float(reference[n]) for n in art.names}
    ref["mean"] = float(np.mean([ref[n] for n in art.names]))
    rows = []
    for name in [*art.names, "mean"]:
        e, lo, hi = (float(est[c].iloc[0]) for c in (name, f"{name}_lower", f"{name}_upper"))
        row = {"benchmark": name, "estimate": e, "lower": lo, "upper": hi, "reference": ref[name],
               "difference": e - ref[name], "inside": bool(lo <= ref[name] <= hi)}
        if chance is not None:
            row["chance"] = (float(np.mean([chance[n] for n in art.names])) if name == "mean"
                             else float(chance[name]))
        rows.append(row)
    return pd.DataFrame(rows).set_index("benchmark")


def target_correlations(suite: Suite) -> pd.DataFrame:
    """``(members, members)`` Pearson correlations of the members' full scores over the suite's models."""
    return pd.DataFrame(np.corrcoef(suite.targets.T), index=suite.names, columns=suite.names)


def weighting_study(suite: Suite, seed: int = 0, configs=("random", "raw", "relative", "relative+mean"),
                    generations: int = 100, k: int = 250, test: float = 0.2, val: float = 0.1) -> pd.DataFrame:
    """How the joint fitness's weighting changes the held-out error.

    Each config is ``"random"`` or a weighting of :data:`essence.suite.fitness.WEIGHTINGS`; the chosen items are
    reconstructed per member by a ridge (penalty by CV) fitted on training + validation models; RMSE (pp) on the
    test models, per member, ``avg`` (their mean) and ``mean`` (the suite mean's RMSE). One row per config."""
    from ..data._runtime import single_thread
    from ..reconstructors.simple import RidgeReconstructor
    from .select import select_suite

    sp = suite_split(suite, seed, test, val)
    tr, va, te = (suite.subset(i) for i in sp)
    R = suite.pooled().responses
    fit = np.r_[sp.train, sp.val]
    rows = []
    for cfg in configs:
        with single_thread():
            if cfg == "random":
                idx, info = select_suite(tr, va, k, method="random", seed=seed, progress=False)
            else:
                idx, info = select_suite(tr, va, k, seed=seed, progress=False, weighting=cfg,
                                         generations=generations, tau_text=1.0)
            preds, row = [], {"config": cfg}
            for b, name in enumerate(suite.names):
                p = RidgeReconstructor().fit(R[fit][:, idx], suite.targets[fit, b]).predict(R[sp.test][:, idx])
                preds.append(p)
                row[name] = float(np.sqrt(np.mean((p - te.targets[:, b]) ** 2)))
        row["avg"] = float(np.mean([row[n] for n in suite.names]))
        row["mean"] = float(np.sqrt(np.mean((np.mean(preds, axis=0) - te.mean_target) ** 2)))
        row["budget"] = " ".join(str(info["budget"][n]) for n in suite.names)
        rows.append(row)
    return pd.DataFrame(rows).set_index("config")


def search_curve(suite: Suite, seed: int = 0, generations=(0, 25, 50, 100, 150, 300), k: int = 250,
                 test: float = 0.2, val: float = 0.1, **params) -> pd.DataFrame:
    """Does more search lower the held-out error? The joint EssenceBench's best candidate after each number of
    ``generations`` (the same seed, so a shorter run is the start of a longer one), its fitness (the combined
    relative error the GA minimises, unitless) and, with a ridge per member (penalty by CV) fitted on training +
    validation models, its test RMSE (pp): ``avg`` (mean of the members') and ``mean`` (the suite mean's).
    ``params``: other joint settings. One row per number of generations."""
    from ..data._runtime import single_thread
    from ..reconstructors.simple import RidgeReconstructor
    from .select import select_suite

    sp = suite_split(suite, seed, test, val)
    tr, va, te = (suite.subset(i) for i in sp)
    R = suite.pooled().responses
    fit = np.r_[sp.train, sp.val]
    rows = []
    for g in generations:
        with single_thread():
            idx, info = select_suite(tr, va, k, seed=seed, progress=False, generations=int(g), **params)
            preds = [RidgeReconstructor().fit(R[fit][:, idx], suite.targets[fit, b]).predict(R[sp.test][:, idx])
                     for b in range(len(suite.names))]
        per = [float(np.sqrt(np.mean((p - te.targets[:, b]) ** 2))) for b, p in enumerate(preds)]
        fr = info["fitness_rmse"]
        rows.append({"generations": int(g), "fitness": float(-info["ga"]["history"]["best_fitness"][-1]),
                     "train mean RMSE": fr["mean"], "avg": float(np.mean(per)),
                     "mean": float(np.sqrt(np.mean((np.mean(preds, axis=0) - te.mean_target) ** 2))),
                     "budget": " ".join(str(info["budget"][n]) for n in suite.names)})
    return pd.DataFrame(rows).set_index("generations")
