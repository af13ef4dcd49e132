"""Adaptive testing: the 2PL bank, the engine (item choice, EAP, estimate, interval, live session), the artifact, the
command line and the harness round loop.

Planted banks check what must hold exactly (the most informative item is chosen; the EAP is the posterior mean a
direct numerical integral gives; a live session reproduces the batch simulation bit for bit); real data slices
check the artifact and the commands; one slow test runs SmolLM2 through lm-evaluation-harness in rounds.
"""

from __future__ import annotations

import io
import json
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import essence
from essence.artifact.adaptive import AdaptiveCompressed, compress_adaptive
from essence.cli import main
from essence.data import data_roots, load
from essence.data.errors import InputError
from essence.features.bank import ItemBank, fit_bank
from essence.methods.adaptive import Policy, Session, calibrate, grid, simulate


def planted(a, b) -> ItemBank:
    a = np.asarray(a, dtype=float)
    return ItemBank(a, -a * np.asarray(b, dtype=float))


def cli(capsys, *args):
    code = main([str(x) for x in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def tq_slice():
    """Every 16th TruthfulQA model (241 x 136, binary, full_score target: a pool map)."""
    tq = load("truthfulqa")
    return tq.subset(models=np.arange(0, tq.n_models, 16))


@pytest.fixture(scope="module")
def tq_art(tq_slice):
    return compress_adaptive(tq_slice, k=10, seed=0, progress=False)


# ----------------------------------------------------------------------------------------------
# the engine on planted banks
# ----------------------------------------------------------------------------------------------
def test_fisher_picks_the_sharp_item_at_the_current_ability():
    # item 0: high a, b at the prior mean 0; item 1: low a, far b; item 2: high a, b = 1
    bank = planted([3.0, 0.5, 2.5], [0.0, 2.0, 1.0])
    info = bank.fisher(np.array([0.0]))[0]
    assert np.argmax(info) == 0 and info[0] == pytest.approx(9 * 0.25)
    tr = simulate(bank, np.array([[1.0, 0.0, 0.0]]), 2)
    # first the item most informative at theta = 0; after a right answer the EAP rises to where item 2 (b = 1) is
    assert tr.items[0, 0] == 0 and tr.theta[0, 1] > 0.4 and tr.items[0, 1] == 2
    # after a wrong answer the ability falls: then item 1 (b = 2) is the least useful, and item 2 still beats it
    tr = simulate(bank, np.array([[0.0, 0.0, 0.0]]), 2)
    assert tr.theta[0, 1] < -0.4 and tr.items[0, 1] == 2
    # an item the model has no result on is skipped: the next best available is given
    tr = simulate(bank, np.array([[np.nan, 1.0, 1.0]]), 3)
    assert tr.items[0].tolist() == [2, 1, -1] and tr.n_items[0, -1] == 2


def test_eap_and_estimate_against_direct_integration():
    a, b = 1.7, -0.4
    bank = planted([a], [b])
    th = np.linspace(-8, 8, 160001)
    p = 1 / (1 + np.exp(-a * (th - b)))
    for df, prior in ((None, np.exp(-0.5 * th**2)), (3.0, (1 + th**2 / 3) ** -2)):
        pol = Policy(prior_df=df)
        for y in (0.0, 1.0):
            tr = simulate(bank, np.array([[y]]), 1, pol)
            w = prior * (p if y else 1 - p)
            assert tr.theta[0, 1] == pytest.approx((w * th).sum() / w.sum(), abs=2e-3)
            # before any item: the expected score under the prior; after the only item: the answer, no uncertainty
            assert abs(tr.theta[0, 0]) < 1e-12
            assert tr.estimate[0, 0] == pytest.approx(100 * (prior * p).sum() / prior.sum(), abs=0.05)
            assert tr.estimate[0, 1] == pytest.approx(100 * y, abs=1e-9) and tr.sd[0, 1] < 1e-6
    nodes, lw = grid(Policy())
    assert nodes.size == 161 and nodes[0] == -8 and np.exp(lw).sum() == pytest.approx(1.0)


def test_graded_answers_enter_as_quasi_likelihood():
    bank = planted([1.0, 1.0], [0.0, 0.0])
    half = simulate(bank, np.array([[0.5, 0.5]]), 1)
    assert abs(half.theta[0, 1]) < 1e-9  # y = 0.5 at P = 0.5: no evidence either way
    assert simulate(bank, np.array([[0.8, 0.5]]), 1).theta[0, 1] > 0.1


def test_same_seed_same_items_and_a_models_test_ignores_the_others():
    rng = np.random.default_rng(3)
    bank = planted(rng.uniform(0.5, 2.5, 60), rng.normal(size=60))
    X = (rng.random((5, 60)) < 0.5).astype(float)
    pol = Policy(top_m=5, n_random_start=2)
    t1, t2 = simulate(bank, X, 12, pol, seed=4), simulate(bank, X, 12, pol, seed=4)
    assert (t1.items == t2.items).all() and (t1.estimate == t2.estimate).all()
    assert all(len(set(row)) == 12 for row in t1.items)  # no item twice
    assert (simulate(bank, X, 12, pol, seed=5).items != t1.items).any()
    alone = simulate(bank, X[3:4], 12, pol, seed=4, keys=[3])
    assert (alone.items[0] == t1.items[3]).all() and (alone.estimate[0] == t1.estimate[3]).all()
    greedy = simulate(bank, X, 12)
    assert (greedy.items[:, 0] == greedy.items[0, 0]).all()  # greedy: every model starts with the same item


@pytest.mark.parametrize("policy", [Policy(), Policy(top_m=4, n_random_start=1)])
def test_live_session_reproduces_the_batch_simulation(policy):
    rng = np.random.default_rng(6)
    J = 80
    bank = planted(rng.uniform(0.3, 2.5, J), rng.normal(size=J))
    bank.score_map = (5.0, 90.0, 1.5)
    X = (rng.random((4, J)) < np.linspace(0.2, 0.8, 4)[:, None]).astype(float)
    X[1, rng.choice(J, 30, replace=False)] = np.nan  # a model without some results
    X[2] = rng.random(J)  # graded
    cal = {"level": 0.9, "z": 1.6448536269514722, "s_in": list(np.linspace(0.5, 0.2, 21)),
           "s_out": list(np.linspace(0.9, 0.4, 21)), "thr": 70.0, "ref_range": [0.0, 100.0]}
    tr = simulate(bank, X, 20, policy, cal, seed=7, keys=[11, 12, 13, 14])
    for i in range(4):
        s = Session(bank, policy, 20, cal, seed=7, key=11 + i, unavailable=np.isnan(X[i]))
        while not s.done():
            (j,) = s.next_items(1)
            s.record(j, X[i, j])
        assert s.given == tr.items[i][tr.items[i] >= 0].tolist()
        e = s.estimate()
        assert e["estimate"] == tr.estimate[i, -1] and e["sd"] == tr.sd[i, -1] and e["theta"] == tr.theta[i, -1]
        assert (e["lower"], e["upper"]) == (tr.lower[i, -1], tr.upper[i, -1])
    # stopping by half-width: the batch and the session stop after the same item
    width = Policy(**{**asdict(policy), "target_halfwidth": 9.0})
    tw = simulate(bank, X, 20, width, cal, seed=7, keys=[11, 12, 13, 14])
    s = Session(bank, width, 20, cal, seed=7, key=11)
    while not s.done():
        (j,) = s.next_items(1)
        s.record(j, X[0, j])
    assert len(s.given) == tw.n_items[0, -1] < 20 and s.estimate()["halfwidth"] <= 9.0
    # rounds: n items at once are the n most informative at the current ability
    s = Session(bank, Policy(), 20, cal)
    first = s.next_items(3)
    info = bank.fisher(np.array([s.estimate()["theta"]]))[0]
    assert first == np.argsort(-info, kind="stable")[:3].tolist()


def test_fit_recovers_a_planted_2pl_and_handles_constant_items():
    rng = np.random.default_rng(0)
    N, J = 400, 40
    th = rng.normal(size=N)
    a, b = rng.uniform(0.5, 2.5, J), rng.normal(0, 1, J)
    X = (rng.random((N, J)) < 1 / (1 + np.exp(-a * (th[:, None] - b)))).astype(float)
    X[:, 0] = 1.0  # nobody fails item 0
    X[:, 1] = np.nan  # nobody answered item 1
    bank = fit_bank(X)
    assert np.corrcoef(bank.a[2:], a[2:])[0, 1] > 0.85
    assert np.corrcoef(-bank.d[2:] / bank.a[2:], b[2:])[0, 1] > 0.95
    assert bank.a[0] == 0 and bank.a[1] == 0 and bank.info["constant_items"] == 2
    assert bank.prob([5.0])[0, 0] > 0.99 and bank.prob([0.0])[0, 1] == pytest.approx(0.5)
    assert np.array_equal(fit_bank(X).d, bank.d)  # deterministic
    cal, oof = calibrate(X[:, 2:], 100 * X[:, 2:].mean(axis=1), 5, seed=0)
    assert len(cal["s_in"]) == 6 and np.isfinite(oof["estimate"]).all()


# ----------------------------------------------------------------------------------------------
# the artifact
# ----------------------------------------------------------------------------------------------
def test_artifact_round_trip_and_estimates(tq_art, tq_slice, tmp_path):
    art = tq_art
    assert art.dataset["pool_map"] and art.bank.score_map[1] != 100.0
    t = art.figures["test"]
    assert t["n_models"] == art.split["n_test"] and t["rmse"] < 12 and 0 <= t["coverage"] <= 1
    assert t["items_used"] == 10 and "validation" in art.figures
    path = art.save(tmp_path / "tq.json")
    back = essence.load(path)
    assert isinstance(back, AdaptiveCompressed) and back.items == art.items and back.k == 10
    sub = tq_slice.subset(models=np.arange(30))
    e1, e2 = art.estimate(sub), back.estimate(sub)
    assert list(e1.columns) == ["model", "estimate", "lower", "upper", "outside", "answered_by", "items_used"]
    pd.testing.assert_frame_equal(e1, e2)
    assert ((e1["lower"] <= e1["estimate"]) & (e1["estimate"] <= e1["upper"])).all()
    assert (e1["items_used"] == 10).all() and (e1["answered_by"] == "adaptive").all()
    # a Compressed artifact is not an adaptive one: one clear error
    other = essence.compress(tq_slice, k=5, method="random", progress=False).save(tmp_path / "random.json")
    with pytest.raises(InputError, match="schema 'essence.compressed', expected 'essence.adaptive'"):
        AdaptiveCompressed.load(other)
    # rounds: the same items as the session, answered from a row
    row = {i: float(v) for i, v in zip(sub.items, sub.responses[0])}
    answers = {}
    while True:
        nxt = art.next_items(answers, 3)
        if not nxt:
            break
        answers.update({i: row[i] for i in nxt})
    assert len(answers) == 10 and art.result(answers)["done"]


def test_a_model_missing_items_gets_an_estimate_from_the_others(tq_art, tq_slice):
    art = tq_art
    sub = tq_slice.subset(models=[0, 1])
    full = art.estimate(sub)
    first = art.next_items({}, 1)[0]
    df = pd.DataFrame(sub.responses, columns=sub.items)
    df.insert(0, "model", sub.models)
    gone = df.drop(columns=[first])  # no result on the first item at all: the next best is given instead
    est = art.estimate(gone)
    assert (est["items_used"] == 10).all() and est["estimate"].notna().all()
    few = df.copy()
    few.iloc[0, 1:] = np.nan
    few.iloc[0, 1:5] = sub.responses[0, :4]  # only 4 results: 4 items given
    est = art.estimate(few)
    assert est["items_used"].tolist() == [4, 10] and np.isfinite(est["estimate"]).all()
    assert est["estimate"].iloc[1] == full["estimate"].iloc[1]
    with pytest.raises(InputError, match="no result on any chosen item"):
        art.estimate(few.assign(**{c: np.nan for c in few.columns[1:]}))
    with pytest.raises(InputError, match="none of the artifact's 136 bank items"):
        art.estimate(pd.DataFrame({"model": ["m"], "x": [1.0]}))


def test_bad_input_one_clear_error(tq_slice):
    with pytest.raises(InputError, match="k = 500 is larger than the pool of 136 items"):
        compress_adaptive(tq_slice, k=500, progress=False)
    with pytest.raises(InputError, match="unknown parameter"):
        compress_adaptive(tq_slice, k=5, progress=False, nonsense=1)
    with pytest.raises(InputError, match="top_m"):
        compress_adaptive(tq_slice, k=5, progress=False, top_m=0)
    with pytest.raises(InputError, match="too few"):
        compress_adaptive(tq_slice.subset(models=np.arange(15)), k=5, progress=False)


@pytest.mark.slow
def test_graded_scores():
    """AlpacaEval 2 win probabilities (graded, in [0, 1]) enter the bank as they are, no binarisation."""
    ae = load("alpaca_eval2")
    ae = ae.subset(items=np.arange(200))
    assert not ae.is_binary
    art = compress_adaptive(ae, k=10, seed=0, test=0.2, progress=False)
    # the target is the mean over all 805 instructions, not over these 200: the pool score is mapped to it
    assert not art.dataset["binary"] and art.dataset["pool_map"]
    est = art.estimate(ae.subset(models=np.arange(5)))
    assert est["estimate"].between(0, 100).all() and (est["items_used"] == 10).all()


@pytest.mark.slow
def test_cli_compress_estimate_evaluate(tmp_path, capsys, tq_slice):
    path = tmp_path / "tq.npz"
    np.savez_compressed(path, responses=tq_slice.responses, models=tq_slice.models, items=tq_slice.items,
                        full_score=tq_slice.target)
    art = tmp_path / "tq-adaptive.json"
    code, out, err = cli(capsys, "compress", path, "--method", "adaptive", "--k", 8, "--out", art, "--quiet")
    assert code == 0, err
    assert "adaptive: a 2PL bank of 136 items" in out and "test:" in out
    code, out, err = cli(capsys, "estimate", art, path)
    assert code == 0, err
    est = pd.read_csv(io.StringIO(out))
    assert len(est) == tq_slice.n_models and (est["items_used"] == 8).all()
    code, out, err = cli(capsys, "evaluate", art, path, "--json")
    assert code == 0, err
    fig = json.loads(out)
    assert 0 < fig["rmse"] < 15 and fig["n_models"] == tq_slice.n_models
    code, out, err = cli(capsys, "evaluate", art, path)
    assert code == 0 and "adaptive k<=8 (8.0 items used on average)" in out
    code, _, err = cli(capsys, "compress", path, "--method", "adaptive", "--k", 1000, "--out", tmp_path / "x.json")
    assert code == 2 and err.count("\n") == 1 and "larger than the pool" in err
    assert not (tmp_path / "x.json").exists()


# ----------------------------------------------------------------------------------------------
# the harness
# ----------------------------------------------------------------------------------------------
def test_openllm_v2_cannot_run_in_the_harness(tmp_path, capsys):
    arc = load("arc_challenge")
    art = compress_adaptive(arc.subset(models=np.arange(0, arc.n_models, 2), items=np.arange(60)), k=5,
                            progress=False)
    path = art.save(tmp_path / "arc.json")
    code, _, err = cli(capsys, "run", path, "--adaptive", "--model", "smollm2")
    assert code == 2 and "ship no item texts or harness documents" in err and err.count("\n") == 1
    code, _, err = cli(capsys, "run", path, "--model", "smollm2")
    assert code == 2 and "run it with --adaptive" in err


@pytest.mark.slow
def test_export_round_is_a_harness_task(tq_art, tmp_path):
    from essence.lmeval.adaptive import export_round

    ids = tq_art.next_items({}, 3)
    spec = export_round(tq_art, ids, "tq_round", tmp_path / "t")
    assert spec["items"] == ids and spec["match"] == {"field": "metabench_idx", "prefix": "truthfulqa."}
    (part,) = spec["tasks"].values()
    assert part["source_task"] == "metabench_truthfulqa_secondary" and [i["id"] for i in part["items"]] == ids
    text = (tmp_path / "t" / "tq_round.yaml").read_text()
    assert "process_docs: !function essence_tq_round.process_docs" in text and "class:" not in text


def _page_heredoc(page: str, opener: str) -> str:
    start = page.index(opener + " <<'EOF'\n") + len(opener + " <<'EOF'\n")
    return page[start:page.index("\nEOF\n", start) + 1]


@pytest.mark.slow
def test_harness_rounds_with_smollm2(tmp_path):
    """`essence run --adaptive --model smollm2` for real, offline: docs/own-benchmark.md's TruthfulQA task (its
    documents from the pythia-14m logs), an adaptive artifact of at most 4 items, rounds of 2; the items given,
    the answers the harness logged and the estimate agree with the artifact's own session."""
    import os
    import subprocess
    import sys

    from essence.lmeval.run import smollm2_args

    try:
        smollm2_args()
    except ValueError as exc:
        pytest.skip(str(exc))
    if not any((r / "lm_eval" / "pythia-14m").is_dir() for r in data_roots()):
        pytest.skip("lm_eval/pythia-14m logs not found (run `make data`)")
    page = (Path(__file__).resolve().parents[1] / "docs" / "own-benchmark.md").read_text()
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "mybench.yaml").write_text(_page_heredoc(page, "cat > tasks/mybench.yaml"))
    root = str(Path(__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))

    def run(*args):
        p = subprocess.run([sys.executable, *map(str, args)], cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=1800)
        assert p.returncode == 0, p.stderr[-3000:]
        return p.stdout

    run("-c", _page_heredoc(page, "python -"))
    full = pd.read_csv(tmp_path / "results.csv")
    full.iloc[::8].to_csv(tmp_path / "results.csv", index=False)  # every 8th model: a quick bank
    run("-m", "essence.cli", "compress", "results.csv", "--k", 4, "--method", "adaptive", "--out", "a.json", "--quiet")
    out = run("-m", "essence.cli", "run", "a.json", "--adaptive", "--model", "smollm2", "--source-task", "mybench",
              "--include-path", "tasks", "--id-field", "qid", "--round-size", 2, "--logs", "runs", "--out", "est.csv")
    assert out.count("round ") >= 2 and "harness runs: 2 round(s)" in out, out
    assert "SmolLM2-135M-Instruct.Q4_1: estimated full score" in out and "scored on 4 of the 4 chosen items" in out
    est = pd.read_csv(tmp_path / "est.csv")
    items = est["items"].iloc[0].split()
    assert len(items) == 4 and est["items_used"].iloc[0] == 4
    # the answers the harness logged, round by round, replayed through the artifact
    logged = {}
    for f in sorted((tmp_path / "runs").glob("round_*/*/samples_*.jsonl")):
        for line in f.read_text().splitlines():
            x = json.loads(line)
            logged[x["doc"]["qid"]] = float(x["acc"])
    assert sorted(logged) == sorted(items)
    art = essence.load(tmp_path / "a.json")
    assert art.next_items({}, 2) == items[:2] and art.next_items({i: logged[i] for i in items[:2]}, 2) == items[2:]
    res = art.result(logged)
    assert res["estimate"] == pytest.approx(est["estimate"].iloc[0], abs=1e-4)
    assert res["lower"] == pytest.approx(est["lower"].iloc[0], abs=1e-4)


def test_ledger_reads_the_adaptive_comparison():
    from essence.lessons.ledger import PLAN, ledger_table, runs_needed

    pools = {"arc": 245, "gsm8k": 486, "mmlu": 102, "truthfulqa": 136, "winogrande": 106}
    assert not [r for r in runs_needed(pools) if r[1] == "adaptive"]  # benchmarks/adaptive.py measures them
    sweep = pd.DataFrame(columns=["dataset", "method", "k", "seed", "rmse", "mae", "kendall", "rank_err_5", "error"])
    rows = [(b, "random", m, 50, s, v * (1 + 0.01 * s)) for s in range(3)
            for b in pools for m, v in (("adaptive", 2.0), ("random_line", 2.5), ("irt", 2.2))]
    runs = pd.DataFrame(rows, columns=["benchmark", "split", "method", "k", "seed", "rmse"])
    led = ledger_table(sweep, pools, adaptive_runs=runs).set_index("claim")
    r = led.loc["fluid_mmlu_vs_random"]
    assert r["ours"] == pytest.approx(0.8) and r["n"] == 3 and r["verdict"] == "reproduced"
    assert led.loc["fluid_mmlu_vs_static", "ours"] == pytest.approx(2.0 / 2.2)
    assert led.loc["mb_adaptive_no_gain", "verdict"].startswith("not reproduced")  # adaptive beat the static subsets
    assert led.loc["fluid_less_variance", "verdict"].startswith("not testable here: the variance is across")
    assert PLAN["mb_adaptive_no_gain"].ratio_to == "irt"
    assert ledger_table(sweep, pools).set_index("claim").loc["fluid_mmlu_vs_random", "verdict"] != "reproduced"


@pytest.mark.slow
def test_results_table_slice_regenerates(committed_tol):
    """One cell of results/adaptive_runs.csv (benchmarks/adaptive.py): ARC-Challenge, top split, seed 0, adaptive
    at 10, 25 and 50 items, recomputed through the package."""
    from essence.data import split_models
    from essence.data.metrics import summary

    runs = pd.read_csv(Path(__file__).resolve().parents[1] / "results" / "adaptive_runs.csv")
    arc = load("arc_challenge")
    sp = split_models(arc, test=0.2, seed=0, kind="top")
    art = compress_adaptive(arc, k=50, seed=0, split=sp, progress=False)
    test = arc.subset(models=sp.test)
    for k in (10, 25, 50):
        out = art.estimates(test.responses, k=k)
        got = summary(test.target, out["estimate"], out["lower"], out["upper"])
        row = runs[(runs["benchmark"] == "arc_challenge") & (runs["split"] == "top") & (runs["method"] == "adaptive")
                   & (runs["k"] == k) & (runs["seed"] == 0)].iloc[0]
        tol = committed_tol(5e-4)  # the table's own rounding (coverage: 3 decimals), or the machines' spread
        assert got["rmse"] == pytest.approx(row["rmse"], abs=tol) and got["coverage"] == pytest.approx(row["coverage"], abs=tol)


def test_adaptive_study_keeps_only_static_runs_of_the_current_code(tmp_path, monkeypatch):
    """benchmarks/adaptive.py: a cached static run counts only while its method's code is the code that made it
    (a change to the default is recomputed, not read from a stale cache); the cells' key holds the code too."""
    from script_loader import load_script

    from essence.sweep.signatures import code_version, module_version

    ad = load_script("benchmarks/adaptive.py")
    monkeypatch.setattr(ad, "BUILD", tmp_path)
    runs = tmp_path / "static" / "runs"
    runs.mkdir(parents=True)
    base = {"schema": "essence.sweep.run", "schema_version": 1, "dataset": "arc", "k": 50, "seed": 0, "n_test": 4,
            "error": "", "signature": {}, "figures": {"test": {"rmse": 2.0, "kendall": 0.5}}}
    (runs / "arc__auto__k50__s0.json").write_text(json.dumps({**base, "method": "auto", "code": "old"}))
    (runs / "arc__aipw__k50__s0.json").write_text(json.dumps({**base, "method": "aipw", "code": code_version("aipw")}))
    got = ad.cached_static()
    assert list(got["method"]) == ["aipw"]
    assert module_version("essence.artifact.adaptive") != module_version("essence.methods.random")
