"""lm-evaluation-harness in both directions.

* In: :func:`import_samples` turns ``lm_eval --log_samples`` files (one or several models and tasks)
  into per-item scores of a dataset's items (:mod:`essence.lmeval.samples`); ``essence estimate``
  then reconstructs the models' full scores.
* Out: :func:`export_task` writes the items an artifact chose as a harness task (YAML + a small
  ``process_docs`` hook + the ids file), checked with the harness's own loader
  (:mod:`essence.lmeval.export`).

Commands (registered in ``essence.cli`` through :func:`add_subcommand`)::

    essence import-lmeval SAMPLES.jsonl... --data DATA --out FILE [--metric M] [--model NAME] [--filter F]
                          [--id-field FIELD] [--id-prefix P] [--skip-unmatched] [--force]
    essence export-lmeval ARTIFACT --task NAME --out DIR [--source-task TASK] [--include-path DIR]
                          [--id-field FIELD] [--id-prefix P] [--data DATA] [--force]
"""

from __future__ import annotations

from pathlib import Path

from ..errors import UsageError

from .export import ExportResult, export_task, find_task_yaml, validate_with_harness
from .samples import (
    MATCH_ORDER,
    ImportResult,
    LoggedDoc,
    default_id_mapping,
    default_metric,
    doc_hash,
    import_samples,
    read_samples,
    write_responses,
)

__all__ = [
    "MATCH_ORDER",
    "ExportResult",
    "ImportResult",
    "LoggedDoc",
    "add_subcommand",
    "default_id_mapping",
    "default_metric",
    "doc_hash",
    "export_task",
    "find_task_yaml",
    "import_samples",
    "read_samples",
    "validate_with_harness",
    "write_responses",
]


def cmd_import(args) -> int:

    out = Path(args.out)
    if out.suffix.lower() not in (".npz", ".csv", ".parquet"):
        raise UsageError(f"--out {out}: use a .npz, .csv or .parquet file name")
    if out.exists() and not args.force:
        raise UsageError(f"{out}: already exists; choose another --out or pass --force")
    res = import_samples(args.samples, data=args.data, metric=args.metric, model=args.model, filter=args.filter,
                         id_field=args.id_field, id_prefix=args.id_prefix, skip_unmatched=args.skip_unmatched)
    write_responses(res.responses, out, force=args.force)
    for line in res.summary():
        print(line)
    r = res.responses
    print(f"wrote {r.n_models} model(s) x {r.n_items} item(s) ({r.missing_fraction:.1%} missing) -> {out}")
    return 0


def cmd_export(args) -> int:
    res = export_task(args.artifact, args.task, args.out, source_task=args.source_task,
                      include_path=args.include_path, id_field=args.id_field, id_prefix=args.id_prefix,
                      data=args.data, force=args.force)
    for line in res.summary():
        print(line)
    return 0


def add_subcommand(subparsers) -> None:
    """Register ``import-lmeval`` and ``export-lmeval`` on the ``essence`` command's subparsers."""
    order = " > ".join(MATCH_ORDER)
    i = subparsers.add_parser(
        "import-lmeval",
        help="turn lm-evaluation-harness --log_samples files into per-item results of DATA's items",
        description=(
            "Match each logged document to one item of DATA, trying in order: " + order + " (see "
            "essence.lmeval.samples), and write the chosen metric as per-item scores. The model of a file is its "
            "folder name (the harness writes OUTPUT/<model>/samples_<task>_<date>.jsonl) unless --model is given. "
            "Items of DATA in no log are left out; `essence estimate ARTIFACT FILE` then needs every chosen item."
        ),
    )
    i.add_argument("samples", nargs="+", help="samples_<task>_<date>.jsonl files (several models and tasks allowed)")
    i.add_argument("--data", help="dataset name or path whose items the documents are (omit to key items by --id-field)")
    i.add_argument("--out", required=True, help="output file: .npz (canonical), .csv or .parquet (wide)")
    i.add_argument("--metric", help="per-item metric field (default: acc; for the metabench datasets the metric "
                                    "they were built with: arc acc_norm, gsm8k exact_match, others acc)")
    i.add_argument("--model", help="model name for every file (default: each file's folder name)")
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
            "hook) and DIR/NAME.items.json (chosen ids, fingerprint, id mapping), checked with the installed harness's "
            "loader. Then: lm_eval --tasks NAME --include_path DIR --log_samples ..."
        ),
    )
    e.add_argument("artifact", help="artifact JSON written by `essence compress`")
    e.add_argument("--task", required=True, help="name of the new harness task")
    e.add_argument("--out", required=True, help="folder to write the task files into (lm_eval --include_path)")
    e.add_argument("--source-task", help="harness task (name or YAML path) whose documents the items are (default "
                                         "for metabench artifacts: metabench_NAME_secondary / metabench_NAME)")
    e.add_argument("--include-path", action="append", help="folder of your own harness tasks (repeatable)")
    e.add_argument("--id-field", help="document field whose value is the item id (after --id-prefix), or doc_hash "
                                      "(default for metabench artifacts: metabench_idx; mmlu: mb_sub_idx)")
    e.add_argument("--id-prefix", help="prefix of item ids before the document key (metabench: 'NAME.')")
    e.add_argument("--data", help="dataset whose item sets (metabench A/B) to read (default: the artifact's dataset)")
    e.add_argument("--force", action="store_true", help="replace existing task files")
    e.set_defaults(func=cmd_export)
