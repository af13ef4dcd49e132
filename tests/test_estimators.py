"""Selectors and reconstructors are scikit-learn estimators; every reconstructor kind round-trips through JSON;
every method parameter is checked against its domain before any work, with one line naming it."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.base import clone

from essence.artifact.compressed import compress
from essence.data import split_models
from essence.data.errors import InputError
from essence.features.irt import binarize
from essence.methods import METHODS, get_method, make_method
from essence.reconstructors import KINDS as RECONSTRUCTOR_KINDS
from essence.reconstructors.base import fit_reconstructor
from essence.reconstructors.base import reconstructor_class, reconstructor_from_dict


def _item_params(R):
    """Rough 2PL parameters from real responses (a = 1.5, b = -logit(p)): enough to fit the GAMs on them."""
    p = np.clip(np.nanmean(binarize(R, 0.5), axis=0), 0.02, 0.98)
    return np.full(R.shape[1], 1.5), -np.log(p / (1 - p))


#: kind -> (constructor keyword arguments from the training responses of the chosen items ``X`` and of the
#: whole pool ``R``). Every kind of RECONSTRUCTOR_KINDS must have a row (checked below).
def _makers(X, R, anchors):
    a, b = _item_params(X)
    pa, pb = _item_params(R)
    return {
        "gam": {},
        "ridge": {"alphas": (0.1, 1.0, 10.0)},
        "ridge_gam": {"folds": 4},
        "weighted_mean": {"weights": np.arange(1, X.shape[1] + 1, dtype=float)},
        "weighted_line": {"weights": np.arange(1, X.shape[1] + 1, dtype=float)},
        "irt_gam": {"a": a, "b": b},
        "gpirt": {"pool_a": pa, "pool_b": pb, "pool_p_fixed": [None] * R.shape[1], "anchors": anchors,
                  "weights": np.ones(len(anchors)), "gp_lambda": 0.3, "calibrate": True},
        "signature_knn": {"n_components": 3, "n_neighbors": 5},
        "line": {},
        "mean_ridge": {"alphas": (1.0, 100.0)},
        "aipw": {"items": anchors},
        "mlp": {"hidden": 4},
        "kernel": {"own": [0, 2], "own_weights": (0.0, 3.0), "scales": (1.0,)},
        "boost": {"blocks": [[0, 1, 2, 3], [4, 5, 6, 7, 8, 9]], "trees": 30, "min_leaf": 5},
        "average": {"parts": [{"kind": "ridge", "params": {}}, {"kind": "mlp", "params": {"hidden": 3}}]},
        "frontier": {"items": anchors, "dims": (1, 2), "max_models": 200, "folds": 3},
    }


def test_every_reconstructor_kind_round_trips_through_json(small):
    sp = split_models(small, seed=0)
    anchors = np.arange(0, 80, 8)  # 10 chosen items
    R_tr, R_te = small.responses[sp.train], small.responses[sp.test]
    X_tr, X_te, y_tr = R_tr[:, anchors], R_te[:, anchors], small.target[sp.train]
    makers = _makers(X_tr, R_tr, anchors)
    assert set(makers) == set(RECONSTRUCTOR_KINDS), "add the new kind to this test"
    for kind, kw in makers.items():
        cls = reconstructor_class(kind)
        assert cls.kind == kind
        rec = fit_reconstructor(cls(**kw), X_tr, y_tr, R_tr)  # R for kinds that model the whole pool
        pred = rec.predict(X_te)
        assert pred.shape == (len(sp.test),) and np.isfinite(pred).all(), kind
        back = reconstructor_from_dict(json.loads(json.dumps(rec.to_dict())))
        assert type(back) is cls
        np.testing.assert_allclose(back.predict(X_te), pred, rtol=0, atol=1e-9, err_msg=kind)
        # sklearn's clone: an unfitted copy with the same parameters, no fitted state
        c = clone(rec)
        assert type(c) is cls and json.dumps(c.params_dict()) == json.dumps(rec.params_dict())
        assert not [k for k in vars(c) if k.endswith("_") and not k.startswith("_")], kind


def test_reconstructor_constructors_store_parameters_unchanged():
    for kind in RECONSTRUCTOR_KINDS:
        cls = reconstructor_class(kind)
        params = cls._get_param_names()
        sentinel = {p: object() for p in params}
        obj = cls(**sentinel)
        assert all(getattr(obj, p) is sentinel[p] for p in params), kind


def test_unknown_kind_names_the_known_ones():
    with pytest.raises(InputError, match="unknown kind 'nope'.*signature_knn"):
        reconstructor_from_dict({"kind": "nope"})


@pytest.mark.parametrize("name", list(METHODS))
def test_selectors_clone_and_store_parameters_unchanged(name):
    cls = get_method(name)
    sel = make_method(name, k=5, seed=3)
    c = clone(sel)
    assert type(c) is cls and c.get_params() == sel.get_params()
    assert "progress" not in sel.params_dict() and sel.params_dict()["seed"] == 3
    params = [p for p in cls._get_param_names()]
    sentinel = {p: object() for p in params}
    obj = cls(**sentinel)
    assert all(getattr(obj, p) is sentinel[p] for p in params), name


#: one bad value per method and parameter kind, and the words the one-line message must contain
BAD = [
    ("kmeans", {"lam": float("nan")}, "lam: must be a finite number >= 0.0, got nan"),
    ("kmeans", {"lam": float("inf")}, "lam: must be a finite number"),
    ("kmeans", {"lam": -1}, "lam: must be a finite number >= 0.0, got -1"),
    ("kmeans", {"n_splines": 0}, "n_splines: must be a whole number >= 4, got 0"),
    ("kmeans", {"n_init": 2.0}, "n_init: must be a whole number >= 1, got 2.0"),
    ("kmeans", {"candidates": ("gam", "spline")}, "candidates: must be one of"),
    ("essence", {"tau_rank": 5}, "tau_rank: must be a finite number >= -1.0 and <= 1.0, got 5"),
    ("essence", {"tau_text": float("nan")}, "tau_text: must be a finite number"),
    ("essence", {"population": 0}, "population: must be a whole number >= 2, got 0"),
    ("essence", {"generations": -1}, "generations: must be a whole number >= 0, got -1"),
    ("essence", {"fitness": "best"}, "fitness.kind: must be one of 'gam', 'ridge', got 'best'"),
    ("essence", {"patience": 0}, "patience: must be a whole number >= 1 (or None), got 0"),
    ("herding", {"bandwidth": -2.0}, "bandwidth: must be a finite number > 0.0 (or None)"),
    ("herding", {"batch_size": 0}, "batch_size: must be a whole number >= 1, got 0"),
    ("ppl", {"n_bins": 0}, "n_bins: must be a whole number >= 1, got 0"),
    ("irt", {"epochs": 0}, "epochs: must be a whole number >= 1, got 0"),
    ("irt", {"binarize": 1.5}, "binarize: must be a finite number >= 0.0 and <= 1.0, got 1.5"),
    ("irt", {"priors": "flat"}, "priors: must be one of 'hierarchical', 'vague', got 'flat'"),
    ("irt", {"lr": 0.0}, "lr: must be a finite number > 0.0, got 0"),
    ("tinybench", {"max_models": 1}, "max_models: must be a whole number >= 2 (or None), got 1"),
    ("tinybench", {"min_val_models": -1}, "min_val_models: must be a whole number >= 0, got -1"),
    ("tinybench", {"cache": "yes"}, "cache: must be one of True, False, got 'yes'"),
    ("disco", {"neighbors": (5, 0)}, "neighbors: must be a whole number >= 1, got 0"),
    ("disco", {"n_components": ()}, "n_components: must name at least one value"),
    ("random", {"seed": -1}, "seed: must be a whole number >= 0, got -1"),
]


@pytest.mark.parametrize("method, params, message", BAD, ids=[f"{m}-{next(iter(p))}" for m, p, _ in BAD])
def test_parameters_outside_their_domain_fail_before_any_work(method, params, message, small):
    # make_method (what compress and the sweep call first) checks the domain ...
    with pytest.raises(InputError) as exc:
        make_method(method, k=5, **params)
    assert message in str(exc.value) and "\n" not in str(exc.value)
    # ... and so does fit, for a selector built directly
    sp = split_models(small, seed=0)
    cls = get_method(method)
    sel = cls(k=5, **cls.route_params(params))
    with pytest.raises(InputError, match=message.split(":")[0]):
        sel.fit(small.subset(models=sp.train), small.subset(models=sp.val))
    # compress stops before splitting or fitting anything
    with pytest.raises(InputError, match=message.split(":")[0]):
        compress(small, 5, method=method, progress=False, **{"seed": 0, **params})


def test_valid_edge_values_pass():
    make_method("essence", k=5, tau_rank=-1.0, tau_text=1.0, patience=None, mutation_rate=1.0)
    make_method("kmeans", k=5, lam=0.0, n_splines=4, candidates="gam")
    make_method("disco", k=5, n_components=3, neighbors=[1, 2])
    make_method("herding", k=5, bandwidth=None)
    make_method("irt", k=5, max_models=None, priors="vague")


@pytest.mark.parametrize("kind, params, message", [
    ("gam", {"lam": float("nan")}, "lam: must be a finite number >= 0.0, got nan"),
    ("gam", {"n_splines": 0}, "n_splines: must be a whole number >= 4, got 0"),
    ("ridge", {"alphas": (1.0, 0.0)}, "alphas: must be a finite number > 0.0, got 0"),
    ("ridge_gam", {"folds": 1}, "folds: must be a whole number >= 2, got 1"),
    ("signature_knn", {"n_neighbors": 0}, "n_neighbors: must be a whole number >= 1, got 0"),
])
def test_reconstructor_parameters_are_checked_at_fit(kind, params, message, small):
    X, y = small.responses[:100, :10], small.target[:100]
    with pytest.raises(InputError) as exc:
        reconstructor_class(kind)(**params).fit(X, y)
    assert message in str(exc.value)


def test_method_reconstructor_parameters_are_checked_at_fit(small):
    X, y = small.responses[:100, :4], small.target[:100]
    a, b = _item_params(X)
    with pytest.raises(InputError, match="use_score: must be one of True, False, got 'yes'"):
        reconstructor_class("irt_gam")(a=a, b=b, use_score="yes").fit(X, y)
    with pytest.raises(InputError, match="prior_sd: must be a finite number > 0.0, got -1"):
        reconstructor_class("irt_gam")(a=a, b=b, prior_sd=-1).fit(X, y)
