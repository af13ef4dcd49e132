"""The stronger reconstructors and the kinds that read the whole pool: JSON round trip with equal predictions,
AIPW against the audit's per-model ridge, the CV choice that offers the MLP only with enough models, averages
and parts on some columns."""

from __future__ import annotations

import json

import numpy as np
import pytest

from essence.data.errors import InputError
from essence.reconstructors import forward as standalone
from essence.methods import make_method
from essence.data import split_models
from essence.reconstructors.audit import AIPWReconstructor
from essence.reconstructors.mlp import MIN_MODELS_MLP, MLPReconstructor
from essence.reconstructors.choose import pool_candidates
from essence.reconstructors.base import fit_reconstructor
from essence.reconstructors.base import reconstructor_from_dict


@pytest.fixture(scope="module")
def parts(small):
    """Training and held-out rows of the real ``small`` slice (gsm8k), 12 chosen items, a few cells missing."""
    sp = split_models(small, seed=0)
    R = small.responses.copy()
    R[np.random.default_rng(0).random(R.shape) < 0.03] = np.nan
    items = np.arange(3, 80, 7)[:12]
    tr, te = np.r_[sp.train, sp.val], sp.test
    return R[tr], small.target[tr], R[te], small.target[te], items


@pytest.mark.parametrize("make", [lambda items: AIPWReconstructor(items.tolist()),
                                  lambda items: MLPReconstructor(hidden=6)], ids=["aipw", "mlp"])
def test_round_trip_gives_equal_predictions(parts, make):
    R_tr, y_tr, R_te, y_te, items = parts
    rec = fit_reconstructor(make(items), R_tr[:, items], y_tr, R_tr)
    pred = rec.predict(R_te[:, items])
    assert pred.shape == y_te.shape and np.isfinite(pred).all()
    assert np.sqrt(np.mean((pred - y_te) ** 2)) < np.std(y_te)  # it learnt something on held-out models
    text = json.dumps(rec.to_dict(), allow_nan=False)  # plain JSON numbers
    back = reconstructor_from_dict(json.loads(text))
    assert type(back) is type(rec)
    np.testing.assert_array_equal(back.predict(R_te[:, items]), pred)  # bit for bit: stored numbers predict
    np.testing.assert_allclose(standalone.predict(back.to_dict(), R_te[:, items]), pred, rtol=0, atol=1e-9)


def test_aipw_needs_the_pool_and_checks_it(parts):
    R_tr, y_tr, _, _, items = parts
    with pytest.raises(InputError, match="aipw: fit needs R"):
        AIPWReconstructor(items.tolist()).fit(R_tr[:, items], y_tr)
    with pytest.raises(InputError, match="needs the training models' answers"):
        fit_reconstructor(AIPWReconstructor(items.tolist()), R_tr[:, items], y_tr)
    with pytest.raises(InputError, match="must index"):
        AIPWReconstructor(items.tolist()).fit(R_tr[:, items], y_tr, R=R_tr[:10])
    with pytest.raises(InputError, match="alpha"):
        AIPWReconstructor(items.tolist(), alpha=0.0).fit(R_tr[:, items], y_tr, R=R_tr)
    with pytest.raises(InputError, match="hidden"):
        MLPReconstructor(hidden=0).fit(R_tr[:, items], y_tr)


def test_candidates_only_with_enough_models():
    items = np.arange(5)
    assert pool_candidates(items, MIN_MODELS_MLP - 1) == {}
    assert set(pool_candidates(items, MIN_MODELS_MLP)) == {"mlp"}


def test_cv_offers_them_only_with_enough_models(small, alpaca):
    sel = make_method("random", k=10, seed=0, progress=False)
    sp = split_models(alpaca, seed=0)
    sel.fit(alpaca.subset(models=sp.train), alpaca.subset(models=sp.val))
    assert "mlp" not in sel.reconstructor_scores_  # 49 non-test systems: too few
    sp = split_models(small, seed=0)
    sel.fit(small.subset(models=sp.train), small.subset(models=sp.val))
    scores = sel.reconstructor_scores_
    assert isinstance(scores["mlp"], float), scores
    assert sel.reconstructor_choice_ == min((v, k) for k, v in scores.items() if isinstance(v, float))[1]


# -- the average of several kinds ---------------------------------------------------------------
def test_average_predicts_the_mean_of_its_parts_and_round_trips(parts):
    from essence.reconstructors.combine import AverageReconstructor
    from essence.reconstructors.simple import RidgeReconstructor

    R_tr, y_tr, R_te, _, items = parts
    specs = [{"kind": "ridge", "params": {}}, {"kind": "aipw", "params": {"items": items.tolist()}}]
    avg = AverageReconstructor(specs)
    assert avg.needs_pool  # one part models the pool, so the average is fitted with R
    rec = fit_reconstructor(avg, R_tr[:, items], y_tr, R_tr)
    X = R_te[:, items]
    ridge = RidgeReconstructor().fit(R_tr[:, items], y_tr).predict(X)
    aipw = AIPWReconstructor(items.tolist()).fit(R_tr[:, items], y_tr, R=R_tr).predict(X)
    np.testing.assert_allclose(rec.predict(X), (ridge + aipw) / 2, rtol=0, atol=1e-9)
    back = reconstructor_from_dict(json.loads(json.dumps(rec.to_dict(), allow_nan=False)))
    np.testing.assert_allclose(back.predict(X), rec.predict(X), rtol=0, atol=1e-9)
    assert not AverageReconstructor([{"kind": "ridge", "params": {}}]).needs_pool


@pytest.mark.parametrize("parts_", [[], "ridge", [{"kind": "average", "params": {}}], [{"params": {}}]])
def test_average_refuses_bad_parts(parts, parts_):
    from essence.reconstructors.combine import AverageReconstructor

    R_tr, y_tr, _, _, items = parts
    with pytest.raises(InputError, match="average"):
        AverageReconstructor(parts_).fit(R_tr[:, items], y_tr)


def test_choose_average_by_cv_scores_averages_on_shared_folds(parts):
    from essence.reconstructors.combine import AverageReconstructor
    from essence.reconstructors.choose import choose_average_by_cv, oof_predictions
    from essence.reconstructors.simple import RidgeReconstructor
    from essence.reconstructors.choose import cv_rmse

    R_tr, y_tr, _, _, items = parts
    X, y_tr = np.nan_to_num(R_tr[:200, items], nan=0.5), y_tr[:200]
    cands = {"ridge": RidgeReconstructor, "mlp": lambda: MLPReconstructor(hidden=4, alpha=3.0, max_iter=60),
             "broken": lambda: RidgeReconstructor(alphas=[-1.0])}
    secs = {}
    label, rec, scores, oof = choose_average_by_cv(cands, X, y_tr, seed=1, max_parts=2, seconds=secs)
    assert scores["broken"].startswith("failed")
    assert set(secs) == {"ridge", "mlp", "refit"} and all(v >= 0 for v in secs.values())
    # the singles' scores are the plain CV RMSEs on the same folds
    assert scores["ridge"] == pytest.approx(cv_rmse(RidgeReconstructor, X, y_tr, seed=1)[0])
    pair = (oof_predictions(cands["ridge"], X, y_tr, seed=1) + oof_predictions(cands["mlp"], X, y_tr, seed=1)) / 2
    pair_rmse = float(np.sqrt(np.mean((pair - y_tr) ** 2)))
    assert scores[label] == pytest.approx(min(scores["ridge"], scores["mlp"], pair_rmse))
    assert isinstance(rec, AverageReconstructor) == (label == "ridge+mlp")
    np.testing.assert_allclose(np.sqrt(np.mean((oof - y_tr) ** 2)), scores[label])
    one = choose_average_by_cv(cands, X, y_tr, seed=1, max_parts=1)
    assert "+" not in one[0] and one[0] == min(("ridge", "mlp"), key=lambda k: scores[k])
    with pytest.raises(InputError, match="no reconstructor"):
        choose_average_by_cv({"broken": cands["broken"]}, X, y_tr)


def test_greedy_ensemble_adds_with_replacement_the_part_that_lowers_the_error_most():
    from essence.reconstructors.combine import greedy_ensemble

    y = np.linspace(0.0, 10.0, 50)
    noise = np.sin(np.arange(50.0))
    oof = {"low": y - 1.0, "high": y + 3.0, "noisy": y + noise, "worse": y + 5.0}
    # low and high cancel at weights 3/4 and 1/4; noisy is better alone than either, so it goes first
    w = greedy_ensemble(oof, y, steps=8)
    assert list(w) == [c for c in oof if c in w] and sum(w.values()) == pytest.approx(1.0)
    assert "worse" not in w and all(v * 8 == pytest.approx(round(v * 8)) for v in w.values())
    mix = sum(v * oof[c] for c, v in w.items())
    assert np.sqrt(np.mean((mix - y) ** 2)) < np.sqrt(np.mean(noise ** 2))  # better than the best single
    # step by step it is the argmin over the running sum (ties: the earlier label)
    total, chosen = np.zeros(50), []
    for t in range(8):
        err = {c: np.sqrt(np.mean(((total + p) / (t + 1) - y) ** 2)) for c, p in oof.items()}
        c = min(oof, key=lambda c: (err[c], list(oof).index(c)))
        chosen.append(c)
        total += oof[c]
    assert w == {c: chosen.count(c) / 8 for c in oof if c in chosen}
    assert greedy_ensemble({"a": y + 1.0}, y, steps=3) == {"a": 1.0}


def test_choose_average_by_cv_greedy_weights_the_parts_and_round_trips(parts):
    from essence.reconstructors.combine import AverageReconstructor, greedy_ensemble
    from essence.reconstructors.choose import choose_average_by_cv, oof_predictions
    from essence.reconstructors.simple import RidgeReconstructor

    R_tr, y_tr, R_te, _, items = parts
    X, y_tr, Xt = np.nan_to_num(R_tr[:200, items], nan=0.5), y_tr[:200], np.nan_to_num(R_te[:, items], nan=0.5)
    # two loosely penalised MLPs and a ridge err apart: on these 12 items their weighted mix beats each
    cands = {"ridge": RidgeReconstructor, "mlp": lambda: MLPReconstructor(hidden=4, alpha=0.1, max_iter=60),
             "mlp2": lambda: MLPReconstructor(hidden=8, alpha=0.1, max_iter=60, seed=1)}
    # the greedy ensemble starts from the best single and never does worse on the folds (triangle inequality)
    label, rec, scores, oof = choose_average_by_cv(cands, X, y_tr, seed=1, combine="greedy", steps=10)
    w = greedy_ensemble({c: oof_predictions(m, X, y_tr, seed=1) for c, m in cands.items()}, y_tr, 10)
    assert label == "+".join(w)
    assert len(w) > 1 and len(set(w.values())) > 1  # a weighted mix here, not one part or equal weights
    assert isinstance(rec, AverageReconstructor) and rec.part_weights == pytest.approx(list(w.values()))
    parts_pred = [fit_reconstructor(cands[c](), X, y_tr).predict(Xt) for c in w]
    np.testing.assert_allclose(rec.predict(Xt), np.dot(list(w.values()), parts_pred), rtol=0, atol=1e-9)
    back = reconstructor_from_dict(json.loads(json.dumps(rec.to_dict(), allow_nan=False)))
    assert back.part_weights == pytest.approx(rec.part_weights)
    np.testing.assert_allclose(back.predict(Xt), rec.predict(Xt), rtol=0, atol=1e-9)
    np.testing.assert_allclose(np.sqrt(np.mean((oof - y_tr) ** 2)), scores[label])
    assert scores[label] <= min(v for k_, v in scores.items() if "+" not in k_) + 1e-12
    with pytest.raises(InputError, match="combine: 'best'"):
        choose_average_by_cv(cands, X, y_tr, combine="best")


@pytest.mark.parametrize("weights", [[0.5], [0.7, 0.7], [-0.5, 1.5], [float("nan"), 1.0], "half"])
def test_average_refuses_bad_weights(parts, weights):
    from essence.reconstructors.combine import AverageReconstructor

    R_tr, y_tr, _, _, items = parts
    specs = [{"kind": "ridge", "params": {}}, {"kind": "mean_ridge", "params": {}}]
    with pytest.raises(InputError, match="part_weights must be 2 non-negative numbers"):
        AverageReconstructor(specs, weights).fit(np.nan_to_num(R_tr[:, items]), y_tr)
