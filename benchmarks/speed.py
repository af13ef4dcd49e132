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

    .venv/bin/python benchmarks/speed.py                 # all parts
    .venv/bin/python benchmarks/speed.py --part pipeline --cold

The machine's cores may be shared with other work: the figures are wall-clock times on whatever was
free; the load average at the start and end is printed with them.
"""

from __future__ import annotations

import argparse
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


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far, MB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def part_pipeline(args) -> dict:
    from essence.compressed import compress
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


def part_throughput(args) -> dict:
    from essence.data import load, split_models
    from essence.search.genetic import RidgeFitness, SubsetFitness, genetic_search

    data = load("gsm8k")
    sp = split_models(data, seed=0)
    Rt, yt = data.responses[sp.train], data.target[sp.train]
    Rv, yv = data.responses[sp.val], data.target[sp.val]
    out = {}
    for label, make in (("ridge (in-sample, default)", lambda: RidgeFitness(Rt, yt)),
                        ("gam ruler (validation, paper)", lambda: SubsetFitness(Rt, yt, Rv, yv))):
        fit = make()
        res = genetic_search(None, None, None, None, args.k, population=200, generations=args.generations,
                             elites=20, seed=0, fitness=fit)
        out[label] = {"individuals_per_second": round(res.evaluations / res.seconds, 1),
                      "ms_per_generation": round(1000 * res.seconds / max(res.generations_run, 1), 2),
                      "generations": res.generations_run, "pool": Rt.shape[1], "k": args.k}
    return out


def part_scaling(args) -> dict:
    from essence.search.genetic import RidgeFitness, SubsetFitness, genetic_search
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
            genetic_search(None, None, None, None, 100, population=200, generations=1, elites=20, seed=1,
                           fitness=fit)
            res = genetic_search(None, None, None, None, 100, population=200, generations=gens, elites=20,
                                 seed=0, fitness=fit)
            return round(1000 * res.seconds / (res.generations_run + 1), 2)

        row["gam_ruler_ms_per_generation"] = per_generation(SubsetFitness(R[n_val:], y[n_val:], R[:n_val], y[:n_val]))
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


PARTS = {"pipeline": part_pipeline, "throughput": part_throughput, "scaling": part_scaling}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=[*PARTS, "all"], default="all")
    ap.add_argument("--k", type=int, default=100)
    ap.add_argument("--cold", action="store_true", help="pipeline: start from an empty feature cache")
    ap.add_argument("--generations", type=int, default=100, help="throughput: GA generations to time")
    ap.add_argument("--items", default="1000,5000,20000", help="scaling: item counts")
    ap.add_argument("--models", type=int, default=5000, help="scaling: model count")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.child:
        print(json.dumps(PARTS[args.part](args)))
        return 0
    parts = list(PARTS) if args.part == "all" else [args.part]
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
