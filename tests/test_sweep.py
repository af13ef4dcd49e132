"""The comparison sweep: identical splits, cache and resume, --force, error rows, CLI, dask == local.

Runs use ``random`` (and test-only selectors derived from it that count their calls, raise, or
interrupt) with small k on a real slice of gsm8k (300 models x 40 items) and the small real
lcb_codegen (45 x 400). Counting tests run serially (``jobs=1``) so the counter lives in this process.
"""

from __future__ import annotations


import numpy as np
import pandas as pd
import pytest

from essence import data as edata
from essence.cli import main
from essence.data.errors import UsageError
from essence.methods import METHODS
from essence.methods.random import RandomSelector
from essence.sweep import COLUMNS, SUMMARY_COLUMNS, format_summary, format_wide, load_runs, run_path, run_sweep, summarise


# ----------------------------------------------------------------------------------------------
# fixtures
# ----------------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def slice_npz(gsm8k, tmp_path_factory):
    """A real gsm8k slice, 300 models (every 12th: keeps the score range) x the first 40 items, written as a
    canonical .npz (its dataset name is the file stem)."""
    small = gsm8k.subset(models=np.arange(0, gsm8k.n_models, 12)[:300], items=np.arange(40))
    p = tmp_path_factory.mktemp("sweepdata") / "gsm8k_slice.npz"
    np.savez(p, responses=small.responses, models=small.models, items=small.items, full_score=small.target)
    return str(p)


class CountingSelector(RandomSelector):
    """``random`` that records every call and can raise or be interrupted on demand (test only)."""

    name = "counting"
    calls: list = []
    interrupt_at: int | None = None  # KeyboardInterrupt on this call number (1-based)
    fail_seeds: tuple = ()  # ValueError for these seeds
    seen_models: dict = {}  # (dataset, seed) -> list of train model id tuples, one per call

    def __init__(self, k, seed=0, progress=True, alpha=0):
        super().__init__(k, seed=seed, progress=progress)
        self.alpha = alpha

    def select(self, train, val):
        cls = type(self)
        cls.calls.append((train.name, self.k, self.seed))
        cls.seen_models.setdefault((train.name, self.seed), []).append(tuple(train.models) + tuple(val.models))
        if cls.interrupt_at is not None and len(cls.calls) == cls.interrupt_at:
            raise KeyboardInterrupt
        if self.seed in cls.fail_seeds:
            raise ValueError(f"boom on seed {self.seed}")
        return super().select(train, val)


@pytest.fixture
def counting(monkeypatch):
    """Register CountingSelector as method 'counting' (in this process only) with fresh counters."""
    monkeypatch.setitem(METHODS, "counting", CountingSelector)
    monkeypatch.setattr(CountingSelector, "calls", [])
    monkeypatch.setattr(CountingSelector, "seen_models", {})
    monkeypatch.setattr(CountingSelector, "interrupt_at", None)
    monkeypatch.setattr(CountingSelector, "fail_seeds", ())
    return CountingSelector


def _sweep(data, out, methods=("counting",), ks=(5, 10), seeds=(0, 1), **kw):
    kw.setdefault("jobs", 1)
    kw.setdefault("progress", False)
    return run_sweep(list(data), list(methods), list(ks), list(seeds), out, **kw)


# ----------------------------------------------------------------------------------------------
# resume, cache, force
# ----------------------------------------------------------------------------------------------
def test_resume_after_interrupt_computes_only_missing_runs(counting, slice_npz, tmp_path, capsys):
    out = tmp_path / "sw"
    counting.interrupt_at = 3  # the 3rd run is interrupted (a crash / Ctrl-C mid-sweep)
    with pytest.raises(KeyboardInterrupt):
        _sweep([slice_npz], out)
    assert "interrupted after 2 of 4" in capsys.readouterr().err
    files = sorted((out / "runs").glob("*.json"))
    assert len(files) == 2
    assert not (out / "results.parquet").exists() and not (out / "results.csv").exists()
    mtimes = {f.name: f.stat().st_mtime_ns for f in files}

    counting.interrupt_at = None
    counting.calls.clear()
    df = _sweep([slice_npz], out)
    assert len(counting.calls) == 2  # only the two missing runs
    assert len(df) == 4 and (df["error"] == "").all()
    assert df.attrs["sweep"]["cached"] == 2 and df.attrs["sweep"]["computed"] == 2
    assert {f.name: f.stat().st_mtime_ns for f in files} == mtimes  # finished runs untouched

    # a deleted run file is the only run recomputed (update: replace the table, reuse the cache)
    run_path(out, "gsm8k_slice", "counting", 10, 1).unlink()
    counting.calls.clear()
    df2 = _sweep([slice_npz], out, update=True)
    assert counting.calls == [("gsm8k_slice", 10, 1)]
    pd.testing.assert_frame_equal(df.drop(columns="seconds"), df2.drop(columns="seconds"))


def test_stale_cache_entry_is_recomputed_with_a_note(counting, slice_npz, tmp_path, capsys, monkeypatch):
    out = tmp_path / "sw"
    _sweep([slice_npz], out, ks=[5], seeds=[0])
    counting.calls.clear()
    _sweep([slice_npz], out, ks=[5], seeds=[0], update=True)
    assert counting.calls == []  # same signature: reused
    capsys.readouterr()
    _sweep([slice_npz], out, ks=[5], seeds=[0], update=True, method_params={"counting": {"alpha": 1}})
    assert len(counting.calls) == 1  # parameters changed: the cached run is stale
    assert "stale" in capsys.readouterr().err
    rec = load_runs(out)[("gsm8k_slice", "counting", 5, 0)]
    assert rec["signature"]["params"]["alpha"] == 1
    # the method's code changed: stale too
    monkeypatch.setattr("essence.sweep.plan._source_hash", lambda module: "0123456789abcdef")
    counting.calls.clear()
    _sweep([slice_npz], out, ks=[5], seeds=[0], update=True, method_params={"counting": {"alpha": 1}})
    assert len(counting.calls) == 1 and "method_source" in capsys.readouterr().err


def test_existing_table_needs_force(counting, slice_npz, tmp_path, capsys):
    out = tmp_path / "sw"
    _sweep([slice_npz], out)
    table = (out / "results.parquet").read_bytes()
    counting.calls.clear()
    with pytest.raises(UsageError, match="--force"):
        _sweep([slice_npz], out)
    assert counting.calls == [] and (out / "results.parquet").read_bytes() == table

    # the CLI: one line, exit 2, nothing run
    rc = main(["sweep", "--data", slice_npz, "--methods", "counting", "--k", "5", "10", "--seeds", "0", "1",
               "--out", str(out), "--jobs", "1", "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and "already exists" in err and len(err.strip().splitlines()) == 1
    assert counting.calls == []

    df = _sweep([slice_npz], out, force=True)
    assert len(counting.calls) == 4  # every run recomputed
    assert len(df) == 4 and pd.read_parquet(out / "results.parquet").shape[0] == 4


# ----------------------------------------------------------------------------------------------
# failures are rows
# ----------------------------------------------------------------------------------------------
def test_failures_become_rows(counting, slice_npz, tmp_path, monkeypatch):
    out = tmp_path / "sw"
    counting.fail_seeds = (1,)
    df = _sweep([slice_npz, "lcb_codegen"], out, methods=["random", "counting"], ks=[5, 100], seeds=[0, 1])
    assert len(df) == 2 * 2 * 2 * 2  # nothing skipped
    err = df.set_index(["dataset", "method", "k", "seed"])["error"]
    assert "ValueError: boom on seed 1" in err[("lcb_codegen", "counting", 5, 1)]
    assert err[("lcb_codegen", "counting", 5, 0)] == ""
    assert "larger than the 40 items" in err[("gsm8k_slice", "random", 100, 0)]
    assert err[("lcb_codegen", "random", 100, 0)] == ""  # lcb has 400 items
    failed = df["error"] != ""
    assert df.loc[failed, "rmse"].isna().all() and df.loc[~failed, "rmse"].notna().all()
    # failures are not cached (retried next time), but their traceback is kept
    assert not run_path(out, "lcb_codegen", "counting", 5, 1).exists()
    assert run_path(out, "lcb_codegen", "counting", 5, 0).exists()
    tb = (out / "errors" / "lcb_codegen__counting__k5__s1.txt").read_text()
    assert "Traceback" in tb and "boom on seed 1" in tb

    s = summarise(df).set_index(["dataset", "method", "k"])
    assert list(summarise(df).columns) == SUMMARY_COLUMNS
    assert s.loc[("lcb_codegen", "counting", 5), "n_failed"] == 1
    assert s.loc[("lcb_codegen", "counting", 5), "n_runs"] == 2
    assert np.isnan(s.loc[("lcb_codegen", "counting", 5), "rmse_sd"])  # one finished seed
    assert s.loc[("gsm8k_slice", "random", 5), "n_failed"] == 0


# ----------------------------------------------------------------------------------------------
# identical splits
# ----------------------------------------------------------------------------------------------
def test_every_method_sees_the_same_split(counting, slice_npz, tmp_path, monkeypatch):
    calls = []
    real = edata.split_models

    def spy(d, *a, **kw):
        calls.append((d.name, a, kw))
        return real(d, *a, **kw)

    monkeypatch.setattr(edata, "split_models", spy)
    df = _sweep([slice_npz], tmp_path / "sw", methods=["random", "counting"], ks=[5, 10], seeds=[0, 1])
    # one split per dataset x seed, made with that seed and the defaults, shared by all methods and ks
    assert calls == [("gsm8k_slice", (), {"test": None, "seed": s, "kind": "random"}) for s in (0, 1)]
    for seed, g in df.groupby("seed"):
        assert g["split_id"].nunique() == 1 and g["n_test"].nunique() == 1
    assert df.groupby("seed")["split_id"].first().nunique() == 2  # different seeds, different splits
    # the models the method trained on are exactly split_models(data, seed)'s train + val
    d = edata.load(slice_npz)
    for seed in (0, 1):
        sp = real(d, seed=seed)
        expect = tuple(d.models[sp.train]) + tuple(d.models[sp.val])
        assert set(counting.seen_models[("gsm8k_slice", seed)]) == {expect}
    # the table's n_test is the test part of that split
    assert (df["n_test"] == len(real(d, seed=0).test)).all()


# ----------------------------------------------------------------------------------------------
# the CLI end to end (loky, 2 workers), and dask == local
# ----------------------------------------------------------------------------------------------
def test_cli_end_to_end_writes_parquet_and_csv(slice_npz, tmp_path, capsys):
    out = tmp_path / "sw"
    rc = main(["sweep", "--data", slice_npz, "truthfulqa", "--methods", "random", "--k", "5", "10",
               "--seeds", "0", "--out", str(out), "--jobs", "2"])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    pq = pd.read_parquet(out / "results.parquet")
    csv = pd.read_csv(out / "results.csv", keep_default_na=False, na_values=[""])
    assert list(pq.columns) == COLUMNS and list(csv.columns) == COLUMNS
    assert len(pq) == 2 * 1 * 2 * 1
    assert (pq["error"] == "").all()
    assert pq[["rmse", "mae", "kendall", "spearman", "rank_err_5", "rank_err_10", "coverage", "seconds"]].notna().all().all()
    assert ((pq["rmse"] > 0) & (pq["rmse"] < 30)).all() and (pq["kendall"] > 0).all()
    np.testing.assert_allclose(csv["rmse"], pq["rmse"], rtol=1e-12)
    assert list(csv["dataset"]) == list(pq["dataset"])
    tq = pq["dataset"] == "truthfulqa"
    assert pq.loc[tq, "pool_preselected"].all() and (pq.loc[tq, "caveat"] == edata.POOL_CAVEAT).all()
    assert not pq.loc[~tq, "pool_preselected"].any() and (pq.loc[~tq, "caveat"] == "").all()
    assert edata.POOL_CAVEAT in cap.out  # the printed table carries the caveat
    assert "4 run(s): 4 computed" in cap.out
    assert len(list((out / "runs").glob("*.json"))) == 4
    assert not list(out.rglob("*.tmp"))  # atomic writes leave no temp files
    # each cached run holds the figures, the chosen items and a loadable artifact
    from essence.artifact.compressed import Compressed

    rec = load_runs(out)[("truthfulqa", "random", 10, 0)]
    assert len(rec["items"]) == 10 and rec["figures"]["test"]["rmse"] == pytest.approx(
        pq.set_index(["dataset", "k", "seed"]).loc[("truthfulqa", 10, 0), "rmse"])
    art = Compressed.from_dict(rec["artifact"])
    assert art.items == rec["items"] and art.method == "random"


def test_dask_backend_equals_local(slice_npz, tmp_path, capsys):
    distributed = pytest.importorskip("distributed")
    args = ["sweep", "--data", slice_npz, "lcb_codegen", "--methods", "random", "--k", "7",
            "--seeds", "0", "1", "--quiet"]
    assert main(args + ["--out", str(tmp_path / "local"), "--jobs", "2"]) == 0
    with distributed.LocalCluster(n_workers=1, processes=False, threads_per_worker=2, dashboard_address=None,
                                  host="127.0.0.1", protocol="tcp") as cluster:
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1")
        rc = main(args + ["--out", str(tmp_path / "dask"), "--backend", "dask", "--scheduler",
                          cluster.scheduler_address])
    assert rc == 0, capsys.readouterr().err
    a = pd.read_parquet(tmp_path / "local" / "results.parquet").drop(columns="seconds")
    b = pd.read_parquet(tmp_path / "dask" / "results.parquet").drop(columns="seconds")
    assert len(a) == 4 and (a["error"] == "").all()
    pd.testing.assert_frame_equal(a, b)
    ra, rb = load_runs(tmp_path / "local"), load_runs(tmp_path / "dask")
    assert ra.keys() == rb.keys() and len(ra) == 4
    for key in ra:
        assert ra[key]["items"] == rb[key]["items"]
        for part in ("validation", "test"):  # equal up to BLAS summation order (last bits)
            assert ra[key]["figures"][part] == pytest.approx(rb[key]["figures"][part], rel=1e-9, nan_ok=True)


def test_unreachable_scheduler_is_a_usage_error(slice_npz, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("essence.sweep.worker.DASK_CONNECT_TIMEOUT", "1s")
    rc = main(["sweep", "--data", slice_npz, "--methods", "random", "--k", "5", "--seeds", "0",
               "--out", str(tmp_path / "sw"), "--backend", "dask", "--scheduler", "tcp://127.0.0.1:9", "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and "cannot reach the dask scheduler" in err


# ----------------------------------------------------------------------------------------------
# bad input: one line, nothing written
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "argv, needle",
    [
        (["--data", "nosuchdata", "--methods", "random", "--k", "5"], "unknown dataset 'nosuchdata'"),
        (["--data", "lcb_codegen", "--methods", "nosuch", "--k", "5"], "unknown method(s) 'nosuch'"),
        (["--data", "lcb_codegen", "--methods", "random", "--k", "0"], "must be at least 1"),
        (["--data", "lcb_codegen", "--methods", "random", "--k", "5", "--jobs", "0"], "jobs"),
        (["--data", "lcb_codegen", "--methods", "random", "--k", "5", "--param", "random.nope=1"],
         "unknown parameter(s) ['nope']"),
        (["--data", "lcb_codegen", "--methods", "random", "--k", "5", "--param", "nope=1"], "METHOD.NAME=VALUE"),
        (["--data", "lcb_codegen", "--methods", "random", "--k", "5", "--backend", "dask"], "--scheduler"),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(argv, needle, tmp_path, capsys):
    out = tmp_path / "sw"
    rc = main(["sweep", *argv, "--out", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2
    assert needle in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_method_source_hash_follows_its_essence_imports():
    from essence.sweep import _source_hash

    h = _source_hash("essence.methods.random")
    assert isinstance(h, str) and len(h) == 16 and h == _source_hash("essence.methods.random")
    assert _source_hash("essence.methods._no_such_module") is None


def test_method_source_hash_changes_with_what_the_method_runs_and_nothing_else(tmp_path, monkeypatch):
    """In a package of four files: editing the method or a module it imports (inside a function too) makes its
    cached runs stale; editing an unrelated module or a shared-core one does not."""
    from essence.sweep import signatures

    pkg = tmp_path / "essence"
    files = {"__init__.py": "", "methods/__init__.py": "", "search/__init__.py": "", "data/__init__.py": "",
             "methods/foo.py": "def f():\n    from ..search import bar\n",
             "search/bar.py": "X = 1\n", "search/other.py": "Y = 1\n", "data/metrics.py": "Z = 1\n"}
    for name, text in files.items():
        (pkg / name).parent.mkdir(parents=True, exist_ok=True)
        (pkg / name).write_text(text)
    monkeypatch.setattr(signatures, "_PACKAGE", pkg)
    base = signatures._source_hash("essence.methods.foo")
    for name, stale in (("search/other.py", False), ("data/metrics.py", False), ("search/bar.py", True),
                        ("methods/foo.py", True)):
        (pkg / name).write_text((pkg / name).read_text() + "# edited\n")
        assert (signatures._source_hash("essence.methods.foo") != base) == stale, name
        base = signatures._source_hash("essence.methods.foo")


def test_summarise_and_format():
    df = pd.DataFrame({
        "dataset": ["arc"] * 3 + ["lcb_codegen"] * 2,
        "method": ["random"] * 5,
        "k": [5] * 5,
        "seed": [0, 1, 2, 0, 1],
        "rmse": [1.0, 2.0, 3.0, 4.0, np.nan],
        "kendall": [0.5, 0.7, 0.9, 0.6, np.nan],
        "error": ["", "", "", "", "RuntimeError: x"],
    })
    s = summarise(df).set_index("dataset")
    assert s.loc["arc", "rmse_mean"] == pytest.approx(2.0) and s.loc["arc", "rmse_sd"] == pytest.approx(1.0)
    assert s.loc["arc", "kendall_sd"] == pytest.approx(0.2) and s.loc["arc", "n_failed"] == 0
    assert s.loc["lcb_codegen", "n_failed"] == 1 and s.loc["lcb_codegen", "rmse_mean"] == pytest.approx(4.0)
    assert s.loc["lcb_codegen", "error"] == "RuntimeError: x"
    assert bool(s.loc["arc", "pool_preselected"]) and not bool(s.loc["lcb_codegen", "pool_preselected"])
    text = format_summary(summarise(df))
    assert "2.00 ± 1.00" in text and "1/2" in text and edata.POOL_CAVEAT in text and "arc*" in text
    assert edata.POOL_CAVEAT not in format_summary(summarise(df[df["dataset"] == "lcb_codegen"]))


def test_format_wide():
    df = pd.DataFrame({
        "dataset": ["arc"] * 4 + ["lcb_codegen"] * 2,
        "method": ["random", "random", "irt", "irt", "random", "irt"],
        "k": [5] * 6,
        "seed": [0, 1, 0, 1, 0, 0],
        "rmse": [1.0, 3.0, 0.5, 0.7, 4.0, np.nan],
        "kendall": [0.5, 0.7, 0.9, 0.8, 0.6, np.nan],
        "error": ["", "", "", "", "", "ValueError: binary only"],
    })
    text = format_wide(summarise(df), 5, methods=["irt", "random", "kmeans"])
    lines = text.splitlines()
    cells = [[c.strip() for c in line.strip().strip("|").split("|")] for line in lines[:4]]
    assert cells[0] == ["dataset", "irt", "random", "kmeans"]  # a pipe table (DataFrame.to_markdown)
    assert set("".join(cells[1])) <= {"-", ":"}
    assert cells[2] == ["arc*", "0.60 ± 0.14", "2.00 ± 1.41", "-"]
    assert cells[3] == ["lcb_codegen", "failed", "4.00", "-"]
    assert edata.POOL_CAVEAT in text
    assert "0.850 ± 0.071" in format_wide(summarise(df), 5, metric="kendall")
    with pytest.raises(ValueError, match="k = 7"):
        format_wide(summarise(df), 7)
    with pytest.raises(ValueError, match="metric"):
        format_wide(summarise(df), 5, metric="mae")


def _runs():
    """A small results table: two datasets, random and two methods, two seeds; one failed run."""
    rows = []
    for ds, base in (("arc", 4.0), ("lcb_codegen", 2.0)):
        for s_ in (0, 1):
            rows.append((ds, "random", 5, s_, base * (1 + s_), 0.5, ""))
            rows.append((ds, "essence", 5, s_, base * (1 + s_) / 2, 0.8, ""))
            rows.append((ds, "irt", 5, s_, np.nan if ds == "lcb_codegen" else base * 0.9, 0.6,
                         "ValueError: x" if ds == "lcb_codegen" else ""))
    return pd.DataFrame(rows, columns=["dataset", "method", "k", "seed", "rmse", "kendall", "error"])


def test_summary_ratio_and_ratio_table_use_the_one_ratio():
    from essence.data.metrics import ratio_to_random
    from essence.sweep import ratio_table

    df = _runs()
    s = summarise(df).set_index(["dataset", "method"])
    assert s.loc[("arc", "essence"), "ratio_to_random"] == pytest.approx(0.5)
    assert s.loc[("arc", "irt"), "ratio_to_random"] == pytest.approx(ratio_to_random([3.6, 3.6], [4.0, 8.0]))
    assert np.isnan(s.loc[("lcb_codegen", "irt"), "ratio_to_random"])  # every run failed
    t = ratio_table(df, 5, methods=["essence", "irt"])
    assert list(t.index) == ["arc", "lcb_codegen"] and list(t.columns) == ["essence", "irt"]
    assert t.loc["arc", "irt"] == pytest.approx(s.loc[("arc", "irt"), "ratio_to_random"])


def test_mean_sd_and_verdict():
    from essence.sweep import mean_sd, verdict

    assert mean_sd(1.234, 0.5) == "1.23 ± 0.50" and mean_sd(1.0, np.nan, 3) == "1.000"
    assert mean_sd(np.nan, 1.0) == "-" and mean_sd(np.nan, 1.0, missing="failed") == "failed"
    s = summarise(_runs())
    line = verdict(s, "arc", 5)
    assert line.startswith("* **arc ***: lowest error EssenceBench 3.00 pp (Kendall 0.800)")
    assert "random 6.00 ± 2.83 pp" in line and line.endswith(".")
    assert "clearly below random (mean ± sd apart): none" in line  # 3.00 + 1.41 is not below 6.00 - 2.83
    assert verdict(s, "nowhere", 5) == "* **nowhere**: no finished run."
    worse = s.copy()
    worse.loc[worse["method"] == "essence", "rmse_mean"] = 9.0
    assert "EssenceBench 9.00 pp (rank 3 of 3)" in verdict(worse, "arc", 5)
