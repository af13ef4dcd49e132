"""Replaying logged documents (essence.lmeval.replay) on the real pythia-14m logs of the five metabench tasks:
the replayed task, loaded by the harness itself, builds exactly the requests the log holds; a harness run on it
imports back onto the same pool items; every refusal leaves the folder as it was."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from essence.data import data_roots, load
from essence.data.errors import InputError
from essence.lmeval import import_samples
from essence.lmeval.replay import replay_task
from script_loader import load_script

BENCHES = ("arc", "gsm8k", "mmlu", "truthfulqa", "winogrande")


def _logs_dir() -> Path:
    for root in data_roots():
        if (root / "lm_eval" / "pythia-14m").is_dir():
            return root / "lm_eval" / "pythia-14m"
    pytest.skip("lm_eval/pythia-14m logs not found (run `make data`)")


def log_of(bench: str) -> Path:
    return next(_logs_dir().glob(f"samples_metabench_{bench}_secondary_*.jsonl"))


def logged_requests(path: Path) -> set[tuple]:
    """``(doc_id, request index, context, continuation or None)`` of every logged request."""
    out = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        for key, a in rec["arguments"].items():
            cont = a.get("arg_1")
            out.add((rec["doc_id"], int(key.rsplit("_", 1)[1]), a["arg_0"], cont if isinstance(cont, str) else None))
    return out


def harness_task(folder: Path, name: str):
    from lm_eval.tasks import TaskManager

    tm = TaskManager(include_path=str(folder))
    return tm.load([name])["tasks"][name] if hasattr(tm, "load") else tm.load_task_or_group([name])[name]


@pytest.mark.parametrize("bench", BENCHES)
def test_replayed_task_builds_the_logged_requests(bench, tmp_path):
    rt = replay_task([log_of(bench)], f"metabench_{bench}_secondary", tmp_path)
    assert rt.task == f"replay_metabench_{bench}_secondary" and rt.yaml.is_file() and rt.docs.is_file()
    want = logged_requests(log_of(bench))
    assert rt.n_docs == len({r[0] for r in want})
    task = harness_task(tmp_path, rt.task)
    task.build_all_requests(rank=0, world_size=1)
    got = set()
    for inst in task.instances:
        cont = inst.arguments[1] if isinstance(inst.arguments[1], str) else None
        got.add((inst.doc_id, inst.idx, inst.arguments[0], cont))
    assert got == want


def test_a_harness_run_on_the_replay_imports_onto_the_pool_items(tmp_path):
    """lm_eval's DummyLM (random log-likelihoods) on the replayed winogrande documents: its samples match the
    same 106 pool items as pythia-14m's log, each scored 0 or 1."""
    rt = replay_task([log_of("winogrande")], "metabench_winogrande_secondary", tmp_path / "tasks")
    _dummy_run(tmp_path / "tasks", rt.task, tmp_path / "out")
    files = sorted((tmp_path / "out").rglob(f"samples_{rt.task}_*.jsonl"))
    assert len(files) == 1
    data = load("winogrande")
    mine = import_samples(files, data=data, model="dummy").responses
    theirs = import_samples([log_of("winogrande")], data=data).responses
    assert sorted(mine.items.tolist()) == sorted(theirs.items.tolist()) and mine.n_items == 106
    assert set(np.unique(mine.responses)) <= {0.0, 1.0}


def test_refuses_existing_files_and_leaves_them(tmp_path):
    replay_task([log_of("mmlu")], "metabench_mmlu_secondary", tmp_path)
    yaml = tmp_path / "replay_metabench_mmlu_secondary.yaml"
    yaml.write_text("mine\n")
    with pytest.raises(InputError, match="exists.*force"):
        replay_task([log_of("mmlu")], "metabench_mmlu_secondary", tmp_path)
    assert yaml.read_text() == "mine\n"
    replay_task([log_of("mmlu")], "metabench_mmlu_secondary", tmp_path, force=True)
    assert yaml.read_text().startswith("# replays the 102 documents")


def test_refuses_shots_from_another_split(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "shots.yaml").write_text("task: my_shots\ndataset_path: json\noutput_type: multiple_choice\n"
                                    "training_split: train\ntest_split: test\nnum_fewshot: 5\n"
                                    "doc_to_text: '{{q}}'\ndoc_to_choice: ['a', 'b']\ndoc_to_target: 0\n")
    log = tmp_path / "samples_my_shots_2025-01-01T00-00-00.0.jsonl"
    log.write_text(json.dumps({"doc_id": 0, "doc": {"q": "x"}, "arguments": {}}) + "\n")
    with pytest.raises(InputError, match="few-shot examples from another split"):
        replay_task([log], "my_shots", tmp_path / "out", include_paths=[src])
    assert not (tmp_path / "out").exists()


def test_refuses_two_documents_under_one_doc_id(tmp_path):
    lines = log_of("mmlu").read_text(encoding="utf-8").splitlines()
    other = json.loads(lines[1])
    other["doc_id"] = json.loads(lines[0])["doc_id"]
    bad = tmp_path / "logs" / "samples_metabench_mmlu_secondary_2025-01-01T00-00-00.0.jsonl"
    bad.parent.mkdir()
    bad.write_text(lines[0] + "\n" + json.dumps(other) + "\n")
    with pytest.raises(InputError, match="another document"):
        replay_task([bad], "metabench_mmlu_secondary", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_cli(tmp_path, capsys):
    from essence.cli import main

    args = ["replay-lmeval", str(log_of("truthfulqa")), "--source-task", "metabench_truthfulqa_secondary",
            "--out", str(tmp_path), "--task", "tq_again"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "136 logged documents -> task tq_again" in out and "--tasks tq_again" in out
    before = (tmp_path / "tq_again.yaml").read_text()
    assert main(args) == 2  # exists: one line, nothing replaced
    err = capsys.readouterr().err
    assert err.startswith("essence: error: ") and err.count("\n") == 1 and "exists" in err
    assert (tmp_path / "tq_again.yaml").read_text() == before
    assert main([*args[:3], "no_such_task_anywhere", *args[4:6], "--task", "other"]) == 2
    assert "no lm-evaluation-harness task named 'no_such_task_anywhere'" in capsys.readouterr().err


def _dummy_run(tasks: Path, task, out: Path) -> None:
    """lm_eval's DummyLM (random log-likelihoods, a fixed generation) on ``task`` (a name or a list, run together),
    samples saved under ``out``."""
    from lm_eval import simple_evaluate
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.models.dummy import DummyLM
    from lm_eval.tasks import TaskManager

    class Offline(DummyLM):
        tokenizer = None  # DummyLM's own names a hub tokenizer: no lookups

    tracker = EvaluationTracker(output_path=str(out))
    res = simple_evaluate(model=Offline(), model_args="pretrained=essence-test/dummy",
                          tasks=[task] if isinstance(task, str) else list(task),
                          task_manager=TaskManager(include_path=str(tasks)), log_samples=True,
                          evaluation_tracker=tracker, random_seed=0, numpy_random_seed=0, torch_random_seed=0,
                          fewshot_random_seed=0)
    samples = res.pop("samples")
    tracker.save_results_aggregated(results=res, samples=samples)
    for t, s in samples.items():
        tracker.save_results_samples(task_name=t, samples=s)


@pytest.mark.slow
def test_outside_models_benchmark(tmp_path, capsys):
    """benchmarks/outside_models.py on a model run on the replayed documents of all five tasks (DummyLM for
    SmolLM2): found next to pythia-14m, checked with a suite artifact compressed on the logged items (cached)."""
    from essence.suite import load_suite

    mod = load_script("benchmarks/outside_models.py")
    logs = tmp_path / "logs"
    tasks = [replay_task(mod.samples_of(mod.shipped_logs(), b), mod.source_task(b), logs / "tasks").task
             for b in BENCHES]
    _dummy_run(logs / "tasks", tasks, logs)  # one harness run of the five tasks, as a user runs a suite
    folders = mod.model_folders(logs)
    assert list(folders) == ["pythia-14m", "essence-test__dummy"]
    suite = load_suite(list(BENCHES))
    suite = suite.subset(np.arange(0, suite.n_models, 12))
    fast = {"generations": 3, "population": 8, "elites": 2, "reconstructors": "basic", "tau_text": 1.0}
    table = mod.check_model(suite, folders["essence-test__dummy"], 20, 0, tmp_path / "cache", quiet=True, **fast)
    assert table["benchmark"].tolist() == [*BENCHES, "mean"]
    assert table["logged items"].tolist() == [100, 249, 102, 136, 106, 693] and table["chosen"].iloc[-1] == 20
    assert sum(table["chosen"].iloc[:-1]) == 20
    assert ((table["lower"] <= table["estimate"]) & (table["estimate"] <= table["upper"])).all()
    cached = list((tmp_path / "cache").glob("suite-k20-seed0-*.json"))
    assert len(cached) == 1
    again = mod.check_model(suite, folders["pythia-14m"], 20, 0, tmp_path / "cache", quiet=True, **fast)
    assert list((tmp_path / "cache").glob("*.json")) == cached  # the same logged items: the same artifact
    assert not again["estimate"].equals(table["estimate"])
