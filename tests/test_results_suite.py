"""results/suite*.csv: the summary is the one its runs give, and one run regenerates."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from script_loader import load_script

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results"


def test_summary_is_the_one_its_runs_give():
    mod = load_script("benchmarks/suite.py")
    runs = pd.read_csv(RESULTS / "suite_runs.csv")
    got = mod.results_table(runs[runs.approach.isin(["suite", "separate"])])
    pd.testing.assert_frame_equal(got, pd.read_csv(RESULTS / "suite.csv"), check_dtype=False, atol=1e-3)
    assert set(got.benchmark) == {*mod.NAMES, "mean of members", "suite mean"}


@pytest.mark.slow
def test_a_separate_artifact_regenerates(committed_tol):
    """The separate MMLU artifact of seed 0 (random split) gives the committed RMSE (notebook 11 does the same)."""
    from essence.artifact.compressed import compress
    from essence.suite import load_suite
    from essence.suite.study import suite_split

    mod = load_script("benchmarks/suite.py")
    suite = load_suite(mod.NAMES)
    split = suite_split(suite, 0)
    b = suite.names.index("mmlu")
    art = compress(suite.members[b], k=50, method="auto", seed=0, split=split, progress=False)
    test = suite.subset(split.test)
    pred = art.reconstructor.predict(test.members[b].subset(items=art.items).responses)
    rmse = float(np.sqrt(np.mean((pred - test.targets[:, b]) ** 2)))
    runs = pd.read_csv(RESULTS / "suite_runs.csv")
    row = runs.query("split == 'random' and seed == 0 and approach == 'separate' and benchmark == 'mmlu'")
    assert rmse == pytest.approx(float(row["rmse"].iloc[0]), abs=committed_tol(1e-4))
