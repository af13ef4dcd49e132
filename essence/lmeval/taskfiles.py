"""The text of the files ``essence export-lmeval`` writes: task YAML, group YAML and the hook module: its
``process_docs`` keeps the chosen documents (standard library only); its ``SubsetTask`` adds ``essence_estimate``,
``essence_lower``, ``essence_upper`` (pp), aggregated by the numpy-only copy of
:mod:`essence.reconstructors.forward` over all chosen items (a group's subtasks share their scores)."""

from __future__ import annotations

import json

from ..data._version import __version__

__all__ = ["task_yaml", "group_yaml", "hook_text", "ESTIMATE_METRICS"]

#: the metrics the exported task adds (pp)
ESTIMATE_METRICS = ("essence_estimate", "essence_lower", "essence_upper")


def _q(s: str) -> str:
    """A YAML double-quoted scalar (JSON string syntax is valid YAML)."""
    return json.dumps(str(s), ensure_ascii=False)


def task_yaml(part, hook_module: str, func: str, art_label: str, fp: str, k: int) -> str:
    import yaml

    meta = part.source_cfg.get("metadata")
    meta = dict(meta) if isinstance(meta, dict) else ({} if meta is None else {"_metadata": meta})
    meta.setdefault("version", 0.0)
    meta.update({"essence_artifact": art_label, "essence_fingerprint": fp, "essence_source_task": part.source_task,
                 "essence_items": len(part.items)})
    try:
        meta_text = yaml.safe_dump({"metadata": meta}, sort_keys=False, allow_unicode=True)
    except yaml.YAMLError:
        meta_text = yaml.safe_dump({"metadata": {k: v for k, v in meta.items() if k.startswith("essence_") or k == "version"}},
                                   sort_keys=False)
    lines = [
        f"# Written by `essence export-lmeval` (essence {__version__}) from {art_label} (fingerprint {fp}).",
        f"# {len(part.items)} of its {k} chosen items, documents of split {part.eval_split!r} of {part.source_task}",
        f"# (kept by {hook_module}.py); the rest comes from the source task through `include`.",
        f"include: {_q(part.source_yaml)}", f"task: {_q(part.task)}", "tag: []",
        *([f"task_alias: {_q(part.task)}"] if part.source_cfg.get("task_alias") else []),
        f"process_docs: !function {hook_module}.{func}", f"class: !function {hook_module}.SubsetTask",
    ]
    return "\n".join(lines) + "\n" + meta_text


def group_yaml(name: str, parts, art_label: str, fp: str, metric: str | None) -> str:
    lines = [
        f"# Written by `essence export-lmeval` (essence {__version__}) from {art_label} (fingerprint {fp}).",
        "# The chosen items live in two source tasks; this group runs both subset tasks.",
        f"group: {_q(name)}", "task:", *[f"  - {_q(p.task)}" for p in parts], "aggregate_metric_list:",
        *([f"  - metric: {_q(metric)}", "    aggregation: mean", "    weight_by_size: true"] if metric else []),
        *[x for m in ESTIMATE_METRICS for x in (f"  - metric: {m}", "    aggregation: mean",
                                                 "    weight_by_size: false")],
        "metadata:", "  version: 1.0", f"  essence_fingerprint: {_q(fp)}",
    ]
    return "\n".join(lines) + "\n"


_HOOK = '''"""lm-evaluation-harness hook written by `essence export-lmeval` (essence {version}).

Restricts the evaluation split of {parts_doc} to the {k} documents chosen by {artifact} (fingerprint
{fingerprint}): those whose key, after the source's own process_docs, is listed in {ids_file}, where

    key(doc) = {key_doc}

A chosen document missing, or two with one key, is an error. SubsetTask adds essence_estimate, essence_lower
and essence_upper (pp) from the documents' {metric!r}, by the artifact's reconstructor ({estimator_file}).
"""

import hashlib
import importlib.util
import json
import pathlib

IDS_FILE = pathlib.Path(__file__).resolve().with_name({ids_file!r})


def _spec():
    try:
        return json.loads(IDS_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RuntimeError(f"essence subset: cannot read {{IDS_FILE}} ({{exc}}); re-run essence export-lmeval") from None


def _load_file(path, prefix):
    path = pathlib.Path(path)
    spec = importlib.util.spec_from_file_location(prefix + hashlib.sha256(str(path).encode()).hexdigest()[:16], path)
    if spec is None or not path.is_file():
        raise RuntimeError(f"essence subset: {{path}} is gone; re-run essence export-lmeval where the harness runs")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _source_process_docs(ref):
    """The source task's own process_docs (None when it has none)."""
    return None if ref is None else getattr(_load_file(ref["file"], "essence_source_"), ref["function"])


def _json_default(o):
    if isinstance(o, (set, frozenset)):
        return list(o)
    if hasattr(o, "__index__"):
        return int(o)
    return str(o)


def doc_key(doc, match):
    """The key of one document under the id mapping ``match`` (``{{"field": ..., "prefix": ...}}``)."""
    if match["field"] == "doc_hash":
        text = json.dumps(dict(doc), indent=2, ensure_ascii=False, default=_json_default)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()
    value = doc.get(match["field"]) if hasattr(doc, "get") else None
    if value is None or isinstance(value, (dict, list)):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)


def restrict(dataset, task):
    """The documents of ``dataset`` chosen for ``task`` (a key of the ids file's "tasks")."""
    spec = _spec()
    part = spec["tasks"][task]
    split = getattr(dataset, "split", None)
    is_eval = None if split is None else str(split) == part["eval_split"]
    source = _source_process_docs(part["source_process_docs"])
    if source is not None:
        dataset = source(dataset)
    if is_eval is False:
        return dataset
    wanted = {{it["key"]: it["id"] for it in part["items"]}}
    keep, found = [], {{}}
    for i, doc in enumerate(dataset):
        key = doc_key(doc, spec["match"])
        if key in wanted:
            if key in found:
                raise ValueError(f"essence subset {{task}}: documents {{found[key]}} and {{i}} both have key {{key!r}} "
                                 f"({{spec['match']['field']}}); the id mapping does not name one document")
            found[key] = i
            keep.append(i)
    if is_eval is None and not keep:
        return dataset  # a split of unknown name with none of the chosen documents: not the evaluation split
    missing = [wanted[k] for k in wanted if k not in found]
    if missing:
        raise ValueError(f"essence subset {{task}}: {{len(missing)}} of the {{len(wanted)}} chosen documents are not in "
                         f"the dataset, e.g. {{missing[:3]}}; is the source task the one the items came from?")
    if hasattr(dataset, "select"):
        return dataset.select(keep)
    return [dataset[i] for i in keep]
{functions}'''

_TASK_CLASS = '''

# The estimate as metrics of the task
from lm_eval.api.task import ConfigurableTask  # noqa: E402  (the harness is what imports this hook)

ESTIMATE_METRICS = ("essence_estimate", "essence_lower", "essence_upper")
_SCORES = {}  # (filter, task) -> {key: score}: every subtask's scores, for a group's estimate
_ESTIMATOR = []


def _estimator():
    if not _ESTIMATOR:
        _ESTIMATOR.append(_load_file(IDS_FILE.with_name(ESTIMATOR_FILE), "essence_estimator_"))
    return _ESTIMATOR[0]


def _aggregate(which):
    def aggregate(items):
        spec = _spec()
        est = spec["estimator"]
        ids = {(t, it["key"]): it["id"] for t, p in spec["tasks"].items() for it in p["items"]}
        pairs = [x for x in items if isinstance(x, (list, tuple)) and len(x) == 4]
        if not pairs:
            return float("nan")
        filt, task = pairs[0][0], pairs[0][1]
        scores = {}
        for other, got in _SCORES.items():  # the other subtasks of a group, same filter
            if other[0] == filt and other[1] != task:
                scores.update({ids[other[1], key]: v for key, v in got.items()})
        scores.update({ids[task, key]: v for _, _, key, v in pairs})
        value = _estimator().estimate(est, scores)[which]
        if len(scores) < len(est["items"]):
            import logging

            logging.getLogger("lm_eval").warning(
                f"essence: {ESTIMATE_METRICS[which]} of {task} ({filt}) from {len(scores)} of the "
                f"{len(est['items'])} chosen items; the missing ones count as missing cells")
        return value

    aggregate.__name__ = ESTIMATE_METRICS[which]
    return aggregate


class SubsetTask(ConfigurableTask):
    """The source task (its config, prompts, metrics and filters) plus the essence estimate metrics."""

    def __init__(self, *args, config=None, **kwargs):
        config = {k: v for k, v in (config or {}).items() if k != "class"}
        super().__init__(*args, config=config, **kwargs)
        self._essence_seen = {}
        for stale in [k for k in _SCORES if k[1] == self.config.task]:  # a previous run in this process
            del _SCORES[stale]

    def process_results(self, doc, results):
        out = super().process_results(doc, results)
        spec = _spec()
        metric = spec["estimator"]["metric"]
        value = out.get(metric) if isinstance(out, dict) else None
        if isinstance(value, bool):
            value = float(value)
        if not isinstance(value, (int, float)):
            return out
        key = doc_key(doc, spec["match"])
        # the harness scores every document once per filter, the filters one after the other
        filters = list(self.instances[0].filtered_resps) if self.instances else ["none"]
        pos = self._essence_seen.get(key, 0)
        self._essence_seen[key] = pos + 1
        filt = filters[min(pos, len(filters) - 1)]
        task = self.config.task
        _SCORES.setdefault((filt, task), {})[key] = float(value)
        for name in ESTIMATE_METRICS:
            out[name] = (filt, task, key, float(value))
        return out

    def aggregation(self):
        return {**super().aggregation(), **{m: _aggregate(i) for i, m in enumerate(ESTIMATE_METRICS)}}

    def higher_is_better(self):
        return {**super().higher_is_better(), **dict.fromkeys(ESTIMATE_METRICS, True)}
'''


def hook_text(*, task_class: bool = True, estimator_file: str, metric: str, **fields) -> str:
    """The hook module's source: process_docs (``fields``: see ``_HOOK``) and, with ``task_class``, SubsetTask."""
    text = _HOOK.format(estimator_file=estimator_file, metric=metric, **fields)
    text = text.replace("\nIDS_FILE = ", f"\nESTIMATOR_FILE = {estimator_file!r}\nIDS_FILE = ", 1)
    return text + (_TASK_CLASS if task_class else "")
