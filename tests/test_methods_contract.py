"""The contract every registered method keeps (see essence.methods.base).

For each method: k distinct valid items; the same seed gives the same items; test models never reach
the selector (poisoning their rows changes nothing chosen); the artifact estimates new models through
`essence estimate` in a fresh process.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from essence.artifact.compressed import compress
from essence.data import from_arrays, split_models
from essence.methods import METHODS

#: small settings so that each method runs in seconds on the test slice
FAST = {
    "essence": {"population": 40, "generations": 40, "rounds": 1, "ebm_elites": 2, "ebm_max_models": 150,
                "ebm_max_rounds": 200},
    "irt": {"epochs": 40, "min_models": 50},
    "tinybench": {"epochs": 40, "min_models": 50},
    "auto": {"checkpoints": [0, 200], "folds": 3, "dims": [1]},
}
K = 8


@pytest.fixture(scope="module")
def slice_(small):
    """120 real gsm8k models (every 5th of the `small` slice) x 40 items, with texts."""
    return small.subset(models=np.arange(0, small.n_models, 5), items=np.arange(40))


@pytest.fixture(scope="module")
def split(slice_):
    return split_models(slice_, test=0.2, val=0.2, seed=0)


def _poisoned(data, test_idx):
    """Test models' rows and targets redrawn at random (0/1 answers, targets in [0, 100]): anything that reads them
    changes. (Not a mirror, 1 - x and 100 - y: a plain mean's errors are the same on the mirror image.)"""
    rng = np.random.default_rng(7)
    r = data.responses.copy()
    y = data.target.copy()
    r[test_idx] = (rng.random((len(test_idx), data.n_items)) < 0.5).astype(float)
    y[test_idx] = rng.uniform(0.0, 100.0, len(test_idx))
    return from_arrays(r, data.models, data.items, y, data.texts, name=data.name,
                       item_extras=data.item_extras, model_extras=data.model_extras)


@pytest.fixture(scope="module")
def runs(slice_, split):
    """For every method: (artifact, same-seed artifact, artifact on poisoned test rows)."""
    out = {}
    for m in METHODS:
        p = FAST.get(m, {})
        a = compress(slice_, K, method=m, seed=0, split=split, progress=False, **p)
        b = compress(slice_, K, method=m, seed=0, split=split, progress=False, **p)
        c = compress(_poisoned(slice_, split.test), K, method=m, seed=0, split=split, progress=False, **p)
        out[m] = (a, b, c)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("method", list(METHODS))
def test_k_distinct_valid_items(runs, slice_, method):
    a = runs[method][0]
    assert len(a.items) == K and len(set(a.items)) == K
    assert set(a.items) <= set(slice_.items.tolist())
    assert a.method == method and a.k == K


@pytest.mark.slow
@pytest.mark.parametrize("method", list(METHODS))
def test_same_seed_same_items(runs, method):
    a, b, _ = runs[method]
    assert a.items == b.items
    assert a.figures["validation"] == b.figures["validation"]


@pytest.mark.slow
@pytest.mark.parametrize("method", list(METHODS))
def test_test_models_never_reach_the_selector(runs, method):
    a, _, poisoned = runs[method]
    assert poisoned.items == a.items
    # everything fitted and chosen is identical; only the test figures see the poison
    assert poisoned.figures["validation"] == a.figures["validation"]
    assert poisoned.reconstructor.to_dict() == a.reconstructor.to_dict()
    assert poisoned.figures["test"]["rmse"] != a.figures["test"]["rmse"]


@pytest.mark.slow
@pytest.mark.parametrize("method", list(METHODS))
def test_artifact_estimates_new_models_via_cli(runs, slice_, split, method, tmp_path):
    a = runs[method][0]
    path = a.save(tmp_path / f"{method}.json")
    new = slice_.subset(models=split.test)
    wide = pd.DataFrame(new.responses, columns=new.items)
    wide.insert(0, "model", new.models)
    csv_in = tmp_path / "new.csv"
    wide.to_csv(csv_in, index=False)
    out = tmp_path / "est.csv"
    essence = str(Path(sys.executable).parent / "essence")
    r = subprocess.run([essence, "estimate", str(path), str(csv_in), "--out", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    est = pd.read_csv(out)
    np.testing.assert_allclose(est["estimate"], a.estimate(new)["estimate"], atol=1e-3)
    assert est["model"].tolist() == new.models.tolist()
