"""Replay logged documents: a harness task (a JSON-lines file of the logged, processed documents and a YAML that
includes the source task's and swaps the data) that feeds any model, offline, the documents a samples log holds."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..data._io import write_atomic
from ..data.errors import InputError
from .export import find_task_yaml, _harness
from .logs import read_samples

__all__ = ["ReplayTask", "replay_task", "SPLIT"]

#: The split name of a replayed task's documents.
SPLIT = "test"


@dataclass
class ReplayTask:
    """The task written: its name, the two files, the number of documents and what it replays."""

    task: str
    yaml: Path
    docs: Path
    n_docs: int
    source_task: str
    source_yaml: Path


def replay_task(samples, source_task: str, out_dir, task: str | None = None, include_paths=(),
                force: bool = False) -> ReplayTask:
    """Write ``<task>.jsonl`` + ``<task>.yaml`` (default ``replay_<source_task>``) under ``out_dir``, replaying the
    documents of ``samples`` (one run of ``source_task``; in ``doc_id`` order, each once); both files or neither.
    InputError for few-shot examples drawn from another split, documents that differ between files, and
    existing files (unless ``force``)."""
    task = task or f"replay_{source_task}"
    if not task.replace("_", "").replace("-", "").isalnum():
        raise InputError(f"task name {task!r}: use letters, digits, '_' and '-' only")
    source_yaml = find_task_yaml(source_task, include_paths)
    _, loader, _ = _harness()
    cfg = loader(source_yaml, True)
    if not isinstance(cfg, dict):
        raise InputError(f"{source_yaml}: not a task YAML")
    shots = cfg.get("num_fewshot") or 0
    if shots and any(cfg.get(k) for k in ("fewshot_split", "training_split", "validation_split")):
        raise InputError(f"{source_task}: draws {shots} few-shot examples from another split of its dataset; "
                         "those documents are not in the samples log, so it cannot be replayed from it")
    docs: dict = {}
    for d in read_samples(samples):
        key = d.doc_id if d.doc_id is not None else len(docs)
        if key in docs and docs[key] != d.doc:
            raise InputError(f"{d.where}: doc_id {key} holds another document than an earlier line; give the "
                             "samples files of one run of one task")
        docs.setdefault(key, d.doc)
    out = Path(out_dir)
    paths = out / f"{task}.jsonl", out / f"{task}.yaml"
    clash = [str(p) for p in paths if p.exists()]
    if clash and not force:
        raise InputError(f"{', '.join(clash)} exists; choose another --out folder or task name, or pass force")
    out.mkdir(parents=True, exist_ok=True)
    keys = sorted(docs) if all(isinstance(k, int) for k in docs) else list(docs)
    lines = [json.dumps(docs[k], ensure_ascii=False) for k in keys]
    yaml = "\n".join([
        f"# replays the {len(lines)} documents of {source_task}'s samples log ({task}.jsonl); written by essence",
        f"include: {json.dumps(str(source_yaml))}", f"task: {task}", "tag: []", "dataset_path: json",
        "dataset_name: null", "dataset_kwargs:", "  data_files:", f"    {SPLIT}: {json.dumps(str(paths[0].resolve()))}",
        "process_docs: null", "training_split: null", "validation_split: null", f"test_split: {SPLIT}", "",
    ])
    write_atomic(paths[0], "\n".join(lines) + "\n", overwrite=True)
    try:
        write_atomic(paths[1], yaml, overwrite=True)
    except BaseException:  # both files or neither
        if not clash:
            paths[0].unlink(missing_ok=True)
        raise
    return ReplayTask(task=task, yaml=paths[1], docs=paths[0], n_docs=len(lines), source_task=source_task,
                      source_yaml=source_yaml)
