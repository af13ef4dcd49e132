"""``evaluate`` on another benchmark's results under this benchmark's item ids.

``Compressed.evaluate`` warns when the data's item means do not follow the reference models'
(``essence.artifact.base.check_same_benchmark``). On the chosen items alone, with fewer than
``MIN_ITEMS_TO_CHECK`` (30) items it would say nothing: at k = 5 another benchmark would pass silently, and the
figures it prints would be an error of the wrong benchmark. ``evaluate``'s data carry every item, and the artifact
keeps every item's reference mean (``dataset["reference_item_means"]``), so the check reads them all.

Data: real Open LLM Leaderboard v2 tables with the same 429 models: the artifact is of IFEval (541 items); the other
benchmark is MuSR's first 541 items relabelled with IFEval's item ids.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import essence
from essence.artifact.base import MIN_ITEMS_TO_CHECK, check_same_benchmark
from essence.data import from_arrays, load, split_models
from essence.data.errors import EssenceWarning

ANOTHER = "another benchmark"


@pytest.fixture(scope="module")
def ifeval():
    return load("ifeval")


@pytest.fixture(scope="module")
def musr_as_ifeval(ifeval):
    musr = load("musr")
    assert (musr.models == ifeval.models).all() and musr.n_items > ifeval.n_items
    return from_arrays(musr.responses[:, :ifeval.n_items], musr.models, ifeval.items, name="musr-as-ifeval")


def _warnings(art, data) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        art.evaluate(data)
    return [str(w.message) for w in caught if issubclass(w.category, EssenceWarning)]


@pytest.fixture(scope="module")
def k5(ifeval):
    return essence.compress(ifeval, k=5, method="random", seed=0, progress=False)


@pytest.fixture(scope="module")
def k30(ifeval):
    return essence.compress(ifeval, k=MIN_ITEMS_TO_CHECK, method="random", seed=0, progress=False)


def test_the_benchmarks_own_models_never_warn(k5, k30, ifeval):
    for art in (k5, k30):
        assert not any(ANOTHER in w for w in _warnings(art, ifeval)), art.k


def test_with_30_chosen_items_the_other_benchmark_is_told_apart(k30, musr_as_ifeval):
    said = _warnings(k30, musr_as_ifeval)
    assert any(ANOTHER in w and "same item ids" in w for w in said), said


def test_every_items_reference_mean_tells_them_apart_at_any_k(ifeval, musr_as_ifeval):
    """What the fix would compare: the data's means on every item against the reference (non-test) models' means of
    every item; the other benchmark is flagged, the benchmark's own held-out models are not."""
    sp = split_models(ifeval, test=0.1, val=0.1, seed=0)
    ref = np.nanmean(ifeval.responses[np.r_[sp.train, sp.val]], axis=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r_own = check_same_benchmark(ifeval.responses[sp.test], ref, "ifeval")
        r_other = check_same_benchmark(musr_as_ifeval.responses, ref, "musr-as-ifeval")
    said = [str(w.message) for w in caught if issubclass(w.category, EssenceWarning)]
    assert r_own > 0.9 and r_other < 0.05, (r_own, r_other)
    assert len(said) == 1 and said[0].startswith("musr-as-ifeval") and ANOTHER in said[0]


def test_with_5_chosen_items_the_other_benchmark_is_still_told_apart(k5, musr_as_ifeval):
    said = _warnings(k5, musr_as_ifeval)
    assert any(ANOTHER in w for w in said), said
