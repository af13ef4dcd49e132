"""A slice of results/refinement_ablation.csv and refinement_rounds.csv (benchmarks/refinement_ablation.py)
regenerates: one seed of the two variants without the filter at k = 25."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from script_loader import load_script

RESULTS = Path(__file__).resolve().parents[1] / "results"


@pytest.mark.slow
def test_one_seed_of_the_ablation_regenerates(tmp_path, committed_tol):
    bench = load_script("benchmarks/refinement_ablation.py")
    runs, rounds = bench.run([25], [0], ["no filter + refinement", "neither"], tmp_path)
    committed = pd.read_csv(RESULTS / "refinement_ablation.csv")
    both = runs.merge(committed, on=["variant", "k", "seed"], suffixes=("_live", ""))
    assert len(both) == len(runs) == 2
    np.testing.assert_allclose(both["rmse_live"], both["rmse"], atol=committed_tol(5e-4))
    np.testing.assert_allclose(both["kendall_live"], both["kendall"], atol=committed_tol(5e-4))
    assert (both["rmse"] > 0).all() and (both["kendall"] > 0.5).all()  # a working selector ranks the test models
    traced = pd.read_csv(RESULTS / "refinement_rounds.csv")
    traced = traced[(traced["k"] == 25) & (traced["seed"] == 0)].reset_index(drop=True)
    assert list(rounds["stage"]) == list(traced["stage"]) == ["ga", "round 1", "round 2"]
    np.testing.assert_allclose(rounds["fitness_rmse"], traced["fitness_rmse"], atol=committed_tol(5e-4))
    assert np.all(np.diff(traced["fitness_rmse"]) <= 1e-9)  # refinement keeps the best subset by the fitness
