"""The contract every registered method keeps (see essence.methods.base), and ``adaptive`` beside them.

For each method: k distinct valid items; the same seed gives the same items; test models never reach
the selector (poisoning their rows changes nothing chosen); the artifact estimates new models through
`essence estimate` in a fresh process. ``adaptive`` (essence.artifact.adaptive: an item bank, not a Selector) keeps
the same contract: its items are the bank, and the bank, its calibration and everything fitted on the references
stay the same when the test models' rows are poisoned.

Every test is parametrised by method name and a method's runs are made on first use, so the contract can be aimed
at one method: ``pytest tests/test_methods_contract.py -k auto`` runs auto's runs only (``-k "[random]"``: random
alone, not random_mean and the other baselines).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from essence.artifact.adaptive import AdaptiveCompressed, compress_adaptive
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


#: every method of the contract: the registered ones and ``adaptive``
CONTRACT = [*METHODS, "adaptive"]


class _Runs(dict):
    """method -> (artifact, same-seed artifact, artifact on poisoned test rows), made when a test first asks."""

    def __init__(self, data, split):
        super().__init__()
        self.data, self.split = data, split

    def _make(self, data, method):
        if method == "adaptive":
            return compress_adaptive(data, K, seed=0, split=self.split, progress=False)
        return compress(data, K, method=method, seed=0, split=self.split, progress=False, **FAST.get(method, {}))

    def __missing__(self, method):
        self[method] = (self._make(self.data, method), self._make(self.data, method),
                        self._make(_poisoned(self.data, self.split.test), method))
        return self[method]


@pytest.fixture(scope="module")
def runs(slice_, split):
    """For each method asked for: (artifact, same-seed artifact, artifact on poisoned test rows)."""
    return _Runs(slice_, split)


def _fitted(art) -> dict:
    """Everything an artifact fitted on the training and validation models: the reconstructor, or the adaptive
    bank, its calibration (interval and reference range) and the references' item means."""
    if isinstance(art, AdaptiveCompressed):
        return {"bank": art.bank.to_dict(), "calibration": art.calibration, "params": art.params,
                "item_means": art.dataset["item_means"]}
    return art.reconstructor.to_dict()


@pytest.mark.slow
@pytest.mark.parametrize("method", CONTRACT)
def test_k_distinct_valid_items(runs, slice_, method):
    a = runs[method][0]
    n = slice_.n_items if method == "adaptive" else K  # adaptive: the bank, every item; at most k given a model
    assert len(a.items) == n and len(set(a.items)) == n
    assert set(a.items) <= set(slice_.items.tolist())
    assert a.method == method and a.k == K


@pytest.mark.slow
@pytest.mark.parametrize("method", CONTRACT)
def test_same_seed_same_items(runs, method):
    a, b, _ = runs[method]
    assert a.items == b.items
    assert a.figures["validation"] == b.figures["validation"]
    assert _fitted(a) == _fitted(b)


@pytest.mark.slow
@pytest.mark.parametrize("method", CONTRACT)
def test_test_models_never_reach_the_selector(runs, method):
    a, _, poisoned = runs[method]
    assert poisoned.items == a.items
    # everything fitted and chosen is identical; only the test figures see the poison
    assert poisoned.figures["validation"] == a.figures["validation"]
    assert _fitted(poisoned) == _fitted(a)
    assert poisoned.figures["test"]["rmse"] != a.figures["test"]["rmse"]


@pytest.mark.slow
@pytest.mark.parametrize("method", CONTRACT)
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
