"""essence.data.split_models' extrapolation kinds (top, bottom, far, chance): which models are test, which are
references, the gap, the default fractions and the errors; compress, the sweep and the command line take them."""

from __future__ import annotations

import numpy as np
import pytest

import essence.data as D
from essence.data.split import (CHANCE_BAND_PP, FAR_REFERENCES, MIN_CHANCE_REFERENCES, SPLIT_KINDS, default_test,
                                split_models)


def _scores(n=200, seed=0):
    return np.random.default_rng(seed).uniform(20, 80, n)


def _parts(sp):
    return [np.asarray(a) for a in sp]


@pytest.mark.parametrize("kind", SPLIT_KINDS)
def test_every_kind_is_disjoint_sorted_and_deterministic(kind):
    y = _scores()
    sp = split_models(y, seed=3, kind=kind)
    tr, va, te = _parts(sp)
    assert min(tr.size, va.size, te.size) > 0
    assert np.intersect1d(tr, va).size == np.intersect1d(tr, te).size == np.intersect1d(va, te).size == 0
    assert all((np.diff(a) > 0).all() for a in (tr, va, te))
    assert all(np.array_equal(a, b) for a, b in zip(sp, split_models(y, seed=3, kind=kind)))


def test_default_fractions_one_top_fraction_everywhere():
    assert default_test("random") == 0.1
    assert all(default_test(k) == 0.2 for k in ("top", "bottom", "far", "chance"))
    y = _scores(200)
    assert split_models(y, kind="random").test.size == 20
    for kind in ("top", "bottom", "far", "chance"):
        assert split_models(y, kind=kind).test.size == 40
    assert split_models(y, test=0.1, kind="top").test.size == 20  # an explicit fraction wins


def test_top_and_bottom_hold_out_the_strongest_and_weakest():
    y = _scores()
    top = split_models(y, seed=1, kind="top")
    ref = np.r_[top.train, top.val]
    assert y[top.test].min() > y[ref].max() and ref.size + top.test.size == y.size
    bot = split_models(y, seed=1, kind="bottom")
    ref = np.r_[bot.train, bot.val]
    assert y[bot.test].max() < y[ref].min() and ref.size + bot.test.size == y.size
    assert np.array_equal(bot.test, np.sort(np.argsort(y)[:40]))


def test_far_leaves_a_gap_between_the_weakest_references_and_the_strongest_test_models():
    y = _scores()
    sp = split_models(y, seed=2, kind="far")
    ref = np.r_[sp.train, sp.val]
    order = np.argsort(y)
    assert np.array_equal(np.sort(ref), np.sort(order[:int(round(FAR_REFERENCES * y.size))]))
    assert np.array_equal(sp.test, np.sort(order[-40:]))
    gap = np.setdiff1d(np.arange(y.size), np.r_[ref, sp.test])
    assert gap.size == y.size - ref.size - sp.test.size == 40
    assert y[ref].max() < y[gap].min() and y[gap].max() < y[sp.test].min()
    with pytest.raises(ValueError, match="far.*test <= 0.4"):
        split_models(y, test=0.5, val=0.1, kind="far")


def test_chance_keeps_only_references_near_the_floor():
    rng = np.random.default_rng(0)
    y = np.r_[rng.uniform(25, 28, 30), rng.uniform(35, 90, 170)]  # 30 models at chance, the rest above it
    sp = split_models(y, seed=0, kind="chance", chance=25.0)
    ref = np.r_[sp.train, sp.val]
    band = max(CHANCE_BAND_PP, 0.15 * (y.max() - 25.0))
    assert np.array_equal(np.sort(ref), np.flatnonzero(y <= 25.0 + band))
    assert np.array_equal(sp.test, np.sort(np.argsort(y)[-40:]))
    assert sp.val.size == max(round(0.1 * ref.size), 1)
    # without a chance level the floor is the lowest score: the same references here
    assert np.array_equal(np.sort(np.r_[split_models(y, kind="chance").train, split_models(y, kind="chance").val]),
                          np.sort(ref))


def test_chance_errors_name_the_problem():
    y = np.r_[np.linspace(25, 27, MIN_CHANCE_REFERENCES - 2), np.linspace(60, 90, 100)]
    with pytest.raises(ValueError, match=f"only {MIN_CHANCE_REFERENCES - 2} model.*at least {MIN_CHANCE_REFERENCES}"):
        split_models(y, kind="chance")
    flat = np.linspace(30, 33, 100)  # no spread above the floor: the band reaches the test models
    with pytest.raises(ValueError, match="reaches the strongest models"):
        split_models(flat, kind="chance")
    with pytest.raises(ValueError, match="only by split 'chance'"):
        split_models(_scores(), kind="top", chance=25.0)
    with pytest.raises(ValueError, match="not a chance level"):
        split_models(_scores(), kind="chance", chance=150.0)


def test_unknown_kind_lists_every_kind():
    with pytest.raises(ValueError, match="random, top, bottom, far, chance"):
        split_models(_scores(), kind="middle")


def test_compress_and_the_command_line_take_every_kind(small):
    from essence import compress
    from essence.cli import build_parser

    art = compress(small, k=5, method="random", seed=0, split="bottom", progress=False, predictors="basic")
    assert art.split["kind"] == "bottom" and art.split["test"] == 0.2
    sp = split_models(small, seed=0, kind="bottom")
    assert art.split["n_test"] == sp.test.size and art.split["n_train"] == sp.train.size
    assert compress(small, k=5, method="random", seed=0, progress=False, predictors="basic").split["test"] == 0.1
    far = compress(small, k=5, method="random", seed=0, split="far", progress=False, predictors="basic")
    assert far.split["n_train"] + far.split["n_val"] + far.split["n_test"] < small.n_models  # the gap
    c = build_parser()._subparsers._group_actions[0].choices["compress"]
    (act,) = [a for a in c._actions if "--split" in a.option_strings]
    assert tuple(act.choices) == SPLIT_KINDS and "20 %" in act.help


def test_the_sweep_accepts_the_new_kinds(gsm8k, tmp_path):
    from essence.data.errors import UsageError
    from essence.sweep import run_sweep
    from essence.sweep.plan import _load_and_split

    _, splits = _load_and_split(["gsm8k"], [0], ("random", "bottom", "far"))
    assert set(splits) == {("gsm8k", 0), ("gsm8k@bottom", 0), ("gsm8k@far", 0)}
    for (name, seed), ((tr, va, te), _) in splits.items():
        kind = name.rpartition("@")[2] if "@" in name else "random"
        want = split_models(gsm8k, seed=seed, kind=kind)
        assert all(np.array_equal(a, b) for a, b in zip((tr, va, te), want)), kind
    with pytest.raises(UsageError, match="not one of random, top, bottom, far, chance"):
        run_sweep(["gsm8k"], ["random"], [5], [0], out=tmp_path / "sweep", splits=("middle",))
