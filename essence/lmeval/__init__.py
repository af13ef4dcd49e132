"""lm-evaluation-harness in both directions.

* In: :func:`import_samples` turns ``lm_eval --log_samples`` files (one or several models and tasks)
  into per-item scores of a dataset's items (:mod:`essence.lmeval.samples`); ``essence estimate``
  then reconstructs the models' full scores.
* Out: :func:`export_task` writes the items an artifact chose as a harness task (YAML + a small
  ``process_docs`` hook + the ids file), checked with the harness's own loader
  (:mod:`essence.lmeval.export`).

* Again: :func:`~essence.lmeval.replay.replay_task` writes a local task that feeds any model the documents
  a samples log holds (the source task's YAML included, its data swapped for the logged documents), so a
  new model runs offline on exactly the items another model's logs cover (:mod:`essence.lmeval.replay`).

* Both at once: :func:`~essence.lmeval.run.run_artifact` exports to a scratch folder, runs the harness
  on the chosen items (``lm_eval.simple_evaluate``), imports the samples and estimates
  (:mod:`essence.lmeval.run`). The exported task also reports the estimate itself, as the metrics
  ``essence_estimate``/``essence_lower``/``essence_upper`` (:mod:`essence.lmeval.taskfiles`,
  :mod:`essence.reconstructors.forward`).

Modules: ``logs`` (reading samples files), ``matching`` (documents -> items), ``samples`` (the import),
``export`` + ``taskfiles`` + ``standalone`` (the task files), ``replay``, ``run`` and ``commands`` (the CLI).

Commands (registered in ``essence.cli`` through :func:`add_subcommand`)::

    essence import-lmeval SAMPLES.jsonl... (--data DATA | --items NAME.items.json) --out FILE [--metric M]
                          [--model NAME] [--filter F] [--id-field FIELD] [--id-prefix P] [--skip-unmatched] [--force]
    essence export-lmeval ARTIFACT --task NAME --out DIR [--source-task TASK] [--include-path DIR]
                          [--id-field FIELD] [--id-prefix P] [--metric M] [--data DATA] [--force]
    essence replay-lmeval SAMPLES.jsonl... --source-task TASK --out DIR [--task NAME] [--include-path DIR] [--force]
    essence run ARTIFACT --model (smollm2 | TYPE --model-args ARGS) [export-lmeval's options] [--logs DIR]
                [--out CSV] [--name NAME] [--device D] [--batch-size B] [--offline] [--force]
"""

from __future__ import annotations


from .commands import add_subcommand, read_items_file
from .export import ExportResult, export_task, find_task_yaml, validate_with_harness
from .matching import MATCH_ORDER, default_id_mapping, default_metric
from .samples import ImportResult, import_samples, write_responses
from .logs import LoggedDoc, doc_hash, read_samples

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
    "read_items_file",
    "read_samples",
    "validate_with_harness",
    "write_responses",
]


