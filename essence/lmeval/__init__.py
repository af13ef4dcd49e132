"""lm-evaluation-harness in both directions.

* In: :func:`import_samples` turns ``lm_eval --log_samples`` files into per-item scores of a dataset's items
  (:mod:`essence.lmeval.samples`; reading in :mod:`essence.lmeval.logs`, matching in
  :mod:`essence.lmeval.matching`).
* Out: :func:`export_task` writes the items an artifact chose as a harness task that also reports the
  estimate as ``essence_estimate``/``essence_lower``/``essence_upper`` (:mod:`essence.lmeval.export`,
  :mod:`essence.lmeval.taskfiles`).
* Replay: :func:`~essence.lmeval.replay.replay_task` writes a local task that feeds any model the documents a
  samples log holds.
* Both at once: :func:`~essence.lmeval.run.run_artifact` exports, runs the harness, imports and estimates.

The commands are registered on ``essence`` through :func:`add_subcommand` (:mod:`essence.lmeval.commands`).
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
