"""The kernel ridge reconstructor: exact leave-one-out, the own-items weight, JSON, bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest

from essence.data.errors import InputError
from essence.reconstructors.kernel import KernelReconstructor, loo_kernel_ridge
from essence.reconstructors.simple import RidgeReconstructor
from essence.reconstructors.base import reconstructor_from_dict


@pytest.fixture(autouse=True)
def _one_thread():
    """BLAS held to one thread, as compress() holds it (essence.data._runtime): on a busy 2-core machine the
    300 x 300 kernel solves wait on their own threads (measured 0.2 s against 4.3 s)."""
    from essence.data._runtime import single_thread

    with single_thread():
        yield


def _binary(n, k, seed):
    return (np.random.default_rng(seed).random((n, k)) < 0.5).astype(float)


def test_closed_form_leave_one_out_equals_refitting_without_each_model():
    rng = np.random.default_rng(1)
    X = rng.random((40, 6))
    K = np.exp(-0.7 * ((X[:, None] - X[None]) ** 2).sum(-1))
    z = rng.normal(size=40)
    for a, got in zip((0.05, 1.0), loo_kernel_ridge(K, z, [0.05, 1.0])):
        errs = []
        for i in range(40):
            keep = np.arange(40) != i
            beta = np.linalg.solve(K[np.ix_(keep, keep)] + a * np.eye(39), z[keep])
            errs.append(z[i] - K[i, keep] @ beta)
        assert got == pytest.approx(np.mean(np.square(errs)), rel=1e-8)


def test_learns_an_interaction_a_linear_reconstructor_cannot():
    # full score depends on whether two items agree: no line through the answers fits it
    X, Xt = _binary(300, 8, 0), _binary(200, 8, 1)
    f = lambda A: 40 + 30 * (A[:, 0] == A[:, 1]) + 5 * A[:, 2:].mean(1)  # noqa: E731
    noise = np.random.default_rng(2).normal(0, 1, 300)
    ker = KernelReconstructor().fit(X, f(X) + noise)
    lin = RidgeReconstructor().fit(X, f(X) + noise)
    rmse = lambda r: float(np.sqrt(np.mean((r.predict(Xt) - f(Xt)) ** 2)))  # noqa: E731
    assert rmse(ker) < 0.5 * rmse(lin)


def test_own_weight_is_chosen_when_the_own_items_carry_the_score():
    X = _binary(200, 60, 3)  # 4 items carry the score, 56 are noise
    y = 100 * X[:, :4].mean(1) + np.random.default_rng(4).normal(0, 1, 200)
    signal = KernelReconstructor(own=[0, 1, 2, 3]).fit(X, y)
    noise = KernelReconstructor(own=[56, 57, 58, 59]).fit(X, y)
    plain = KernelReconstructor().fit(X, y)
    assert signal.w_ > 0 and noise.w_ == 0 and plain.w_ == 0
    assert signal.loo_rmse_ < 0.6 * plain.loo_rmse_


def test_round_trip_binary_and_fractional_answers_with_missing_cells():
    X = _binary(60, 7, 5)
    y = 100 * X.mean(1)
    rec = KernelReconstructor(own=[1, 2]).fit(X, y)
    d = json.loads(json.dumps(rec.to_dict()))
    assert d["train"]["binary"] and isinstance(d["train"]["rows"][0], str) and len(d["train"]["rows"][0]) == 7
    Xt = _binary(9, 7, 6)
    Xt[0, 3] = np.nan
    np.testing.assert_allclose(reconstructor_from_dict(d).predict(Xt), rec.predict(Xt), atol=1e-12)
    Xf = X * 0.9
    Xf[2, 1] = np.nan  # filled with the item's training mean, stored
    rec = KernelReconstructor().fit(Xf, y)
    d = json.loads(json.dumps(rec.to_dict()))
    assert not d["train"].get("binary")
    np.testing.assert_allclose(reconstructor_from_dict(d).predict(Xt), rec.predict(Xt), atol=1e-9)


def test_bad_input_names_the_problem():
    X = _binary(20, 5, 7)
    y = X.sum(1)
    with pytest.raises(InputError, match="own position 9 is beyond the 5 chosen items"):
        KernelReconstructor(own=[9]).fit(X, y)
    with pytest.raises(InputError, match="at least 3 training models"):
        KernelReconstructor().fit(X[:2], y[:2])
    with pytest.raises(InputError, match="alphas: must be a finite number > 0"):
        KernelReconstructor(alphas=(0.0,)).fit(X, y)
    d = KernelReconstructor().fit(X, y).to_dict()
    d["train"]["rows"][0] = "01x10"
    with pytest.raises(InputError, match="string of 5 characters among '01'"):
        reconstructor_from_dict(d)


def test_answers_on_the_twentieths_grid_are_stored_one_character_each():
    X = np.round(np.random.default_rng(8).random((50, 6)) * 20) / 20  # e.g. imputed answers
    X[:10] = _binary(10, 6, 9)
    y = 100 * X.mean(1)
    rec = KernelReconstructor(own=[0]).fit(X, y)
    d = json.loads(json.dumps(rec.to_dict()))
    rows = d["train"]["rows"]
    assert d["train"]["levels"] == 20 and not d["train"].get("binary") and all(len(r) == 6 for r in rows)
    assert set("".join(rows)) <= set("abcdefghijklmnopqrstu") and rows[0] != rows[20]
    Xt = np.random.default_rng(10).random((7, 6))
    np.testing.assert_allclose(reconstructor_from_dict(d).predict(Xt), rec.predict(Xt), atol=1e-9)
    from essence.reconstructors import forward as standalone

    np.testing.assert_allclose(standalone.predict(d, Xt), rec.predict(Xt), atol=1e-9)
    bad = dict(d, train={"levels": 20, "rows": [r.replace("a", "z") for r in rows]})
    with pytest.raises(InputError, match="6 characters among 'abcdefghijklmnopqrstu'"):
        reconstructor_from_dict(bad)
    with pytest.raises(InputError, match="6 characters among"):
        reconstructor_from_dict(dict(d, train={"levels": 10, "rows": rows}))


def test_a_single_setting_skips_the_leave_one_out_pass():
    X = _binary(80, 10, 11)
    y = 100 * X[:, :3].mean(1) + np.random.default_rng(12).normal(0, 2, 80)
    full = KernelReconstructor(own=[0, 1, 2]).fit(X, y)
    fixed = KernelReconstructor(own=[0, 1, 2], own_weights=[full.w_], scales=[full.scale_], alphas=[full.alpha_])
    again = fixed.fit(X, y)
    assert again.loo_rmse_ is None and full.loo_rmse_ > 0
    Xt = _binary(20, 10, 13)
    np.testing.assert_allclose(again.predict(Xt), full.predict(Xt), atol=1e-9)
    d = json.loads(json.dumps(again.to_dict()))
    assert d["loo_rmse"] is None and reconstructor_from_dict(d).loo_rmse_ is None