"""Paired comparisons (essence.artifact.compare), their calibration (essence.reconstructors.pairs), refitting
(essence.artifact.refit) and the ``compare`` / ``refit`` commands, on real whole benchmarks."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from essence import compare, compress, load, refit
from essence.artifact.base import items_hash
from essence.artifact.compare import GATES, gate_failures, items_needed, verdicts
from essence.cli import main
from essence.data import load as load_data
from essence.data import split_models
from essence.data.errors import InputError
from essence.reconstructors.pairs import PairInterval, discordance

SAVED = Path(__file__).resolve().parent / "artifacts" / "musr-auto-k20.json"


@pytest.fixture(scope="module")
def musr_art():
    """musr, the default at k = 30 on a random split holding out 20 %: ``(data, split, artifact)``."""
    d = load_data("musr")
    sp = split_models(d, test=0.2, seed=1, kind="random")
    return d, sp, compress(d, k=30, seed=1, split=sp, progress=False)


def _responses_file(data, rows, path: Path) -> Path:
    df = pd.DataFrame(data.responses[rows], columns=data.items, index=data.models[rows])
    df.index.name = "model"
    df.to_csv(path)
    return path


def test_verdicts_follow_the_interval_and_the_margin():
    lo = np.array([0.5, -3.0, -0.5, -2.0, -0.5, 0.2])
    hi = np.array([3.0, -0.5, 0.5, 2.0, 1.5, 0.8])
    assert verdicts(lo, hi, 1.0).tolist() == ["better", "worse", "equivalent", "undecided", "undecided",
                                              "equivalent"]
    assert verdicts(lo, hi, 0.0).tolist()[2] == "undecided"  # no margin: nothing is equivalent


def test_items_needed_grows_as_the_decision_gets_harder_and_is_capped():
    # half-width 4 pp at k = 50: a 2 pp difference needs (4/2)^2 = 4x the items
    assert items_needed([2.0], [4.0], 50, 1.0) == [200]
    assert items_needed([0.0], [4.0], 50, 1.0) == [800]  # equivalence at 1 pp: (4/1)^2
    assert items_needed([2.0], [4.0], 50, 1.0, n_items=120) == [120]
    assert items_needed([0.0], [4.0], 50, 0.0) == [None]


def test_discordance_counts_answers_that_differ_over_the_items_both_answered():
    a = np.array([[1, 0, 1, np.nan], [1, 1, 1, 1], [np.nan, np.nan, 1, 1]])
    b = np.array([[1, 1, 1, 0], [1, 1, 1, 1], [1, 0, np.nan, np.nan]])
    assert discordance(a, b).tolist() == [1 / 3, 0.0, 1.0]


def test_the_pair_interval_covers_fresh_pairs_at_its_level():
    """Exchangeable models whose residuals grow with how differently they answer: the calibrated interval covers
    pairs of new models about 90 % of the time, and is narrower for pairs that answer alike."""
    rng = np.random.default_rng(0)
    w, easy = rng.normal(size=40), rng.normal(size=40)

    def models(n):  # a residual that is a fixed function of the answers, plus a little noise
        ability = rng.normal(size=n)
        X = (rng.random((n, 40)) < 1 / (1 + np.exp(-ability[:, None] - easy))).astype(float)
        return X, X @ w + 0.3 * rng.normal(size=n)

    X, resid = models(300)
    y = 50 + 10 * rng.normal(size=300)
    pi = PairInterval(level=0.9).fit(y - resid, y, X, n_train=200)
    Xn, rn = models(200)
    i, j = np.triu_indices(200, 1)
    half = pi.half_width(discordance(Xn[i], Xn[j]))
    covered = np.abs(rn[j] - rn[i]) <= half
    assert 0.85 <= covered.mean() <= 0.95
    assert pi.half_width(0.0) <= pi.half_width(0.5)
    assert PairInterval.from_dict(json.loads(json.dumps(pi.to_dict()))).half_width(0.3) == pytest.approx(
        pi.half_width(0.3))


def test_held_out_pairs_are_covered_and_the_interval_is_narrower_than_random_items(musr_art):
    d, sp, art = musr_art
    test = d.subset(models=sp.test)
    df = compare(art, test)
    pos = {m: i for i, m in enumerate(test.models)}
    truth = test.target[[pos[m] for m in df["b"]]] - test.target[[pos[m] for m in df["a"]]]
    assert len(df) == test.n_models * (test.n_models - 1) // 2
    assert np.mean((df["lower"] <= truth) & (truth <= df["upper"])) >= 0.8
    # a paired interval from 30 random items on a benchmark of ~750 is about 2 x 1.645 x 50 / sqrt(30) ~ 30 pp wide
    assert (df["upper"] - df["lower"]).mean() < 20
    assert set(df["calibration"]) <= {"regression", "frontier", "mixed", "independent"}
    assert (df["calibration"] != "independent").mean() > 0.5


def test_a_model_against_its_own_copy_differs_by_nothing_and_is_never_better_or_worse(musr_art):
    d, sp, art = musr_art
    one = d.subset(models=sp.test[:1])
    twin = pd.DataFrame(np.vstack([one.responses, one.responses]), columns=d.items, index=["m", "m-copy"])
    df = compare(art, twin)
    r = df.iloc[0]
    assert (r["difference"], r["discordance"]) == (0.0, 0.0)
    assert r["lower"] < 0 < r["upper"] and r["verdict"] in ("equivalent", "undecided")


def test_named_models_choose_the_pairs_and_bad_names_are_refused(musr_art):
    d, sp, art = musr_art
    test = d.subset(models=sp.test[:5])
    m = test.models.tolist()
    assert compare(art, test, a=m[0])[["a", "b"]].values.tolist() == [[m[0], x] for x in m[1:]]
    assert compare(art, test, a=m[0], b=m[3])[["a", "b"]].values.tolist() == [[m[0], m[3]]]
    with pytest.raises(InputError, match="no such model"):
        compare(art, test, a="nobody")
    with pytest.raises(InputError, match="two different models"):
        compare(art, test, a=m[0], b=m[0])
    with pytest.raises(InputError, match="margin"):
        compare(art, test, margin=-1)
    with pytest.raises(InputError, match="more than one"):
        compare(art, [test, test])


def test_an_artifact_without_a_pair_calibration_combines_the_two_intervals():
    """An artifact written before pair calibrations existed still compares, with the wider independent interval."""
    art = load(SAVED)
    assert art.pairs is None
    d = load_data("musr").subset(models=np.arange(6))
    df = compare(art, d)
    assert (df["calibration"] == "independent").all()
    est = art.estimate(d).set_index("model")
    r = df.iloc[0]
    a, b = est.loc[r["a"]], est.loc[r["b"]]
    assert r["upper"] - r["difference"] == pytest.approx(np.hypot(b["upper"] - b["estimate"],
                                                                  a["estimate"] - a["lower"]))


def test_gates_fail_on_the_verdicts_they_name():
    df = pd.DataFrame({"a": ["x", "x"], "b": ["y", "z"], "difference": [-3.0, 0.1], "lower": [-5.0, -0.5],
                       "upper": [-1.0, 0.6], "verdict": ["worse", "equivalent"]})
    assert len(gate_failures(df, "worse")) == 1 and "y vs x: worse" in gate_failures(df, "worse")[0]
    assert len(gate_failures(df, "not-equivalent")) == 1
    assert len(gate_failures(df, "not-better")) == 2
    assert gate_failures(df, "undecided") == []
    assert set(GATES) == {"worse", "not-better", "not-equivalent", "undecided"}


def test_the_compare_command_prints_json_and_gates(musr_art, tmp_path, capsys):
    d, sp, art = musr_art
    path = tmp_path / "art.json"
    art.save(path)
    weak, strong = sp.test[np.argmin(d.target[sp.test])], sp.test[np.argmax(d.target[sp.test])]
    resp = _responses_file(d, [weak, strong], tmp_path / "two.csv")
    a, b = d.models[weak], d.models[strong]
    assert main(["compare", str(path), str(resp), "--a", a, "--b", b, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 1 and {"a", "b", "difference", "lower", "upper", "verdict"} <= set(rows[0])
    assert rows[0]["verdict"] == "better"
    assert main(["compare", str(path), str(resp), "--a", b, "--b", a, "--fail-if", "worse"]) == 1
    captured = capsys.readouterr()
    assert "worse" in captured.out and "gate --fail-if worse" in captured.err
    assert main(["compare", str(path), str(resp), "--a", a, "--b", b, "--fail-if", "worse"]) == 0


def test_compare_refuses_a_baseline_artifact_with_other_items(musr_art, tmp_path, capsys):
    d, sp, art = musr_art
    path, other = tmp_path / "art.json", tmp_path / "other.json"
    art.save(path)
    compress(d, k=30, method="random", seed=5, progress=False).save(other)
    resp = _responses_file(d, sp.test[:3], tmp_path / "three.csv")
    assert main(["compare", str(path), str(resp), "--baseline-artifact", str(other)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "differ" in err[0]


def test_a_changed_items_hash_is_refused_as_damaged(musr_art, tmp_path):
    d, sp, art = musr_art
    raw = art.to_dict()
    assert raw["items_hash"] == items_hash(art.items)
    raw["items_hash"] = "sha256:0000000000000000"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(raw))
    with pytest.raises(InputError, match="damaged artifact: items_hash"):
        load(path)


def test_refit_keeps_the_items_records_its_lineage_and_helps_the_strongest_models(tmp_path, capsys):
    """The top split: half of the strongest models (every other one by score) join the references; the other
    half's error falls."""
    d = load_data("arc_challenge")
    sp = split_models(d, test=0.2, seed=0, kind="top")
    art = compress(d, k=30, seed=0, split=sp, progress=False)
    top = sp.test[np.argsort(d.target[sp.test])]
    refs = d.subset(models=np.sort(np.r_[sp.train, sp.val, top[::2]]))
    new = refit(art, refs)
    assert new.items == art.items and new.to_dict()["items_hash"] == art.to_dict()["items_hash"]
    assert len(new.lineage) == 1 and new.lineage[0]["refit_of"]["n_models"] == art.dataset["n_models"]
    fresh = d.subset(models=top[1::2])
    assert new.evaluate(fresh)["rmse"] < art.evaluate(fresh)["rmse"]
    # the command writes beside the artifact, never over it
    path = tmp_path / "art.json"
    art.save(path)
    before = path.read_bytes()
    assert main(["refit", str(path), "arc_challenge", "--out", str(path), "--force"]) == 2
    assert "is one of this command's inputs" in capsys.readouterr().err and path.read_bytes() == before
    assert main(["refit", str(path), "arc_challenge"]) == 0
    assert load(tmp_path / "art-refit.json").lineage[0]["refit_of"]["created"] == art.created


def test_a_suite_compares_every_benchmark_and_the_mean(tmp_path, capsys):
    """A suite artifact: rows per benchmark and for the suite mean; the mean's difference is the mean of the
    members' differences."""
    from essence.suite import load_suite

    art = load(SAVED.with_name("suite-random-k30.json"))
    members = list(load_suite(list(art.dataset["names"])).subset(np.arange(4)).members)
    df = compare(art, members)
    assert list(dict.fromkeys(df["benchmark"])) == [*art.names, "mean"]
    per = df[df["benchmark"] != "mean"].groupby(["a", "b"])["difference"].mean()
    mean = df[df["benchmark"] == "mean"].set_index(["a", "b"])["difference"]
    assert np.allclose(per.loc[mean.index], mean)
    assert (df["lower"] <= df["difference"]).all() and (df["difference"] <= df["upper"]).all()
    files = [_responses_file(m, np.arange(m.n_models), tmp_path / f"{m.name}.csv") for m in members]
    assert main(["compare", str(SAVED.with_name("suite-random-k30.json")), *map(str, files)]) == 0
    out = capsys.readouterr().out
    assert " on mean: " in out and "a suite artifact holds no pair calibration" in out


def test_run_compares_the_new_model_with_a_saved_baseline(musr_art, tmp_path, capsys, monkeypatch):
    """``essence run --save-responses`` then ``--compare-to``: the harness run is replaced by the models' real
    results (the harness itself is tested in test_lmeval); the wiring, output and gate are what is checked."""
    from essence.lmeval import commands, run as run_mod

    d, sp, art = musr_art
    path = tmp_path / "art.json"
    art.save(path)
    weak, strong = sp.test[np.argmin(d.target[sp.test])], sp.test[np.argmax(d.target[sp.test])]

    def fake_run(model_row):
        def run_artifact(a, model, model_args="", **kw):
            resp = d.subset(models=[model_row])
            est = a.estimate(resp)
            return run_mod.RunResult(estimates=est, harness={}, n_answered=a.k, chance=None, seconds=0.0,
                                     samples=[], task="t", responses=resp)
        return run_artifact

    monkeypatch.setattr(commands, "run_artifact", fake_run(weak))
    base = tmp_path / "base.csv"
    assert main(["run", str(path), "--model", "smollm2", "--save-responses", str(base)]) == 0
    assert pd.read_csv(base).shape == (1, art.k + 1)
    capsys.readouterr()
    monkeypatch.setattr(commands, "run_artifact", fake_run(strong))
    assert main(["run", str(path), "--model", "smollm2", "--compare-to", str(base), "--fail-if", "worse"]) == 0
    out = capsys.readouterr().out
    assert f"{d.models[strong]} vs {d.models[weak]}" in out and "better" in out
    monkeypatch.setattr(commands, "run_artifact", fake_run(weak))
    code = main(["run", str(path), "--model", "smollm2", "--compare-to", str(base)])
    assert code == 2 and "another --name" in capsys.readouterr().err
