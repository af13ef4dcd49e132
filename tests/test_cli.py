"""The `essence` command end to end on real data slices, and every bad argument (exit 2, one line, no file)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ESSENCE = str(Path(sys.executable).parent / "essence")


def run(*args, cwd=None):
    return subprocess.run([ESSENCE, *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=600)


@pytest.fixture(scope="module")
def slice_npz(tmp_path_factory, small):
    p = tmp_path_factory.mktemp("data") / "slice.npz"
    np.savez(p, responses=small.responses, models=small.models, items=small.items, texts=small.texts,
             full_score=small.target)
    return p


@pytest.fixture(scope="module")
def artifact(tmp_path_factory, slice_npz):
    out = tmp_path_factory.mktemp("art") / "a.json"
    r = run("compress", slice_npz, "--k", 8, "--method", "random", "--seed", 1, "--out", out, "--quiet")
    assert r.returncode == 0, r.stderr
    assert "test:" in r.stdout and "rmse=" in r.stdout and "coverage=" in r.stdout
    return out


def test_compress_writes_artifact(artifact):
    d = json.loads(artifact.read_text())
    assert d["method"] == "random" and d["k"] == 8 and len(d["items"]) == 8 and d["seed"] == 1


def test_estimate_csv(tmp_path, artifact, slice_npz):
    out = tmp_path / "est.csv"
    r = run("estimate", artifact, slice_npz, "--out", out)
    assert r.returncode == 0, r.stderr
    df = pd.read_csv(out)
    assert list(df.columns) == ["model", "estimate", "lower", "upper", "outside", "answered_by"] and len(df) == 600
    assert (df["lower"] <= df["estimate"]).all() and (df["estimate"] <= df["upper"]).all()
    # stdout variant prints the same table
    r2 = run("estimate", artifact, slice_npz)
    pd.testing.assert_frame_equal(pd.read_csv(io.StringIO(r2.stdout)), df)
    # refuses to overwrite
    r3 = run("estimate", artifact, slice_npz, "--out", out)
    assert r3.returncode == 2 and "already exists" in r3.stderr


def test_evaluate_json(artifact, slice_npz, small):
    from scipy.stats import kendalltau

    from essence.artifact.compressed import Compressed

    r = run("evaluate", artifact, slice_npz, "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert list(d) == ["n_models", "rmse", "mae", "kendall", "spearman", "rank_err_5", "rank_err_10", "coverage"]
    # every figure again, by hand from the artifact's estimates and the slice's true scores
    est = Compressed.load(artifact).estimate(small)
    e, lo, hi, y = est["estimate"].to_numpy(), est["lower"].to_numpy(), est["upper"].to_numpy(), small.target
    rank = lambda v: pd.Series(-v).rank().to_numpy()  # noqa: E731  1 = best, ties share their mean rank
    assert d["n_models"] == 600
    assert d["rmse"] == pytest.approx(np.sqrt(np.mean((e - y) ** 2)), rel=1e-9)
    assert d["mae"] == pytest.approx(np.mean(np.abs(e - y)), rel=1e-9)
    assert d["coverage"] == pytest.approx(np.mean((lo <= y) & (y <= hi)), rel=1e-9)
    assert d["kendall"] == pytest.approx(kendalltau(y, e).statistic, rel=1e-9)
    assert d["spearman"] == pytest.approx(np.corrcoef(rank(y), rank(e))[0, 1], rel=1e-9)
    assert d["rank_err_5"] == pytest.approx(np.mean(np.abs(rank(e) - rank(y)) <= 0.05 * 600), rel=1e-9)
    assert 0 < d["rmse"] < 20 and 0.5 < d["coverage"] <= 1
    r = run("evaluate", artifact, slice_npz)
    assert "optimistic" in r.stdout  # it warns when evaluated on its own data


def test_estimate_names_missing_items(tmp_path, artifact, small):
    items = json.loads(artifact.read_text())["items"]
    keep = small.subset(items=[i for i in small.items if i != items[0]])
    p = tmp_path / "partial.npz"
    np.savez(p, responses=keep.responses, models=keep.models, items=keep.items)
    out = tmp_path / "o.csv"
    r = run("estimate", artifact, p, "--out", out)
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and items[0] in r.stderr
    assert not out.exists()


BAD_ARGUMENTS = [
    (["compress", "SLICE", "--k", "0"], "must be at least 1"),
    (["compress", "SLICE", "--k", "-3"], "must be at least 1"),
    (["compress", "SLICE", "--k", "x"], "not a whole number"),
    (["compress", "SLICE", "--k", "500", "--method", "random"], "larger than the 80 items"),
    (["compress", "SLICE", "--k", "5", "--method", "magic"], "unknown method 'magic'"),
    (["compress", "nosuchdataset", "--k", "5", "--method", "random"], "unknown dataset 'nosuchdataset'"),
    (["compress", "SLICE", "--k", "5", "--method", "random", "--param", "bogus=1"], "unknown parameter"),
    (["compress", "SLICE", "--k", "5", "--method", "random", "--param", "noequals"], "expected NAME=VALUE"),
    (["compress", "SLICE"], "required: --k"),
    (["frobnicate"], "invalid choice"),
    (["estimate", "/nonexistent.json", "SLICE"], "no such artifact"),
]


# one subprocess each (3-6 s): the fast loop keeps the first two cases, the rest are slow
@pytest.mark.parametrize("args,match", [pytest.param(*case, marks=() if i < 2 else pytest.mark.slow)
                                        for i, case in enumerate(BAD_ARGUMENTS)])
def test_bad_arguments_exit_2_one_line_no_output(tmp_path, slice_npz, args, match):
    out = tmp_path / "out.json"
    args = [str(slice_npz) if a == "SLICE" else a for a in args]
    if args[0] == "compress":
        args += ["--out", str(out)]
    r = run(*args)
    assert r.returncode == 2, (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert match in lines[0]
    assert not out.exists()
    assert not list(tmp_path.iterdir())


def test_compress_refuses_existing_out(tmp_path, slice_npz):
    out = tmp_path / "mine.json"
    out.write_text("precious")
    r = run("compress", slice_npz, "--k", 5, "--method", "random", "--out", out, "--quiet")
    assert r.returncode == 2 and "already exists" in r.stderr
    assert out.read_text() == "precious"


def test_data_command_lists_datasets():
    r = run("data")
    assert r.returncode == 0
    assert "gsm8k" in r.stdout and "4076 models x  486 items" in r.stdout and "pre-selected" in r.stdout


def test_items_from_restricts_the_pool(tmp_path, slice_npz, small):
    ids = tmp_path / "ids.txt"
    ids.write_text("\n".join(small.items[:12]) + "\n")
    out = tmp_path / "a.json"
    r = run("compress", slice_npz, "--k", 5, "--method", "random", "--items-from", ids, "--out", out, "--quiet")
    assert r.returncode == 0, r.stderr
    d = json.loads(out.read_text())
    assert set(d["items"]) <= set(small.items[:12]) and d["dataset"]["n_items"] == 12
