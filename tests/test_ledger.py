"""The claims ledger's verdict rules and its bookkeeping, on small hand-made tables of figures."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from essence.data.errors import InputError
from essence.lessons.claims import CLAIMS, Claim
from essence.lessons.ledger import PLAN, interval, ledger_table, read_results, runs_needed, verdict

POOLS = {"arc": 245, "gsm8k": 486, "mmlu": 102, "truthfulqa": 136, "winogrande": 106}


def test_every_claim_has_a_plan_and_runs_fit_the_pools():
    assert {c.key for c in CLAIMS} == set(PLAN)
    for ds, _method, k in runs_needed(POOLS):
        assert k < POOLS[ds]
    assert ("gsm8k", "essence", 500) not in runs_needed(POOLS)  # 500 >= gsm8k's 486 items
    assert not [r for r in runs_needed(POOLS) if r[1] in ("adaptive", "auto", "aipw")]  # other tables measure those
    with pytest.raises(InputError, match="no Measure"):
        runs_needed(POOLS, claims=(Claim("x", "essence", "X", 5, "rmse", 1.0, "refs: x"),))


def test_interval_is_two_standard_errors_of_the_mean():
    mean, lo, hi, n = interval([1.0, 2.0, 3.0, np.nan])
    assert (mean, n) == (2.0, 3) and hi - mean == pytest.approx(2 / np.sqrt(3)) and lo == pytest.approx(4 - hi)
    assert interval([5.0]) == (5.0, 5.0, 5.0, 1) and interval([])[3] == 0
    g, glo, ghi, _ = interval([0.5, 2.0], log=True)
    assert g == pytest.approx(1.0) and glo * ghi == pytest.approx(1.0)


def test_verdict_rests_on_the_interval_of_our_mean():
    arc = Claim("eb_arc_200", "essence", "ARC", 200, "rmse", 0.802, "refs: t")
    # the example: 1.316 +- 0.262 (sd over three seeds) is not 0.802
    mean, sd = 1.316, 0.262
    half = 2 * sd / np.sqrt(3)
    assert verdict(arc, mean, mean - half, mean + half) == "not reproduced, 1.6 x"
    assert verdict(arc, 0.85, 0.80, 0.90) == "reproduced"                 # inside
    assert verdict(arc, 0.95, 0.87, 1.03) == "reproduced"                 # 0.87 is within 10 % of 0.802
    assert verdict(arc, 0.5, 0.45, 0.55) == "not reproduced, 0.62 x"     # ours far lower: said, with the factor
    tau = Claim("t", "essence", "B", 10, "kendall", 0.9, "refs: t")
    assert verdict(tau, 0.895, 0.895, 0.895) == "reproduced" and verdict(tau, 0.85, 0.84, 0.86).startswith("not")
    low = Claim("eb_ppl_mmlu", "ppl", "MMLU", None, "rmse", 7.0, "refs: t")  # "more than 7"
    assert verdict(low, 8.0, 7.5, 8.5) == "reproduced" and verdict(low, 3.0, 2.5, 3.5) == "not reproduced, 0.43 x"
    assert verdict(low, 7.2, 6.5, 7.9) == "inconclusive"
    below = Claim("audit_random_regression", "random_ridge", "B", None, "ratio", 1.0, "refs: t")  # "below 1"
    assert verdict(below, 0.8, 0.7, 0.9) == "reproduced" and verdict(below, 1.4, 1.3, 1.5) == "not reproduced, 1.4 x"
    assert verdict(arc, np.nan, np.nan, np.nan) == "not reproduced"


def _runs(rows):
    return pd.DataFrame(rows, columns=["dataset", "method", "k", "seed", "rmse", "mae", "kendall", "rank_err_5", "error"])


def test_ledger_table_from_runs():
    runs = _runs([("gsm8k", "essence", 200, s, 0.8 + 0.01 * s, 0.6, 0.97, 0.9, "") for s in range(3)]
                 + [("gsm8k", "essence", 200, 3, 9.9, 9.9, 0.0, 0.0, "boom")])  # a failed run is left out
    abl = pd.DataFrame({"seed": [0, 0, 1, 1], "variant": ["before", "after"] * 2, "rmse": [3.0, 2.7, 3.2, 2.8],
                        "error": [""] * 4})
    led = ledger_table(runs, POOLS, abl).set_index("claim")
    row = led.loc["eb_gsm8k_200"]
    assert row["n"] == 3 and row["ours"] == pytest.approx(0.81) and row["verdict"] == "reproduced"
    assert row["low"] == pytest.approx(0.81 - 2 * 0.01 / np.sqrt(3)) and row["caveat"] == "pre-selected pool"
    assert led.loc["eb_gsm8k_200_kendall", "verdict"] == "reproduced"
    assert led.loc["eb_gsm8k_500", "verdict"].startswith("not testable here: k = 500")
    assert led.loc["se_arc_100", "verdict"] == "not testable here: SparseEval is not implemented here"
    assert led.loc["eb_arc_200", "verdict"] == "not run"
    assert "eb_refinement_gsm8k_before" not in led.index  # one row for the pair: the ratio
    r = led.loc["eb_refinement_gsm8k_after"]
    ratios = [2.7 / 3.0, 2.8 / 3.2]
    assert r["metric"] == "ratio" and r["ours"] == pytest.approx(np.exp(np.mean(np.log(ratios))))
    assert r["published"] == pytest.approx(2.47 / 2.77) and r["verdict"] == "reproduced"
    # without the tables that measure them, the adaptive and audit claims are not measured here
    assert led.loc["fluid_mmlu_vs_random", "verdict"] == "not measured here"
    assert led.loc["audit_top_aipw", "verdict"] == "not measured here"


def test_audit_claims_read_the_frontier_table(tmp_path):
    rows = []
    for b, (r_auto, t_auto) in {"a": (2.0, 4.0), "b": (3.0, 6.6), "c": (1.0, 1.8)}.items():
        rows += [(b, "random", "auto", 5, r_auto), (b, "top", "auto", 5, t_auto),
                 (b, "random", "random_ridge", 5, 1.5 * r_auto), (b, "top", "random_ridge", 5, 3 * t_auto),
                 (b, "random", "aipw", 5, 2.0), (b, "top", "aipw", 5, 2.0),
                 (b, "random", "random_mean", 5, 4.0), (b, "top", "random_mean", 5, 4.2)]
    pd.DataFrame(rows, columns=["benchmark", "split", "method", "seeds", "rmse"]).to_csv(tmp_path / "frontier.csv",
                                                                                         index=False)
    tables = read_results(tmp_path)
    assert tables["adaptive_runs"] is None
    led = ledger_table(_runs([]), POOLS, **tables).set_index("claim")
    r = led.loc["audit_random_regression"]  # random + ridge / auto on random splits: 1.5 on every benchmark
    assert r["ours"] == pytest.approx(1.5) and r["n"] == 3 and r["verdict"] == "not reproduced, 1.5 x"
    assert r["caveat"] == ""  # whole benchmarks
    top = led.loc["audit_top_default"]  # auto's top / random: 2.0, 2.2, 1.8
    assert top["ours"] == pytest.approx(np.exp(np.mean(np.log([2.0, 2.2, 1.8])))) and top["verdict"] == "reproduced"
    assert led.loc["audit_top_aipw", "verdict"] == "reproduced"  # exactly 1
    assert led.loc["audit_top_random", "ours"] == pytest.approx(1.05)
