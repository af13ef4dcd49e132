"""Few reference models: line / shrinkage reconstructors, the CV chooser, LOO fitness, DISCO's and IRT's
few-model behaviour, compress's checks, the ``auto`` default and ``benchmarks/regimes.py`` (real data slices)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from essence.artifact.compressed import Compressed, compress
from essence.methods import make_method
from essence.methods.auto import MIN_MODELS, check_models_for_k
from essence.methods.disco import disagreement, stratified_disagreement
from essence.reconstructors.simple import LineReconstructor, MeanRidgeReconstructor, RidgeReconstructor
from essence.reconstructors.choose import choose_by_cv, cv_rmse
from essence.reconstructors.base import reconstructor_from_dict, subset_score
from essence.search.fitness import LOORidgeFitness

from script_loader import load_script


@pytest.fixture(scope="module")
def few(gsm8k):
    """30 real gsm8k models (spread over the score range) x 120 items: fewer models than items."""
    order = np.argsort(gsm8k.target, kind="stable")  # ties: the default sort orders them differently on other CPUs
    return gsm8k.subset(models=np.sort(order[np.linspace(0, gsm8k.n_models - 1, 30).astype(int)]),
                        items=np.arange(120))


def test_line_is_least_squares_and_round_trips(few):
    X = few.responses[:, :20]
    rec = LineReconstructor().fit(X, few.target)
    slope, icpt = np.polyfit(subset_score(X), few.target, 1)
    assert rec.slope_ == pytest.approx(slope) and rec.intercept_ == pytest.approx(icpt)
    back = reconstructor_from_dict(json.loads(json.dumps(rec.to_dict())))
    np.testing.assert_array_equal(back.predict(X), rec.predict(X))


def test_mean_ridge_round_trips_and_shrinks_to_the_line(few):
    X = few.responses[:, :40]
    rec = MeanRidgeReconstructor().fit(X, few.target)
    back = reconstructor_from_dict(json.loads(json.dumps(rec.to_dict())))
    np.testing.assert_allclose(back.predict(X), rec.predict(X), atol=1e-9)
    # the largest penalty alone: item weights vanish, predictions are the line's
    huge = MeanRidgeReconstructor(alphas=(1e12,)).fit(X, few.target)
    np.testing.assert_allclose(huge.predict(X), LineReconstructor().fit(X, few.target).predict(X), atol=1e-6)


def test_choose_by_cv_scores_every_candidate_and_refits_on_all(few):
    X, y = few.responses[:, :60], few.target
    cands = {"ridge": RidgeReconstructor, "line": LineReconstructor, "mean_ridge": MeanRidgeReconstructor}
    label, rec, scores = choose_by_cv(cands, X, y, seed=0)
    assert set(scores) == set(cands) and label == min(scores, key=scores.get)
    assert scores[label] == pytest.approx(cv_rmse(cands[label], X, y, seed=0)[0])
    assert len(rec.cv_folds_) == 5
    np.testing.assert_allclose(rec.predict(X), cands[label]().fit(X, y).predict(X))


def test_loo_fitness_matches_brute_force(few):
    from sklearn.linear_model import Ridge

    R, y = few.responses, few.target
    f = LOORidgeFitness(R, y, alphas=(3.0,))
    mask = np.zeros((1, R.shape[1]), dtype=bool)
    mask[0, [1, 5, 9, 30, 77]] = True
    Xc = R[:, mask[0]] - R[:, mask[0]].mean(axis=0)  # the fitness holds the centring fixed
    e = [y[i] - y.mean() - Ridge(alpha=3.0).fit(np.delete(Xc, i, 0), np.delete(y - y.mean(), i)).predict(Xc[i:i + 1])[0]
         for i in range(len(y))]
    assert f.rmse(mask)[0] == pytest.approx(np.sqrt(np.mean(np.square(e))), rel=1e-8)
    assert f.restrict(np.flatnonzero(mask[0])).rmse(np.ones((1, 5), bool))[0] == pytest.approx(f.rmse(mask)[0])


def test_essence_uses_loo_fitness_with_few_models(few):
    sel = make_method("essence", k=10, progress=False, rounds=0, generations=5, population=20, elites=4,
                     tau_text=1.0)
    tr, va = few.subset(models=np.arange(26)), few.subset(models=np.arange(26, 30))
    sel.fit(tr, va)
    assert sel.info_["ga"]["fitness_models"] == "loo"
    assert sel.reconstructor_fitted_on_ == "train+val"


def test_stratified_disagreement_takes_one_item_per_difficulty_stratum(alpaca):
    R = alpaca.responses[:40]
    idx = stratified_disagreement(R, 10, seed=0)
    assert np.unique(idx).size == 10
    order = np.argsort(np.nanmean(R, axis=0), kind="stable")
    # each chosen item is the most disagreed-on of its stratum, so its disagreement is at least the median
    d = disagreement(R)
    assert all(d[j] >= np.median(d[g]) for j, g in zip(idx, np.array_split(order, 10)))


def test_disco_auto_selection_records_its_choice(alpaca):
    tr, va = alpaca.subset(models=np.arange(45)), alpaca.subset(models=np.arange(45, 50))
    sel = make_method("disco", k=20, progress=False).fit(tr, va)
    assert sel.info_["selection"] in ("top", "stratified")
    assert set(sel.info_["selection_cv_rmse"]) == {"top", "stratified"}


def test_irt_refuses_with_too_few_models(alpaca):
    with pytest.raises(ValueError, match="too few for a 2PL fit.*min_models=100"):
        compress(alpaca, k=10, method="irt", progress=False)


def test_compress_warns_when_models_are_fewer_than_k(few):
    data = few.subset(models=np.arange(0, 30, 2))  # 15 models: 13 to learn from with test = val = 0.1
    with pytest.warns(UserWarning, match=r"k = 20 items but only 1\d models to learn from.*at least 20 models"):
        art = compress(data, k=20, method="random", progress=False)
    assert art.selection["reconstructor_choice"] in ("line", "mean_ridge", "gam")
    with pytest.raises(ValueError, match=f"too few: compression needs at least {MIN_MODELS}"):
        compress(few.subset(models=np.arange(0, 30, 3)), k=5, method="random", progress=False)
    check_models_for_k(5, 20)  # enough: nothing raised


def test_auto_runs_the_longest_search_chooses_regression_by_cv_and_reports(few, tmp_path):
    """The default on 30 models: every (search length, regression) scored on the same folds, the longest search
    kept with its regression of lowest CV RMSE, and its ratio to random items + a line (T = 0, line) recorded
    (essence.methods.auto); ``length="cv"`` chooses the length too."""
    art = compress(few, k=10, method="auto", progress=False, checkpoints=(0, 200), folds=3, dims=(1,))
    a = art.selection["auto"]
    assert a["regime"].startswith("longest search") and a["n_models"] == art.split["n_train"] + art.split["n_val"]
    cv = a["cv_rmse"]
    assert set(cv) == {"T=0 line", "T=0 ridge", "T=0 average", "T=0 aipw", "T=200 line", "T=200 ridge",
                       "T=200 average"}  # AIPW reads random items only
    T, r = a["search_length"], a["regression"]
    assert T == 200
    assert cv[f"T={T} {r}"] == min(v for key, v in cv.items() if key.startswith("T=200 "))
    assert cv[f"T={T} {r}"] == pytest.approx(a["estimate_rmse"], abs=1e-5)
    assert a["choice"] == f"{'searched' if T else 'random'} items + {r}"
    assert a["ratio_to_baseline"] == pytest.approx(a["estimate_rmse"] / cv["T=0 line"], rel=1e-4)
    assert len(art.items) == 10 and art.selection["reconstructor_choice"] == f"frontier({r})"
    back = Compressed.load(art.save(tmp_path / "auto.json"))
    assert back.selection["auto"] == json.loads(json.dumps(a))
    np.testing.assert_allclose(back.estimate(few)["estimate"], art.estimate(few)["estimate"], atol=1e-9)
    with pytest.raises(ValueError, match="unknown parameter"):
        compress(few, k=10, method="auto", progress=False, candidates=["disco"])
    cvl = compress(few, k=10, method="auto", progress=False, checkpoints=(0, 200), folds=3, dims=(1,), length="cv")
    b = cvl.selection["auto"]
    assert b["regime"].startswith("cross-validated search") and b["cv_rmse"] == cv  # the same folds and scores
    assert b["cv_rmse"][f"T={b['search_length']} {b['regression']}"] == min(cv.values())
    with pytest.raises(ValueError, match="length"):
        compress(few, k=10, method="auto", progress=False, length="shortest")


def _regimes():
    return load_script("benchmarks/regimes.py")


def test_regimes_run_is_cached_and_random_matches_the_baseline_items(tmp_path):
    reg = _regimes()
    from essence.data import load

    data = load("lcb_codegen")
    r = reg.run_one(data, "lcb_codegen", 30, 0, "random", 10, 3, tmp_path)
    assert r["n_models"] == 30 and r["ratio"] == pytest.approx(r["rmse"] / r["baseline_rmse"])
    assert len(r["choices"]) == 3
    assert set(r["baselines"]) == {"random_line", "random_ridge", "aipw"}
    assert r["baseline_rmse"] == min(r["baselines"].values()) == r["baselines"][r["baseline"]]
    assert reg.run_one(data, "lcb_codegen", 30, 0, "random", 10, 3, tmp_path) == r  # from the cache
    assert reg.default_k("alpaca_eval2", 805) == 40 and reg.default_k("gsm8k", 486) == 50
    b = r["baseline_rmse"]
    rows = reg.summarise([r, {**r, "draw": 1, "rmse": 2 * r["rmse"], "ratio": 2 * r["ratio"]}])
    assert rows[0]["draws"] == 2 and rows[0]["ratio"] == pytest.approx(np.sqrt(2) * r["rmse"] / b)


def test_regimes_param_reaches_the_method_and_writes_no_table(tmp_path, capsys):
    """``--param METHOD.KEY=VALUE`` runs a variant (its own cache name) and leaves results/ alone; a malformed one
    exits 2 naming the form."""
    reg = _regimes()
    with pytest.raises(SystemExit) as exc:
        reg.main(["--param", "frontier=false"])
    assert exc.value.code == 2 and "METHOD.KEY=VALUE" in capsys.readouterr().err
    args = ["--datasets", "lcb_codegen", "--methods", "kmeans", "--draws", "1", "--k", "5", "--out", str(tmp_path)]
    assert reg.main([*args, "--param", "kmeans.max_iter=50"]) == 0
    assert [p.name for p in tmp_path.iterdir()] == ["lcb_codegen_mall_d0_kmeans_max_iter50_k5_f5.json"]


def test_cli_default_is_auto_and_reports_its_choice(few, tmp_path, capsys):
    from essence.cli import main

    path = tmp_path / "few.npz"
    np.savez(path, responses=few.responses, models=few.models, items=few.items, full_score=few.target)
    out = tmp_path / "art.json"
    assert main(["compress", str(path), "--k", "10", "--out", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    art = Compressed.load(out)
    a = art.selection["auto"]
    assert art.method == "auto" and re.fullmatch(r"(random|searched) items \+ (line|ridge|average|aipw)", a["choice"])
    # what it chose and how good it expects that to be, against the baseline a user tries first
    assert f"auto: {a['regime']}; chose {a['choice']}, estimated RMSE {a['estimate_rmse']:.2f}" in printed
    assert "x random items + least-squares line on their mean" in printed


def test_regimes_wide_table_marks_refusals():
    wide_table = _regimes().wide_table

    ok = {"dataset": "d", "models": "20", "n_models": 20, "method": "random", "draws": 2, "rmse": 2.0,
          "rmse_sd": 0.1, "ratio": 0.9, "ratio_sd": 0.05, "baseline": 2.2}
    no = {"dataset": "d", "models": "20", "n_models": 20, "method": "irt", "draws": 2, "refused": "too few"}
    assert wide_table([ok, no], ["random", "irt"]) == [["d", "20", "2", "2.20", "0.90 ± 0.05", "refused"]]
    one = {**ok, "method": "auto", "draws": 1}
    assert wide_table([ok, one], ["random", "auto"]) == [["d", "20", "2", "2.20", "0.90 ± 0.05", "0.90 ± 0.05 (1 draw)"]]


def test_regimes_script_tables_keep_refusals_out_of_the_summary():
    reg = _regimes()
    base = {"dataset": "d", "models": 20, "n_models": 20, "draw": 0, "k": 10, "folds": 5, "code": "c", "choices": []}
    rows = [{**base, "method": "auto", "rmse": 2.0, "baseline_rmse": 2.5, "ratio": 0.8, "coverage": 0.9},
            {**base, "method": "auto", "draw": 1, "rmse": 3.0, "baseline_rmse": 2.5, "ratio": 1.2, "coverage": 0.8},
            {**base, "method": "irt", "refused": "irt: 16 training models are too few"}]
    per, summary = reg.tables(rows)
    auto = per[per["method"] == "auto"].iloc[0]
    assert auto["draws"] == 2 and auto["rmse"] == pytest.approx(2.5) and auto["best_baseline"] == pytest.approx(2.5)
    assert auto["ratio"] == pytest.approx(round(np.sqrt(2.0 * 3.0) / 2.5, 3))
    assert per.loc[per["method"] == "irt", "refused"].iloc[0].startswith("irt: 16 training models")
    assert list(summary["method"]) == ["auto"] and summary["coverage"].iloc[0] == pytest.approx(0.85)


def test_regime_map_cached_only_computes_nothing(tmp_path):
    regime_map = _regimes().regime_map

    assert regime_map(["lcb_codegen"], methods=["random"], out=tmp_path, cached_only=True, progress=False) == []
    assert not any(tmp_path.iterdir())


def test_a_cached_run_of_other_code_is_recomputed_not_reused(tmp_path):
    import json

    reg = _regimes()
    from essence.data import load

    data = load("lcb_codegen")  # a whole pool: the map runs it with all its models
    args = (["lcb_codegen"], ["all"], ["random"], 1, 3, 10)
    r = reg.regime_map(*args, out=tmp_path, progress=False)[0]
    assert r["code"] == reg.code_version("random") != reg.code_version("disco")
    assert reg.regime_map(*args, out=tmp_path, cached_only=True, progress=False) == [r]  # current code: reused
    path = reg.run_path(tmp_path, "lcb_codegen", "all", 0, "random", 10, 3)
    path.write_text(json.dumps({**r, "code": "older", "rmse": 99.0}))  # a run of the method's earlier code
    assert reg.regime_map(*args, out=tmp_path, cached_only=True, progress=False) == []  # stale: left out
    again = reg.run_one(data, "lcb_codegen", "all", 0, "random", 10, 3, tmp_path)
    assert again["rmse"] == pytest.approx(r["rmse"]) and again["code"] == r["code"]  # recomputed
    assert json.loads(path.read_text())["rmse"] == pytest.approx(r["rmse"])  # and the stale file replaced


def test_loo_line_rmse_matches_brute_force(few):
    from essence.search.swap import loo_line_rmse

    R, y = few.responses.copy(), few.target
    R[:, 3] = 1.0  # an item every model solves: constant over the models
    m = 100 * R[:, [2, 7, 11, 40, 90, 101]].mean(axis=1)
    e = []
    for i in range(len(y)):
        keep = np.arange(len(y)) != i
        b, a = np.polyfit(m[keep], y[keep], 1)
        e.append(y[i] - (a + b * m[i]))
    assert loo_line_rmse(m, y)[0] == pytest.approx(np.sqrt(np.mean(np.square(e))), rel=1e-8)
    # a constant item next to varying ones only shifts and scales the subset mean: the line's error is the same
    m5 = 100 * R[:, [7, 11, 40, 90, 101]].mean(axis=1)
    e5 = [y[i] - np.polyval(np.polyfit(np.delete(m5, i), np.delete(y, i), 1), m5[i]) for i in range(len(y))]
    m_const = 100 * R[:, [3, 7, 11, 40, 90, 101]].mean(axis=1)
    assert loo_line_rmse(m_const, y)[0] == pytest.approx(np.sqrt(np.mean(np.square(e5))), rel=1e-8)


def test_swap_search_beats_random_subsets_under_its_loo_score_and_is_seeded(few):
    """auto's item search (essence.search.swap): its score is the line's leave-one-out RMSE, refitted without each
    model by hand here; the searched subset scores below most random subsets; the same seed, the same subset."""
    from essence.search.swap import loo_line_rmse, swap_search

    R, y = few.responses, few.target
    s = 100 * R[:, [2, 7, 11, 40, 90]].mean(axis=1)
    e = [y[i] - np.polyval(np.polyfit(np.delete(s, i), np.delete(y, i), 1), s[i]) for i in range(len(y))]
    assert loo_line_rmse(s, y)[0] == pytest.approx(np.sqrt(np.mean(np.square(e))), rel=1e-8)
    paths = swap_search(R, y, 10, seed=3, checkpoints=(0, 400))
    assert set(paths) == {0, 400} and all(np.unique(p).size == 10 for p in paths.values())
    np.testing.assert_array_equal(swap_search(R, y, 10, seed=3, checkpoints=(0, 400))[400], paths[400])
    score = lambda idx: loo_line_rmse(100 * R[:, idx].mean(axis=1), y)[0]  # noqa: E731
    rng = np.random.default_rng(0)
    rand = [score(rng.choice(few.n_items, 10, replace=False)) for _ in range(200)]
    assert score(paths[400]) <= score(paths[0]) and score(paths[400]) < np.percentile(rand, 10)


def test_policies_study_reads_the_default_as_the_regime_map_does(tmp_path):
    """benchmarks/policies.py: its ``the default`` policy, rebuilt from the fitted folds' candidates and residuals,
    gives the regime map's own run of auto (same RMSE, coverage and best baseline); the other policies differ."""
    from essence.data import load

    pol, reg = load_script("benchmarks/policies.py"), _regimes()
    data = load("lcb_codegen")
    rec = pol.run_draw(data, "lcb_codegen", 30, 0, 10, 3, tmp_path / "p")
    ref = reg.run_one(data, "lcb_codegen", 30, 0, "auto", 10, 3, tmp_path / "r")
    assert rec["rmse"]["the default"] == pytest.approx(ref["rmse"], rel=1e-9)
    assert rec["coverage"]["the default"] == pytest.approx(ref["coverage"])
    assert rec["baseline_rmse"] == pytest.approx(ref["baseline_rmse"], rel=1e-12)
    assert rec["coverage"]["regression alone (no frontier mix)"] is None
    assert len(set(np.round(list(rec["rmse"].values()), 9))) > 1
    table = pol.table([rec, {**rec, "dataset": "other"}])
    assert list(table["policy"]) == list(pol.POLICIES) and (table["benchmarks"] == 2).all()
    row = table.iloc[0]
    assert row["ratio (geometric mean)"] == pytest.approx(rec["rmse"]["the default"] / rec["baseline_rmse"], abs=1e-3)


def test_cv_choice_keeps_the_longest_search_unless_told_to_choose_the_length():
    from essence.methods.auto import cv_choice

    e = {(0, "line"): np.full(4, 1.0), (0, "aipw"): np.full(4, 0.5), (300, "line"): np.full(4, 3.0),
         (300, "ridge"): np.full(4, 2.0)}
    (T, r), rmse = cv_choice(e)
    assert (T, r) == (300, "ridge") and rmse[(0, "aipw")] == pytest.approx(0.5)
    assert cv_choice(e, "cv")[0] == (0, "aipw")
    assert cv_choice({(0, "line"): np.ones(3), (0, "ridge"): np.ones(3)})[0][0] == 0  # one length: nothing to keep
    with pytest.raises(ValueError, match="length: must be"):
        cv_choice(e, "shortest")
