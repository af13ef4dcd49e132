"""``essence run --adaptive``: rounds of ``round_size`` items, each chosen by the artifact from every answer so far,
exported as a harness task (:func:`export_round`), run (the model built once) and imported, until the artifact's
stopping rule; items without a logged result are skipped. Open LLM Leaderboard v2 items have no documents."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import pandas as pd

from ..artifact.base import load_artifact
from ..data import OPENLLM_V2
from ..data._version import __version__
from ..data.checks import whole_number
from ..data.errors import InputError
from .export import _parts_for, choose_metric, validate_with_harness
from .logs import read_samples
from .run import _resolve_model, chance_from_logs, exp_include, model_label, run_task
from .samples import import_samples
from .taskfiles import hook_text, task_yaml

__all__ = ["run_adaptive", "export_round", "DEFAULT_ROUND_SIZE"]

DEFAULT_ROUND_SIZE = 5


def export_round(art, ids, name: str, directory, source_task=None, include_paths=(), id_field=None, id_prefix=None,
                 metric=None) -> dict:
    """Write items ``ids`` of adaptive artifact ``art`` as harness task ``name`` in the new folder ``directory``
    (YAML(s), hook, ``NAME.items.json``; checked with the harness's loader); returns the ids file's content."""
    view = SimpleNamespace(items=list(ids), dataset=art.dataset)
    parts, id_field, id_prefix = _parts_for(view, name, source_task, list(include_paths), id_field, id_prefix, None)
    fp, hook, multi = str(art.dataset.get("fingerprint", "")), "essence_" + re.sub(r"\W", "_", name), len(parts) > 1
    funcs = {p.task: "process_docs_" + re.sub(r"\W", "_", p.eval_split) if multi else "process_docs" for p in parts}
    spec = {"task": name, "items": list(ids), "fingerprint": fp, "match": {"field": id_field, "prefix": id_prefix},
            "metric": choose_metric(view, parts, metric),
            "tasks": {p.task: {"source_task": p.source_task, "eval_split": p.eval_split,
                               "source_process_docs": p.source_process_docs,
                               "items": [{"id": i, "key": key} for i, key in p.items]} for p in parts}}
    code = "".join(f"\n\ndef {funcs[p.task]}(dataset):\n    return restrict(dataset, {p.task!r})\n" for p in parts)
    files = {f"{name}.items.json": json.dumps(spec, indent=1, default=str) + "\n",
             f"{hook}.py": hook_text(task_class=False, estimator_file="", metric=spec["metric"], version=__version__,
                                     parts_doc=" and ".join(p.source_task for p in parts), k=len(ids),
                                     artifact="an adaptive artifact", fingerprint=fp, ids_file=f"{name}.items.json",
                                     key_doc=f"doc[{id_field!r}]", functions=code)}
    for p in parts:  # the export's task YAML without the estimator class
        text = task_yaml(p, hook, funcs[p.task], "adaptive round", fp, len(ids))
        files[f"{p.task}.yaml"] = "".join(x for x in text.splitlines(True) if not x.startswith("class: "))
    if multi:
        files[f"{name}.yaml"] = "\n".join([f"group: {name}", "task:", *[f"  - {p.task}" for p in parts],
                                           "aggregate_metric_list:", f"  - metric: {spec['metric']}",
                                           "    weight_by_size: true", "metadata:", "  version: 1.0"]) + "\n"
    directory = Path(directory)
    directory.mkdir(parents=True)
    for fname, text in files.items():
        (directory / fname).write_text(text, encoding="utf-8")
    validate_with_harness(directory, [p.task for p in parts], group=name if multi else None)
    return spec


def run_adaptive(artifact, model: str, model_args: str = "", *, name: str | None = None, source_task=None,
                 include_path=None, id_field=None, id_prefix=None, metric=None, device: str | None = None,
                 batch_size=1, logs=None, round_size: int = DEFAULT_ROUND_SIZE, offline: bool | None = None,
                 report=None) -> SimpleNamespace:
    """Test ``model`` (a harness model type, or ``"smollm2"``) adaptively on ``artifact`` (an adaptive artifact or
    its path), ``round_size`` items per harness run; ``logs`` keeps each round under ``<logs>/round_NN/``;
    ``report(round dict)`` after each round. Returns ``estimates`` (DataFrame, one row, as ``estimate``), ``items``
    (given, in order), ``answers`` (id -> score), ``rounds``, ``skipped``, ``chance`` (pp or None), ``seconds``."""
    from lm_eval.api.registry import get_model

    art = load_artifact(artifact) if isinstance(artifact, (str, Path)) else artifact
    if art.dataset.get("name") in OPENLLM_V2:
        raise InputError(f"{art.dataset['name']}: the Open LLM Leaderboard v2 data ship no item texts or harness "
                         "documents, so their items cannot run in lm-evaluation-harness; run --adaptive on a metabench "
                         "pool's artifact or your own benchmark's (docs/own-benchmark.md)")
    round_size, include = whole_number("round_size", round_size, 1), exp_include(include_path)
    if logs and any(Path(logs).glob("round_*")):
        raise InputError(f"--logs {logs}: already holds the rounds of a run; give an empty or new folder")
    model, model_args, device = _resolve_model(model, model_args, device, offline)
    label = name or model_label(model, model_args)
    try:
        lm = get_model(model).create_from_arg_string(model_args, {"batch_size": batch_size, "max_batch_size": None,
                                                                    "device": device})
    except (OSError, ValueError) as exc:
        raise InputError(f"the harness could not load {model} ({model_args}): {type(exc).__name__}: {exc}") from None
    scratch = Path(tempfile.mkdtemp(prefix="essence-adaptive-"))
    root, tag = Path(logs) if logs else scratch, re.sub(r"\W", "_", str(art.dataset.get("fingerprint", "x"))[:8])
    answers, skipped, rounds, docs, out_type, seconds = {}, [], [], [], None, 0.0
    try:
        while ids := art.next_items(answers, round_size, unavailable=skipped):
            task, folder = f"essence_adaptive_{tag}_r{len(rounds) + 1:02d}", root / f"round_{len(rounds) + 1:02d}"
            spec = export_round(art, ids, task, folder / "task", source_task, include, id_field, id_prefix, metric)
            t0 = time.perf_counter()
            model_dir, res = run_task(lm, task, [folder / "task", *include], folder, model_args,
                                      batch_size=batch_size)
            seconds += time.perf_counter() - t0
            samples = sorted(model_dir.glob(f"samples_{task}*_{res['date']}.jsonl"))
            got = import_samples(samples, data=None, model=label, metric=spec["metric"],
                                 id_field=spec["match"]["field"], id_prefix=spec["match"]["prefix"]).responses
            pos = {s: i for i, s in enumerate(got.items.tolist())}
            vals = {i: float(got.responses[0, pos[i]]) if i in pos else float("nan") for i in ids}
            answers.update({i: v for i, v in vals.items() if v == v})
            skipped += [i for i, v in vals.items() if v != v]
            docs += read_samples(samples, model=label)
            out_type = out_type or next(iter(res["configs"].values()), {}).get("output_type")
            now = art.result(answers, unavailable=skipped)
            rounds.append({"round": len(rounds) + 1, "items": ids, "answers": [answers.get(i) for i in ids], **now})
            if report is not None:
                report(rounds[-1])
            if now["done"]:
                break
        if not answers:
            raise InputError("the harness logged no result on any chosen item; nothing to estimate")
        lo, hi = art.calibration["ref_range"]
        est = pd.DataFrame({"model": [label], "estimate": [now["estimate"]], "lower": [now["lower"]],
                            "upper": [now["upper"]], "outside": [not lo <= now["estimate"] <= hi],
                            "answered_by": ["adaptive"], "items_used": [now["n"]]})
        return SimpleNamespace(estimates=est, items=list(answers), answers=answers, rounds=rounds, skipped=skipped,
                               chance=chance_from_logs(docs, spec["metric"], out_type), seconds=seconds)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
