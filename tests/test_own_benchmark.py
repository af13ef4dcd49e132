"""The "compress your own benchmark" path of docs/own-benchmark.md, end to end on real data slices.

CSV of per-item results -> ``essence compress`` -> ``essence export-lmeval`` -> (the harness) ->
``essence import-lmeval`` -> ``essence estimate``.

* Binary scores: a real truthfulqa slice under the user's own item ids (``q<metabench_idx>``, a few cells
  blanked), exported onto the harness task its documents come from; "running the harness" is played by
  the real pythia-14m ``--log_samples`` lines of the documents the exported hook keeps.
* Continuous scores: real AlpacaEval 2 win probabilities with one real system held out as the "new
  model"; the user's own harness task is a local JSON dataset (loaded offline by ``datasets``), and the
  harness lines of the held-out system are built from its real scores on the chosen items.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from essence.cli import main
from essence.artifact.compressed import Compressed
from essence.data import data_roots, load
from script_loader import load_script


def cli(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def pythia_log(bench: str) -> Path:
    for root in data_roots():
        found = sorted((root / "lm_eval" / "pythia-14m").glob(f"samples_metabench_{bench}_secondary_*.jsonl"))
        if found:
            return found[0]
    pytest.skip("lm_eval/pythia-14m logs not found (run `make data`)")


def load_hook(path: Path):
    return load_script(path.resolve())


def test_own_binary_benchmark(tmp_path, capsys):
    import datasets

    # 1. the user's results: a wide CSV (model column + one column per item; empty cell = missing)
    tq = load("truthfulqa")
    rows = np.arange(0, tq.n_models, 6)
    ids = ["q" + s.split(".", 1)[1] for s in tq.items]
    R = tq.responses[rows].copy()
    rng = np.random.default_rng(0)
    R[rng.random(R.shape) < 0.02] = np.nan  # a few missing cells
    df = pd.DataFrame(R, columns=ids)
    df.insert(0, "model", tq.models[rows])
    csv = tmp_path / "results.csv"
    df.to_csv(csv, index=False)

    # 2. compress
    out = cli(capsys, "compress", csv, "--k", 8, "--method", "random", "--seed", 0, "--out", tmp_path / "art.json", "--quiet")
    assert "results: random k=8 seed=0" in out and "test:" in out
    art = Compressed.load(tmp_path / "art.json")
    assert art.k == 8 and all(i.startswith("q") for i in art.items)

    # 3. export onto the harness task the documents come from, keyed by metabench_idx
    tasks = tmp_path / "tasks"
    out = cli(capsys, "export-lmeval", tmp_path / "art.json", "--task", "mybench_k8", "--out", tasks,
              "--source-task", "metabench_truthfulqa_secondary", "--id-field", "metabench_idx", "--id-prefix", "q")
    assert "mybench_k8 <- metabench_truthfulqa_secondary" in out and "validated: lm_eval" in out
    spec = json.loads((tasks / "mybench_k8.items.json").read_text())
    assert spec["items"] == art.items and spec["fingerprint"] == art.dataset["fingerprint"]

    # 4. "run the harness": the hook keeps the chosen documents of the real source split; the real pythia-14m
    #    lines of those documents are what `lm_eval --tasks mybench_k8 --log_samples` logs for that model
    lines = [json.loads(x) for x in pythia_log("truthfulqa").read_text().splitlines()]
    raw = [{k: v for k, v in x["doc"].items() if k != "original_hash"} for x in lines]
    hook = load_hook(tasks / "essence_mybench_k8.py")
    kept = hook.process_docs(datasets.Dataset.from_list(raw, split="secondary"))
    chosen = {d["metabench_idx"] for d in kept}
    assert sorted(f"q{i}" for i in chosen) == sorted(art.items)
    run = [dict(x, doc_id=j) for j, x in enumerate(x for x in lines if x["doc"]["metabench_idx"] in chosen)]
    log = tmp_path / "results" / "EleutherAI__pythia-14m" / "samples_mybench_k8_2026-01-01T00-00-00.000000.jsonl"
    log.parent.mkdir(parents=True)
    log.write_text("".join(json.dumps(x) + "\n" for x in run))

    # 5. import (the CSV has no prompts or texts: documents match by the id field) and estimate
    out = cli(capsys, "import-lmeval", log, "--data", csv, "--id-field", "metabench_idx", "--id-prefix", "q",
              "--out", tmp_path / "pythia.csv")
    assert "EleutherAI__pythia-14m / mybench_k8: 8 documents -> 8 of 136 results items matched (8 by id field)" in out
    out = cli(capsys, "estimate", tmp_path / "art.json", tmp_path / "pythia.csv")
    head, row = out.splitlines()
    assert head == "model,estimate,lower,upper,outside,answered_by"
    name, est, lo, hi, _outside, _answered_by = row.split(",")
    assert name == "EleutherAI__pythia-14m" and float(lo) <= float(est) <= float(hi)
    direct = art.estimate(pd.DataFrame([{"model": name, **{f"q{x['doc']['metabench_idx']}": x["acc"] for x in run}}]))
    assert float(est) == pytest.approx(direct["estimate"].iloc[0], abs=1e-4)


def test_own_continuous_benchmark(tmp_path, capsys):
    import datasets

    # 1. real continuous scores (judge win probabilities, a few missing); one real system held out as the new model
    ae = load("alpaca_eval2")
    clean = np.flatnonzero(ae.model_extras["model_notes"] == "")
    new = clean[np.argsort(ae.target[clean])[len(clean) // 2]]
    train = np.setdiff1d(np.arange(ae.n_models), [new])
    df = pd.DataFrame(ae.responses[train], columns=ae.items)
    df.insert(0, "model", ae.models[train])
    csv = tmp_path / "alpaca.parquet"
    df.to_parquet(csv, index=False)
    cli(capsys, "compress", csv, "--k", 40, "--method", "random", "--seed", 1, "--out", tmp_path / "ae.json", "--quiet")
    art = Compressed.load(tmp_path / "ae.json")

    # 2. the user's own harness task: a local JSON dataset with an id field
    docs = tmp_path / "instructions.jsonl"
    docs.write_text("".join(json.dumps({"instruction_id": i, "instruction": str(t)}) + "\n"
                            for i, t in zip(ae.items, ae.texts)))
    (tmp_path / "own").mkdir()
    (tmp_path / "own" / "my_alpaca.yaml").write_text(
        "task: my_alpaca\n"
        "dataset_path: json\n"
        f"dataset_kwargs:\n  data_files:\n    test: {json.dumps(str(docs))}\n"
        "test_split: test\n"
        "output_type: generate_until\n"
        "doc_to_text: '{{instruction}}'\n"
        "doc_to_target: ''\n"
        "generation_kwargs:\n  until: ['</s>']\n"
        "metadata:\n  version: 1.0\n"
    )
    out = cli(capsys, "export-lmeval", tmp_path / "ae.json", "--task", "my_alpaca_k40", "--out", tmp_path / "tasks",
              "--source-task", "my_alpaca", "--include-path", tmp_path / "own", "--id-field", "instruction_id")
    assert "my_alpaca_k40 <- my_alpaca" in out and "dataset json, split test, output_type generate_until" in out

    # 3. the hook on the dataset exactly as the harness loads it (datasets' json builder, offline)
    ds = datasets.load_dataset("json", data_files={"test": str(docs)})["test"]
    hook = load_hook(tmp_path / "tasks" / "essence_my_alpaca_k40.py")
    kept = hook.process_docs(ds)
    assert sorted(d["instruction_id"] for d in kept) == sorted(art.items)

    # 4. harness-format lines for the held-out system, from its real scores on the chosen documents
    col = {s: j for j, s in enumerate(ae.items)}
    lines = []
    for j, d in enumerate(kept):
        score = float(ae.responses[new, col[d["instruction_id"]]])
        lines.append({"doc_id": j, "doc": d, "target": "", "arguments": {"gen_args_0": {"arg_0": d["instruction"],
                      "arg_1": {"until": ["</s>"]}}}, "resps": [["..."]], "filtered_resps": ["..."], "filter": "none",
                      "metrics": ["win_prob"], "win_prob": None if np.isnan(score) else score})
    log = tmp_path / "results" / ae.models[new] / "samples_my_alpaca_k40_2026-01-01T00-00-00.000000.jsonl"
    log.parent.mkdir(parents=True)
    log.write_text("".join(json.dumps(x) + "\n" for x in lines))

    # 5. import the continuous metric by name, estimate, compare with the system's true score
    out = cli(capsys, "import-lmeval", log, "--data", csv, "--metric", "win_prob", "--id-field", "instruction_id",
              "--out", tmp_path / "new.npz")
    assert f"{ae.models[new]} / my_alpaca_k40: 40 documents -> 40 of 805 alpaca items matched" in out
    est = pd.read_csv(pd.io.common.StringIO(cli(capsys, "estimate", tmp_path / "ae.json", tmp_path / "new.npz")))
    assert est["model"].tolist() == [ae.models[new]]
    truth = ae.target[new]  # its real win rate over all 805 instructions, pp
    assert est["lower"].iloc[0] <= truth <= est["upper"].iloc[0]
    assert abs(est["estimate"].iloc[0] - truth) < 2, (est, truth)


def _page_heredoc(page: str, opener: str) -> str:
    """The body of the page's ``opener <<'EOF'`` ... ``EOF`` block, as written on the page."""
    start = page.index(opener + " <<'EOF'\n") + len(opener + " <<'EOF'\n")
    return page[start:page.index("\nEOF\n", start) + 1]


@pytest.mark.slow
def test_page_one_step_with_smollm2(tmp_path):
    """docs/own-benchmark.md as a user runs it: its example code and task YAML (read from the page), compress, then
    `essence run --model smollm2` -- the harness for real, offline, on 3 items -- and the same logs imported with the
    export's items file and estimated: the harness's own essence_estimate, `essence run`'s and `essence estimate`'s
    agree to 0.01 pp."""
    import os
    import subprocess
    import sys

    from essence.lmeval.run import smollm2_args

    try:
        smollm2_args()
    except ValueError as exc:
        pytest.skip(str(exc))
    page = (Path(__file__).resolve().parents[1] / "docs" / "own-benchmark.md").read_text()
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "mybench.yaml").write_text(_page_heredoc(page, "cat > tasks/mybench.yaml"))
    root = str(Path(__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))

    def run(*args, check=True):
        p = subprocess.run([sys.executable, *map(str, args)], cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=1800)
        if check:
            assert p.returncode == 0, p.stderr[-3000:]
        return p

    run("-c", _page_heredoc(page, "python -"))
    assert len((tmp_path / "tasks" / "mybench.jsonl").read_text().splitlines()) == 136
    run("-m", "essence.cli", "compress", "results.csv", "--k", 3, "--method", "random", "--seed", 0, "--out", "k3.json",
        "--quiet")
    out = run("-m", "essence.cli", "run", "k3.json", "--model", "smollm2", "--source-task", "mybench", "--include-path",
              "tasks", "--id-field", "qid", "--logs", "runs", "--out", "est.csv").stdout
    assert "essence_estimate" in out and "; the same as essence's" in out, out
    assert "SmolLM2-135M-Instruct.Q4_1: estimated full score" in out and "scored on 3 of the 3 chosen items" in out
    assert "among the 3854 reference models of results" in out and "chance level:" in out
    est = pd.read_csv(tmp_path / "est.csv")
    (items,) = (tmp_path / "runs" / "task").glob("*.items.json")
    samples = sorted((tmp_path / "runs").glob("*/samples_*.jsonl"))
    assert len(samples) == 1
    run("-m", "essence.cli", "import-lmeval", *samples, "--items", items, "--out", "again.csv")
    again = pd.read_csv(io.StringIO(run("-m", "essence.cli", "estimate", "k3.json", "again.csv").stdout))
    (results,) = samples[0].parent.glob("results_*.json")
    harness = json.loads(results.read_text())["results"][samples[0].name.split("samples_")[1].rsplit("_", 1)[0]]
    for col in ("estimate", "lower", "upper"):
        assert abs(harness[f"essence_{col},none"] - again[col].iloc[0]) < 0.01
        assert abs(est[col].iloc[0] - again[col].iloc[0]) < 0.01
    assert again["model"].tolist() == ["SmolLM2-135M-Instruct.Q4_1"]
