"""benchmarks/suite_combine.py: its cached candidate predictions, combined, are what compress_suite's
reconstructors predict."""

from __future__ import annotations

import numpy as np
import pytest

from script_loader import load_script


@pytest.mark.slow
@pytest.mark.parametrize("combine", ["equal", "greedy"])
def test_combined_candidates_predict_what_fit_members_fits(combine):
    from essence.data import load
    from essence.suite import make_suite
    from essence.suite.artifact import fit_members

    mod = load_script("benchmarks/suite_combine.py")
    suite = make_suite([load(n).subset(items=np.arange(12)) for n in ("arc", "winogrande")])
    fit, evald = suite.subset(np.arange(260)), suite.subset(np.arange(260, 300))
    idx = np.arange(0, 24, 2)
    preds = mod.candidate_predictions(fit, evald, idx, seed=0)
    recs, _, _, choice, _ = fit_members(fit, idx, stronger=True, average=3, own=True, combine=combine)
    Xe = evald.pooled().responses[:, idx]
    for b, name in enumerate(fit.names):
        w, est = mod.combined(preds, fit.targets, b, combine, 20)
        assert "+".join(w) == choice[name]["kind"]
        np.testing.assert_allclose(est, recs[name].predict(Xe), rtol=0, atol=1e-7)
