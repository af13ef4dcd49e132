"""Adaptive testing against the default static subset and random items, on random and top splits.

For each Open LLM Leaderboard v2 benchmark (arc_challenge, ifeval, musr, math_hard: every item, the real case) and
each metabench pool (arc, gsm8k, mmlu, truthfulqa, winogrande: pre-selected items) at k = 10, 25, 50, 100 items,
seeds 0, 1, 2, on random splits (20 % of the models held out, stratified) and the top split (the strongest 20 %):

* ``adaptive``: :func:`essence.artifact.adaptive.compress_adaptive` at k = 100, its test models then tested with at
  most 10, 25, 50 and 100 items (same bank and calibration);
* static runs as :func:`essence.sweep.run_sweep` makes them (``test=0.2``, :func:`static_runs`): ``auto`` (the
  default), ``random_line``, ``random_ridge``, ``aipw`` (the audit's baselines) and, on the metabench pools at
  k = 50, ``irt`` (MetaBench's static IRT subset, for the claims ledger).

Every method of a (benchmark, split, seed) sees the same test models. The metabench pools are subsampled (seeded) to
1,250 models. Writes ``results/adaptive.csv`` (per benchmark x split x k), ``results/adaptive_summary.csv`` (per
family x split x k, geometric means of RMSE ratios), ``results/adaptive_runs.csv`` (every run; the claims ledger
reads it), ``results/adaptive_floor.csv`` (the 2PL's misfit floor: its estimate from every item of the pool) and
their ``.json`` captions.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/adaptive.py          # everything missing, then the tables
    .venv/bin/python benchmarks/adaptive.py --part tables                # the tables from the caches only

Caches: ``build/adaptive/{sweep,static}`` (sweep records, kept while the method's code is the same) and
``build/adaptive/cells`` (adaptive, per benchmark x split x seed, keyed by the data's fingerprint, the split and the
code of :mod:`essence.artifact.adaptive`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# this folder off the path (its selectors.py would shadow the standard library's), the repository on it
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != ROOT / "benchmarks"]

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from essence.data import METABENCH, OPENLLM_V2, split_models  # noqa: E402
from essence.data import load as load_data  # noqa: E402
from essence.data._io import write_atomic  # noqa: E402

KS = (10, 25, 50, 100)
SEEDS = (0, 1, 2)
SPLITS = ("random", "top")
TEST = 0.2
STATIC = ("auto", "random_line", "random_ridge", "aipw")
BASELINES = ("random_line", "random_ridge", "aipw")
#: MetaBench's static IRT subset runs at this k only (the claims ledger's setting, essence.lessons.ledger.ADAPTIVE_K)
IRT_K = 50
#: models kept per metabench pool (seeded subsample; the prototype kept 1,000 references)
META_MODELS = 1250
BUILD = ROOT / "build" / "adaptive"


def family(name: str) -> str:
    return "openllm_v2" if name in OPENLLM_V2 else "metabench"


def source(name: str) -> str:
    """The dataset as the sweep and compress_adaptive read it: a shipped name, or for a metabench pool the
    seeded subsample of :data:`META_MODELS` models written once to ``build/adaptive/data/NAME.npz``."""
    if name not in METABENCH:
        return name
    path = BUILD / "data" / f"{name}.npz"
    if not path.exists():
        d = load_data(name)
        keep = np.sort(np.random.default_rng(0).choice(d.n_models, min(META_MODELS, d.n_models), replace=False))
        s = d.subset(models=keep)
        arrays = {"responses": s.responses, "models": s.models.astype(str), "items": s.items.astype(str),
                  "full_score": s.target}
        if "item_version" in s.item_extras:
            arrays["item_version"] = s.item_extras["item_version"].astype(str)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npz")
        np.savez_compressed(tmp, **arrays)
        tmp.replace(path)
    return str(path)


# ------------------------------------------------------------------------------------------------
# the static methods: the comparison sweep
# ------------------------------------------------------------------------------------------------
def static_runs(names, seeds) -> pd.DataFrame:
    """Every static run (:data:`STATIC` at :data:`KS`, ``irt`` at :data:`IRT_K` on the metabench pools) on the
    sweep's splits: ``compress(data, k, method, seed, split=split_models(data, test=0.2, seed=seed, kind=split),
    predictors="basic")``, exactly one run of :func:`essence.sweep.run_sweep` (same split, same settings, same
    record). A finished run is read from the sweep cache ``build/adaptive/sweep`` or from ``build/adaptive/static``
    when its data fingerprint, split and method code (:func:`essence.sweep.signatures.code_version`, recorded as
    ``code``) match; other runs are computed here, one process, cheapest first, and written to
    ``build/adaptive/static/runs`` in the sweep's record format."""
    from essence.artifact.compressed import compress
    from essence.data._runtime import single_thread
    from essence.sweep import load_runs, run_path
    from essence.sweep.records import RUN_SCHEMA, RUN_SCHEMA_VERSION, _split_id

    codes = _codes()
    cached = {}
    for folder in (BUILD / "sweep", BUILD / "static"):
        for key, rec in load_runs(folder).items():
            if not rec.get("error"):
                cached[key] = rec
    todo, rows = [], []
    for name in names:
        data = load_data(source(name))
        fp = data.fingerprint()
        for split in SPLITS:
            label = name if split == "random" else f"{name}@{split}"
            for seed in seeds:
                sp = split_models(data, test=TEST, seed=seed, kind=split)
                sid = _split_id(sp)
                runs = [(m, k) for m in STATIC for k in KS] + ([("irt", IRT_K)] if name in METABENCH else [])
                for m, k in runs:
                    rec = cached.get((label, m, k, seed))
                    sig = (rec or {}).get("signature", {})
                    if (rec is not None and sig.get("fingerprint") == fp and sig.get("split_id") == sid
                            and rec.get("code") == codes[m]):
                        rows.append((name, split, m, k, seed, rec))
                    else:
                        todo.append((0 if m != "auto" else k, name, split, label, m, k, seed))
    todo.sort(key=lambda t: t[0])
    print(f"static runs: {len(rows)} cached, {len(todo)} to compute", flush=True)
    for i, (_, name, split, label, m, k, seed) in enumerate(todo):
        data = load_data(source(name))
        sp = split_models(data, test=TEST, seed=seed, kind=split)
        t0 = time.perf_counter()
        with single_thread():
            art = compress(data, k, m, seed, split=sp, progress=False, predictors="basic")
        rec = {"schema": RUN_SCHEMA, "schema_version": RUN_SCHEMA_VERSION, "dataset": label, "method": m, "k": k,
               "seed": seed, "signature": {"fingerprint": data.fingerprint(), "split_id": _split_id(sp)},
               "code": codes[m],
               "n_test": int(sp.test.size), "error": "", "seconds": time.perf_counter() - t0,
               "figures": art.figures, "reconstructor": art.selection.get("reconstructor_choice", ""),
               "created": time.strftime("%Y-%m-%dT%H:%M:%S")}
        path = run_path(BUILD / "static", label, m, k, seed)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps(rec, default=float), overwrite=True)
        rows.append((name, split, m, k, seed, rec))
        print(f"[{i + 1}/{len(todo)}] {label} {m} k={k} seed={seed}: rmse {art.figures['test']['rmse']:.3f} "
              f"({rec['seconds']:.0f} s)", flush=True)
    return pd.DataFrame([{"dataset": n, "split": sp_, "method": m, "k": k, "seed": s,
                          "rmse": r["figures"]["test"]["rmse"], "kendall": r["figures"]["test"]["kendall"],
                          "coverage": r["figures"]["test"].get("coverage", np.nan), "n_test": r["n_test"],
                          "items_used": k} for n, sp_, m, k, s, r in rows])


def _codes() -> dict[str, str]:
    """The current code version of every static method."""
    from essence.sweep.signatures import code_version

    return {m: code_version(m) for m in (*STATIC, "irt")}


def cached_static() -> pd.DataFrame:
    """The static runs the caches hold from the current code (nothing computed)."""
    from essence.sweep import load_runs

    codes, rows = _codes(), []
    for folder in (BUILD / "sweep", BUILD / "static"):
        for (label, m, k, seed), r in load_runs(folder).items():
            if not r.get("error") and r.get("code") == codes.get(m):
                name, _, split = label.partition("@")
                rows.append({"dataset": name, "split": split or "random", "method": m, "k": k, "seed": seed,
                             "rmse": r["figures"]["test"]["rmse"], "kendall": r["figures"]["test"]["kendall"],
                             "coverage": r["figures"]["test"].get("coverage", np.nan), "n_test": r["n_test"],
                             "items_used": k})
    return pd.DataFrame(rows).drop_duplicates(["dataset", "split", "method", "k", "seed"], keep="last")


# ------------------------------------------------------------------------------------------------
# adaptive: one compress_adaptive per benchmark x split x seed, tested at every k
# ------------------------------------------------------------------------------------------------
def adaptive_cell(name: str, split: str, seed: int) -> dict:
    """Figures of adaptive testing on one cell at every k (cached)."""
    from essence.artifact.adaptive import compress_adaptive
    from essence.data.metrics import summary
    from essence.sweep.signatures import module_version

    data = load_data(source(name))
    sp = split_models(data, test=TEST, seed=seed, kind=split)
    key = {"fingerprint": data.fingerprint(), "test": sp.test.tolist(), "val": sp.val.tolist(), "ks": list(KS),
           "code": module_version("essence.artifact.adaptive")}
    sig = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    path = BUILD / "cells" / f"{name}__{split}__s{seed}.json"
    if path.exists():
        cached = json.loads(path.read_text())
        if cached.get("signature") == sig:
            return cached
    t0 = time.perf_counter()
    art = compress_adaptive(data, k=max(KS), seed=seed, split=sp, progress=False)
    fit_s = time.perf_counter() - t0
    test = data.subset(models=sp.test)
    figs = {}
    for k in KS:
        t1 = time.perf_counter()
        out = art.estimates(test.responses, k=k)
        f = summary(test.target, out["estimate"], out["lower"], out["upper"])
        f.update(items_used=float(np.mean(out["items_used"])), seconds=time.perf_counter() - t1,
                 bias=float(np.mean(out["estimate"] - test.target)), outside=float(np.mean(out["outside"])))
        figs[str(k)] = f
    cell = {"signature": sig, "dataset": name, "split": split, "seed": seed, "n_test": int(test.n_models),
            "n_ref": int(len(sp.train) + len(sp.val)), "fit_seconds": fit_s, "figures": figs,
            "bank": dict(art.bank.info),
            "calibration": {"s_in": [art.calibration["s_in"][k] for k in KS],
                            "s_out": [art.calibration["s_out"][k] for k in KS]}}
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(cell, indent=1), overwrite=True)
    return cell


def adaptive_runs(names, seeds, cached_only: bool = False) -> pd.DataFrame:
    rows = []
    for name in names:
        for split in SPLITS:
            for seed in seeds:
                path = BUILD / "cells" / f"{name}__{split}__s{seed}.json"
                if cached_only and not path.exists():
                    continue
                cell = json.loads(path.read_text()) if cached_only else adaptive_cell(name, split, seed)
                print(f"adaptive {name:13s} {split:6s} seed {seed}: fit + calibration {cell['fit_seconds']:.1f} s; "
                      + " ".join(f"k={k} {cell['figures'][str(k)]['rmse']:.2f}" for k in KS), flush=True)
                for k in KS:
                    f = cell["figures"][str(k)]
                    rows.append({"dataset": name, "split": split, "method": "adaptive", "k": k, "seed": seed,
                                 "rmse": f["rmse"], "kendall": f["kendall"], "coverage": f["coverage"],
                                 "n_test": cell["n_test"], "items_used": f["items_used"], "bias": f["bias"]})
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------------------------------
# why: the misfit floor (no item budget at all)
# ------------------------------------------------------------------------------------------------
def floor_rows(names) -> pd.DataFrame:
    """Per benchmark and split (seed 0): RMSE and bias (pp) of the bank's estimate from every item of the pool (no
    item budget: the 2PL's misfit floor), on the test models and on the references' own pseudo-top fold (the
    strongest 20 % of the references held out of the bank)."""
    from essence.features.bank import fit_bank, posterior
    from essence.methods.adaptive import Policy, grid

    nodes, lw = grid(Policy())

    def expected(bank, X):
        icpt, slope, _ = bank.score_map
        return posterior(bank, X, nodes, lw) @ (icpt + slope * bank.prob(nodes).mean(axis=1))

    rows = []
    for name in names:
        data = load_data(source(name))
        R, y = data.responses, data.target
        for split in SPLITS:
            sp = split_models(data, test=TEST, seed=0, kind=split)
            ref = np.r_[sp.train, sp.val]
            est = expected(fit_bank(R[ref], y[ref]), R[sp.test])
            top = ref[np.argsort(-y[ref], kind="stable")[: max(2, len(ref) // 5)]]
            rest = np.setdiff1d(ref, top)
            e2 = expected(fit_bank(R[rest], y[rest]), R[top])
            rows.append({"benchmark": name, "split": split,
                         "floor_rmse": round(float(np.sqrt(np.mean((est - y[sp.test]) ** 2))), 3),
                         "floor_bias": round(float(np.mean(est - y[sp.test])), 3),
                         "pseudo_top_rmse": round(float(np.sqrt(np.mean((e2 - y[top]) ** 2))), 3),
                         "pseudo_top_bias": round(float(np.mean(e2 - y[top])), 3)})
            print(f"floor {name:13s} {split:6s}: {rows[-1]}", flush=True)
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------------------------------
# tables
# ------------------------------------------------------------------------------------------------
def per_benchmark(df: pd.DataFrame) -> pd.DataFrame:
    """One row per benchmark x split x k: adaptive, auto and the best baseline (of random_line, random_ridge, aipw:
    the lowest mean RMSE), each RMSE mean and sd over seeds (pp), Kendall tau (mean) and 90 % coverage (pooled);
    adaptive's mean bias (estimate - truth, pp)."""
    rows = []
    for (ds, split, k), g in df.groupby(["dataset", "split", "k"], sort=False):
        row = {"benchmark": ds, "split": split, "k": int(k)}
        means = g.groupby("method")["rmse"].mean()
        base = means.reindex(list(BASELINES)).dropna()
        for label, m in (("adaptive", "adaptive"), ("auto", "auto"),
                         ("baseline", base.idxmin() if len(base) else None)):
            h = g[g["method"] == m]
            if label == "baseline":
                row["baseline"] = m or ""
            if h.empty:
                row.update({f"{label}_rmse": np.nan, f"{label}_sd": np.nan, f"{label}_tau": np.nan,
                            f"{label}_cov": np.nan, f"{label}_seeds": 0})
                continue
            row.update({f"{label}_rmse": round(h["rmse"].mean(), 2),
                        f"{label}_sd": round(h["rmse"].std(ddof=1), 2) if len(h) > 1 else np.nan,
                        f"{label}_tau": round(h["kendall"].mean(), 3),
                        f"{label}_cov": round(float(np.average(h["coverage"], weights=h["n_test"])), 3),
                        f"{label}_seeds": len(h)})
            if label == "adaptive":
                row["adaptive_bias"] = round(h["bias"].mean(), 2)
        rows.append(row)
    out = pd.DataFrame(rows)
    out["family"] = out["benchmark"].map(family)
    out = out.sort_values(["family", "benchmark", "split", "k"], key=lambda c: c.map(
        {"openllm_v2": 0, "metabench": 1}) if c.name == "family" else c).drop(columns="family")
    return out.reset_index(drop=True)


def summary_table(per: pd.DataFrame) -> pd.DataFrame:
    """Per family x split x k: geometric means over benchmarks of adaptive / auto and adaptive / best baseline (mean
    RMSEs), and adaptive's coverage (mean and lowest over benchmarks)."""
    rows = []
    for (fam, split, k), g in per.assign(family=per["benchmark"].map(family)).groupby(["family", "split", "k"]):
        both = g.dropna(subset=["adaptive_rmse", "auto_rmse"])
        to_auto = np.log(both["adaptive_rmse"] / both["auto_rmse"]).mean()
        rows.append({"family": fam, "split": split, "k": int(k), "benchmarks (with auto)": f"{len(g)} ({len(both)})",
                     "adaptive / auto": round(float(np.exp(to_auto)), 3) if len(both) else np.nan,
                     "adaptive / best baseline": round(float(np.exp(np.log(g["adaptive_rmse"] /
                                                                          g["baseline_rmse"]).mean())), 3),
                     "adaptive coverage": round(float(g["adaptive_cov"].mean()), 3),
                     "adaptive coverage min": round(float(g["adaptive_cov"].min()), 3)})
    out = pd.DataFrame(rows)
    return out.sort_values(["family", "split", "k"], ascending=[False, True, True]).reset_index(drop=True)


META = {
    "adaptive": {"order": 15, "title": "Adaptive testing against the default static subset and the best baseline",
                 "command": ".venv/bin/python benchmarks/adaptive.py",
                 "caption": "Test RMSE in pp (mean and sd over seeds), Kendall tau and the share of test models inside "
                            "the 90 % interval (pooled over seeds), per benchmark, split and number of items k; "
                            "adaptive_bias: the mean of estimate - true score. "
                            "adaptive: a 2PL item bank fitted on the reference models, each test model given at most "
                            "k items one at a time by maximum Fisher information at its current ability; auto: the "
                            "default static subset; baseline: the best (lowest mean RMSE) of random items + line, "
                            "random items + ridge and AIPW. Top split: the strongest 20 % of the models are the test "
                            "models; it holds out the same models for every seed (up to ties in the score), so "
                            "adaptive, a deterministic test, varies little there. Open LLM Leaderboard v2 benchmarks "
                            "(every item: the real case) first, then the metabench pools (pre-selected items; 1,250 "
                            "models subsampled). "
                            "{seeds_note}"},
    "adaptive_summary": {"order": 14, "title": "Adaptive testing: error ratios over benchmarks",
                         "command": ".venv/bin/python benchmarks/adaptive.py",
                         "caption": "Geometric mean over the benchmarks of a family of the ratio of mean test RMSEs "
                                    "(below 1: adaptive errs less) at equal numbers of items k, and adaptive's 90 % "
                                    "interval coverage (mean and lowest over the benchmarks). metabench pools are "
                                    "pre-selected items. {seeds_note}"},
    "adaptive_floor": {"order": 16, "title": "Adaptive testing: the 2PL's floor with every item answered",
                       "command": ".venv/bin/python benchmarks/adaptive.py",
                       "caption": "RMSE and bias (pp) of the item bank's full-score estimate when a model has answered "
                                  "every item of the pool (no item budget), seed 0: on the test models, and on the "
                                  "strongest 20 % of the references held out of a bank fitted on the rest (what the "
                                  "references alone can show). An adaptive test cannot err less than this floor."},
}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--datasets", nargs="+", default=[*OPENLLM_V2, *METABENCH])
    p.add_argument("--seeds", nargs="+", type=int, default=list(SEEDS))
    p.add_argument("--part", choices=("all", "tables"), default="all",
                   help="tables: from whatever the caches hold, computing nothing but the floor")
    p.add_argument("--results", default=str(ROOT / "results"), help="where the tables are written")
    p.add_argument("--no-floor", action="store_true", help="keep the floor table as it is (no bank fits)")
    args = p.parse_args(argv)
    names = [n for n in args.datasets if n != "hellaswag"]
    if args.part == "tables":
        frames = [adaptive_runs(names, args.seeds, cached_only=True), cached_static()]
    else:
        frames = [adaptive_runs(names, args.seeds), static_runs(names, args.seeds)]
    df = pd.concat(frames, ignore_index=True)
    df = df.assign(dataset=df["dataset"].map(lambda d: Path(str(d)).stem))
    df = df[df["dataset"].isin(names) & df["seed"].isin(args.seeds)].drop_duplicates(
        ["dataset", "split", "method", "k", "seed"], keep="first")
    per, out = per_benchmark(df), Path(args.results)
    summary = summary_table(per)
    floor = pd.read_csv(out / "adaptive_floor.csv") if args.no_floor else \
        floor_rows([n for n in names if n in OPENLLM_V2])
    meta = per[per["benchmark"].isin(METABENCH)]
    auto_ks = sorted(meta.loc[meta["auto_seeds"] > 0, "k"].unique().tolist())
    short = sorted(meta.loc[meta["adaptive_seeds"] < len(args.seeds), "benchmark"].unique().tolist())
    note = " ".join(([f"On the metabench pools the default (auto) ran only at k = {', '.join(map(str, auto_ks))}"
                      " to bound the CPU time (other cells empty)."] if len(auto_ks) < len(KS) else [])
                    + ([f"Adaptive on {', '.join(short)}: {int(meta['adaptive_seeds'].min())} seed(s) only."]
                       if short else []))
    out.mkdir(parents=True, exist_ok=True)
    runs = df.rename(columns={"dataset": "benchmark"})[["benchmark", "split", "method", "k", "seed", "rmse", "kendall",
                                                        "coverage", "n_test", "items_used"]]
    runs.sort_values(["benchmark", "split", "method", "k", "seed"]).round(4).to_csv(out / "adaptive_runs.csv",
                                                                                    index=False)
    for name, table in (("adaptive", per), ("adaptive_summary", summary), ("adaptive_floor", floor)):
        table.to_csv(out / f"{name}.csv", index=False)
        meta = {**META[name], "caption": META[name]["caption"].format(seeds_note=note).strip()}
        write_atomic(out / f"{name}.json", json.dumps(meta, indent=1) + "\n", overwrite=True)
    with pd.option_context("display.width", 250, "display.max_rows", 1000, "display.max_columns", 30):
        print(per.to_string(index=False), summary.to_string(index=False), floor.to_string(index=False), sep="\n\n")
    return 0


if __name__ == "__main__":
    from essence.data.pinning import ensure

    ensure()  # the same numbers on any machine (essence/data/pinning.py)
    sys.exit(main())
