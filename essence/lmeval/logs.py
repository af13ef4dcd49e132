"""Reading lm-evaluation-harness ``--log_samples`` files (fields: :mod:`essence.lmeval.samples`), keeping the newest
run and one filter pipeline per (model, task)."""

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

        def first(a):
            return a[0] if isinstance(a, (list, tuple)) and a else a

        if isinstance(args, dict):  # {"gen_args_0": {"arg_0": context, ...}, ...}
            number = {k: re.search(r"(\d+)$", str(k)) for k in args}
            found = [a.get("arg_0") if isinstance(a, dict) else first(a)
                     for a in (args[k] for k in sorted(args, key=lambda k: int(number[k].group(1)) if number[k] else 0))]
        else:  # older harnesses: [[context, continuation], ...]
            found = [first(a) for a in args] if isinstance(args, list) else []
        return [a for a in found if isinstance(a, str)]

    @property
    def doc_hash(self) -> str:
        h = self.record.get("doc_hash")
        return str(h) if isinstance(h, str) and h else doc_hash(self.doc)

    def short(self) -> str:
        """``FILE:LINE (doc_id N, "first words ...")`` for messages."""
        strings = [v for v in self.doc.values() if isinstance(v, str) and v.strip()]
        text = next((v for v in strings if " " in v.strip()), strings[0] if strings else "")
        text = " ".join(text.split("\n\n")[-1].split())
        text = text if len(text) <= 60 else text[:57] + "..."
        return f"{self.where} (doc_id {self.doc_id}, {text!r})"


def group_by(items, key) -> dict:
    """``{key(x): [x, ...]}`` in order of first appearance."""
    out = defaultdict(list)
    for x in items:
        out[key(x)].append(x)
    return out


def doc_hash(doc: dict) -> str:
    """SHA-256 (hex) of ``json.dumps(doc, indent=2, ensure_ascii=False)``, as the harness hashes a document."""
    return hashlib.sha256(json.dumps(doc, indent=2, ensure_ascii=False, default=_json_default).encode("utf-8")).hexdigest()


def _json_default(o):
    if isinstance(o, (set, frozenset)):
        return list(o)
    if isinstance(o, np.integer):
        return int(o)
    return str(o)


def model_from_path(path: Path) -> str:
    """The model of a samples file: its folder's name, or the GGUF file / local ``pretrained`` folder that the run's
    ``results_<date>.json`` names."""
    folder = path.resolve().parent
    name = folder.name or "model"
    args = _model_args(folder, path)
    gguf = args.get("gguf_file")
    if isinstance(gguf, str) and gguf:
        return Path(gguf).name.removesuffix(".gguf")
    pretrained = args.get("pretrained")
    if isinstance(pretrained, str) and pretrained.startswith(("/", "./", "../", "~")):
        return Path(pretrained).expanduser().name or name
    return name


def _model_args(folder: Path, samples: Path) -> dict:
    """``config.model_args`` (a dict; {} if none) of ``samples``' ``results_<date>.json``, else the newest one."""
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
    stem = re.sub(r"\.jsonl?$", "", path.name)
    m = _SAMPLES_NAME.match(stem)
    return m.group("task") if m else stem


def read_samples(paths, model: str | None = None) -> list[LoggedDoc]:
    """One :class:`LoggedDoc` per record of ``paths`` (``.jsonl``, or ``.json``: one list), in file order; ``model``
    names every file's model (default :func:`model_from_path`). InputError naming the file and line of anything that
    is not a samples record (malformed JSON, no ``doc`` object, a results file)."""
    paths = [Path(p) for p in paths]
    if not paths:
        raise InputError("no samples files given; pass the samples_<task>_<date>.jsonl files of lm_eval --log_samples")
    out: list[LoggedDoc] = []
    seen = set()
    for path in paths:
        if not path.is_file():
            raise InputError(f"{path}: no such file; pass the samples_<task>_<date>.jsonl files that lm_eval "
                             "--log_samples wrote under --output_path/<model>/")
        if path.resolve() in seen:
            raise InputError(f"{path}: given twice; pass each samples file once")
        seen.add(path.resolve())
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"{path}: unreadable ({type(exc).__name__}: {exc})") from None
        task, who = task_from_path(path), model or model_from_path(path)
        records: list[tuple[int, object]] = []
        if path.suffix.lower() == ".json" or text.lstrip().startswith("["):
            try:
                obj = json.loads(text)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}:{exc.lineno}: malformed JSON ({exc.msg}, column {exc.colno})") from None
            if isinstance(obj, dict):
                raise InputError(
                    f"{path}: a JSON object, not a list of samples (results_*.json files hold aggregate scores); "
                    "pass the samples_<task>_<date>.jsonl files written with --log_samples")
            if not isinstance(obj, list):
                raise InputError(f"{path}: expected a list of samples, got a JSON {type(obj).__name__}")
            records, unit = list(enumerate(obj, start=1)), "sample"
        else:
            for lineno, line in enumerate(text.splitlines(), start=1):
                if not line.strip():
                    continue
                try:
                    records.append((lineno, json.loads(line)))
                except json.JSONDecodeError as exc:
                    raise InputError(
                        f"{path}:{lineno}: malformed line ({exc.msg}, column {exc.colno}); each line of a samples "
                        "file must be one complete JSON object (was the file cut short or edited?)") from None
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
    """The lines of one filter pipeline (``want``: a name or 0-based position; default the first) of one (model,
    task): named by a ``filter`` field, or (older harnesses) the n-th repeat of each document. InputError for
    duplicate documents."""
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
    else:
        kept = [d for group in group_by(docs, lambda d: d.path).values()
                for d in _pick_unnamed_copy(group, want, head, notes)]
    dups = [g for g in group_by([d for d in kept if d.doc_id is not None], lambda d: json.dumps(d.doc_id)).values()
            if len(g) > 1]
    if dups:
        g = dups[0]
        raise InputError(
            f"{head}: duplicate documents: {len(dups)} doc_id(s) logged more than once, e.g. doc_id {g[0].doc_id} "
            f"at {g[0].where} and {g[1].where}; pass each task's samples once (a file given twice? two runs of the "
            "task? pass only the latest)")
    return kept


def _pick_unnamed_copy(docs: list[LoggedDoc], want: str | None, head: str, notes: list[str]) -> list[LoggedDoc]:
    """One file without ``filter`` fields: if every doc_id appears n > 1 times, keep copy ``want`` (0-based)."""
    if any(d.doc_id is None for d in docs):
        return docs
    copies = group_by(docs, lambda d: json.dumps(d.doc_id))
    n_copies = {len(g) for g in copies.values()}
    if n_copies == {1}:
        if want not in (None, "0"):
            raise InputError(f"{head}: --filter {want!r} given but {docs[0].path} has a single pipeline (no 'filter' "
                             "field, each document once)")
        return docs
    if len(n_copies) > 1:
        return docs  # uneven repeats: not filter pipelines; pick_filter reports them
    n, pos = n_copies.pop(), 0
    if want is not None:
        if not (want.isdigit() and int(want) < n):
            raise InputError(f"{head}: {docs[0].path} names no filters (older lm-eval); each document appears {n} "
                             f"times, once per filter pipeline: give --filter 0..{n - 1}")
        pos = int(want)
    for group in copies.values():
        if len({g.doc_hash for g in group}) > 1:
            raise InputError(
                f"{head}: duplicate documents: doc_id {group[0].doc_id} is logged {len(group)} times with different "
                f"documents ({group[0].where} and {group[1].where}); pass each task's samples once")
    notes.append(f"{head}: each document is logged {n} times, once per filter pipeline (this lm-eval version does "
                 f"not name them); used pipeline {pos} of the task's filter_list (choose with --filter)")
    return [group[pos] for group in copies.values()]


def _run_stamp(path: Path) -> tuple[str, float]:
    """Sort key of a samples file's run: the date in its name, then its modification time."""
    m = _SAMPLES_NAME.match(path.name.rsplit(".json", 1)[0])
    return (m.group("date") if m else "", path.stat().st_mtime)


def newest_per_task(paths, model: str | None = None) -> tuple[list[Path], list[str]]:
    """``(files, notes)``: the newest samples file of each (model, task) in the given order (missing files kept, for
    :func:`read_samples` to report), and a note naming the files left out."""
    paths = [Path(p) for p in paths]
    groups = group_by([p for p in paths if p.is_file()], lambda p: (model or model_from_path(p), task_from_path(p)))
    drop, notes = set(), []
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
