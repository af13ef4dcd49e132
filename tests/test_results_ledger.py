"""results/ledger*.csv: the committed ledger is the one its committed runs give, and a run regenerates."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from script_loader import load_script

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results"


def _runs() -> pd.DataFrame:
    df = pd.read_csv(RESULTS / "ledger_runs.csv")
    df[["variant", "error"]] = df[["variant", "error"]].fillna("")
    return df


def test_committed_ledger_is_the_one_its_runs_give():
    from essence import data as D
    from essence.lessons.ledger import ledger_table, read_results

    runs = _runs()
    pools = {n: D.load(n).n_items for n in D.DATASETS}
    got = ledger_table(runs[runs.variant == ""], pools, runs[runs.variant != ""], **read_results(RESULTS))
    committed = pd.read_csv(RESULTS / "ledger.csv")
    assert got["claim"].tolist() == committed["claim"].tolist()
    assert got["verdict"].tolist() == committed["verdict"].tolist(), (
        "results/ledger.csv is stale: .venv/bin/python benchmarks/ledger.py --table-only")
    pd.testing.assert_series_equal(got["ours"].round(4), committed["ours"], check_names=False, atol=1e-4)


@pytest.mark.slow
def test_a_committed_run_regenerates(tmp_path, committed_tol):
    mod = load_script("benchmarks/ledger.py")
    dataset, method, k = mod.QUICK
    got = mod.runs([mod.QUICK], [0], tmp_path, ablation=False).iloc[0]
    runs = _runs()
    row = runs[(runs.dataset == dataset) & (runs.method == method) & (runs.k == k) & (runs.seed == 0)].iloc[0]
    for c in ("rmse", "mae", "kendall", "rank_err_5"):
        assert got[c] == pytest.approx(row[c], abs=committed_tol(1e-6, "ledger quick rmse")), c
