"""Matching a logged document to one item of a dataset (the attempts of :data:`MATCH_ORDER`, described in
:mod:`essence.lmeval.samples`), and the default id mapping and metric of the shipped metabench datasets."""

from __future__ import annotations

import hashlib
from collections import defaultdict

from ..data import METABENCH, Responses
from .logs import LoggedDoc, doc_hash

__all__ = ["MATCH_ORDER", "METABENCH_METRICS", "Matcher", "default_id_mapping", "default_metric", "doc_key"]

#: The matching attempts, in the order they are tried (see essence.lmeval.samples).
MATCH_ORDER = ("request text", "hash", "id field", "document text")
#: The item metric each shipped metabench dataset was built with (see the data README).
METABENCH_METRICS = {"arc": "acc_norm", "gsm8k": "exact_match", "mmlu": "acc", "truthfulqa": "acc",
                     "winogrande": "acc"}


def default_id_mapping(name: str) -> tuple[str, str] | None:
    """``(field, prefix)`` mapping harness documents to item ids for a shipped metabench dataset name."""
    return ("mb_sub_idx" if name == "mmlu" else "metabench_idx", f"{name}.") if name in METABENCH else None


def default_metric(data: Responses | None) -> str:
    """The metric a dataset's items were scored with: the metabench table for those datasets, else ``acc``."""
    return METABENCH_METRICS.get(data.name, "acc") if data is not None else "acc"


def doc_key(doc: dict, field: str, record_hash: str | None = None) -> str | None:
    """The key of a document under an id mapping: ``str(doc[field])``; ``field="doc_hash"``: its harness hash."""
    if field == "doc_hash":
        return record_hash or doc_hash(doc)
    value = doc.get(field)
    if value is None or isinstance(value, (dict, list)):
        return None
    return str(int(value) if isinstance(value, float) and value.is_integer() else value)


class Matcher:
    """Indexes of DATA's items for the four attempts of :data:`MATCH_ORDER`."""

    def __init__(self, data: Responses, id_field: str | None, id_prefix: str):
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
        """Whether the default id mapping names these documents' items: one matches the same item by request text or
        hash and by id field, and none matches different items (a metabench index is unique only per benchmark)."""
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
