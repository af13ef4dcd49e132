"""Reading lm-evaluation-harness ``--log_samples`` files, and keeping one filter pipeline per (model, task).

See :mod:`essence.lmeval.samples` for the fields of a samples line; :func:`newest_per_task` keeps the
latest file of each (model folder, task) when a task was run more than once into one output folder.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..data.errors import InputError

__all__ = ["LoggedDoc", "doc_hash", "model_from_path", "task_from_path", "read_samples", "pick_filter",
           "newest_per_task"]


_SAMPLES_NAME = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[0-9.:\-]+)$")


@dataclass
class LoggedDoc:
    """One line of a samples file: one document as the harness evaluated it for one model."""

    path: str
    line: int
    task: str
    model: str
    record: dict

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def doc(self) -> dict:
        return self.record["doc"]

    @property
    def doc_id(self):
        return self.record.get("doc_id")

    @property
    def filter(self) -> str | None:
        f = self.record.get("filter")
        return None if f is None else str(f)

    @property
    def contexts(self) -> list[str]:
        """The context string (``arg_0``) of every request, in request order."""
        args = self.record.get("arguments")
        out: list[str] = []
        if isinstance(args, dict):
            def order(k):
                m = re.search(r"(\d+)$", str(k))
                return int(m.group(1)) if m else 0

            for key in sorted(args, key=order):
                a = args[key]
                if isinstance(a, dict):
                    a = a.get("arg_0")
                elif isinstance(a, (list, tuple)) and a:
                    a = a[0]
                if isinstance(a, str):
                    out.append(a)
        elif isinstance(args, list):
            for a in args:
                if isinstance(a, (list, tuple)) and a and isinstance(a[0], str):
                    out.append(a[0])
                elif isinstance(a, str):
                    out.append(a)
        return out

    @property
    def doc_hash(self) -> str:
        h = self.record.get("doc_hash")
        return str(h) if isinstance(h, str) and h else doc_hash(self.doc)

    def short(self) -> str:
        """``FILE:LINE (doc_id N, "first words ...")`` for messages."""
        strings = [v for v in self.doc.values() if isinstance(v, str) and v.strip()]
        text = next((v for v in strings if " " in v.strip()), strings[0] if strings else "")
        text = " ".join(text.split("\n\n")[-1].split())
        if len(text) > 60:
            text = text[:57] + "..."
        return f"{self.where} (doc_id {self.doc_id}, {text!r})"


def doc_hash(doc: dict) -> str:
    """SHA-256 (hex) of a document as lm-evaluation-harness hashes it: ``json.dumps(doc, indent=2,
    ensure_ascii=False)``, with numpy integers as ints, sets as lists and other objects as ``str``."""
    return hashlib.sha256(json.dumps(doc, indent=2, ensure_ascii=False, default=_json_default).encode("utf-8")).hexdigest()


def _json_default(o):
    if isinstance(o, (set, frozenset)):
        return list(o)
    if isinstance(o, np.integer):
        return int(o)
    return str(o)


def model_from_path(path: Path) -> str:
    """The model name a samples file belongs to: the folder that holds it (the harness writes
    ``OUTPUT/<model>/samples_<task>_<date>.jsonl``), unless the run's ``results_<date>.json`` names a GGUF file
    or a local ``pretrained`` folder, whose name is then used.
    """
    folder = path.resolve().parent
    name = folder.name or "model"
    args = _model_args(folder, path)
    if not args:
        return name
    gguf = args.get("gguf_file")
    if isinstance(gguf, str) and gguf:
        return Path(gguf).name.removesuffix(".gguf")
    pretrained = args.get("pretrained")
    if isinstance(pretrained, str) and pretrained.startswith(("/", "./", "../", "~")):
        return Path(pretrained).expanduser().name or name
    return name


def _model_args(folder: Path, samples: Path) -> dict:
    """``config.model_args`` of the run that wrote ``samples`` (its ``results_<date>.json``, else the newest
    results file in the folder), as a dict; {} when there is none."""
    m = _SAMPLES_NAME.match(samples.name.rsplit(".json", 1)[0])
    results = sorted(folder.glob("results_*.json"))
    same = [r for r in results if m and r.stem == f"results_{m.group('date')}"]
    for r in (same or results[-1:]):
        try:
            args = json.loads(r.read_text(encoding="utf-8")).get("config", {}).get("model_args")
        except (OSError, ValueError, AttributeError):
            return {}
        if isinstance(args, dict):
            return args
        if isinstance(args, str):
            return dict(kv.split("=", 1) for kv in args.split(",") if "=" in kv)
    return {}


def task_from_path(path: Path) -> str:
    """``samples_<task>_<date>.jsonl`` -> ``<task>``; any other file name -> its stem."""
    stem = path.name
    for suffix in (".jsonl", ".json"):
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    m = _SAMPLES_NAME.match(stem)
    return m.group("task") if m else stem


def read_samples(paths, model: str | None = None) -> list[LoggedDoc]:
    """Read harness samples files.

    ``paths``: files (``.jsonl``: one JSON object per line; ``.json``: one JSON list of objects).
    ``model``: the model name for every file; default: each file's folder name (:func:`model_from_path`).
    Returns one :class:`LoggedDoc` per line, in file order. Raises ValueError naming the file and line
    of anything that is not a samples record (malformed JSON, no ``doc`` object, a results file).
    """
    paths = [Path(p) for p in paths]
    if not paths:
        raise InputError("no samples files given; pass the samples_<task>_<date>.jsonl files of lm_eval --log_samples")
    out: list[LoggedDoc] = []
    seen: set[Path] = set()
    for path in paths:
        if path.is_file() and path.resolve() in seen:
            raise InputError(f"{path}: given twice; pass each samples file once")
        if path.is_file():
            seen.add(path.resolve())
        if not path.is_file():
            raise InputError(f"{path}: no such file; pass the samples_<task>_<date>.jsonl files that lm_eval "
                             "--log_samples wrote under --output_path/<model>/")
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"{path}: unreadable ({type(exc).__name__}: {exc})") from None
        task = task_from_path(path)
        who = model or model_from_path(path)
        records: list[tuple[int, object]] = []
        stripped = text.lstrip()
        if path.suffix.lower() == ".json" or stripped.startswith("["):
            try:
                obj = json.loads(text)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}:{exc.lineno}: malformed JSON ({exc.msg}, column {exc.colno})") from None
            if isinstance(obj, dict):
                raise InputError(
                    f"{path}: a JSON object, not a list of samples (results_*.json files hold aggregate scores); "
                    "pass the samples_<task>_<date>.jsonl files written with --log_samples"
                )
            if not isinstance(obj, list):
                raise InputError(f"{path}: expected a list of samples, got a JSON {type(obj).__name__}")
            records = [(i + 1, r) for i, r in enumerate(obj)]
            unit = "sample"
        else:
            for lineno, line in enumerate(text.splitlines(), start=1):
                if not line.strip():
                    continue
                try:
                    records.append((lineno, json.loads(line)))
                except json.JSONDecodeError as exc:
                    raise InputError(
                        f"{path}:{lineno}: malformed line ({exc.msg}, column {exc.colno}); each line of a samples "
                        "file must be one complete JSON object (was the file cut short or edited?)"
                    ) from None
            unit = "line"
        if not records:
            raise InputError(f"{path}: no samples in the file; was the harness run with --log_samples?")
        for lineno, rec in records:
            if not isinstance(rec, dict):
                raise InputError(f"{path}:{lineno}: {unit} is a JSON {type(rec).__name__}, not an object; "
                                 "this is not an lm-evaluation-harness samples file")
            if not isinstance(rec.get("doc"), dict):
                raise InputError(f"{path}:{lineno}: no 'doc' object in the {unit} (fields: "
                                 f"{', '.join(sorted(rec)) or 'none'}); this is not an lm-evaluation-harness "
                                 "--log_samples record")
            out.append(LoggedDoc(path=str(path), line=lineno, task=task, model=who, record=rec))
    return out


def pick_filter(docs: list[LoggedDoc], want: str | None, notes: list[str]) -> list[LoggedDoc]:
    """Keep one filter pipeline's lines of one (model, task); refuse true duplicates.

    Newer harness versions write a ``filter`` field; older ones repeat every document once per pipeline,
    in the task's ``filter_list`` order. ``want`` is a filter name or a 0-based position; default: the
    first pipeline. The same document in two files is refused.
    """
    head = f"{docs[0].model} / {docs[0].task}"
    names = list(dict.fromkeys(d.filter for d in docs if d.filter is not None))
    if names:
        if want is None:
            chosen = names[0]
        elif want in names:
            chosen = want
        elif want.isdigit() and int(want) < len(names):
            chosen = names[int(want)]
        else:
            raise InputError(f"{head}: no filter {want!r}; this log's filters are {', '.join(names)} "
                             "(give --filter NAME or a 0-based position)")
        if len(names) > 1:
            notes.append(f"{head}: {len(names)} filter pipelines ({', '.join(names)}); used {chosen!r} "
                         "(choose with --filter)")
        kept = [d for d in docs if d.filter == chosen]
        _refuse_duplicate_ids(kept, head)
        return kept
    by_file: dict[str, list[LoggedDoc]] = defaultdict(list)
    for d in docs:
        by_file[d.path].append(d)
    kept = []
    for group in by_file.values():
        kept.extend(_pick_unnamed_copy(group, want, head, notes))
    _refuse_duplicate_ids(kept, head)
    return kept


def _pick_unnamed_copy(docs: list[LoggedDoc], want: str | None, head: str, notes: list[str]) -> list[LoggedDoc]:
    """One file without ``filter`` fields: if every doc_id appears n > 1 times, keep copy ``want`` (0-based)."""
    if any(d.doc_id is None for d in docs):
        return docs
    copies: dict[str, list[LoggedDoc]] = defaultdict(list)
    for d in docs:
        copies[json.dumps(d.doc_id)].append(d)
    n_copies = {len(g) for g in copies.values()}
    if n_copies == {1}:
        if want not in (None, "0"):
            raise InputError(f"{head}: --filter {want!r} given but {docs[0].path} has a single pipeline (no 'filter' "
                             "field, each document once)")
        return docs
    if len(n_copies) > 1:
        return docs  # uneven repeats: not filter pipelines; _refuse_duplicate_ids reports them
    n = n_copies.pop()
    pos = 0
    if want is not None:
        if not (want.isdigit() and int(want) < n):
            raise InputError(f"{head}: {docs[0].path} names no filters (older lm-eval); each document appears {n} "
                             f"times, once per filter pipeline: give --filter 0..{n - 1}")
        pos = int(want)
    for group in copies.values():
        if len({g.doc_hash for g in group}) > 1:
            raise InputError(
                f"{head}: duplicate documents: doc_id {group[0].doc_id} is logged {len(group)} times with different "
                f"documents ({group[0].where} and {group[1].where}); pass each task's samples once"
            )
    notes.append(f"{head}: each document is logged {n} times, once per filter pipeline (this lm-eval version does "
                 f"not name them); used pipeline {pos} of the task's filter_list (choose with --filter)")
    return [group[pos] for group in copies.values()]


def _refuse_duplicate_ids(docs: list[LoggedDoc], head: str) -> None:
    by_id: dict[str, list[LoggedDoc]] = defaultdict(list)
    for d in docs:
        if d.doc_id is not None:
            by_id[json.dumps(d.doc_id)].append(d)
    dups = [g for g in by_id.values() if len(g) > 1]
    if dups:
        g = dups[0]
        raise InputError(
            f"{head}: duplicate documents: {len(dups)} doc_id(s) logged more than once, e.g. doc_id {g[0].doc_id} "
            f"at {g[0].where} and {g[1].where}; pass each task's samples once (a file given twice? two runs of the "
            "task? pass only the latest)"
        )


def _run_stamp(path: Path) -> tuple[str, float]:
    """Sort key of a samples file's run: the date in its name (the harness writes ``samples_<task>_<date>``),
    then its modification time."""
    stem = path.name.rsplit(".json", 1)[0]
    m = _SAMPLES_NAME.match(stem)
    return (m.group("date") if m else "", path.stat().st_mtime)


def newest_per_task(paths, model: str | None = None) -> tuple[list[Path], list[str]]:
    """Keep the newest samples file of each (model, task): ``(kept files in the given order, notes)``.

    The newest is chosen by the date in the name, then the modification time; each note names the files
    left out. Missing files are kept (:func:`read_samples` reports them).
    """
    paths = [Path(p) for p in paths]
    groups: dict[tuple[str, str], list[Path]] = defaultdict(list)
    for p in paths:
        if p.is_file():
            groups[(model or model_from_path(p), task_from_path(p))].append(p)
    drop: set[Path] = set()
    notes = []
    for (who, task), files in groups.items():
        distinct = list(dict.fromkeys(f.resolve() for f in files))
        if len(distinct) < 2:
            continue
        newest = max(distinct, key=_run_stamp)
        left = [f for f in distinct if f != newest]
        drop.update(left)
        notes.append(f"{who} / {task}: {len(distinct)} samples files (runs) of this task; used the newest, {newest.name}, "
                     f"and left out {', '.join(f.name for f in left)}")
    return [p for p in paths if not (p.is_file() and p.resolve() in drop)], notes
