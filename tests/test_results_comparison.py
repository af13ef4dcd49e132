"""results/comparison*.csv: the committed tables agree with each other, and a slice of the runs regenerates."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results"


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("comparison_script", ROOT / "benchmarks" / "comparison.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def runs():
    return pd.read_csv(RESULTS / "comparison_runs.csv").fillna({"error": "", "reconstructor": ""})


def test_group_and_summary_tables_follow_from_the_runs(script, runs):
    groups = pd.read_csv(RESULTS / "comparison.csv").fillna({"refused": ""})
    pd.testing.assert_frame_equal(script.group_table(runs), groups, check_dtype=False)
    summary = pd.read_csv(RESULTS / "comparison_summary.csv")
    pd.testing.assert_frame_equal(script.summary_table(runs, int(runs["k"].min())), summary, check_dtype=False)


def test_both_splits_and_both_groups_are_in_the_table(runs):
    assert set(runs["split"]) == {"random", "top"}
    assert set(runs["group"]) == {"metabench pools", "openllm_v2"}
    for (group, split), g in runs.groupby(["group", "split"]):
        assert {"auto", "random_line", "random_ridge", "aipw"} <= set(g.loc[g["error"] == "", "method"]), (group, split)


def test_ratio_is_one_for_the_best_baseline(script, runs):
    r = script.with_ratio(runs)
    base = r[r["method"].isin(script.BASELINES) & (r["error"] == "")]
    best = base.groupby(["dataset", "split", "k", "seed"])["ratio"].min()
    np.testing.assert_allclose(best.to_numpy(), 1.0)


@pytest.mark.slow
def test_a_slice_of_the_runs_regenerates(script, runs, tmp_path, committed_tol):
    """The audit's baselines on the openllm_v2 benchmarks, seed 0, both splits: the committed rows, recomputed."""
    from essence.data import OPENLLM_V2

    new = script.sweep(OPENLLM_V2, script.BASELINES, [50], [0], tmp_path, jobs=1, progress=False)
    keys = ["dataset", "split", "method", "k", "seed"]
    old = runs.merge(new[keys], on=keys)
    assert len(old) == len(new) == len(OPENLLM_V2) * 2 * len(script.BASELINES)
    new = new.sort_values(keys).reset_index(drop=True)
    old = old.sort_values(keys).reset_index(drop=True)
    for col in ("n_test", "reconstructor", "error"):
        assert (new[col] == old[col]).all(), col
    for col in ("rmse", "kendall", "coverage"):
        np.testing.assert_allclose(new[col], old[col], atol=committed_tol(1e-6), err_msg=col)
