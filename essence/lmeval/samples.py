"""lm-evaluation-harness ``--log_samples`` files in: per-document results -> a `Responses`. Used fields of a samples
line: ``doc`` (after ``process_docs``), ``arguments``, ``doc_id``, ``doc_hash``, ``prompt_hash``, ``filter`` and one
per metric. A document is matched to the one item of DATA named by the first attempt of :data:`MATCH_ORDER` that
names exactly one: ``request text`` (a request's context, ``arg_0``, equals the item's prompt,
``item_extras["prompts"]``; for partial scoring, as winogrande, the prompt with the answer); ``hash``
(``prompt_hash`` is SHA-256 of the item's prompt, or ``doc_hash`` / ``prompt_hash`` is the item id); ``id field``
(``prefix + str(doc[field])`` is the item id; ``id_field="doc_hash"``: the document's hash); ``document text`` (a
top-level string of ``doc``, or its last paragraph, equals the item's text or its first line). Without DATA every
document is its own item, named by the id field.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..data import Responses, from_arrays, load
from ..data._io import atomic_path
from ..data.errors import InputError
from .logs import LoggedDoc, group_by, newest_per_task, pick_filter, read_samples
from .matching import MATCH_ORDER, Matcher, default_id_mapping, default_metric, doc_key

__all__ = ["TaskReport", "ImportResult", "import_samples", "write_responses"]

#: Fields of a samples line that are not metrics.
_NON_METRIC = {"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter", "metrics",
               "doc_hash", "prompt_hash", "target_hash"}


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
        what = "items" if data_name is None else f"of {n_items} {data_name} items matched ({how})"
        s = f"{self.model} / {self.task}: {self.n_docs} documents -> {self.n_matched} {what}"
        if self.n_skipped:
            s += f"; {self.n_skipped} unmatched documents skipped"
        return s + f"; metric {metric}"


@dataclass
class ImportResult:
    """``responses``: ``(n_models, n_items)`` scores in [0, 1] of the items some model was evaluated on (DATA's
    order), NaN where a log lacks one; ``reports``: one per (model, task); ``n_data_items``: DATA's (or None)."""

    responses: Responses
    reports: list[TaskReport]
    metric: str
    notes: list[str] = field(default_factory=list)
    runs: list[str] = field(default_factory=list)  #: samples files left out: older runs of one (model, task)
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
        fields = ([str(m) for m in named if not str(m).startswith("essence_")]  # the export's estimate metrics
                  if isinstance(named, list) and named
                  else [k for k, v in rec.items() if k not in _NON_METRIC and isinstance(v, (int, float, bool))])
        have = ", ".join(fields) if fields else "none"
        raise InputError(f"{d.where}: no metric field {metric!r}; this log's metric fields are: {have} "
                         "(choose one with --metric)")
    v = rec[metric]
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


def import_samples(paths, data: Responses | str | Path | None = None, metric: str | None = None,
                   model: str | None = None, filter: str | None = None, id_field: str | None = None,
                   id_prefix: str | None = None, skip_unmatched: bool = False) -> ImportResult:
    """Per-item scores of DATA's items from harness samples files (any models and tasks; a file's model is ``model``
    or its folder's name). ``data``: a `Responses`, name or path whose items the documents are matched to
    (:data:`MATCH_ORDER`); None: every document is an item ``id_prefix + doc[id_field]``. ``metric``: the per-item
    field in [0, 1] (default :func:`~essence.lmeval.matching.default_metric`); ``filter``: a pipeline name or position
    (default the first); ``skip_unmatched``: leave out documents that match no item instead of refusing them.
    InputError for unreadable lines, documents matching no item or several, a missing metric and duplicate
    documents."""
    if data is not None and not isinstance(data, Responses):
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
    paths, run_notes = newest_per_task(paths, model)
    docs = read_samples(paths, model=model)

    notes: list[str] = []
    by_group = {key: pick_filter(group, filter, notes)
                for key, group in group_by(docs, lambda d: (d.model, d.task)).items()}
    kept = [d for group in by_group.values() for d in group]

    matcher = Matcher(data, id_field, id_prefix) if data is not None else None
    use_id: dict[tuple[str, str], bool] = {}
    if matcher is not None and id_field:
        for key, group in by_group.items():
            use_id[key] = id_given or matcher.id_corroborated(group)
            if not use_id[key] and any(doc_key(d.doc, id_field, None) is not None for d in group[:50]):
                notes.append(f"{key[0]} / {key[1]}: the default id mapping ({id_prefix}<{id_field}>) is not used for "
                             "this task: no document confirmed it by request text or hash")
    new_ids: dict[str, int] = {}  # without DATA: id -> position, in order of first appearance
    cells, values = {}, {}  # (model, item position) -> its LoggedDoc, its score
    none, several = [], []  # documents that match no item; (document, attempt, positions) of those matching several
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
            pos, how = new_ids.setdefault(id_prefix + key, len(new_ids)), "id field"
        cell = (d.model, pos)
        if cell in cells:
            name = data.items[pos] if data is not None else list(new_ids)[pos]
            raise InputError(
                f"duplicate documents: item {name!r} is logged twice for model {d.model!r}: {cells[cell].short()} and "
                f"{d.short()}; pass each task's samples once (and one filter pipeline, see --filter)")
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
            "texts: give --id-field FIELD to match by a document field")
    if none and skip_unmatched:
        for d in none:
            reports[(d.model, d.task)].n_skipped += 1
    elif none:
        shown, tasks = "; ".join(x.short() for x in none[:2]), sorted({x.task for x in none})
        raise InputError(
            f"{len(none)} of {len(kept)} document(s) match no item of {target} (task(s) {', '.join(tasks)}), e.g. "
            f"{shown}; check --data (the logs must be of the benchmark DATA holds), or give --id-field FIELD "
            "[--id-prefix P] naming the item ids, or pass --skip-unmatched to leave them out")
    if not values:
        raise InputError(f"no document matched an item of {target}; nothing to write")

    models = list(dict.fromkeys(m for m, _ in values))
    if data is not None:
        used = sorted({p for _, p in values})
        ids, texts = data.items[used], None if data.texts is None else data.texts[used]
    else:
        used = list(range(len(new_ids)))
        ids, texts = np.array(list(new_ids), dtype=str), None
    col = {p: j for j, p in enumerate(used)}
    R = np.full((len(models), len(used)), np.nan)
    row = {m: i for i, m in enumerate(models)}
    for (m, p), v in values.items():
        R[row[m], col[p]] = v
    name = data.name if data is not None else "lmeval"
    versioned = data is not None and "item_version" in data.item_extras
    extras = {"item_version": data.item_extras["item_version"][used]} if versioned else {}
    resp = from_arrays(R, models=np.array(models, dtype=str), items=ids, texts=texts, name=name, item_extras=extras)
    return ImportResult(responses=resp, reports=list(reports.values()), metric=metric, notes=notes, runs=run_notes,
                        data_name=None if data is None else data.name,
                        n_data_items=None if data is None else data.n_items)


def write_responses(resp: Responses, path, force: bool = False) -> Path:
    """Write ``resp`` atomically as a canonical ``.npz`` (no ``full_score``: that is what ``estimate`` reconstructs)
    or a wide ``.csv`` / ``.parquet``; an existing file is replaced only with ``force``."""
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
            df = pd.DataFrame(resp.responses, columns=[str(c) for c in resp.items])
            df.insert(0, "model", resp.models.astype(str))
            if suffix == ".csv":
                f.write(df.to_csv(index=False).encode("utf-8"))
            else:
                df.to_parquet(f, index=False)
    return path
