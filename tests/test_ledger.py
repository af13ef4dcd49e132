"""The claims ledger's verdict rules and its bookkeeping, on small hand-made tables of figures."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from essence.lessons.claims import CLAIMS, Claim
from essence.data.errors import InputError
from essence.lessons.ledger import PLAN, ledger_table, runs_needed, verdict

POOLS = {"arc": 245, "gsm8k": 486, "mmlu": 102, "truthfulqa": 136, "winogrande": 106}


def test_every_claim_has_a_plan_and_runs_fit_the_pools():
    assert {c.key for c in CLAIMS} == set(PLAN)
    for ds, _method, k in runs_needed(POOLS):
        assert k < POOLS[ds]
    assert ("gsm8k", "essence", 500) not in runs_needed(POOLS)  # 500 >= gsm8k's 486 items
    with pytest.raises(InputError, match="no Measure"):
        runs_needed(POOLS, claims=(Claim("x", "essence", "X", 5, "rmse", 1.0, "refs: x"),))


def test_verdict_rules():
    err = Claim("e", "essence", "B", 10, "rmse", 1.0, "refs: t")
    assert verdict(err, 1.09, np.nan) == "reproduced"          # within 10%
    assert verdict(err, 1.2, np.nan) == "not reproduced"
    assert verdict(err, 1.2, 0.15) == "reproduced"              # within 2 sd
    tau = Claim("t", "essence", "B", 10, "kendall", 0.9, "refs: t")
    assert verdict(tau, 0.895, np.nan) == "reproduced" and verdict(tau, 0.85, 0.01) == "not reproduced"
    low = Claim("eb_ppl_mmlu", "ppl", "MMLU", None, "rmse", 7.0, "refs: t")
    assert verdict(low, 8.0, 0.1) == "reproduced" and verdict(low, 3.0, 0.1) == "not reproduced"
    ratio = Claim("r", "essence", "B", None, "ratio", 0.9, "refs: t")
    assert verdict(ratio, 0.93, np.nan) == "reproduced" and verdict(ratio, 1.01, np.nan) == "not reproduced"
    assert verdict(err, np.nan, np.nan) == "not reproduced"


def _runs(rows):
    return pd.DataFrame(rows, columns=["dataset", "method", "k", "seed", "rmse", "mae", "kendall", "rank_err_5", "error"])


def test_ledger_table_from_runs():
    runs = _runs([("gsm8k", "essence", 200, s, 0.8 + 0.01 * s, 0.6, 0.97, 0.9, "") for s in range(3)]
                 + [("gsm8k", "essence", 200, 3, 9.9, 9.9, 0.0, 0.0, "boom")])  # a failed run is left out
    abl = pd.DataFrame({"seed": [0, 0, 1, 1], "variant": ["before", "after"] * 2, "rmse": [3.0, 2.7, 3.2, 2.8],
                        "error": [""] * 4})
    led = ledger_table(runs, POOLS, abl).set_index("claim")
    row = led.loc["eb_gsm8k_200"]
    assert row["n_seeds"] == 3 and row["ours"] == pytest.approx(0.81) and row["verdict"] == "reproduced"
    assert row["caveat"] == "pre-selected pool"
    assert led.loc["eb_gsm8k_200_kendall", "verdict"] == "reproduced"
    assert led.loc["eb_gsm8k_500", "verdict"].startswith("not testable here: k = 500")
    assert led.loc["se_arc_100", "verdict"] == "not testable here: SparseEval is not implemented here"
    assert led.loc["eb_arc_200", "verdict"] == "not run"
    assert "eb_refinement_gsm8k_before" not in led.index  # one row for the pair: the ratio
    r = led.loc["eb_refinement_gsm8k_after"]
    assert r["metric"] == "ratio" and r["ours"] == pytest.approx(np.mean([2.7 / 3.0, 2.8 / 3.2]))
    assert r["published"] == pytest.approx(2.47 / 2.77) and r["verdict"] == "reproduced"
