"""`essence compress A B --k K`, `essence evaluate SUITE.json A B --json`, `essence estimate SUITE.json A B`
on real data slices, and the suite's bad arguments (exit 2, one line, no file)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ESSENCE = str(Path(sys.executable).parent / "essence")


def run(*args):
    return subprocess.run([ESSENCE, *map(str, args)], capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    from essence.data import load

    d = tmp_path_factory.mktemp("suite")
    out = []
    for name, n_items in (("arc", 40), ("mmlu", 30)):
        r = load(name)
        r = r.subset(models=np.arange(0, r.n_models, 6), items=np.arange(n_items))
        p = d / f"{name}.npz"
        np.savez(p, responses=r.responses, models=r.models, items=r.items, texts=r.texts, full_score=r.target)
        out.append(p)
    return out


@pytest.fixture(scope="module")
def suite_art(files, tmp_path_factory):
    out = tmp_path_factory.mktemp("art") / "suite.json"
    r = run("compress", *files, "--k", 12, "--method", "random", "--per-benchmark", 3, "--out", out, "--quiet")
    assert r.returncode == 0, r.stderr
    assert "models in all (dropped per benchmark: arc" in r.stdout and "budget: arc" in r.stdout
    assert "test mean" in r.stdout
    return out


def test_compress_writes_one_json_suite_artifact(suite_art):
    d = json.loads(suite_art.read_text())
    assert d["schema"] == "essence.suite" and d["names"] == ["arc", "mmlu"] and d["k"] == 12
    assert min(len(v) for v in d["items"].values()) >= 3 and sum(len(v) for v in d["items"].values()) == 12


def test_evaluate_json_per_benchmark_and_mean(suite_art, files):
    r = run("evaluate", suite_art, *files, "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert set(out) == {"n_models", "benchmarks", "mean"} and set(out["benchmarks"]) == {"arc", "mmlu"}
    for fig in [*out["benchmarks"].values(), out["mean"]]:
        assert {"rmse", "mae", "kendall", "spearman", "coverage"} <= set(fig) and fig["rmse"] >= 0
    text = run("evaluate", suite_art, *files)
    assert text.returncode == 0 and "mean" in text.stdout


def test_estimate_each_benchmark_and_mean_with_intervals(suite_art, files, tmp_path):
    out = tmp_path / "est.csv"
    r = run("estimate", suite_art, *files, "--out", out)
    assert r.returncode == 0, r.stderr
    df = pd.read_csv(out)
    assert list(df.columns) == ["model", "arc", "arc_lower", "arc_upper", "mmlu", "mmlu_lower", "mmlu_upper",
                                "mean", "mean_lower", "mean_upper"]
    assert (df["mean_lower"] <= df["mean"]).all() and (df["mean"] <= df["mean_upper"]).all()
    np.testing.assert_allclose(df["mean"], (df["arc"] + df["mmlu"]) / 2, atol=1e-3)


def test_compress_items_from_keeps_each_benchmarks_listed_items(files, tmp_path):
    from essence.data import load

    ids = []
    for f, n in zip(files, (20, 15)):
        p = tmp_path / f"{f.stem}-ids.txt"
        p.write_text("\n".join(load(f).items[:n].tolist()) + "\n")
        ids.append(p)
    out = tmp_path / "part.json"
    r = run("compress", *files, "--k", 12, "--method", "random", "--items-from", ids[0], "--items-from", ids[1],
            "--out", out, "--quiet")
    assert r.returncode == 0, r.stderr
    d = json.loads(out.read_text())
    assert d["dataset"]["n_items"] == {"arc": 20, "mmlu": 15}
    for f, p in zip(files, ids):
        assert set(d["items"][f.stem]) <= set(p.read_text().split())


@pytest.mark.parametrize("case, expect", [
    ("one_file", "results file(s) (one per benchmark"),
    ("swapped", "missing"),
    ("floor_single", "--per-benchmark: only for a suite"),
    ("floor_big", "--per-benchmark 7"),
    ("method", "does not run on a suite"),
    ("items_from_once", "--items-from: give it once per benchmark"),
    ("items_from_twice_single", "--items-from: give it once per benchmark"),
    ("items_from_unknown", "are not items of mmlu"),
])
def test_bad_suite_arguments_exit_2_with_one_line(case, expect, suite_art, files, tmp_path):
    out = tmp_path / "x.json"
    ids = tmp_path / "ids.txt"
    ids.write_text("arc.1\narc.2\n")  # arc items, not mmlu's
    args = {
        "one_file": ("evaluate", suite_art, files[0]),
        "swapped": ("estimate", suite_art, files[1], files[0]),
        "floor_single": ("compress", files[0], "--k", 5, "--per-benchmark", 2, "--out", out),
        "floor_big": ("compress", *files, "--k", 12, "--per-benchmark", 7, "--method", "random", "--out", out),
        "method": ("compress", *files, "--k", 12, "--method", "nope", "--out", out),
        "items_from_once": ("compress", *files, "--k", 12, "--method", "random", "--items-from", ids, "--out", out),
        "items_from_twice_single": ("compress", files[0], "--k", 5, "--items-from", ids, "--items-from", ids,
                                    "--out", out),
        "items_from_unknown": ("compress", *files, "--k", 12, "--method", "random", "--items-from", files[0],
                               "--items-from", ids, "--out", out),
    }[case]
    r = run(*args)
    assert r.returncode == 2, r.stdout + r.stderr
    assert expect in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not out.exists()
