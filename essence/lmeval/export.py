"""The chosen items out, as an lm-evaluation-harness task that evaluates only them (:func:`export_task`; the files'
text: :mod:`essence.lmeval.taskfiles`). A document's key is ``str(doc[id_field])`` after the source's
``process_docs`` (or its harness hash, ``id_field="doc_hash"``): the item id minus ``id_prefix``."""

from __future__ import annotations

import functools
import importlib.metadata
import inspect
import json
import logging
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..artifact.compressed import Compressed
from ..data._version import __version__
from ..data import METABENCH, Responses, load
from ..data._io import jsonable
from ..reconstructors import forward
from .logs import group_by
from .matching import METABENCH_METRICS, default_id_mapping
from .taskfiles import group_yaml, hook_text, task_yaml
from ..data.errors import InputError

__all__ = ["export_task", "ExportResult", "validate_with_harness", "find_task_yaml", "find_task_yamls", "SUBSET_SCHEMA"]

SUBSET_SCHEMA = "essence.lmeval_subset"
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_\-]*$")


def _harness():
    """``(TaskManager, YAML loader, TaskConfig)`` of the installed harness; InputError saying how to install it."""
    try:  # the layout of lm_eval 0.4.13, the pinned version
        from lm_eval.config.task import TaskConfig
        from lm_eval.tasks import TaskManager
        from lm_eval.tasks._yaml_loader import load_yaml
    except ImportError:
        raise InputError("export-lmeval needs lm-evaluation-harness to read the source task: pip install "
                         "lm_eval==0.4.13") from None

    def loader(path, resolve):
        return load_yaml(path, resolve_func=resolve, recursive=True)
    return TaskManager, loader, TaskConfig


def _tasks_dir() -> Path:
    import lm_eval.tasks

    return Path(lm_eval.tasks.__file__).resolve().parent


def find_task_yaml(name: str, include_paths=()) -> Path:
    """The YAML file defining harness task ``name`` (or ``name`` itself, a YAML path), from ``include_paths`` first,
    then the installed ``lm_eval/tasks``. InputError if none defines it."""
    p = Path(name)
    if p.suffix.lower() in (".yaml", ".yml"):
        if not p.is_file():
            raise InputError(f"{p}: no such task YAML file")
        return p.resolve()
    found = find_task_yamls([name], include_paths)[name]
    if found is None:
        where = ", ".join(str(r) for r in [*map(str, include_paths), _tasks_dir()])
        raise InputError(f"no lm-evaluation-harness task named {name!r} in {where}; give the task's name as `lm_eval "
                         "--tasks list` shows it, --include-path for your own task folder, or the path of its YAML")
    return found


_TASK_LINE = re.compile(rb"""^["']?task["']?:[ \t]*["']?([^"'\s#]+)""", re.MULTILINE)


@functools.lru_cache(maxsize=8)
def _name_index(root: str, stamp: float) -> dict[str, tuple[str, ...]]:
    """``{task name: YAML files whose top-level ``task:`` line names it}`` under ``root``."""
    index: dict[str, list[str]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in ("__pycache__", ".ipynb_checkpoints"))
        for fname in sorted(filenames):
            if not fname.endswith(".yaml"):
                continue
            path = os.path.join(dirpath, fname)
            try:
                text = Path(path).read_bytes()
            except OSError:
                continue
            for m in _TASK_LINE.finditer(text):
                index.setdefault(m.group(1).decode("utf-8", "replace"), []).append(path)
    return {k: tuple(v) for k, v in index.items()}


def find_task_yamls(names, include_paths=()) -> dict[str, Path | None]:
    """:func:`find_task_yaml` for several names (None: not found), each confirmed by the harness's YAML loader."""
    _, loader, _ = _harness()
    out: dict[str, Path | None] = dict.fromkeys(names)
    for root in [Path(r) for r in include_paths] + [_tasks_dir()]:
        if not root.is_dir():
            raise InputError(f"--include-path {root}: not a folder")
        index = _name_index(str(root.resolve()), root.stat().st_mtime)
        for name in out:
            if out[name] is not None:
                continue
            for cand in index.get(name, ()):
                try:
                    cfg = loader(Path(cand), False)
                except Exception:  # unreadable or not a task: the harness skips those too
                    continue
                if isinstance(cfg, dict) and cfg.get("task") == name and "group" not in cfg:
                    out[name] = Path(cand).resolve()
                    break
    return out


@dataclass
class _Part:
    task: str
    source_task: str
    source_yaml: Path
    eval_split: str
    source_process_docs: dict | None
    items: list[tuple[str, str]]  # (item id, key)
    source_cfg: dict = field(default_factory=dict)
    existing: Path | None = None  # a harness task of this name found in the task folders


@dataclass
class ExportResult:
    """What :func:`export_task` wrote: ``files``, ``parts`` (``{task: source task}``), ``checks`` (what the harness
    loader confirmed), the mapping ``id_field``/``id_prefix``."""

    name: str
    directory: Path
    files: list[Path]
    parts: dict[str, str]
    checks: list[str]
    id_field: str
    id_prefix: str
    n_items: int

    def summary(self) -> list[str]:
        lines = [f"wrote {', '.join(str(f) for f in self.files)}"]
        src = ", ".join(f"{t} <- {s}" for t, s in self.parts.items())
        how = ("the harness hash of the document (doc_hash)" if self.id_field == "doc_hash"
               else f"str(doc[{self.id_field!r}])" + (f" == item id without {self.id_prefix!r}" if self.id_prefix
                                                      else " == item id"))
        lines.append(f"{self.n_items} chosen items as task {self.name} ({src}); a document is chosen when {how}")
        lines += [f"validated: {c}" for c in self.checks]
        lines.append(f"run:  lm_eval --model hf --model_args pretrained=MODEL --tasks {self.name} --include_path "
                     f"{self.directory} --log_samples --output_path results   (reports essence_estimate, "
                     "essence_lower, essence_upper: the estimated full score and its interval, pp)")
        return lines


def _source_fn_ref(fn, where: str) -> dict | None:
    if fn is None:
        return None
    if not callable(fn):
        raise InputError(f"{where}: process_docs is {fn!r}, not a function; cannot chain it")
    try:
        file = inspect.getsourcefile(fn)
    except TypeError:
        file = None
    name = getattr(fn, "__name__", None)
    if not file or not name or getattr(fn, "__qualname__", name) != name:
        raise InputError(f"{where}: process_docs {fn!r} is not a module-level function in a .py file; essence's hook "
                         "can only chain such functions")
    return {"file": str(Path(file).resolve()), "function": name}


def _load_source(yaml_path: Path) -> tuple[dict, dict]:
    """``(config with functions resolved, config with functions as strings)`` of a source task YAML."""
    _, loader, _ = _harness()
    try:
        raw = loader(yaml_path, False)
        full = loader(yaml_path, True)
    except Exception as exc:
        raise InputError(f"{yaml_path}: the harness cannot load this task YAML ({type(exc).__name__}: {exc})") from None
    if not isinstance(full, dict) or not isinstance(full.get("task"), str):
        raise InputError(f"{yaml_path}: not a task YAML (no 'task: NAME'); give a task, not a group or tag")
    if "group" in full or "class" in full:
        raise InputError(f"{yaml_path}: a {'group' if 'group' in full else 'Python class'} task; export-lmeval restricts "
                         "YAML tasks that list their documents through a dataset: give one of its subtasks")
    return full, raw


def _parts_for(art, name: str, source_task, include_paths, id_field, id_prefix, data) -> tuple[list[_Part], str, str]:
    ds = art.dataset.get("name", "")
    meta = ds in METABENCH
    if id_field is None:
        default = default_id_mapping(ds)
        if default is None:
            raise InputError(
                f"the artifact's items ({', '.join(map(repr, art.items[:2]))}, ...) are not of a shipped metabench "
                "dataset, so say how they name the source task's documents: --id-field FIELD (a document field whose "
                "value is the item id, after --id-prefix) or --id-field doc_hash")
        id_field, dflt_prefix = default
        id_prefix = dflt_prefix if id_prefix is None else id_prefix
    id_prefix = id_prefix or ""
    keys = []
    for iid in art.items:
        if not iid.startswith(id_prefix):
            raise InputError(f"item {iid!r} does not start with --id-prefix {id_prefix!r}; every chosen item id must be "
                             "PREFIX + the document's key")
        keys.append((iid, iid[len(id_prefix):]))

    # which source task(s)
    groups: dict[str, list[tuple[str, str]]] = {}
    versions = None
    if meta:
        ref = data if isinstance(data, Responses) else load(data or ds)
        if "item_version" in ref.item_extras:
            versions = dict(zip(ref.items.tolist(), ref.item_extras["item_version"].tolist()))
            unknown = [i for i in art.items if i not in versions]
            if unknown:
                raise InputError(f"{len(unknown)} chosen items are not items of {ds}, e.g. {unknown[0]!r}; is the artifact "
                                 f"from another dataset?")
    if source_task is None:
        if not meta:
            raise InputError("say which harness task holds the chosen documents: --source-task TASK (a task name, or "
                             "the path of its YAML; --include-path for your own task folder)")
        for v, its in sorted(group_by(keys, lambda ik: versions[ik[0]] if versions else "B").items()):
            groups[f"metabench_{ds}" + ("_secondary" if v == "B" else "")] = its  # item set A: split primary
    else:
        groups[str(source_task)] = keys

    parts = []
    multi = len(groups) > 1
    new_names = [f"{name}_{s}" for s in ("primary", "secondary")] if multi else [name]
    lookup = find_task_yamls([s for s in groups if not s.lower().endswith((".yaml", ".yml"))] + new_names,
                             include_paths)
    for src, its in groups.items():
        yaml_path = find_task_yaml(src, include_paths) if lookup.get(src) is None else lookup[src]
        full, raw = _load_source(yaml_path)
        split = full.get("test_split") or full.get("validation_split")
        if not split:
            raise InputError(f"{yaml_path}: the source task has neither test_split nor validation_split; nothing to "
                             "restrict")
        if meta and versions and str(full.get("dataset_path")) == "HCAI/metabench":
            want = {"primary": "A", "secondary": "B"}.get(str(split))
            wrong = [i for i, _ in its if want and versions[i] != want]
            if wrong:
                raise InputError(
                    f"{len(wrong)} of the {len(art.items)} chosen items are metabench set {versions[wrong[0]]}, e.g. "
                    f"{wrong[0]!r}, but {full['task']} evaluates split {split!r} (set {want}); leave out --source-task "
                    "to export both splits as a group, or compress on one item set (see docs/own-benchmark.md)")
        task = f"{name}_{split}" if multi else name
        parts.append(_Part(task=task, source_task=str(full["task"]), source_yaml=yaml_path, eval_split=str(split),
                           source_process_docs=_source_fn_ref(full.get("process_docs"), str(yaml_path)),
                           items=its, source_cfg=raw, existing=lookup.get(task)))
    return parts, id_field, id_prefix


def choose_metric(art, parts: list[_Part], metric: str | None = None) -> str:
    """The per-document metric of the item scores: ``metric``, else the metabench dataset's, else ``acc`` when the
    source task has it (or names none), else its first. InputError when the source task lacks ``metric``."""
    names = []
    for p in parts:
        for m in p.source_cfg.get("metric_list") or []:
            if isinstance(m, dict) and isinstance(m.get("metric"), str) and m["metric"] not in names:
                names.append(m["metric"])
    if metric is not None:
        if names and metric not in names:
            raise InputError(f"--metric {metric!r}: the source task's metrics are {', '.join(names)}; choose one of them")
        return metric
    ds = art.dataset.get("name", "")
    if ds in METABENCH_METRICS:
        return METABENCH_METRICS[ds]
    return "acc" if not names or "acc" in names else names[0]


def export_task(artifact, name: str, directory, source_task: str | None = None, include_path=None,
                id_field: str | None = None, id_prefix: str | None = None, data=None, force: bool = False,
                validate: bool = True, metric: str | None = None) -> ExportResult:
    """Write the chosen items of ``artifact`` (a :class:`~essence.artifact.compressed.Compressed` or its path) as
    harness task ``name`` in ``directory``: ``NAME.yaml`` (``include:`` of the source task's YAML, the hook as
    ``process_docs`` and ``class``; a group of ``NAME_primary`` and ``NAME_secondary`` when the items span metabench
    item sets A and B), the hook ``essence_NAME.py``, ``essence_NAME_estimator.py`` and ``NAME.items.json`` (ids, id
    mapping, per task the ``{"id", "key"}`` pairs, the estimator). ``source_task``: the harness task (name or YAML
    path) of the items' documents (metabench default: ``metabench_<name>_secondary`` and/or ``metabench_<name>``);
    ``include_path``: folder(s) of the user's tasks; ``id_field``/``id_prefix``: the mapping (metabench default:
    ``metabench_idx``, ``mb_sub_idx`` for mmlu, prefix ``"<name>."``); ``data``: where metabench item sets are read;
    ``metric``: :func:`choose_metric`. Existing files are replaced only with ``force``; nothing is written unless
    :func:`validate_with_harness` passes."""
    art_label = "artifact" if isinstance(artifact, Compressed) else Path(artifact).name
    artifact = artifact if isinstance(artifact, Compressed) else Compressed.load(artifact)
    if not _NAME.match(name or ""):
        raise InputError(f"--task {name!r}: use letters, digits, '_' and '-', starting with a letter (it names the "
                         "YAML file, the hook module and the harness task)")
    directory = Path(directory)
    if directory.exists() and not directory.is_dir():
        raise InputError(f"--out {directory}: exists and is not a folder")
    include_paths = [include_path] if isinstance(include_path, (str, Path)) else list(include_path or [])
    parts, id_field, id_prefix = _parts_for(artifact, name, source_task, include_paths, id_field, id_prefix, data)
    for p in parts:
        if p.task == p.source_task:
            raise InputError(f"--task {name!r} is the source task's own name; choose a new name")
        if p.existing is not None and p.existing.parent != directory.resolve():
            raise InputError(f"--task {p.task!r} already names a harness task ({p.existing}); choose another name")

    metric, fp = choose_metric(artifact, parts, metric), str(artifact.dataset.get("fingerprint", ""))
    hook_module, ids_name, multi = "essence_" + re.sub(r"\W", "_", name), f"{name}.items.json", len(parts) > 1
    funcs = {p.task: ("process_docs_" + re.sub(r"\W", "_", p.eval_split) if multi else "process_docs") for p in parts}
    spec = {
        "schema": SUBSET_SCHEMA, "schema_version": 1, "essence_version": __version__, "task": name,
        "items": list(artifact.items), "fingerprint": fp,
        "artifact": {"file": art_label, "dataset": artifact.dataset.get("name"), "method": artifact.method,
                     "k": artifact.k, "seed": artifact.seed, "created": artifact.created},
        "match": {"field": id_field, "prefix": id_prefix},
        "tasks": {p.task: {"source_task": p.source_task, "source_yaml": str(p.source_yaml), "eval_split": p.eval_split,
                           "source_process_docs": p.source_process_docs,
                           "items": [{"id": i, "key": key} for i, key in p.items]} for p in parts},
        "estimator": {"metric": metric, "items": list(artifact.items), "reconstructor": artifact.reconstructor.to_dict(),
                      "interval": artifact.interval.to_dict(), "level": artifact.interval.level},
    }
    key_doc = ("sha256(json.dumps(doc, indent=2, ensure_ascii=False)) -- the harness's doc_hash"
               if id_field == "doc_hash" else f"str(doc[{id_field!r}])" + (f"   (item id = {id_prefix!r} + key)" if id_prefix
                                                                          else "   (= the item id)"))
    functions = "".join(f"\n\ndef {funcs[p.task]}(dataset):\n    return restrict(dataset, {p.task!r})\n" for p in parts)
    estimator_file = f"{hook_module}_estimator.py"
    hook = hook_text(estimator_file=estimator_file, metric=metric, version=__version__, k=artifact.k,
                     parts_doc=" and ".join(p.source_task for p in parts), artifact=art_label, fingerprint=fp,
                     ids_file=ids_name, key_doc=key_doc, functions=functions)
    files: dict[str, str] = {ids_name: json.dumps(jsonable(spec), indent=1, ensure_ascii=False, allow_nan=False) + "\n",
                             estimator_file: Path(forward.__file__).read_text(encoding="utf-8"),
                             f"{hook_module}.py": hook,
                             **{f"{p.task}.yaml": task_yaml(p, hook_module, funcs[p.task], art_label, fp, artifact.k)
                                for p in parts}}
    if multi:
        files[f"{name}.yaml"] = group_yaml(name, parts, art_label, fp, metric)
    existing = [f for f in files if (directory / f).exists()]
    if existing and not force:
        raise InputError(f"{directory / existing[0]}: already exists; choose another --out or --task, or pass --force")

    # write everything to a temporary folder beside DIR, validate there, then move the files in
    directory.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{directory.name}.essence-", dir=directory.parent))
    try:
        for fname, text in files.items():
            (tmp / fname).write_text(text, encoding="utf-8")
        checks = validate_with_harness(tmp, [p.task for p in parts], group=name if multi else None) if validate else []
        directory.mkdir(parents=True, exist_ok=True)
        # the ids file and the hook first: a YAML is never visible without what it needs
        order = [ids_name, estimator_file, f"{hook_module}.py"] + [f for f in files if f.endswith(".yaml")]
        for fname in order:
            os.replace(tmp / fname, directory / fname)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    checks = [c.replace(str(tmp), str(directory)) for c in checks]
    return ExportResult(name=name, directory=directory, files=[directory / f for f in order],
                        parts={p.task: p.source_task for p in parts}, checks=checks, id_field=id_field,
                        id_prefix=id_prefix, n_items=artifact.k)


def validate_with_harness(directory, tasks: list[str], group: str | None = None) -> list[str]:
    """Check exported task files offline with the installed harness: ``TaskManager`` indexes ``tasks`` (and
    ``group``), each YAML loads into a ``TaskConfig`` whose ``process_docs`` is the hook in ``directory``, which reads
    its ids file. Returns what was checked; InputError naming the failed check."""
    TaskManager, loader, TaskConfig = _harness()
    directory, version, log = Path(directory), importlib.metadata.version("lm_eval"), logging.getLogger("lm_eval")
    prev = log.level
    log.setLevel(logging.ERROR)
    try:
        index = TaskManager(include_path=str(directory), include_defaults=False).task_index
    finally:
        log.setLevel(prev)
    checks = []

    def kind(entry):
        return entry.kind.name.lower()

    for t in tasks:
        if t not in index:
            raise InputError(f"harness check failed: TaskManager(include_path={directory}) does not find task {t!r}")
        if kind(index[t]) not in ("task", "py_task"):
            raise InputError(f"harness check failed: {t!r} is indexed as a {kind(index[t])}, not a task")
        try:
            cfg = {k: v for k, v in loader(Path(index[t].yaml_path), True).items()
                   if k not in ("tag", "group", "task_list")}
        except Exception as exc:
            raise InputError(f"harness check failed: the harness cannot load {index[t].yaml_path} "
                             f"({type(exc).__name__}: {exc})") from None
        cls = cfg.pop("class", None)
        if cls is not None and not (isinstance(cls, type) and cls.__name__ == "SubsetTask"):
            raise InputError(f"harness check failed: {t}'s class is {cls!r}, not the essence hook's SubsetTask")
        try:
            tc = TaskConfig(**cfg)
        except Exception as exc:
            raise InputError(f"harness check failed: {t}'s merged config is not a valid TaskConfig "
                             f"({type(exc).__name__}: {exc})") from None
        fn = tc.process_docs
        src = Path(inspect.getsourcefile(fn)).resolve() if callable(fn) else None
        if src is None or src.parent != directory.resolve():
            raise InputError(f"harness check failed: {t}'s process_docs is {fn!r}, not the essence hook in {directory}")
        module = inspect.getmodule(fn)
        spec = module._spec()
        if t not in spec.get("tasks", {}):
            raise InputError(f"harness check failed: the ids file has no entry for task {t!r}")
        module._source_process_docs(spec["tasks"][t]["source_process_docs"])
        checks.append(
            f"lm_eval {version}: TaskManager(include_path=DIR) indexes task {t}; its YAML loads with include and "
            f"!function resolved into a TaskConfig (dataset {tc.dataset_path}"
            f"{'/' + tc.dataset_name if tc.dataset_name else ''}, split {tc.test_split or tc.validation_split}, "
            f"output_type {tc.output_type}, metrics {', '.join(m['metric'] for m in (tc.metric_list or []))}); "
            f"process_docs is {src.name}:{fn.__name__}, which reads its {len(spec['tasks'][t]['items'])} keys"
            + (" and loads the source's process_docs" if spec["tasks"][t]["source_process_docs"] else
               " (the source task has no process_docs of its own)")
            + (f"; class {src.name}:SubsetTask adds essence_estimate/lower/upper from {spec['estimator']['metric']}"
               if cls is not None else ""))
    if group is not None:
        if group not in index or kind(index[group]) != "group":
            raise InputError(f"harness check failed: TaskManager(include_path={directory}) does not find group {group!r}")
        checks.append(f"lm_eval {version}: group {group} is indexed as a group of {', '.join(tasks)}")
    return checks
