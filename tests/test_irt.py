"""essence.features.irt (2PL kernel: probabilities, information, MAP ability, py-irt fit, cache) and the ``irt`` method.

Simulated 2PL data appear only where an estimator is checked against known truth (parameter
recovery); everything else runs on slices of the real data.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from essence.features import irt
from essence.artifact.compressed import Compressed, compress
from essence.features.irt import (ItemParams, binarize, estimate_ability, fisher_information, fit_2pl, fit_2pl_cached,
                         prob)
from essence.reconstructors.irt import IRTGAMReconstructor, fit_gam2_tables
from essence.methods.irt import IRTSelector, select_by_information

FAST = {"epochs": 25, "max_models": 200}  # py-irt settings that keep tests quick


@pytest.fixture(autouse=True)
def _tmp_cache(tmp_path_factory, monkeypatch):
    """Keep IRT fits of the tests out of the project's cache."""
    monkeypatch.setenv("ESSENCE_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))


# ----------------------------------------------------------------------------------------------
# formulas
# ----------------------------------------------------------------------------------------------
def test_prob_is_the_logistic_curve():
    theta = np.array([-1.0, 0.0, 2.0])
    a = np.array([0.5, 2.0])
    b = np.array([0.0, 1.0])
    expected = 1.0 / (1.0 + np.exp(-a[None, :] * (theta[:, None] - b[None, :])))
    np.testing.assert_allclose(prob(theta, a, b), expected, rtol=1e-12)
    assert prob(theta, a, b).shape == (3, 2)


def test_fisher_information_formula():
    rng = np.random.default_rng(0)
    a = rng.lognormal(0, 0.5, 7)
    b = rng.normal(0, 1, 7)
    theta = np.linspace(-3, 3, 13)
    p = 1.0 / (1.0 + np.exp(-a * (theta[:, None] - b)))
    np.testing.assert_allclose(fisher_information(theta, a, b), a**2 * p * (1 - p), rtol=1e-12)
    # peak a^2 / 4 at theta = b
    np.testing.assert_allclose(fisher_information(b[:1], a[:1], b[:1]), [[a[0] ** 2 / 4]], rtol=1e-12)
    # it is minus the second derivative of the log-likelihood (same for x = 0 and x = 1 in the 2PL)
    h = 1e-3
    for x in (0.0, 1.0):
        def ll(t):
            q = prob(t, a, b)
            return x * np.log(q) + (1 - x) * np.log(1 - q)
        d2 = (ll(theta + h) - 2 * ll(theta) + ll(theta - h)) / h**2
        np.testing.assert_allclose(-d2, fisher_information(theta, a, b), rtol=1e-4, atol=1e-6)


def test_binarize_threshold_and_errors():
    R = np.array([[0.2, 0.5, np.nan, 1.0], [0.0, 0.49, 0.51, 1.0]])
    out = binarize(R, 0.5)
    np.testing.assert_array_equal(out, [[0, 1, np.nan, 1], [0, 0, 1, 1]])
    np.testing.assert_array_equal(binarize(np.array([[0.0, 1.0]]), 0.5), [[0.0, 1.0]])  # 0/1 unchanged
    for bad in (0, -0.1, 1.5, "half"):
        with pytest.raises(ValueError, match="threshold"):
            binarize(R, bad)


# ----------------------------------------------------------------------------------------------
# MAP ability
# ----------------------------------------------------------------------------------------------
def _log_post(theta_grid, x, a, b, sd):
    P = prob(theta_grid, a, b)
    obs = ~np.isnan(x)
    ll = (x[obs] * np.log(P[:, obs]) + (1 - x[obs]) * np.log(1 - P[:, obs])).sum(axis=1)
    return ll - theta_grid**2 / (2 * sd**2)


@pytest.mark.parametrize("sd", [1.0, 0.5, 3.0])
def test_map_ability_matches_brute_force_grid(sd):
    rng = np.random.default_rng(1)
    k = 25
    a = rng.lognormal(0.3, 0.5, k)
    b = rng.normal(0, 1.2, k)
    X = (rng.random((12, k)) < 0.5).astype(float)
    X[0] = 1.0  # all correct: finite thanks to the prior
    X[1] = 0.0
    X[2, :10] = np.nan  # missing cells are left out
    est = estimate_ability(X, a, b, prior_sd=sd)
    brute = []
    for x in X:  # coarse grid (step 0.01), then a fine one (step 1e-5) around its best point
        g = np.linspace(-8, 8, 1601)
        t0 = g[np.argmax(_log_post(g, x, a, b, sd))]
        g = np.linspace(t0 - 0.02, t0 + 0.02, 4001)
        brute.append(g[np.argmax(_log_post(g, x, a, b, sd))])
    np.testing.assert_allclose(est, brute, atol=2e-5)
    assert est[0] > est[3] > est[1]


def test_map_ability_edge_cases():
    a, b = np.array([1.0, 2.0]), np.array([0.0, 0.5])
    X = np.array([[np.nan, np.nan], [1.0, 1.0]])
    th = estimate_ability(X, a, b, prior_mean=0.3)
    assert th[0] == pytest.approx(0.3)  # no data: prior mean
    assert np.isfinite(th).all()
    assert estimate_ability(np.array([[1.0, 0.0]]), np.zeros(2), b)[0] == pytest.approx(0.0)  # a = 0: no information
    with pytest.raises(ValueError, match="a, b"):
        estimate_ability(X, a[:1], b)
    with pytest.raises(ValueError, match="prior_sd"):
        estimate_ability(X, a, b, prior_sd=0)


# ----------------------------------------------------------------------------------------------
# fitting with py-irt
# ----------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_fit_recovers_known_2pl_parameters():
    """Property of the kernel: on data drawn from a 2PL, the fit finds the generating parameters."""
    rng = np.random.default_rng(7)
    n, m = 800, 25
    theta = rng.normal(0, 1, n)
    a = rng.lognormal(0.2, 0.35, m)
    b = rng.normal(0, 1, m)
    R = (rng.random((n, m)) < prob(theta, a, b)).astype(float)
    p = fit_2pl(R, epochs=150, max_models=None, seed=0, progress=False)
    assert np.corrcoef(p.b, b)[0, 1] > 0.97
    assert np.corrcoef(p.a, a)[0, 1] > 0.8
    assert np.sqrt(np.mean((p.b - b) ** 2)) < 0.3  # standardised scale = generating scale (theta ~ N(0, 1))
    assert np.sqrt(np.mean((np.log(p.a) - np.log(a)) ** 2)) < 0.3
    th = estimate_ability(R, p.a, p.b)
    assert np.corrcoef(th, theta)[0, 1] > 0.9


def test_fit_equals_pyirt_trainer(small):
    """Our SVI loop is py-irt's IrtModelTrainer step for step: same seed, same parameters."""
    import pandas as pd
    import pyro
    import torch
    from py_irt.config import IrtConfig
    from py_irt.dataset import Dataset
    from py_irt.training import IrtModelTrainer

    R = small.responses[:40, :15].copy()
    R[3, 4] = np.nan
    ability, diff, disc, _ = irt._pyirt_svi(R, epochs=15, lr=0.1, lr_decay=0.9999, priors="hierarchical", seed=3,
                                            threads=1, progress=False)
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        pyro.set_rng_seed(3)
        ds = Dataset.from_pandas(pd.DataFrame(R, columns=[f"c{j}" for j in range(R.shape[1])]))
        tr = IrtModelTrainer(data_path=None, config=IrtConfig(model_type="2pl", priors="hierarchical", epochs=15),
                             dataset=ds, verbose=False)
        tr.train()
    finally:
        torch.set_num_threads(old)
    ref = tr.last_params
    assert [ref["item_ids"][j] for j in range(R.shape[1])] == [f"c{j}" for j in range(R.shape[1])]
    np.testing.assert_allclose(diff, ref["diff"], atol=1e-5)
    np.testing.assert_allclose(disc, ref["disc"], atol=1e-5)
    np.testing.assert_allclose(ability, ref["ability"], atol=1e-5)


def test_fit_is_seeded_standardised_and_handles_constant_items(small):
    R = small.responses[:200, :30].copy()
    R[:, 5] = 0.0  # constant columns: not fitted
    R[:, 6] = 1.0
    p1 = fit_2pl(R, epochs=100, max_models=150, seed=1, progress=False)
    q1, q2, q3 = (fit_2pl(R, epochs=15, max_models=150, seed=s, progress=False) for s in (1, 1, 2))
    np.testing.assert_array_equal(q1.a, q2.a)
    np.testing.assert_array_equal(q1.b, q2.b)
    assert not np.array_equal(q1.b, q3.b)
    assert p1.a[5] == 0 and p1.a[6] == 0
    assert p1.p_fixed[5] == pytest.approx(0.5 / 201) and p1.p_fixed[6] == pytest.approx(200.5 / 201)
    assert np.isnan(p1.p_fixed[[0, 1, 7]]).all() and (p1.a[[0, 1, 7]] > 0).all()
    P = p1.prob(np.array([-2.0, 2.0]))
    np.testing.assert_allclose(P[:, 5], p1.p_fixed[5])
    assert p1.info["n_models_fit"] == 150 and p1.info["n_constant_items"] == 2
    # the fitted scale is standardised: abilities of the fit's models have mean ~0, sd ~1 (once converged)
    th = estimate_ability(R, p1.a, p1.b)
    assert abs(th.mean()) < 0.3 and 0.6 < th.std() < 1.3
    # round trip
    q = ItemParams.from_dict(json.loads(json.dumps(p1.to_dict())))
    np.testing.assert_array_equal(q.a, p1.a)
    np.testing.assert_array_equal(np.isnan(q.p_fixed), np.isnan(p1.p_fixed))


def test_fit_rejects_bad_input(small):
    with pytest.raises(ValueError, match="0/1"):
        fit_2pl(np.full((5, 3), 0.3), epochs=2, progress=False)
    with pytest.raises(ValueError, match="vary"):
        fit_2pl(np.zeros((5, 3)), epochs=2, progress=False)
    with pytest.raises(ValueError, match="priors"):
        fit_2pl(small.responses[:20, :5], priors="flat", epochs=2, progress=False)
    with pytest.raises(ValueError, match="epochs"):
        fit_2pl(small.responses[:20, :5], epochs=0, progress=False)


def test_cache_reuses_one_fit(small, tmp_path, monkeypatch):
    monkeypatch.setenv("ESSENCE_CACHE", str(tmp_path))
    tr = small.subset(models=np.arange(120), items=np.arange(20))
    p1 = fit_2pl_cached(tr, progress=False, epochs=10, max_models=None, seed=0)
    files = list((tmp_path / "irt").glob("*.json"))
    assert len(files) == 1 and p1.info["cache"] == "miss"
    assert fit_2pl_cached(tr, progress=False, epochs=10, max_models=None, seed=0) is p1  # memory hit
    irt._MEMO.clear()
    p2 = fit_2pl_cached(tr, progress=False, epochs=10, max_models=None, seed=0)  # disk hit
    assert p2.info["cache"] == "disk"
    np.testing.assert_array_equal(p1.a, p2.a)
    np.testing.assert_array_equal(p1.b, p2.b)
    # other settings or other data: another entry
    fit_2pl_cached(tr, progress=False, epochs=11, max_models=None, seed=0)
    fit_2pl_cached(small.subset(models=np.arange(1, 121), items=np.arange(20)), progress=False, epochs=10,
                   max_models=None, seed=0)
    assert len(list((tmp_path / "irt").glob("*.json"))) == 3
    # a damaged file is refitted and replaced
    irt._MEMO.clear()
    files[0].write_text("{not json")
    p3 = fit_2pl_cached(tr, progress=False, epochs=10, max_models=None, seed=0)
    assert p3.info["cache"] == "miss"
    np.testing.assert_array_equal(p3.b, p1.b)
    with pytest.raises(ValueError, match="unknown setting"):
        fit_2pl_cached(tr, progress=False, epoch=3)


# ----------------------------------------------------------------------------------------------
# selection rule and reconstructor
# ----------------------------------------------------------------------------------------------
def test_select_by_information_one_item_per_quantile_bin():
    # three sharp items located at low / middle / high ability, plus flat ones
    a = np.array([0.3, 3.0, 0.3, 3.0, 0.3, 3.0, 0.0])
    b = np.array([0.0, -1.5, 0.0, 0.0, 0.0, 1.5, 0.0])
    theta = np.linspace(-2.5, 2.5, 300)
    assert select_by_information(a, b, theta, 3).tolist() == [1, 3, 5]  # low bin first
    idx = select_by_information(a, b, theta, 7)
    assert sorted(idx.tolist()) == list(range(7))  # exactly k distinct, the a = 0 item last
    assert idx[-1] == 6
    with pytest.raises(ValueError, match="k"):
        select_by_information(a, b, theta, 8)
    # fewer abilities than bins still gives k distinct items
    assert np.unique(select_by_information(a, b, theta[:2], 5)).size == 5


@pytest.fixture(scope="module")
def fitted_small(small):
    """One quick 2PL fit on the real slice: params, 20 chosen items, their MAP abilities and subset scores."""
    R = small.responses
    p = fit_2pl(R, epochs=40, max_models=None, seed=0, progress=False)
    idx = np.arange(20)
    th = np.clip(estimate_ability(R[:, idx], p.a[idx], p.b[idx]), -6, 6)
    return p, idx, th, 100 * R[:, idx].mean(axis=1)


def test_gam_tables_match_pygam(small, fitted_small):
    p, idx, th, score = fitted_small
    intercept, tt, ts, gam = fit_gam2_tables(np.column_stack([th, score]), small.target)
    rng = np.random.default_rng(0)
    Z = np.vstack([np.column_stack([th, score]),
                   np.column_stack([rng.uniform(th.min(), th.max(), 500), rng.uniform(0, 100, 500)])])
    ours = intercept + tt(Z[:, 0]) + ts(Z[:, 1])
    assert np.max(np.abs(ours - gam.predict(Z))) < 1e-3
    with pytest.raises(ValueError, match="distinct"):
        fit_gam2_tables(np.column_stack([np.r_[0.0, 0.0, 1.0, 1.0], np.arange(4.0)]), np.arange(4.0))


@pytest.mark.parametrize("use_score", [True, False])
def test_irt_reconstructor_round_trip(small, fitted_small, use_score):
    p, idx, _, _ = fitted_small
    X = small.responses[:, idx].copy()
    X[::7, 3] = np.nan
    rec = IRTGAMReconstructor(p.a[idx], p.b[idx], use_score=use_score).fit(X[:400], small.target[:400])
    pred = rec.predict(X[400:])
    assert pred.shape == (200,) and (pred >= 0).all() and (pred <= 100).all()
    d = json.loads(json.dumps(rec.to_dict()))
    from essence.reconstructors.base import reconstructor_from_dict

    np.testing.assert_array_equal(reconstructor_from_dict(d).predict(X[400:]), pred)
    from sklearn.base import clone

    c = clone(rec)
    assert c.params_dict() == rec.params_dict() and not hasattr(c, "t_theta_")
    with pytest.raises(ValueError, match="chosen items"):
        rec.predict(X[:, :5])


# ----------------------------------------------------------------------------------------------
# the method, end to end
# ----------------------------------------------------------------------------------------------
def test_irt_selector_end_to_end(small, tmp_path):
    art = compress(small, k=12, method="irt", seed=0, progress=False, **FAST)
    assert len(set(art.items)) == 12 and set(art.items) <= set(small.items)
    assert art.params["irt"]["binarize"] == 0.5 and art.params["irt"]["epochs"] == FAST["epochs"]
    assert "irt_fit" in art.selection and art.selection["irt_fit"]["n_models_fit"] == FAST["max_models"]
    path = art.save(tmp_path / "a.json")
    back = Compressed.load(path)
    np.testing.assert_allclose(back.estimate(small)["estimate"], art.estimate(small)["estimate"], rtol=0, atol=1e-9)
    # same seed, same items (without the cache: a fresh fit)
    again = compress(small, k=12, method="irt", seed=0, progress=False, cache=False, **FAST)
    assert again.items == art.items
    other = compress(small, k=12, method="irt", seed=1, progress=False, **FAST)
    assert other.items != art.items  # another split, another fit


def test_irt_on_continuous_scores_warns_and_records_threshold(alpaca, held_out):
    with pytest.warns(UserWarning, match="binarize=0.5"):
        art = compress(alpaca, k=15, method="irt", seed=0, progress=False, min_models=10, **FAST)
    assert len(set(art.items)) == 15 and set(art.items) <= set(alpaca.items)
    rmse, baseline = held_out(art, alpaca)  # measured 8.5 against 22.8 pp
    assert rmse < 0.6 * baseline and art.figures["test"]["rmse"] == pytest.approx(rmse)
    assert art.params["irt"]["binarize"] == 0.5
    with pytest.raises(ValueError, match="binarize: must be a finite number >= 0.0 and <= 1.0, got 2"):
        compress(alpaca, k=15, method="irt", seed=0, progress=False, binarize=2.0, min_models=10, **FAST)


def test_irt_skips_constant_items_on_lcb():
    """lcb_codegen has 109 problems no model solves: zero information, never chosen while others remain."""
    from essence.data import load, split_models

    d = load("lcb_codegen")
    sp = split_models(d, seed=0)
    tr, va = d.subset(models=sp.train), d.subset(models=sp.val)
    sel = IRTSelector(30, progress=False, min_models=10, **IRTSelector.route_params(FAST))
    with pytest.warns(UserWarning):
        sel.fit(tr, va)
    constant = np.flatnonzero(np.nanmax(binarize(tr.responses), axis=0) == np.nanmin(binarize(tr.responses), axis=0))
    assert constant.size >= 100
    assert not set(sel.items_.tolist()) & set(constant.tolist())
    assert sel.info_["irt_fit"]["n_constant_items"] == constant.size


def test_reconstructor_reloads_in_a_fresh_process(small, fitted_small, tmp_path, monkeypatch):
    """`essence estimate` runs in a new interpreter: there the saved "irt_gam" reconstructor predicts what it
    predicted here, and the cached 2PL fit is read from disk (not refitted) with identical parameters."""
    from essence.data import from_arrays

    p, idx, _, _ = fitted_small
    rec = IRTGAMReconstructor(p.a[idx], p.b[idx]).fit(small.responses[:, idx], small.target)
    path = tmp_path / "rec.json"
    path.write_text(json.dumps(rec.to_dict()))
    part = small.subset(models=np.arange(120), items=np.arange(20))
    np.savez(tmp_path / "part.npz", responses=part.responses, models=part.models, items=part.items,
             target=part.target, X=small.responses[:, idx])
    cache = tmp_path / "cache"
    monkeypatch.setenv("ESSENCE_CACHE", str(cache))
    monkeypatch.setattr("essence.features.irt._MEMO", {})  # another test may have fitted the same slice
    fit = fit_2pl_cached(from_arrays(part.responses, part.models, part.items, part.target), progress=False,
                         epochs=10, max_models=None, seed=0)
    assert fit.info["cache"] == "miss" and len(list((cache / "irt").glob("*.json"))) == 1
    code = f"""
import json, numpy as np
from essence.data import from_arrays
from essence.features.irt import fit_2pl_cached
from essence.reconstructors.base import reconstructor_from_dict
z = np.load({str(tmp_path / "part.npz")!r})
pred = reconstructor_from_dict(json.load(open({str(path)!r}))).predict(z["X"])
fit = fit_2pl_cached(from_arrays(z["responses"], z["models"], z["items"], z["target"]), progress=False, epochs=10,
                     max_models=None, seed=0)
print(json.dumps({{"pred": pred.tolist(), "a": fit.a.tolist(), "b": fit.b.tolist(), "cache": fit.info["cache"]}}))
"""
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)  # inherits ESSENCE_CACHE
    assert res.returncode == 0, res.stderr[-500:]
    out = json.loads(res.stdout.strip().splitlines()[-1])
    np.testing.assert_array_equal(out["pred"], rec.predict(small.responses[:, idx]))
    assert out["cache"] == "disk"
    np.testing.assert_array_equal(out["a"], fit.a)
    np.testing.assert_array_equal(out["b"], fit.b)
