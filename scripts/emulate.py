#!/usr/bin/env python
"""Emulate other computers on this one, and show what the pins (essence/data/pinning.py) make of them.

A machine is emulated by the switches that choose the CPU code paths: OpenBLAS's kernel family
(``OPENBLAS_CORETYPE``), numpy's SIMD dispatch (``NPY_DISABLE_CPU_FEATURES``) and torch's CPU capability
(``ATEN_CPU_CAPABILITY``). Each entry point pins them (overriding the emulation), so a pinned run must give the same
bits under every emulated machine; with ``ESSENCE_NATIVE_CPU=1`` the emulated paths run, which measures how far the
numbers move between real machines.

    python scripts/emulate.py                    # the regenerated figures under each machine, native and pinned:
                                                 # results/emulation.csv (the tests' tolerance when unpinned)
    python scripts/emulate.py --reproduce haswell sandybridge
                                                 # make reproduce under each machine, then git status (must be clean)
    python scripts/emulate.py --test haswell     # the regeneration tests under a machine

The figures: the regeneration tests' own quantities (the other selectors on arc, the ledger's quick run, a slice of
the reconstruction error grid), the default on musr (its items and test RMSE), and notebook 01's agreement check of
the text redundancy (MiniLM through torch).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: emulated machines: the switches a machine of that kind would leave at their defaults differently
MACHINES = {
    "avx512": {},  # this CPU's own paths (SkylakeX kernels and AVX-512 dispatch where the CPU has them)
    "haswell": {"OPENBLAS_CORETYPE": "Haswell", "NPY_DISABLE_CPU_FEATURES": "X86_V4,AVX512_ICL,AVX512_SPR",
                "ATEN_CPU_CAPABILITY": "avx2"},
    "sandybridge": {"OPENBLAS_CORETYPE": "Sandybridge",
                    "NPY_DISABLE_CPU_FEATURES": "X86_V3,X86_V4,AVX512_ICL,AVX512_SPR", "ATEN_CPU_CAPABILITY": "default"},
    "prescott": {"OPENBLAS_CORETYPE": "Prescott", "NPY_DISABLE_CPU_FEATURES": "X86_V3,X86_V4,AVX512_ICL,AVX512_SPR",
                 "ATEN_CPU_CAPABILITY": "default"},
}


def machine_env(name: str, native: bool) -> dict:
    """The environment of a process on emulated machine ``name``: the pins removed (a fresh shell), the machine's
    switches set, an empty feature cache, and ``ESSENCE_NATIVE_CPU=1`` when ``native`` (else the entry points pin
    over the emulation)."""
    from essence.data.pinning import MARK, OPT_OUT, pinned_env

    import tempfile

    env = {k: v for k, v in os.environ.items() if k not in pinned_env() and k not in (MARK, OPT_OUT)}
    env.update(MACHINES[name])
    env["ESSENCE_CACHE"] = tempfile.mkdtemp(prefix=f"essence-emulate-{name}-")  # a fresh machine: nothing cached
    if native:
        env[OPT_OUT] = "1"
    return env


def figures() -> dict[str, float | str]:
    """The figures the regeneration tests compare with committed tables, computed in this process."""
    import numpy as np

    from essence import compress
    from essence import data as D
    from essence.lessons import reconstruction as LR
    from essence.lessons.selectors import selector_runs
    from essence.search.redundancy import text_redundancy

    sys.path.insert(0, str(ROOT / "tests"))
    from script_loader import load_script

    out: dict[str, float | str] = {}
    sel = selector_runs(D.load("arc"), ["kmeans", "herding", "ppl", "disco"], 50, seeds=(0,)).set_index("method")
    for m in sel.index:
        out[f"other_selectors arc {m} rmse"] = float(sel.loc[m, "rmse"])
    ledger = load_script("benchmarks/ledger.py")
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        row = ledger.runs([ledger.QUICK], [0], Path(tmp), ablation=False).iloc[0]
    out["ledger quick rmse"] = float(row["rmse"])
    gsm = D.load("gsm8k")
    sp = D.split_models(gsm, seed=0)
    grid = LR.error_grid(gsm.responses[sp.train], gsm.target[sp.train], gsm.responses[sp.test], gsm.target[sp.test],
                         [50], [10, 40], n_draws=1, seed=0)
    out["reconstruction_grid max rmse"] = float(grid["rmse"].max())
    out["reconstruction_grid sum rmse"] = float(grid["rmse"].sum())
    art = compress("musr", k=50, seed=0, progress=False)
    out["auto musr test rmse"] = float(art.figures["test"]["rmse"])
    out["auto musr items"] = hashlib.sha256(json.dumps(sorted(map(str, art.items))).encode()).hexdigest()[:12]
    from essence.features import embed_texts

    texts = D.load("gsm8k").texts[:50]
    E = embed_texts(texts, progress=False, cache=False)
    out["01 max abs(E E^T - text_redundancy)"] = float(np.abs(E @ E.T - text_redundancy(E)).max())
    return out


def measure(machines: list[str]) -> "pd.DataFrame":
    import pandas as pd

    rows = []
    for name in machines:
        for native in (True, False):
            t0 = time.perf_counter()
            proc = subprocess.run([sys.executable, __file__, "--figures"], env=machine_env(name, native), cwd=ROOT,
                                  capture_output=True, text=True)
            if proc.returncode:
                raise SystemExit(f"emulate: {name} ({'native' if native else 'pinned'}) failed:\n{proc.stderr[-3000:]}")
            got = json.loads(proc.stdout.strip().splitlines()[-1])
            print(f"[emulate] {name:12s} {'native' if native else 'pinned'}: {time.perf_counter() - t0:.0f} s",
                  flush=True)
            rows += [{"figure": k, "machine": name, "paths": "native" if native else "pinned", "value": v}
                     for k, v in got.items()]
    return pd.DataFrame(rows)


def summary(runs: "pd.DataFrame") -> "pd.DataFrame":
    """Per figure: how many distinct values the emulated machines give, and the spread of numeric ones, with and
    without the pins."""
    import pandas as pd

    out = []
    for fig, g in runs.groupby("figure", sort=False):
        row = {"figure": fig}
        for paths in ("native", "pinned"):
            vals = g[g.paths == paths]["value"]
            row[f"{paths} distinct"] = vals.astype(str).nunique()
            num = pd.to_numeric(vals, errors="coerce")
            row[f"{paths} spread"] = float(num.max() - num.min()) if num.notna().all() else float("nan")
        out.append(row)
    return pd.DataFrame(out)


#: what the cost of the pins is timed on: the default on a whole benchmark and on a metabench pool
COST_CASES = (("musr", 50), ("mmlu", 100))


def cost(repeats: int = 2) -> "pd.DataFrame":
    """Wall seconds of the default (``essence.compress(name, k)``, one process each, the best of ``repeats``) with
    this CPU's own code paths and pinned: what the pins cost on this machine."""
    import pandas as pd

    rows = []
    for name, k in COST_CASES:
        code = (f"import time; t = time.perf_counter(); import essence; essence.compress({name!r}, k={k}, seed=0, "
                f"progress=False); print(time.perf_counter() - t)")
        secs = {}
        for paths in ("native", "pinned"):
            env = machine_env("avx512", native=paths == "native")
            cmd = [sys.executable, "-c", code] if paths == "native" else [
                sys.executable, "-m", "essence.data.pinning", "run", "--", sys.executable, "-c", code]
            secs[paths] = min(float(subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True,
                                                   check=True).stdout.split()[-1]) for _ in range(repeats))
        rows.append({"case": f"compress {name} k={k} (auto)", "native s": round(secs["native"], 1),
                     "pinned s": round(secs["pinned"], 1), "ratio": round(secs["pinned"] / secs["native"], 2)})
        print(f"[emulate] cost: {rows[-1]}", flush=True)
    return pd.DataFrame(rows)


def reproduce(machines: list[str]) -> int:
    """``make reproduce`` under each emulated machine, then ``git status --porcelain``: every committed notebook and
    figure must come out byte-identical."""
    bad = 0
    for name in machines:
        t0 = time.perf_counter()
        proc = subprocess.run(["make", "reproduce"], env=machine_env(name, native=False), cwd=ROOT,
                              capture_output=True, text=True)
        status = subprocess.run(["git", "status", "--porcelain", "--", "notebooks", "figures", "results"], cwd=ROOT,
                                capture_output=True, text=True).stdout
        mins = (time.perf_counter() - t0) / 60
        print(f"[emulate] make reproduce on {name}: exit {proc.returncode}, {mins:.1f} min; git status: "
              f"{'clean' if not status.strip() else chr(10) + status}", flush=True)
        bad += bool(proc.returncode or status.strip())
    return int(bad > 0)


def test(machines: list[str], args: list[str]) -> int:
    bad = 0
    for name in machines:
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                               *args], env=machine_env(name, native=False), cwd=ROOT, capture_output=True, text=True)
        print(f"[emulate] tests on {name}: {proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ''}",
              flush=True)
        bad += bool(proc.returncode)
    return int(bad > 0)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--machines", nargs="+", default=list(MACHINES), choices=list(MACHINES))
    p.add_argument("--reproduce", nargs="+", choices=list(MACHINES), help="make reproduce under these machines")
    p.add_argument("--test", nargs="+", choices=list(MACHINES), help="the regeneration tests under these machines")
    p.add_argument("--cost", action="store_true", help="time the default natively and pinned: results/pinning_cost.csv")
    p.add_argument("--figures", action="store_true", help=argparse.SUPPRESS)  # one measurement, as JSON
    p.add_argument("--out", default=str(ROOT / "results" / "emulation.csv"))
    args = p.parse_args(argv)
    if args.figures:
        from essence.data.pinning import ensure

        ensure()  # a no-op under ESSENCE_NATIVE_CPU=1
        print(json.dumps(figures()))
        return 0
    if args.cost:
        from essence.data._io import write_table

        write_table(cost(), ROOT / "results" / "pinning_cost.csv", {
            "title": "What the pins cost",
            "command": ".venv/bin/python scripts/emulate.py --cost",
            "caption": ("Wall seconds of the default compressing one benchmark (one process each, the best of two "
                        "runs, 2-core x86-64 with AVX-512): with the CPU's own code paths (native: SkylakeX BLAS "
                        "kernels, AVX-512 dispatch, threads as the library sets them) and pinned to AVX2 with one "
                        "BLAS thread (essence/data/pinning.py). Timings move with the machine's load."),
            "order": 91})
        return 0
    if args.reproduce:
        return reproduce(args.reproduce)
    if args.test:
        return test(args.test, ["tests/test_results_reconstruction.py", "tests/test_results_ledger.py",
                                "tests/test_results_comparison.py", "tests/test_results_suite.py",
                                "tests/test_results_refinement_ablation.py", "tests/test_adaptive.py",
                                "tests/test_pinning.py", "-k",
                                "regenerate or pinned"])
    import pandas as pd

    from essence.data._io import write_table

    runs = measure(args.machines)
    table = summary(runs)
    with pd.option_context("display.width", 200, "display.max_colwidth", 40):
        print(runs.pivot_table(index="figure", columns=["paths", "machine"], values="value", aggfunc="first",
                               sort=False).to_string())
        print(table.to_string(index=False))
    write_table(table, Path(args.out), {
        "title": "The same figures under emulated machines, with and without the pins",
        "command": ".venv/bin/python scripts/emulate.py",
        "caption": ("Each figure computed under four emulated x86-64 machines (OpenBLAS kernels SkylakeX, Haswell, "
                    "Sandybridge, Prescott with numpy's and torch's dispatch to match): distinct values and the "
                    "spread (max - min) with the machines' own code paths (native) and pinned "
                    "(essence/data/pinning.py). "
                    "Pinned, every figure must have one value; native spreads are the tolerance of the tests that "
                    "compare with committed tables when a machine cannot be pinned."),
        "order": 90})
    return 0 if (table["pinned distinct"] == 1).all() else 1


if __name__ == "__main__":
    sys.exit(main())
