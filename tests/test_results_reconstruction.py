"""A slice of results/reconstruction_grid.csv, reconstruction_coverage.csv and selectors.csv regenerates."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from essence import data as D
from essence.lessons import reconstruction as LR

RESULTS = Path(__file__).resolve().parents[1] / "results"


def test_a_slice_of_the_error_grid_and_the_coverage_regenerates(committed_tol):
    gsm = D.load("gsm8k")
    sp = D.split_models(gsm, seed=0)
    live = LR.error_grid(gsm.responses[sp.train], gsm.target[sp.train], gsm.responses[sp.test], gsm.target[sp.test],
                         [50], [10, 40], n_draws=1, seed=0)
    grid = pd.read_csv(RESULTS / "reconstruction_grid.csv")
    both = live.merge(grid[grid.study == "n_train"], on=["k", "n_train", "draw", "reconstructor"])
    assert len(both) == len(live) == 2 * len(LR.LADDER)
    np.testing.assert_allclose(both["rmse_x"], both["rmse_y"], atol=committed_tol(5e-4, "reconstruction_grid max rmse"))
    cands = LR.ladder_makers(["line", "mean_ridge", "ridge"])
    cov = LR.coverage_table({"gsm8k": gsm}, 50, [0], n_draws=1, candidates=cands).iloc[0]
    row = pd.read_csv(RESULTS / "reconstruction_coverage.csv").iloc[0]
    assert (row.dataset, row.split_seed, row.choice, row.covered) == ("gsm8k", 0, cov.choice, cov.covered)
    assert row.width == pytest.approx(cov.width, abs=committed_tol(5e-4))


@pytest.mark.slow
def test_a_slice_of_the_selector_runs_regenerates(committed_tol):
    from essence.lessons.selectors import selector_runs

    live = selector_runs(D.load("arc"), ["kmeans", "herding", "ppl", "disco"], 50, seeds=(0,)).set_index("method")
    committed = pd.read_csv(RESULTS / "other_selectors.csv")
    committed = committed[(committed.dataset == "arc") & (committed.seed == 0)].set_index("method")
    for m in live.index:
        assert live.loc[m, "choice"] == committed.loc[m, "choice"], m
        assert live.loc[m, "rmse"] == pytest.approx(committed.loc[m, "rmse"],
                                                    abs=committed_tol(5e-4, f"other_selectors arc {m} rmse")), m
