"""The exported estimator (essence/reconstructors/forward.py, numpy only) predicts what essence predicts, for every
reconstructor kind an artifact can hold, with missing cells; and it imports nothing from essence."""

from __future__ import annotations

import json

import ast
from pathlib import Path

import numpy as np
import pytest

from essence.data import load
from essence.reconstructors.intervals import IntervalModel
from essence.reconstructors import forward as standalone
from essence.reconstructors import KINDS as RECONSTRUCTOR_KINDS
from essence.reconstructors.simple import GAMReconstructor, LineReconstructor, MeanRidgeReconstructor, RidgeGAMReconstructor, RidgeReconstructor, WeightedMeanReconstructor
from essence.reconstructors.base import fit_reconstructor
from essence.reconstructors.audit import AIPWReconstructor
from essence.reconstructors.mlp import MLPReconstructor
from essence.reconstructors.kernel import KernelReconstructor
from essence.reconstructors.boost import BoostReconstructor


@pytest.fixture(scope="module")
def slice_():
    r = load("truthfulqa")
    R = r.responses[::10].copy()
    R[np.random.default_rng(0).random(R.shape) < 0.05] = np.nan
    return R[:, :12], r.target[::10], R


def _recs(k):
    from essence.reconstructors.signature import SignatureKNNReconstructor
    from essence.reconstructors.irt import IRTGAMReconstructor
    from essence.reconstructors.simple import WeightedLineReconstructor
    from essence.reconstructors.irt import GPIRTReconstructor
    from essence.reconstructors.combine import AverageReconstructor
    from essence.reconstructors.frontier import FrontierReconstructor

    rng = np.random.default_rng(1)
    a, b = rng.uniform(0.3, 2.0, k), rng.normal(0, 1, k)
    pool = 40
    pa, pb = rng.uniform(0.3, 2.0, pool), rng.normal(0, 1, pool)
    pf = [None] * pool
    pf[5] = 0.25
    anchors = rng.choice(pool, k, replace=False)
    return [
        GAMReconstructor(), GAMReconstructor(weights=rng.uniform(0.5, 2, k)), RidgeReconstructor(),
        RidgeGAMReconstructor(), WeightedMeanReconstructor(), SignatureKNNReconstructor(n_components=4),
        IRTGAMReconstructor(a, b), IRTGAMReconstructor(a, b, use_score=False),
        GPIRTReconstructor(pa, pb, pf, anchors, np.ones(k), 0.4),
        GPIRTReconstructor(pa, pb, pf, anchors, np.ones(k), 0.4, calibrate=True),
        LineReconstructor(), MeanRidgeReconstructor(), WeightedLineReconstructor(weights=rng.uniform(0.5, 2, k)),
        AIPWReconstructor(list(range(k))), MLPReconstructor(hidden=5),
        AverageReconstructor([{"kind": "aipw", "params": {"items": list(range(k))}},
                              {"kind": "mlp", "params": {"hidden": 3}}, {"kind": "ridge", "params": {}}]),
        AverageReconstructor([{"kind": "mlp", "params": {"hidden": 3}}, {"kind": "ridge", "params": {}}], [0.75, 0.25]),
        KernelReconstructor(own=[0, 3, 5]), KernelReconstructor(),
        FrontierReconstructor(items=list(range(k)), dims=(1, 2), max_models=200, folds=3),
        BoostReconstructor(trees=40, min_leaf=5), BoostReconstructor(blocks=[[0, 1, 2], [3, 4, 5, 6]], trees=30),
    ]


def test_every_kind_predicts_through_the_exported_forward_pass(slice_):
    """A kind's predict is the forward pass of the file an export copies, on the JSON an artifact holds; every
    registered kind has one."""
    X, y, R = slice_
    kinds = set()
    for rec in _recs(X.shape[1]):
        fit_reconstructor(rec, X, y, R)
        d = json.loads(json.dumps(rec.to_dict(), allow_nan=False))  # what an artifact holds
        np.testing.assert_array_equal(standalone.predict(d, X), rec.predict(X), err_msg=rec.kind)
        kinds.add(rec.kind)
    assert kinds == set(standalone.KINDS) == set(RECONSTRUCTOR_KINDS)  # a new kind must be exported too


def test_interval_and_estimate(slice_):
    X, y, _ = slice_
    rec = RidgeReconstructor().fit(X, y)
    im = IntervalModel().fit(rec.predict(X), y, rec.predict(X[:50]), y[:50])
    est = rec.predict(X)
    lo, hi = im.interval(est)
    glo, ghi = standalone.interval(im.to_dict(), est)
    np.testing.assert_allclose(glo, lo, atol=1e-9)
    np.testing.assert_allclose(ghi, hi, atol=1e-9)
    items = [f"i{j}" for j in range(X.shape[1])]
    spec = {"items": items, "reconstructor": rec.to_dict(), "interval": im.to_dict()}
    row = {i: v for i, v in zip(items, X[3]) if not np.isnan(v)}
    e, a, b = standalone.estimate(spec, row)
    assert (e, a, b) == pytest.approx((est[3], lo[3], hi[3]), abs=1e-9)
    assert np.isnan(standalone.estimate(spec, {})[0])
    with pytest.raises(ValueError, match="kind 'nope'"):
        standalone.predict({"kind": "nope"}, X)


def test_standalone_imports_only_stdlib_and_numpy():
    tree = ast.parse(Path(standalone.__file__).read_text())
    mods = {n.module.split(".")[0] if isinstance(n, ast.ImportFrom) else a.name.split(".")[0]
            for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
            for a in (n.names if isinstance(n, ast.Import) else [n])}
    assert mods <= {"math", "numpy"}, mods
