"""essence.search.augment: synthetic models from a factor model of the references, for the item search of auto."""

from __future__ import annotations

import numpy as np
import pytest

from essence.data.errors import InputError
from essence.methods import make_method
from essence.reconstructors.frontier import _filled, fit_factor
from essence.search.augment import augmented, synthetic_models
from essence.search.swap import swap_search


@pytest.fixture(scope="module")
def refs(gsm8k):
    """40 real gsm8k models (spread over the score range) x 150 items, answers filled."""
    order = np.argsort(gsm8k.target, kind="stable")
    d = gsm8k.subset(models=np.sort(order[np.linspace(0, gsm8k.n_models - 1, 40).astype(int)]), items=np.arange(150))
    return _filled(d.responses), d.target


def test_synthetic_models_are_expected_answers_read_through_the_pool_line(refs):
    R, y = refs
    S, t = synthetic_models(R, y, 300, d=2, seed=4)
    assert S.shape == (300, R.shape[1]) and t.shape == (300,)
    assert np.all((S > 0) & (S < 1)) and not np.all(np.isin(S, (0.0, 1.0)))  # expected values, not coin flips
    b, a = np.polyfit(100 * R.mean(axis=1), y, 1)  # the references' line from the pool mean to the target
    np.testing.assert_allclose(t, a + b * 100 * S.mean(axis=1), atol=1e-6)
    # abilities N(0, I) on the references' standardised scale: the synthetic pool means spread like theirs
    assert 0.5 < np.std(S.mean(axis=1)) / np.std(R.mean(axis=1)) < 2.0
    S2, t2 = synthetic_models(R, y, 300, d=2, seed=4)
    np.testing.assert_array_equal(S, S2)
    assert not np.array_equal(S, synthetic_models(R, y, 300, d=2, seed=5)[0])


def test_augmented_stacks_below_the_references_and_zero_keeps_them(refs):
    R, y = refs
    R0, y0 = augmented(R, y, 0)
    np.testing.assert_array_equal(R0, R) and np.testing.assert_array_equal(y0, y)
    Ra, ya = augmented(R, y, 100, d=1, seed=2)
    assert Ra.shape == (140, R.shape[1]) and ya.shape == (140,)
    np.testing.assert_array_equal(Ra[:40], R) and np.testing.assert_array_equal(ya[:40], y)
    fitted = fit_factor(R, 1, seed=2)  # a caller's factor model of the same rank and seed: the same rows
    np.testing.assert_array_equal(augmented(R, y, 100, d=1, seed=2, factor=fitted)[0], Ra)


def test_auto_searches_over_the_augmented_rows(gsm8k):
    """auto's items are the swap search's over the references plus ``augment`` synthetic models (off with 0), and
    the same seed gives the same items."""
    order = np.argsort(gsm8k.target, kind="stable")
    d = gsm8k.subset(models=np.sort(order[np.linspace(0, gsm8k.n_models - 1, 40).astype(int)]), items=np.arange(150))
    tr, va = d.subset(models=np.arange(32)), d.subset(models=np.arange(32, 40))
    kw = dict(k=10, seed=3, progress=False, checkpoints=(300,), regressions=("line",), folds=3, frontier=False)
    Rf = _filled(np.vstack([tr.responses, va.responses]))
    yf = np.r_[tr.target, va.target]
    plain = make_method("auto", augment=0, **kw).fit(tr, va)
    np.testing.assert_array_equal(plain.items_, np.sort(swap_search(Rf, yf, 10, 3, [300])[300]))
    aug = make_method("auto", augment=500, **kw).fit(tr, va)
    Ra, ya = augmented(Rf, yf, 500, d=2, seed=3)
    np.testing.assert_array_equal(aug.items_, np.sort(swap_search(Ra, ya, 10, 3, [300])[300]))
    assert not np.array_equal(aug.items_, plain.items_)
    np.testing.assert_array_equal(make_method("auto", augment=500, **kw).fit(tr, va).items_, aug.items_)
    with pytest.raises(InputError, match="augment"):
        make_method("auto", augment=-5, **kw)
