"""The claims ledger's runs: every sweep run the testable claims need, and the refinement ablation.

The runs are the ``(dataset, method, k)`` settings of :func:`essence.lessons.ledger.runs_needed` under seeds 0 1 2
(:func:`essence.sweep.run_sweep`, random splits, the sweep's basic reconstructors), and EssenceBench at
``ABLATION_K`` items on GSM8K with refinement off and on (:data:`essence.lessons.ledger.ABLATION`). Cached under
``--out``: a rerun computes only what is missing or stale.

Writes under ``--results``:

* ``ledger_runs.csv``: one row per run (dataset, method, k, seed, variant: ``""`` for a claim's run, ``before`` /
  ``after`` for the ablation; test RMSE and MAE in pp, Kendall tau, rank_err_5, error);
* ``ledger.csv``: the ledger (:func:`essence.lessons.ledger.ledger_table`): every claim, the published value, our
  mean and its interval over seeds, the verdict; the audit's claims read ``results/frontier.csv``, the adaptive
  claims ``results/adaptive_runs.csv`` (when it exists).

    .venv/bin/python benchmarks/ledger.py                  # seeds 0 1 2, cache build/ledger
    .venv/bin/python benchmarks/ledger.py --quick          # one cheap setting, one seed; no results/
    .venv/bin/python benchmarks/ledger.py --cached-only    # the tables from the runs cached so far
    .venv/bin/python benchmarks/ledger.py --table-only     # ledger.csv again from ledger_runs.csv (a claim or
                                                           # another results/ table changed)

The metabench pools are pre-selected items: their errors are optimistic against a whole benchmark (the ledger's
``caveat`` column).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# not benchmarks/ itself: its selectors.py would shadow the standard library's in joblib's workers
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != ROOT / "benchmarks"]

import pandas as pd  # noqa: E402

from essence import data as D  # noqa: E402
from essence.lessons.ledger import ABLATION, ABLATION_K, ledger_table, read_results, runs_needed  # noqa: E402
from essence.sweep import run_sweep  # noqa: E402

RUN_COLUMNS = ["dataset", "method", "k", "seed", "variant", "rmse", "mae", "kendall", "rank_err_5", "error"]
#: the quick slice (the tests regenerate it and compare it with the committed rows)
QUICK = ("mmlu", "tinybench", 100)


def runs(settings, seeds, out: Path, jobs: int = 1, ablation: bool = True) -> pd.DataFrame:
    """The per-run table (:data:`RUN_COLUMNS`) of ``settings`` (``(dataset, method, k)``) and the ablation."""
    frames = []
    for (dataset, method), g in pd.DataFrame(settings, columns=["dataset", "method", "k"]).groupby(
            ["dataset", "method"], sort=True):
        frames.append(run_sweep([dataset], [method], sorted(g["k"]), seeds, out=out / "claims", jobs=jobs,
                                update=True, progress=False).assign(variant=""))
    for variant, params in (ABLATION.items() if ablation else ()):
        frames.append(run_sweep(["gsm8k"], ["essence"], [ABLATION_K], seeds, out=out / f"ablation-{variant}",
                                jobs=jobs, update=True, progress=False,
                                method_params={"essence": params}).assign(variant=variant))
    return _tidy(pd.concat(frames, ignore_index=True))


def cached(out: Path) -> pd.DataFrame:
    """The per-run table of every run cached under ``out`` (no computation; for a table while runs are pending)."""
    from essence.sweep.records import load_runs

    rows = []
    for folder in sorted(p for p in out.iterdir() if (p / "runs").is_dir()):
        variant = folder.name.removeprefix("ablation-") if folder.name.startswith("ablation-") else ""
        for (dataset, method, k, seed), rec in load_runs(folder).items():
            test = (rec.get("figures") or {}).get("test") or {}
            rows.append({"dataset": dataset, "method": method, "k": k, "seed": seed, "variant": variant,
                         **{c: test.get(c, float("nan")) for c in ("rmse", "mae", "kendall", "rank_err_5")},
                         "error": rec.get("error") or ""})
    return _tidy(pd.DataFrame(rows, columns=RUN_COLUMNS))


def _tidy(df: pd.DataFrame) -> pd.DataFrame:
    df = df.assign(error=df["error"].fillna(""))[RUN_COLUMNS]
    for c in ("rmse", "mae", "kendall", "rank_err_5"):
        df[c] = df[c].astype(float).round(6)
    return df.sort_values(["variant", "dataset", "method", "k", "seed"]).reset_index(drop=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--out", default="build/ledger", help="the sweeps' cache")
    ap.add_argument("--results", default=str(ROOT / "results"))
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="one cheap setting, seed 0, no ablation; prints, writes nothing")
    ap.add_argument("--cached-only", action="store_true", help="the tables from the runs cached under --out; run none")
    ap.add_argument("--table-only", action="store_true",
                    help="rewrite ledger.csv from the committed ledger_runs.csv and the other results/ tables")
    args = ap.parse_args(argv)
    pools = {n: D.load(n).n_items for n in D.DATASETS}
    if args.quick:
        df = runs([QUICK], [0], Path(args.out), jobs=1, ablation=False)
        print(df.to_string(index=False))
        return 0
    res = Path(args.results)
    if args.table_only:
        df = pd.read_csv(res / "ledger_runs.csv")
        df[["variant", "error"]] = df[["variant", "error"]].fillna("")
    else:
        df = (cached(Path(args.out)) if args.cached_only
              else runs(runs_needed(pools), args.seeds, Path(args.out), jobs=args.jobs))
        df.to_csv(res / "ledger_runs.csv", index=False)
    table = ledger_table(df[df.variant == ""], pools, df[df.variant != ""], **read_results(res))
    table.round({"published": 4, "ours": 4, "low": 4, "high": 4}).to_csv(res / "ledger.csv", index=False)
    cmd = ".venv/bin/python benchmarks/ledger.py"
    meta = {
        "ledger_runs": {"title": "The claims ledger's runs", "command": cmd, "order": 40,
                        "caption": "One row per sweep run a testable claim needs (random splits, seeds 0 1 2; "
                                   "variant before / after: EssenceBench without / with refinement): test RMSE and "
                                   "MAE in pp, Kendall tau, rank_err_5. The metabench pools are pre-selected items."},
        "ledger": {"title": "The claims ledger: every published number beside ours", "command": cmd, "order": 41,
                   "caption": "ours: mean over seeds (or over benchmarks for the audit's claims) with its interval "
                              "(mean +- 2 standard errors); a verdict is 'reproduced' when the published value lies "
                              "in that interval or within 10 % of it (0.01 for agreement figures), and states the "
                              "ratio ours / published otherwise. Rows on metabench pools (pre-selected items) say so "
                              "in caveat."},
    }
    for name, m in meta.items():
        (res / f"{name}.json").write_text(json.dumps(m, indent=1) + "\n")
    print(table.to_string(index=False))
    return 0


if __name__ == "__main__":
    from essence.data.pinning import ensure

    ensure()  # the same numbers on any machine (essence/data/pinning.py)
    sys.exit(main())
