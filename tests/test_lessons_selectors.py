"""Notebook 07's helpers (essence.lessons.selectors) and figures (essence.lessons.plots.selectors), on real data slices."""

from __future__ import annotations

import numpy as np
import pytest

from essence.lessons.selectors import (FAITHFUL_COLUMNS, decision_guide, faithful_run, faithful_table,
                                       selector_runs, toy_matrix)

FAST = {"epochs": 25, "max_models": 200}


def test_toy_matrix_is_small_sorted_and_informative(small):
    toy = toy_matrix(small, n_models=8, n_items=12, seed=0)
    assert toy.responses.shape == (8, 12)
    assert np.all(np.diff(toy.target) >= 0)  # weakest model first
    R = toy.responses
    assert not np.isnan(R).any() and (R.max(axis=0) > R.min(axis=0)).all()  # every item separates some models
    again = toy_matrix(small, n_models=8, n_items=12, seed=0)
    assert again.items.tolist() == toy.items.tolist() and again.models.tolist() == toy.models.tolist()
    assert toy_matrix(small, 8, 12, seed=1).items.tolist() != toy.items.tolist()
    with pytest.raises(ValueError, match="n_items"):
        toy_matrix(small, n_models=8, n_items=10_000)
    with pytest.raises(ValueError, match="n_models"):
        toy_matrix(small, n_models=1)


def test_faithful_run_measures_both_settings_and_caches(small, tmp_path):
    from essence.methods.tinybench import TinyBenchSelector

    rec = faithful_run(small, 10, 0, cache_dir=tmp_path, tinybench_params=TinyBenchSelector.route_params(FAST))
    assert all(np.isfinite(rec[c]) and rec[c] >= 0 for c in FAITHFUL_COLUMNS)
    # the faithful (uncalibrated) estimates target the pool: their pool error is below their target error
    # whenever the pool accuracy differs from the target by more than a few pp, as here
    assert rec["pool minus target (pp)"] > 2
    assert rec["pool: gp-IRT"] < rec["target: gp-IRT"]
    assert 0 <= rec["gp_lambda"] <= 1
    assert (tmp_path / f"{small.name}_k10_s0.json").exists()
    assert faithful_run(small, 10, 0, cache_dir=tmp_path) == rec  # read back, not recomputed
    tab = faithful_table([rec])
    assert tab.loc[(small.name, 10), "seeds"] == 1


@pytest.fixture(scope="module")
def runs_dir(small, tmp_path_factory):
    """One selector_runs call (random, disco, kmeans, tinybench refusing) and the folder of its cached runs."""
    out = tmp_path_factory.mktemp("runs")
    runs = selector_runs(small, ["disco", "kmeans", "tinybench"], 10, seeds=(0,), cache_dir=out,
                         params={"tinybench": {"min_models": 10_000}})
    return runs, out


def test_selector_runs_and_decision_guide(runs_dir):
    runs = runs_dir[0]
    assert set(runs.method) == {"random", "disco", "kmeans", "tinybench"}
    ok = runs[runs["rmse"].notna()]
    np.testing.assert_allclose(ok["ratio"], ok["rmse"] / ok["random_rmse"])
    assert "min_models" in runs.set_index("method").loc["tinybench", "refused"]
    guide = decision_guide(runs)
    assert guide.loc["random", "ratio to random"] == 1.0
    assert guide.loc["tinybench", "ratio to random"] == "refused"
    assert guide.loc["tinybench", "fewest training models"].startswith("100")
    assert guide.loc["disco", "fewest training models"] == "any"
    assert guide.loc["kmeans", "needs before choosing"] == "full evaluation of reference models"
    assert "cost" not in guide.columns  # no measured time: it depends on the machine and its load


def test_selector_runs_reuse_a_cached_run_only_under_the_same_code(small, runs_dir, tmp_path):
    import json

    from essence.sweep.signatures import code_version

    first, shared = runs_dir
    first = first.set_index("method")
    rnd, disco = (tmp_path / f"{small.name}_{m}_k10_s0.json" for m in ("random", "disco"))
    for path in (rnd, disco):  # the runs the shared call wrote, under the code that wrote them
        path.write_text((shared / path.name).read_text())
        assert json.loads(path.read_text())["code"] == code_version(path.name.split("_")[-3])
    rnd.write_text(json.dumps({**json.loads(rnd.read_text()), "rmse": 55.0}))  # current code: reused as stored
    disco.write_text(json.dumps({**json.loads(disco.read_text()), "code": "older", "rmse": 99.0}))  # earlier code
    again = selector_runs(small, ["disco"], 10, seeds=(0,), cache_dir=tmp_path).set_index("method")
    assert again.loc["random", "rmse"] == 55.0
    assert again.loc["disco", "rmse"] == first.loc["disco", "rmse"] != 99.0  # recomputed
    assert json.loads(disco.read_text())["code"] == code_version("disco")  # and the stale file replaced


def test_selector_figures(small):
    import matplotlib

    matplotlib.use("Agg")
    from essence.lessons.plots.selectors import plot_guide, plot_herding_mmd, plot_ppl_strata, plot_toy_choices

    toy = toy_matrix(small, 6, 8, seed=0)
    w = np.zeros(8)
    w[[1, 4]] = [5.0, 3.0]
    fig = plot_toy_choices(toy.responses, {"weights": w, "positions": np.array([0, 2])}, "arc")
    assert len(fig.axes) == 2 and "arc *" in fig.axes[0].get_title()
    assert any("pre-selected" in t.get_text() for t in fig.texts)  # the metabench pool caveat
    fig = plot_herding_mmd(np.linspace(1, 0.1, 10), np.ones((3, 10)))
    assert fig.axes[0].get_xscale() == "log" and not fig.texts
    ppl = np.array([2.0, 3.0, 5.0, 8.0, 13.0, 21.0])
    fig = plot_ppl_strata(ppl, np.linspace(0, 100, 6), np.array([0, 0, 1, 1, 2, 2]), [1, 4], "gsm8k")
    edges = [ln.get_xdata()[0] for ln in fig.axes[0].lines]
    np.testing.assert_allclose(edges, [np.sqrt(15), np.sqrt(104)])  # between the bins, geometric midpoints
    import pandas as pd

    guide = pd.DataFrame({"ratio to random": [1.0, 0.8, "refused"]},
                         index=["random", "disco", "irt"])
    fig = plot_guide(guide, "x", 5)
    assert "irt" in fig.axes[0].get_title()
