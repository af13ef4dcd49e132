"""The frontier estimate (essence.reconstructors.frontier) and the default method that uses it (essence.methods.auto),
on real whole benchmarks: a model stronger than every reference model is not read toward their mean, and the
interval covers it."""

from __future__ import annotations

import json

import numpy as np
import pytest

from essence.data import load, split_models
from essence.data.errors import InputError
from essence.features.factor import FactorModel
from essence.reconstructors import forward
from essence.reconstructors.base import fit_reconstructor, reconstructor_from_dict
from essence.reconstructors.frontier import FrontierReconstructor, d_estimates, pool_map


@pytest.fixture(scope="module")
def ifeval_top():
    """IFEval (429 models x 541 items): references = all but the strongest fifth; 50 random items."""
    d = load("ifeval")
    sp = split_models(d, test=0.2, val=0.0, seed=0, kind="top")
    items = np.sort(np.random.default_rng(0).choice(d.n_items, 50, replace=False))
    return d, sp.train, sp.test, items


def _fit(data, ref, items, inner="ridge", **kw):
    spec = {"kind": inner, "params": {"items": items.tolist()} if inner == "aipw" else {}}
    rec = FrontierReconstructor(items=items.tolist(), inner=spec, **kw)
    return fit_reconstructor(rec, data.responses[np.ix_(ref, items)], data.target[ref], data.responses[ref])


def test_the_estimate_of_a_model_that_answered_every_item_is_its_score():
    """With every item answered, D's correction term makes it the pool mean exactly, whatever the factor model."""
    d = load("musr")
    R, every = d.responses[:200], np.arange(d.n_items)
    fm = FactorModel(d=2).fit(R[:150])
    D, s = d_estimates(fm, R[150:], every, (0.0, 1.0, 0.0))
    np.testing.assert_allclose(D, d.target[150:200], atol=1e-9)
    assert (s >= 0).all() and np.allclose(s, 1e-3, atol=1e-3)  # no unseen item left: (1 - k/N) = 0


def test_stronger_models_are_not_read_toward_the_references_and_the_interval_covers_them(ifeval_top):
    d, ref, top, items = ifeval_top
    rec = _fit(d, ref, items, d=2, s_inner=3.0, c_d=1.0)  # calibration fixed: a fast fit
    X = d.responses[np.ix_(top, items)]
    out = rec.predict_interval(X)
    G = rec.inner_.predict(X)
    bias_g, bias = np.mean(G - d.target[top]), np.mean(out["estimate"] - d.target[top])
    assert bias_g < -3.0 and abs(bias) < abs(bias_g) / 2  # ridge reads them low; the frontier estimate much less
    assert out["outside"].mean() > 0.5  # their own answers place most of them outside the references
    covered = (out["lower"] <= d.target[top]) & (d.target[top] <= out["upper"])
    assert covered.mean() >= 0.8
    inside = rec.predict_interval(d.responses[np.ix_(ref[:100], items)])
    assert inside["outside"].mean() < 0.15  # reference-like models: the regression answers


def test_the_prior_moves_the_point_weight_not_the_interval(ifeval_top):
    """``pi_out`` weighs D in the point estimate (more with a larger prior); the interval mixes by p_out alone."""
    d, ref, top, items = ifeval_top
    rec = _fit(d, ref, items, d=2, s_inner=3.0, c_d=1.0)
    X = d.responses[np.ix_(np.r_[top[:20], ref[:20]], items)]
    outs = []
    for pi in (0.1, 0.3, 0.9):
        rec.pi_out = pi
        outs.append(rec.predict_interval(X))
    assert (np.diff([o["weight"] for o in outs], axis=0) >= -1e-12).all()
    for o in outs[1:]:  # bounds widen only to hold an estimate outside the mixture's quantiles
        same = (np.minimum(o["estimate"], outs[0]["estimate"]) > outs[0]["lower"]) & (
            np.maximum(o["estimate"], outs[0]["estimate"]) < outs[0]["upper"])
        assert same.mean() > 0.8
        np.testing.assert_allclose(o["lower"][same], outs[0]["lower"][same], atol=1e-6)
        np.testing.assert_allclose(o["upper"][same], outs[0]["upper"][same], atol=1e-6)


def test_round_trip_and_the_exported_forward_pass_agree(ifeval_top, tmp_path):
    d, ref, top, items = ifeval_top
    rec = _fit(d, ref[:200], items, inner="aipw", d=1, s_inner=2.5, c_d=1.2)
    X = d.responses[np.ix_(top[:20], items)]
    X[0, :10] = np.nan  # a model that skipped some items
    state = json.loads(json.dumps(rec.to_dict(), allow_nan=False))
    back = reconstructor_from_dict(state)
    for key, v in rec.predict_interval(X).items():
        np.testing.assert_array_equal(back.predict_interval(X)[key], v, err_msg=key)
    spec = {"items": [str(i) for i in range(50)], "reconstructor": state, "interval": {}}
    e, lo, hi = forward.estimate(spec, {str(i): X[0, i] for i in range(50)})
    assert lo <= e <= hi and e == pytest.approx(rec.predict(X[:1])[0])


def test_calibration_by_cv_and_the_map_for_a_pool_that_is_not_the_benchmark():
    d = load("truthfulqa")  # a metabench pool: the target is the whole benchmark's score, not the pool mean
    R, y = d.responses[:400], d.target[:400]
    a, b, sd = pool_map(R, y)
    assert (a, b, sd) != (0.0, 1.0, 0.0) and sd > 0
    items = np.arange(0, 100, 2)
    rec = fit_reconstructor(FrontierReconstructor(items=items.tolist(), dims=(1, 2), folds=3),
                            R[:, items], y, R)
    assert rec.d_ in (1, 2) and rec.s_inner_ > 0 and rec.c_d_ >= 1.0
    pred = rec.predict(d.responses[400:600][:, items])
    assert np.sqrt(np.mean((pred - d.target[400:600]) ** 2)) < np.std(d.target[400:600])


def test_the_inside_density_is_what_d_reads_for_the_references(ifeval_top):
    """The posterior's inside density sits on the references' D values: where D reads every reference 5 pp high, a
    model that D reads just above their top is judged inside more (less weight on D); without ``d_quantiles`` (or
    given calibrations without them) it sits on the references' scores."""
    d, ref, top, items = ifeval_top
    rec = _fit(d, ref, items, d=2, s_inner=3.0, c_d=1.0)
    np.testing.assert_allclose(rec.d_quantiles_, rec.y_quantiles_)
    X = d.responses[np.ix_(np.r_[top, ref], items)]
    state = dict(rec.state())
    base = forward.frontier(state, X)
    for key, v in forward.frontier({k: v for k, v in state.items() if k != "d_quantiles"}, X).items():
        np.testing.assert_array_equal(v, base[key], err_msg=key)
    top_score = state["y_quantiles"][-1]
    shifted = forward.frontier({**state, "d_quantiles": (np.asarray(state["y_quantiles"]) + 5.0).tolist()}, X)
    D, _ = forward.frontier_d(state, X)
    near = (D > top_score) & (D < top_score + 5.0)
    assert near.sum() >= 5
    assert (shifted["weight"][near] < base["weight"][near] - 1e-3).all()


def test_calibration_by_cv_keeps_the_references_out_of_fold_d_values():
    d = load("musr")
    R, y = d.responses[:150], d.target[:150]
    items = np.sort(np.random.default_rng(1).choice(d.n_items, 50, replace=False))
    rec = fit_reconstructor(FrontierReconstructor(items=items.tolist(), dims=(1,), folds=3), R[:, items], y, R)
    q = rec.d_quantiles_
    assert q.shape == (101,) and (np.diff(q) >= 0).all()
    assert abs(q[50] - np.median(y)) < 3.0 and not np.allclose(q, rec.y_quantiles_, atol=0.1)
    back = reconstructor_from_dict(json.loads(json.dumps(rec.to_dict())))
    np.testing.assert_allclose(back.d_quantiles_, q, atol=1e-6)


def test_bad_input_names_the_problem(ifeval_top):
    d, ref, _, items = ifeval_top
    X, y, R = d.responses[np.ix_(ref, items)], d.target[ref], d.responses[ref]
    with pytest.raises(InputError, match="frontier: fit needs R"):
        FrontierReconstructor(items=items.tolist()).fit(X, y)
    with pytest.raises(InputError, match="must index"):
        FrontierReconstructor(items=items[:10].tolist()).fit(X, y, R=R)
    with pytest.raises(InputError, match="pi_out"):
        FrontierReconstructor(items=items.tolist(), pi_out=2.0).fit(X, y, R=R)
    for bad in ("high", [3.0, 2.0, 1.0], [1.0, float("nan")]):
        with pytest.raises(InputError, match="d_quantiles"):
            FrontierReconstructor(items=items.tolist(), d=1, s_inner=3.0, c_d=1.0, d_quantiles=bad).fit(X, y, R=R)


def test_factor_ability_finds_a_planted_ability_at_the_map():
    """The forward pass's Newton ability recovers a planted one and is the MAP that scipy's optimiser finds on
    the same log posterior (an independent method)."""
    from scipy.optimize import minimize

    rng = np.random.default_rng(3)
    A, b = rng.normal(0, 1, (2000, 2)), rng.normal(0, 1, 2000)
    theta = np.array([[1.5, -0.5]])
    X = (rng.random((1, 2000)) < 1 / (1 + np.exp(-(theta @ A.T + b)))).astype(float)
    X[0, :100] = np.nan  # not asked
    got = forward._factor_ability(X, A, b, 1e-4)
    np.testing.assert_allclose(got, theta, atol=0.15)
    obs = ~np.isnan(X[0])

    def neg_log_post(t):
        z = A[obs] @ t + b[obs]
        return float(np.sum(np.logaddexp(0.0, z) - X[0, obs] * z) + 0.5 * 1e-4 * t @ t)

    ref = minimize(neg_log_post, np.zeros(2), method="BFGS", options={"gtol": 1e-10}).x
    np.testing.assert_allclose(got[0], ref, atol=1e-5)


@pytest.mark.slow
def test_auto_chooses_by_cross_validation_and_records_it():
    from essence import compress

    d = load("math_hard")
    art = compress(d, 30, seed=1, split="top", test=0.2, progress=False, checkpoints=(0, 300), dims=(1, 2),
                   regressions=("line", "ridge", "aipw"))
    rec = art.selection["auto"]
    assert set(rec["cv_rmse"]) == {"T=0 line", "T=0 ridge", "T=0 aipw", "T=300 line", "T=300 ridge"}
    assert rec["estimate_rmse"] == pytest.approx(min(rec["cv_rmse"].values()), abs=1e-5)
    assert rec["factor_rank"] in (1, 2)
    assert art.reconstructor.kind == "frontier" and len(art.items) == 30
    q = art.reconstructor.d_quantiles_  # the posterior's inside density: the references' out-of-fold D values
    assert q.shape == (101,) and (np.diff(q) >= 0).all() and not np.allclose(q, art.reconstructor.y_quantiles_)
    est = art.estimate(d)
    assert {"outside", "answered_by"} <= set(est.columns) and set(est["answered_by"]) <= {"regression", "frontier"}
    again = compress(d, 30, seed=1, split="top", test=0.2, progress=False, checkpoints=(0, 300), dims=(1, 2),
                     regressions=("line", "ridge", "aipw"))
    assert again.items == art.items  # the same seed gives the same subset
    plain = compress(d, 30, seed=1, split="top", test=0.2, progress=False, checkpoints=(0, 300), dims=(1, 2),
                     regressions=("line", "ridge", "aipw"), frontier=False)
    assert plain.reconstructor.kind != "frontier"
    # on the strongest fifth the frontier estimate is less biased than the regression alone
    top = split_models(d, test=0.2, val=0.1, seed=1, kind="top").test
    for a in (art, plain):
        a.bias_ = float(np.mean(a.estimate(d.subset(models=top))["estimate"] - d.target[top]))
    assert abs(art.bias_) < abs(plain.bias_)


def test_side_above_lets_d_answer_only_above_the_references(ifeval_top):
    """``side="above"`` (the default): a model whose own answers place it below every reference is read by the
    regression (D's weight vanishes) and still flagged outside, one above is read as with both sides, and the
    interval (two-sided ``p_out``) is unchanged."""
    d, ref, top, items = ifeval_top
    rec = _fit(d, ref, items, d=2, s_inner=3.0, c_d=1.0, side="both")
    X = np.vstack([d.responses[np.ix_(top, items)], np.zeros((3, items.size))])
    both = rec.predict_interval(X)
    rec.side = "above"
    rec.__dict__.pop("_state", None)
    above = rec.predict_interval(X)
    assert _fit(d, ref[:100], items, d=1, s_inner=3.0, c_d=1.0).side == "above"
    low = slice(top.size, top.size + 3)  # no item right: far below every reference
    assert both["weight"][low].min() > 0.5 and above["weight"][low].max() < 1e-6
    assert above["outside"][low].all() and both["outside"][low].all()
    np.testing.assert_array_equal(above["outside"], both["outside"])
    np.testing.assert_allclose(above["estimate"][low], np.clip(rec.inner_.predict(X[low]), 0, 100), atol=1e-9)
    up = np.flatnonzero(both["estimate"][: top.size] > d.target[ref].max())
    assert up.size > 0
    np.testing.assert_allclose(above["weight"][up], both["weight"][up], atol=0.05)
    np.testing.assert_allclose(above["lower"][low], np.minimum(both["lower"][low], above["estimate"][low]), atol=1e-6)
    with pytest.raises(InputError, match="side"):
        _fit(d, ref[:100], items, d=1, s_inner=3.0, c_d=1.0, side="below")


def test_an_estimate_beyond_the_references_is_flagged_outside(ifeval_top):
    """The flag agrees with the note of ``estimate --context``: an estimate above the strongest (below the
    weakest) reference's score is flagged outside, whatever the posterior of the answers says."""
    d, ref, top, items = ifeval_top
    rec = _fit(d, ref, items, d=2, s_inner=3.0, c_d=1.0, pi_out=0.01)  # a small prior: the posterior rarely says out
    X = d.responses[np.ix_(np.r_[top, ref[:50]], items)]
    out = rec.predict_interval(X)
    yq = rec.y_quantiles_
    beyond = (out["estimate"] > yq[-1]) | (out["estimate"] < yq[0])
    assert beyond.any() and out["outside"][beyond].all()
