"""``auto`` with few reference models: the one-SE line rule, the burden of proof on the search (random items are
the fallback) and the bagged ruler (real gsm8k slices)."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from essence.methods import make_method
from essence.methods.auto import AutoSelector, RulerSelector, oof_sq_errors, paired_margin, prefer_line
from essence.reconstruct import LineReconstructor, MeanRidgeReconstructor


@pytest.fixture(scope="module")
def few(gsm8k):
    """30 real gsm8k models (spread over the score range) x 120 items, split 26 / 4."""
    order = np.argsort(gsm8k.target)
    d = gsm8k.subset(models=np.sort(order[np.linspace(0, gsm8k.n_models - 1, 30).astype(int)]), items=np.arange(120))
    return d, d.subset(models=np.arange(26)), d.subset(models=np.arange(26, 30))


def test_paired_margin_is_mean_and_standard_error_of_differences():
    a, b = np.array([4.0, 9.0, 1.0, 16.0]), np.array([1.0, 4.0, 1.0, 9.0])
    mean, se = paired_margin(a, b)
    d = a - b
    assert mean == pytest.approx(d.mean()) and se == pytest.approx(d.std(ddof=1) / 2)


def test_line_rule_keeps_the_cv_choice_only_when_it_clearly_beats_the_line(few):
    _, tr, va = few
    # seed 7: the 5-fold CV picks mean_ridge (7.99 against the line's 8.04 pp), a gain under one standard error
    sel = make_method("random", k=10, seed=7, progress=False).fit(tr, va)
    assert sel.reconstructor_choice_ == "mean_ridge"
    R, y = np.vstack([tr.responses, va.responses]), np.r_[tr.target, va.target]
    X = R[:, sel.items_]
    mean, se = paired_margin(oof_sq_errors(LineReconstructor, X, y, seed=7), oof_sq_errors(MeanRidgeReconstructor, X, y, seed=7))
    assert sel.reconstructor_scores_["line"] ** 2 - sel.reconstructor_scores_["mean_ridge"] ** 2 == pytest.approx(mean)
    assert 0 < mean < se
    out = prefer_line(copy.deepcopy(sel), tr, va)
    assert out.reconstructor_choice_ == "line" and out.info_["line_rule"]["kept"] is False
    np.testing.assert_allclose(out.reconstructor_.predict(X), LineReconstructor().fit(X, y).predict(X))
    # seed 0: mean_ridge wins by more than two standard errors and is kept
    sel0 = make_method("random", k=10, seed=0, progress=False).fit(tr, va)
    kept = prefer_line(copy.deepcopy(sel0), tr, va)
    assert kept.reconstructor_choice_ == "mean_ridge" and kept.info_["line_rule"]["kept"] is True
    np.testing.assert_array_equal(kept.reconstructor_.predict(X), sel0.reconstructor_.predict(X))


def test_auto_keeps_random_unless_the_search_clearly_wins(few):
    _, tr, va = few
    kw = dict(k=10, seed=1, progress=False, candidates=["ruler"], folds=3)
    free = AutoSelector(margin=0.0, **kw).fit(tr, va).info_["auto"]
    guarded = AutoSelector(**kw).fit(tr, va).info_["auto"]  # default: one standard error
    cands = free["candidates"]
    assert cands == guarded["candidates"]  # same nested CV, only the rule differs
    assert cands["ruler"]["rmse"] < cands["random"]["rmse"]  # the search looks better here (8.07 against 8.52 pp) ...
    assert free["choice"] == "ruler" and free["margins"]["ruler"]["clear"]
    # ... but by less than one standard error of the paired differences: random items stay
    m = guarded["margins"]["ruler"]
    assert 0 < m["mean_sq_gain"] < m["se"] and m["clear"] is False
    assert guarded["choice"] == "random" and guarded["fallback"] == "random" and guarded["margin_se"] == 1.0
    assert guarded["estimate_rmse"] == cands["random"]["rmse"]
    # where the search wins by more than one standard error (k = 20, seed 2: 5.49 against 7.70 pp) it is kept
    clear = AutoSelector(k=20, seed=2, progress=False, candidates=["ruler"], folds=3).fit(tr, va)
    assert clear.info_["auto"]["choice"] == "ruler" and clear.info_["auto"]["margins"]["ruler"]["clear"]
    assert clear.info_["ruler"]["n_models"] == 30  # the refit saw every non-test model


def test_auto_default_rule_follows_its_recorded_margins(few):
    _, tr, va = few
    sel = AutoSelector(k=10, seed=1, progress=False, folds=3).fit(tr, va)
    a = sel.info_["auto"]
    clear = [c for c, m in a.get("margins", {}).items() if m["clear"]]
    if clear:
        assert a["choice"] == min(clear, key=lambda c: a["candidates"][c]["rmse"])
    else:
        assert a["choice"] == "random"
    assert sel.items_.shape == (10,) and a["margin_se"] == 1.0 if "margins" in a else True


def test_bagged_ruler_is_seeded_and_takes_the_most_chosen_items(few):
    _, tr, va = few
    a = RulerSelector(10, seed=2, bags=4, population=30, generations=10).fit(tr, va)
    b = RulerSelector(10, seed=2, bags=4, population=30, generations=10).fit(tr, va)
    np.testing.assert_array_equal(a.items_, b.items_)
    info = a.info_["ruler"]
    assert info["bags"] == 4 and 1 <= info["kth_count"] <= info["top_count"] <= 4
    assert np.unique(a.items_).size == 10


def test_auto_with_too_few_models_returns_the_baseline_and_says_so(few):
    d, _, _ = few
    tr, va = d.subset(models=np.arange(16)), d.subset(models=np.arange(16, 20))  # 20 non-test models < 24
    sel = AutoSelector(k=10, seed=3, progress=False, folds=3).fit(tr, va)
    a = sel.info_["auto"]
    assert a["too_few_to_choose"] == {"n_models": 20, "needs": 24, "kept": "random + line"}
    assert a["choice"] == "random" and set(a["candidates"]) == {"random"} and "margins" not in a
    # exactly random items + a least-squares line on all 20 models: the baseline
    items = np.sort(np.random.default_rng(3).choice(d.n_items, size=10, replace=False))
    np.testing.assert_array_equal(sel.items_, items)
    X = np.vstack([tr.responses, va.responses])[:, items]
    line = LineReconstructor().fit(X, np.r_[tr.target, va.target])
    assert sel.reconstructor_choice_ == "line"
    np.testing.assert_allclose(sel.reconstructor_.predict(d.responses[:, items]), line.predict(d.responses[:, items]))
    # the threshold is a parameter: at 0 the candidates are compared again
    free = AutoSelector(k=10, seed=3, progress=False, folds=3, min_models_to_choose=0).fit(tr, va).info_["auto"]
    assert "too_few_to_choose" not in free and len(free["candidates"]) == 3
