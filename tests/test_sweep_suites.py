"""Suites in the sweep (``--data a+b``): a row per member and the mean, compress_suite's split shared by every
method, cached and resumable with the suite in the signature, and the bad inputs.

Data: real slices of two metabench pools (arc, truthfulqa) on 300 of the models both have, 30 items each,
written as .npz files (their names are the file stems, so they are not flagged as metabench pools).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from essence import data as edata
from essence.cli import main
from essence.data.errors import InputError
from essence.sweep import COLUMNS, format_summary, format_wide, load_runs, ratio_table, run_sweep, summarise, verdict


@pytest.fixture(scope="session")
def pair(tmp_path_factory):
    """``(arc_path, truthfulqa_path)``: 300 shared models (every 6th of those in both) x the first 30 items."""
    from essence.suite import load_suite

    s = load_suite(["arc", "truthfulqa"])
    keep = np.arange(0, s.n_models, 6)[:300]
    folder = tmp_path_factory.mktemp("suitesweep")
    paths = []
    for m in s.members:
        small = m.subset(models=keep, items=np.arange(30))
        p = folder / f"{m.name}_s.npz"
        np.savez(p, responses=small.responses, models=small.models, items=small.items, full_score=small.target)
        paths.append(str(p))
    return tuple(paths)


def _sweep(data, out, methods=("random",), ks=(5,), seeds=(0, 1), **kw):
    kw.setdefault("jobs", 1)
    kw.setdefault("progress", False)
    return run_sweep(list(data), list(methods), list(ks), list(seeds), out, **kw)


def test_suite_rows_per_member_and_mean_equal_compress_suite(pair, tmp_path):
    from essence.suite import compress_suite
    from essence.sweep.suites import build_suite

    entry = "+".join(pair)
    df = _sweep([entry, pair[0]], tmp_path / "sw")
    assert list(df.columns) == COLUMNS
    assert len(df) == 2 * 3 + 2  # the suite: 2 members + mean per seed; the single dataset: one row per seed
    suite = df[df["dataset"] == "arc_s+truthfulqa_s"]
    assert list(suite["benchmark"]) == ["arc_s", "truthfulqa_s", "mean"] * 2
    single = df[df["dataset"] == "arc_s"]
    assert (single["benchmark"] == "arc_s").all() and len(single) == 2
    assert (df["error"] == "").all() and df[["rmse", "mae", "kendall", "spearman", "coverage"]].notna().all().all()
    assert df.attrs["sweep"]["runs"] == 4 and df.attrs["sweep"]["failed"] == 0
    # each suite row holds compress_suite's test figures on the split it makes for that seed
    s = build_suite(pair)
    for seed in (0, 1):
        art = compress_suite(s, 5, "random", seed=seed, reconstructors="basic", progress=False)
        rows = suite[suite["seed"] == seed].set_index("benchmark")
        for b in ("arc_s", "truthfulqa_s", "mean"):
            for metric in ("rmse", "kendall", "coverage"):
                assert rows.loc[b, metric] == pytest.approx(art.figures["test"][b][metric], rel=1e-9), (seed, b, metric)
        assert (rows["n_test"] == art.split["n_test"]).all()
    # the record keeps the chosen pooled items and a loadable suite artifact
    from essence.suite import SuiteCompressed

    rec = load_runs(tmp_path / "sw")[("arc_s+truthfulqa_s", "random", 5, 0)]
    assert len(rec["items"]) == 5 and sum(rec["budget"].values()) == 5
    assert SuiteCompressed.from_dict(rec["artifact"]).columns() == rec["items"]
    assert set(rec["reconstructor"]) == {"arc_s", "truthfulqa_s"}

    # summaries keep the members apart
    summ = summarise(df)
    assert list(summ["benchmark"]) == ["arc_s", "truthfulqa_s", "mean", "arc_s"]
    text = format_summary(summ)
    assert "| benchmark" in text and "| mean " in text.replace("  ", " ")
    assert "benchmark" not in format_summary(summarise(single))  # single datasets: the table as before

    # cached and resumable: a rerun computes nothing and gives the same table
    again = _sweep([entry, pair[0]], tmp_path / "sw", update=True)
    assert again.attrs["sweep"]["computed"] == 0 and again.attrs["sweep"]["cached"] == 4
    pd.testing.assert_frame_equal(df.drop(columns="seconds"), again.drop(columns="seconds"))


def test_every_suite_method_gets_the_same_split(pair, tmp_path, monkeypatch):
    import essence.suite as esuite

    calls = []
    real = esuite.compress_suite

    def spy(suite, k, method="essence", seed=0, split=None, **kw):
        calls.append((method, seed, tuple(tuple(np.asarray(a).tolist()) for a in split)))
        return real(suite, k, method=method, seed=seed, split=split, **kw)

    monkeypatch.setattr(esuite, "compress_suite", spy)
    df = _sweep(["+".join(pair)], tmp_path / "sw", methods=["random", "essence"], ks=[6], seeds=[0, 1],
                method_params={"essence": {"population": 12, "generations": 3, "elites": 2}})
    assert (df["error"] == "").all() and len(df) == 2 * 2 * 3
    from essence.sweep.suites import build_suite

    mean_target = build_suite(pair).mean_target
    for seed in (0, 1):
        expect = tuple(tuple(a.tolist()) for a in edata.split_models(mean_target, seed=seed))
        got = {c[2] for c in calls if c[1] == seed}
        assert got == {expect} and {c[0] for c in calls if c[1] == seed} == {"random", "essence"}
        assert df.loc[df["seed"] == seed, "split_id"].nunique() == 1
    runs = load_runs(tmp_path / "sw")
    rec = runs[("arc_s+truthfulqa_s", "essence", 6, 0)]
    assert rec["artifact"]["method"] == "essence"
    assert "ga" in rec["artifact"]["selection"]  # the joint GA ran


def test_suite_signature_has_members_and_suite_code(pair, tmp_path, monkeypatch, capsys):
    entry = "+".join(pair)
    _sweep([entry], tmp_path / "sw", seeds=[0])
    sig = load_runs(tmp_path / "sw")[("arc_s+truthfulqa_s", "random", 5, 0)]["signature"]
    assert list(sig["members"]) == ["arc_s", "truthfulqa_s"]
    assert sig["members"]["arc_s"] == edata.load(pair[0]).fingerprint()
    assert isinstance(sig["suite_source"], str) and len(sig["suite_source"]) == 16
    assert sig["settings"]["reconstructors"] == "basic"
    capsys.readouterr()
    # the suite code changed: stale, recomputed with a note naming why
    import essence.sweep.plan as plan

    real = plan._source_hash
    monkeypatch.setattr(plan, "_source_hash", lambda m: "0" * 16 if m == "essence.suite" else real(m))
    df = _sweep([entry], tmp_path / "sw", seeds=[0], update=True)
    assert df.attrs["sweep"]["computed"] == 1 and "suite_source" in capsys.readouterr().err
    # a member's data changed: stale too
    d = edata.load(pair[1])
    r = d.responses.copy()
    r[0, 0] = 1 - r[0, 0]
    np.savez(tmp_path / "truthfulqa_s.npz", responses=r, models=d.models, items=d.items, full_score=d.target)
    df = _sweep([f"{pair[0]}+{tmp_path / 'truthfulqa_s.npz'}"], tmp_path / "sw", seeds=[0], update=True)
    assert df.attrs["sweep"]["computed"] == 1 and "members" in capsys.readouterr().err


def test_a_method_that_cannot_run_on_a_suite_gives_error_rows(pair, tmp_path, capsys):
    rc = main(["sweep", "--data", "+".join(pair), "--methods", "random", "auto", "--k", "5", "61", "--seeds", "0",
               "--out", str(tmp_path / "sw"), "--jobs", "1"])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    df = pd.read_parquet(tmp_path / "sw" / "results.parquet")
    err = df.set_index(["method", "k", "benchmark"])["error"]
    for b in ("arc_s", "truthfulqa_s", "mean"):
        assert err[("random", 5, b)] == ""
        assert err[("auto", 5, b)].startswith("method 'auto' does not run on a suite; methods that do: essence, random")
        assert "larger than the 60 items of the suite" in err[("random", 61, b)]
    assert "4 run(s): 1 computed, 0 from cache, 3 failed" in cap.out  # runs, not rows
    assert "| benchmark" in cap.out  # the printed summary keeps the members apart
    assert "method 'auto' does not run on a suite" in cap.err
    s = summarise(df).set_index(["benchmark", "method", "k"])
    assert s.loc[("mean", "auto", 5), "n_failed"] == 1 and s.loc[("mean", "random", 5), "n_failed"] == 0


@pytest.mark.parametrize("data, extra, needle", [
    ("{a}+nosuch", [], "member 'nosuch': unknown dataset 'nosuch'"),
    ("{a}+{a}", [], "is given twice in one suite"),
    ("{a}+", [], "an empty suite member"),
    ("{a}+{b}", ["--param", "essence.group_fraction=0.5"], "not a setting of the joint EssenceBench"),
])
def test_bad_suite_input_is_one_line_and_writes_nothing(pair, tmp_path, capsys, data, extra, needle):
    out = tmp_path / "sw"
    rc = main(["sweep", "--data", data.format(a=pair[0], b=pair[1]), "--methods", "random", "essence", "--k", "5",
               "--seeds", "0", "--out", str(out), "--quiet", *extra])
    err = capsys.readouterr().err
    assert rc == 2 and needle in err and len(err.strip().splitlines()) == 1, err
    assert not out.exists()


def test_suite_member_check_before_loading():
    from essence.sweep.suites import suite_members

    assert suite_members("arc") is None and suite_members("arc+gsm8k") == ["arc", "gsm8k"]
    with pytest.raises(InputError, match="given twice"):
        suite_members("arc+gsm8k+arc")


def test_tables_keep_suite_members_apart():
    rows = []
    for s_, (ra, rb, rm) in enumerate([(2.0, 4.0, 1.0), (3.0, 5.0, 2.0)]):
        for m, f in (("random", 1.0), ("essence", 0.5)):
            for b, v in (("arc", ra), ("gsm8k", rb), ("mean", rm)):
                rows.append(("arc+gsm8k", b, m, 250, s_, v * f, 0.8, ""))
    df = pd.DataFrame(rows, columns=["dataset", "benchmark", "method", "k", "seed", "rmse", "kendall", "error"])
    s = summarise(df).set_index(["benchmark", "method"])
    assert s.loc[("gsm8k", "random"), "rmse_mean"] == pytest.approx(4.5)
    assert s.loc[("mean", "essence"), "ratio_to_random"] == pytest.approx(0.5)  # paired member by member
    assert bool(s.loc[("mean", "random"), "pool_preselected"]) and bool(s.loc[("arc", "random"), "pool_preselected"])
    t = ratio_table(df, 250)
    assert list(t.index) == ["arc+gsm8k: arc", "arc+gsm8k: gsm8k", "arc+gsm8k: mean"]
    assert t["essence"].to_numpy() == pytest.approx([0.5, 0.5, 0.5])
    wide = format_wide(summarise(df), 250)
    assert "arc+gsm8k: mean*" in wide and "1.50 ± 0.71" in wide and edata.POOL_CAVEAT in wide
    line = verdict(summarise(df), "arc+gsm8k", 250, benchmark="mean")
    assert line.startswith("* **arc+gsm8k: mean ***: lowest error EssenceBench 0.75 pp")
