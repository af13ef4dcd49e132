"""Speed benchmark of EssenceBench: the whole pipeline, GA throughput, and how the stages scale.

Parts (each runs in its own subprocess, so every peak-memory figure is that part's own):

* ``pipeline``: ``compress(gsm8k, k=100, method="essence")`` with defaults: wall time, seconds per stage,
  peak RSS. ``--cold`` points the feature cache at an empty folder first, so the MiniLM model load and
  the embedding of the 486 item texts are included (otherwise they come from the on-disk cache).
* ``throughput``: GA individuals evaluated per second on the gsm8k pool (k = 100), for the default ridge
  fitness and for the paper's GAM-ruler fitness.
* ``scaling``: the coarse filter (rank + text redundancy) and one GA generation (P = 200, k = 100; GAM
  ruler on 500 validation models, and ridge in-sample where its Gram matrix fits) on 1k, 5k and 20k
  items x 5k models. These matrices are GENERATED at random (timing only, their values
  mean nothing).

* ``scale`` (whole benchmarks, GENERATED data): ``compress`` by the default (``auto``: ``compress``'s own
  default, read from its signature) and by ``random`` at k = 100 on 1k, 5k, 14k, 50k and 100k items x
  ``--models`` (4,000) models and on 500 to 10,000 models x 14k items; each case in a fresh subprocess (time of
  ``compress``, the process's peak RSS with the data, test RMSE), a markdown table and the log-log slope of time
  and memory. ``--methods`` names others (``essence``: the GA method, the default before ``auto``).
* ``seeds`` (GENERATED data of ``--models`` x ``--n-items``): the default against ``random`` over ``--seeds``: test
  RMSE of both, their ratio, the default's time and memory.
* ``screen`` (GENERATED data): the pre-screen's measured loss: the default without a pre-screen
  (``max_pool=None``) against the pre-screen variants and random, on one split.
* ``suite``: the default suite compression (``essence compress arc gsm8k mmlu truthfulqa winogrande --k 250``):
  wall and CPU seconds, the selection's share, test RMSE of the suite mean.
* ``read`` (GENERATED files in a temporary folder): ``essence.data.load`` of a wide parquet with 14k
  and 100k item columns and of long parquet / CSV files of 4,000 x 25,000 = 10^8 rows, each in a fresh
  subprocess: seconds and peak RSS.

The generated data come from :mod:`essence.data.synthetic` (a seeded multidimensional IRT model); their
figures say so. Quality claims about real benchmarks are not made on them.

    .venv/bin/python benchmarks/speed.py                 # pipeline, throughput, scaling
    .venv/bin/python benchmarks/speed.py --part pipeline --cold
    .venv/bin/python benchmarks/speed.py --part scale    # cost curves (tens of minutes)
    .venv/bin/python benchmarks/speed.py --part screen
    .venv/bin/python benchmarks/speed.py --part read
    .venv/bin/python benchmarks/speed.py --part suite

The machine's cores may be shared with other work: the figures are wall-clock times on whatever was
free; the load average at the start and end is printed with them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _default_method() -> str:
    """The method ``compress`` runs when none is named (read from its signature, so the scale part follows it)."""
    import inspect

    from essence.artifact.compressed import compress

    return inspect.signature(compress).parameters["method"].default


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far, MB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _cpu_seconds() -> float:
    """CPU time (user + system, all threads) of this process so far, s: on a machine shared with other
    work it says what the run costs when wall time mostly says how busy the machine was."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def part_pipeline(args) -> dict:
    from essence.artifact.compressed import compress
    from essence.data import load

    t0 = time.perf_counter()
    data = load("gsm8k")
    t_load = time.perf_counter() - t0
    t0 = time.perf_counter()
    art = compress(data, args.k, method="essence", seed=0, progress=False)
    wall = time.perf_counter() - t0
    sel = art.selection
    return {
        "dataset": "gsm8k", "shape": list(data.shape), "k": args.k, "cold_cache": bool(args.cold),
        "load_seconds": round(t_load, 2), "compress_seconds": round(wall, 2), "stage_seconds": sel["seconds"],
        "ga_individuals_per_second": sel["ga"]["individuals_per_second"], "peak_rss_mb": round(peak_rss_mb(), 1),
        "test_rmse": round(art.figures["test"]["rmse"], 3), "reconstructor": sel["reconstructor_choice"],
    }


def part_suite(args) -> dict:
    """The default suite compression (five metabench pools, k = 250): wall and CPU seconds (members on both
    cores: the children's CPU counted), per stage."""
    import essence

    t0, c0 = time.perf_counter(), _cpu_seconds()
    suite = essence.load_suite(["arc", "gsm8k", "mmlu", "truthfulqa", "winogrande"])
    t_load = time.perf_counter() - t0
    art = essence.compress(suite, 250, seed=0, progress=False)
    wall = time.perf_counter() - t0
    import psutil  # the members' worker processes are still alive: count their CPU before they go

    workers = sum(sum(c.cpu_times()[:2]) for c in psutil.Process().children(recursive=True))
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"suite": "arc+gsm8k+mmlu+truthfulqa+winogrande (pre-selected metabench pools)", "k": 250,
            "wall_seconds": round(wall, 1), "load_seconds": round(t_load, 1),
            "select_seconds": art.selection["seconds"],
            "cpu_seconds": round(_cpu_seconds() - c0 + workers + ch.ru_utime + ch.ru_stime, 1),
            "cpu_seconds_this_process": round(_cpu_seconds() - c0, 1),
            "test_mean_rmse": round(art.figures["test"]["mean"]["rmse"], 3)}


def part_throughput(args) -> dict:
    from essence.data import load, split_models
    from essence.search.fitness import RidgeFitness, GAMRulerFitness
    from essence.search.genetic import GAConfig, genetic_search

    data = load("gsm8k")
    sp = split_models(data, seed=0)
    Rt, yt = data.responses[sp.train], data.target[sp.train]
    Rv, yv = data.responses[sp.val], data.target[sp.val]
    out = {}
    for label, make in (("ridge (in-sample, default)", lambda: RidgeFitness(Rt, yt)),
                        ("gam ruler (validation, paper)", lambda: GAMRulerFitness(Rt, yt, Rv, yv))):
        fit = make()
        res = genetic_search(fit, args.k, GAConfig(population=200, generations=args.generations, elites=20), seed=0)
        out[label] = {"individuals_per_second": round(res.evaluations / res.seconds, 1),
                      "ms_per_generation": round(1000 * res.seconds / max(res.generations_run, 1), 2),
                      "generations": res.generations_run, "pool": Rt.shape[1], "k": args.k}
    return out


def part_scaling(args) -> dict:
    from essence.search.fitness import RidgeFitness, GAMRulerFitness
    from essence.search.genetic import GAConfig, genetic_search
    from essence.search.redundancy import coarse_filter

    out = {"note": "GENERATED random matrices (timing only): binary responses, 384-d random embeddings"}
    n_models = args.models
    for n_items in [int(x) for x in args.items.split(",")]:
        rng = np.random.default_rng(0)
        ability = rng.normal(size=(n_models, 1))
        difficulty = rng.normal(size=(1, n_items))
        R = (rng.random((n_models, n_items)) < 1 / (1 + np.exp(-(ability - difficulty)))).astype(np.float64)
        y = 100 * R.mean(axis=1)
        E = rng.normal(size=(n_items, 384)).astype(np.float32)
        row = {}
        t0 = time.perf_counter()
        res = coarse_filter(R, E, tau_text=0.9, tau_rank=0.9)
        row["filter_seconds"] = round(time.perf_counter() - t0, 2)
        row["filter_kept"] = res.n_kept
        n_val = n_models // 10
        gens = 10

        def per_generation(fit) -> float:
            """ms per GA generation (P = 200, 20 elites, k = 100), through genetic_search itself so that the
            BLAS thread limit and the selection / crossover / mutation / repair steps are included; the
            initial population's evaluation counts as one generation. A 1-generation warm-up run first."""
            genetic_search(fit, 100, GAConfig(population=200, generations=1, elites=20), seed=1)
            res = genetic_search(fit, 100, GAConfig(population=200, generations=gens, elites=20), seed=0)
            return round(1000 * res.seconds / (res.generations_run + 1), 2)

        row["gam_ruler_ms_per_generation"] = per_generation(GAMRulerFitness(R[n_val:], y[n_val:], R[:n_val], y[:n_val]))
        if n_items <= 5000:
            t0 = time.perf_counter()
            rf = RidgeFitness(R[n_val:], y[n_val:])
            row["ridge_gram_seconds"] = round(time.perf_counter() - t0, 2)
            row["ridge_ms_per_generation"] = per_generation(rf)
            del rf
        else:
            row["ridge_fitness"] = f"not run: a {n_items}^2 Gram matrix ({8 * n_items**2 / 1e9:.1f} GB)"
        row["peak_rss_mb"] = round(peak_rss_mb(), 1)
        out[f"{n_items} items x {n_models} models"] = row
        del R, E
    return out


def part_case(args) -> dict:
    """One whole-benchmark case in this (fresh) process: GENERATED MIRT data (essence.data.synthetic), then
    ``compress`` with ``--method``; peak RSS is this process's, data included."""
    from essence.artifact.compressed import compress
    from essence.data.synthetic import generate_mirt

    t0 = time.perf_counter()
    gen = json.loads(args.gen) if args.gen else {}
    data = generate_mirt(args.models, args.n_items, seed=args.data_seed, **gen)
    t_gen = time.perf_counter() - t0
    rss_data = peak_rss_mb()
    params = json.loads(args.params) if args.params else {}
    t0, c0 = time.perf_counter(), _cpu_seconds()
    art = compress(data, args.k, method=args.method, seed=args.case_seed, progress=False, **params)
    wall, cpu = time.perf_counter() - t0, _cpu_seconds() - c0
    sel = art.selection
    return {"data": data.name, "models": args.models, "items": args.n_items, "method": args.method,
            "k": args.k, "seed": args.case_seed, "data_seed": args.data_seed, "generator": gen, "params": params, "generate_seconds": round(t_gen, 1), "compress_seconds": round(wall, 1),
            "compress_cpu_seconds": round(cpu, 1),
            "peak_rss_mb": round(peak_rss_mb(), 0), "rss_after_data_mb": round(rss_data, 0),
            "test_rmse": round(art.figures["test"]["rmse"], 3),
            "pool_size": sel.get("pool_size"), "screen": {k: v for k, v in sel.get("screen", {}).items() if k != "dropped"},
            "stage_seconds": sel.get("seconds"), "load_average": [round(v, 1) for v in os.getloadavg()],
            "reconstructor": getattr(art, "reconstructor_choice", None) or sel.get("reconstructor_choice"),
            "ga_fitness_rmse": sel.get("best_fitness_rmse"), "ga_val_rmse": sel.get("best_val_rmse")}


CASE_CACHE = ROOT / "build" / "speed_cases"


def _run_case(args, models: int, items: int, method: str, params: str = "", seed: int | None = None) -> dict:
    """One ``case`` in a fresh subprocess (data seed and compress seed both ``seed``, default
    ``--data-seed`` / ``--case-seed``). The printed result is cached under build/speed_cases/ by its
    command line, so that ``--part scale`` and ``--part seeds`` share a case; ``--fresh`` re-runs."""
    d_seed = args.data_seed if seed is None else seed
    c_seed = getattr(args, "case_seed", 0) if seed is None else seed
    cmd = [sys.executable, __file__, "--child", "--part", "case", "--k", str(args.k), "--models", str(models),
           "--n-items", str(items), "--method", method, "--data-seed", str(d_seed), "--params", params,
           "--gen", getattr(args, "gen", ""), "--case-seed", str(c_seed)]
    key = CASE_CACHE / f"{method}-{models}x{items}-s{d_seed}-{hashlib.sha1(' '.join(cmd[2:]).encode()).hexdigest()[:12]}.json"
    if key.exists() and not getattr(args, "fresh", False):
        return json.loads(key.read_text())
    if getattr(args, "cached_only", False):
        return {"models": models, "items": items, "method": method, "error": ["not run (--cached-only)"]}
    env = dict(os.environ)
    env.setdefault("TQDM_DISABLE", "1")
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        return {"models": models, "items": items, "method": method, "error": out.stderr.strip().splitlines()[-1:]}
    res = json.loads(out.stdout.strip().splitlines()[-1])
    CASE_CACHE.mkdir(parents=True, exist_ok=True)
    key.write_text(json.dumps(res))
    return res


def part_seeds(args) -> dict:
    """The default (:func:`_default_method`) against random over several seeds (GENERATED data of ``--models`` x
    ``--n-items``; for seed s the data seed and compress's split / method seed are both s), with ``--gen`` generator
    parameters: per seed the test RMSE of both and their ratio; the mean +- sd of the ratio."""
    seeds = [int(x) for x in args.seeds.split(",")]
    method = _default_method()
    rows = []
    for s in seeds:
        e = _run_case(args, args.models, args.n_items, method, args.params, seed=s)
        r = _run_case(args, args.models, args.n_items, "random", "", seed=s)
        print(json.dumps([e, r]), file=sys.stderr, flush=True)
        rows.append({"seed": s, method: e, "random": r})
    ok = [x for x in rows if "error" not in x[method] and "error" not in x["random"]]
    ratios = np.array([x[method]["test_rmse"] / x["random"]["test_rmse"] for x in ok])
    lines = [f"| seed | {method} test RMSE pp | random test RMSE pp | ratio | {method} wall s / CPU s | load avg | "
             f"{method} peak RSS MB |", "|---:|---:|---:|---:|---:|---:|---:|"]
    for x in ok:
        e, r = x[method], x["random"]
        lines.append(f"| {x['seed']} | {e['test_rmse']} | {r['test_rmse']} | {e['test_rmse'] / r['test_rmse']:.3f} | "
                     f"{e['compress_seconds']} / {e.get('compress_cpu_seconds', '')} | {e.get('load_average', [''])[0]} | "
                     f"{e['peak_rss_mb']:.0f} |")
    summary = (f"ratio {method} / random: mean {ratios.mean():.3f} +- "
               f"{ratios.std(ddof=1) if ratios.size > 1 else 0:.3f} (sd over {ratios.size} seeds), {method} better "
               f"on {int((ratios < 1).sum())} of {ratios.size}" if ratios.size else "no case finished")
    return {"note": "GENERATED data (essence.data.synthetic.generate_mirt%s), %d models x %d items, k = %d"
            % (f", generator {args.gen}" if args.gen else ", shipped generator parameters", args.models,
               args.n_items, args.k), "table": "\n".join(lines) + "\n\n" + summary, "rows": rows}


def _slope(rows: list, x: str, y: str) -> float | None:
    """Least-squares slope of log(y) on log(x): cost ~ x^slope."""
    pts = [(r[x], r[y]) for r in rows if "error" not in r and (r.get(y) or 0) > 0]
    if len(pts) < 2:
        return None
    lx, ly = np.log([p[0] for p in pts]), np.log([p[1] for p in pts])
    return round(float(np.polyfit(lx, ly, 1)[0]), 2)


def part_scale(args) -> dict:
    """Cost curves on GENERATED data: each (models, items, method) case in a fresh subprocess; a markdown
    table and the log-log slope of time and peak RSS against items (at ``--models``) and against models
    (at ``--scale-items``)."""
    items = [int(x) for x in args.scale_items.split(",") if x]
    models = [int(x) for x in args.scale_models.split(",") if x]
    methods = args.methods.split(",")
    rows = []
    cases = [(args.models, n) for n in items] + [(m, args.fixed_items) for m in models if m != args.models]
    for m, n in cases:
        for method in methods:
            r = _run_case(args, m, n, method)
            rows.append(r)
            print(json.dumps(r), file=sys.stderr, flush=True)
    fits = {}
    for method in methods:
        by_items = [r for r in rows if r["method"] == method and r["models"] == args.models]
        by_models = [r for r in rows if r["method"] == method and r["items"] == args.fixed_items]
        fits[method] = {"time_vs_items": _slope(by_items, "items", "compress_seconds"),
                        "cpu_vs_items": _slope(by_items, "items", "compress_cpu_seconds"),
                        "cpu_vs_models": _slope(by_models, "models", "compress_cpu_seconds"),
                        "rss_vs_items": _slope(by_items, "items", "peak_rss_mb"),
                        "time_vs_models": _slope(by_models, "models", "compress_seconds"),
                        "rss_vs_models": _slope(by_models, "models", "peak_rss_mb")}
    lines = ["| models | items | method | compress s (wall) | CPU s | load avg | peak RSS MB | test RMSE pp | pool "
             "| screen dropped |", "|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        if "error" in r:
            why = "not run" if "not run" in str(r["error"]) else f"failed: {r['error']}"
            lines.append(f"| {r['models']} | {r['items']} | {r['method']} | {why} | | | | | | |")
        else:
            lines.append(f"| {r['models']} | {r['items']} | {r['method']} | {r['compress_seconds']} | "
                         f"{r.get('compress_cpu_seconds', '')} | {r.get('load_average', [''])[0]} | {r['peak_rss_mb']:.0f} | "
                         f"{r['test_rmse']} | {r['pool_size'] or ''} | {r['screen'].get('n_dropped', '')} |")
    return {"note": "GENERATED data (essence.data.synthetic.generate_mirt, seed %d); k = %d" % (args.data_seed, args.k),
            "table": "\n".join(lines), "loglog_slopes": fits, "rows": rows}


def part_screen(args) -> dict:
    """The pre-screen's measured loss on GENERATED data of ``--models`` x ``--screen-items`` (small enough
    for the whole pool's Gram matrix): the default with no pre-screen (``max_pool=None``) against the
    pre-screen variants, and random, on the same split; each in a fresh subprocess."""
    variants = [("essence", "max_pool=None (no pre-screen)", {"max_pool": None}),
                ("essence", "max_pool=2000 stratified (default)", {}),
                ("essence", "max_pool=2000 pbis", {"screen": "pbis"}),
                ("essence", "max_pool=2000 random", {"screen": "random"}),
                ("essence", "max_pool=1000 stratified", {"max_pool": 1000}),
                ("random", "random", {})]
    rows = []
    for method, label, params in variants:
        r = _run_case(args, args.models, args.screen_items, method, json.dumps(params))
        r["variant"] = label
        rows.append(r)
        print(json.dumps(r), file=sys.stderr, flush=True)
    lines = ["| variant | compress s | peak RSS MB | test RMSE pp |", "|---|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['variant']} | failed: {r['error']} | | |" if "error" in r else
                     f"| {r['variant']} | {r['compress_seconds']} | {r['peak_rss_mb']:.0f} | {r['test_rmse']} |")
    return {"note": "GENERATED data (essence.data.synthetic.generate_mirt, seed %d), %d models x %d items, k = %d"
            % (args.data_seed, args.models, args.screen_items, args.k), "table": "\n".join(lines), "rows": rows}


def _write_big(kind: str, models: int, items: int, folder: Path, seed: int) -> Path:
    """Write a GENERATED results file (essence.data.synthetic) without holding more than a slice of it as text:
    ``wide-parquet`` (one column per item, written in row groups of 500 models) or ``long-parquet`` /
    ``long-csv`` (one row per model and item, written 100 models at a time)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from essence.data.synthetic import generate_matrix

    R = generate_matrix(models, items, seed=seed)
    mids = np.array([f"gen-m{i}" for i in range(models)])
    iids = np.array([f"gen-i{j}" for j in range(items)])
    path = folder / f"{kind}-{models}x{items}.{'csv' if kind.endswith('csv') else 'parquet'}"
    if kind == "wide-parquet":
        schema = pa.schema([("model", pa.string())] + [(i, pa.float32()) for i in iids])
        with pq.ParquetWriter(path, schema) as w:
            for s in range(0, models, 500):
                cols = [pa.array(mids[s:s + 500])] + [pa.array(R[s:s + 500, j]) for j in range(items)]
                w.write_table(pa.Table.from_arrays(cols, schema=schema))
        return path
    item_dict = pa.array(iids)
    writer = None
    with open(path, "w") if kind == "long-csv" else _nullcontext() as fh:
        if kind == "long-csv":
            fh.write("model,item,score\n")
        for s in range(0, models, 100):
            block = R[s:s + 100]
            m_idx = np.repeat(np.arange(s, s + block.shape[0]), items)
            i_idx = np.tile(np.arange(items), block.shape[0])
            score = block.ravel()
            if kind == "long-csv":
                import pandas as pd

                pd.DataFrame({"model": mids[m_idx], "item": iids[i_idx], "score": score.astype(np.int8)}).to_csv(
                    fh, header=False, index=False)
            else:
                tab = pa.table({"model": pa.array(mids[m_idx]),
                                "item": pa.DictionaryArray.from_arrays(pa.array(i_idx.astype(np.int32)), item_dict),
                                "score": pa.array(score)})
                if writer is None:
                    writer = pq.ParquetWriter(path, tab.schema)
                writer.write_table(tab)
    if writer is not None:
        writer.close()
    return path


class _nullcontext:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def part_readone(args) -> dict:
    """Read one file with essence.data.load in this fresh process: seconds and peak RSS."""
    from essence.data import load

    t0 = time.perf_counter()
    data = load(args.file)
    return {"file": Path(args.file).name, "shape": list(data.shape), "load_seconds": round(time.perf_counter() - t0, 1),
            "peak_rss_mb": round(peak_rss_mb(), 0), "final_matrix_mb": round(data.responses.nbytes / 2**20, 0)}


def part_read(args) -> dict:
    """Reading big GENERATED files: write each (not timed), then load it in a fresh subprocess."""
    out = {"note": "GENERATED files (essence.data.synthetic), written to a temporary folder and deleted"}
    cases = [("wide-parquet", args.models, int(n)) for n in args.read_items.split(",")]
    cases += [(kind, args.models, args.long_items) for kind in args.long_kinds.split(",") if kind]
    for kind, m, n in cases:
        with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
            t0 = time.perf_counter()
            path = _write_big(kind, m, n, Path(tmp), args.data_seed)
            t_write = time.perf_counter() - t0
            cmd = [sys.executable, __file__, "--child", "--part", "readone", "--file", str(path)]
            env = dict(os.environ)
            env.setdefault("TQDM_DISABLE", "1")
            res = subprocess.run(cmd, capture_output=True, text=True, env=env)
            row = (json.loads(res.stdout.strip().splitlines()[-1]) if res.returncode == 0
                   else {"error": res.stderr.strip().splitlines()[-1:]})
            row.update(kind=kind, rows_in_file=m * n if kind.startswith("long") else m,
                       file_mb=round(path.stat().st_size / 2**20, 0), write_seconds=round(t_write, 1))
            out[f"{kind} {m}x{n}"] = row
            print(json.dumps(row), file=sys.stderr, flush=True)
    return out


PARTS = {"suite": part_suite, "seeds": part_seeds, "pipeline": part_pipeline, "throughput": part_throughput, "scaling": part_scaling, "scale": part_scale, "screen": part_screen,
         "read": part_read, "readone": part_readone,
         "case": part_case}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=[*PARTS, "all"], default="all")
    ap.add_argument("--k", type=int, default=100)
    ap.add_argument("--cold", action="store_true", help="pipeline: start from an empty feature cache")
    ap.add_argument("--generations", type=int, default=100, help="throughput: GA generations to time")
    ap.add_argument("--items", default="1000,5000,20000", help="scaling: item counts")
    ap.add_argument("--models", type=int, default=None,
                    help="model count: scale and read 4,000 (full MMLU's order, as their docs say), else 5,000")
    ap.add_argument("--scale-items", default="1000,5000,14000,50000,100000",
                    help="scale: item counts (at --models models)")
    ap.add_argument("--scale-models", default="500,1000,4000,10000",
                    help="scale: model counts (at --fixed-items items)")
    ap.add_argument("--fixed-items", type=int, default=14000, help="scale: items for the model-count curve")
    ap.add_argument("--read-items", default="14000,100000", help="read: items of the wide parquet files")
    ap.add_argument("--long-items", type=int, default=25000,
                    help="read: items of the long files (x --models rows: 4000 x 25000 = 10^8)")
    ap.add_argument("--long-kinds", default="long-parquet,long-csv", help="read: long file kinds")
    ap.add_argument("--tmp", default=None, help="read: folder for the temporary files")
    ap.add_argument("--file", default="", help=argparse.SUPPRESS)
    ap.add_argument("--screen-items", type=int, default=6000, help="screen: items of the generated pool")
    ap.add_argument("--methods", default=None, help="scale: methods to time (default: compress's default method, "
                    "auto, and random)")
    ap.add_argument("--data-seed", type=int, default=0, help="scale: seed of the generated data")
    ap.add_argument("--case-seed", type=int, default=0, help="case: seed of compress (split and method)")
    ap.add_argument("--n-items", type=int, default=14000, help=argparse.SUPPRESS)
    ap.add_argument("--method", default="essence", help=argparse.SUPPRESS)
    ap.add_argument("--params", default="", help=argparse.SUPPRESS)
    ap.add_argument("--gen", default="", help="case / scale: generator parameters as JSON (essence.data.synthetic."
                    "generate_mirt: dims, rho, a_main, a_side, b_mean, b_sd, guessing); default the shipped ones")
    ap.add_argument("--seeds", default="0,1,2", help="seeds: the seeds (data and compress) to compare over")
    ap.add_argument("--fresh", action="store_true", help="scale / seeds / screen: re-run cached cases")
    ap.add_argument("--cached-only", action="store_true", help="scale / seeds / screen: print the cached cases, "
                    "run none (a missing case shows as not run)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.methods is None:
        args.methods = f"{_default_method()},random"
    if args.models is None:
        args.models = 4000 if args.part in ("scale", "read") else 5000

    if args.child:
        print(json.dumps(PARTS[args.part](args)))
        return 0
    if args.part in ("case", "readone"):
        print(json.dumps(PARTS[args.part](args)))
        return 0
    if args.part == "read":
        print(json.dumps(part_read(args), indent=1))
        return 0
    if args.part in ("scale", "screen", "seeds"):  # they run their own subprocess per case
        res = PARTS[args.part](args)
        print(res["note"])
        print(res["table"])
        if "loglog_slopes" in res:
            print("log-log slopes (cost ~ size^slope):", json.dumps(res["loglog_slopes"]))
        return 0
    parts = ["pipeline", "throughput", "scaling"] if args.part == "all" else [args.part]
    print(f"load average at start: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} cores")
    for part in parts:
        cmd = [sys.executable, __file__, "--child", "--part", part, "--k", str(args.k), "--generations",
               str(args.generations), "--items", args.items, "--models", str(args.models)]
        env = dict(os.environ)
        tmp = None
        if part == "pipeline" and args.cold:
            tmp = tempfile.TemporaryDirectory()
            env["ESSENCE_CACHE"] = tmp.name
            cmd.append("--cold")
        env.setdefault("TQDM_DISABLE", "1")
        t0 = time.perf_counter()
        out = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if out.returncode != 0:
            print(out.stderr[-2000:])
            return out.returncode
        res = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"\n== {part} ({time.perf_counter() - t0:.1f} s wall incl. interpreter start)")
        print(json.dumps(res, indent=1))
        if tmp is not None:
            tmp.cleanup()
    print(f"\nload average at end: {os.getloadavg()[0]:.2f} (1 min)")
    print("Budget: pipeline on gsm8k k=100 <= 90 s and <= 4 GB peak RSS on 2 cores.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
