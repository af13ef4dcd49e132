"""The fallback sample (essence.reconstructors.forward.frontier_fallback, auto's ``fallback``, the artifact's
``fallback_items``, ``essence items``): items drawn at random from those not chosen, whose answers give a model outside
the references an estimate that does not rest on them; and auto's ``control`` part of random items."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from essence import compress
from essence.artifact.base import load_artifact
from essence.artifact.commands import item_lines
from essence.artifact.refit import refit
from essence.data import load, split_models
from essence.data.errors import InputError
from essence.methods.auto import AutoSelector
from essence.reconstructors import forward
from essence.search.swap import swap_search

FAST = {"checkpoints": (0, 300), "augment": 200, "dims": (1, 2)}


@pytest.fixture(scope="module")
def ifeval_far():
    """IFEval, references the weakest 60 %, test the strongest 20 % (far above them); auto at k = 20."""
    d = load("ifeval")
    sp = split_models(d, seed=0, kind="far")
    sel = AutoSelector(k=20, seed=0, progress=False, **FAST).fit(d.subset(sp.train), d.subset(sp.val))
    return d, sp, sel


def test_the_fallback_sample_is_random_disjoint_seeded_and_sized(ifeval_far):
    d, sp, sel = ifeval_far
    fb = np.asarray(sel.reconstructor_.fallback)
    assert fb.size == 20 and np.unique(fb).size == 20 and not np.isin(fb, sel.items_).any()
    assert sel.info_["auto"]["fallback"] == 20
    again = AutoSelector(k=20, seed=0, progress=False, **FAST).fit(d.subset(sp.train), d.subset(sp.val))
    np.testing.assert_array_equal(again.reconstructor_.fallback, fb)
    none = AutoSelector(k=20, seed=0, progress=False, fallback=0.0, **FAST).fit(d.subset(sp.train), d.subset(sp.val))
    assert len(none.reconstructor_.fallback) == 0 and "fallback" not in none.reconstructor_.to_dict()
    np.testing.assert_array_equal(none.items_, sel.items_)  # the sample does not touch the choice


def test_the_fallback_estimate_is_the_greg_formula_by_hand(ifeval_far):
    """Chosen items counted as answered, the others' mean = the factor model's prediction + the mean residual on the
    answered fallback items (ability from every answer); standard error from the residuals' variance."""
    d, sp, sel = ifeval_far
    st = sel.reconstructor_.state()
    fb, items = np.asarray(st["fallback"]), np.asarray(st["items"])
    X, Xf = d.responses[np.ix_(sp.test[:5], items)], d.responses[np.ix_(sp.test[:5], fb)].copy()
    Xf[0, :5] = np.nan  # a model that skipped part of the sample
    F, sF = forward.frontier_fallback(st, X, Xf)
    A = np.asarray(st["loadings"]).reshape(len(st["easiness"]), -1)
    b = np.asarray(st["easiness"])
    N, k = b.size, items.size
    for i in range(5):
        obs = ~np.isnan(Xf[i])
        both = np.r_[items, fb[obs]]
        theta = forward._factor_ability(np.r_[X[i], Xf[i, obs]][None], A[both], b[both], st["prior_prec"])
        p = 1 / (1 + np.exp(-(theta @ A.T + b)))[0]
        rest = np.setdiff1d(np.arange(N), items)
        resid = Xf[i, obs] - p[fb[obs]]
        pool = (X[i].sum() + p[rest].sum() + rest.size * resid.mean()) / N
        assert F[i] == pytest.approx(100 * pool, abs=1e-6)
        m = obs.sum()
        v = max(resid.var(ddof=1), np.mean(p[fb[obs]] * (1 - p[fb[obs]])), 1 / (m + 2))
        assert sF[i] == pytest.approx(100 * rest.size / N * np.sqrt((1 - m / rest.size) * v / m), rel=1e-6, abs=1e-3)


def test_the_fallback_estimate_is_unbiased_for_a_model_the_references_do_not_describe(ifeval_far):
    """A planted model that answers exactly the items with an even position (nothing like any reference model):
    over many random fallback samples the estimate centres on its true pool mean (design-based), while D, read
    from the chosen items only, does not."""
    d, sp, sel = ifeval_far
    st = dict(sel.reconstructor_.state())
    items = np.asarray(st["items"])
    N = len(st["easiness"])
    row = (np.arange(N) % 2 == 0).astype(float)
    truth = 100 * row.mean()
    rest = np.setdiff1d(np.arange(N), items)
    rng = np.random.default_rng(5)
    est, se = [], []
    for _ in range(300):
        st["fallback"] = np.sort(rng.choice(rest, 20, replace=False)).tolist()
        F, sF = forward.frontier_fallback(st, row[items][None], row[st["fallback"]][None])
        est.append(F[0])
        se.append(sF[0])
    est = np.asarray(est)
    assert abs(est.mean() - truth) < 4 * est.std() / np.sqrt(est.size)
    assert np.mean(np.abs(est - truth) <= 1.645 * np.asarray(se)) >= 0.8  # the interval is honest for it too


def test_only_models_outside_the_references_use_it_and_it_helps_them(ifeval_far):
    d, sp, sel = ifeval_far
    rec = sel.reconstructor_
    fb = np.asarray(rec.fallback)
    test = np.r_[sp.test, sp.train[:40]]  # far above the references, and references themselves
    X, Xf = d.responses[np.ix_(test, sel.items_)], d.responses[np.ix_(test, fb)]
    one, two = rec.predict_interval(X), rec.predict_interval(X, Xf)
    np.testing.assert_array_equal(two["fallback"], one["outside"])
    inside = ~one["outside"]
    for key in ("estimate", "lower", "upper"):
        np.testing.assert_array_equal(two[key][inside], one[key][inside])
    y, far = d.target[test], np.arange(test.size) < sp.test.size
    rmse = lambda o: np.sqrt(np.mean((o["estimate"][far] - y[far]) ** 2))  # noqa: E731
    cover = lambda o: np.mean((o["lower"][far] <= y[far]) & (y[far] <= o["upper"][far]))  # noqa: E731
    assert rmse(two) < 0.8 * rmse(one) and cover(two) >= max(0.75, cover(one))  # one split, k = 20
    none = rec.predict_interval(X, np.full(Xf.shape, np.nan))  # answered none of it: stage one unchanged
    np.testing.assert_array_equal(none["estimate"], one["estimate"])
    with pytest.raises(ValueError, match="fallback answers"):
        rec.predict_interval(X, Xf[:, :3])


@pytest.mark.slow
def test_the_artifact_lists_answers_and_names_the_fallback(tmp_path, capsys):
    d = load("ifeval")
    art = compress(d, k=15, seed=0, split="far", progress=False, **FAST)
    assert len(art.fallback_items) == 15 and not set(art.fallback_items) & set(art.items)
    path = art.save(tmp_path / "a.json")
    back = load_artifact(path)
    assert back.fallback_items == art.fallback_items
    assert item_lines(back) == list(art.items) and item_lines(back, fallback=True) == art.fallback_items
    sp = split_models(d, seed=0, kind="far")
    new = d.subset(models=sp.test[:8])
    wide = pd.DataFrame(new.responses, index=new.models, columns=new.items)
    staged = back.estimate(wide, fallback=True)  # every item answered: the outside models read the sample too
    first = back.estimate(wide[list(art.items)], fallback=True)
    pd.testing.assert_frame_equal(back.estimate(wide), first)  # the Python default: the chosen items only
    assert (staged["answered_by"] == "fallback sample").sum() == first["outside"].sum() > 0
    assert not (first["answered_by"] == "fallback sample").any()
    from essence.artifact.report import context_lines
    from essence.cli import main

    wide.rename_axis("model").reset_index().to_csv(tmp_path / "new.csv", index=False)
    capsys.readouterr()
    assert main(["estimate", str(path), str(tmp_path / "new.csv"), "--no-context"]) == 0
    assert capsys.readouterr().out.count("fallback sample") == (staged["answered_by"] == "fallback sample").sum()
    assert main(["estimate", str(path), str(tmp_path / "new.csv"), "--no-context", "--no-fallback"]) == 0
    assert "fallback sample" not in capsys.readouterr().out
    from essence.artifact.compare import compare

    pairs = compare(back, wide, fallback=True)
    by = dict(zip(staged["model"], staged["answered_by"]))
    staged_pair = pairs["a"].map(by).eq("fallback sample") | pairs["b"].map(by).eq("fallback sample")
    assert staged_pair.any() and (pairs.loc[staged_pair, "calibration"] == "independent").all()
    assert (compare(back, wide)["estimate_b"] != pairs["estimate_b"]).any()  # the default: the chosen items only
    assert main(["items", str(path), "--fallback"]) == 0
    assert capsys.readouterr().out.split() == art.fallback_items

    note = "\n".join(context_lines(back, first))
    assert "essence items ARTIFACT --fallback" in note
    assert "fallback sample, items drawn at random" in "\n".join(context_lines(back, staged))
    old = json.loads(path.read_text())
    old.pop("fallback_items")
    old["reconstructor"].pop("fallback")
    old["reconstructor"]["params"].pop("fallback")
    (tmp_path / "old.json").write_text(json.dumps(old))
    with pytest.raises(InputError, match="no fallback sample"):
        item_lines(load_artifact(tmp_path / "old.json"), fallback=True)
    # a refit on data that lack part of the sample keeps the rest, by id
    keep = [i for i in d.items if i not in set(art.fallback_items[:5])]
    ref = d.subset(models=np.r_[sp.train, sp.val], items=[list(d.items).index(i) for i in keep])
    again = refit(back, ref)
    assert again.fallback_items == art.fallback_items[5:]
    np.testing.assert_array_equal(np.asarray(ref.items)[again.reconstructor.fallback], again.fallback_items)


@pytest.mark.slow
def test_the_search_keeps_its_fixed_items_and_the_control_part_is_random(ifeval_far):
    d, sp, _ = ifeval_far
    R, y = d.responses[sp.train], d.target[sp.train]
    fixed = np.array([3, 50, 400])
    paths = swap_search(R, y, 10, seed=1, checkpoints=(0, 300), fixed=fixed)
    assert all(np.isin(fixed, p).all() and p.size == 10 for p in paths.values())
    assert not np.array_equal(paths[0], paths[300])  # the rest was searched
    with pytest.raises(InputError, match="fixed"):
        swap_search(R, y, 2, fixed=fixed)
    sel = AutoSelector(k=20, seed=0, progress=False, control=0.5, **FAST).fit(d.subset(sp.train), d.subset(sp.val))
    assert sel.control_.size == 10 and np.isin(sel.control_, sel.items_).all()
    np.testing.assert_array_equal(sel.control_, AutoSelector(k=20, seed=0, control=0.5).control_items(d.n_items))
    rnd = AutoSelector(k=20, seed=0, progress=False, control=1.0, **FAST).fit(d.subset(sp.train), d.subset(sp.val))
    np.testing.assert_array_equal(rnd.items_, rnd.control_)  # every item random


@pytest.mark.slow
def test_run_answers_the_fallback_sample_only_for_a_model_outside(tmp_path, monkeypatch):
    """``essence run``'s second stage: the harness runs (faked here, as tests/test_compare.py does for the whole run)
    are asked for the chosen items, then for the fallback sample's ids only when the estimate places the model
    outside the references; the estimate then reads both."""
    from essence.data import Responses
    from essence.lmeval import run as run_mod

    d = load("ifeval")
    art = compress(d, k=15, seed=0, split="far", progress=False, **FAST)
    sp = split_models(d, seed=0, kind="far")
    col = {s: i for i, s in enumerate(d.items)}

    class Imported:
        def __init__(self, row, ids):
            self.responses = Responses(responses=d.responses[[row]][:, [col[i] for i in ids]], items=np.asarray(ids),
                                       models=np.asarray(["new"]), target=np.array([np.nan]), name="ifeval")

        def summary(self):
            return []

    for row, outside in ((sp.test[-1], True), (sp.train[0], False)):
        asked = []

        def fake(a, task, scratch, out_dir, keep, export, run, row=row, asked=asked):
            asked.append(list(a.items))
            res = {"configs": {}, "results": {}, "table": ""}
            return Imported(row, a.items), res, [], {"estimator": {"metric": "acc"}}

        monkeypatch.setattr(run_mod, "_run_items", fake)
        monkeypatch.setattr(run_mod, "read_samples", lambda *a, **k: [])
        res = run_mod.run_artifact(art, "hf", "pretrained=x")
        assert asked[0] == list(art.items)
        if outside:
            assert asked[1:] == [art.fallback_items] and res.estimates["answered_by"].iloc[0] == "fallback sample"
        else:
            assert asked[1:] == [] and res.estimates["answered_by"].iloc[0] != "fallback sample"
        res = run_mod.run_artifact(art, "hf", "pretrained=x", fallback=False)
        assert res.estimates["answered_by"].iloc[0] != "fallback sample"
