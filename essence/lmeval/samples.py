"""lm-evaluation-harness ``--log_samples`` files in: per-document results -> a `Responses`.

A samples file holds one JSON object per evaluated document (``samples_<task>_<date>.jsonl``, written
by ``lm_eval ... --log_samples``; older harness versions wrote one JSON list, ``.json``). The fields
used here: ``doc`` (the document after the task's ``process_docs``), ``arguments`` (the requests:
``{"gen_args_0": {"arg_0": context, "arg_1": continuation}, ...}``, or a list of argument lists),
``doc_id``, ``doc_hash`` (SHA-256 of ``json.dumps(doc, indent=2, ensure_ascii=False)``),
``prompt_hash`` (SHA-256 of the first request's context), ``filter`` (the filter pipeline, newer
versions) and one field per metric (``acc``, ``acc_norm``, ``exact_match``, ...).

Each logged document is matched to one item of DATA by the first of these attempts that names exactly
one item (:data:`MATCH_ORDER`):

1. ``request text``: a request's context (``arg_0`` of any request) equals the item's exact prompt
   (``item_extras["prompts"]``, shipped with the metabench datasets). For partial-scoring tasks
   (winogrande) one request per option is logged, and the item's prompt is the one with its answer.
2. ``hash``: the line's ``prompt_hash`` equals SHA-256 of the item's prompt, or its ``doc_hash`` /
   ``prompt_hash`` *is* the item id (data keyed by harness hashes).
3. ``id field``: ``prefix + str(doc[field])`` is the item id (``id_field``/``id_prefix``; for the
   metabench datasets ``metabench_idx`` -- ``mb_sub_idx`` for mmlu -- with prefix ``"<name>."``).
   ``id_field="doc_hash"`` uses the document's harness hash instead of a field.
4. ``document text``: a top-level string field of ``doc`` (whole, or its last paragraph) equals the
   item's text (whole, or its first line). For winogrande the item's sentence is the last paragraph
   of ``doc["sentence"]``.

Without DATA (``data=None``) every document becomes its own item, named by the id field (3).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..data import METABENCH, Responses, from_arrays
from .._io import atomic_path
from ..errors import InputError

__all__ = [
    "MATCH_ORDER",
    "LoggedDoc",
    "TaskReport",
    "ImportResult",
    "read_samples",
    "import_samples",
    "write_responses",
    "default_metric",
    "default_id_mapping",
    "doc_hash",
]

#: The matching attempts, in the order they are tried (see the module docstring).
MATCH_ORDER = ("request text", "hash", "id field", "document text")

#: The item metric each shipped metabench dataset was built with (see the data README).
METABENCH_METRICS = {"arc": "acc_norm", "gsm8k": "exact_match", "mmlu": "acc", "truthfulqa": "acc",
                     "winogrande": "acc"}

#: Fields of a samples line that are not metrics.
_NON_METRIC = {"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter", "metrics",
               "doc_hash", "prompt_hash", "target_hash"}

_SAMPLES_NAME = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[0-9.:\-]+)$")


# ----------------------------------------------------------------------------------------------
# Reading
# ----------------------------------------------------------------------------------------------
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
    """The model name a samples file belongs to: the folder that holds it.

    The harness writes ``OUTPUT/<model>/samples_<task>_<date>.jsonl`` with ``<model>`` the model name
    with ``/`` (and ``:"<>|?*[]\\``) replaced by ``__``, e.g. ``EleutherAI__pythia-14m``; that folder
    name is used as is.
    """
    name = path.resolve().parent.name
    return name or "model"


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


# ----------------------------------------------------------------------------------------------
# Choosing one filter pipeline per task
# ----------------------------------------------------------------------------------------------
def _pick_filter(docs: list[LoggedDoc], want: str | None, notes: list[str]) -> list[LoggedDoc]:
    """Keep one filter pipeline's lines of one (model, task); refuse true duplicates.

    Newer harness versions write a ``filter`` field; older ones (like the metabench logs) write the
    lines of each filter pipeline one after the other with no name: every document of the file then
    appears the same number of times, once per pipeline, in the task's ``filter_list`` order. ``want``
    is a filter name or a 0-based position; default: the first pipeline. The same document in two
    files (a file given twice, two runs of one task) is refused.
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


# ----------------------------------------------------------------------------------------------
# Matching
# ----------------------------------------------------------------------------------------------
def default_id_mapping(name: str) -> tuple[str, str] | None:
    """``(field, prefix)`` mapping harness documents to item ids for a shipped metabench dataset name."""
    if name not in METABENCH:
        return None
    return ("mb_sub_idx" if name == "mmlu" else "metabench_idx", f"{name}.")


def default_metric(data: Responses | None) -> str:
    """The metric a dataset's items were scored with: the metabench table for those datasets, else ``acc``."""
    if data is not None and data.name in METABENCH_METRICS:
        return METABENCH_METRICS[data.name]
    return "acc"


def doc_key(doc: dict, field: str, record_hash: str | None = None) -> str | None:
    """The key of a document under an id mapping: ``str(doc[field])``; ``field="doc_hash"``: its harness hash."""
    if field == "doc_hash":
        return record_hash or doc_hash(doc)
    value = doc.get(field)
    if value is None or isinstance(value, (dict, list)):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)


class _Matcher:
    """Indexes of DATA's items for the four attempts of :data:`MATCH_ORDER`."""

    def __init__(self, data: Responses, id_field: str | None, id_prefix: str):
        self.data = data
        self.ids = {str(s): i for i, s in enumerate(data.items)}
        self.prompts: dict[str, list[int]] = defaultdict(list)
        self.prompt_sha: dict[str, list[int]] = defaultdict(list)
        prompts = data.item_extras.get("prompts")
        if prompts is not None:
            for i, p in enumerate(prompts.tolist()):
                p = str(p)
                if p:
                    self.prompts[p].append(i)
                    self.prompt_sha[hashlib.sha256(p.encode("utf-8")).hexdigest()].append(i)
        self.texts: dict[str, set[int]] = defaultdict(set)
        if data.texts is not None:
            for i, t in enumerate(data.texts.tolist()):
                t = str(t).strip()
                if t:
                    self.texts[t].add(i)
                    first = t.split("\n", 1)[0].strip()
                    if first:
                        self.texts[first].add(i)
        self.id_field, self.id_prefix = id_field, id_prefix

    def attempts(self, d: LoggedDoc):
        """Yield ``(attempt name, set of item positions)`` in :data:`MATCH_ORDER`."""
        if self.prompts:
            hits = set()
            for ctx in d.contexts:
                hits.update(self.prompts.get(ctx, ()))
            yield "request text", hits
        hits = set()
        ph, dh = d.record.get("prompt_hash"), d.record.get("doc_hash")
        if isinstance(ph, str):
            hits.update(self.prompt_sha.get(ph, ()))
            if ph in self.ids:
                hits.add(self.ids[ph])
        if isinstance(dh, str) and dh in self.ids:
            hits.add(self.ids[dh])
        yield "hash", hits
        if self.id_field:
            key = doc_key(d.doc, self.id_field, d.record.get("doc_hash") if isinstance(d.record.get("doc_hash"), str) else None)
            pos = self.ids.get(self.id_prefix + key) if key is not None else None
            yield "id field", set() if pos is None else {pos}
        if self.texts:
            hits = set()
            for v in d.doc.values():
                if isinstance(v, str) and v.strip():
                    for s in {v.strip(), v.split("\n\n")[-1].strip()}:
                        hits.update(self.texts.get(s, ()))
            yield "document text", hits

    def match(self, d: LoggedDoc, use_id: bool = True) -> tuple[int | None, str, set[int]]:
        """``(item position or None, attempt name, the several positions of the first ambiguous attempt)``.
        ``use_id=False`` skips the id-field attempt."""
        several: tuple[str, set[int]] | None = None
        for name, hits in self.attempts(d):
            if name == "id field" and not use_id:
                continue
            if len(hits) == 1:
                return next(iter(hits)), name, set()
            if len(hits) > 1 and several is None:
                several = (name, hits)
        return None, several[0] if several else "", several[1] if several else set()

    def id_corroborated(self, docs: list[LoggedDoc]) -> bool:
        """Whether the (default, not user-given) id mapping names the right items for these documents: at
        least one of them matches the same item by request text or hash and through the id field, and no
        document matches different items these two ways.
        (A metabench index is only unique within one benchmark: arc's ``metabench_idx`` 263 is also a
        winogrande item id, so the default mapping alone cannot tell the logs of another task.)"""
        agree = 0
        for d in docs:
            strong, via_id = None, None
            for name, hits in self.attempts(d):
                if name in ("request text", "hash") and len(hits) == 1 and strong is None:
                    strong = next(iter(hits))
                if name == "id field":
                    via_id = next(iter(hits)) if len(hits) == 1 else None
            if strong is not None and via_id is not None:
                if via_id != strong:
                    return False
                agree += 1
        return agree > 0


# ----------------------------------------------------------------------------------------------
# Import
# ----------------------------------------------------------------------------------------------
@dataclass
class TaskReport:
    """What one (model, task) of the logs contributed."""

    model: str
    task: str
    files: list[str]
    n_docs: int
    n_matched: int
    by_attempt: dict[str, int]
    n_skipped: int = 0

    def line(self, data_name: str | None, n_items: int | None, metric: str) -> str:
        how = ", ".join(f"{n} by {a}" for a, n in self.by_attempt.items() if n)
        if data_name is None:
            s = f"{self.model} / {self.task}: {self.n_docs} documents -> {self.n_matched} items"
        else:
            s = (f"{self.model} / {self.task}: {self.n_docs} documents -> {self.n_matched} of {n_items} "
                 f"{data_name} items matched ({how})")
        if self.n_skipped:
            s += f"; {self.n_skipped} unmatched documents skipped"
        return s + f"; metric {metric}"


@dataclass
class ImportResult:
    """``responses``: ``(n_models, n_items)`` scores in [0, 1] for the items evaluated by at least one
    model (DATA's order), NaN where a model's logs lack the item. ``reports``: one per (model, task).
    ``notes``: filter choices and similar remarks. ``n_data_items``: items of DATA (None without DATA)."""

    responses: Responses
    reports: list[TaskReport]
    metric: str
    notes: list[str] = field(default_factory=list)
    data_name: str | None = None
    n_data_items: int | None = None

    def summary(self) -> list[str]:
        lines = [r.line(self.data_name, self.n_data_items, self.metric) for r in self.reports]
        lines += [f"note: {n}" for n in self.notes]
        if self.n_data_items is not None and self.responses.n_items < self.n_data_items:
            lines.append(f"note: {self.n_data_items - self.responses.n_items} of the {self.n_data_items} "
                         f"{self.data_name} items are in no log; they are left out (an artifact that chose one of "
                         "them cannot be estimated from these logs)")
        return lines


def _metric_value(d: LoggedDoc, metric: str) -> float:
    rec = d.record
    if metric not in rec:
        named = rec.get("metrics")
        if isinstance(named, list) and named:
            fields = [str(m) for m in named]
        else:
            fields = [k for k, v in rec.items() if k not in _NON_METRIC and isinstance(v, (int, float, bool))]
        have = ", ".join(fields) if fields else "none"
        raise InputError(f"{d.where}: no metric field {metric!r}; this log's metric fields are: {have} "
                         "(choose one with --metric)")
    v = rec[metric]
    if isinstance(v, bool):
        return float(v)
    if v is None:
        return math.nan
    if not isinstance(v, (int, float)):
        raise InputError(f"{d.where}: metric {metric!r} is {type(v).__name__} {str(v)[:40]!r}, not a per-item number "
                         "(corpus-level metrics like bleu log their inputs); choose another --metric")
    v = float(v)
    if not math.isnan(v) and not 0.0 <= v <= 1.0:
        raise InputError(f"{d.where}: metric {metric!r} = {v:g} is outside [0, 1]; essence needs per-item scores in "
                         "[0, 1] (choose another --metric, or rescale the scores into a CSV yourself)")
    return v


def import_samples(
    paths,
    data: Responses | str | Path | None = None,
    metric: str | None = None,
    model: str | None = None,
    filter: str | None = None,
    id_field: str | None = None,
    id_prefix: str | None = None,
    skip_unmatched: bool = False,
) -> ImportResult:
    """Turn harness samples files into per-item scores of DATA's items.

    ``paths``: samples files (several models and tasks allowed; the model of a file is ``model`` or
    its folder name). ``data``: a `Responses`, or a dataset name / path, whose items the documents are
    matched to (see :data:`MATCH_ORDER`); ``None``: every document is an item, named
    ``id_prefix + doc[id_field]`` (``id_field`` required). ``metric``: the per-item field to read
    (default: :func:`default_metric`), values in [0, 1]. ``filter``: a filter pipeline name or 0-based
    position (default: the first). ``skip_unmatched``: leave out documents that match no item instead
    of refusing them.

    Returns an :class:`ImportResult`; its ``responses`` is ``(n_models, n_items)`` over the items
    that at least one model was evaluated on. Raises ValueError for every bad input (unreadable lines,
    documents matching no item or several, a missing metric, duplicate documents).
    """
    if data is not None and not isinstance(data, Responses):
        from ..data import load

        data = load(data)
    metric = metric or default_metric(data)
    id_given = id_field is not None
    if data is not None and id_field is None:
        default = default_id_mapping(data.name)
        if default:
            id_field, id_prefix = default[0], default[1] if id_prefix is None else id_prefix
    id_prefix = id_prefix or ""
    if data is None and not id_field:
        raise InputError("without --data, say which document field names the items: --id-field FIELD (or "
                         "--id-field doc_hash), optionally --id-prefix")
    docs = read_samples(paths, model=model)

    groups: dict[tuple[str, str], list[LoggedDoc]] = defaultdict(list)
    for d in docs:
        groups[(d.model, d.task)].append(d)
    notes: list[str] = []
    kept: list[LoggedDoc] = []
    for key in groups:
        kept.extend(_pick_filter(groups[key], filter, notes))

    matcher = _Matcher(data, id_field, id_prefix) if data is not None else None
    use_id: dict[tuple[str, str], bool] = {}
    if matcher is not None and id_field:
        by_group: dict[tuple[str, str], list[LoggedDoc]] = defaultdict(list)
        for d in kept:
            by_group[(d.model, d.task)].append(d)
        for key, group in by_group.items():
            use_id[key] = id_given or matcher.id_corroborated(group)
            if not use_id[key] and any(doc_key(d.doc, id_field, None) is not None for d in group[:50]):
                notes.append(f"{key[0]} / {key[1]}: the default id mapping ({id_prefix}<{id_field}>) is not used for "
                             "this task: no document confirmed it by request text or hash")
    item_ids: list[str] = []  # without DATA: ids in order of first appearance
    new_ids: dict[str, int] = {}
    cells: dict[tuple[str, int], LoggedDoc] = {}
    values: dict[tuple[str, int], float] = {}
    none: list[LoggedDoc] = []
    several: list[tuple[LoggedDoc, str, set[int]]] = []
    reports: dict[tuple[str, str], TaskReport] = {}
    for d in kept:
        rep = reports.setdefault((d.model, d.task), TaskReport(d.model, d.task, [], 0, 0, dict.fromkeys(MATCH_ORDER, 0)))
        if d.path not in rep.files:
            rep.files.append(d.path)
        rep.n_docs += 1
        if matcher is not None:
            pos, how, many = matcher.match(d, use_id.get((d.model, d.task), False))
            if pos is None:
                if many:
                    several.append((d, how, many))
                else:
                    none.append(d)
                continue
        else:
            key = doc_key(d.doc, id_field, d.record.get("doc_hash") if isinstance(d.record.get("doc_hash"), str) else None)
            if key is None:
                raise InputError(f"{d.where}: the document has no field {id_field!r} (fields: {', '.join(sorted(d.doc))}); "
                                 "choose --id-field among them, or --id-field doc_hash")
            iid = id_prefix + key
            if iid not in new_ids:
                new_ids[iid] = len(item_ids)
                item_ids.append(iid)
            pos, how = new_ids[iid], "id field"
        cell = (d.model, pos)
        if cell in cells:
            other = cells[cell]
            name = data.items[pos] if data is not None else item_ids[pos]
            raise InputError(
                f"duplicate documents: item {name!r} is logged twice for model {d.model!r}: {other.short()} and "
                f"{d.short()}; pass each task's samples once (and one filter pipeline, see --filter)"
            )
        values[cell] = _metric_value(d, metric)
        cells[cell] = d
        rep.n_matched += 1
        rep.by_attempt[how] = rep.by_attempt.get(how, 0) + 1
    target = data.name if data is not None else ""
    if several:
        shown = "; ".join(f"{x.short()} matches {', '.join(repr(str(data.items[i])) for i in sorted(m)[:3])} by {h}"
                          for x, h, m in several[:2])
        raise InputError(
            f"{len(several)} document(s) match several items of {target}: {shown}; the data has duplicate prompts or "
            "texts: give --id-field FIELD to match by a document field"
        )
    if none:
        if skip_unmatched:
            for d in none:
                reports[(d.model, d.task)].n_skipped += 1
        else:
            shown = "; ".join(x.short() for x in none[:2])
            tasks = sorted({x.task for x in none})
            raise InputError(
                f"{len(none)} of {len(kept)} document(s) match no item of {target} (task(s) {', '.join(tasks)}), e.g. "
                f"{shown}; check --data (the logs must be of the benchmark DATA holds), or give --id-field FIELD "
                "[--id-prefix P] naming the item ids, or pass --skip-unmatched to leave them out"
            )
    if not values:
        raise InputError(f"no document matched an item of {target}; nothing to write")

    models = list(dict.fromkeys(m for m, _ in values))
    if data is not None:
        used = sorted({p for _, p in values})
        ids = data.items[used]
        texts = None if data.texts is None else data.texts[used]
    else:
        used = list(range(len(item_ids)))
        ids, texts = np.array(item_ids, dtype=str), None
    col = {p: j for j, p in enumerate(used)}
    R = np.full((len(models), len(used)), np.nan)
    row = {m: i for i, m in enumerate(models)}
    for (m, p), v in values.items():
        R[row[m], col[p]] = v
    # a model whose values are all NaN (metric missing everywhere) cannot be kept
    name = data.name if data is not None else "lmeval"
    extras = {}
    if data is not None and "item_version" in data.item_extras:
        extras["item_version"] = data.item_extras["item_version"][used]
    resp = from_arrays(R, models=np.array(models, dtype=str), items=ids, texts=texts, name=name, item_extras=extras)
    return ImportResult(responses=resp, reports=list(reports.values()), metric=metric, notes=notes,
                        data_name=None if data is None else data.name,
                        n_data_items=None if data is None else data.n_items)


# ----------------------------------------------------------------------------------------------
# Writing
# ----------------------------------------------------------------------------------------------
def write_responses(resp: Responses, path, force: bool = False) -> Path:
    """Write ``resp`` atomically (temp file + rename): ``.npz`` in the canonical format (``responses``,
    ``models``, ``items``, ``texts`` when known, ``item_version`` when known; no ``full_score``: the
    models' full scores are what ``essence estimate`` reconstructs), or ``.csv`` / ``.parquet`` wide
    (a ``model`` column + one column per item; empty = missing). Refuses to replace a file unless ``force``.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".npz", ".csv", ".parquet"):
        raise InputError(f"{path}: unsupported output type {suffix!r}; use .npz, .csv or .parquet")
    if path.exists() and not force:
        raise InputError(f"{path}: already exists; choose another --out or pass --force")
    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        if suffix == ".npz":
            arrays = {"responses": resp.responses, "models": resp.models.astype(str), "items": resp.items.astype(str)}
            if resp.texts is not None:
                arrays["texts"] = resp.texts.astype(str)
            if "item_version" in resp.item_extras:
                arrays["item_version"] = resp.item_extras["item_version"].astype(str)
            np.savez_compressed(f, **arrays)
        else:
            df = _wide(resp)
            if suffix == ".csv":
                f.write(df.to_csv(index=False).encode("utf-8"))
            else:
                df.to_parquet(f, index=False)
    return path


def _wide(resp: Responses):
    import pandas as pd

    df = pd.DataFrame(resp.responses, columns=[str(c) for c in resp.items])
    df.insert(0, "model", resp.models.astype(str))
    return df
