"""Suites: the data object, the joint fitness, selection on a suite, the suite artifact, on real data slices."""

from __future__ import annotations

import json

import numpy as np
import pytest

from essence.data.errors import InputError
from essence.search.genetic import random_masks
from essence.suite import (JointRidgeFitness, SuiteCompressed, compress_suite, load_suite, make_suite,
                           select_suite)
from essence.suite.data import SEP


@pytest.fixture(scope="module")
def members():
    from essence.data import load

    arc, mmlu, wino = (load(n) for n in ("arc", "mmlu", "winogrande"))
    return arc.subset(items=np.arange(40)), mmlu.subset(items=np.arange(30)), wino.subset(items=np.arange(30))


@pytest.fixture(scope="module")
def suite(members):
    s = make_suite(members)
    return s.subset(np.arange(0, s.n_models, 4)[:400])  # every 4th shared model keeps the score range


def test_suite_keeps_models_present_in_all_and_counts_the_dropped(members):
    s = make_suite(members)
    common = set(members[0].models) & set(members[1].models) & set(members[2].models)
    assert s.n_models == len(common) and set(s.models) == common
    for m, sm in zip(members, s.members):
        assert s.dropped[m.name] == m.n_models - len(common)
        assert list(sm.models) == list(s.models)  # one shared order
    assert s.n_items == [40, 30, 30]
    p = s.pooled()
    assert p.n_items == 100 and p.items[0] == f"arc{SEP}{members[0].items[0]}"
    np.testing.assert_allclose(p.target, s.targets.mean(axis=1))
    assert [b.size for b in s.blocks] == [40, 30, 30] and s.member_of[40] == 1


def test_suite_refuses_one_member_repeated_names_and_no_shared_models(members):
    with pytest.raises(InputError, match="at least two"):
        make_suite(members[:1])
    with pytest.raises(InputError, match="repeated"):
        make_suite([members[0], members[0]])
    few = members[1].subset(models=[m for m in members[1].models if m not in set(members[0].models)][:50])
    with pytest.raises(InputError, match="shared models"):
        make_suite([members[0], few])


def test_joint_fitness_in_sample_matches_explicit_ridge_and_mean_is_mean_of_members(suite):
    R, Y = suite.pooled().responses, suite.targets
    fit = JointRidgeFitness(R, Y, suite.member_of, alpha=2.0, weighting="raw")
    masks = random_masks(3, R.shape[1], 12, np.random.default_rng(0))
    r = fit.member_rmse(masks)
    assert r.shape == (3, 4)
    X = np.where(np.isnan(R), np.nanmean(R, axis=0), R)
    for p in range(3):
        Xm = X[:, masks[p]]
        Xc = Xm - Xm.mean(axis=0)
        preds = []
        for b in range(3):
            w = np.linalg.solve(Xc.T @ Xc + 2.0 * np.eye(12), Xc.T @ (Y[:, b] - Y[:, b].mean()))
            preds.append(Xc @ w + Y[:, b].mean())
            assert r[p, b] == pytest.approx(np.sqrt(np.mean((preds[-1] - Y[:, b]) ** 2)), rel=1e-8)
        assert r[p, 3] == pytest.approx(np.sqrt(np.mean((np.mean(preds, axis=0) - Y.mean(axis=1)) ** 2)), rel=1e-8)
    assert fit(masks) == pytest.approx(-r[:, :3].mean(axis=1))


def test_relative_weighting_divides_by_random_reference_and_floor_penalises(suite):
    R, Y = suite.pooled().responses, suite.targets
    rel = JointRidgeFitness(R, Y, suite.member_of, weighting="relative", k_ref=12, floor=5)
    assert rel.ref.shape == (4,) and (rel.ref > 0).all()
    masks = random_masks(2, R.shape[1], 12, np.random.default_rng(1))
    masks[0] = False
    masks[0, :12] = True  # 12 arc items: 5 + 5 short of the floor in mmlu and winogrande
    r = rel.member_rmse(masks)
    assert rel.combine(r) == pytest.approx((r[:, :3] / rel.ref[:3]).mean(axis=1))
    assert rel.penalty(masks)[0] == 10_000.0
    with pytest.raises(InputError, match="weighting"):
        JointRidgeFitness(R, Y, suite.member_of, weighting="loudest")


def test_joint_essence_same_seed_same_items_and_floor_kept(suite):
    tr, va = suite.subset(np.arange(300)), suite.subset(np.arange(300, 400))
    kw = dict(population=16, generations=4, elites=2, tau_text=1.0)
    a, info = select_suite(tr, va, 15, seed=3, per_benchmark=4, progress=False, **kw)
    b, _ = select_suite(tr, va, 15, seed=3, per_benchmark=4, progress=False, **kw)
    np.testing.assert_array_equal(a, b)
    assert a.size == 15 and np.unique(a).size == 15
    assert sum(info["budget"].values()) == 15 and min(info["budget"].values()) >= 4
    r, info_r = select_suite(tr, va, 15, method="random", seed=3, per_benchmark=4, progress=False)
    assert min(info_r["budget"].values()) >= 4 and r.size == 15


def test_select_refuses_bad_floor_k_and_methods(suite):
    tr, va = suite.subset(np.arange(300)), suite.subset(np.arange(300, 400))
    with pytest.raises(InputError, match="per-benchmark 6"):
        select_suite(tr, va, 15, per_benchmark=6)
    with pytest.raises(InputError, match="more than the suite"):
        select_suite(tr, va, 101, method="random")
    with pytest.raises(InputError, match="does not run on a suite"):
        select_suite(tr, va, 10, method="auto")
    with pytest.raises(InputError, match="joint EssenceBench"):
        select_suite(tr, va, 10, generation=3)


def _bench():
    """benchmarks/suite.py, where the suite studies live."""
    from script_loader import load_script

    return load_script("benchmarks/suite.py")


@pytest.fixture(scope="module")
def art(suite):
    return compress_suite(suite, 15, method="random", seed=2, progress=False, reconstructors=("ridge", "mean_ridge"))


def test_compress_suite_reconstructs_every_member_from_all_chosen_items(art, suite):
    assert art.k == 15 and sum(len(v) for v in art.items.values()) == 15
    assert set(art.figures["test"]) == {"arc", "mmlu", "winogrande", "mean"}
    for n in art.names:
        rec = art.reconstructors[n]
        assert rec.predict(np.full((2, 15), 0.5)).shape == (2,)  # reads all 15 columns
    cols = art.columns()
    pos = [list(suite.pooled().items).index(c) for c in cols]
    est = art._predict(suite.pooled().responses[:, pos])
    np.testing.assert_allclose(est["mean"], np.mean([est[n] for n in art.names], axis=0))


def test_restrict_to_logged_keeps_each_members_answered_items(suite):
    from essence.suite.study import restrict_to_logged

    one = [m.subset(models=[0], items=np.arange(0, m.n_items, 2)) for m in suite.members]
    kept = restrict_to_logged(suite, one)
    assert kept.n_models == suite.n_models and kept.names == suite.names
    assert [m.items.tolist() for m in kept.members] == [o.items.tolist() for o in one]
    assert kept.dropped == suite.dropped  # the models outside the suite stay, on the kept items
    for b, m in enumerate(kept.members):
        assert kept.outside[b].n_models == suite.outside[b].n_models
        assert kept.outside_of(b).items.tolist() == m.items.tolist()
    with pytest.raises(InputError, match="one per member"):
        restrict_to_logged(suite, one[:2])
    other = suite.members[1].subset(models=[0])  # mmlu's items where arc's belong
    with pytest.raises(InputError, match="no answer on any of arc"):
        restrict_to_logged(suite, [other, *one[1:]])


def test_new_model_check_compares_one_model_with_a_reference(art, suite):
    from essence.suite.study import new_model_check

    one = [m.subset(models=[3]) for m in suite.members]
    est = art.estimate(one).iloc[0]
    ref = {n: float(est[n]) + d for n, d in zip(art.names, (0.0, 50.0, -1.0))}
    t = new_model_check(art, one, ref, chance={n: 25.0 for n in art.names})
    assert list(t.index) == [*art.names, "mean"]
    np.testing.assert_allclose(t.loc["arc", "difference"], 0.0, atol=1e-12)
    np.testing.assert_allclose(t.loc["mmlu", "difference"], -50.0)
    assert bool(t.loc["arc", "inside"]) and not bool(t.loc["mmlu", "inside"])
    np.testing.assert_allclose(t.loc["mean", "reference"], np.mean([ref[n] for n in art.names]))
    np.testing.assert_allclose(t.loc["mean", "estimate"], est["mean"])
    assert (t.chance == 25.0).all()
    with pytest.raises(InputError, match="no reference for winogrande"):
        new_model_check(art, one, {n: 1.0 for n in art.names[:2]})
    with pytest.raises(InputError, match="one model"):
        new_model_check(art, [m.subset(models=[3, 4]) for m in suite.members], ref)


def test_fit_members_greedy_ensemble_records_the_weights_it_predicts_with(suite):
    """The default: each member's candidates (member_candidates: its own items weighted in the kernel, one tree
    block per member) combined by a greedy ensemble, fitted on two processes like on one; the interval is
    calibrated on the ensemble's out-of-fold predictions, whose RMSE is its CV score."""
    from essence.reconstructors.combine import AverageReconstructor
    from essence.suite.artifact import fit_members, member_candidates

    idx = np.arange(0, suite.pooled().n_items, 5)
    X, Y = suite.pooled().responses[:, idx], suite.targets
    cands = member_candidates(idx, suite.member_of, 1)
    assert set(cands) == {"ridge_gam", "mean_ridge", "kernel", "boost"}
    owner = suite.member_of[idx]
    assert cands["kernel"]().own == np.flatnonzero(owner == 1).tolist()
    assert cands["boost"]().blocks == [np.flatnonzero(owner == b).tolist() for b in range(3)]
    recs, _, _, choice, cv = fit_members(suite, idx, n_train=300, jobs=2)
    one = fit_members(suite, idx, n_train=300, jobs=1)
    np.testing.assert_allclose(one[4], cv, atol=1e-9)  # the same numbers in one process
    for b, n in enumerate(suite.names):
        assert choice[n]["cv_rmse"][choice[n]["kind"]] == pytest.approx(np.sqrt(np.mean((cv[:, b] - Y[:, b]) ** 2)),
                                                                         abs=1e-5)
        rec, c = recs[n], choice[n]
        if isinstance(rec, AverageReconstructor):
            assert list(c["weights"]) == c["kind"].split("+") and sum(c["weights"].values()) == pytest.approx(1)
            parts = np.array([p.predict(X) for p in rec.parts_])
            np.testing.assert_allclose(rec.predict(X), np.dot(list(c["weights"].values()), parts), atol=1e-9)
        else:
            assert "weights" not in c and "+" not in c["kind"]
        singles = [v for k_, v in c["cv_rmse"].items() if "+" not in k_]
        assert c["cv_rmse"][c["kind"]] <= min(singles) + 1e-9
    assert any("weights" in choice[n] for n in suite.names)  # a weighted mix somewhere, or the test says nothing
    basic = fit_members(suite, idx, "basic", n_train=300, jobs=1)[3]
    assert all(c["kind"] in ("ridge", "ridge_gam", "mean_ridge") and "weights" not in c for c in basic.values())
    with pytest.raises(InputError, match="reconstructors"):
        fit_members(suite, idx, "everything", n_train=300, jobs=1)


def test_suite_artifact_with_an_average_member_round_trips(art, suite, tmp_path):
    from essence.reconstructors.combine import AverageReconstructor
    from essence.suite.artifact import SuiteCompressed

    import copy

    art = copy.copy(art)  # the module's fixture stays as it was
    art.reconstructors = dict(art.reconstructors)
    cols = [list(suite.pooled().items).index(c) for c in art.columns()]
    X, y = suite.pooled().responses[:, cols], suite.targets[:, 0]
    blocks = [np.flatnonzero(suite.member_of[cols] == b).tolist() for b in range(len(art.names))]
    art.reconstructors[art.names[0]] = AverageReconstructor(
        [{"kind": "ridge", "params": {}}, {"kind": "mlp", "params": {"hidden": 3, "alpha": 3.0}},
         {"kind": "boost", "params": {"trees": 20, "blocks": [b for b in blocks if b]}}]).fit(X, y)
    back = SuiteCompressed.load(art.save(tmp_path / "avg.json"))
    a, b = art._predict(X), back._predict(X)
    for n in [*art.names, "mean"]:
        np.testing.assert_allclose(b[n], a[n], rtol=0, atol=1e-8)


def test_suite_artifact_round_trips_as_json_and_refuses_damage(art, suite, tmp_path):
    p = art.save(tmp_path / "s.json")
    d = json.loads(p.read_text())
    assert d["schema"] == "essence.suite" and "pickle" not in p.read_text()
    back = SuiteCompressed.load(p)
    e1, e2 = art.estimate(list(suite.members)), back.estimate(list(suite.members))
    np.testing.assert_allclose(e1.drop(columns="model").to_numpy(), e2.drop(columns="model").to_numpy())
    assert {"arc", "arc_lower", "arc_upper", "mean", "mean_lower", "mean_upper"} <= set(e1.columns)
    ev = back.evaluate(list(suite.members))
    assert ev["n_models"] == suite.n_models and set(ev["benchmarks"]) == {"arc", "mmlu", "winogrande"}
    assert 0 <= ev["mean"]["rmse"] < 10
    d["members"]["mmlu"]["interval"]["q"] = -1
    (tmp_path / "bad.json").write_text(json.dumps(d))
    with pytest.raises(InputError, match=r"mmlu.*interval.q"):
        SuiteCompressed.load(tmp_path / "bad.json")
    with pytest.raises(InputError, match="exists"):
        art.save(p)  # never replaces a file without overwrite


def test_estimate_refuses_wrong_file_count_and_wrong_order(art, suite):
    with pytest.raises(InputError, match="one per benchmark"):
        art.estimate(list(suite.members)[:2])
    with pytest.raises(InputError, match="missing"):
        art.estimate([suite.members[1], suite.members[0], suite.members[2]])


def test_load_suite_keep_filters_each_members_items(members):
    keep = [lambda m: np.arange(5), lambda m: np.arange(m.n_items) >= 20, lambda m: [0, 2]]
    s = load_suite(members, keep=keep)
    assert s.n_items == [5, 10, 2] and s.names == [m.name for m in members]
    assert s.members[0].items.tolist() == members[0].items[:5].tolist()
    with pytest.raises(InputError, match="2 item filters for 3 members"):
        load_suite(members, keep=keep[:2])


def test_load_suite_by_name_counts_dropped():
    s = load_suite(["mmlu", "winogrande"])
    assert s.names == ["mmlu", "winogrande"] and s.dropped["winogrande"] > 0


def test_cross_prediction_rows_and_gain(suite):
    from essence.suite.study import cross_prediction, target_correlations

    t = cross_prediction(suite, seeds=(0,), k_each=8)
    assert list(t.benchmark) == suite.names and (t[["own", "all", "own_pool"]] > 0).all().all()
    np.testing.assert_allclose(t.gain, 1 - t["all"] / t["own"])
    c = target_correlations(suite)
    assert c.shape == (3, 3) and np.allclose(np.diag(c), 1.0)


def test_outside_models_fits_on_the_pool_without_the_test_models(members, suite):
    from essence.suite.study import suite_split

    outside_models = _bench().outside_models
    t = outside_models(suite, members, seeds=(0,), k_each=6)
    sp = suite_split(suite, 0, 0.2, 0.1)
    assert list(t.benchmark) == suite.names
    assert (t.n_suite == sp.train.size + sp.val.size).all()
    assert (t.n_pool == [m.n_models - sp.test.size for m in members]).all() and (t.n_pool > t.n_suite).all()
    assert (t[["suite", "pool"]] > 0).all().all()
    np.testing.assert_allclose(t.change, t["pool"] / t["suite"] - 1)
    with pytest.raises(InputError, match="pools for a suite"):
        outside_models(suite, members[:2])
    with pytest.raises(InputError, match="lacks items"):
        outside_models(suite, [m.subset(items=np.arange(2)) for m in members], k_each=6)


def test_models_held_out_of_everything_are_disjoint_and_pairs_score_the_same_models(suite, tmp_path):
    b = _bench()
    figure_rows, leave_out_models, run_pair = b.figure_rows, b.leave_out_models, b.run_pair
    kept, out = leave_out_models(suite, 0.2, seed=1)
    assert kept.n_models + out.n_models == suite.n_models and not set(kept.models) & set(out.models)
    res = run_pair(kept, seed=0, k=12, k_each=4, method="random", separate_method="random", test=0.1,
                   cache=tmp_path, evaluate_on=out, reconstructors=("ridge",))
    assert res["suite"]["models"] == res["separate"]["models"] == out.models.tolist()
    again = run_pair(kept, seed=0, k=12, k_each=4, method="random", separate_method="random", test=0.1,
                     cache=tmp_path, evaluate_on=out, reconstructors=("ridge",))
    assert again == res  # read back from the cache
    rows = figure_rows(res, 0)
    assert set(rows.benchmark) == {*suite.names, "mean"} and set(rows.approach) == {"suite", "separate"}


def test_relative_plus_mean_weights_the_suite_mean_term(suite):
    R, Y = suite.pooled().responses, suite.targets
    masks = random_masks(3, R.shape[1], 12, np.random.default_rng(2))
    one = JointRidgeFitness(R, Y, suite.member_of, weighting="relative+mean", k_ref=12)
    four = JointRidgeFitness(R, Y, suite.member_of, weighting="relative+mean", k_ref=12, mean_weight=4.0)
    r = one.member_rmse(masks)
    rel = r / one.ref
    assert one.combine(r) == pytest.approx(rel.mean(axis=1))  # weight 1: the plain mean of the six terms
    assert four.combine(r) == pytest.approx((rel[:, :3].sum(axis=1) + 4 * rel[:, 3]) / 7)
    with pytest.raises(InputError, match="mean_weight"):
        JointRidgeFitness(R, Y, suite.member_of, weighting="relative+mean", mean_weight=-1.0)


def test_own_items_ridge_equals_a_ridge_on_each_members_own_columns(suite):
    R, Y = suite.pooled().responses, suite.targets
    fit = JointRidgeFitness(R, Y, suite.member_of, alpha=2.0, weighting="raw")
    masks = random_masks(3, R.shape[1], 12, np.random.default_rng(4))
    masks[2] = False
    masks[2, :12] = True  # arc items only: mmlu and winogrande get intercept-only ridges
    r = fit.member_rmse(masks, own=True)
    X = np.where(np.isnan(R), fit.fill, R)
    for p in range(3):
        preds = []
        for b in range(3):
            Xm = X[:, masks[p] & (suite.member_of == b)]
            Xc = Xm - Xm.mean(axis=0)
            w = np.linalg.solve(Xc.T @ Xc + 2.0 * np.eye(Xm.shape[1]), Xc.T @ (Y[:, b] - Y[:, b].mean()))
            preds.append(Xc @ w + Y[:, b].mean())
            assert r[p, b] == pytest.approx(np.sqrt(np.mean((preds[-1] - Y[:, b]) ** 2)), rel=1e-8)
        assert r[p, 3] == pytest.approx(np.sqrt(np.mean((np.mean(preds, axis=0) - Y.mean(axis=1)) ** 2)), rel=1e-8)
    assert r[2, 1] == pytest.approx(Y[:, 1].std())
    assert r[2, 0] == pytest.approx(fit.member_rmse(masks)[2, 0], rel=1e-10)  # arc's own items are all its items
    assert (r[:2, :3] != fit.member_rmse(masks)[:2, :3]).all()


def test_own_weight_mixes_the_own_items_term_and_refuses_bad_values(suite):
    R, Y = suite.pooled().responses, suite.targets
    masks = random_masks(3, R.shape[1], 12, np.random.default_rng(5))
    kw = dict(weighting="relative+mean", k_ref=12)
    none = JointRidgeFitness(R, Y, suite.member_of, **kw)
    half = JointRidgeFitness(R, Y, suite.member_of, own_weight=0.5, **kw)
    np.testing.assert_allclose(half.ref, none.ref)
    assert (half.ref_own[:3] > half.ref[:3]).all() and (none.ref_own == 1).all()
    e_all = none.combine(none.member_rmse(masks))
    e_own = half.combine(half.member_rmse(masks, own=True), half.ref_own)
    assert half(masks) == pytest.approx(-(0.5 * e_all + 0.5 * e_own))
    assert none(masks) == pytest.approx(-e_all)
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(InputError, match="own_weight"):
            JointRidgeFitness(R, Y, suite.member_of, own_weight=bad)
    tr, va = suite.subset(np.arange(300)), suite.subset(np.arange(300, 400))
    small = dict(population=8, generations=2, elites=2, tau_text=1.0, progress=False)
    for bad in ("x", 2):
        with pytest.raises(InputError, match="own_weight"):
            select_suite(tr, va, 12, own_weight=bad, **small)
    a, info = select_suite(tr, va, 12, own_weight=0.5, seed=1, **small)
    assert info["settings"]["own_weight"] == 0.5 and a.size == 12


def test_joint_refinement_never_worsens_the_pool_fitness_and_keeps_the_floor(suite):
    from essence.suite.fitness import JointRidgeFitness
    from essence.search.refine import GroupFitness, RefineConfig, suite_attribution

    tr, va = suite.subset(np.arange(300)), suite.subset(np.arange(300, 400))
    kw = dict(population=16, generations=3, elites=2, tau_text=1.0, ebm_elites=2, group_population=8,
              group_generations=3)
    plain, info0 = select_suite(tr, va, 15, seed=5, per_benchmark=3, progress=False, **kw)
    refined, info = select_suite(tr, va, 15, seed=5, per_benchmark=3, progress=False, rounds=2, **kw)
    again, _ = select_suite(tr, va, 15, seed=5, per_benchmark=3, progress=False, rounds=2, **kw)
    np.testing.assert_array_equal(refined, again)  # same seed, same subset
    rec = info["refinement"]
    assert [r["round"] for r in rec] == [1, 2] and "refinement" not in info0
    assert rec[0]["attribution"]["ebms"] == 2 * 3  # every elite x every member
    # the global best's pool fitness only goes down, and the round that improves it reports the new value
    fits = [r["global_best_fitness_rmse"] for r in rec]
    assert fits[1] <= fits[0] and all(r["candidate_fitness_rmse"] >= r["global_best_fitness_rmse"] - 1e-9 for r in rec)
    assert min(info["budget"].values()) >= 3 and refined.size == 15
    # a group's fitness is the pool fitness of the same items
    pooled = tr.pooled().responses
    fit = JointRidgeFitness(pooled, tr.targets, tr.member_of, alpha=10.0, weighting="raw")
    group = np.array([1, 4, 7, 9, 20, 33, 50, 61])
    m = np.zeros((2, group.size), dtype=bool)
    m[0, :4] = m[1, 4:] = True
    full = np.zeros((2, fit.n_items), dtype=bool)
    full[:, group] = m
    np.testing.assert_allclose(GroupFitness(fit, group)(m), fit(full))
    # attribution: one value per pooled item, zero where no elite holds the item
    A, att = suite_attribution(pooled, tr.targets, RefineConfig(ebm_max_models=200), seed=0)(full)
    assert A.shape == (fit.n_items,) and (A[~full.any(axis=0)] == 0).all() and (A[full.any(axis=0)] >= 0).all()
    assert att["ebms"] == 2 * 3


def test_suite_reconstruction_reads_own_then_all_items_with_intervals(suite):
    from essence.lessons.reconstruction import suite_reconstruction

    t = suite_reconstruction(suite, 6, seed=1)
    assert list(t.reading.unique()) == ["own", "all"]
    assert t[t.reading == "own"].benchmark.tolist() == [*suite.names, "mean"]
    assert (t[(t.reading == "own") & (t.benchmark != "mean")]["items"] == 6).all()
    assert (t[t.reading == "all"]["items"] == 6 * len(suite.names)).all()
    assert t.rmse.gt(0).all() and t.coverage.between(0, 1).all() and t.width.gt(0).all()
    again = suite_reconstruction(suite, 6, seed=1)
    assert t.equals(again)  # the same seed draws the same items and splits


def test_search_curve_extends_one_run_and_scores_test_models(suite):
    search_curve = _bench().search_curve
    t = search_curve(suite, seed=0, generations=(0, 3, 6), k=15, population=12, elites=2, tau_text=1.0)
    assert t.index.tolist() == [0, 3, 6]
    # the same seed: a longer run starts as the shorter one, so its best fitness is never worse
    assert t.fitness.is_monotonic_decreasing
    assert t["avg"].gt(0).all() and t["mean"].gt(0).all()
    assert all(sum(map(int, b.split())) == 15 for b in t.budget)


def test_suite_keeps_each_members_outside_models_apart(members):
    s = make_suite(members)
    common = set(s.models.tolist())
    for b, m in enumerate(members):
        out = s.outside[b]
        assert out.n_models == s.dropped[m.name] and not set(out.models.tolist()) & common
        assert set(out.models.tolist()) | common >= set(m.models.tolist())
    sub = s.subset(np.arange(50))  # a model split keeps them: they are never split, tested or reconstructed from
    assert sub.outside is s.outside
    fewer = make_suite([members[0].subset(items=np.arange(5, 15)[::-1]), members[1], members[2]])
    o = fewer.outside_of(0)
    assert list(o.items) == list(fewer.members[0].items) and o.n_models == fewer.dropped[fewer.names[0]]
    np.testing.assert_array_equal(o.responses, members[0].subset(models=o.models, items=o.items).responses)


def test_with_outside_trains_a_member_on_its_whole_pool(suite):
    from essence.suite.study import suite_split

    with_outside = _bench().with_outside
    split = suite_split(suite, 0)
    data, sp = with_outside(suite, 1, split)
    out = suite.outside_of(1)
    assert sp.test.size == 0 and sp.val.size == split.val.size
    assert sp.train.size == split.train.size + out.n_models == data.n_models - split.val.size
    assert set(data.models[sp.val]) == set(suite.models[split.val])
    assert not set(data.models.tolist()) & set(suite.models[split.test].tolist())
    assert list(data.items) == list(suite.members[1].items)


def test_joint_search_keeps_random_items_below_min_search_models(suite):
    """Under ``min_search_models`` (24) training + validation models the joint EssenceBench keeps the random
    items ``method="random"`` chooses under the same seed, warns, and records why; 0 searches anyway."""
    from essence.data.errors import EssenceWarning

    tr, va = suite.subset(np.arange(15)), suite.subset(np.arange(15, 20))
    small = dict(population=8, generations=2, elites=2, tau_text=1.0, progress=False)
    with pytest.warns(EssenceWarning, match="min_search_models"):
        idx, info = select_suite(tr, va, 12, seed=3, **small)
    rand, _ = select_suite(tr, va, 12, method="random", seed=3, progress=False)
    assert np.array_equal(idx, rand) and info["method"] == "essence" and "ga" not in info
    assert info["fallback"] == {"reason": "too_few_models", "models": 20, "min_search_models": 24}
    forced, info_f = select_suite(tr, va, 12, seed=3, min_search_models=0, **small)
    assert "ga" in info_f and "fallback" not in info_f
    with pytest.warns(EssenceWarning):  # a lower bar than the models present falls back too
        select_suite(tr, va, 12, seed=3, min_search_models=21, **small)
    for bad in (-1, "x", 2.5):
        with pytest.raises(InputError, match="min_search_models"):
            select_suite(tr, va, 12, min_search_models=bad, **small)
    with pytest.raises(InputError, match="generation"):  # a misspelt setting is refused before the fallback
        select_suite(tr, va, 12, generation=3)
