"""benchmarks/speed.py: the cost-curve and big-file parts (tiny GENERATED sizes; no timing asserted)."""

from __future__ import annotations

from argparse import Namespace

import numpy as np
import pytest

from script_loader import load_script


def _module():
    return load_script("benchmarks/speed.py")


@pytest.fixture
def cases_in_tmp(tmp_path, monkeypatch):
    """The script with its case cache (build/speed_cases/ of the checkout) in a temporary folder."""
    mod = _module()
    monkeypatch.setattr(mod, "CASE_CACHE", tmp_path / "speed_cases")
    return mod


def test_loglog_slope_recovers_a_power_law():
    mod = _module()
    rows = [{"items": n, "t": 3.0 * n**1.5} for n in (10, 100, 1000)] + [{"items": 5, "error": "x"}]
    assert mod._slope(rows, "items", "t") == pytest.approx(1.5)
    assert mod._slope(rows[:1], "items", "t") is None


@pytest.mark.parametrize("kind", ["wide-parquet", "long-parquet", "long-csv"])
def test_written_big_files_load_back_to_the_generated_matrix(tmp_path, kind):
    from essence.data import load
    from essence.data.synthetic import generate_matrix

    mod = _module()
    path = mod._write_big(kind, 30, 40, tmp_path, seed=2)
    d = load(path)
    R = generate_matrix(30, 40, seed=2)
    order_m = np.argsort([f"gen-m{i}" for i in range(30)])
    order_i = np.argsort([f"gen-i{j}" for j in range(40)])
    if kind == "wide-parquet":  # wide files keep the file's order
        order_m, order_i = np.arange(30), np.arange(40)
    np.testing.assert_array_equal(d.responses, R[np.ix_(order_m, order_i)])


def test_scale_part_runs_each_case_in_a_subprocess(cases_in_tmp):
    mod = cases_in_tmp
    args = Namespace(k=5, models=60, scale_items="50,80", scale_models="40", fixed_items=50, methods="random",
                     data_seed=0, case_seed=0, gen="", fresh=True)
    res = mod.part_scale(args)
    assert "GENERATED" in res["note"] and len(res["rows"]) == 3
    assert all("error" not in r and r["peak_rss_mb"] > 0 for r in res["rows"])
    assert res["table"].count("\n") == 4 and "loglog_slopes" in res


def test_seeds_part_reports_the_ratio_to_random_per_seed(cases_in_tmp):
    mod = cases_in_tmp
    args = Namespace(k=5, models=60, n_items=50, seeds="0,1", data_seed=0, case_seed=0, fresh=True,
                     gen='{"dims": 2, "guessing": 0.0}', params='{"checkpoints": [0, 100], "augment": 50, "dims": [1]}')
    res = mod.part_seeds(args)
    assert "GENERATED" in res["note"] and '"dims": 2' in res["note"] and len(res["rows"]) == 2
    method = mod._default_method()  # the part times the default
    for x in res["rows"]:
        e = x[method]
        assert e["generator"] == {"dims": 2, "guessing": 0.0} and e["data"].endswith(f"-s{x['seed']}")
        assert e["params"]["augment"] == 50 and "compress_cpu_seconds" in e and "load_average" in e
    ratio = res["rows"][0][method]["test_rmse"] / res["rows"][0]["random"]["test_rmse"]
    assert f"{ratio:.3f}" in res["table"] and "mean" in res["table"]
