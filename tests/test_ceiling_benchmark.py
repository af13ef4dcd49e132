"""benchmarks/ceiling.py: the GA scored on training, validation and (oracle) test models."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _module():
    spec = importlib.util.spec_from_file_location("ceiling", ROOT / "benchmarks" / "ceiling.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_each_selection_is_best_on_the_models_it_was_chosen_on(small):
    mod = _module()
    rows = {r["fitness"]: r for r in mod.ceiling_rows(small, 8, seed=0, alpha=1.0, population=40, generations=40)}
    assert list(rows) == ["random", "train", "val", "oracle"]
    # a subset chosen on a model set beats the random subsets' mean on that set
    assert rows["train"]["train"] < rows["random"]["train"]
    assert rows["val"]["val"] < rows["random"]["val"]
    assert rows["oracle"]["test"] < rows["random"]["test"]
    # and the oracle, tuned to the test models, is the best of the three there
    assert rows["oracle"]["test"] <= min(rows["train"]["test"], rows["val"]["test"])


def test_k_not_below_the_items_is_refused(small):
    with pytest.raises(ValueError, match="must be smaller"):
        _module().ceiling_rows(small, small.n_items, seed=0, alpha=1.0)
