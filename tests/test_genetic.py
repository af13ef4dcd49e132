"""EssenceBench step 2: repair, the vectorised fitness and the genetic search (essence.search.genetic)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from essence.search.fitness import RidgeFitness, GAMRulerFitness, _uniform_interp
from essence.search.genetic import GAConfig, genetic_search, random_masks, repair


def split3(r, seed=0):
    """Real data: training / validation models of a Responses slice."""
    from essence.data import split_models

    sp = split_models(r, test=0.0, val=0.25, seed=seed)
    return (r.responses[sp.train], r.target[sp.train], r.responses[sp.val], r.target[sp.val])


# ----------------------------------------------------------------------------------------------
# repair
# ----------------------------------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(P=st.integers(1, 12), M=st.integers(1, 40), data=st.data())
def test_repair_gives_exactly_k_and_changes_little(P, M, data):
    k = data.draw(st.integers(1, M))
    seed = data.draw(st.integers(0, 2**32 - 1))
    density = data.draw(st.floats(0, 1))
    masks = np.random.default_rng(seed).random((P, M)) < density
    out = repair(masks, k, np.random.default_rng(seed))
    assert out.shape == (P, M) and out.dtype == bool
    assert (out.sum(axis=1) == k).all()
    # a row with too many items only loses some, one with too few only gains some: no more than needed
    ones = masks.sum(axis=1)
    np.testing.assert_array_equal((masks & ~out).sum(axis=1), np.maximum(ones - k, 0))  # removed
    np.testing.assert_array_equal((out & ~masks).sum(axis=1), np.maximum(k - ones, 0))  # added


def test_repair_leaves_valid_rows_alone_and_rejects_bad_k():
    rng = np.random.default_rng(0)
    m = random_masks(5, 20, 4, rng)
    np.testing.assert_array_equal(repair(m, 4, rng), m)
    with pytest.raises(ValueError, match="k"):
        repair(m, 21, rng)


def test_uniform_interp_equals_np_interp():
    rng = np.random.default_rng(0)
    x = np.linspace(0, 100, 2001)
    y = np.cumsum(rng.normal(size=x.size))
    v = np.r_[rng.uniform(-5, 105, 500), 0.0, 100.0, 37.5]
    np.testing.assert_allclose(_uniform_interp(x, y)(v), np.interp(v, x, y), atol=1e-9)
    xn = np.r_[0.0, 1.0, 5.0, 100.0]  # not uniform: falls back to np.interp
    np.testing.assert_allclose(_uniform_interp(xn, xn**2)(v), np.interp(v, xn, xn**2))


# ----------------------------------------------------------------------------------------------
# the vectorised fitness against a plain per-individual reference
# ----------------------------------------------------------------------------------------------
def reference_rmse(fit: GAMRulerFitness, R_val, y_val, mask) -> float:
    """One individual at a time: nanmean over its items, the ruler by np.interp, clipped, RMSE over models
    with at least one answer."""
    cols = np.flatnonzero(mask)
    preds, ys = [], []
    for i in range(R_val.shape[0]):
        row = R_val[i, cols]
        if np.isnan(row).all():
            continue
        s = 100.0 * np.nanmean(row)
        preds.append(min(100.0, max(0.0, float(np.interp(s, fit.ruler.x, fit.ruler.y)))))
        ys.append(y_val[i])
    return float(np.sqrt(np.mean((np.array(preds) - np.array(ys)) ** 2)))


def test_fitness_equals_reference_on_real_binary_data(small):
    Rt, yt, Rv, yv = split3(small)
    fit = GAMRulerFitness(Rt, yt, Rv, yv)
    masks = random_masks(30, Rt.shape[1], 12, np.random.default_rng(0))
    got = fit.rmse(masks)
    ref = [reference_rmse(fit, Rv, yv, m) for m in masks]
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(fit(masks), -got)
    # the ruler is fitted once, on the pool mean of the training models
    x = 100 * Rt.mean(axis=1)
    assert np.corrcoef(fit.ruler(x), yt)[0, 1] > 0.9


def test_fitness_equals_reference_with_missing_cells(alpaca):
    r = alpaca.subset(items=np.r_[np.flatnonzero(np.isnan(alpaca.responses).any(axis=0)), np.arange(30)])
    Rt, yt, Rv, yv = split3(r)
    Rv = Rv.copy()
    Rv[0, :] = np.nan
    Rv[0, 3] = 0.4  # a model that answered a single item
    fit = GAMRulerFitness(Rt, yt, Rv, yv)
    assert fit.has_missing
    masks = random_masks(25, Rt.shape[1], 5, np.random.default_rng(1))
    got = fit.rmse(masks)
    ref = [reference_rmse(fit, Rv, yv, m) for m in masks]
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-10)


def test_ridge_fitness_equals_sklearn_ridge(small):
    from sklearn.linear_model import Ridge

    Rt, yt, Rv, yv = split3(small)
    masks = random_masks(6, Rt.shape[1], 10, np.random.default_rng(2))
    ins = RidgeFitness(Rt, yt, alpha=3.0)
    out = RidgeFitness(Rt, yt, Rv, yv, alpha=3.0)
    for m, a, b in zip(masks, ins.rmse(masks), out.rmse(masks)):
        cols = np.flatnonzero(m)
        mdl = Ridge(alpha=3.0).fit(Rt[:, cols], yt)
        assert a == pytest.approx(np.sqrt(np.mean((mdl.predict(Rt[:, cols]) - yt) ** 2)), rel=1e-4)
        assert b == pytest.approx(np.sqrt(np.mean((np.clip(mdl.predict(Rv[:, cols]), 0, 100) - yv) ** 2)), rel=1e-4)
    # restricting the pool does not change a subset's fitness
    sub = np.arange(0, Rt.shape[1], 2)
    m2 = random_masks(4, sub.size, 10, np.random.default_rng(3))
    full = np.zeros((4, Rt.shape[1]), dtype=bool)
    full[:, sub] = m2
    np.testing.assert_allclose(ins.restrict(sub).rmse(m2), ins.rmse(full), rtol=1e-6)


# ----------------------------------------------------------------------------------------------
# the search
# ----------------------------------------------------------------------------------------------
def test_ga_improves_and_keeps_its_best(small):
    Rt, yt, Rv, yv = split3(small)
    res = genetic_search(GAMRulerFitness(Rt, yt, Rv, yv), 10, GAConfig(population=40, generations=60, elites=4), seed=0)
    assert res.best.shape == (10,) and np.unique(res.best).size == 10
    assert np.all(np.diff(res.history) >= 0)  # elitism: the best never gets worse
    assert res.history[-1] > res.history[0]  # the search does find better subsets than the random start
    fit = GAMRulerFitness(Rt, yt, Rv, yv)
    mask = np.zeros((1, Rt.shape[1]), dtype=bool)
    mask[0, res.best] = True
    assert fit(mask)[0] == pytest.approx(res.best_fitness)
    # uniform random subsets are worse on average than the GA's pick
    assert fit(random_masks(200, Rt.shape[1], 10, np.random.default_rng(5))).mean() < res.best_fitness
    elites = res.elite_masks(5)
    assert elites.shape[0] <= 5 and (elites.sum(axis=1) == 10).all()
    assert np.unique(np.packbits(elites, axis=1), axis=0).shape[0] == elites.shape[0]


def test_ga_same_seed_same_subset(small):
    Rt, yt, Rv, yv = split3(small)
    a = genetic_search(GAMRulerFitness(Rt, yt, Rv, yv), 8, GAConfig(population=30, generations=20, elites=3), seed=7)
    b = genetic_search(GAMRulerFitness(Rt, yt, Rv, yv), 8, GAConfig(population=30, generations=20, elites=3), seed=7)
    c = genetic_search(GAMRulerFitness(Rt, yt, Rv, yv), 8, GAConfig(population=30, generations=20, elites=3), seed=8)
    np.testing.assert_array_equal(a.best, b.best)
    np.testing.assert_array_equal(a.history, b.history)
    assert not np.array_equal(a.population, c.population)


_CHILD = r"""
import json, sys
import numpy as np
from essence.data import load, split_models
from essence.search.fitness import GAMRulerFitness
from essence.search.genetic import GAConfig, genetic_search
r = load("gsm8k")
r = r.subset(models=np.arange(0, r.n_models, 6)[:600], items=np.arange(80))
sp = split_models(r, test=0.0, val=0.25, seed=0)
fit = GAMRulerFitness(r.responses[sp.train], r.target[sp.train], r.responses[sp.val], r.target[sp.val])
res = genetic_search(fit, 8, GAConfig(population=30, generations=20, elites=3), seed=7)
print(json.dumps(res.best.tolist()))
"""


def test_ga_same_seed_same_subset_across_processes(small):
    Rt, yt, Rv, yv = split3(small)
    here = genetic_search(GAMRulerFitness(Rt, yt, Rv, yv), 8, GAConfig(population=30, generations=20, elites=3), seed=7).best.tolist()
    out = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, timeout=120, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == here


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n_models=st.integers(6, 40), M=st.integers(2, 30), data=st.data())
def test_ga_always_returns_k_distinct_valid_items(n_models, M, data):
    """Property test of the pure kernel on generated matrices with NaN and constant columns."""
    seed = data.draw(st.integers(0, 10**6))
    k = data.draw(st.integers(1, M))
    rng = np.random.default_rng(seed)
    R = (rng.random((n_models, M)) < rng.random(M)).astype(float)
    R[:, rng.random(M) < 0.2] = 1.0  # constant columns
    R[rng.random((n_models, M)) < 0.15] = np.nan  # missing cells
    y = 100 * rng.random(n_models)
    half = n_models // 2
    ridge = data.draw(st.booleans())
    if not ridge and np.isnan(R[:half]).all(axis=1).sum() > half - 2:
        # too few training models with any answer to fit the ruler: refused, with a message saying so
        with pytest.raises(ValueError, match="fewer than two training models"):
            GAMRulerFitness(R[:half], y[:half], R[half:], y[half:])
        return
    fitness = (RidgeFitness if ridge else GAMRulerFitness)(R[:half], y[:half], R[half:], y[half:])
    config = GAConfig(population=data.draw(st.integers(2, 12)), generations=data.draw(st.integers(0, 6)), elites=1)
    res = genetic_search(fitness, k, config, seed=seed)
    assert res.best.shape == (k,)
    assert np.unique(res.best).size == k
    assert res.best.min() >= 0 and res.best.max() < M
    assert (res.population.sum(axis=1) == k).all()


def test_ga_rejects_bad_settings(small):
    Rt, yt, Rv, yv = split3(small)
    with pytest.raises(ValueError, match="lower k"):
        genetic_search(GAMRulerFitness(Rt, yt, Rv, yv), Rt.shape[1] + 1)
    with pytest.raises(ValueError, match="elites"):
        genetic_search(GAMRulerFitness(Rt, yt, Rv, yv), 5, GAConfig(population=10, elites=10))
    with pytest.raises(ValueError, match="y_val"):
        genetic_search(GAMRulerFitness(Rt, yt, Rv, yv[:-1]), 5)
    with pytest.raises(ValueError, match="R_val"):
        genetic_search(GAMRulerFitness(Rt, yt, Rv[:, :-1], yv), 5)


def test_ga_patience_and_init(small):
    Rt, yt, Rv, yv = split3(small)
    first = genetic_search(GAMRulerFitness(Rt, yt, Rv, yv), 10, GAConfig(population=30, generations=40, elites=2), seed=1)
    # starting from a good subset, the result is at least as good (elitism)
    again = genetic_search(GAMRulerFitness(Rt, yt, Rv, yv), 10, GAConfig(population=30, generations=5, elites=2), init=first.best[None, :], seed=2)
    assert again.best_fitness >= first.best_fitness
    stop = genetic_search(GAMRulerFitness(Rt, yt, Rv, yv), 10, GAConfig(population=10, generations=500, elites=2, patience=5), seed=3)
    assert stop.stopped_early and stop.generations_run < 500
