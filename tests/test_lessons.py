"""Helpers of the EssenceBench lesson notebooks (essence.lessons.stages), on real data slices."""

from __future__ import annotations

import numpy as np
import pytest

from essence.lessons import stages as L
from essence.data import split_models
from essence.search.fitness import RidgeFitness, GAMRulerFitness
from essence.search.redundancy import coarse_filter, rank_redundancy, text_redundancy


@pytest.fixture(scope="module")
def text_rank(small):
    """Both redundancy matrices of the real slice (600 gsm8k models x 80 items): text redundancy of the real item
    texts and Pearson over the slice's models. The texts are embedded as TF-IDF word vectors, not MiniLM: the
    pair table's ordering and filters do not depend on the embedding, and a fresh MiniLM pass costs 15 s (the
    MiniLM path itself: test_features_text.py)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    E = TfidfVectorizer().fit_transform(small.texts).toarray()
    return text_redundancy(E), rank_redundancy(small.responses)


# ----------------------------------------------------------------------------------------------
def test_off_diagonal_order_and_nan():
    M = np.array([[1.0, 0.2, np.nan], [0.2, 1.0, 0.5], [np.nan, 0.5, 1.0]])
    np.testing.assert_array_equal(L.off_diagonal(M), [0.2, 0.5])
    got = L.off_diagonal(M, drop_nan=False)
    assert got.shape == (3,) and np.isnan(got[1])
    with pytest.raises(ValueError, match="square"):
        L.off_diagonal(np.zeros((2, 3)))


def test_cluster_order_is_a_permutation_that_groups_blocks(small):
    rank = rank_redundancy(small.responses)
    order = L.cluster_order(rank)
    assert sorted(order.tolist()) == list(range(small.n_items))
    # two blocks of items, interleaved: clustering must put each block together
    S = np.full((8, 8), 0.05)
    for block in (np.arange(0, 8, 2), np.arange(1, 8, 2)):
        S[np.ix_(block, block)] = 0.9
    np.fill_diagonal(S, 1.0)
    o = L.cluster_order(S)
    parity = o % 2
    assert (parity[:4] == parity[0]).all() and (parity[4:] == parity[4]).all()


def test_pair_table_orders_filters_and_limits(text_rank, small):
    T, R = text_rank
    top = L.pair_table(T, R, by="text", n=5, texts=small.texts)
    iu = np.triu_indices(T.shape[0], 1)
    q = int(np.argmax(T[iu]))
    assert (top.loc[0, "a"], top.loc[0, "b"]) == (iu[0][q], iu[1][q])
    assert top["R_text"].is_monotonic_decreasing and {"text_a", "text_b"} <= set(top.columns)
    diff = L.pair_table(T, R, by="text_not_rank", n=5)
    assert (diff["R_text"] - diff["R_rank"]).is_monotonic_decreasing
    once = L.pair_table(T, R, by="rank", n=10, max_per_item=1)
    assert np.unique(np.r_[once["a"], once["b"]]).size == 2 * len(once)
    bounded = L.pair_table(T, R, by="text", n=10, rank_range=(None, 0.35), text_range=(0.0, None))
    assert len(bounded) == 10 and (bounded["R_rank"] <= 0.35).all() and (bounded["R_text"] >= 0.0).all()
    empty = L.pair_table(T, R, by="text", rank_range=(None, -1.0), texts=small.texts)
    assert empty.empty and "text_a" in empty.columns
    with pytest.raises(ValueError, match="by"):
        L.pair_table(T, R, by="nonsense")
    with pytest.raises(ValueError, match="same items"):
        L.pair_table(T, R[:10, :10])


def test_item_discrimination_is_the_item_total_correlation(small):
    R, y = small.responses, small.target
    d = L.item_discrimination(R, y)
    assert d.shape == (small.n_items,)
    var = R.std(axis=0) > 0
    j = int(np.flatnonzero(var)[0])
    assert d[j] == pytest.approx(np.corrcoef(R[:, j], y)[0, 1], abs=1e-10)
    assert (d[~var] == 0).all()
    with pytest.raises(ValueError):
        L.item_discrimination(R, y[:-1])


def test_rank_redundancy_halves_agree_on_many_models_not_on_few(small, alpaca):
    a, b = L.rank_redundancy_halves(small.responses, seed=0)
    assert a.shape == b.shape and a.size > 0
    many = np.corrcoef(a, b)[0, 1]
    a2, b2 = L.rank_redundancy_halves(alpaca.responses[:, :120], seed=0)
    few = np.corrcoef(a2, b2)[0, 1]
    assert many > 0.8 and few < many
    with pytest.raises(ValueError):
        L.rank_redundancy_halves(small.responses[:5])


def test_kept_counts_match_the_filter(small):
    R = small.responses
    E = np.random.default_rng(1).normal(size=(small.n_items, 8))
    K = L.kept_counts(R, E, [0.3, 1.0], [0.5, 1.0])
    assert K.shape == (2, 2) and K.dtype.kind == "i"
    for i, tt in enumerate([0.3, 1.0]):
        for j, tr in enumerate([0.5, 1.0]):
            assert K[i, j] == coarse_filter(R, E, tau_text=tt, tau_rank=tr).n_kept
    n_const = int((R.std(axis=0) == 0).sum())
    assert K[1, 1] == small.n_items - n_const
    assert L.kept_counts(R, None, [1.0], [1.0], drop_constant=False)[0, 0] == small.n_items


def test_random_subset_scores_deterministic_and_pool_bound(small):
    R, y = small.responses, small.target
    tr, va, te = split_models(small, seed=0)
    a = L.random_subset_rmse(R[tr], y[tr], R[te], y[te], k=10, n_draws=4, seed=3)
    b = L.random_subset_rmse(R[tr], y[tr], R[te], y[te], k=10, n_draws=4, seed=3)
    np.testing.assert_array_equal(a, b)
    assert a.shape == (4,) and (a > 0).all()
    both = L.random_subset_scores(R[tr], y[tr], R[te], y[te], k=10, n_draws=4, seed=3)
    np.testing.assert_array_equal(both["rmse"], a)
    assert ((both["kendall"] > 0) & (both["kendall"] <= 1)).all()
    pool = np.arange(10, 20)
    fixed = L.random_subset_rmse(R[tr], y[tr], R[te], y[te], k=10, pool=pool, n_draws=3, seed=0)
    assert np.ptp(fixed) == 0  # a pool of exactly k items: every draw is the same subset
    with pytest.raises(ValueError, match="k"):
        L.random_subset_rmse(R[tr], y[tr], R[te], y[te], k=11, pool=pool)


def test_subset_figures_chooses_on_validation(small):
    from essence.data.metrics import rmse
    from essence.reconstructors.simple import GAMReconstructor

    R, y = small.responses, small.target
    split = split_models(small, seed=0)
    items = np.arange(0, 40, 2)
    out = L.subset_figures(R, y, split, items)
    assert out["choice"] in ("gam", "ridge", "ridge_gam") and out["test_rmse"] > 0
    gam = L.subset_figures(R, y, split, items, reconstructors=("gam",))
    tr, _, te = split
    ref = GAMReconstructor().fit(R[np.ix_(tr, items)], y[tr]).predict(R[np.ix_(te, items)])
    assert gam["choice"] == "gam" and gam["test_rmse"] == pytest.approx(rmse(y[te], ref))
    with pytest.raises(ValueError, match="reconstructors"):
        L.subset_figures(R, y, split, items, reconstructors=("knn",))


def test_ga_trajectory_monotone_deterministic_and_evaluated(small):
    R, y = small.responses, small.target
    tr, va, te = split_models(small, seed=0)
    fit = GAMRulerFitness(R[tr], y[tr], R[va], y[va])
    calls = []

    def evaluate(best):
        calls.append(best)
        return {"size": len(best)}

    t = L.ga_trajectory(fit, 8, [0, 3, 10], evaluate=evaluate, population=20, elites=2, seed=1)
    assert t.table["generation"].tolist() == [0, 3, 10] and (t.table["size"] == 8).all()
    assert t.table["fitness_rmse"].is_monotonic_decreasing or np.all(np.diff(t.table["fitness_rmse"]) <= 1e-12)
    assert t.history.shape == (11,) and t.mean_history.shape == (11,)
    assert t.table["fitness_rmse"].iloc[-1] == pytest.approx(-t.history[-1])
    assert len(calls) == 3 and all(np.array_equal(c, b) for c, b in zip(calls, t.bests))
    again = L.ga_trajectory(fit, 8, [0, 3, 10], population=20, elites=2, seed=1)
    np.testing.assert_array_equal(again.bests[-1], t.bests[-1])
    ridge = L.ga_trajectory(RidgeFitness(R[tr], y[tr]), 8, [0, 5], population=20, elites=2, seed=1)
    assert ridge.table["fitness_rmse"].iloc[1] <= ridge.table["fitness_rmse"].iloc[0] + 1e-12
    with pytest.raises(ValueError, match="checkpoints"):
        L.ga_trajectory(fit, 8, [5, 5])


@pytest.mark.slow
def test_ablation_runs_variants_through_the_cached_sweep(tmp_path):
    tiny = dict(population=10, elites=2, generations=2, ebm_elites=2, group_population=6, group_generations=2,
                ebm_max_rounds=20)
    variants = {"refine": dict(tiny, rounds=1), "plain": dict(tiny, rounds=0)}
    table = L.ablation("mmlu", variants, [5], [0], tmp_path, jobs=1)
    assert list(table["variant"]) == ["refine", "plain"]
    assert (table["error"] == "").all() and np.isfinite(table["rmse"]).all()
    again = L.ablation("mmlu", variants, [5], [0], tmp_path, jobs=1)
    np.testing.assert_array_equal(again["rmse"], table["rmse"])  # reused from the cache
    tr = L.ablation_traces("mmlu", tmp_path / "refine")
    assert tr["stage"].tolist() == ["ga", "round 1"] and tr["pool"].iloc[0] > 0
    assert L.ablation_traces("mmlu", tmp_path / "plain")["stage"].tolist() == ["ga"]
    with pytest.raises(ValueError, match="variants"):
        L.ablation("mmlu", {}, [5], [0], tmp_path)


def test_ablation_variants_differ_only_in_the_filter_and_the_rounds():
    for quick in (False, True):
        v = L.ablation_variants(quick)
        assert list(v) == ["filter + refinement", "filter, no refinement", "no filter + refinement", "neither"]
        search = [{n: x for n, x in p.items() if n not in ("tau_text", "tau_rank", "drop_constant", "rounds")}
                  for p in v.values()]
        assert all(s == search[0] for s in search)
        assert v["filter + refinement"]["tau_rank"] == 0.7 and v["neither"]["tau_rank"] == 1.0
        assert v["neither"]["rounds"] == 0 and "rounds" not in v["no filter + refinement"]
    from essence.methods import make_method

    for p in L.ablation_variants().values():  # every parameter is one EssenceSelector accepts
        make_method("essence", k=5, **p)


def test_chance_level_of_real_harness_logs():
    from essence.data import data_roots
    from essence.lmeval import read_samples

    logs = next(r / "lm_eval" / "pythia-14m" for r in data_roots() if (r / "lm_eval" / "pythia-14m").is_dir())
    arc = read_samples(sorted(logs.glob("samples_metabench_arc_secondary_*.jsonl")))
    n = np.array([len(d.contexts) for d in arc])
    assert L.chance_level(arc) == pytest.approx(100 * np.mean(1 / n))
    assert 20 < L.chance_level(arc) < 30  # four options, a few with three or five
    wino = read_samples(sorted(logs.glob("samples_metabench_winogrande_secondary_*.jsonl")))
    assert L.chance_level(wino) == pytest.approx(50.0)  # two options each
    assert L.chance_level(arc, free_form=True) == 0.0
    with pytest.raises(ValueError, match="at least one document"):
        L.chance_level([])


def _by_hand(R, y, split, masks, n_splines, lam, alpha):
    """Both fitnesses of fitness_setup for each mask, from numpy and pygam alone: the paper's ruler (a GAM of
    the full score on the pool mean, fitted on the training models, read at each validation model's subset
    mean, clipped to [0, 100]) and the in-sample ridge on the training models (centred, unpenalised intercept)."""
    from pygam import LinearGAM, s

    tr, va, _ = split
    g = LinearGAM(s(0, n_splines=n_splines, lam=lam)).fit(100 * R[tr].mean(axis=1)[:, None], y[tr])
    paper, ridge = [], []
    for m in masks:
        pred = np.clip(g.predict(100 * R[np.ix_(va, np.flatnonzero(m))].mean(axis=1)[:, None]), 0, 100)
        paper.append(-np.sqrt(np.mean((pred - y[va]) ** 2)))
        X = R[np.ix_(tr, np.flatnonzero(m))]
        Xc, yc = X - X.mean(axis=0), y[tr] - y[tr].mean()
        w = np.linalg.solve(Xc.T @ Xc + alpha * np.eye(X.shape[1]), Xc.T @ yc)
        ridge.append(-np.sqrt(np.mean((yc - Xc @ w) ** 2)))
    return np.array(paper), np.array(ridge)


def test_fitness_setup_and_compare_fitnesses(small):
    R, y = small.responses, small.target
    st = L.fitness_setup(small, seed=1, n_splines=10, lam=5.0, ridge_alpha=2.0)
    tr, va, te = st["split"]
    assert np.union1d(np.union1d(tr, va), te).size == small.n_models == tr.size + va.size + te.size
    rng = np.random.default_rng(0)
    masks = np.zeros((4, small.n_items), dtype=bool)
    for row in masks[:3]:
        row[rng.choice(small.n_items, 10, replace=False)] = True
    masks[3, :10] = True
    paper, ridge = _by_hand(R, y, st["split"], masks, n_splines=10, lam=5.0, alpha=2.0)
    np.testing.assert_allclose(st["paper"](masks), paper, atol=2e-3)  # pygam's curve read off a 0.05 pp table
    np.testing.assert_allclose(st["ridge"](masks), ridge, rtol=1e-9)
    # what a user gets from a subset: the GAM fitted on training models, its RMSE on the test models
    from pygam import LinearGAM, s
    from essence.reconstructors.tables import GAM_LAM, GAM_N_SPLINES

    figures = L.subset_evaluator(st, ("gam",))(np.arange(10))
    gam = LinearGAM(s(0, n_splines=GAM_N_SPLINES, lam=GAM_LAM)).fit(100 * R[tr, :10].mean(axis=1)[:, None], y[tr])
    pred = np.clip(gam.predict(100 * R[te, :10].mean(axis=1)[:, None]), 0, 100)
    assert figures["choice"] == "gam"
    assert figures["test_rmse"] == pytest.approx(np.sqrt(np.mean((pred - y[te]) ** 2)), abs=2e-3)
    tables, rnd, floor = L.compare_fitnesses(small, 1, 8, [0, 5], {"paper": "paper", "ridge": "ridge"},
                                             population=20, elites=2, n_draws=5, n_splines=10)
    assert set(tables) == {"paper", "ridge"} and list(tables["ridge"]["generation"]) == [0, 5]
    assert floor == pytest.approx(-_by_hand(R, y, st["split"], np.ones((1, small.n_items), bool), 10, 5.0, 2.0)[0][0],
                                  abs=2e-3)  # the ruler on the whole pool
    # the random baseline by hand: the same seeded draws, each a GAM of the full score on the subset mean
    draws = np.random.default_rng(1)
    by_hand = []
    for _ in range(5):
        S = np.sort(draws.choice(small.n_items, size=8, replace=False))
        g = LinearGAM(s(0, n_splines=GAM_N_SPLINES, lam=GAM_LAM)).fit(100 * R[np.ix_(tr, S)].mean(axis=1)[:, None], y[tr])
        p = np.clip(g.predict(100 * R[np.ix_(te, S)].mean(axis=1)[:, None]), 0, 100)
        by_hand.append(np.sqrt(np.mean((p - y[te]) ** 2)))
    assert rnd == pytest.approx(np.mean(by_hand), abs=2e-3)
    assert 0 < floor < rnd
    for t in tables.values():  # elitism: the best fitness never gets worse; every checkpoint is measured
        assert np.all(np.diff(t["fitness_rmse"]) <= 1e-12) and (t["test_rmse"] > 0).all()
    # the searches see training and validation models only: other scores on the test rows change the test figures
    # and the random baseline (measured there), nothing searched
    Rp = R.copy()
    Rp[te] = np.random.default_rng(5).random((te.size, small.n_items))
    from essence.data import from_arrays

    poisoned = from_arrays(Rp, small.models, small.items, y, small.texts, name=small.name)
    t2, rnd2, floor2 = L.compare_fitnesses(poisoned, 1, 8, [0, 5], {"paper": "paper", "ridge": "ridge"},
                                           population=20, elites=2, n_draws=5, n_splines=10)
    assert floor2 == floor and rnd2 != rnd
    for label in tables:
        np.testing.assert_array_equal(t2[label]["fitness_rmse"], tables[label]["fitness_rmse"])
        assert not np.array_equal(t2[label]["test_rmse"], tables[label]["test_rmse"])
