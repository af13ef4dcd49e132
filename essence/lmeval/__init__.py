"""lm-evaluation-harness in both directions: :func:`import_samples` turns ``--log_samples`` files into per-item
scores; :func:`export_task` writes the chosen items as a harness task that also reports ``essence_estimate`` /
``essence_lower`` / ``essence_upper``; :func:`~essence.lmeval.replay.replay_task` replays a samples log as a local
task; :func:`~essence.lmeval.run.run_artifact` exports, runs, imports and estimates; :func:`add_subcommand`: the
commands."""

from __future__ import annotations

from .commands import add_subcommand, read_items_file
from .export import ExportResult, export_task, find_task_yaml, validate_with_harness
from .matching import MATCH_ORDER, default_id_mapping, default_metric
from .samples import ImportResult, import_samples, write_responses
from .logs import LoggedDoc, doc_hash, read_samples

__all__ = ["MATCH_ORDER", "ExportResult", "ImportResult", "LoggedDoc", "add_subcommand", "default_id_mapping",
           "default_metric", "doc_hash", "export_task", "find_task_yaml", "import_samples", "read_items_file",
           "read_samples", "validate_with_harness", "write_responses"]
